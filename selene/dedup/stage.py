"""The dedup stage: fuzzy near-duplicate removal with MinHash LSH, as external-memory steps over files.

1. `signature_group` per group of consecutive input shards (`group_size`: up to MAX_GROUP, while every
   worker still gets several tasks), `signature_shard` for each, one row group at a time: shingles →
   MinHash signatures (n × num_perm, uint32 for the default scheme) and one LSH key per band of every
   band set (`lsh.band_positions`: further sets cut the same values in other orders); then the group's
   keys, one file per band and key partition, so a band task opens one file per group, not per shard
   (30 K shards of a 1 TB corpus are some 470 groups: an object store's GETs per band task).
2. `band_pairs` per (band, key partition): the partition's keys of the whole corpus, sorted; documents
   sharing a key are candidates, verified on the full signatures (memory-mapped, in chunks) or on
   exact shingle Jaccard. Partitions split a band by key value so a task fits `Budget.task_memory`.
3. `cluster`, in tasks over files: connected components of the verified pairs (`components`:
   per-file union-find, then large-star / small-star steps, each task holding one part of the
   documents); then per group of components `clusters.assign` decides per document: the first of a
   component in corpus order (or the copy `keep` prefers) is kept, the members whose similarity to it
   (estimated on signatures, or exact) is at least the threshold are its duplicates, and the rest
   repeat the same on their own. So a removed document is always within the threshold of the copy
   kept for it, however loose the links that joined the component. Each group writes its duplicates
   sorted by shard and row (row, kept shard and row, cluster, size, similarity).
4. `write_shard` per input shard: the shard without its duplicates; `finalize` writes removed.parquet
   (``dup_of:<kept id>``, with the cluster) and the manifest (cluster sizes, bands × rows, S-curve).

The main process holds no array over documents: per shard its row offset, per task a file name and a
few counts. Tasks hold one shard, one band partition, one part of the graph or one group of components.
Work files live under ``OUT/_work/<fingerprint>/``; the fingerprint covers the input dataset and every
setting that changes the result, so a changed parameter never reuses stale files. Output is the same,
byte for byte, for any number of workers, executor or memory budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene.dedup import batches, clusters, components, lsh, minhash, shingle, stored
from selene.dedup.cluster_examples import cluster_examples
from selene.dedup.config import DedupConfig
from selene.dedup.incremental import earlier_links, index_keys, removed_index, store_links
from selene.dedup.keep import (
    KEEP_RULE,
    check_priority,
    check_score_key,
    keep_rank,
    kept_because,
    without_score,
)
from selene.dedup.manifest import ClusterStats, DedupInputs, DedupManifest, DedupStats, LshSummary
from selene.dedup.work import EDGE_DTYPE, KEY_DTYPE, VERIFY_CHUNK, EdgeFile, Work, similarity
from selene.errors import InputError
from selene.executor.mappers import Budget, Mapper, serial_map
from selene.faults import failpoint, kill_once
from selene.io import dataset, fingerprints, fs, steps
from selene.manifest import DatasetInputs, DocumentManifest, ShardEntry, SourceStats

WORK = dataset.WORK
BAND_BYTES_PER_DOC = 48  # a band task's memory per document of its partition: keys, ids, sort scratch
MAX_GROUP = 64  # shards per signature task at most (a band task opens a file per group)
GROUPS_PER_WORKER = 4  # signature tasks per worker at least, while there are shards enough
SMALL_RUN = 8  # documents sharing a band key are all compared pairwise up to this many
# in the fingerprint: outputs and work files of an older decision rule are never taken as done
# (2: each removed document checked against the document kept for it, not only linked to it)
ALGORITHM = 2


DedupResult = dataset.StageResult[DedupManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "deduplicate")


def bands_rows(cfg: DedupConfig) -> tuple[int, int]:
    if cfg.bands is not None and cfg.rows is not None:
        return cfg.bands, cfg.rows
    return lsh.choose_bands_rows(cfg.threshold, cfg.num_perm, cfg.false_positive_weight)


def partitions_for(n_docs: int, budget: Budget) -> int:
    """Key partitions per band so that a band task fits the budget of one task (`Budget.task_memory`)."""
    need = n_docs * BAND_BYTES_PER_DOC
    return max(1, -(-need // max(1, budget.task_memory // 2)))


# ---------------------------------------------------------------------------- 1. signatures


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
        part = _partition(col[live], work.partitions)
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


# -------------------------------------------------------------------------------- 2. bands


def _partition(keys: np.ndarray, parts: int) -> np.ndarray:
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
        their_part = _partition(wanted, parts)
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


# ------------------------------------------------------------------------------ 3. clusters


def cluster(
    mapper: Mapper,
    work: Work,
    edges: Sequence[EdgeFile],
    n_docs: int,
    cfg: DedupConfig,
    priors: Sequence[stored.Prior] = (),
) -> clusters.Clusters:
    """Components of the verified pairs (`components`: large-star / small-star steps over files), then
    `clusters.cluster_group` per group of components, in tasks; merged into cluster statistics, the
    group files holding each shard's duplicates, and the largest clusters (for clusters.md).
    The main process holds file names and per-group counts only."""
    pairs = sum(e.pairs for e in edges)
    earlier = mapper(
        "dedup-earlier-links",
        earlier_links,
        [
            (work, i, b, p, prior.cross_to(priors))
            for i, (prior, (_, _, parts)) in enumerate(zip(priors, work.indexes, strict=True))
            for b in range(work.sets * work.bands)
            for p in range(parts)
        ],
    )
    linked = pairs + sum(e.pairs for e in earlier)
    n_parts = components.parts_for(linked, mapper.budget)
    graph = components.Graph(fs.join(work.root, "components"), n_parts, n_docs)
    stars = components.components(mapper, graph, [e.path for e in [*edges, *earlier] if e.pairs])
    budget = mapper.budget.task_memory // 4  # a cluster task's texts and shingle sets
    plans = mapper(
        "dedup-cluster-plan", batches.plan_group, [(work, g, s, budget) for g, s in enumerate(stars) if s]
    )
    if cfg.verify != "none":  # the linked documents' texts, read once and grouped by batch
        plans_of: dict[int, list[tuple[int, str]]] = {}
        for plan in plans:
            for k in plan.shards:
                plans_of.setdefault(k, []).append((plan.group, plan.plan))
        mapper("dedup-cluster-texts", batches.route_texts, [(work, k, plans_of[k]) for k in sorted(plans_of)])
    groups = mapper("dedup-clusters", clusters.cluster_group, [(work, plan, cfg, budget) for plan in plans])
    return clusters.merge(groups, pairs, n_docs, cfg)


# ---------------------------------------------------------------------------- 4. write out


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
        t = dataset.take_rows(work.shards[k], row[sel], ["id", "text", "source", "meta"])
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
    check_score_key(inp, m_in, cfg)
    bands, rows = bands_rows(cfg)
    minhash_settings = stored.settings_of(
        cfg, bands, rows, str(minhash.Permutations.from_seed(cfg.num_perm, cfg.seed).dtype)
    )
    priors = stored.load_priors(cfg.against, inp, out, minhash_settings)
    settings = fingerprints.settings(cfg)
    fp = fingerprints.of(
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
    firsts = np.cumsum([0, *(len(p.shards) for p in priors)])
    indexes = tuple((p.out, int(first), p.key_partitions) for p, first in zip(priors, firsts, strict=False))
    # a band task holds this run's keys and the earlier documents that share one (not all of them)
    work = Work(
        shards=tuple(shards),
        offsets=tuple(int(x) for x in offsets[:-1]),
        bands=bands,
        rows=rows,
        root=fs.join(out, WORK, fp),
        partitions=partitions_for(n_docs - protected, mapper.budget),
        sets=cfg.band_sets,
        prior=prior,
        protected=protected,
        indexes=indexes,
    )
    work = replace(work, group=group_size(work, sizes[len(prior) :], mapper.budget))

    counts = mapper("dedup-signatures", signature_group, [(work, i, cfg) for i in work.groups])
    if (read := sum(c.documents for c in counts)) != n_docs - protected:
        raise InputError(f"{inp}: the shards hold {read} documents, its manifest says {n_docs - protected}")
    no_score = without_score([work.path("rank", k) for k in work.new_shards], cfg)
    edges = mapper(
        "dedup-band",
        band_pairs,
        [(work, b, p, cfg) for b in range(work.sets * bands) for p in range(work.partitions)],
    )
    found = cluster(mapper, work, edges, n_docs, cfg, priors)
    written = mapper(
        "dedup-write",
        write_shard,
        [(work, k, found.dup_files.get(k, []), out, cfg.store_signatures) for k in work.new_shards],
    )
    failpoint("dedup:shards-written")
    if cfg.store_signatures:
        (removed_file,) = mapper("dedup-removed-index", removed_index, [(work,)])
        mapper(
            "dedup-key-index",
            index_keys,
            [
                (work, b, p, removed_file, out)
                for b in range(work.sets * bands)
                for p in range(work.partitions)
            ],
        )
        mapper(
            "dedup-store-links",
            store_links,
            [
                (work, b, p, removed_file, out)
                for b in range(work.sets * bands)
                for p in range(work.partitions)
            ],
        )
        # before the manifest, the completion marker: a run killed in between writes it again
        stored.write_index(out, minhash_settings, [w.shard.sha256 for w in written], work.partitions, priors)
    examples = _examples(work, found.examples, cfg)
    return finalize(out, inp, m_in, work, written, found.stats, examples, cfg, fp, priors, no_score)


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    work: Work,
    written: Sequence[WrittenShard],
    found: ClusterStats,
    examples: list[tuple[int, list[tuple[str, str, str]]]],
    cfg: DedupConfig,
    fp: str,
    priors: Sequence[stored.Prior] = (),
    no_score: int | None = None,
) -> DedupResult:
    """The S-curve and clusters.md, then removed.parquet, the accounting and the manifest (last)."""
    kept: Counter[str] = Counter()
    gone: Counter[str] = Counter()
    for w in written:
        kept.update(w.sources)
        gone.update(w.removed_sources)
    per_source = {
        src: SourceStats(
            documents_in=kept[src] + gone[src],
            kept=kept[src],
            removed={"near_dup": gone[src]} if gone[src] else {},
        )
        for src in sorted(set(kept) | set(gone))
    }
    shards = [w.shard for w in written]
    n_out = sum(s.rows for s in shards)
    n_in = sum(s.rows for s in m_in.shards)
    lsh.plot_s_curve(work.bands, work.rows, cfg.threshold, fs.join(out, "s_curve.svg"), work.sets)
    fs.atomic_write(fs.join(out, "clusters.md"), cluster_examples(examples, KEEP_RULE[cfg.keep]))

    def manifest(removed: dataset.WrittenFile) -> DedupManifest:
        return DedupManifest(
            **steps.header(fp, cfg, shards, removed.entry()),
            inputs=DedupInputs(
                dataset=inp,
                fingerprint=m_in.fingerprint,
                shards=[s.sha256 for s in m_in.shards],
                against=[DatasetInputs(dataset=p.out, fingerprint=p.fingerprint) for p in priors] or None,
            ),
            lsh=LshSummary(
                bands=work.bands,
                rows=work.rows,
                band_sets=work.sets,
                **lsh.curve_summary(work.bands, work.rows, cfg.threshold, work.sets),
                s_curve=lsh.s_curve(work.bands, work.rows, sets=work.sets),
            ),
            stats=DedupStats(
                documents_in=n_in,
                documents_out=n_in - removed.rows,
                documents_removed=removed.rows,
                per_source=per_source,
                clusters=found.model_copy(update={"without_score": no_score}),
            ),
        )

    return steps.finish_documents(
        out,
        "dedup",
        [work.path("removed", k, "parquet") for k in work.new_shards],
        balance=lambda removed: {"kept + removed vs input": (n_out + removed.rows, n_in)},
        manifest=manifest,
    )
