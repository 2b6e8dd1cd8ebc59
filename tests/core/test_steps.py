"""The data stages' shared skeleton (selene/io/steps.py): resumable steps, writers as context
managers, the finishing call with its accounting check."""

from __future__ import annotations

import json

import pytest

from selene.errors import InternalError
from selene.io import dataset, fs, steps
from selene.manifest import DocumentManifest, ShardEntry, SourceStats, Stats


class Counted(steps.StepResult):
    rows: int
    sources: dict[str, int]


def test_resumable_runs_once_and_returns_the_stored_result(tmp_path):
    marker = str(tmp_path / "done" / "00000.json")
    calls = []

    def step() -> Counted:
        calls.append(1)
        return Counted(rows=3, sources={"a": 3})

    first = steps.resumable(marker, Counted, step)
    again = steps.resumable(marker, Counted, step)
    assert first == again == Counted(rows=3, sources={"a": 3})
    assert len(calls) == 1
    assert isinstance(again, Counted)


def test_resumable_reruns_when_an_output_is_missing_or_the_marker_is_foreign(tmp_path):
    marker, out = str(tmp_path / "m.json"), str(tmp_path / "part.parquet")
    calls = []

    def step() -> Counted:
        calls.append(1)
        fs.atomic_write(out, b"x")
        return Counted(rows=len(calls), sources={})

    steps.resumable(marker, Counted, step, outputs=[out])
    fs.rm(out)
    assert steps.resumable(marker, Counted, step, outputs=[out]).rows == 2  # its file was gone: redone
    fs.atomic_write(marker, '{"rows": 1, "unknown": 2}')  # a marker of another shape: redone, replaced
    assert steps.resumable(marker, Counted, step, outputs=[out]).rows == 3
    assert steps.resumable(marker, Counted, step, outputs=[out]).rows == 3
    assert len(calls) == 3


def test_accounting_names_every_pair_that_disagrees():
    steps.check_accounting("dedup", {"kept + removed vs in": (5, 5)})
    with pytest.raises(InternalError) as e:
        steps.check_accounting("dedup", {"kept + removed vs in": (4, 5), "ok": (1, 1), "pieces": (7, 2)})
    assert str(e.value).endswith("dedup accounting: kept + removed vs in: 4 != 5; pieces: 7 != 2")


def _doc(i: int) -> dict[str, str]:
    return {"id": f"d{i}", "text": "t" * i, "source": "s", "meta": "{}"}


def test_sink_in_a_with_block_closes_or_aborts(tmp_path):
    path = str(tmp_path / "part-00000.parquet")
    with dataset.ParquetSink(path, dataset.DOC_SCHEMA) as sink:
        sink.add(**_doc(1))
    assert sink.written.rows == 1 and fs.exists(path)
    assert dataset.open_parquet(path).read().column("id").to_pylist() == ["d1"]

    bad = str(tmp_path / "part-00001.parquet")
    with pytest.raises(ValueError), dataset.ParquetSink(bad, dataset.DOC_SCHEMA) as sink2:
        sink2.add(**_doc(2))
        raise ValueError("the step failed")
    assert not fs.exists(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part-00000.parquet"]  # no temporary left
    with pytest.raises(RuntimeError, match="not closed"):
        _ = sink2.written


def _manifest(out: str, removed: dataset.WrittenFile, shards: list[ShardEntry]) -> DocumentManifest:
    n_out = sum(s.rows for s in shards)
    stats = Stats(documents_in=n_out + removed.rows, documents_out=n_out, documents_removed=removed.rows,
                  per_source={"s": SourceStats(documents_in=n_out + removed.rows, kept=n_out, removed={"filter:x": 1})})
    cfg = Counted(rows=0, sources={})
    return DocumentManifest(stage="test", inputs=None, stats=stats, **steps.header("fp", cfg, shards, removed.entry()))


def _stage_output(tmp_path):
    out = str(tmp_path / "out")
    work = fs.join(out, dataset.WORK, "fp")
    with dataset.ParquetSink(fs.join(out, dataset.shard_name(0)), dataset.DOC_SCHEMA) as sink:
        sink.add(**_doc(1))
        sink.add(**_doc(2))
    part = fs.join(work, "removed", "00000.parquet")
    with dataset.ParquetSink(part, dataset.REMOVED_SCHEMA) as rem:
        rem.add(id="d3", source="s", reason="filter:x", detail="", meta=None)
    return out, work, part, [sink.written.entry()]


def test_finish_documents_merges_checks_and_writes_the_manifest_last(tmp_path):
    out, work, part, shards = _stage_output(tmp_path)
    result = steps.finish_documents(
        out, "test", [part],
        balance=lambda removed: {"in vs out + removed": (3, shards[0].rows + removed.rows)},
        manifest=lambda removed: _manifest(out, removed, shards),
    )
    assert not result.skipped and result.manifest is not None
    assert result.manifest.removed.rows == 1 and result.manifest.fingerprint == "fp"
    assert json.loads(fs.read_text(fs.join(out, dataset.MANIFEST)))["removed"]["rows"] == 1
    assert dataset.read_removed(out).column("id").to_pylist() == ["d3"]
    assert not fs.exists(work)


def test_finish_documents_writes_no_manifest_when_the_accounting_fails(tmp_path):
    out, work, part, shards = _stage_output(tmp_path)
    with pytest.raises(InternalError, match="test accounting: in vs out \\+ removed: 4 != 3"):
        steps.finish_documents(
            out, "test", [part],
            balance=lambda removed: {"in vs out + removed": (4, shards[0].rows + removed.rows)},
            manifest=lambda removed: _manifest(out, removed, shards),
        )
    assert not fs.exists(fs.join(out, dataset.MANIFEST))
    assert fs.exists(work)  # kept for a look; the next run starts over


def test_markers_are_named_one_way():
    assert steps.marker("/w/_work/fp", "shard", 7) == "/w/_work/fp/shard/00007.json"
    assert steps.marker("/w/_work/fp", "index") == "/w/_work/fp/index.json"
