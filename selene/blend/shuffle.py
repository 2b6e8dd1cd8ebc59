"""Steps 5-6 of the blend: each bucket shuffled into work parts, then the parts published in order.

`shuffle_bucket` reads its bucket's row groups from the scatter files (the bucket is in memory once),
computes the order from the key column alone, then writes parts of at most `shard_bytes` of text (a
longer document alone) and `shard_docs` documents in that order, one row group at a time taken from
the scatter tables. No sorted copy of the bucket or of a part is made: a task holds about one bucket
(`SHUFFLE_MEMORY_FACTOR`), which `check_bucket_memory` holds against the memory budget.

`publish` (main process): how many parts a bucket makes depends on its documents' lengths in key
order, known only after the shuffle, so buckets write their parts under work names
(``parts/b<bucket>-p<part>.parquet``) and publish renames them ``part-NNNNN.parquet`` in bucket order,
then part order: the numbering is a function of the data and config alone.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from selene.blend.config import BlendConfig
from selene.blend.count import byte_lengths
from selene.blend.scatter import KEY, scatter_path
from selene.errors import ConfigError, InputError
from selene.executor.mappers import Budget
from selene.faults import failpoint
from selene.io import dataset, fs, steps
from selene.manifest import ShardEntry

SHUFFLE_MEMORY_FACTOR = 2.25
"""Peak RSS of a shuffle task per byte of string data in its bucket: the Arrow tables (1.1×), what
the Parquet reader and the allocator keep around them, the key order. Measured 1.65 (jemalloc),
1.95 (mimalloc, pyarrow's default) and 2.25 (system malloc) on 100 MiB buckets of ~3 KB documents."""
SHUFFLE_MEMORY_FIXED = 64 << 20
"""Plus what does not grow with the bucket: the row group being taken and written (4 MiB of strings,
a few copies) and the Parquet writer's pages (measured: ~55 MiB over 2 × bucket on 30 MiB buckets)."""


class BucketParts(steps.StepResult):
    """Step 5's result for one bucket: its parts, in order, under their work names."""

    parts: list[ShardEntry]


def check_bucket_memory(largest: int, buckets: int, cfg: BlendConfig, budget: Budget) -> None:
    """Stop before the shuffle when its largest bucket (`largest` bytes of string data) would not fit
    one task's share of the memory budget. Only a check: the budget never changes the output, so
    nothing is adjusted here; the message names the settings that would make it fit.

    The estimate is SHUFFLE_MEMORY_FACTOR × bucket + SHUFFLE_MEMORY_FIXED: the peak RSS of
    `shuffle_bucket` above its worker's idle process, measured on buckets of 30 and 100 MiB.
    """
    need = SHUFFLE_MEMORY_FACTOR * largest + SHUFFLE_MEMORY_FIXED
    have = budget.task_memory
    if need <= have:
        return
    gib, mib = 1 << 30, 1 << 20
    how = (
        f"blend.shuffle_buckets is {cfg.shuffle_buckets}: raise it"
        if cfg.shuffle_buckets is not None
        else f"lower blend.shuffle_bucket_bytes (now {cfg.shuffle_bucket_bytes // mib} MiB) for more buckets"
    )
    raise ConfigError(
        f"blend: the largest of {buckets} shuffle buckets holds {largest / mib:,.0f} MiB and a shuffle task "
        f"needs about {need / gib:.2f} GiB, more than its share of the memory budget ({have / gib:.2f} GiB: "
        f"executor.memory_gb {budget.memory / gib:g} GiB over the workers). Either {how}, "
        "give more memory (--memory-gb) or run fewer workers (--workers)"
    )


def part_path(root: str, bucket: int, i: int) -> str:
    """Part `i` of `bucket` under its work name, until `publish` gives it its place in the output."""
    return fs.join(root, "parts", f"b{bucket:05d}-p{i:05d}.parquet")


def shuffle_bucket(
    root: str, b: int, shards: list[tuple[int, int, int]], shard_bytes: int, shard_docs: int | None
) -> BucketParts:
    """Bucket `b`'s rows in key order, as work parts of at most `shard_bytes` of text (`shard_docs` rows).
    `shards`: (shard, first row group, end row group) of the bucket in each scatter file that has it.

    Memory: the bucket (one single-chunk table per scatter file) plus the row group being written;
    the order is computed from the key column, and each row group takes its rows from the scatter tables.
    """
    # no outputs checked: `publish` renames the parts, and a published bucket is not shuffled again
    return steps.resumable(
        steps.marker(root, "bucket-done", b), BucketParts, lambda: _shuffle(root, b, shards, shard_bytes, shard_docs)
    )


def _shuffle(
    root: str, b: int, shards: list[tuple[int, int, int]], shard_bytes: int, shard_docs: int | None
) -> BucketParts:
    names = [*dataset.DOC_SCHEMA.names, KEY]
    pieces = [
        _one_chunk(dataset.open_parquet(scatter_path(root, k)).read_row_groups(range(g0, g1), columns=names))
        for k, g0, g1 in shards
    ]
    # stable: equal keys (p ≈ n²/2^65) keep shard order, so the order is still fully determined
    order = np.argsort(np.concatenate([p.column(KEY).to_numpy() for p in pieces]), kind="stable")
    starts = np.cumsum([0, *(p.num_rows for p in pieces)])
    pieces = [p.select(dataset.DOC_SCHEMA.names) for p in pieces]
    text = np.concatenate([byte_lengths(p) for p in pieces])[order]  # what parts are cut by
    strings = np.concatenate([dataset.row_bytes(p) for p in pieces])[order]  # what row groups are cut by
    parts = []
    for i, (lo, hi) in enumerate(itertools.pairwise(dataset.byte_cuts(text, shard_bytes, shard_docs))):
        with dataset.ParquetSink(part_path(root, b, i), dataset.DOC_SCHEMA) as sink:
            # one row group at a time: a part is never whole in memory, only its Parquet pages
            cuts = dataset.byte_cuts(strings[lo:hi], dataset.ROW_GROUP_BYTES, dataset.ROW_GROUP_ROWS)
            for g0, g1 in itertools.pairwise(cuts):
                sink.add_table(_take(pieces, starts, order[lo + g0 : lo + g1]))
        parts.append(sink.written.entry())
    del pieces
    pa.default_memory_pool().release_unused()  # the next task in this worker starts from little
    return BucketParts(parts=parts)


def _one_chunk(table: pa.Table) -> pa.Table:
    return table.combine_chunks() if any(c.num_chunks > 1 for c in table.columns) else table


def _take(pieces: list[pa.Table], starts: np.ndarray, rows: np.ndarray) -> pa.Table:
    """Rows `rows` (indices into the concatenation of `pieces`), in that order.

    Taken piece by piece from single-chunk tables and then put in order: Arrow's take on a chunked
    table would first join every chunk, a copy of the whole bucket for every part.
    """
    piece = np.searchsorted(starts, rows, side="right") - 1
    by_piece = np.argsort(piece, kind="stable")
    bounds = np.searchsorted(piece[by_piece], np.arange(len(pieces) + 1))
    taken = [
        pieces[j].take(pa.array(rows[by_piece[lo:hi]] - starts[j]))
        for j, (lo, hi) in enumerate(itertools.pairwise(bounds.tolist()))
        if hi > lo
    ]
    grouped = pa.concat_tables(taken).combine_chunks() if taken else pieces[0].schema.empty_table()
    inverse = np.empty_like(by_piece)
    inverse[by_piece] = np.arange(by_piece.size)
    return grouped.take(pa.array(inverse))


def _move(src: str, dst: str) -> None:
    f, p = fs.get_fs(src)
    _, q = fs.get_fs(dst)
    if fs.is_local(src):
        os.replace(p, q)  # atomic on POSIX, also over an earlier run's part of the same name
    else:
        f.mv(p, q)


def publish(out: str, root: str, buckets: Sequence[BucketParts]) -> list[ShardEntry]:
    """Rename each bucket's work parts ``part-NNNNN.parquet``, numbered in bucket order, then part order.

    Resumable: a part whose work file is gone was renamed by an earlier, killed attempt of this run
    (`run_blend` deletes other configurations' work files first); its final file must then be there.
    """
    written: list[ShardEntry] = []
    for bucket in buckets:
        for w in bucket.parts:
            entry = w.model_copy(update={"name": dataset.shard_name(len(written))})
            src, dst = fs.join(root, "parts", w.name), fs.join(out, entry.name)
            if fs.exists(src):
                _move(src, dst)
            elif not fs.exists(dst) or fs.size(dst) != w.bytes:
                raise InputError(
                    f"{dst}: missing, and its work file {src} is gone; rerun with --force to blend again"
                )
            written.append(entry)
        if bucket.parts:
            failpoint("blend:bucket-published")  # crash tests: killed between two buckets' renames
    return written
