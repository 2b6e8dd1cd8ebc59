"""Parquet files and `datasets` directories as ingest input: fields per source, damage quarantined
with file, row group and row, a wrong text column found before work, the same bytes for any worker count."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from selene.errors import ConfigError, UsageError
from selene.executor import mappers
from selene.ingest import columnar, stage
from selene.ingest.config import IngestConfig, SourceSpec
from selene.ingest.readers import read_records
from selene.ingest.records import Fields, RawRecord, ReadStats
from selene.io import dataset, fs
from tests.corpus import PROSE, warc_bytes
from tests.mapping import as_mapper

MAX = 1 << 20


def write_parquet(path: Path, columns: dict[str, Any], row_group_size: int = 2) -> Path:
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size, compression="zstd")
    return path


def write_arrow_stream(path: Path, table: pa.Table, batch_rows: int = 2) -> Path:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
    return path


def write_saved_dataset(directory: Path, columns: dict[str, Any], shards: int = 2) -> Path:
    """The layout of `datasets`' Dataset.save_to_disk: Arrow streams listed by state.json."""
    directory.mkdir(parents=True)
    table = pa.table(columns)
    names, step = [], -(-table.num_rows // shards)
    for k in range(shards):
        names.append(f"data-{k:05d}-of-{shards:05d}.arrow")
        write_arrow_stream(directory / names[-1], table.slice(k * step, step))
    (directory / "dataset_info.json").write_text(
        json.dumps({"features": {n: {"_type": "Value"} for n in table.column_names}})
    )
    (directory / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": n} for n in names], "_split": None})
    )
    return directory


def read(path: Path | str, fields: Fields = Fields(), max_bytes: int = MAX) -> list[RawRecord]:
    return list(read_records(str(path), max_bytes, ReadStats(), fields=fields))


def web_rows(n: int, first: int = 0) -> dict[str, Any]:
    """FineWeb's shape: text, id, url, dump, date, a score; and columns meta must not keep as they are."""
    return {
        "text": [PROSE[(first + i) % len(PROSE)] + f" ({first + i})" for i in range(n)],
        "id": [f"<urn:uuid:{first + i:04d}>" for i in range(n)],
        "url": [f"https://example.org/{first + i}" for i in range(n)],
        "dump": ["CC-MAIN-2024-10"] * n,
        "date": [datetime.datetime(2024, 3, 1, 12, 0, i) for i in range(n)],
        "language_score": [0.9] * n,
        "thumbnail": [b"\x89PNG"] * n,
    }


def test_parquet_rows_in_file_order_with_the_other_columns_as_meta(tmp_path: Path) -> None:
    recs = read(write_parquet(tmp_path / "fw.parquet", web_rows(5)))  # row groups of 2, 2, 1
    assert [(r.index, r.reason, r.id) for r in recs] == [(i, None, None) for i in range(1, 6)]
    assert recs[4].text == PROSE[4] + " (4)"
    assert recs[1].meta == {
        "id": "<urn:uuid:0001>", "url": "https://example.org/1", "dump": "CC-MAIN-2024-10",
        "date": "2024-03-01T12:00:01", "language_score": 0.9,
    }  # fmt: skip
    assert dataset.to_meta_json(recs[1].meta)  # JSON can hold every value (the date became ISO 8601)
    chosen = read(tmp_path / "fw.parquet", Fields("text", id="id", meta=("url", "thumbnail")))
    assert chosen[0].id == "<urn:uuid:0000>" and chosen[0].meta == {
        "url": "https://example.org/0",
        "thumbnail": "\ufffdPNG",
    }
    assert read(tmp_path / "fw.parquet", Fields(meta=()))[0].meta == {}
    fs.atomic_write("memory://columnar/fw.parquet", (tmp_path / "fw.parquet").read_bytes())
    assert [r.text for r in read("memory://columnar/fw.parquet")] == [r.text for r in recs]


def test_jsonl_parquet_and_arrow_give_the_same_records(tmp_path: Path) -> None:
    """One rule for every format: the text, the id, a nested `meta` merged, the Pile's source."""
    rows = [
        {
            "content": PROSE[i],
            "doc_id": 100 + i,
            "url": f"https://e.org/{i}",
            "meta": {"pile_set_name": "Books3", "lang": "en"},
        }
        for i in range(3)
    ]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    columns = {k: [r[k] for r in rows] for k in rows[0]}
    write_parquet(tmp_path / "a.parquet", columns)
    write_arrow_stream(tmp_path / "a.arrow", pa.table(columns))
    fields = Fields("content", id="doc_id")
    got = {
        ext: [
            (r.index, r.text, r.meta, r.source, r.id, r.reason) for r in read(tmp_path / f"a.{ext}", fields)
        ]
        for ext in ("jsonl", "parquet", "arrow")
    }
    assert got["jsonl"] == got["parquet"] == got["arrow"]
    assert got["jsonl"][0] == (
        1,
        PROSE[0],
        {"pile_set_name": "Books3", "lang": "en", "url": "https://e.org/0"},
        "Books3",
        "100",
        None,
    )


def test_wrong_text_column_is_a_config_error_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "0.parquet").write_bytes(
        b"not parquet at all"
    )  # unreadable footer: skipped here, quarantined when read
    write_parquet(tmp_path / "in" / "1.parquet", {"content": ["x"], "url": ["u"]})
    cfg = IngestConfig(sources=[SourceSpec(name="fw", glob=str(tmp_path / "in" / "*.parquet"))])
    out = tmp_path / "out"
    with pytest.raises(
        ConfigError,
        match=r"1\.parquet: no column 'text' \(the source's text_key\); its columns: content \(string\), url \(string\)\. Set the source's text_key",
    ):
        stage.preflight(str(out), cfg)
    assert not out.exists()
    write_parquet(tmp_path / "n.parquet", {"text": [1, 2]})
    with pytest.raises(
        ConfigError, match=r"n\.parquet: column 'text' \(the source's text_key\) is of type int64, not string"
    ):
        read(tmp_path / "n.parquet")
    with pytest.raises(ConfigError, match=r"no column 'doc' \(the source's id_key\)"):
        read(tmp_path / "in" / "1.parquet", Fields("content", id="doc"))


