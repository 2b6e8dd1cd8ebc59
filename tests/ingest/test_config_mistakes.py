"""Config mistakes that used to discard data silently: a wrong text_key or id_key on a jsonl source,
a text field null everywhere, repeated ids. Each is an error naming the source, the file and the
field, and a refused command leaves nothing behind."""

from __future__ import annotations

import json
import re
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
    assert "has a 'id' field (the source's id_key); their fields: text (1), doc_id (1)" in flat(
        capsys.readouterr().err
    )
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


def test_repeated_parquet_ids_are_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """24 documents, 12 distinct ids: a later dedup would report removals like `0 dup_of:0`."""
    texts = [f"{PROSE[i % len(PROSE)]} Part {i}." for i in range(24)]
    pq.write_table(pa.table({"id": [i % 12 for i in range(24)], "text": texts}), tmp_path / "a.parquet")
    out = tmp_path / "out"
    assert main(["ingest", "-o", str(out), "--source", f"a[id_key=id]={tmp_path}/a.parquet"]) == 2
    err = flat(capsys.readouterr().err)
    assert (
        "source 'a': 12 ids of the source's id_key 'id' name more than one document in the first row group "
        f"(24 rows) of {tmp_path}/a.parquet (12 repeats), e.g. '0'. Ids must be unique in a document dataset"
    ) in err
    assert "unset id_key" in err and "Traceback" not in err
    assert not out.exists()


def test_repeated_parquet_ids_past_the_sample_fail_after_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ids that repeat across row groups: the corpus-wide check finds them, and the run leaves nothing."""
    texts = [f"{PROSE[i % len(PROSE)]} Part {i}." for i in range(24)]
    table = pa.table({"id": [i % 12 for i in range(24)], "text": texts})
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=12)
    out = tmp_path / "out"
    args = ["ingest", "-o", str(out), "--source", f"a[id_key=id]={tmp_path}/a.parquet", "--workers", "1"]
    assert main(args) == 1
    err = flat(capsys.readouterr().err)
    said = re.search(
        r"(\d+) documents that would be kept repeat the id of an earlier one \((\d+) ids repeated\), e\.g\. '\d+' "
        rf"\(the id_key 'id' of source 'a'\) in {tmp_path}/a\.parquet\. Ids must be unique in a document dataset",
        err,
    )
    assert said and 0 < int(said[1]) == int(said[2]) <= 12, err  # the filters may remove a few of the 24
    assert "unset id_key" in err and "Traceback" not in err
    assert not out.exists()


def test_repeated_jsonl_ids_in_the_sample_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_bytes(jsonl([{"id": i % 2, "text": PROSE[i]} for i in range(4)]))
    out = tmp_path / "out"
    assert main(["ingest", "-o", str(out), "--source", f"a[id_key=id]={tmp_path}/a.jsonl"]) == 2
    err = flat(capsys.readouterr().err)
    assert (
        f"2 ids of the source's id_key 'id' name more than one document in the first 4 records of {tmp_path}/a.jsonl"
        in err
    )
    assert not out.exists()


def test_repeated_jsonl_ids_across_files_are_refused_but_exact_copies_are_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_bytes(jsonl([{"id": f"d{i}", "text": PROSE[i]} for i in range(3)]))
    (tmp_path / "b.jsonl").write_bytes(
        jsonl([{"id": "d9", "text": PROSE[5]}, {"id": "d1", "text": PROSE[4]}])
    )
    out = tmp_path / "out"
    source = f"web[id_key=id]={tmp_path}/*.jsonl"
    assert main(["ingest", "-o", str(out), "--source", source]) == 1
    err = flat(capsys.readouterr().err)
    assert "1 documents that would be kept repeat the id of an earlier one (1 ids repeated), e.g. 'd1'" in err
    assert f"in {tmp_path}/a.jsonl and {tmp_path}/b.jsonl" in err
    assert not out.exists()
    # the same record twice: exact dedup keeps one, so the output's ids are unique
    (tmp_path / "b.jsonl").write_bytes(
        jsonl([{"id": "d9", "text": PROSE[5]}, {"id": "d1", "text": PROSE[1]}])
    )
    assert main(["ingest", "-o", str(out), "--source", source]) == 0
    from selene.io import dataset

    kept = [d["id"] for d in dataset.iter_documents(str(out))]
    assert len(kept) == len(set(kept)) and "d1" in kept
