"""Stages that cut text out of documents (`selene spans`, `selene substrings`): the per-shard writer,
the accounting and the most repeated spans, shared so that both count alike.

A stage decides per document what to cut (a `Cut`); `edit_shard` applies the decisions to one input
shard, one row group at a time, writing the output shard and the shard's removed rows (documents left
too short), and counts per source what went where. `finish_edits` turns the shards' counts into the
manifest's `EditStats`, checks that every document is in exactly one place and writes the manifest
last. An edit keeps the document's id, source and meta: a cut document is the same document, shorter.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from selene.io import dataset, fs, steps
from selene.io.results import StageResult
from selene.manifest import DocumentManifest, EditStats, Repeat, ShardEntry, SourceStats, StageManifest
from selene.view import markdown_escaped

M = TypeVar("M", bound=StageManifest)

# the counters of one source in `EditedShard.counts`, besides the drop reasons
COUNTERS = ("in", "kept", "edited", "chars_in", "chars_removed", "spans_removed")
SHOWN_CHARS = 300  # a repeat's text in the manifest and repeats.md: enough to recognise it


@dataclass(frozen=True)
class Cut:
    """What a stage does to one document that it changes."""

    text: str
    """The text left."""
    chars: int
    """Characters cut out."""
    spans: int
    """Spans (units, substrings) cut out."""
    drop: str | None = None
    """A reason (``spans:too_short``): the document goes whole to removed.parquet instead."""
    detail: str = ""
    """removed.parquet's detail for a drop."""


Edit = Callable[[list[dict[str, Any]], int], list["Cut | None"]]
"""``edit(docs, first_row)``: per document of a row group (dicts with id, text, source, meta; the
first is row `first_row` of the shard), a `Cut`, or None where it stays as it is."""


class EditedShard(steps.StepResult):
    """What `edit_shard` stores: the output shard and, per source, the counters of `COUNTERS` plus
    each drop reason → documents dropped for it."""

    shard: ShardEntry
    counts: dict[str, dict[str, int]]


def removed_part(root: str, k: int) -> str:
    return fs.join(root, "removed", f"{k:05d}.parquet")


def edit_shard(root: str, k: int, shard: str, out: str, edit: Edit) -> EditedShard:
    """Input shard `k` (path `shard`) → ``OUT/part-k`` and its removed rows under `root`, resumable
    (a finished shard is not redone). Call it from the stage's own per-shard task: `edit` may be a
    closure over what the task loaded, since only the task's arguments travel to a worker."""
    target, removed = fs.join(out, dataset.shard_name(k)), removed_part(root, k)
    return steps.resumable(
        steps.marker(root, "edit", k),
        EditedShard,
        lambda: _edit(shard, target, removed, edit),
        outputs=[target, removed],
    )


def _edit(shard: str, target: str, removed_path: str, edit: Edit) -> EditedShard:
    counts: dict[str, Counter[str]] = {}
    row = 0
    with (
        dataset.ParquetSink(target, dataset.DOC_SCHEMA) as sink,
        dataset.ParquetSink(removed_path, dataset.REMOVED_SCHEMA) as removed,
    ):
        for batch in dataset.iter_row_groups(shard, dataset.DOC_SCHEMA.names):  # row groups: sized in bytes
            docs = batch.to_pylist()
            cuts = edit(docs, row)
            if len(cuts) != len(docs):
                raise ValueError(f"{shard}: {len(cuts)} decisions for the {len(docs)} documents from row {row}")
            row += len(docs)
            for doc, cut in zip(docs, cuts, strict=True):
                c = counts.setdefault(doc["source"], Counter())
                c["in"] += 1
                c["chars_in"] += len(doc["text"])
                if cut is None:
                    c["kept"] += 1
                    sink.add(**doc)
                elif cut.drop is not None:
                    c[cut.drop] += 1
                    removed.add(id=doc["id"], source=doc["source"], reason=cut.drop, detail=cut.detail, meta=doc["meta"])
                else:
                    c["kept"] += 1
                    c["edited"] += int(cut.chars > 0)
                    c["chars_removed"] += cut.chars
                    c["spans_removed"] += cut.spans
                    sink.add(**{**doc, "text": cut.text})
    return EditedShard(
        shard=sink.written.entry(), counts={s: dict(sorted(c.items())) for s, c in sorted(counts.items())}
    )


