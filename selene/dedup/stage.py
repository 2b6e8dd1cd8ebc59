"""The dedup stage: fuzzy near-duplicate removal with MinHash LSH, as external-memory steps over files.

1. `signature_shard` per input shard, one row group at a time: shingles → MinHash signatures
   (n × num_perm, uint32 for the default scheme) and one LSH key per band of every band set
   (`lsh.band_positions`: further sets cut the same values in other orders), stored band-major.
2. `band_pairs` per (band, key partition): the partition's keys of the whole corpus, sorted; documents
   sharing a key are candidates, verified on the full signatures (memory-mapped, in chunks) or on
   exact shingle Jaccard. Partitions split a band by key value so a task fits `executor.task_memory`.
3. `cluster`: vectorised union-find over dense document indices, one edge file at a time, links
   candidates into components; then `assign` decides per document: the first of a component in corpus
   order (or the longest) is kept, the members whose similarity to it (estimated on signatures, or
   exact) is at least the threshold are its duplicates, and the rest repeat the same on their own.
   So a removed document is always within the threshold of the copy kept for it, however loose the
   links that joined the component. Duplicates are written per shard (row, kept shard and row,
   cluster, size, similarity).
4. `write_shard` per input shard: the shard without its duplicates; `finalize` writes removed.parquet
   (``dup_of:<kept id>``, with the cluster) and the manifest (cluster sizes, bands × rows, S-curve).

Per-document state in the main process is a few int64 arrays; nothing is a Python object per document.
Work files live under ``OUT/_work/<fingerprint>/``; the fingerprint covers the input dataset and every
setting that changes the result, so a changed parameter never reuses stale files. Output is the same,
byte for byte, for any number of workers, executor or memory budget.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene import __version__, executor
from selene.dedup import lsh, minhash, shingle, stored
from selene.dedup.config import DedupConfig
from selene.dedup.keep import KEEP_RULE, check_priority, keep_rank, kept_because
from selene.dedup.manifest import ClusterStats, DedupInputs, DedupManifest, DedupStats, LshSummary
from selene.dedup.report import cluster_examples
from selene.errors import InputError
from selene.executor import Mapper, serial_map
from selene.faults import failpoint, kill_once
from selene.io import dataset, fs
from selene.manifest import DatasetInputs, DocumentManifest, ShardEntry, SourceStats

WORK = dataset.WORK
EDGE_DTYPE = np.dtype([("a", "<i8"), ("b", "<i8"), ("j", "<f4")])
# per-shard duplicates, sorted by row: the row, where the document it duplicates is, its cluster
DUP_DTYPE = np.dtype(
    [
        ("row", "<i8"),
        ("kept_shard", "<i8"),
        ("kept_row", "<i8"),
        ("cluster", "<i8"),
        ("size", "<i8"),
        ("j", "<f8"),
    ]
)
VERIFY_CHUNK = 1 << 16  # candidate pairs verified at once: two (chunk × num_perm) blocks of signatures
BAND_BYTES_PER_DOC = 48  # a band task's memory per document of its partition: keys, ids, sort scratch
EXAMPLES = 5  # clusters shown in clusters.md
SMALL_RUN = 8  # documents sharing a band key are all compared pairwise up to this many
# in the fingerprint: outputs and work files of an older decision rule are never taken as done
# (2: each removed document checked against the document kept for it, not only linked to it)
ALGORITHM = 2


DedupResult = dataset.StageResult[DedupManifest]


@dataclass(frozen=True)
class Work:
    """The work every task shares: input shards, their row offsets, LSH shape, work root.

    `partitions`: each band's keys are split by key value into this many ranges, one task each, so a
    task holds 1/partitions of the corpus's keys. It follows the memory budget; clusters do not
    depend on it (equal keys always share a partition, and union-find ignores the order of edges)."""

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

    def path(self, kind: str, i: int, ext: str = "npy") -> str:
        if i < len(self.prior) and kind in stored.STORED_KINDS:
            return stored.path(*self.prior[i][:1], kind, self.prior[i][1])
        return fs.join(self.root, kind, f"{i:05d}.{ext}")

    @property
    def new_shards(self) -> range:
        """The shards of this run's input (after the earlier outputs' shards)."""
        return range(len(self.prior), len(self.shards))

    def edges(self, band: int, part: int) -> str:
        return fs.join(self.root, f"edges-p{self.partitions}", f"b{band:04d}-p{part:05d}.npy")

    def locate(self, gidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(shard, row) of global document indices."""
        shard = np.searchsorted(np.asarray(self.offsets), gidx, side="right") - 1
        return shard, gidx - np.asarray(self.offsets)[shard]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "deduplicate")


