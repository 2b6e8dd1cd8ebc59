"""The blend stage: a document dataset → the training mix, sampled per source and globally shuffled.

1. `scan_shard` per input shard: documents and UTF-8 bytes per source (Arrow compute, no Python
   loop per document).
2. `token_shard` (only with a tokenizer) per input shard: encode its part of each source's seeded
   token sample; tokens/byte is extrapolated to the whole source (`plan.source_sizes`).
3. `plan.plan_epochs`: weights and epochs → epochs per source; the partial pass of each source is
   split over the shards (`plan.partial_split`), so no step holds a per-document plan of the corpus.
4. `scatter_shard` per input shard: the shard's sampled (document, pass) rows, each with a seeded
   random bucket and sort key, written to ``scatter/b<bucket>-s<shard>.parquet``; repeats get the id
   ``<id>@<pass>``. Documents sampled 0 times go to removed.parquet (``blend:not_sampled``) for audit:
   they are not dropped data, only not part of this mix.
5. `shuffle_bucket` per bucket: its rows sorted by key, written as ``part-NNNNN.parquet`` of at most
   `shard_docs` rows. Bucket sizes are known from step 4, so each bucket gets its own range of part
   numbers and the global order is bucket order, then part order: the same seed gives byte-identical
   output whatever the number of workers. Memory is one shard (steps 1-4) or one bucket (step 5).

Work files live under ``OUT/_work/<fingerprint>/`` with a completion marker per task; the manifest
(with the plan and realised shares also written as ``blend.json``) is written last.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene import __version__, executor
from selene.blend import plan
from selene.config import BlendConfig
from selene.errors import ConfigError, InputError
from selene.executor import Mapper, serial_map
from selene.io import dataset, fs
from selene.manifest import BlendInputs, BlendManifest, DocumentManifest, ShardEntry, Stats

WORK = dataset.WORK
BLEND_JSON = "blend.json"
REASON = "blend:not_sampled"
KEY = "shuffle_key"
_SP_CACHE: dict[str, Any] = {}


BlendResult = dataset.StageResult[BlendManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "blend")


def _tokenizer_digest(cfg: BlendConfig) -> str | None:
    if cfg.tokenizer is None:
        return None
    if not fs.exists(cfg.tokenizer):
        raise ConfigError(
            f"blend.tokenizer: {cfg.tokenizer!r} does not exist; give a sentencepiece .model, or unset it "
            f"to estimate tokens as bytes / bytes_per_token ({cfg.bytes_per_token})"
        )
    return fs.sha256_file(cfg.tokenizer)


def _tokenizer(path: str) -> Any:
    """The sentencepiece model at `path`, loaded once per process (read through fsspec)."""
    if path not in _SP_CACHE:
        import sentencepiece as spm

        try:
            _SP_CACHE[path] = spm.SentencePieceProcessor(model_proto=fs.read_bytes(path))
        except (RuntimeError, OSError) as e:
            raise ConfigError(f"blend.tokenizer: {path!r} is not a sentencepiece model ({e})") from None
    return _SP_CACHE[path]


def _sources_of(table: pa.Table) -> tuple[list[str], np.ndarray]:
    """The distinct sources of a shard and, per row, the index of its source in that list."""
    enc = table.column("source").combine_chunks().dictionary_encode()
    return enc.dictionary.to_pylist(), enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _byte_lengths(table: pa.Table) -> np.ndarray:
    return pc.binary_length(table.column("text")).to_numpy().astype(np.int64)


def _done(root: str, kind: str, i: int) -> str:
    return fs.join(root, kind, f"{i:05d}.json")


def _finish(marker: str, result: Any) -> Any:
    fs.atomic_write(marker, json.dumps(result))
    return result


# ------------------------------------------------------------------------------- 1-2. sizes


def scan_shard(root: str, k: int, shard: str) -> dict[str, list[int]]:
    """Source → [documents, bytes] of input shard `k`."""
    marker = _done(root, "scan", k)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    out: dict[str, list[int]] = {}
    for batch in dataset.open_parquet(shard).iter_batches(batch_size=8192, columns=["source", "text"]):
        t = pa.table({"source": batch.column(0), "n": pc.binary_length(batch.column(1))})
        agg = t.group_by("source").aggregate([("n", "count"), ("n", "sum")]).to_pydict()
        for src, docs, nbytes in zip(agg["source"], agg["n_count"], agg["n_sum"], strict=True):
            acc = out.setdefault(src, [0, 0])
            acc[0] += int(docs)
            acc[1] += int(nbytes or 0)
    return _finish(marker, dict(sorted(out.items())))


def token_shard(
    root: str, k: int, shard: str, picks: dict[str, int], cfg: BlendConfig
) -> dict[str, list[int]]:
    """Source → [documents, bytes, tokens] of shard `k`'s part of each source's token sample."""
    marker = _done(root, "tokens", k)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    assert cfg.tokenizer is not None
    sp = _tokenizer(cfg.tokenizer)
    table = dataset.open_parquet(shard).read(columns=["source", "text"])
    names, codes = _sources_of(table)
    out: dict[str, list[int]] = {}
    for src, n in sorted(picks.items()):
        rows = np.flatnonzero(codes == names.index(src))
        gen = plan.rng(plan.source_seed(cfg.seed, src, plan.TOKENS, k))
        chosen = rows[np.sort(gen.choice(rows.size, size=n, replace=False))]
        texts = table.column("text").take(pa.array(chosen))
        tokens = sum(len(ids) for ids in sp.encode(texts.to_pylist()))
        out[src] = [int(n), int(pc.sum(pc.binary_length(texts)).as_py() or 0), int(tokens)]
    return _finish(marker, out)


# ----------------------------------------------------------------------------- 4. scatter


def scatter_path(root: str, bucket: int, k: int) -> str:
    return fs.join(root, "scatter", f"b{bucket:05d}-s{k:05d}.parquet")


def scatter_shard(
    root: str, k: int, shard: str, spec: dict[str, tuple[float, int]], cfg: BlendConfig
) -> dict[str, Any]:
    """Shard `k`'s sampled rows into per-bucket files; its unsampled documents into removed rows.

    `spec[source]` is (epochs, documents of this shard in the source's partial pass).
    """
    marker = _done(root, "scatter-done", k)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    table = dataset.open_parquet(shard).read(columns=dataset.DOC_SCHEMA.names)
    names, codes = _sources_of(table)
    nbytes = _byte_lengths(table)
    rows, passes, unsampled = [], [], []
    sources: dict[str, dict[str, int]] = {}
    for src in sorted(names):
        src_rows = np.flatnonzero(codes == names.index(src))
        ep, part = spec.get(src, (0.0, 0))
        pairs = plan.sample_documents(
            src_rows.size, ep, plan.rng(plan.source_seed(cfg.seed, src, plan.SAMPLE, k)), part
        )
        picked = src_rows[pairs[:, 0]]
        rows.append(picked)
        passes.append(pairs[:, 1])
        hit = np.zeros(src_rows.size, dtype=bool)
        hit[pairs[:, 0]] = True
        unsampled.append(src_rows[~hit])
        sources[src] = {
            "in": int(src_rows.size),
            "kept": int(hit.sum()),
            "rows": int(picked.size),
            "bytes": int(nbytes[picked].sum()),
        }
    row = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    pas = np.concatenate(passes) if passes else np.empty(0, dtype=np.int64)
    # one stream per shard: its draws do not depend on how many workers run the other shards
    gen = plan.rng(plan.shard_seed(cfg.seed, plan.SHUFFLE, k))
    bucket = gen.integers(0, cfg.shuffle_buckets, size=row.size)
    key = gen.integers(0, 2**64, size=row.size, dtype=np.uint64)
    counts = np.bincount(bucket, minlength=cfg.shuffle_buckets)
    order = np.argsort(bucket, kind="stable")
    start = 0
    for b, n in enumerate(counts.tolist()):
        idx = order[start : start + n]
        start += n
        if n:
            dataset.write_table(scatter_path(root, b, k), _rows_table(table, row[idx], pas[idx], key[idx]))
    gone = np.sort(np.concatenate(unsampled)) if unsampled else np.empty(0, dtype=np.int64)
    details = pa.array(
        [plan.not_sampled_detail(s, spec.get(s, (0.0, 0))[0], cfg) for s in names], pa.string()
    )
    removed = pa.table(
        {
            "id": table.column("id").take(pa.array(gone)),
            "source": table.column("source").take(pa.array(gone)),
            "reason": pa.array([REASON] * gone.size, pa.string()),
            "detail": details.take(pa.array(codes[gone])),
        },
        schema=dataset.REMOVED_SCHEMA,
    )
    dataset.write_table(fs.join(root, "removed", f"{k:05d}.parquet"), removed)
    return _finish(marker, {"buckets": counts.tolist(), "sources": sources, "removed": int(gone.size)})


def _rows_table(table: pa.Table, rows: np.ndarray, passes: np.ndarray, key: np.ndarray) -> pa.Table:
    """The rows (repeats included) with ids ``<id>`` on pass 0 and ``<id>@<pass>`` after, plus the key."""
    t = table.take(pa.array(rows))
    p = pa.array(passes)
    repeat_id = pc.binary_join_element_wise(t.column("id"), pa.scalar("@"), pc.cast(p, pa.string()), "")
    ids = pc.if_else(pc.equal(p, 0), t.column("id"), repeat_id)
    return t.set_column(0, "id", ids).append_column(KEY, pa.array(key, pa.uint64()))


# ----------------------------------------------------------------------------- 5. shuffle


def shuffle_bucket(
    root: str, b: int, shards: list[int], first_part: int, out: str, shard_docs: int
) -> list[dict[str, Any]]:
    """Bucket `b`'s rows in key order, as parts first_part, first_part + 1 ... of `shard_docs` rows."""
    marker = _done(root, "bucket-done", b)
    if fs.exists(marker):
        written: list[dict[str, Any]] = json.loads(fs.read_text(marker))
        if all(fs.exists(fs.join(out, w["name"])) for w in written):
            return written
    table = pa.concat_tables([dataset.open_parquet(scatter_path(root, b, k)).read() for k in shards])
    # stable: equal keys (p ≈ n²/2^65) keep shard order, so the order is still fully determined
    order = np.argsort(table.column(KEY).to_numpy(), kind="stable")
    table = table.take(pa.array(order)).select(dataset.DOC_SCHEMA.names).cast(dataset.DOC_SCHEMA)
    written = [
        dataset.write_table(
            fs.join(out, dataset.shard_name(first_part + i)), table.slice(start, shard_docs)
        ).to_json()
        for i, start in enumerate(range(0, table.num_rows, shard_docs))
    ]
    return _finish(marker, written)


# ---------------------------------------------------------------------------------- stage


def run_blend(
    inp: str, out: str, cfg: BlendConfig, *, mapper: Mapper | None = None, force: bool = False
) -> BlendResult:
    mapper = mapper or serial_map
    plan.check_config(cfg)
    m_in = input_dataset(inp)
    settings = executor.settings(cfg)
    fp = executor.fingerprint([s.sha256 for s in m_in.shards], settings, _tokenizer_digest(cfg))
    if (done := dataset.open_output(out, fp, force, BlendManifest)) is not None:
        return done
    root = fs.join(out, WORK, fp)
    shards = [fs.join(inp, s.name) for s in m_in.shards]

    scans = mapper("blend-scan", scan_shard, [(root, k, p) for k, p in enumerate(shards)])
    sources = sorted({s for sc in scans for s in sc})
    per_shard = {s: [sc.get(s, [0, 0])[0] for sc in scans] for s in sources}
    totals = {s: (sum(per_shard[s]), sum(sc.get(s, [0, 0])[1] for sc in scans)) for s in sources}
    if sum(d for d, _ in totals.values()) != sum(s.rows for s in m_in.shards):
        raise InputError(f"{inp}: the documents in its shards differ from the counts in its manifest")
    plan.check_sources(cfg, sources)
    samples = _token_samples(root, shards, per_shard, cfg, mapper) if cfg.tokenizer else None
    sizes = plan.source_sizes(totals, samples, cfg)
    epochs = plan.plan_epochs(sizes, cfg)
    partial = plan.partial_split(per_shard, epochs, cfg.seed)
    specs = [
        {s: (epochs[s], int(partial[s][k])) for s in sources if per_shard[s][k]} for k in range(len(shards))
    ]
    scattered = mapper(
        "blend-scatter", scatter_shard, [(root, k, p, specs[k], cfg) for k, p in enumerate(shards)]
    )

    counts = np.array([r["buckets"] for r in scattered], dtype=np.int64).reshape(
        len(shards), cfg.shuffle_buckets
    )
    parts = [math.ceil(int(n) / cfg.shard_docs) for n in counts.sum(axis=0)]
    first = np.concatenate([[0], np.cumsum(parts)]).tolist()
    jobs = [
        (root, b, np.flatnonzero(counts[:, b]).tolist(), int(first[b]), out, cfg.shard_docs)
        for b in range(cfg.shuffle_buckets)
        if parts[b]
    ]
    written = [w for ws in mapper("blend-shuffle", shuffle_bucket, jobs) for w in ws]
    manifest = finalize(out, inp, m_in, root, scattered, written, sizes, epochs, cfg, fp)
    fs.rm(fs.join(out, WORK), recursive=True)
    return BlendResult(out, skipped=False, manifest=manifest)


def _token_samples(
    root: str, shards: Sequence[str], per_shard: dict[str, list[int]], cfg: BlendConfig, mapper: Mapper
) -> dict[str, plan.TokenSample]:
    assert cfg.tokenizer is not None
    _tokenizer(cfg.tokenizer)  # a bad model file fails here, once, with its path
    split = plan.token_sample_split(per_shard, cfg)
    picks = [{s: int(split[s][k]) for s in split if split[s][k]} for k in range(len(shards))]
    jobs = [(root, k, p, picks[k], cfg) for k, p in enumerate(shards) if picks[k]]
    acc: dict[str, list[int]] = {}
    for res in mapper("blend-tokens", token_shard, jobs):
        for src, v in res.items():
            acc[src] = [a + b for a, b in zip(acc.get(src, [0, 0, 0]), v, strict=True)]
    return {s: plan.TokenSample(*v) for s, v in acc.items()}


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    root: str,
    scattered: Sequence[dict[str, Any]],
    written: list[dict[str, Any]],
    sizes: dict[str, plan.SourceSize],
    epochs: dict[str, float],
    cfg: BlendConfig,
    fp: str,
) -> BlendManifest:
    removed = dataset.merge_removed(out, [fs.join(root, "removed", f"{k:05d}.parquet") for k in range(len(scattered))])
    sampled: dict[str, dict[str, int]] = {s: {"in": 0, "kept": 0, "rows": 0, "bytes": 0} for s in sizes}
    for r in scattered:
        for src, c in r["sources"].items():
            for key, v in c.items():
                sampled[src][key] += v
    n_in = sum(s.rows for s in m_in.shards)
    n_out = sum(w["rows"] for w in written)
    if (
        any(sampled[s]["in"] != sizes[s].documents for s in sizes)
        or n_out != sum(c["rows"] for c in sampled.values())
        or removed.rows != n_in - sum(c["kept"] for c in sampled.values())
    ):
        raise InputError("internal accounting error: sampled + not sampled differs from the input")
    blend = plan.summarize(sizes, epochs, sampled, cfg)
    names = {w["name"] for w in written}
    for path in fs.ls(out):  # parts of an earlier, larger blend into the same directory
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("part-") and name.endswith(".parquet") and name not in names:
            fs.rm(path)
    manifest = BlendManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=cfg.model_dump(mode="json"),
        inputs=BlendInputs(
            dataset=inp,
            fingerprint=m_in.fingerprint,
            shards=[s.sha256 for s in m_in.shards],
            tokenizer=cfg.tokenizer,
        ),
        shards=[ShardEntry.model_validate(w) for w in written],
        removed=removed.entry(),
        blend=blend,
        stats=Stats(
            documents_in=n_in,
            documents_out=n_out,
            documents_removed=removed.rows,
            per_source=plan.per_source_stats(sampled, REASON),
        ),
    )
    fs.atomic_write(fs.join(out, BLEND_JSON), json.dumps(blend.to_json(), indent=2) + "\n")
    dataset.write_manifest(out, manifest)
    return manifest


def report_rows(manifest: BlendManifest) -> list[dict[str, Any]]:
    """One row per source for tables: epochs, requested and realised share of tokens, what was sampled."""
    return [
        {
            "source": src,
            "epochs": round(b.epochs, 4),
            "requested share": round(b.share_requested, 4),
            "realised share": round(b.share_realised, 4),
            "documents": b.documents_sampled,
            "tokens": b.tokens_sampled,
            "tokens counted": b.tokens_method,
        }
        for src, b in manifest.blend.sources.items()
    ]