@dataclass(frozen=True)
class EditSummary:
    """The shards' counts added up: the manifest's stats and its shard list."""

    stats: EditStats
    shards: list[ShardEntry]


def summarize(results: Sequence[EditedShard]) -> EditSummary:
    per: dict[str, Counter[str]] = {}
    for r in results:
        for src, c in r.counts.items():
            per.setdefault(src, Counter()).update(c)
    per_source = {
        src: SourceStats(
            documents_in=c["in"],
            kept=c["kept"],
            removed={k: n for k, n in sorted(c.items()) if k not in COUNTERS and n},
            edits={
                "documents_edited": c["edited"],
                "chars_in": c["chars_in"],
                "chars_removed": c["chars_removed"],
                "spans_removed": c["spans_removed"],
            },
        )
        for src, c in sorted(per.items())
    }
    total: Counter[str] = sum(per.values(), Counter())
    shards = [r.shard for r in results]
    stats = EditStats(
        documents_in=total["in"],
        documents_out=sum(s.rows for s in shards),
        documents_removed=total["in"] - total["kept"],
        documents_edited=total["edited"],
        chars_in=total["chars_in"],
        chars_removed=total["chars_removed"],
        spans_removed=total["spans_removed"],
        per_source=per_source,
    )
    return EditSummary(stats=stats, shards=shards)


def finish_edits(
    out: str,
    stage: str,
    m_in: DocumentManifest,
    root: str,
    results: Sequence[EditedShard],
    manifest: Callable[[EditSummary, dataset.WrittenFile], M],
) -> StageResult[M]:
    """removed.parquet merged from the shards' parts, the accounting checked (every input document
    kept or removed, once), `manifest(summary, removed)` written last, the work directory removed."""
    summary = summarize(results)
    n_in = sum(s.rows for s in m_in.shards)
    st = summary.stats
    return steps.finish_documents(
        out,
        stage,
        [removed_part(root, k) for k in range(len(results))],
        balance=lambda removed: {
            "documents read vs input shards": (st.documents_in, n_in),
            "kept + removed vs input": (st.documents_out + removed.rows, n_in),
            "removed rows vs documents dropped": (removed.rows, st.documents_removed),
        },
        manifest=lambda removed: manifest(summary, removed),
    )


# ------------------------------------------------------------------------- the most repeated


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` for display: whitespace runs as one space, at most `limit` characters (`…` at a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def repeat(text: str, count: int) -> Repeat:
    return Repeat(text=shown(text), count=count, chars=len(text))


def most_repeated(parts: Iterable[Iterable[Repeat]], n: int = 20) -> list[Repeat]:
    """The `n` most repeated over the parts' lists (each a partition's own top: a span lives in one
    partition, so no count is split), by occurrences, then longer first, then text: deterministic."""
    return heapq.nsmallest(n, (r for part in parts for r in part), key=lambda r: (-r.count, -r.chars, r.text))


def repeats_markdown(repeats: Sequence[Repeat], title: str) -> str:
    """``repeats.md``: the most repeated spans, each with its occurrences and length."""
    lines = [f"# {title}", ""]
    if not repeats:
        return "\n".join([*lines, "Nothing was repeated.", ""])
    lines += ["| occurrences | chars | text |", "|---:|---:|---|"]
    lines += [f"| {r.count:,} | {r.chars:,} | {markdown_escaped(r.text)} |" for r in repeats]
    return "\n".join([*lines, ""])