def test_damaged_row_group_is_quarantined_row_by_row(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "rg.parquet", web_rows(6))
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(0)  # the text of rows 2 and 3
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start + 8 : start + chunk.total_compressed_size - 4] = b"\x55" * (chunk.total_compressed_size - 12)
    path.write_bytes(bytes(data))
    recs = read(path)
    assert [(r.index, r.reason) for r in recs] == [
        (1, None), (2, None), (3, "malformed:row_group"), (4, "malformed:row_group"), (5, None), (6, None)
    ]  # fmt: skip
    assert recs[3].detail.startswith(f"{path}: row group 1, row 1: the row group cannot be read (")
    assert recs[3].detail.endswith("its 2 rows are quarantined") and "\n" not in recs[3].detail


def test_bad_rows_are_quarantined_with_file_row_group_and_row(tmp_path: Path) -> None:
    texts = pa.array([b"fine", None, b"caf\xe9", b"x" * 2000, b"also fine"], pa.binary()).view(pa.string())
    path = write_parquet(
        tmp_path / "rows.parquet",
        {"text": texts, "id": ["a", "b", "c", "d", None], "url": [f"https://e.org/{i}" for i in range(5)]},
    )
    recs = read(path, Fields(id="id"), max_bytes=1024)
    assert [(r.index, r.reason) for r in recs] == [
        (1, None), (2, "malformed:no_text"), (3, "malformed:utf8"), (4, "malformed:too_large"), (5, "malformed:no_id")
    ]  # fmt: skip
    assert recs[1].detail == f"{path}: row group 0, row 1: 'text' is null"
    assert recs[2].detail == f"{path}: row group 1, row 0: 'text' has invalid UTF-8 at byte 3"
    assert recs[4].detail == f"{path}: row group 2, row 0: 'id' (the source's id_key) is null"
    assert (recs[1].meta, recs[1].id) == ({"url": "https://e.org/1"}, "b")  # a removed row can be found again


