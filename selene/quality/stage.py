"""The quality stage: every judged document scored by the classifiers, the best kept by the rule.

Steps through files, so that memory does not grow with the corpus and the result does not depend on
the workers:

0. The classifiers of the recipes (`train:`), trained in the driver into ``<output>/classifiers/``
   (`selene.quality.recipe`), or the finished ones there taken; from here on they are used as given
   models are.
1. ``quality-score``, per shard: each judged document's score under each classifier, and its tokens
   (whitespace words), written to the work directory; back come token-weighted histograms of the
   scores (`BINS` bins over [0, 1]) and per-source counts.
2. The cut-offs, in the driver, from the histograms: a fixed threshold is itself; a top fraction of
   tokens is found to its bin, then (``quality-cut``, per shard) exactly, from the scores inside that
   one bin. With ``combine: max_bucket`` each score is first mapped to its token-weighted percentile
   bucket through its classifier's histogram (``quality-combine`` makes the combined histogram).
3. ``quality-write``, per shard: kept documents to the output shard with ``quality.<name>`` scores in
   meta; the others to removed.parquet as ``quality:<classifier>`` with the score and the cut-off.

A killed run resumes: each shard's step writes a completion marker beside its outputs.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import xxhash

from selene import __version__
from selene.errors import ConfigError, InputError, InternalError, PathError, UsageError
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fingerprints, fs
from selene.manifest import DocumentManifest, ShardEntry, SourceStats, Stats
from selene.quality import recipe
from selene.quality.config import ClassifierSpec, QualityConfig
from selene.quality.fasttext import Classifier
from selene.quality.manifest import (
    ClassifierSummary,
    Example,
    QualityInputs,
    QualityManifest,
    SourceTokens,
    TrainedClassifier,
)

WORK = dataset.WORK
BINS = 1 << 14  # histogram resolution: a cut-off is found to 1/16384, then exactly within its bin
REPORT_BINS = 20
EXAMPLES = 3
_MODELS: dict[tuple[str, str], tuple[str | None, Classifier]] = {}

QualityResult = dataset.StageResult[QualityManifest]


def classifier(path: str, label: str, digest: str | None = None) -> Classifier:
    """The loaded model (once per process: workers score many shards with it). `digest`, the file's
    sha256 when known, tells a model the stage trained again in place from the one loaded before."""
    held = _MODELS.get((path, label))
    stale = held is not None and None not in (digest, held[0]) and held[0] != digest
    if held is None or stale:
        held = _MODELS[(path, label)] = (digest, Classifier.load(path, label))
    return held[1]


def check_given(c: ClassifierSpec) -> None:
    """A classifier the user gave (not one a recipe trains), loaded before any work: a missing label
    is a `ConfigError`, a file that is missing or no fastText classifier a `PathError` naming it."""
    if c.model is None:
        return
    try:
        classifier(c.model, c.label)
    except InputError as e:
        raise PathError(f"quality.classifiers[{c.name}].model: {e}") from None


def judged(source: str, meta: str | None, cfg: QualityConfig) -> bool:
    """Whether the classifiers judge this document: its source is named, or (by default) it is a
    web document (a `url` in its meta; the JSON is read only then)."""
    return source in cfg.sources if cfg.sources is not None else bool(json.loads(meta or "{}").get("url"))


def _bin(scores: np.ndarray) -> np.ndarray:
    return np.minimum((scores * BINS).astype(np.int64), BINS - 1)


def score_shard(root: str, k: int, shard: str, cfg: QualityConfig, digests: dict[str, str]) -> dict[str, Any]:
    """Scores of shard `k`'s judged documents (NaN: not judged) and the token-weighted histograms."""
    marker = fs.join(root, "scored", f"{k:05d}.json")
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    models = [classifier(_given(c), c.label, digests[c.name]) for c in cfg.classifiers]
    scores: list[np.ndarray] = []
    tokens: list[int] = []
    sources: list[str] = []
    for batch in dataset.iter_row_groups(shard, ["text", "source", "meta"]):
        texts = batch.column("text").to_pylist()
        srcs = batch.column("source").to_pylist()
        metas = batch.column("meta").to_pylist()
        mask = np.array([judged(s, m, cfg) for s, m in zip(srcs, metas, strict=True)], dtype=bool)
        block = np.full((len(texts), len(models)), np.nan)
        idx = np.flatnonzero(mask)
        if idx.size:
            chosen = [texts[i] for i in idx]
            for c, model in enumerate(models):
                block[idx, c] = model.score(chosen)
        scores.append(block)
        tokens += [len(t.split()) for t in texts]
        sources += srcs
    s = np.concatenate(scores) if scores else np.zeros((0, len(models)))
    t = np.asarray(tokens, dtype=np.int64)
    _save(root, "scores", k, s=s, t=t)
    hist = np.zeros((len(models), BINS), dtype=np.int64)
    ok = ~np.isnan(s[:, 0]) if len(models) else np.zeros(len(t), dtype=bool)
    for c in range(len(models)):
        np.add.at(hist[c], _bin(s[ok, c]), t[ok])
    per_source: dict[str, dict[str, Any]] = {}
    for i, src in enumerate(sources):
        e = per_source.setdefault(src, {"in": 0, "judged": 0, "tokens": 0, "report": np.zeros((len(models), REPORT_BINS), dtype=np.int64)})
        e["in"] += 1
        if ok[i]:
            e["judged"] += 1
            e["tokens"] += int(t[i])
            e["report"][np.arange(len(models)), np.minimum((s[i] * REPORT_BINS).astype(np.int64), REPORT_BINS - 1)] += 1
    result = {
        "hist": hist.tolist(),
        "sources": {src: {**e, "report": e["report"].tolist()} for src, e in sorted(per_source.items())},
    }
    fs.atomic_write(marker, json.dumps(result))
    return result


