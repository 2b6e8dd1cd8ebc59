"""Config mistakes that used to discard data silently: a wrong text_key or id_key on a jsonl source,
a text field null everywhere, repeated ids. Each is an error naming the source, the file and the
field, and a refused command leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from selene.cli import main
from tests.corpus import PROSE, write_zst


def jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", ["web.jsonl", "web.json.zst"])
def test_wrong_text_key_on_jsonl_is_refused_before_any_work(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = jsonl([{"content": PROSE[i % len(PROSE)], "url": f"https://e.org/{i}"} for i in range(67)])
    path = tmp_path / name
    write_zst(path, data) if name.endswith(".zst") else path.write_bytes(data)
    out = tmp_path / "out"
    assert main(["ingest", "-o", str(out), "--source", f"web={path}"]) == 2
    err = flat(capsys.readouterr().err)
    assert (
        f"source 'web': none of the first 67 records of {path} has a 'text' field (the source's text_key); "
        "their fields: content (67), url (67)"
    ) in err
    assert "text_key" in err and "Traceback" not in err
    assert not out.exists()


def test_wrong_id_key_on_jsonl_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl([{"text": PROSE[0], "doc_id": "x"}]))
    out = tmp_path / "out"
    assert main(["ingest", "-o", str(out), "--source", f"a[id_key=id]={path}"]) == 2
    assert "has a 'id' field (the source's id_key); their fields: text (1), doc_id (1)" in flat(capsys.readouterr().err)
    assert not out.exists()


def test_a_source_whose_every_text_is_null_fails_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The column exists (so the footer check passes) but holds no text: after reading, the source is
    an error, not a run that ends in success with all of it quarantined."""
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": pa.array([None] * 5, pa.string()), "body": ["x"] * 5}), path)
    good = tmp_path / "b.jsonl"
    good.write_bytes(jsonl([{"text": PROSE[1]}]))
    out = tmp_path / "out"
    assert main(["ingest", "-o", str(out), "--source", f"a={path}", "--source", f"b={good}"]) == 1
    err = flat(capsys.readouterr().err)
    assert "source 'a': none of its 5 records in 1 file(s) has a text in the field 'text'" in err
    assert "malformed:no_text" in err and "Traceback" not in err
    assert not out.exists()
