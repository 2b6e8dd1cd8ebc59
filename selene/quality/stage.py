"""The quality stage: every judged document scored by the classifiers, the best kept by the rule.

Steps through files, so that memory does not grow with the corpus and the result does not depend on
the workers:

0. The classifiers of the recipes (`train:`), trained in the driver into ``<output>/classifiers/``
   (`selene.quality.recipe`), or the finished ones there taken; from here on they are used as given
   models are.
1. ``quality-score``, per shard (`scores.score_shard`): each judged document's score under each
   classifier, and its tokens (whitespace words), written to the work directory; back come
   token-weighted histograms of the scores (`scores.BINS` bins over [0, 1]) and per-source counts.
2. The cut-offs, in the driver, from the histograms (`cutoffs.cutoffs`): a fixed threshold is itself; a top fraction of
   tokens is found to its bin, then (``quality-cut``, per shard) exactly, from the scores inside that
   one bin. With ``combine: max_bucket`` each score is first mapped to its token-weighted percentile
   bucket through its classifier's histogram (``quality-combine`` makes the combined histogram).
3. ``quality-write``, per shard (`decide.write_shard`): kept documents to the output shard with ``quality.<name>`` scores in
   meta; the others to removed.parquet as ``quality:<classifier>`` with the score and the cut-off.

A killed run resumes: each shard's step stores its typed result (`selene.quality.steps`) as its
marker beside its outputs (`steps.resumable`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from selene.errors import ConfigError, InputError, PathError, UsageError
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DocumentManifest, SourceStats, Stats
from selene.quality import recipe
from selene.quality.config import ClassifierSpec, QualityConfig
from selene.quality.cutoffs import cutoffs
from selene.quality.decide import near, removed_part, write_shard
from selene.quality.manifest import (
    ClassifierSummary,
    QualityInputs,
    QualityManifest,
    SourceTokens,
    TrainedClassifier,
)
from selene.quality.scores import REPORT_BINS, classifier, given, score_shard
from selene.quality.steps import Cutoffs, Scored, Written

QualityResult = StageResult[QualityManifest]


def check_given(c: ClassifierSpec) -> None:
    """A classifier the user gave (not one a recipe trains), loaded before any work: a missing label
    is a `ConfigError`, a file that is missing or no fastText classifier a `PathError` naming it."""
    if c.model is None:
        return
    try:
        classifier(c.model, c.label)
    except InputError as e:
        raise PathError(f"quality.classifiers[{c.name}].model: {e}") from None



def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "quality")



def model_digests(cfg: QualityConfig) -> dict[str, str]:
    out = {}
    for c in cfg.classifiers:
        model = given(c)
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
        classifier(given(c), c.label, digests[c.name])  # a trained one too: the label is checked before scoring
    fp = fingerprints.of([s.sha256 for s in m_in.shards], fingerprints.settings(cfg, "classifiers"),
                              [(c.name, c.label, digests[c.name]) for c in work.classifiers])  # fmt: skip
    if (done := dataset.open_output(out, fp, force, QualityManifest)) is not None:
        return done
    root = fs.join(out, dataset.WORK, fp)
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    scored = mapper("quality-score", score_shard, [(root, k, p, work, digests) for k, p in enumerate(shards)])
    failpoint("quality:scored")
    plan = cutoffs(root, len(shards), scored, work, mapper)
    results = mapper("quality-write", write_shard, [(root, k, p, out, work, plan) for k, p in enumerate(shards)])
    failpoint("quality:shards-written")
    return finish(out, inp, m_in, root, scored, results, plan, digests, work, fp, config=cfg, trained=trained)


def finish(
    out: str, inp: str, m_in: DocumentManifest, root: str, scored: Sequence[Scored], results: Sequence[Written],
    plan: Cutoffs, digests: dict[str, str], cfg: QualityConfig, fp: str,
    *, config: QualityConfig, trained: dict[str, TrainedClassifier],
) -> QualityResult:
    """removed.parquet, the accounting, the manifest; `cfg` has every model file, `config` is the
    stage's as given (recipes and all)."""
    counts: dict[str, Counter[str]] = {}
    for r in results:
        for src, c in r.counts.items():
            counts.setdefault(src, Counter()).update(c)
    n_in = sum(s.rows for s in m_in.shards)
    totals: Counter[str] = sum(counts.values(), Counter())
    n_removed = sum(v for key, v in totals.items() if key.startswith("quality:"))
    per_source = {
        src: SourceStats(
            documents_in=c["in"],
            kept=c["in"] - sum(v for key, v in c.items() if key.startswith("quality:")),
            removed={key: v for key, v in sorted(c.items()) if key.startswith("quality:") and v},
        )
        for src, c in counts.items()
    }
    reports: dict[str, dict[str, list[int]]] = {c.name: {} for c in cfg.classifiers}
    for sc in scored:
        for src, e in sc.sources.items():
            for ci, spec in enumerate(cfg.classifiers):
                row = reports[spec.name].setdefault(src, [0] * REPORT_BINS)
                reports[spec.name][src] = [a + b for a, b in zip(row, e.report[ci], strict=True)]
    shards = [r.shard for r in results]
    rule = cfg.rule + ("" if len(cfg.classifiers) == 1 else f", combine {cfg.combine}")

    def manifest(removed: dataset.WrittenFile) -> QualityManifest:
        return QualityManifest(
            **steps.header(fp, config, shards, removed.entry()),
            inputs=QualityInputs(dataset=inp, fingerprint=m_in.fingerprint, shards=[s.sha256 for s in m_in.shards], models=digests),
            rule=rule,
            cutoff=plan.cutoff,
            classifiers={
                c.name: ClassifierSummary(
                    model=given(c),
                    label=c.label,
                    cutoff=plan.cutoffs[i],
                    histogram=reports[c.name],
                    trained=trained.get(c.name),
                )
                for i, c in enumerate(cfg.classifiers)
            },
            judged={
                src: SourceTokens(judged=c["judged"], kept=c["kept_judged"], tokens_in=c["tokens_in"], tokens_kept=c["tokens_kept"])
                for src, c in counts.items()
            },
            examples=near([e for r in results for e in r.examples]),
            stats=Stats(
                documents_in=n_in,
                documents_out=sum(s.rows for s in shards),
                documents_removed=removed.rows,
                per_source=per_source,
            ),
        )

    return steps.finish_documents(
        out, "quality", [removed_part(root, k) for k in range(len(results))],
        balance=lambda removed: {
            "documents in vs the input's rows": (totals["in"], n_in),
            "removed vs removed.parquet rows": (n_removed, removed.rows),
        },
        manifest=manifest,
    )  # fmt: skip