def _save(root: str, kind: str, k: int, s: np.ndarray, t: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, s=s, t=t)
    fs.atomic_write(fs.join(root, kind, f"{k:05d}.npz"), buf.getvalue())


def _load(root: str, kind: str, k: int) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(fs.read_bytes(fs.join(root, kind, f"{k:05d}.npz")))) as z:
        return {name: z[name] for name in z.files}


# ------------------------------------------------------------------------------- combined scores


def bucket_of(scores: np.ndarray, cdf: np.ndarray, buckets: int) -> np.ndarray:
    """Each score's token-weighted percentile bucket under its classifier (`cdf`: the share of tokens
    scored below each bin), as a score in [0, 1]: Nemotron-CC's ensemble, bucket by bucket."""
    share = cdf[_bin(scores)]
    return np.minimum(np.floor(share * buckets), buckets - 1) / (buckets - 1)


def combined(s: np.ndarray, cfg: QualityConfig, cdfs: np.ndarray | None) -> np.ndarray:
    """The document's one score when classifiers combine (NaN stays NaN: not judged)."""
    if cfg.combine == "mean" or s.shape[1] == 1:
        return s.mean(axis=1)
    assert cdfs is not None
    return np.max(np.stack([bucket_of(s[:, c], cdfs[c], cfg.buckets) for c in range(s.shape[1])], axis=1), axis=1)


def combine_shard(root: str, k: int, cfg: QualityConfig, cdfs: list[list[float]] | None) -> list[int]:
    """The token-weighted histogram of shard `k`'s combined scores."""
    z = _load(root, "scores", k)
    c = combined(z["s"], cfg, None if cdfs is None else np.asarray(cdfs))
    ok = ~np.isnan(c)
    hist = np.zeros(BINS, dtype=np.int64)
    np.add.at(hist, _bin(c[ok]), z["t"][ok])
    return list(hist.tolist())


