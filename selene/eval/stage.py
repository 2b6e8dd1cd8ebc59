"""The eval stage: harness tasks and held-out perplexity of a checkpoint, written next to it.

Results: ``<out>/results.json`` (the harness's, JSON-safe), ``<out>/results.md`` (a table, with a
suite's published figures beside the run's), ``<out>/perplexity.json`` (loss, perplexity, bits per
byte on the documents training held out) and ``<out>/summary.json``. All of it is written to a
scratch directory and moved into `<out>` at the end: a run that fails leaves `<out>` as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from selene.errors import ConfigError, InputError
from selene.eval import harness
from selene.eval.checkpoint_io import pick_device, resolve
from selene.eval.config import EvalConfig
from selene.eval.tasks import data, suites
from selene.eval.tasks.precheck import precheck
from selene.executor.mappers import Mapper
from selene.io.results import StageResult
from selene.manifest import versioned


def device_of(cfg: EvalConfig) -> str:
    """``eval.device``, ``auto`` resolved: cuda when torch sees a GPU, else cpu (`ConfigError` for cuda
    where there is none). Scoring runs in float32 on either (`selene.eval.lm`)."""
    return pick_device(cfg.device).type


def run_eval(cfg: EvalConfig, out: str | None = None, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Harness tasks and held-out perplexity of ``cfg.checkpoint`` into `out` (default
    ``<checkpoint>/eval``), written to a scratch directory and moved into place once all of it is
    done: a run that fails leaves `out` as it was. `settings` are recorded in summary.json."""
    if not cfg.checkpoint:
        raise ConfigError("eval.checkpoint is not set: give --checkpoint DIR (a step-NNNNNN directory or a train dir)")
    ckpt = resolve(cfg.checkpoint)
    out = out or os.path.join(ckpt, "eval")
    include = [harness.TASKS_DIR] + ([Path(cfg.include_path).resolve()] if cfg.include_path else [])
    precheck(list(cfg.tasks), cfg.num_fewshot, dict(cfg.task_data), include, data.user_datasets_cache())
    device = device_of(cfg)
    with harness.staged(Path(out).resolve()) as tmp:
        results = harness.evaluate(
            ckpt, list(cfg.tasks), out_dir=str(tmp), num_fewshot=cfg.num_fewshot, limit=cfg.limit,
            batch_size=cfg.batch_size, device=device, seed=cfg.seed, include_path=cfg.include_path,
            task_data=dict(cfg.task_data),
        )
        summary: dict[str, Any] = versioned({"checkpoint": ckpt, "out": out, "tasks": harness_metrics(results)})
        refs = reference_figures(results)
        if refs:
            summary["reference"] = refs
        if cfg.perplexity:
            from selene.eval import perplexity  # lazy: lm_eval (0.3 s) stays out of summary and artifacts

            try:
                ppl = perplexity.heldout_perplexity(
                    ckpt, device=device, batch_size=cfg.batch_size, max_documents=cfg.perplexity_documents
                )
            except InputError as e:  # e.g. a corpus too small to hold documents out: report, do not fail the run
                summary["perplexity_skipped"] = str(e)
            else:
                with open(tmp / "perplexity.json", "w") as f:
                    json.dump(ppl, f, indent=1)
                summary["perplexity"] = ppl
        if settings is not None:
            summary["config"] = settings
        with open(tmp / "summary.json", "w") as f:
            json.dump(summary, f, indent=1)
    return summary


def reference_figures(results: dict[str, Any]) -> dict[str, Any]:
    """The published figures of the suites among the runs: {"column": header, "source": citation,
    "figures": {result name: {metric: figure}}}; empty without a suite."""
    runs = [suites.Run(**r) for r in results.get("selene", {}).get("runs", [])]
    column = suites.reference_column(runs)
    if column is None:
        return {}
    figures: dict[str, dict[str, float]] = {}
    for (name, metric), value in harness.references(results).items():
        figures.setdefault(name, {})[metric] = value
    source = "; ".join(sorted({suites.SUITES[r.suite].source for r in runs if r.suite}))
    return {"column": column, "source": source, "figures": figures}


def harness_metrics(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """task → {metric: value} from the harness's results (stderr entries dropped)."""
    out: dict[str, dict[str, float]] = {}
    for task, metrics in results.get("results", {}).items():
        out[task] = {
            k.split(",")[0]: float(v)
            for k, v in metrics.items()
            if isinstance(v, int | float) and "stderr" not in k and k not in ("alias", "sample_len")
        }
    return out


def run_eval_stage(
    inp: str, out: str, cfg: EvalConfig, *, mapper: Mapper | None = None, force: bool = False
) -> StageResult:
    """The pipeline's eval stage: `eval.checkpoint`, else the latest checkpoint of the training
    directory `inp` → `out`; skipped when `out` holds that checkpoint's results for these settings."""
    cfg = cfg.model_copy(update={"checkpoint": resolve(cfg.checkpoint or inp)})
    previous = os.path.join(out, "summary.json")
    settings = cfg.model_dump(mode="json")
    if not force and os.path.exists(previous):
        with open(previous) as f:
            old = json.load(f)
        if old.get("config") == settings:
            return StageResult(out, skipped=True, info={"summary": old})
    summary = run_eval(cfg, out, settings)
    return StageResult(out, skipped=False, info={"summary": summary})
