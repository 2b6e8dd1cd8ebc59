"""Dataset I/O: fsspec paths, atomic writes, Parquet shards and manifests."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from selene.errors import OutputError, PathError, UsageError
from selene.io import dataset, fs
from tests.corpus import document_manifest


@pytest.fixture(params=["local", "memory"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(tmp_path / "ds") if request.param == "local" else f"memory://selene-{uuid.uuid4().hex[:8]}/ds"


def test_parquet_sink_roundtrip_and_contract(root: str) -> None:
    path = fs.join(root, dataset.shard_name(0))
    sink = dataset.ParquetSink(path, dataset.DOC_SCHEMA, row_group=2)
    for i in range(5):
        sink.add(id=f"s/f#{i}", text=f"text {i}", source="s", meta="{}")
    written = sink.close()
    assert written.name == "part-00000.parquet" and written.rows == 5
    assert written.sha256 == fs.sha256_file(path)
    pf = dataset.open_parquet(path)
    assert pf.schema_arrow == dataset.DOC_SCHEMA
    assert pf.metadata.num_row_groups == 3
    assert pf.read().column("id").to_pylist() == [f"s/f#{i}" for i in range(5)]
    assert fs.ls(root) == [path]  # no temporary left behind


def test_aborted_write_leaves_nothing(root: str) -> None:
    path = fs.join(root, "x.parquet")
    sink = dataset.ParquetSink(path, dataset.DOC_SCHEMA)
    sink.add(id="a", text="b", source="c", meta="{}")
    sink.abort()
    assert not fs.exists(path)
    assert fs.ls(root) == []
    with pytest.raises(RuntimeError), fs.atomic_open(fs.join(root, "y.bin")) as f:
        f.write(b"half")
        raise RuntimeError("killed")
    assert fs.ls(root) == []


def test_a_path_that_is_no_dataset_is_named_for_what_it_is(tmp_path: Path) -> None:
    """Not every folder without a manifest is an unfinished stage: a shard given for its folder, a
    training run, another folder, a missing path each get their own message, as bad usage (exit 2)."""
    docs = tmp_path / "ingest"
    shard = dataset.write_table(str(docs / dataset.shard_name(0)), dataset.DOC_SCHEMA.empty_table())
    removed = dataset.write_table(str(docs / dataset.REMOVED), dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(str(docs), document_manifest([shard], removed, {}))
    with pytest.raises(UsageError, match=r"is a file, not a dataset: give the folder that holds it: '.*ingest'") as e:
        dataset.list_shards(str(docs / dataset.shard_name(0)))
    assert e.value.exit_code == 2
    train = tmp_path / "train"
    (train / "checkpoints").mkdir(parents=True)
    (train / "metrics.jsonl").write_text("")
    with pytest.raises(UsageError, match=r"is not a selene dataset: it holds checkpoints, metrics\.jsonl: a training run"):
        dataset.list_shards(str(train))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    with pytest.raises(UsageError, match=r"it holds a\.txt: no manifest\.json and no shards"):
        dataset.list_shards(str(tmp_path / "notes"))
    with pytest.raises(UsageError, match="does not exist"):
        dataset.list_shards(str(tmp_path / "missing"))


def test_manifest_is_the_completion_marker(root: str) -> None:
    fs.makedirs(root)
    with pytest.raises(PathError, match="did not finish"):
        dataset.list_shards(root)
    shard = fs.join(root, dataset.shard_name(0))
    w = dataset.write_table(shard, dataset.DOC_SCHEMA.empty_table())
    removed = dataset.write_table(fs.join(root, dataset.REMOVED), dataset.REMOVED_SCHEMA.empty_table())
    manifest = document_manifest([w], removed, {}).model_copy(update={"fingerprint": "abc"})
    dataset.write_manifest(root, manifest)
    assert dataset.list_shards(root) == [shard]
    assert dataset.manifest_matches(root, "abc") and not dataset.manifest_matches(root, "other")
    fs.rm(shard)
    assert not dataset.manifest_matches(root, "abc")  # a listed shard went missing


def test_expand_globs_local_and_memory(tmp_path: Path) -> None:
    for name in ("a/1.jsonl", "a/2.jsonl", "a/sub/3.jsonl", "a/x.txt"):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}")
    files, root = fs.expand(str(tmp_path / "a" / "*.jsonl"))
    assert [Path(f).name for f in files] == ["1.jsonl", "2.jsonl"] and root == str(tmp_path / "a")
    files, _ = fs.expand(str(tmp_path / "a" / "**" / "*.jsonl"))
    assert len(files) == 3
    fs.atomic_write("memory://globtest/d/1.jsonl", b"{}")
    files, root = fs.expand("memory://globtest/d/*.jsonl")
    assert files == ["memory://globtest/d/1.jsonl"] and root == "memory://globtest/d"
    assert fs.expand(str(tmp_path / "nothing*.jsonl"))[0] == []


def test_unwritable_output_names_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match=r"file/out.*not writable"):
        fs.check_writable(str(blocker / "out"))


def test_parquet_bytes_are_deterministic(tmp_path: Path) -> None:
    t = dataset.DOC_SCHEMA.empty_table()
    a = dataset.write_table(str(tmp_path / "a.parquet"), t)
    b = dataset.write_table(str(tmp_path / "b.parquet"), t)
    assert a.sha256 == b.sha256
    assert pq.read_table(str(tmp_path / "a.parquet")).num_rows == 0


def test_row_groups_are_cut_by_bytes_and_rows_read_back_by_index(root: str) -> None:
    import pyarrow as pa

    texts = ["x" * n for n in (10, 500, 30, 30, 2000, 5, 5, 5, 700)]
    table = pa.table(
        {"id": [f"d{i}" for i in range(len(texts))], "text": texts, "source": ["s"] * 9, "meta": ["{}"] * 9}
    )
    path = fs.join(root, "t.parquet")
    dataset.write_table(path, table, row_group_bytes=600)
    pf = dataset.open_parquet(path)
    groups = [pf.metadata.row_group(g).num_rows for g in range(pf.metadata.num_row_groups)]
    sizes = dataset.row_bytes(table).tolist()
    assert sum(groups) == 9
    start = 0
    for n in groups:  # each group within the budget unless it is a single row
        assert n == 1 or sum(sizes[start : start + n]) <= 600
        start += n
    assert [t.num_rows for t in dataset.iter_row_groups(path)] == groups
    rows = [0, 2, 4, 7, 8]
    got = dataset.take_rows(path, rows, ["id", "text"])
    assert got.column("id").to_pylist() == [f"d{i}" for i in rows]
    assert got.column("text").to_pylist() == [texts[i] for i in rows]
    assert dataset.take_rows(path, [], ["id"]).num_rows == 0
    sink = dataset.ParquetSink(fs.join(root, "u.parquet"), dataset.DOC_SCHEMA, row_group_bytes=100)
    for i, t in enumerate(texts):
        sink.add(id=f"d{i}", text=t, source="s", meta="{}")
    sink.close()
    meta = dataset.open_parquet(fs.join(root, "u.parquet")).metadata
    # streaming rows: a group closes with the row that reaches the budget
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [2, 3, 4]