def cut_shard(root: str, k: int, cfg: QualityConfig, column: int | None, cdfs: list[list[float]] | None, lo: int) -> list[list[float]]:
    """(score, tokens) of shard `k`'s documents whose score falls in histogram bin `lo`."""
    z = _load(root, "scores", k)
    s = z["s"][:, column] if column is not None else combined(z["s"], cfg, None if cdfs is None else np.asarray(cdfs))
    ok = ~np.isnan(s)
    inside = ok.copy()
    inside[ok] = _bin(s[ok]) == lo
    return [[float(a), int(b)] for a, b in zip(s[inside], z["t"][inside], strict=True)]


def boundary_bin(hist: np.ndarray, fraction: float) -> tuple[int, int]:
    """The bin where the best-scoring `fraction` of the tokens ends, and the tokens above that bin."""
    total = int(hist.sum())
    want = fraction * total
    above = 0
    for b in range(len(hist) - 1, -1, -1):
        if above + hist[b] >= want:
            return b, above
        above += int(hist[b])
    return 0, above


def exact_cutoff(pairs: Sequence[Sequence[float]], above: int, fraction: float, total: int) -> float:
    """The least score kept so that the kept tokens reach `fraction` of `total` (ties at it all kept)."""
    want = fraction * total
    got = above
    for score, tokens in sorted(pairs, key=lambda p: -p[0]):
        got += int(tokens)
        if got >= want:
            return float(score)
    return 0.0


# ------------------------------------------------------------------------------------- decisions


def pareto_draw(ids: Sequence[str], seed: int, name: str, alpha: float) -> np.ndarray:
    """GPT-3's Pareto(alpha) draw (numpy's `pareto`, a Lomax sample) per document, from a hash of
    its id: the same document gets the same draw in any shard, on any worker."""
    u = np.array([xxhash.xxh64_intdigest(f"{seed}\0{name}\0{i}".encode()) >> 11 for i in ids], dtype=np.float64) / float(1 << 53)
    return np.asarray((1.0 - u) ** (-1.0 / alpha) - 1.0)


def decide(ids: Sequence[str], s: np.ndarray, cfg: QualityConfig, plan: dict[str, Any]) -> tuple[np.ndarray, list[str], list[str]]:
    """(keep, reason, detail) per document; unjudged documents (NaN scores) are kept."""
    n = len(ids)
    keep = np.ones(n, dtype=bool)
    reason = [""] * n
    detail = [""] * n
    names = [c.name for c in cfg.classifiers]
    if cfg.combine == "each" or len(names) == 1:
        columns = [(names[c], s[:, c], plan["cutoffs"][c]) for c in range(len(names))]
    else:
        cdfs = None if plan["cdfs"] is None else np.asarray(plan["cdfs"])
        columns = [(cfg.combine, combined(s, cfg, cdfs), plan["cutoff"])]
    for name, score, cutoff in columns:
        ok = ~np.isnan(score)
        if cfg.rule == "pareto":
            draw = pareto_draw(ids, cfg.seed, name, cfg.alpha)
            drop = ok & ~(draw > 1.0 - np.where(ok, score, 0.0))
        else:
            drop = ok & (np.where(ok, score, 1.0) < cutoff)
        for i in np.flatnonzero(drop & keep):
            reason[i] = f"quality:{name}"
            if cfg.rule == "pareto":
                detail[i] = f"score={score[i]:.4f}; pareto({cfg.alpha:g}) draw {draw[i]:.4f} <= 1 - score"
            else:
                detail[i] = f"score={score[i]:.4f} < cutoff {cutoff:.4f}"
        keep &= ~drop
    return keep, reason, detail


