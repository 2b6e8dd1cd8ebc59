"""The dedup stage: fuzzy near-duplicate removal with MinHash LSH, as external-memory steps over files.

1. `signatures.signature_group` per group of consecutive input shards (`signatures.group_size`: up
   to MAX_GROUP, while every worker still gets several tasks), `signature_shard` for each, one row
   group at a time: shingles → MinHash signatures (n × num_perm, uint32 for the default scheme) and one
   LSH key per band of every band set (`lsh.band_positions`: further sets cut the same values in other
   orders); then the group's keys, one file per band and key partition, so a band task opens one file
   per group, not per shard (30 K shards of a 1 TB corpus are some 470 groups: an object store's GETs
   per band task).
2. `bands.band_pairs` per (band, key partition): the partition's keys of the whole corpus, sorted;
   documents sharing a key are candidates, verified on the full signatures (memory-mapped, in chunks)
   or on exact shingle Jaccard. Partitions split a band by key value so a task fits
   `Budget.task_memory`.
3. `clusters.cluster`, in tasks over files: connected components of the verified pairs (`components`:
   per-file union-find, then large-star / small-star steps, each task holding one part of the
   documents); then per group of components `clusters.assign` decides per document: the first of a
   component in corpus order (or the copy `keep` prefers) is kept, the members whose similarity to it
   (estimated on signatures, or exact) is at least the threshold are its duplicates, and the rest
   repeat the same on their own. So a removed document is always within the threshold of the copy
   kept for it, however loose the links that joined the component. Each group writes its duplicates
   sorted by shard and row (row, kept shard and row, cluster, size, similarity).
4. `write.write_shard` per input shard: the shard without its duplicates; `finalize` writes
   removed.parquet (``dup_of:<kept id>``, with the cluster) and the manifest (cluster sizes, bands ×
   rows, S-curve).

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

from selene.dedup import bands, clusters, lsh, minhash, signatures, stored, write
from selene.dedup.cluster_examples import cluster_examples
from selene.dedup.config import DedupConfig
from selene.dedup.incremental import index_keys, removed_index, store_links
from selene.dedup.keep import KEEP_RULE, check_priority, check_score_key, kept_because, without_score
from selene.dedup.manifest import ClusterStats, DedupInputs, DedupManifest, DedupStats, LshSummary
from selene.dedup.work import Work
from selene.errors import InputError
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DatasetInputs, DocumentManifest, SourceStats

WORK = dataset.WORK
# in the fingerprint: outputs and work files of an older decision rule are never taken as done
# (2: each removed document checked against the document kept for it, not only linked to it)
ALGORITHM = 2


DedupResult = StageResult[DedupManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "deduplicate")


def bands_rows(cfg: DedupConfig) -> tuple[int, int]:
    if cfg.bands is not None and cfg.rows is not None:
        return cfg.bands, cfg.rows
    return lsh.choose_bands_rows(cfg.threshold, cfg.num_perm, cfg.false_positive_weight)


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


def run_dedup(
    inp: str, out: str, cfg: DedupConfig, *, mapper: Mapper | None = None, force: bool = False
) -> DedupResult:
    mapper = mapper or serial_map
    m_in = input_dataset(inp)
    check_priority(m_in, cfg)
    check_score_key(inp, m_in, cfg)
    n_bands, rows = bands_rows(cfg)
    minhash_settings = stored.settings_of(
        cfg, n_bands, rows, str(minhash.Permutations.from_seed(cfg.num_perm, cfg.seed).dtype)
    )
    priors = stored.load_priors(cfg.against, inp, out, minhash_settings)
    settings = fingerprints.settings(cfg)
    fp = fingerprints.of(
        [s.sha256 for s in m_in.shards],
        settings,
        n_bands,
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
        bands=n_bands,
        rows=rows,
        root=fs.join(out, WORK, fp),
        partitions=bands.partitions_for(n_docs - protected, mapper.budget),
        sets=cfg.band_sets,
        prior=prior,
        protected=protected,
        indexes=indexes,
    )
    work = replace(work, group=signatures.group_size(work, sizes[len(prior) :], mapper.budget))

    counts = mapper("dedup-signatures", signatures.signature_group, [(work, i, cfg) for i in work.groups])
    if (read := sum(c.documents for c in counts)) != n_docs - protected:
        raise InputError(f"{inp}: the shards hold {read} documents, its manifest says {n_docs - protected}")
    no_score = without_score([work.path("rank", k) for k in work.new_shards], cfg)
    edges = mapper(
        "dedup-band",
        bands.band_pairs,
        [(work, b, p, cfg) for b in range(work.sets * work.bands) for p in range(work.partitions)],
    )
    found = clusters.cluster(mapper, work, edges, n_docs, cfg, priors)
    written = mapper(
        "dedup-write",
        write.write_shard,
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
                for b in range(work.sets * work.bands)
                for p in range(work.partitions)
            ],
        )
        mapper(
            "dedup-store-links",
            store_links,
            [
                (work, b, p, removed_file, out)
                for b in range(work.sets * work.bands)
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
    written: Sequence[write.WrittenShard],
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
