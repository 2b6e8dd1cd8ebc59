"""The dedup stage: fuzzy near-duplicate removal with MinHash LSH, through files.

1. `signature_shard` per input shard: shingles → MinHash signatures (n × num_perm) and one LSH key
   per band (n × bands), written as .npy files.
2. `band_pairs` per band: that band's keys of the whole corpus, sorted; documents sharing a key are
   candidates, verified on the full signatures (or exact shingle Jaccard). Memory: one band column.
3. `cluster`: union-find over the verified pairs; the kept document of each cluster is the first in
   corpus order (or the longest); every other one is a duplicate of it.
4. `write_shard` per input shard: the shard without its duplicates; `finalize` writes removed.parquet
   (``dup_of:<kept id>``, with the cluster) and the manifest (cluster sizes, bands × rows, S-curve).

Work files live under ``OUT/_work/<fingerprint>/``; the fingerprint covers the input dataset and
every setting that changes the result, so a changed parameter never reuses stale files.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from selene import __version__, executor
from selene.config import DedupConfig
from selene.dedup import lsh, minhash, shingle
from selene.dedup.report import cluster_examples
from selene.errors import InputError
from selene.executor import Mapper, serial_map
from selene.faults import failpoint
from selene.ingest import exact_dedup
from selene.io import dataset, fs
from selene.manifest import (
    ClusterStats,
    DedupInputs,
    DedupManifest,
    DedupStats,
    DocumentManifest,
    LshSummary,
    ShardEntry,
    SourceStats,
)

WORK = dataset.WORK
EDGE_DTYPE = np.dtype([("a", "<i8"), ("b", "<i8"), ("j", "<f4")])
SIG_BATCH = 1024


DedupResult = dataset.StageResult[DedupManifest]


@dataclass(frozen=True)
class Plan:
    """What every task needs to know: input shards, their row offsets, LSH shape, work root."""

    shards: tuple[str, ...]
    offsets: tuple[int, ...]  # global index of each shard's first row
    bands: int
    rows: int
    root: str

    def path(self, kind: str, i: int, ext: str = "npy") -> str:
        return fs.join(self.root, kind, f"{i:05d}.{ext}")

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


def _save(path: str, array: np.ndarray) -> None:
    with fs.atomic_open(path) as f:
        np.save(f, array)


def _load(path: str) -> np.ndarray:
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        return np.load(fh)


# ---------------------------------------------------------------------------- 1. signatures


def signature_shard(plan: Plan, k: int, cfg: DedupConfig) -> int:
    """Signatures and band keys of shard `k`; returns its number of documents."""
    sig_path, key_path, len_path = plan.path("sig", k), plan.path("keys", k), plan.path("len", k)
    if fs.exists(len_path):
        return int(_load(len_path).size)
    perms = minhash.Permutations.from_seed(cfg.num_perm, cfg.seed)
    sigs, lengths, empty = [], [], []
    pf = dataset.open_parquet(plan.shards[k])
    for batch in pf.iter_batches(batch_size=SIG_BATCH, columns=["text"]):
        texts = batch.column(0).to_pylist()
        hashes = [shingle.shingle_hashes(t, cfg.ngram, cfg.shingle) for t in texts]
        sigs.append(minhash.signatures(hashes, perms))
        lengths.append(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)))
        empty.append(np.fromiter((h.size == 0 for h in hashes), dtype=bool, count=len(texts)))
    sig = np.concatenate(sigs) if sigs else np.empty((0, cfg.num_perm), dtype=np.uint64)
    keys = lsh.band_keys(sig, plan.bands, plan.rows)
    # documents without a single shingle get no LSH key: they would all collide with each other
    no_shingle = np.concatenate(empty) if empty else np.empty(0, dtype=bool)
    keys[no_shingle] = 0
    _save(sig_path, sig)
    _save(key_path, keys)
    _save(len_path, np.concatenate(lengths) if lengths else np.empty(0, dtype=np.int64))
    return int(sig.shape[0])


# -------------------------------------------------------------------------------- 2. bands


def band_pairs(plan: Plan, band: int, cfg: DedupConfig) -> str:
    """Candidate pairs of one band (documents sharing its key), verified; written as EDGE_DTYPE."""
    out = plan.path("edges", band)
    if fs.exists(out):
        return out
    keys, gidx = [], []
    for k in range(len(plan.shards)):
        col = np.ascontiguousarray(_load(plan.path("keys", k))[:, band])
        live = np.nonzero(col)[0]
        keys.append(col[live])
        gidx.append(live + plan.offsets[k])
    key = np.concatenate(keys)
    idx = np.concatenate(gidx)
    order = np.lexsort((idx, key))
    key, idx = key[order], idx[order]
    same = key[1:] == key[:-1] if key.size else np.empty(0, dtype=bool)
    run_start = np.maximum.accumulate(np.where(np.concatenate([[True], ~same]), np.arange(key.size), 0))
    member = np.concatenate([[False], same]) if key.size else np.empty(0, dtype=bool)
    # a star from the first document of each run: the same clusters as all pairs, linear in size
    a, b = idx[run_start[member]], idx[member]
    edges = np.empty(a.size, dtype=EDGE_DTYPE)
    edges["a"], edges["b"] = a, b
    edges["j"] = verify(plan, a, b, cfg)
    if cfg.verify != "none":
        edges = edges[edges["j"] >= cfg.threshold]
    _save(out, edges)
    return out


def verify(plan: Plan, a: np.ndarray, b: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    """Similarity of candidate pairs: estimated from signatures, or exact on shingles."""
    if a.size == 0:
        return np.empty(0, dtype=np.float32)
    if cfg.verify == "exact":
        return _exact_jaccard(plan, a, b, cfg)
    return minhash.jaccard_estimates(_rows(plan, "sig", a), _rows(plan, "sig", b)).astype(np.float32)


def _rows(plan: Plan, kind: str, gidx: np.ndarray) -> np.ndarray:
    shard, row = plan.locate(gidx)
    out: np.ndarray | None = None
    for k in np.unique(shard):
        sel = shard == k
        part = _load(plan.path(kind, int(k)))[row[sel]]
        if out is None:
            out = np.empty((gidx.size, *part.shape[1:]), dtype=part.dtype)
        out[sel] = part
    assert out is not None
    return out


def _texts(plan: Plan, gidx: np.ndarray) -> dict[int, str]:
    shard, row = plan.locate(np.unique(gidx))
    out: dict[int, str] = {}
    for k in np.unique(shard):
        sel = shard == k
        col = dataset.open_parquet(plan.shards[int(k)]).read(columns=["text"]).column("text")
        for g, t in zip(np.unique(gidx)[sel], col.take(pa.array(row[sel])).to_pylist(), strict=True):
            out[int(g)] = t
    return out


def _exact_jaccard(plan: Plan, a: np.ndarray, b: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    texts = _texts(plan, np.concatenate([a, b]))
    cache: dict[int, np.ndarray] = {}

    def sh(g: int) -> np.ndarray:
        if g not in cache:
            cache[g] = shingle.shingle_hashes(texts[g], cfg.ngram, cfg.shingle)
        return cache[g]

    out = np.empty(a.size, dtype=np.float32)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        sx, sy = sh(x), sh(y)
        inter = np.intersect1d(sx, sy, assume_unique=True).size
        union = sx.size + sy.size - inter
        out[i] = inter / union if union else 1.0
    return out


# ------------------------------------------------------------------------------ 3. clusters


def cluster(plan: Plan, edge_files: Sequence[str], n_docs: int, keep: str) -> dict[str, Any]:
    """Union-find over the verified pairs; writes the duplicates (exact_dedup.DUP_DTYPE) and
    per-duplicate cluster ids; returns cluster statistics."""
    edges = np.concatenate([_load(p) for p in edge_files]) if edge_files else np.empty(0, dtype=EDGE_DTYPE)
    parent = np.arange(n_docs, dtype=np.int64)

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = int(parent[root])
        while parent[x] != root:  # path compression
            parent[x], x = root, int(parent[x])
        return root

    for x, y in zip(edges["a"].tolist(), edges["b"].tolist(), strict=True):
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)  # the root is the smallest index: deterministic
    while not np.array_equal(parent[parent], parent):  # pointer jumping: every node to its root
        parent = parent[parent]
    roots = parent
    sizes = np.bincount(roots, minlength=n_docs)
    in_cluster = np.nonzero(sizes[roots] > 1)[0]
    kept = roots[in_cluster]  # the root is the first document of its cluster in corpus order
    if keep == "longest" and in_cluster.size:
        lengths = _rows_1d(plan, in_cluster)
        # per cluster the longest document; ties keep the earlier one
        order = np.lexsort((in_cluster, -lengths, roots[in_cluster]))
        r_sorted = roots[in_cluster][order]
        first = np.concatenate([[True], r_sorted[1:] != r_sorted[:-1]])
        best = np.empty(n_docs, dtype=np.int64)
        best[r_sorted[first]] = in_cluster[order][first]
        kept = best[roots[in_cluster]]
    dup = in_cluster[in_cluster != kept]
    kept_of_dup = kept[in_cluster != kept]
    s_dup, r_dup = plan.locate(dup)
    s_kept, r_kept = plan.locate(kept_of_dup)
    dups = np.empty(dup.size, dtype=exact_dedup.DUP_DTYPE)
    dups["file"], dups["row"], dups["kept_file"], dups["kept_row"] = s_dup, r_dup, s_kept, r_kept
    _save(fs.join(plan.root, "dups.npy"), dups)
    _save(fs.join(plan.root, "cluster_of_dup.npy"), np.stack([dup, roots[dup], sizes[roots[dup]]], axis=1))
    hist = Counter(sizes[sizes > 1].tolist())
    return {
        "pairs_verified": int(edges.size),
        "clusters": int((sizes > 1).sum()),
        "documents_in_clusters": int(in_cluster.size),
        "duplicates": int(dup.size),
        "cluster_sizes": {str(k): int(v) for k, v in sorted(hist.items())},
        "largest_cluster": int(sizes.max()) if n_docs else 0,
    }


def _rows_1d(plan: Plan, gidx: np.ndarray) -> np.ndarray:
    shard, row = plan.locate(gidx)
    out = np.empty(gidx.size, dtype=np.int64)
    for k in np.unique(shard):
        sel = shard == k
        out[sel] = _load(plan.path("len", int(k)))[row[sel]]
    return out


# ---------------------------------------------------------------------------- 4. write out


def write_shard(plan: Plan, k: int, dup_file: str | None, out: str, clusters: str) -> dict[str, Any]:
    """Shard `k` without its duplicates, plus its part of removed.parquet. `clusters` is the file of
    (global index, cluster id, cluster size) per duplicate, sorted by index: a task gets its path, not
    a corpus-sized mapping (an executor copies every parameter of every task)."""
    marker = plan.path("done", k, "json")
    target = fs.join(out, dataset.shard_name(k))
    removed_path = plan.path("removed", k, "parquet")
    if fs.exists(marker) and fs.exists(target) and fs.exists(removed_path):
        return json.loads(fs.read_text(marker))
    table = dataset.open_parquet(plan.shards[k]).read(columns=dataset.DOC_SCHEMA.names)
    if dup_file is not None:
        dups = dataset.open_parquet(dup_file).read()
        rows = dups.column("row").to_numpy().astype(np.int64)
        keep = np.ones(table.num_rows, dtype=bool)
        keep[rows] = False
        gone = table.take(pa.array(rows))
        details = _cluster_details(clusters, plan.offsets[k] + rows)
        removed = pa.table(
            {
                "id": gone.column("id"),
                "source": gone.column("source"),
                "reason": [f"dup_of:{x}" for x in dups.column("kept_id").to_pylist()],
                "detail": details,
            },
            schema=dataset.REMOVED_SCHEMA,
        )
        table = table.filter(pa.array(keep))
    else:
        removed = dataset.REMOVED_SCHEMA.empty_table()
    dataset.write_table(removed_path, removed)
    written = dataset.write_table(target, table).to_json()
    written["sources"] = dict(Counter(table.column("source").to_pylist()))
    written["removed_sources"] = dict(Counter(removed.column("source").to_pylist()))
    fs.atomic_write(marker, json.dumps(written))
    return written


def _cluster_details(clusters: str, index: np.ndarray) -> list[str]:
    """``cluster=<id> size=<n>`` for each global document index (``cluster=-1 size=0`` if absent)."""
    info = _load(clusters).reshape(-1, 3)
    if not len(info):
        return ["cluster=-1 size=0"] * index.size
    pos = np.minimum(np.searchsorted(info[:, 0], index), len(info) - 1)
    found = info[pos, 0] == index
    cid, size = np.where(found, info[pos, 1], -1), np.where(found, info[pos, 2], 0)
    return [f"cluster={c} size={n}" for c, n in zip(cid.tolist(), size.tolist(), strict=True)]


# ---------------------------------------------------------------------------------- stage


def run_dedup(inp: str, out: str, cfg: DedupConfig, *, mapper: Mapper | None = None, force: bool = False) -> DedupResult:
    mapper = mapper or serial_map
    m_in = input_dataset(inp)
    bands, rows = bands_rows(cfg)
    settings = executor.settings(cfg)
    fp = executor.fingerprint([s.sha256 for s in m_in.shards], settings, bands, rows)
    if (done := dataset.open_output(out, fp, force, DedupManifest)) is not None:
        return done
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    offsets = np.concatenate([[0], np.cumsum([s.rows for s in m_in.shards])])
    plan = Plan(tuple(shards), tuple(int(x) for x in offsets[:-1]), bands, rows, fs.join(out, WORK, fp))
    n_docs = int(offsets[-1])

    counts = mapper("dedup-signatures", signature_shard, [(plan, k, cfg) for k in range(len(shards))])
    if sum(counts) != n_docs:
        raise InputError(f"{inp}: the shards hold {sum(counts)} documents, its manifest says {n_docs}")
    edge_files = mapper("dedup-band", band_pairs, [(plan, b, cfg) for b in range(bands)])
    stats = cluster(plan, edge_files, n_docs, cfg.keep)
    dup_files = exact_dedup.resolve([fs.join(plan.root, "dups.npy")], dict(enumerate(shards)), fs.join(plan.root, "dupids"))
    clusters = fs.join(plan.root, "cluster_of_dup.npy")
    written = mapper(
        "dedup-write", write_shard, [(plan, k, dup_files.get(k), out, clusters) for k in range(len(shards))]
    )
    failpoint("dedup:shards-written")
    manifest = finalize(out, inp, m_in, plan, written, stats, cfg, fp)
    fs.rm(fs.join(out, WORK), recursive=True)
    return DedupResult(out, skipped=False, manifest=manifest)


def finalize(
    out: str, inp: str, m_in: DocumentManifest, plan: Plan, written: Sequence[dict[str, Any]],
    stats: dict[str, Any], cfg: DedupConfig, fp: str,
) -> DedupManifest:
    removed = dataset.merge_removed(out, [plan.path("removed", k, "parquet") for k in range(len(plan.shards))])
    kept: Counter[str] = Counter()
    gone: Counter[str] = Counter()
    for w in written:
        kept.update(w["sources"])
        gone.update(w["removed_sources"])
    per_source = {
        src: SourceStats(documents_in=kept[src] + gone[src], kept=kept[src], removed={"near_dup": gone[src]} if gone[src] else {})
        for src in sorted(set(kept) | set(gone))
    }
    shards = [ShardEntry.model_validate(w) for w in written]  # without the per-source counts of the markers
    n_in = sum(s.rows for s in m_in.shards)
    if sum(s.rows for s in shards) + removed.rows != n_in:
        raise InputError("internal accounting error: kept + removed differs from the input")
    curve = lsh.s_curve(plan.bands, plan.rows)
    manifest = DedupManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=cfg.model_dump(mode="json"),
        inputs=DedupInputs(dataset=inp, fingerprint=m_in.fingerprint, shards=[s.sha256 for s in m_in.shards]),
        shards=shards,
        removed=removed.entry(),
        lsh=LshSummary(
            bands=plan.bands, rows=plan.rows, **lsh.curve_summary(plan.bands, plan.rows, cfg.threshold), s_curve=curve
        ),
        stats=DedupStats(
            documents_in=n_in,
            documents_out=n_in - removed.rows,
            documents_removed=removed.rows,
            per_source=per_source,
            clusters=ClusterStats.model_validate(stats),
        ),
    )
    lsh.plot_s_curve(plan.bands, plan.rows, cfg.threshold, fs.join(out, "s_curve.svg"))
    fs.atomic_write(fs.join(out, "clusters.md"), cluster_examples(inp, dataset.read_removed(out)))
    dataset.write_manifest(out, manifest)
    return manifest