def write_shard(root: str, k: int, shard: str, out: str, cfg: QualityConfig, plan: dict[str, Any]) -> dict[str, Any]:
    """Shard `k` → output shard `k` (scores in meta) and its removed rows; returns the counts."""
    marker = fs.join(root, "done", f"{k:05d}.json")
    target = fs.join(out, dataset.shard_name(k))
    if fs.exists(marker) and fs.exists(target):
        return json.loads(fs.read_text(marker))
    z = _load(root, "scores", k)
    sink = dataset.ParquetSink(target, dataset.DOC_SCHEMA)
    removed = dataset.ParquetSink(fs.join(root, "removed", f"{k:05d}.parquet"), dataset.REMOVED_SCHEMA)
    names = [c.name for c in cfg.classifiers]
    counts: dict[str, Counter[str]] = {}
    examples: list[dict[str, Any]] = []
    row = 0
    try:
        for batch in dataset.iter_row_groups(shard, dataset.DOC_SCHEMA.names):
            docs = batch.to_pylist()
            s = z["s"][row : row + len(docs)]
            t = z["t"][row : row + len(docs)]
            row += len(docs)
            keep, reason, detail = decide([d["id"] for d in docs], s, cfg, plan)
            shown = _shown_score(s, cfg, plan)
            for i, doc in enumerate(docs):
                c = counts.setdefault(doc["source"], Counter())
                c["in"] += 1
                scored = not np.isnan(s[i, 0])
                if scored:
                    c["judged"] += 1
                    c["tokens_in"] += int(t[i])
                    examples.append({"id": doc["id"], "source": doc["source"], "score": float(shown[i]), "kept": bool(keep[i]),
                                     "text": doc["text"][:300]})  # fmt: skip
                if keep[i]:
                    meta = json.loads(doc["meta"] or "{}")
                    if scored:
                        meta.update({f"quality.{n}": round(float(s[i, c_]), 6) for c_, n in enumerate(names)})
                    sink.add(**{**doc, "meta": dataset.to_meta_json(meta)})
                    if scored:
                        c["kept_judged"] += 1
                        c["tokens_kept"] += int(t[i])
                else:
                    c[reason[i]] += 1
                    removed.add(id=doc["id"], source=doc["source"], reason=reason[i], detail=detail[i], meta=doc["meta"])
    except BaseException:
        sink.abort()
        removed.abort()
        raise
    written = sink.close().to_json()
    removed.close()
    result = {"shard": written, "counts": {src: dict(c) for src, c in sorted(counts.items())}, "examples": _near(examples)}
    fs.atomic_write(marker, json.dumps(result))
    return result


def _shown_score(s: np.ndarray, cfg: QualityConfig, plan: dict[str, Any]) -> np.ndarray:
    if s.shape[1] == 1 or cfg.combine == "each":
        return np.asarray(s.min(axis=1) if s.shape[1] else np.zeros(len(s)))
    return combined(s, cfg, None if plan["cdfs"] is None else np.asarray(plan["cdfs"]))


