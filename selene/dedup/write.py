"""The write step of dedup: per input shard, the shard without its duplicates, its part of
removed.parquet (``dup_of:<kept id>``, with the cluster), and the stored signatures of the documents it
keeps (`stored`), for a later ``--against``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene.dedup import clusters, stored
from selene.dedup.work import Work
from selene.io import dataset, fs, steps
from selene.manifest import ShardEntry


def _ids(work: Work, k: int) -> pa.ChunkedArray:
    return dataset.open_parquet(work.shards[k]).read(columns=["id"]).column("id")


class WrittenShard(steps.StepResult):
    """A write task's result: its output shard, and its kept and removed documents per source."""

    shard: ShardEntry
    sources: dict[str, int]
    removed_sources: dict[str, int]


def write_shard(work: Work, k: int, dup_files: Sequence[str], out: str, store: bool = True) -> WrittenShard:
    """Shard `k` without its duplicates, plus its part of removed.parquet, and (`store`) the
    signatures, band keys and lengths of the documents it keeps, for a later ``--against``. `dup_files`:
    the cluster groups' files that hold some of this shard's duplicates (`clusters.DUP_DTYPE`, sorted by
    shard and row; the task reads its own range of each): a task gets paths, never a corpus-sized
    mapping (an executor copies every parameter of every task). The ids of the kept documents are read
    from their shards' id columns."""
    j_out = k - len(work.prior)  # the output shard: earlier outputs' shards come first in `work`
    target = fs.join(out, dataset.shard_name(j_out))
    removed_path = work.path("removed", k, "parquet")

    def step() -> WrittenShard:
        table = dataset.open_parquet(work.shards[k]).read(columns=dataset.DOC_SCHEMA.names)
        keep = np.ones(table.num_rows, dtype=bool)
        dups = clusters.dups_of_shard(dup_files, k)
        if dups is not None:
            rows = dups["row"]
            keep[rows] = False
            gone = table.take(pa.array(rows))
            kept_ids = np.empty(rows.size, dtype=object)
            for s in np.unique(dups["kept_shard"]).tolist():
                sel = dups["kept_shard"] == s
                ids = table.column("id") if s == k else _ids(work, s)
                kept_ids[sel] = ids.take(pa.array(dups["kept_row"][sel])).to_numpy(zero_copy_only=False)
            removed = pa.table(
                {
                    "id": gone.column("id"),
                    "source": gone.column("source"),
                    "reason": pc.binary_join_element_wise("dup_of:", pa.array(kept_ids, pa.string()), ""),
                    "detail": [
                        f"cluster={c} size={n} j={j:.3f}"
                        + (f" against={work.prior[s][0]}" if s < len(work.prior) else "")
                        for c, n, j, s in zip(
                            dups["cluster"].tolist(),
                            dups["size"].tolist(),
                            dups["j"].tolist(),
                            dups["kept_shard"].tolist(),
                            strict=True,
                        )
                    ],
                    "meta": gone.column("meta"),
                },
                schema=dataset.REMOVED_SCHEMA,
            )
            table = table.filter(pa.array(keep))
        else:
            removed = dataset.REMOVED_SCHEMA.empty_table()
        if store:
            kept = np.flatnonzero(keep)
            for kind in stored.STORED_KINDS:
                fs.save_npy(stored.path(out, kind, j_out), fs.load_npy(work.path(kind, k), mmap=True)[kept])
            fs.save_npy(work.path("gone", k), np.flatnonzero(~keep))  # for the key and removed indexes
        dataset.write_table(removed_path, removed)
        return WrittenShard(
            shard=dataset.write_table(target, table).entry(),
            sources=dataset.value_counts(table.column("source")),
            removed_sources=dataset.value_counts(removed.column("source")),
        )

    return steps.resumable(
        steps.marker(work.root, "done", k), WrittenShard, step, outputs=[target, removed_path]
    )
