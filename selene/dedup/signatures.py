"""The signature step of dedup: per group of consecutive input shards, each shard's shingles →
MinHash signatures (n × num_perm, in the scheme's dtype) and one LSH key per band of every band set
(`lsh.band_positions`: further sets cut the same values in other orders), one row group at a time;
then the group's keys, one file per band and key partition, so a band task opens one file per group,
not per shard (30 K shards of a 1 TB corpus are some 470 groups: an object store's GETs per band
task)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from selene.dedup import lsh, minhash, shingle
from selene.dedup.bands import BAND_BYTES_PER_DOC, key_partition
from selene.dedup.config import DedupConfig
from selene.dedup.keep import keep_rank
from selene.dedup.work import KEY_DTYPE, Work
from selene.executor.mappers import Budget
from selene.io import dataset, fs, steps

MAX_GROUP = 64  # shards per signature task at most (a band task opens a file per group)
GROUPS_PER_WORKER = 4  # signature tasks per worker at least, while there are shards enough


class ShardSignatures(steps.StepResult):
    """A shard's signature step, done: its documents (the arrays are its ``.npy`` files)."""

    documents: int


def signature_shard(work: Work, k: int, cfg: DedupConfig) -> ShardSignatures:
    """Signatures (n × num_perm, in the scheme's dtype), band keys (n × sets·bands) and text lengths
    of shard `k`, each a file (`Work.path`). Reads one row group at a time (row groups are sized in
    bytes); a shard done before is not hashed again."""
    kinds = ["sig", "key", "len", *(["rank"] if _rank_columns(cfg) else [])]
    return steps.resumable(
        steps.marker(work.root, "signatures", k),
        ShardSignatures,
        lambda: _signatures(work, k, cfg),
        outputs=[work.path(kind, k) for kind in kinds],
    )


def _rank_columns(cfg: DedupConfig) -> list[str]:
    """The columns `keep` ranks copies by (none for keep: first and longest)."""
    return {"priority": ["source"], "score": ["meta"]}.get(cfg.keep, [])


def _signatures(work: Work, k: int, cfg: DedupConfig) -> ShardSignatures:
    perms = minhash.Permutations.from_seed(cfg.num_perm, cfg.seed)
    sigs, keys, lengths, ranks = [], [], [], []
    columns = ["text", *_rank_columns(cfg)]
    for group in dataset.iter_row_groups(work.shards[k], columns=columns):
        texts = group.column(0).to_pylist()
        if len(columns) > 1:
            ranks.append(keep_rank(group.column(1), cfg))
        values, counts = shingle.batch_hashes(texts, cfg.ngram, cfg.shingle)
        sig = minhash.signatures_flat(values, counts, perms)
        key = lsh.band_keys(sig, work.bands, work.rows, work.sets)
        key[counts == 0] = 0  # no shingle, no LSH key: such documents would all collide with each other
        sigs.append(sig.astype(perms.dtype))
        keys.append(key)
        lengths.append(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)))
    sig_empty = np.empty((0, cfg.num_perm), dtype=perms.dtype)
    fs.save_npy(work.path("sig", k), np.concatenate(sigs) if sigs else sig_empty)
    key = np.concatenate(keys) if keys else np.empty((0, work.sets * work.bands), np.uint64)
    fs.save_npy(work.path("key", k), key)
    if len(columns) > 1:
        fs.save_npy(work.path("rank", k), np.concatenate(ranks) if ranks else np.empty(0, dtype=np.float64))
    fs.save_npy(work.path("len", k), np.concatenate(lengths) if lengths else np.empty(0, dtype=np.int64))
    return ShardSignatures(documents=int(key.shape[0]))


class GroupKeys(steps.StepResult):
    """A signature task's result: the documents of its group of shards."""

    documents: int


def signature_group(work: Work, i: int, cfg: DedupConfig) -> GroupKeys:
    """`signature_shard` for each shard of group i, then the group's band keys, one file per band and
    key partition (`Work.keys`: key, shard, row; sorted), so a band task reads its own keys only and
    opens one file per group of shards. Its marker is written after every key file (not listed as
    outputs: sets × bands × partitions of them to look up on every rerun)."""
    return steps.resumable(work.keys_done(i), GroupKeys, lambda: _group_keys(work, i, cfg))


def _group_keys(work: Work, i: int, cfg: DedupConfig) -> GroupKeys:
    shards = work.group_shards(i)
    for k in shards:
        signature_shard(work, k, cfg)
    per_shard = [fs.load_npy(work.path("key", k)) for k in shards]
    key = np.concatenate(per_shard) if per_shard else np.empty((0, work.sets * work.bands), np.uint64)
    shard = np.repeat(np.array(shards, dtype=np.uint32), [len(x) for x in per_shard])
    row = np.concatenate([np.arange(len(x), dtype=np.uint32) for x in per_shard]) if per_shard else shard
    for band in range(key.shape[1]):
        col = key[:, band]
        live = np.flatnonzero(col != 0)
        part = key_partition(col[live], work.partitions)
        perm = np.lexsort((row[live], shard[live], col[live], part))
        order = live[perm]
        bounds = np.searchsorted(part[perm], np.arange(work.partitions + 1))
        for p in range(work.partitions):
            sel = order[bounds[p] : bounds[p + 1]]
            rec = np.empty(sel.size, dtype=KEY_DTYPE)
            rec["key"], rec["shard"], rec["row"] = col[sel], shard[sel], row[sel]
            fs.save_npy(work.keys(band, p, i), rec)
    return GroupKeys(documents=int(key.shape[0]))


def group_size(work: Work, rows: Sequence[int], budget: Budget) -> int:
    """New shards per signature task: at most MAX_GROUP, few enough that the group's band keys fit
    half a task's memory (`BAND_BYTES_PER_DOC` a document and key), and small enough to leave every
    worker GROUPS_PER_WORKER tasks while the input has the shards for it."""
    per_doc = BAND_BYTES_PER_DOC * work.sets * work.bands
    fits = (budget.task_memory // 2) // max(1, per_doc * max(rows, default=1))
    spread = -(-len(rows) // (GROUPS_PER_WORKER * max(1, budget.workers)))
    return int(max(1, min(MAX_GROUP, fits, spread)))
