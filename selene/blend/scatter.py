"""Step 4 of the blend: each input shard's sampled rows, scattered to the shuffle buckets.

`scatter_shard` writes the shard's sampled (document, pass) rows, each with a seeded random bucket and
sort key, to one file per shard, ``scatter/s<shard>.parquet``, ordered by bucket with each bucket in
row groups of its own (the result records each bucket's row groups), so the work files are as many as
the shards, not shards × buckets; repeats get the id ``<id>@<pass>``. Documents sampled 0 times go to
the removed rows (``blend:not_sampled``) for audit: they are not dropped data, only not part of this mix.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene.blend import mix, partial
from selene.blend.config import BlendConfig
from selene.blend.count import byte_lengths, sources_of
from selene.blend.summary import Sampled, not_sampled_detail
from selene.io import dataset, fs, steps

REASON = "blend:not_sampled"
KEY = "shuffle_key"
SCATTER_SCHEMA = dataset.DOC_SCHEMA.append(pa.field(KEY, pa.uint64(), nullable=False))


class Scattered(steps.StepResult):
    """Step 4's result for one shard: per bucket, the rows and the bytes of string data written to it
    (what a shuffle task will hold) and its row groups (bucket b is ``groups[b]`` to ``groups[b + 1]``);
    per source, what was sampled."""

    buckets: list[int]
    bucket_bytes: list[int]
    groups: list[int]
    sources: dict[str, Sampled]


def scatter_path(root: str, k: int) -> str:
    return fs.join(root, "scatter", f"s{k:05d}.parquet")


def removed_path(root: str, k: int) -> str:
    return fs.join(root, "removed", f"{k:05d}.parquet")


def scatter_shard(
    root: str, k: int, shard: str, spec: dict[str, tuple[float, partial.Partial]], buckets: int, cfg: BlendConfig
) -> Scattered:
    """Shard `k`'s sampled rows into `buckets` buckets of its scatter file; its unsampled documents into
    removed rows.

    `spec[source]` is (epochs, the source's partial pass: `partial.partial_mask` says which of this
    shard's documents it takes).
    """
    return steps.resumable(
        steps.marker(root, "scatter-done", k),
        Scattered,
        lambda: _scatter(root, k, shard, spec, buckets, cfg),
        outputs=[scatter_path(root, k), removed_path(root, k)],
    )


def _scatter(
    root: str, k: int, shard: str, spec: dict[str, tuple[float, partial.Partial]], buckets: int, cfg: BlendConfig
) -> Scattered:
    # one chunk per column: a take from a chunked column would join all its chunks on every call
    table = dataset.open_parquet(shard).read(columns=dataset.DOC_SCHEMA.names).combine_chunks()
    names, codes = sources_of(table)
    nbytes = byte_lengths(table)
    rows, passes, unsampled = [], [], []
    sources: dict[str, Sampled] = {}
    for src in sorted(names):
        src_rows = np.flatnonzero(codes == names.index(src))
        ep, part = spec.get(src, (0.0, partial.NO_PARTIAL))
        chosen = None
        if ep != math.floor(ep):
            chosen = partial.partial_mask(partial.partial_keys(cfg.seed, src, k, src_rows.size), part, k)
        pairs = mix.sample_documents(src_rows.size, ep, chosen=chosen)
        picked = src_rows[pairs[:, 0]]
        rows.append(picked)
        passes.append(pairs[:, 1])
        hit = np.zeros(src_rows.size, dtype=bool)
        hit[pairs[:, 0]] = True
        unsampled.append(src_rows[~hit])
        sources[src] = Sampled(
            documents=int(src_rows.size),
            kept=int(hit.sum()),
            rows=int(picked.size),
            bytes=int(nbytes[picked].sum()),
        )
    row = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    pas = np.concatenate(passes) if passes else np.empty(0, dtype=np.int64)
    # one stream per shard: its draws do not depend on how many workers run the other shards
    gen = mix.rng(mix.shard_seed(cfg.seed, mix.SHUFFLE, k))
    bucket = gen.integers(0, buckets, size=row.size)
    key = gen.integers(0, 2**64, size=row.size, dtype=np.uint64)
    counts = np.bincount(bucket, minlength=buckets)
    held = np.bincount(bucket, weights=dataset.row_bytes(table)[row], minlength=buckets)
    order = np.argsort(bucket, kind="stable")
    start = 0
    groups = [0]  # bucket b is row groups groups[b] .. groups[b + 1] of the scatter file
    with dataset.ParquetSink(scatter_path(root, k), SCATTER_SCHEMA) as sink:
        for n in counts.tolist():
            idx = order[start : start + n]
            start += n
            if n:
                sink.add_table(_rows_table(table, row[idx], pas[idx], key[idx]))
            groups.append(sink.groups)
    gone = np.sort(np.concatenate(unsampled)) if unsampled else np.empty(0, dtype=np.int64)
    details = pa.array(
        [not_sampled_detail(s, spec[s][0] if s in spec else 0.0, cfg) for s in names], pa.string()
    )
    removed = pa.table(
        {
            "id": table.column("id").take(pa.array(gone)),
            "source": table.column("source").take(pa.array(gone)),
            "reason": pa.repeat(pa.scalar(REASON, pa.string()), gone.size),
            "detail": details.take(pa.array(codes[gone])),
            "meta": table.column("meta").take(pa.array(gone)),
        },
        schema=dataset.REMOVED_SCHEMA,
    )
    dataset.write_table(removed_path(root, k), removed)
    return Scattered(
        buckets=counts.tolist(),
        bucket_bytes=np.rint(held).astype(np.int64).tolist(),
        groups=groups,
        sources=sources,
    )


def _rows_table(table: pa.Table, rows: np.ndarray, passes: np.ndarray, key: np.ndarray) -> pa.Table:
    """The rows (repeats included) with ids ``<id>`` on pass 0 and ``<id>@<pass>`` after, plus the key."""
    t = table.take(pa.array(rows))
    p = pa.array(passes)
    repeat_id = pc.binary_join_element_wise(t.column("id"), pa.scalar("@"), pc.cast(p, pa.string()), "")
    ids = pc.if_else(pc.equal(p, 0), t.column("id"), repeat_id)
    return t.set_column(0, "id", ids).append_column(KEY, pa.array(key, pa.uint64()))
