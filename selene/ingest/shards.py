"""Ingest's last parallel step, per output shard: the surviving documents in the global order (input
file, record), cut into shards of `shard_bytes` of text (and at most `shard_docs` documents), so the
output does not depend on the number of workers and a shard's memory does not follow document length."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from selene.ingest.work import Work
from selene.io import dataset, fs, steps
from selene.manifest import ShardEntry


@dataclass(frozen=True)
class ShardPlan:
    index: int
    segments: tuple[tuple[int, int, int], ...]  # (file idx, first row, end row) of candidate rows


class ShardResult(steps.StepResult):
    """The output shard a `write_shard` step wrote."""

    shard: ShardEntry


def plan_shards(
    n_candidates: dict[int, int],
    dup_rows: dict[int, np.ndarray],
    lengths: dict[int, str],
    shard_bytes: int,
    shard_docs: int | None = None,
) -> list[ShardPlan]:
    """Cut the surviving documents, in global order, into shards of at most `shard_bytes` of text
    (at least one document) and at most `shard_docs` documents. `lengths` maps each input file to the
    .npy of its candidates' text bytes; one file's array is in memory at a time."""
    plans: list[ShardPlan] = []
    current: list[tuple[int, int, int]] = []
    room_bytes, room_docs = shard_bytes, shard_docs or np.iinfo(np.int64).max
    for f_idx in sorted(n_candidates):
        n = n_candidates[f_idx]
        survivors = np.setdiff1d(np.arange(n), dup_rows.get(f_idx, np.empty(0, dtype=np.int64)))
        size = fs.load_npy(lengths[f_idx])[survivors] if survivors.size else np.empty(0, dtype=np.int64)
        ends = np.cumsum(size)
        pos = 0
        while pos < survivors.size:
            base = int(ends[pos - 1]) if pos else 0
            fit = int(np.searchsorted(ends, base + room_bytes, side="right")) - pos  # documents that fit
            take = min(max(fit, 1 if not current else 0), room_docs, survivors.size - pos)
            if take:
                current.append((f_idx, int(survivors[pos]), int(survivors[pos + take - 1]) + 1))
                room_bytes -= int(ends[pos + take - 1]) - base
                room_docs -= take
                pos += take
            if room_bytes <= 0 or room_docs == 0 or pos < survivors.size:  # full: the next one does not fit
                plans.append(ShardPlan(len(plans), tuple(current)))
                current, room_bytes, room_docs = [], shard_bytes, shard_docs or np.iinfo(np.int64).max
    if current:
        plans.append(ShardPlan(len(plans), tuple(current)))
    return plans


def write_shard(
    plan: ShardPlan,
    work_root: str,
    dups: dict[int, str],
    out: str,
    row_group: int | None,
    row_group_bytes: int,
) -> ShardResult:
    """Write output shard `plan.index` from the candidate files, skipping duplicates."""
    work = Work.at(work_root)
    target = fs.join(out, dataset.shard_name(plan.index))

    def write() -> ShardResult:
        with dataset.ParquetSink(target, dataset.DOC_SCHEMA, row_group, row_group_bytes) as sink:
            for f_idx, start, end in plan.segments:
                table = _read_rows(work.docs(f_idx), start, end)
                if f_idx in dups:
                    dup = dataset.open_parquet(dups[f_idx]).read(columns=["row"]).column("row").to_numpy()
                    keep = ~np.isin(np.arange(start, end), dup)
                    table = table.filter(pa.array(keep))
                sink.add_table(table.select(dataset.DOC_SCHEMA.names))
        return ShardResult(shard=sink.written.entry())

    return steps.resumable(work.shard_done(plan.index), ShardResult, write, outputs=[target])


def _read_rows(path: str, start: int, end: int) -> pa.Table:
    """Rows [start, end) of a Parquet file, reading only the row groups that hold them."""
    pf = dataset.open_parquet(path)
    groups, first, offset = [], None, 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if offset + n > start and offset < end:
            groups.append(g)
            first = offset if first is None else first
        offset += n
    if not groups:
        return dataset.DOC_SCHEMA.empty_table()
    t = pf.read_row_groups(groups, columns=dataset.DOC_SCHEMA.names)
    return t.slice(start - (first or 0), end - start)