def _near(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lowest-scoring kept and the highest-scoring dropped documents (ties by id)."""
    kept = sorted((e for e in examples if e["kept"]), key=lambda e: (e["score"], e["id"]))[:EXAMPLES]
    dropped = sorted((e for e in examples if not e["kept"]), key=lambda e: (-e["score"], e["id"]))[:EXAMPLES]
    return kept + dropped


# ------------------------------------------------------------------------------------------- run


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "quality")


def _given(c: ClassifierSpec) -> str:
    """The model file of a classifier of `recipe.resolved`'s config: every one has it by then."""
    assert c.model is not None
    return c.model


def model_digests(cfg: QualityConfig) -> dict[str, str]:
    out = {}
    for c in cfg.classifiers:
        model = _given(c)
        if not fs.exists(model):
            raise InputError(f"quality.classifiers[{c.name}].model: {model} does not exist")
        out[c.name] = fs.sha256_file(model)
    return out


def check_judged(inp: str, m_in: DocumentManifest, cfg: QualityConfig) -> None:
    """Refuse a run that would judge no document: every document would pass unjudged and the stage
    would keep everything while seeming to filter. By default the web documents are judged (a `url`
    in meta), so the meta column is read until one has a url (the first shard, on a crawl)."""
    have = m_in.stats.per_source
    if cfg.sources is not None:
        if any(have[s].kept for s in cfg.sources if s in have):
            return
        why = f"the sources it judges ({', '.join(cfg.sources)}) have no documents left"
    else:
        for path in dataset.list_shards(inp):
            for batch in dataset.iter_row_groups(path, ["meta"]):
                if any(m and '"url"' in m and json.loads(m).get("url") for m in batch.column("meta").to_pylist()):
                    return
        why = "by default it judges web documents (a `url` in meta) and none has one"
    raise ConfigError(
        f"quality: no document of {inp} would be judged: {why}, so every document would pass unjudged. "
        f"Name the sources to judge: quality.sources (--judge SOURCE); the input's sources: {', '.join(have)}"
    )


def run_quality(inp: str, out: str, cfg: QualityConfig, *, mapper: Mapper | None = None, force: bool = False) -> QualityResult:
    """Train the recipes' classifiers (`selene.quality.recipe`), then score and decide with `work`:
    the config with each trained classifier as a given one, its model file in the output."""
    mapper = mapper or serial_map
    m_in = input_dataset(inp)
    if not cfg.classifiers:
        raise UsageError("quality: no classifiers configured (quality.classifiers: [{name, model, label}])")
    missing = sorted(set(cfg.sources or ()) - set(m_in.stats.per_source))
    if missing:
        raise ConfigError(
            f"quality.sources: {', '.join(missing)} not in {inp} (its sources: {', '.join(m_in.stats.per_source)})"
        )
    check_judged(inp, m_in, cfg)
    recipe.check(inp, m_in, cfg)
    for c in cfg.classifiers:
        check_given(c)
    fs.check_writable(out)
    trained = recipe.train_all(inp, m_in, out, cfg, force=force)
    work = recipe.resolved(cfg, out)
    digests = model_digests(work)
    for c in work.classifiers:
        classifier(_given(c), c.label, digests[c.name])  # a trained one too: the label is checked before scoring
    fp = fingerprints.of([s.sha256 for s in m_in.shards], fingerprints.settings(cfg, "classifiers"),
                              [(c.name, c.label, digests[c.name]) for c in work.classifiers])  # fmt: skip
    if (done := dataset.open_output(out, fp, force, QualityManifest)) is not None:
        return done
    root = fs.join(out, WORK, fp)
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    scored = mapper("quality-score", score_shard, [(root, k, p, work, digests) for k, p in enumerate(shards)])
    failpoint("quality:scored")
    plan = cutoffs(root, len(shards), scored, work, mapper)
    results = mapper("quality-write", write_shard, [(root, k, p, out, work, plan) for k, p in enumerate(shards)])
    failpoint("quality:shards-written")
    manifest = finalize(out, inp, m_in, root, scored, results, plan, digests, work, fp, config=cfg, trained=trained)
    fs.rm(fs.join(out, WORK), recursive=True)
    return QualityResult(out, skipped=False, manifest=manifest)


def cutoffs(root: str, n: int, scored: Sequence[dict[str, Any]], cfg: QualityConfig, mapper: Mapper) -> dict[str, Any]:
    """The rule's cut-offs: per classifier (`combine: each`) or of the combined score."""
    hists = np.sum([np.asarray(r["hist"], dtype=np.int64) for r in scored], axis=0) if scored else np.zeros((len(cfg.classifiers), BINS), dtype=np.int64)
    plan: dict[str, Any] = {"cutoffs": [None] * len(cfg.classifiers), "cutoff": None, "cdfs": None}

    def exact(hist: np.ndarray, column: int | None, cdfs: list[list[float]] | None) -> float:
        lo, above = boundary_bin(hist, cfg.fraction)
        parts = mapper("quality-cut", cut_shard, [(root, k, cfg, column, cdfs, lo) for k in range(n)])
        return exact_cutoff([p for part in parts for p in part], above, cfg.fraction, int(hist.sum()))

    if cfg.combine == "each" or len(cfg.classifiers) == 1:
        for c in range(len(cfg.classifiers)):
            if cfg.rule == "threshold":
                plan["cutoffs"][c] = cfg.threshold
            elif cfg.rule == "top_fraction":
                plan["cutoffs"][c] = exact(hists[c], c, None)
        return plan
    if cfg.combine == "max_bucket":
        below = np.cumsum(hists, axis=1) - hists  # tokens scored below each bin
        plan["cdfs"] = (below / np.maximum(hists.sum(axis=1, keepdims=True), 1)).tolist()
    if cfg.rule == "threshold":
        plan["cutoff"] = cfg.threshold
    elif cfg.rule == "top_fraction":
        hist = np.sum(mapper("quality-combine", combine_shard, [(root, k, cfg, plan["cdfs"]) for k in range(n)]), axis=0)
        plan["cutoff"] = exact(np.asarray(hist, dtype=np.int64), None, plan["cdfs"])
    return plan


def finalize(
    out: str, inp: str, m_in: DocumentManifest, root: str, scored: Sequence[dict[str, Any]],
    results: Sequence[dict[str, Any]], plan: dict[str, Any], digests: dict[str, str], cfg: QualityConfig, fp: str,
    *, config: QualityConfig, trained: dict[str, TrainedClassifier],
) -> QualityManifest:
    """The manifest; `cfg` has every model file, `config` is the stage's as given (recipes and all)."""
    removed = dataset.merge_removed(out, [fs.join(root, "removed", f"{k:05d}.parquet") for k in range(len(results))])
    counts: dict[str, Counter[str]] = {}
    for r in results:
        for src, c in r["counts"].items():
            counts.setdefault(src, Counter()).update(c)
    n_in = sum(s.rows for s in m_in.shards)
    totals: Counter[str] = sum(counts.values(), Counter())
    n_removed = sum(v for key, v in totals.items() if key.startswith("quality:"))
    if totals["in"] != n_in or removed.rows != n_removed:
        raise InternalError("accounting: documents in/removed differ from the shard counts")
    per_source = {
        src: SourceStats(
            documents_in=c["in"],
            kept=c["in"] - sum(v for key, v in c.items() if key.startswith("quality:")),
            removed={key: v for key, v in sorted(c.items()) if key.startswith("quality:") and v},
        )
        for src, c in counts.items()
    }
    reports: dict[str, dict[str, list[int]]] = {c.name: {} for c in cfg.classifiers}
    for r in scored:
        for src, e in r["sources"].items():
            for ci, c in enumerate(cfg.classifiers):
                row = reports[c.name].setdefault(src, [0] * REPORT_BINS)
                reports[c.name][src] = [a + b for a, b in zip(row, e["report"][ci], strict=True)]
    examples = _near([e for r in results for e in r["examples"]])
    shards = [ShardEntry.model_validate(r["shard"]) for r in results]
    rule = cfg.rule + ("" if len(cfg.classifiers) == 1 else f", combine {cfg.combine}")
    manifest = QualityManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=config.model_dump(mode="json"),
        inputs=QualityInputs(dataset=inp, fingerprint=m_in.fingerprint, shards=[s.sha256 for s in m_in.shards], models=digests),
        shards=shards,
        removed=removed.entry(),
        rule=rule,
        cutoff=plan["cutoff"],
        classifiers={
            c.name: ClassifierSummary(
                model=_given(c),
                label=c.label,
                cutoff=plan["cutoffs"][i],
                histogram=reports[c.name],
                trained=trained.get(c.name),
            )
            for i, c in enumerate(cfg.classifiers)
        },
        judged={
            src: SourceTokens(judged=c["judged"], kept=c["kept_judged"], tokens_in=c["tokens_in"], tokens_kept=c["tokens_kept"])
            for src, c in counts.items()
        },
        examples=[Example.model_validate(e) for e in examples],
        stats=Stats(
            documents_in=n_in,
            documents_out=sum(s.rows for s in shards),
            documents_removed=removed.rows,
            per_source=per_source,
        ),
    )
    dataset.write_manifest(out, manifest)
    return manifest
