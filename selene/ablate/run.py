"""The ablation's work, in order: every variant's data stages, then per variant and seed the proxy's
training, its harness tasks and its bits per byte on the reference texts; then the comparison.

Prefect-free like `selene.pipeline`: `run_job` runs one stage `Job` (here, or as a Prefect sub-flow)
and `step(name, fn, *args)` runs the other steps (here, or as Prefect tasks). Everything lands in
directories keyed by its settings (`selene.ablate.plan`), so a rerun, after a kill or with one more
variant or seed, redoes only what is missing: finished stages and trainings are reused, a training
cut short resumes from its last checkpoint, an evaluation whose summary matches is read back.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from selene import guard
from selene.ablate import compare
from selene.ablate.config import AblationConfig
from selene.ablate.plan import Variant, chain, link, proxy_config, proxy_dir, variant_configs, with_tokenizer
from selene.errors import InternalError
from selene.io import dataset
from selene.job import Job
from selene.pipeline import inputs as pipeline_inputs
from selene.quality.examples import files_item
from selene.quality.examples import reference_texts as read_reference
from selene.tokenize.manifest import TokenizeManifest
from selene.train import eval_curves
from selene.train.metrics import read_metrics

RunJob = Callable[[Job, bool], Any]
Step = Callable[..., Any]
REFERENCE_METRIC = "reference bits/byte"
BINARY = ("acc", "acc_norm", "exact_match")  # harness metrics that are means of 0/1 item scores


def _direct(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def reference_texts(cfg: AblationConfig) -> list[str]:
    """The reference documents, in file order, at most `reference_documents`."""
    return read_reference(cfg.reference, cfg.reference_documents, "reference")


def claim(cfg: AblationConfig, variants: dict[str, Any], say: Callable[[str], None] | None = None) -> Any:
    """The ablation's directory, refused when it overlaps what it reads or another command's work."""
    reads = [p for pcfg in variants.values() for p in pipeline_inputs(pcfg)] + list(cfg.reference)
    return guard.claim(f"selene ablate ({cfg.name})", list(dict.fromkeys(reads)), [cfg.out], say)


def check(cfg: AblationConfig, where: str) -> dict[str, Any]:
    """What needs no work, checked before any (and before a command looks for a Prefect server): each
    variant's pipeline, the reference globs, the proxy's shape and layout. Returns the pipelines."""
    configs = variant_configs(cfg, where)
    for pattern in cfg.reference:
        files_item("reference", pattern, "reference")  # every file of the glob checked up front
    from selene.train.evaluate import check as check_in_run_eval  # lazy, as below
    from selene.train.launch import check_layout  # lazy, as below: torch loads after the checks above

    train = next(iter(configs.values())).section("train")
    check_layout(train, train.nproc_per_node * train.nnodes)
    check_in_run_eval(train)  # the proxy's train.eval_tasks, before any data stage runs
    return configs


def run_ablation(
    cfg: AblationConfig,
    where: str,
    run_job: RunJob,
    step: Step | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run (or finish) the ablation `cfg` (read from `where`) and write its results into ``cfg.out``."""
    step = step or _direct
    tell = say or (lambda line: print(line, file=sys.stderr, flush=True))
    configs = check(cfg, where)
    texts = reference_texts(cfg)  # an empty reference fails before any work
    with claim(cfg, configs, say):
        variants = _data(cfg, configs, run_job, tell)
        runs = {
            v.name: [_proxy(cfg, v, seed, texts, run_job, step, tell) for seed in cfg.seeds] for v in variants
        }
        result = compare.summarize(cfg, [_record(cfg, v, runs[v.name]) for v in variants])
        step("write-results", compare.write, cfg.out, result)
    return result


def _data(
    cfg: AblationConfig, configs: dict[str, Any], run_job: RunJob, tell: Callable[[str], None]
) -> list[Variant]:
    """Every variant's data stages, each shared directory once. With a shared tokenizer, the first
    variant's tokenize trains it (unless the pipeline names one) and the others tokenize with it."""
    done: set[str] = set()
    variants: list[Variant] = []
    shared: str | None = None
    for i, (name, pcfg) in enumerate(configs.items()):
        variant = chain(name, pcfg, cfg.out)
        first = variants[0] if variants else None
        # a variant with the first one's documents has its tokens too (same directory); one that
        # sets tokenize's own settings keeps them
        if (shared and first is not None and variant.steps[-2].key != first.steps[-2].key
                and variant.steps[-1].section == first.steps[-1].section):  # fmt: skip
            variant = with_tokenizer(variant, shared, cfg.out)
        for s in variant.steps:
            if s.out not in done:
                tell(f"ablation {cfg.name}: variant {name}: {s.stage} → {s.out}")
                run_job(Job(s.stage, s.inp, s.out, s.section, pcfg.executor), False)
                done.add(s.out)
            link(cfg.out, name, s.stage, s.out)
        if i == 0 and cfg.tokenizer == "shared" and not variant.steps[-1].section.tokenizer:
            m = _tokens(variant)
            shared = os.path.abspath(os.path.join(variant.tokens_dir, m.tokenizer.file))
        variants.append(variant)
    return variants


