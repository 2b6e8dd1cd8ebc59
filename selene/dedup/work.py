"""What every dedup task shares: the corpus as shards with global document indices (`Work`), the
per-shard arrays the steps write (signatures, band keys, lengths, keep ranks), and the similarity of
document pairs, estimated on signatures or exact on shingles."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from selene.dedup import minhash, shingle, stored
from selene.dedup.config import DedupConfig
from selene.io import dataset, fs

KEY_DTYPE = np.dtype([("key", "<u8"), ("row", "<u4")])  # one band's keys of a shard: key, row in the shard
VERIFY_CHUNK = 1 << 16  # candidate pairs verified at once: two (chunk × num_perm) blocks of signatures


@dataclass(frozen=True)
class Work:
    """The work every task shares: input shards, their row offsets, LSH shape, work root.

    `partitions`: each band's keys are split by key value into this many ranges, one task each, so a
    task holds 1/partitions of the corpus's keys. It follows the memory budget; clusters do not
    depend on it (equal keys always share a partition, and components ignore the order of edges)."""

    shards: tuple[str, ...]
    offsets: tuple[int, ...]  # global index of each shard's first row
    bands: int
    rows: int
    root: str
    partitions: int = 1
    sets: int = 1  # band sets cut from one signature (`lsh.band_positions`); keys per document: sets × bands
    # --against: the first shards are earlier outputs' (output directory, shard number): their
    # signatures, keys and lengths are read where those outputs stored them, and their documents
    # (global index < `protected`) are never removed
    prior: tuple[tuple[str, int], ...] = ()
    protected: int = 0
    # per earlier output: (its directory, its first shard's number here, its key index's partitions)
    indexes: tuple[tuple[str, int, int], ...] = ()

    def path(self, kind: str, i: int, ext: str = "npy") -> str:
        if i < len(self.prior) and kind in stored.STORED_KINDS:
            return stored.path(*self.prior[i][:1], kind, self.prior[i][1])
        return fs.join(self.root, kind, f"{i:05d}.{ext}")

    @property
    def new_shards(self) -> range:
        """The shards of this run's input (after the earlier outputs' shards)."""
        return range(len(self.prior), len(self.shards))

    def keys(self, band: int, part: int, k: int) -> str:
        """Shard k's LSH keys of one band and key partition (`KEY_DTYPE`, sorted), from its signature task."""
        return fs.join(self.root, f"keys-p{self.partitions}", f"b{band:04d}-p{part:05d}", f"{k:05d}.npy")

    def edges(self, band: int, part: int) -> str:
        return fs.join(self.root, f"edges-p{self.partitions}", f"b{band:04d}-p{part:05d}.npy")

    def locate(self, gidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(shard, row) of global document indices."""
        shard = np.searchsorted(np.asarray(self.offsets), gidx, side="right") - 1
        return shard, gidx - np.asarray(self.offsets)[shard]


def similarity(work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    """Jaccard of the pairs (a, b) as float64, VERIFY_CHUNK pairs at a time: exact on shingles for
    `verify: exact`, else estimated from the full signatures (agreeing values / num_perm)."""
    out = np.empty(a.size, dtype=np.float64)
    for lo in range(0, a.size, VERIFY_CHUNK):
        x, y = a[lo : lo + VERIFY_CHUNK], b[lo : lo + VERIFY_CHUNK]
        if cfg.verify == "exact":
            out[lo : lo + x.size] = exact_jaccard(work, x, y, cfg)
        else:
            out[lo : lo + x.size] = minhash.jaccard_estimates(
                rows_of(work, "sig", x), rows_of(work, "sig", y)
            )
    return out


def rows_of(work: Work, kind: str, gidx: np.ndarray) -> np.ndarray:
    """Rows `gidx` (global indices) of the per-shard arrays `kind`, read through memory maps."""
    shard, row = work.locate(gidx)
    out: np.ndarray | None = None
    for k in np.unique(shard):
        sel = shard == k
        part = fs.load_npy(work.path(kind, int(k)), mmap=True)[row[sel]]
        if out is None:
            out = np.empty((gidx.size, *part.shape[1:]), dtype=part.dtype)
        out[sel] = part
    assert out is not None
    return out


def texts_of(work: Work, gidx: np.ndarray) -> dict[int, str]:
    """The texts of documents `gidx` (global indices), by index."""
    wanted = np.unique(gidx)
    shard, row = work.locate(wanted)
    out: dict[int, str] = {}
    for k in np.unique(shard):
        sel = shard == k
        # only the row groups holding wanted rows: a round of exact checks reads a few documents of a shard
        col = dataset.take_rows(work.shards[int(k)], row[sel], ["text"]).column("text")
        for g, t in zip(wanted[sel].tolist(), col.to_pylist(), strict=True):
            out[g] = t
    return out


SHINGLE_CACHE_DOCS = 1 << 14  # shingle sets an `exact_jaccard` cache keeps (~8 KB each for 1,000 words)


def exact_jaccard(
    work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig, cache: dict[int, np.ndarray] | None = None
) -> np.ndarray:
    """Exact Jaccard of the shingle sets of the pairs (a, b), from their texts. `cache` (global index →
    shingle set) carries sets from one call to the next: `assign`'s rounds compare the same
    documents again, and a text is read from its row group, not from memory."""
    cache = {} if cache is None else cache
    if len(cache) > SHINGLE_CACHE_DOCS:
        cache.clear()
    need = np.setdiff1d(np.concatenate([a, b]), np.fromiter(cache, dtype=np.int64, count=len(cache)))
    texts = texts_of(work, need) if need.size else {}

    def sh(g: int) -> np.ndarray:
        if g not in cache:
            cache[g] = shingle.shingle_hashes(texts[g], cfg.ngram, cfg.shingle)
        return cache[g]

    out = np.empty(a.size, dtype=np.float64)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        sx, sy = sh(x), sh(y)
        inter = np.intersect1d(sx, sy, assume_unique=True).size
        union = sx.size + sy.size - inter
        out[i] = inter / union if union else 1.0
    return out