def bands_rows(cfg: DedupConfig) -> tuple[int, int]:
    if cfg.bands is not None and cfg.rows is not None:
        return cfg.bands, cfg.rows
    return lsh.choose_bands_rows(cfg.threshold, cfg.num_perm, cfg.false_positive_weight)


def partitions_for(n_docs: int) -> int:
    """Key partitions per band so that a band task fits the budget of one task (`executor.task_memory`)."""
    need = n_docs * BAND_BYTES_PER_DOC
    return max(1, -(-need // max(1, executor.task_memory() // 2)))


# ---------------------------------------------------------------------------- 1. signatures


def signature_shard(work: Work, k: int, cfg: DedupConfig) -> int:
    """Signatures (n × num_perm, in the scheme's dtype), band keys (bands × n, band-major so a band
    task reads one contiguous row) and text lengths of shard `k`; returns its number of documents.
    Reads one row group at a time (row groups are sized in bytes)."""
    sig_path, key_path, len_path = work.path("sig", k), work.path("keys", k), work.path("len", k)
    if fs.exists(len_path):
        return int(fs.load_npy(len_path).size)
    perms = minhash.Permutations.from_seed(cfg.num_perm, cfg.seed)
    sigs, keys, lengths, ranks = [], [], [], []
    columns = ["text", *{"priority": ["source"], "score": ["meta"]}.get(cfg.keep, [])]
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
    fs.save_npy(sig_path, np.concatenate(sigs) if sigs else np.empty((0, cfg.num_perm), dtype=perms.dtype))
    fs.save_npy(
        key_path,
        np.ascontiguousarray(np.concatenate(keys).T)
        if keys
        else np.empty((work.sets * work.bands, 0), np.uint64),
    )
    if len(columns) > 1:
        fs.save_npy(work.path("rank", k), np.concatenate(ranks) if ranks else np.empty(0, dtype=np.float64))
    fs.save_npy(len_path, np.concatenate(lengths) if lengths else np.empty(0, dtype=np.int64))
    return sum(len(x) for x in lengths)


# -------------------------------------------------------------------------------- 2. bands


def _partition(keys: np.ndarray, parts: int) -> np.ndarray:
    """Partition of each key: its high 32 bits scaled to [0, parts), so key ranges split evenly."""
    return ((keys >> np.uint64(32)) * np.uint64(parts)) >> np.uint64(32)


def band_pairs(work: Work, band: int, part: int, cfg: DedupConfig) -> str:
    """Candidate pairs of one band's key partition (documents sharing a key), verified; written as
    EDGE_DTYPE. Memory: this partition's keys and ids (1/partitions of the band)."""
    out = work.edges(band, part)
    if fs.exists(out):
        return out
    kill_once("dedup:band")
    keys, gidx = [], []
    for k in range(len(work.shards)):
        col = fs.load_npy(work.path("keys", k), mmap=True)[band]
        live = (
            np.flatnonzero(col != 0)
            if work.partitions == 1
            else np.flatnonzero((col != 0) & (_partition(col, work.partitions) == part))
        )
        keys.append(np.asarray(col[live]))
        gidx.append(live + work.offsets[k])
    key = np.concatenate(keys)
    idx = np.concatenate(gidx)
    del keys, gidx
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
    return out


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


def similarity(work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    """Jaccard of the pairs (a, b) as float64, VERIFY_CHUNK pairs at a time: exact on shingles for
    `verify: exact`, else estimated from the full signatures (agreeing values / num_perm)."""
    out = np.empty(a.size, dtype=np.float64)
    for lo in range(0, a.size, VERIFY_CHUNK):
        x, y = a[lo : lo + VERIFY_CHUNK], b[lo : lo + VERIFY_CHUNK]
        if cfg.verify == "exact":
            out[lo : lo + x.size] = _exact_jaccard(work, x, y, cfg)
        else:
            out[lo : lo + x.size] = minhash.jaccard_estimates(_rows(work, "sig", x), _rows(work, "sig", y))
    return out


def _rows(work: Work, kind: str, gidx: np.ndarray) -> np.ndarray:
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


def _texts(work: Work, gidx: np.ndarray) -> dict[int, str]:
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


def _exact_jaccard(work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    texts = _texts(work, np.concatenate([a, b]))
    cache: dict[int, np.ndarray] = {}

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


# ------------------------------------------------------------------------------ 3. clusters


def union(parent: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Merge the components of the pairs (a, b) into `parent` (in place), vectorised.

    `parent` must map every node to its root on entry and does on return. Each round hooks the larger
    root of every pair that spans two components under the smaller one (`np.minimum.at`: the smallest
    offer wins), then jumps pointers until every node points at a root. Parents only ever decrease, so
    there are no cycles, and the root of a component is its smallest index: the result is the same
    for any order or grouping of the pairs.
    """
    while a.size:
        ra, rb = parent[a], parent[b]
        spans = ra != rb
        if not spans.any():
            return
        a, b, ra, rb = a[spans], b[spans], ra[spans], rb[spans]
        np.minimum.at(parent, np.maximum(ra, rb), np.minimum(ra, rb))
        while True:
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent[:] = up


def linked_nodes(edge_files: Sequence[str]) -> np.ndarray:
    """The documents some verified pair joins (sorted global indices), one edge file at a time."""
    nodes = np.empty(0, dtype=np.int64)
    pending: list[np.ndarray] = []
    held = 0
    for path in edge_files:
        edges = fs.load_npy(path)
        pending += [np.unique(edges["a"]), np.unique(edges["b"])]
        held += pending[-1].size + pending[-2].size
        if held > 2 * nodes.size + (1 << 20):  # merge now and then: linear in the files, bounded memory
            nodes, pending, held = np.unique(np.concatenate([nodes, *pending])), [], 0
    return np.unique(np.concatenate([nodes, *pending]))


def cluster(work: Work, edge_files: Sequence[str], n_docs: int, cfg: DedupConfig) -> dict[str, Any]:
    """Union-find over the verified pairs, one edge file at a time, then `assign` within each
    component; writes each shard's duplicates (DUP_DTYPE, sorted by row) as ``dups/NNNNN.npy``;
    returns cluster statistics, the per-shard dup files and the largest clusters (for clusters.md).
    A cluster is a kept document and the documents removed as its duplicates. Memory: a few int64
    arrays over the linked documents (those in some verified pair, not the whole corpus), plus one
    edge file."""
    linked = linked_nodes(edge_files)  # every document of an edge is in a component of two or more
    parent = np.arange(linked.size, dtype=np.int64)
    pairs = 0
    for path in edge_files:
        edges = fs.load_npy(path)
        pairs += int(edges.size)
        union(parent, np.searchsorted(linked, edges["a"]), np.searchsorted(linked, edges["b"]))
        del edges
    comp = linked[parent]  # each linked document's component, named by its smallest global index
    members, keeper, sim, exact = assign(work, comp, linked, cfg)
    is_dup = keeper != members
    order = np.argsort(members[is_dup], kind="stable")
    dup, kept_of_dup, j_dup = members[is_dup][order], keeper[is_dup][order], sim[is_dup][order]
    # a cluster: its kept document and its duplicates
    heads, n_dups = np.unique(kept_of_dup, return_counts=True)
    head_sizes = n_dups + 1
    dup_sizes = head_sizes[np.searchsorted(heads, kept_of_dup)]
    s_dup, r_dup = work.locate(dup)
    s_kept, r_kept = work.locate(kept_of_dup)
    dup_files: dict[int, str] = {}
    bounds = np.searchsorted(s_dup, np.arange(len(work.shards) + 1))
    for k in range(len(work.shards)):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        if hi > lo:
            rec = np.empty(hi - lo, dtype=DUP_DTYPE)
            rec["row"], rec["kept_shard"], rec["kept_row"] = r_dup[lo:hi], s_kept[lo:hi], r_kept[lo:hi]
            rec["cluster"], rec["size"] = kept_of_dup[lo:hi], dup_sizes[lo:hi]
            rec["j"] = j_dup[lo:hi]
            dup_files[k] = work.path("dups", k)
            fs.save_npy(dup_files[k], rec)
    hist = np.bincount(head_sizes) if heads.size else np.empty(0, dtype=np.int64)
    # the largest clusters, ties by kept document: the kept document and up to three duplicates
    top = np.lexsort((heads, -head_sizes))[:EXAMPLES]
    examples = [
        (int(head_sizes[t]), [int(heads[t]), *[int(m) for m in dup[kept_of_dup == heads[t]][:3]]])
        for t in top.tolist()
    ]
    components = int(np.unique(comp).size)
    return {
        "stats": {
            "pairs_verified": pairs,
            "clusters": int(heads.size),
            "documents_in_clusters": int(heads.size + dup.size),
            "duplicates": int(dup.size),
            "cluster_sizes": {str(s): int(n) for s, n in enumerate(hist.tolist()) if n},
            "largest_cluster": int(head_sizes.max()) if heads.size else int(n_docs > 0),
            "documents_linked": int(linked.size),
            "kept_by_check": int(np.count_nonzero(~is_dup)) - components,
            "exact_checks": int(np.count_nonzero(exact)),
            "removed_similarity": similarity_summary(j_dup, cfg),
        },
        "dup_files": dup_files,
        "examples": examples,
    }


def assign(
    work: Work, comp: np.ndarray, linked: np.ndarray, cfg: DedupConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which document each linked document (`linked`: in a component of two or more; `comp`: its
    component) is a copy of.

    Per component, in the order of `keep` (corpus order; or the longest, the highest-priority source or
    the highest score first, ties by corpus order):
    the first undecided member is kept, and every undecided member whose similarity to it is at least
    the threshold is its duplicate; the members left repeat this among themselves until none is left.
    All components advance together, one vectorised round at a time (a round compares each undecided
    member with its component's current kept document), so the cost is the linked documents times
    the kept documents per component, usually one or two rounds. The similarity is `verify`'s, and
    the check is at the threshold itself, with no margin. `verify: signature` estimates it from the
    signatures, and where the estimate is within `exact_within` of the threshold (where it cannot
    tell one side from the other: one standard deviation is 0.035 at 0.8 with 128 permutations)
    takes exact Jaccard instead, from the two texts: outside that band an unbiased estimate errs
    with probability < 0.2%, and real corpora hold many pairs just under the threshold (licences,
    templates), so deciding them on the estimate alone would remove some below it, linking on
    looser pairs (`DedupConfig.verify_margin`) or not. `verify: exact` is exact throughout;
    `verify: none` removes every member for its component's first document (the similarity is
    still estimated, for the manifest).

    Returns (members, keeper, similarity, exact) over the linked documents, in component-then-`keep`
    order: the global index of each, of the document kept for it (itself when kept), the similarity to
    it (0 for kept ones) and whether exact Jaccard decided. Depends on the components only, never on
    the order the edges came in."""
    old = linked < work.protected  # earlier outputs' documents: first, and never removed
    rank = np.zeros(linked.size, dtype=np.float64)
    if cfg.keep in ("longest", "priority", "score") and (~old).any():
        rank[~old] = (
            -_rows(work, "len", linked[~old]) if cfg.keep == "longest" else _rows(work, "rank", linked[~old])
        )
    order = np.lexsort((linked, rank, ~old, comp))
    members, comp = linked[order], comp[order]
    keeper = members.copy()
    sim = np.zeros(members.size, dtype=np.float64)
    exact = np.zeros(members.size, dtype=bool)
    todo = np.arange(members.size)
    while todo.size:
        c = comp[todo]
        first = np.concatenate([[True], c[1:] != c[:-1]])
        head = todo[np.flatnonzero(first)][np.cumsum(first) - 1]  # each one's kept document (position)
        rest, head = todo[~first], head[~first]
        j = similarity(work, members[rest], members[head], cfg)
        if cfg.verify == "signature":
            low, high = cfg.exact_band()
            near = np.flatnonzero((j >= low) & (j < high))
            if near.size:  # the estimate cannot decide: exact Jaccard does (texts read again)
                j[near] = _exact_jaccard(work, members[rest[near]], members[head[near]], cfg)
                exact[rest[near]] = True
        close = np.ones(rest.size, dtype=bool) if cfg.verify == "none" else j >= cfg.threshold
        close &= members[rest] >= work.protected
        keeper[rest[close]], sim[rest[close]] = members[head[close]], j[close]
        todo = rest[~close]
    return members, keeper, sim, exact


HIST_BINS = 20  # the manifest's histogram of removed-vs-kept similarity: bins of 0.05, plus 1.0 alone


def similarity_summary(j: np.ndarray, cfg: DedupConfig) -> dict[str, Any]:
    """The similarity of each removed document to the document kept for it (as decided: estimated, or
    exact where `assign` took it), summarised for audit:
    quantiles, a histogram (lower bin edge → documents; "1.00" is exactly 1) and how many are below
    the threshold (none unless `verify: none`)."""
    measure = {"exact": "exact", "signature": "estimate, exact near the threshold"}.get(
        cfg.verify, "estimate"
    )
    if not j.size:
        return {"measure": measure, "count": 0, "histogram": {}, "below_threshold": 0}
    q = np.quantile(j, [0.01, 0.05, 0.5])
    bins = np.bincount(
        np.minimum(np.floor(j * HIST_BINS + 1e-9).astype(np.int64), HIST_BINS), minlength=HIST_BINS + 1
    )
    return {
        "measure": measure,
        "count": int(j.size),
        "min": float(j.min()),
        "p1": float(q[0]),
        "p5": float(q[1]),
        "p50": float(q[2]),
        "mean": float(j.mean()),
        "histogram": {f"{b / HIST_BINS:.2f}": int(n) for b, n in enumerate(bins.tolist()) if n},
        "below_threshold": int(np.count_nonzero(j < cfg.threshold)),
    }


# ---------------------------------------------------------------------------- 4. write out


def _ids(work: Work, k: int) -> pa.ChunkedArray:
    return dataset.open_parquet(work.shards[k]).read(columns=["id"]).column("id")


def write_shard(work: Work, k: int, dup_file: str | None, out: str, store: bool = True) -> dict[str, Any]:
    """Shard `k` without its duplicates, plus its part of removed.parquet, and (`store`) the
    signatures, band keys and lengths of the documents it keeps, for a later ``--against``. `dup_file`
    holds this shard's duplicates only (DUP_DTYPE): a task gets a path, never a corpus-sized mapping (an
    executor copies every parameter of every task). The ids of the kept documents are read from
    their shards' id columns."""
    j_out = k - len(work.prior)  # the output shard: earlier outputs' shards come first in `work`
    marker = work.path("done", k, "json")
    target = fs.join(out, dataset.shard_name(j_out))
    removed_path = work.path("removed", k, "parquet")
    if fs.exists(marker) and fs.exists(target) and fs.exists(removed_path):
        return json.loads(fs.read_text(marker))
    table = dataset.open_parquet(work.shards[k]).read(columns=dataset.DOC_SCHEMA.names)
    keep = np.ones(table.num_rows, dtype=bool)
    if dup_file is not None:
        dups = fs.load_npy(dup_file)
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
            arr = fs.load_npy(work.path(kind, k), mmap=True)
            fs.save_npy(
                stored.path(out, kind, j_out),
                np.ascontiguousarray(arr[:, kept] if kind == "keys" else arr[kept]),
            )
    dataset.write_table(removed_path, removed)
    written = dataset.write_table(target, table).to_json()
    written["sources"] = dataset.value_counts(table.column("source"))
    written["removed_sources"] = dataset.value_counts(removed.column("source"))
    fs.atomic_write(marker, json.dumps(written))
    return written


def _examples(
    work: Work, examples: list[tuple[int, list[int]]], cfg: DedupConfig
) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """(size, [(id, text, why) of the kept document, then up to three duplicates]) per example
    cluster; `why` is what `keep` compared (the source's priority, the score, the length)."""
    wanted = np.array(sorted({g for _, members in examples for g in members}), dtype=np.int64)
    found: dict[int, tuple[str, str, str]] = {}
    shard, row = work.locate(wanted)
    for k in np.unique(shard).tolist():
        sel = shard == k
        t = (
            dataset.open_parquet(work.shards[k])
            .read(columns=["id", "text", "source", "meta"])
            .take(pa.array(row[sel]))
        )
        for g, doc in zip(wanted[sel].tolist(), t.to_pylist(), strict=True):
            found[g] = (doc["id"], doc["text"], kept_because(doc, cfg))
    return [(size, [found[g] for g in members]) for size, members in examples]


# ---------------------------------------------------------------------------------- stage


def run_dedup(
    inp: str, out: str, cfg: DedupConfig, *, mapper: Mapper | None = None, force: bool = False
) -> DedupResult:
    mapper = mapper or serial_map
    m_in = input_dataset(inp)
    check_priority(m_in, cfg)
    bands, rows = bands_rows(cfg)
    minhash_settings = stored.settings_of(
        cfg, bands, rows, str(minhash.Permutations.from_seed(cfg.num_perm, cfg.seed).dtype)
    )
    priors = stored.load_priors(cfg.against, inp, out, minhash_settings)
    settings = executor.settings(cfg)
    fp = executor.fingerprint(
        [s.sha256 for s in m_in.shards],
        settings,
        bands,
        rows,
        ALGORITHM,
        [(p.out, p.fingerprint) for p in priors],
    )
    if (done := dataset.open_output(out, fp, force, DedupManifest)) is not None:
        return done
    # Earlier outputs' shards first: their documents come first in corpus order and are never removed.
    prior = tuple((p.out, j) for p in priors for j in range(len(p.shards)))
    shards = [*(s for p in priors for s in p.shards), *(fs.join(inp, s.name) for s in m_in.shards)]
    sizes = [*(r for p in priors for r in p.rows), *(s.rows for s in m_in.shards)]
    offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    n_docs = int(offsets[-1])
    protected = int(offsets[len(prior)])
    work = Work(
        tuple(shards), tuple(int(x) for x in offsets[:-1]), bands, rows, fs.join(out, WORK, fp),
        partitions_for(n_docs), cfg.band_sets, prior, protected,
    )  # fmt: skip

    counts = mapper("dedup-signatures", signature_shard, [(work, k, cfg) for k in work.new_shards])
    if sum(counts) != n_docs - protected:
        raise InputError(
            f"{inp}: the shards hold {sum(counts)} documents, its manifest says {n_docs - protected}"
        )
    edge_files = mapper(
        "dedup-band",
        band_pairs,
        [(work, b, p, cfg) for b in range(work.sets * bands) for p in range(work.partitions)],
    )
    found = cluster(work, edge_files, n_docs, cfg)
    dup_files: dict[int, str] = found["dup_files"]
    written = mapper(
        "dedup-write",
        write_shard,
        [(work, k, dup_files.get(k), out, cfg.store_signatures) for k in work.new_shards],
    )
    failpoint("dedup:shards-written")
    manifest = finalize(
        out,
        inp,
        m_in,
        work,
        written,
        found["stats"],
        _examples(work, found["examples"], cfg),
        cfg,
        fp,
        priors,
    )
    if cfg.store_signatures:
        stored.write_index(out, minhash_settings, [s.sha256 for s in manifest.shards])
    fs.rm(fs.join(out, WORK), recursive=True)
    return DedupResult(out, skipped=False, manifest=manifest)


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    work: Work,
    written: Sequence[dict[str, Any]],
    stats: dict[str, Any],
    examples: list[tuple[int, list[tuple[str, str, str]]]],
    cfg: DedupConfig,
    fp: str,
    priors: Sequence[stored.Prior] = (),
) -> DedupManifest:
    removed = dataset.merge_removed(out, [work.path("removed", k, "parquet") for k in work.new_shards])
    kept: Counter[str] = Counter()
    gone: Counter[str] = Counter()
    for w in written:
        kept.update(w["sources"])
        gone.update(w["removed_sources"])
    per_source = {
        src: SourceStats(
            documents_in=kept[src] + gone[src],
            kept=kept[src],
            removed={"near_dup": gone[src]} if gone[src] else {},
        )
        for src in sorted(set(kept) | set(gone))
    }
    shards = [ShardEntry.model_validate(w) for w in written]  # without the per-source counts of the markers
    n_in = sum(s.rows for s in m_in.shards)
    if sum(s.rows for s in shards) + removed.rows != n_in:
        raise InputError("internal accounting error: kept + removed differs from the input")
    curve = lsh.s_curve(work.bands, work.rows, sets=work.sets)
    manifest = DedupManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=cfg.model_dump(mode="json"),
        inputs=DedupInputs(
            dataset=inp,
            fingerprint=m_in.fingerprint,
            shards=[s.sha256 for s in m_in.shards],
            against=[DatasetInputs(dataset=p.out, fingerprint=p.fingerprint) for p in priors] or None,
        ),
        shards=shards,
        removed=removed.entry(),
        lsh=LshSummary(
            bands=work.bands,
            rows=work.rows,
            band_sets=work.sets,
            **lsh.curve_summary(work.bands, work.rows, cfg.threshold, work.sets),
            s_curve=curve,
        ),
        stats=DedupStats(
            documents_in=n_in,
            documents_out=n_in - removed.rows,
            documents_removed=removed.rows,
            per_source=per_source,
            clusters=ClusterStats.model_validate(stats),
        ),
    )
    lsh.plot_s_curve(work.bands, work.rows, cfg.threshold, fs.join(out, "s_curve.svg"), work.sets)
    fs.atomic_write(fs.join(out, "clusters.md"), cluster_examples(examples, KEEP_RULE[cfg.keep]))
    dataset.write_manifest(out, manifest)
    return manifest