def test_damaged_arrow_files(tmp_path: Path) -> None:
    table = pa.table({"text": [PROSE[i] for i in range(6)]})
    full = write_arrow_stream(tmp_path / "full.arrow", table).read_bytes()
    (tmp_path / "cut.arrow").write_bytes(full[: len(full) * 2 // 3])
    recs = read(tmp_path / "cut.arrow")
    good = [r for r in recs if r.reason is None]
    assert [r.text for r in good] == table.column("text").to_pylist()[: len(good)] and 0 < len(good) < 6
    assert recs[-1].reason == "malformed:arrow" and recs[-1].index == len(good) + 1
    assert f"record batch {len(good) // 2} (from row {len(good)} of the file)" in recs[-1].detail
    (tmp_path / "junk.arrow").write_bytes(b"\x00" * 64)
    assert [(r.index, r.reason) for r in read(tmp_path / "junk.arrow")] == [(1, "malformed:arrow")]
    with pa.OSFile(str(tmp_path / "feather.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    assert [r.text for r in read(tmp_path / "feather.arrow")] == table.column("text").to_pylist()


def test_a_saved_dataset_directory_stands_for_its_arrow_files(tmp_path: Path) -> None:
    ds = write_saved_dataset(tmp_path / "hub" / "ds", {"content": PROSE[:5]})
    files = [str(ds / "data-00000-of-00002.arrow"), str(ds / "data-00001-of-00002.arrow")]
    assert columnar.expand_source(str(ds)) == (files, str(ds))
    assert columnar.expand_source(str(tmp_path / "hub" / "d*")) == (files, str(tmp_path / "hub"))
    (tmp_path / "hub" / "ds" / "state.json").write_text("{}")
    with pytest.raises(
        UsageError, match=r"state\.json: not the state\.json of a `datasets` save_to_disk directory"
    ):
        columnar.expand_source(str(ds))


def test_source_options_on_the_command_line_and_where_they_do_not_apply(tmp_path: Path) -> None:
    spec = SourceSpec.parse("fw[text_key=content, id_key=id, meta_keys=url+dump]=data/fw/*.parquet")
    assert (spec.name, spec.glob, spec.fields()) == (
        "fw",
        "data/fw/*.parquet",
        Fields("content", "id", ("url", "dump")),
    )
    assert SourceSpec.parse("x[meta_keys=]=a/[ab].jsonl").fields() == Fields(meta=())
    with pytest.raises(ConfigError, match=r"'txt=content': expected text_key=FIELD"):
        SourceSpec.parse("x[txt=content]=a")
    with pytest.raises(ConfigError, match="id_key and text_key both name 'a'"):
        SourceSpec.parse("x[text_key=a,id_key=a]=y")
    data, _ = warc_bytes([("https://e.org/", "text/html", b"<p>hi</p>")])
    (tmp_path / "a.warc.gz").write_bytes(data)
    with pytest.raises(
        UsageError, match=r"apply to jsonl, Parquet and Arrow files; .*a\.warc\.gz is a WARC file"
    ):
        stage.plan_inputs([SourceSpec.parse(f"cc[text_key=body]={tmp_path / 'a.warc.gz'}")])


def test_stage_output_is_byte_identical_for_any_worker_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parquet and a saved dataset through the whole stage: ids, url and damage as configured, the
    same shards and removed.parquet serially, on three threads, and with the files done in reverse."""
    (tmp_path / "fw").mkdir()
    for k in range(3):
        write_parquet(tmp_path / "fw" / f"{k}.parquet", web_rows(4, first=4 * k))
    (tmp_path / "fw" / "3.parquet").write_bytes(b"PAR1 cut off")
    write_saved_dataset(
        tmp_path / "hf", {"raw_content": [f"{t} [hf]" for t in PROSE[:6]], "url": ["https://h.org/"] * 6}
    )
    cfg = IngestConfig(
        sources=[
            SourceSpec.parse(f"fw[id_key=id]={tmp_path / 'fw' / '*.parquet'}"),
            SourceSpec(name="hf", glob=str(tmp_path / "hf"), text_key="raw_content"),
        ],
        langid={"enabled": False}, shard_docs=5, row_group_docs=3,
    )  # fmt: skip

    @as_mapper
    def reversed_map(name, fn, args):  # type: ignore[no-untyped-def]
        return [fn(*a) for a in reversed(args)][::-1]

    serial = stage.run_ingest(str(tmp_path / "serial"), cfg)
    m = serial.manifest
    assert m.stats.documents_in == 12 + 1 + 6 and m.stats.per_source["fw"].removed["malformed:parquet"] == 1
    docs = list(dataset.iter_documents(serial.out))
    assert (
        docs[0]["id"] == "<urn:uuid:0000>" and json.loads(docs[0]["meta"])["url"] == "https://example.org/0"
    )
    assert docs[-1]["id"] == "hf/data-00001-of-00002.arrow#3" and json.loads(docs[-1]["meta"]) == {
        "url": "https://h.org/"
    }
    monkeypatch.setattr(mappers, "INLINE_SECONDS", 0.0)
    threads = mappers.LocalMapper("threads", workers=3)
    try:
        runs = [
            stage.run_ingest(str(tmp_path / name), cfg, mapper=mapper)
            for name, mapper in (("threads", threads), ("reversed", reversed_map))
        ]
    finally:
        threads.close()
    for r in runs:
        assert [s.sha256 for s in r.manifest.shards] == [s.sha256 for s in m.shards]
        assert r.manifest.removed.sha256 == m.removed.sha256 and r.manifest.stats == m.stats


def test_jsonl_fields_named_by_the_source(tmp_path: Path) -> None:
    path = tmp_path / "rp.jsonl"
    lines = [
        {"raw_content": "a", "doc_id": "x1", "url": "u"},
        {"raw_content": "b"},
        {"raw_content": "c", "doc_id": [1]},
        {"text": "d"},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    recs = read(path, Fields("raw_content", id="doc_id", meta=("url", "lang")))
    assert [(r.reason, r.id, r.meta) for r in recs[:1]] == [(None, "x1", {"url": "u"})]
    assert [r.reason for r in recs[1:]] == ["malformed:no_id", "malformed:id_type", "malformed:no_text"]
    assert "no 'raw_content' field (keys: text)" in recs[3].detail
