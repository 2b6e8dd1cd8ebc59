"""The shared layer of the stages that cut text (`selene.io.edits`): every document in one place, the
cuts counted per source, a finished shard not redone, the most repeated spans ordered deterministically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from selene.errors import InternalError
from selene.io import dataset, edits, fs
from selene.manifest import DatasetInputs, DocumentManifest, EditStats, Repeat
from tests.corpus import write_dataset


def _edit(docs: list[dict[str, Any]], first_row: int) -> list[edits.Cut | None]:
    """Row 0 unchanged, odd rows lose their first word, rows divisible by 4 (but 0) are dropped."""
    out: list[edits.Cut | None] = []
    for i, doc in enumerate(docs):
        row = first_row + i
        if row == 0:
            out.append(None)
        elif row % 4 == 0:
            out.append(edits.Cut(text="", chars=len(doc["text"]), spans=1, drop="test:too_short", detail=f"row {row}"))
        elif row % 2:
            head, _, rest = doc["text"].partition(" ")
            out.append(edits.Cut(text=rest, chars=len(head) + 1, spans=1))
        else:
            out.append(edits.Cut(text=doc["text"], chars=0, spans=0))  # looked at, nothing cut
    return out


class _Manifest(DocumentManifest):
    inputs: DatasetInputs
    stats: EditStats


def _docs(n: int, source: str) -> list[tuple[str, str, str, str]]:
    return [(f"{source}-{i}", f"word{i} and more text", source, "{}") for i in range(n)]


def test_cuts_drops_and_untouched_documents_are_counted_per_source(tmp_path: Path) -> None:
    inp = write_dataset(str(tmp_path / "in"), _docs(6, "a") + _docs(4, "b"), shard_docs=5)
    out, root = str(tmp_path / "out"), str(tmp_path / "out" / "_work" / "fp")
    m_in = dataset.require_documents(inp, "test")
    results = [edits.edit_shard(root, k, fs.join(inp, s.name), out, _edit) for k, s in enumerate(m_in.shards)]

    def manifest(summary: edits.EditSummary, removed: dataset.WrittenFile) -> _Manifest:
        return _Manifest(stage="test", selene_version="0", fingerprint="fp", config={}, shards=summary.shards,
                         removed=removed.entry(), stats=summary.stats, inputs=DatasetInputs(dataset=inp, fingerprint=None))  # fmt: skip

    result = edits.finish_edits(out, "test", m_in, root, results, manifest)
    st = result.manifest.stats
    # shard 0 holds rows 0-4 (a-0..a-4), shard 1 rows 0-4 (a-5, b-0..b-3): rows 4 of each are dropped
    assert (st.documents_in, st.documents_out, st.documents_removed) == (10, 8, 2)
    assert st.documents_edited == 4  # rows 1 and 3 of each shard (row 2: looked at, nothing cut)
    assert st.spans_removed == 4 and st.chars_removed == 4 * len("word1 ")  # a-1, a-3, b-0, b-2
    assert st.per_source["a"].removed == {"test:too_short": 1} and st.per_source["b"].removed == {"test:too_short": 1}
    assert st.per_source["a"].edits is not None and st.per_source["a"].edits["documents_edited"] == 2
    # read as files: the manifest's stage is this test's, which no reader of manifests knows
    texts = {r["id"]: r["text"] for k in range(2) for r in pq.read_table(fs.join(out, dataset.shard_name(k))).to_pylist()}
    assert texts["a-0"] == "word0 and more text" and texts["a-1"] == "and more text" and "a-4" not in texts
    removed = pq.read_table(fs.join(out, dataset.REMOVED)).to_pylist()
    assert sorted((r["id"], r["reason"], r["detail"]) for r in removed) == [
        ("a-4", "test:too_short", "row 4"), ("b-3", "test:too_short", "row 4")]  # fmt: skip
    assert not fs.exists(fs.join(out, dataset.WORK))


def test_a_finished_shard_is_not_edited_again(tmp_path: Path) -> None:
    inp = write_dataset(str(tmp_path / "in"), _docs(3, "a"))
    out, root = str(tmp_path / "out"), str(tmp_path / "w")
    shard = fs.join(inp, dataset.shard_name(0))
    first = edits.edit_shard(root, 0, shard, out, _edit)
    again = edits.edit_shard(root, 0, shard, out, lambda docs, row: pytest.fail("redone"))
    assert again == first


def test_a_wrong_number_of_decisions_is_selenes_bug_not_silent_loss(tmp_path: Path) -> None:
    inp = write_dataset(str(tmp_path / "in"), _docs(3, "a"))
    with pytest.raises(ValueError, match="2 decisions for the 3 documents"):
        edits.edit_shard(str(tmp_path / "w"), 0, fs.join(inp, dataset.shard_name(0)), str(tmp_path / "o"),
                         lambda docs, row: [None, None])  # fmt: skip


def test_the_accounting_refuses_a_lost_document(tmp_path: Path) -> None:
    inp = write_dataset(str(tmp_path / "in"), _docs(4, "a"))
    out, root = str(tmp_path / "out"), str(tmp_path / "w")
    m_in = dataset.require_documents(inp, "test")
    res = edits.edit_shard(root, 0, fs.join(inp, dataset.shard_name(0)), out, _edit)
    res.counts["a"]["in"] -= 1
    with pytest.raises(InternalError, match="documents read vs input shards: 3 != 4"):
        edits.finish_edits(out, "test", m_in, root, [res], lambda s, r: pytest.fail("no manifest"))


def test_most_repeated_is_ordered_by_count_then_length_then_text() -> None:
    parts = [
        [Repeat(text="b", count=5, chars=1), Repeat(text="long", count=2, chars=4)],
        [Repeat(text="a", count=5, chars=1), Repeat(text="x", count=2, chars=1), Repeat(text="zz", count=9, chars=2)],
    ]
    assert [r.text for r in edits.most_repeated(parts, n=4)] == ["zz", "a", "b", "long"]
    assert edits.shown("a  b\n\nc" + "d" * 400, limit=10) == "a b cdddd…"
    md = edits.repeats_markdown([edits.repeat("x | y", 3)], "Most repeated")
    assert "| 3 | 5 | x \\| y |" in md
    assert "| 2 | 12 | \\_\\_init\\_\\_ \\*x\\* |" in edits.repeats_markdown([edits.repeat("__init__ *x*", 2)], "t")