def _tokens(variant: Variant) -> TokenizeManifest:
    m = dataset.read_manifest(variant.tokens_dir, TokenizeManifest)
    if m is None:
        raise InternalError(f"{variant.tokens_dir}: the tokenize stage left no manifest")
    return m


def _proxy(
    cfg: AblationConfig, variant: Variant, seed: int, texts: list[str], run_job: RunJob, step: Step,
    tell: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    """Train, evaluate and score one proxy; its metrics."""
    out = proxy_dir(variant, seed, cfg.out)
    link(cfg.out, variant.name, f"seed-{seed}", out)
    tell(f"ablation {cfg.name}: variant {variant.name}: proxy seed {seed} → {out}")
    trained = run_job(
        Job("train", variant.tokens_dir, out, proxy_config(variant, seed), variant.cfg.executor), False
    )
    checkpoint = trained.info["checkpoint"]
    ecfg = variant.cfg.section("eval").model_copy(update={"checkpoint": None, "perplexity": False})
    evaluated = run_job(Job("eval", out, os.path.join(out, "eval"), ecfg, variant.cfg.executor), False)
    metrics: dict[str, float] = {}
    for task, values in evaluated.info["summary"]["tasks"].items():
        for metric, value in values.items():
            metrics[f"{task} {metric}"] = value
    if texts:
        scored = step(f"reference-{variant.name}-seed-{seed}", _reference, out, checkpoint, texts, ecfg)
        metrics[REFERENCE_METRIC] = scored["bits_per_byte"]
    errors = harness_errors(os.path.join(out, "eval", "results.json"))
    logged = os.path.join(out, "metrics.jsonl")
    # train.eval_tasks in the proxy: its scores during training, the whole curve
    curves = eval_curves.curves(read_metrics(logged)) if os.path.exists(logged) else {}
    return {"seed": seed, "dir": out, "checkpoint": checkpoint, "metrics": metrics, "stderr": errors, "curves": curves}


def harness_errors(path: str) -> dict[str, float]:
    """Each harness metric's standard error from its finite items ("task metric" → value): the
    harness's own, else, for a 0/1 metric it did not bootstrap (a run with `limit`), the standard
    error of a mean of n Bernoulli items, sqrt(p(1 - p) / (n - 1)), as the harness computes it."""
    with open(path) as f:
        results = json.load(f).get("results", {})
    out: dict[str, float] = {}
    for task, values in results.items():
        n = values.get("sample_len")
        for key, value in values.items():
            metric, _, _ = key.partition(",")
            if "stderr" in metric or not isinstance(value, int | float) or key in ("sample_len",):
                continue
            se = values.get(key.replace(metric, f"{metric}_stderr", 1))
            if isinstance(se, int | float):
                out[f"{task} {metric}"] = float(se)
            elif metric in BINARY and isinstance(n, int) and n > 1 and 0.0 <= value <= 1.0:
                out[f"{task} {metric}"] = (value * (1.0 - value) / (n - 1)) ** 0.5
    return out


def _reference(out: str, checkpoint: str, texts: list[str], ecfg: Any) -> dict[str, Any]:
    """Bits per byte on the reference texts, kept in ``<out>/reference.json`` for this checkpoint
    and these texts (a rerun reads it back)."""
    path = os.path.join(out, "reference.json")
    key = compare.texts_key(texts)
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        if old.get("checkpoint") == checkpoint and old.get("texts") == key:
            return old
    from selene.eval.perplexity import text_bits_per_byte  # lazy: torch loads to score, not for the checks

    scored = text_bits_per_byte(checkpoint, texts, batch_size=ecfg.batch_size, device=ecfg.device)
    record = {"checkpoint": checkpoint, "texts": key, **scored}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1)
    os.replace(tmp, path)
    return record


def _record(cfg: AblationConfig, variant: Variant, runs: list[dict[str, Any]]) -> dict[str, Any]:
    m = _tokens(variant)
    return {
        "name": variant.name,
        "overrides": cfg.variants[variant.name],
        "stages": {s.stage: s.out for s in variant.steps},
        "documents": m.stats.documents_out,
        "tokens": m.stats.tokens,
        "tokenizer": os.path.join(variant.tokens_dir, m.tokenizer.file),
        "runs": runs,
    }
