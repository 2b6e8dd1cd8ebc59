"""The blend stage: a document dataset → the training mix, sampled per source and globally shuffled.

1-2. `count`: documents, bytes (and with a tokenizer, a token sample) per source and input shard.
3. `sampling`: epochs per source from the weights and epochs, the last, partial pass of each chosen by
   tokens, the number of shuffle buckets (checked against the memory budget before any work).
4. `scatter`: each input shard's sampled (document, pass) rows to one file ordered by bucket;
   documents sampled 0 times go to removed.parquet (``blend:not_sampled``) for audit.
5-6. `shuffle`: each bucket in key order as work parts, then `publish` numbers them
   ``part-NNNNN.parquet`` in bucket order, then part order. The numbering is a function of the data
   and config alone: the same seed gives byte-identical output whatever the number of workers. A run
   killed while publishing resumes: a part whose work file is gone was already renamed (its final file
   has the recorded size), since a new run into the same directory first deletes the work files of
   any other configuration.

Memory is one input shard (steps 1-4) or one bucket plus one row group (step 5); the main process holds
per-shard and per-bucket counts, never per-document data. Work files live under
``OUT/_work/<fingerprint>/`` with each step's typed result (`selene.io.steps`); the manifest (with the
plan and realised shares also written as ``blend.json``) is written last.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from selene.blend import count, mix, sampling, scatter, shuffle
from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendInputs, BlendManifest
from selene.blend.scatter import REASON
from selene.blend.summary import Sampled, per_source_stats, summarize
from selene.errors import InputError
from selene.executor.mappers import Mapper, serial_map
from selene.io import dataset, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DocumentManifest, ShardEntry, Stats

WORK = dataset.WORK
BLEND_JSON = "blend.json"
PARTIAL_BY = "partial-pass:tokens"
"""In the fingerprint: outputs of a selene that chose partial passes by document count are not reused."""


BlendResult = StageResult[BlendManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "blend")


def run_blend(
    inp: str, out: str, cfg: BlendConfig, *, mapper: Mapper | None = None, force: bool = False
) -> BlendResult:
    mapper = mapper or serial_map
    mix.check_config(cfg)
    m_in = input_dataset(inp)
    settings = fingerprints.settings(cfg, "max_epochs")  # a limit: it changes whether a run goes, not its output
    fp = fingerprints.of([s.sha256 for s in m_in.shards], settings, count.tokenizer_digest(cfg), PARTIAL_BY)
    if (done := dataset.open_output(out, fp, force, BlendManifest)) is not None:
        if done.manifest is not None:  # the limit holds for a finished blend too
            b = done.manifest.blend.sources
            mix.check_max_epochs(
                {
                    s: mix.SourceSize(v.documents, v.bytes, v.tokens, v.tokens_method, v.tokens_per_byte)
                    for s, v in b.items()
                },
                {s: v.epochs for s, v in b.items()},
                cfg,
            )
        return done
    root = fs.join(out, WORK, fp)
    for other in fs.ls(fs.join(out, WORK)):  # a killed run of another config: its parts are not ours
        if other.rstrip("/").rsplit("/", 1)[-1] != fp:
            fs.rm(other, recursive=True)
    # a mix refused once the sources are counted (a source it lacks, too many epochs, buckets too
    # big for the memory) leaves no work folder this run made in an output that existed before
    with fs.undone_on_refusal(fs.join(out, WORK)), fs.undone_on_refusal(root):
        return _blend(inp, out, m_in, root, cfg, fp, mapper)


def _blend(
    inp: str, out: str, m_in: DocumentManifest, root: str, cfg: BlendConfig, fp: str, mapper: Mapper
) -> BlendResult:
    """Count, plan, sample, scatter and shuffle into `out`, with work files under `root`."""
    shards = [fs.join(inp, s.name) for s in m_in.shards]

    scans = mapper("blend-scan", count.scan_shard, [(root, k, p) for k, p in enumerate(shards)])
    sources = sorted({s for sc in scans for s in sc.sources})
    no = count.SourceCount(0, 0)
    per_shard = {s: [sc.sources.get(s, no).documents for sc in scans] for s in sources}
    totals = {s: (sum(per_shard[s]), sum(sc.sources.get(s, no).bytes for sc in scans)) for s in sources}
    if sum(d for d, _ in totals.values()) != sum(s.rows for s in m_in.shards):
        raise InputError(f"{inp}: the documents in its shards differ from the counts in its manifest")
    mix.check_sources(cfg, sources)
    samples = count.token_samples(root, shards, per_shard, cfg, mapper) if cfg.tokenizer else None
    chosen = sampling.choose(root, scans, totals, samples, cfg, mapper)
    buckets = chosen.buckets
    scattered = mapper(
        "blend-scatter",
        scatter.scatter_shard,
        [(root, k, p, chosen.spec(k, per_shard), buckets, cfg) for k, p in enumerate(shards)],
    )

    # shards × buckets counts: small next to the corpus (thousands × hundreds of integers)
    counts = np.array([r.buckets for r in scattered], dtype=np.int64).reshape(len(shards), buckets)
    held = np.array([r.bucket_bytes for r in scattered], dtype=np.int64).reshape(len(shards), buckets)
    shuffle.check_bucket_memory(int(held.sum(axis=0).max()), buckets, cfg, mapper.budget)
    filled = [b for b in range(buckets) if counts[:, b].any()]
    groups = [r.groups for r in scattered]
    jobs = [
        (root, b, [(k, groups[k][b], groups[k][b + 1]) for k in np.flatnonzero(counts[:, b]).tolist()],
         cfg.shard_bytes, cfg.shard_docs)
        for b in filled
    ]  # fmt: skip
    written = shuffle.publish(out, root, mapper("blend-shuffle", shuffle.shuffle_bucket, jobs))
    return finalize(out, inp, m_in, root, scattered, written, chosen, cfg, fp)


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    root: str,
    scattered: Sequence[scatter.Scattered],
    written: list[ShardEntry],
    chosen: sampling.Sampling,
    cfg: BlendConfig,
    fp: str,
) -> BlendResult:
    """removed.parquet, the accounting (every input document sampled or not, every sampled row
    written), ``blend.json`` and the manifest, written last."""
    sizes = chosen.sizes
    sampled = {s: Sampled() for s in sizes}
    for r in scattered:
        for src, c in r.sources.items():
            sampled[src] += c
    n_in = sum(s.rows for s in m_in.shards)
    n_out = sum(w.rows for w in written)
    blend = summarize(sizes, chosen.epochs, sampled, cfg, chosen.buckets)

    def balance(removed: dataset.WrittenFile) -> dict[str, tuple[int, int]]:
        return {
            **{f"{s} documents sampled or not": (sampled[s].documents, sizes[s].documents) for s in sizes},
            "rows written vs sampled": (n_out, sum(c.rows for c in sampled.values())),
            "not sampled vs input - sampled": (removed.rows, n_in - sum(c.kept for c in sampled.values())),
        }

    def manifest(removed: dataset.WrittenFile) -> BlendManifest:
        names = {w.name for w in written}
        for path in fs.ls(out):  # parts of an earlier, larger blend into the same directory
            name = path.rstrip("/").rsplit("/", 1)[-1]
            if name.startswith("part-") and name.endswith(".parquet") and name not in names:
                fs.rm(path)
        fs.atomic_write(fs.join(out, BLEND_JSON), json.dumps(blend.to_json(), indent=2) + "\n")
        return BlendManifest(
            **steps.header(fp, cfg, written, removed.entry()),
            inputs=BlendInputs(
                dataset=inp,
                fingerprint=m_in.fingerprint,
                shards=[s.sha256 for s in m_in.shards],
                tokenizer=cfg.tokenizer,
            ),
            blend=blend,
            stats=Stats(
                documents_in=n_in,
                documents_out=n_out,
                documents_removed=removed.rows,
                per_source=per_source_stats(sampled, REASON),
            ),
        )

    removed_parts = [scatter.removed_path(root, k) for k in range(len(scattered))]
    return steps.finish_documents(out, "blend", removed_parts, balance, manifest)


def manifest_warnings(manifest: BlendManifest) -> list[str]:
    """The plan's warnings (`mix.warnings`), again, from a finished blend's manifest."""
    cfg = BlendConfig.model_validate(manifest.config)
    b = manifest.blend.sources
    return mix.warnings({s: v.documents for s, v in b.items()}, {s: v.epochs for s, v in b.items()}, cfg)
