"""The band step of dedup: per (band, key partition), the documents of the whole corpus sharing an LSH
key are candidate pairs, verified on their signatures (memory-mapped, in chunks) or on exact shingle
Jaccard, and written as one edge file. A band's keys are split by key value into partitions so that
a task fits `Budget.task_memory`; with ``--against``, the earlier outputs' documents sharing a key with
one of this run's are found in their stored key indexes."""

from __future__ import annotations

import numpy as np

from selene.dedup import stored
from selene.dedup.config import DedupConfig
from selene.dedup.work import EDGE_DTYPE, VERIFY_CHUNK, EdgeFile, Work, similarity
from selene.executor.mappers import Budget
from selene.faults import kill_once
from selene.io import fs, steps

BAND_BYTES_PER_DOC = 48  # a band task's memory per document of its partition: keys, ids, sort scratch
SMALL_RUN = 8  # documents sharing a band key are all compared pairwise up to this many


def partitions_for(n_docs: int, budget: Budget) -> int:
    """Key partitions per band so that a band task fits the budget of one task (`Budget.task_memory`)."""
    need = n_docs * BAND_BYTES_PER_DOC
    return max(1, -(-need // max(1, budget.task_memory // 2)))


def key_partition(keys: np.ndarray, parts: int) -> np.ndarray:
    """Partition of each key: its high 32 bits scaled to [0, parts), so key ranges split evenly."""
    return ((keys >> np.uint64(32)) * np.uint64(parts)) >> np.uint64(32)


def band_pairs(work: Work, band: int, part: int, cfg: DedupConfig) -> EdgeFile:
    """Candidate pairs of one band's key partition (documents sharing a key), verified; written as
    EDGE_DTYPE; returns the file and its number of pairs. Memory: this partition's keys and ids
    (1/partitions of the band)."""
    out = work.edges(band, part)
    return steps.resumable(
        work.edges_done(band, part), EdgeFile, lambda: _band_pairs(work, band, part, out, cfg), outputs=[out]
    )


def _band_pairs(work: Work, band: int, part: int, out: str, cfg: DedupConfig) -> EdgeFile:
    kill_once("dedup:band")
    keys, gidx = [], []
    offsets = np.asarray(work.offsets, dtype=np.int64)
    for i in work.groups:
        rec = fs.load_npy(work.keys(band, part, i))
        keys.append(rec["key"])
        gidx.append(offsets[rec["shard"]] + rec["row"])
    key = np.concatenate(keys)
    idx = np.concatenate(gidx)
    del keys, gidx
    if work.indexes:  # earlier outputs' documents sharing a key with one of this run's
        old_key, old_idx = _earlier(work, band, np.unique(key))
        key, idx = np.concatenate([old_key, key]), np.concatenate([old_idx, idx])
    order = np.lexsort((idx, key))
    key, idx = key[order], idx[order]
    del order
    a, b = candidate_pairs(key, idx)
    del key, idx
    if work.protected:  # two earlier outputs' documents: both stay whatever their similarity (a < b)
        new = b >= work.protected
        a, b = a[new], b[new]
    edges = np.empty(a.size, dtype=EDGE_DTYPE)
    edges["a"], edges["b"] = a, b
    for lo in range(0, a.size, VERIFY_CHUNK):
        hi = min(lo + VERIFY_CHUNK, a.size)
        edges["j"][lo:hi] = verify(work, a[lo:hi], b[lo:hi], cfg)
    if cfg.verify == "exact":
        edges = edges[edges["j"] >= cfg.threshold]
    elif cfg.verify == "signature":
        edges = edges[edges["j"] >= cfg.verify_cutoff()]
    fs.save_npy(out, edges)
    return EdgeFile(path=out, pairs=int(edges.size))


def _earlier(work: Work, band: int, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The keys and global indices of the earlier outputs' documents whose key in `band` is one of
    `wanted` (sorted), found by binary search in each output's sorted key index (memory-mapped: a few
    pages per key, not the whole index). Documents of earlier outputs that share a key with no new
    document would only pair among themselves, and such pairs are never compared."""
    keys, gidx = [np.empty(0, np.uint64)], [np.empty(0, np.int64)]
    offsets = np.asarray(work.offsets)
    for out, first, parts in work.indexes:
        their_part = key_partition(wanted, parts)
        for p in np.unique(their_part).tolist():
            want = wanted[their_part == p]
            index = fs.load_npy(stored.key_index(out, band, p), mmap=True)
            lo = np.searchsorted(index["key"], want, side="left")
            n = np.searchsorted(index["key"], want, side="right") - lo
            at = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
            rec = np.asarray(index[at])
            keys.append(rec["key"])
            gidx.append(offsets[first + rec["shard"].astype(np.int64)] + rec["row"].astype(np.int64))
    return np.concatenate(keys), np.concatenate(gidx)


def candidate_pairs(key: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs to verify among documents `idx` sorted by band `key`: in each run of equal keys of
    at most SMALL_RUN documents, every pair, so a document that fails against one member is still
    compared with the others; in a larger run (boilerplate, templates) a star from its first document
    plus a chain of neighbours, linear in its size."""
    n = key.size
    if n < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    start = np.concatenate([[True], key[1:] != key[:-1]])
    run = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    size = np.diff(np.append(first, n))[run]
    small = size <= SMALL_RUN
    a_parts, b_parts = [], []
    for d in range(1, SMALL_RUN):
        pair = (run[d:] == run[:-d]) & (small[:-d] | (d == 1))  # all pairs of small runs; chains of large
        a_parts.append(idx[:-d][pair])
        b_parts.append(idx[d:][pair])
    star = ~small & ~start & (np.arange(n) - first[run] > 1)  # large runs: each member to the first
    a_parts.append(idx[first[run[star]]])
    b_parts.append(idx[star])
    return np.concatenate(a_parts), np.concatenate(b_parts)


def verify(work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    """Similarity of candidate pairs: estimated from signatures, or exact on shingles (float32)."""
    return similarity(work, a, b, cfg).astype(np.float32)
