"""A loss scaling study over token budgets: each model size trained to each budget, its final loss.

Set `budgets` in a scaling-study config and `selene scaling-study` runs this instead of the timing
calibration. Every (model, budget) point is the WSD run of that many tokens (warmup, constant lr,
then a decay over `decay_fraction` of its steps to zero: Hägele et al. 2024), made one of two ways:

- ``branches`` (the default): one WSD run per model to the largest budget, which keeps a checkpoint
  where each smaller budget's decay starts; each smaller budget is a decay branch from it
  (`selene.train.anneal`). A branch reproduces the separate run step for step (`tests/train/
  test_anneal.py`), so the losses are those of separate runs, for the largest run plus the decays.
- ``separate``: one WSD run per budget from step 0, as a grid of independent runs costs.

With budgets B₁ < … < Bₘ and decay fraction f the branches train Bₘ + f·(B₁ + … + Bₘ₋₁) tokens'
worth of steps, the separate runs B₁ + … + Bₘ: for budgets doubling from B to 8B with f = 0.2,
9.4B against 15B. `benchmarks/scaling_branches.py` measures both on the same grid.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from typing import Any

from selene.errors import ConfigError, InternalError
from selene.manifest import versioned
from selene.plan.config import ScalingStudyConfig, StudyRun
from selene.plan.study_runs import train_config as timing_config  # the model, layout and batch of each run
from selene.train import checkpoint
from selene.train.anneal import prepare
from selene.train.config import TrainConfig
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from selene.view import Markdown, Table, View, columns


@dataclass(frozen=True)
class Budget:
    """One point of the grid: the tokens asked for, the steps that cover them, the decay's length."""

    tokens: int
    steps: int
    decay_steps: int

    @property
    def decay_start(self) -> int:
        return self.steps - self.decay_steps


def budget_plan(run: StudyRun, cfg: ScalingStudyConfig, tokens_per_step: int) -> list[Budget]:
    """The budgets of `cfg` for `run` as steps (rounded up to whole steps), ascending; `ConfigError`
    naming the budget when two give the same steps or a decay would start inside warmup."""
    plan: list[Budget] = []
    for tokens in sorted(cfg.budgets or []):
        steps = -(-tokens // tokens_per_step)
        if plan and plan[-1].steps == steps:
            raise ConfigError(
                f"scaling study run {run.name}: budgets {plan[-1].tokens} and {tokens} both take {steps} steps "
                f"({tokens_per_step} tokens a step); space the budgets further apart"
            )
        decay = max(1, round(cfg.decay_fraction * steps))
        if steps - decay < max(1, cfg.lr_warmup_steps):
            raise ConfigError(
                f"scaling study run {run.name}: budget {tokens} is {steps} steps, too few for a decay of {decay} "
                f"after {cfg.lr_warmup_steps} warmup steps (its stable phase must end at step 1 or later); raise it"
            )
        plan.append(Budget(tokens, steps, decay))
    return plan


def checkpoint_every(plan: list[Budget]) -> int:
    """A checkpoint interval that lands on every branch point (the decay starts of all but the
    largest budget): their greatest common divisor."""
    points = [b.decay_start for b in plan[:-1]]
    return math.gcd(*points) if points else plan[-1].steps


def train_config(base: TrainConfig, cfg: ScalingStudyConfig, budget: Budget, every: int) -> TrainConfig:
    """`base` (the timing study's run config) as the WSD run of `budget`, validated at its end only."""
    optim = base.optim.model_copy(update={
        "lr": cfg.lr, "warmup_steps": cfg.lr_warmup_steps, "schedule": "wsd", "decay_steps": budget.decay_steps,
        "decay_fraction": None, "min_lr_ratio": 0.0,
    })  # fmt: skip
    data = base.data.model_copy(update={"valid_fraction": 0.05})
    ckpt = base.checkpoint.model_copy(update={"every": every, "keep": budget.steps // every + 1})
    return base.model_copy(update={"optim": optim, "data": data, "checkpoint": ckpt, "steps": budget.steps,
                                   "eval_batches": 2, "eval_every": 10**9})  # fmt: skip


def _train(tcfg: TrainConfig, out: str, nproc: int, begin: int) -> tuple[int, float]:
    """Train `tcfg` into `out` unless its last step's checkpoint is there: (steps trained, seconds)."""
    done = checkpoint.complete_steps(os.path.join(out, "checkpoints"))
    if done and done[-1] >= tcfg.steps:
        return 0, 0.0
    start = max([begin, *done])
    t = time.perf_counter()
    launch(tcfg, out, nproc)
    return tcfg.steps - start, time.perf_counter() - t


def _final(out: str, budget: Budget) -> dict[str, Any]:
    rows = [r for r in read_metrics(os.path.join(out, "metrics.jsonl")) if r.get("step") == budget.steps]
    if not rows:
        raise InternalError(f"budget run {out}: no metrics for its last step {budget.steps}")
    return {**asdict(budget), "loss": rows[-1]["loss"], "val_loss": rows[-1].get("val_loss"), "out": out}


def run_budgets(run: StudyRun, cfg: ScalingStudyConfig, base: TrainConfig) -> dict[str, Any]:
    """Every budget of `run` (the model and batch of `base`), by `cfg.budget_mode`: the final losses,
    the optimizer steps this call trained and the seconds it took (launches included)."""
    seq = base.batch.seq_len or 0
    plan = budget_plan(run, cfg, base.batch.global_batch * seq)
    root = os.path.join(cfg.out, "budgets", run.name)
    steps = seconds = 0.0
    points: list[dict[str, Any]] = []
    if cfg.budget_mode == "separate":
        for b in plan:
            out = os.path.join(root, "separate", f"steps-{b.steps}")
            n, s = _train(train_config(base, cfg, b, b.steps), out, run.nproc, 0)
            steps, seconds = steps + n, seconds + s
            points.append(_final(out, b))
    else:
        largest = plan[-1]
        main_out = os.path.join(root, "wsd")
        main = train_config(base, cfg, largest, checkpoint_every(plan)).model_copy(update={"out": main_out})
        n, s = _train(main, main_out, run.nproc, 0)
        steps, seconds = steps + n, seconds + s
        for b in plan[:-1]:
            branch, out = prepare(main, main_out, f"step-{b.decay_start}", b.decay_steps)
            n, s = _train(branch, out, run.nproc, b.decay_start)
            steps, seconds = steps + n, seconds + s
            points.append(_final(out, b))
        points.append(_final(main_out, largest))
    return {"name": run.name, "mode": cfg.budget_mode, "tokens_per_step": base.batch.global_batch * seq,
            "points": points, "steps_trained": int(steps), "seconds": seconds}  # fmt: skip


def run_budget_study(cfg: ScalingStudyConfig, prefix: str, device: str, call: Any = None) -> dict[str, Any]:
    """Every run of `cfg` at every budget; writes budgets.json and budgets.md into cfg.out."""
    step = call or (lambda name, fn, *a: fn(*a))
    bases = [timing_config(run, cfg, prefix, device) for run in cfg.runs]
    for run, base in zip(cfg.runs, bases, strict=True):  # every budget checked before anything trains
        budget_plan(run, cfg, base.batch.global_batch * (base.batch.seq_len or 0))
    runs = [step(f"budgets-{run.name}", run_budgets, run, cfg, base) for run, base in zip(cfg.runs, bases, strict=True)]
    result = {"mode": cfg.budget_mode, "decay_fraction": cfg.decay_fraction, "runs": runs,
              "steps_trained": sum(r["steps_trained"] for r in runs), "seconds": sum(r["seconds"] for r in runs)}  # fmt: skip
    os.makedirs(cfg.out, exist_ok=True)
    with open(os.path.join(cfg.out, "budgets.json"), "w") as f:
        json.dump(versioned(result), f, indent=1)
    with open(os.path.join(cfg.out, "budgets.md"), "w") as f:
        f.write(markdown(result))
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"### Loss at each token budget ({result['mode']}: {result['steps_trained']} optimizer steps trained, "
        f"{result['seconds']:.1f} s)",
        "",
        "| run | tokens | steps | decay steps | loss | validation loss |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["runs"]:
        for p in r["points"]:
            val = f"{p['val_loss']:.4f}" if p["val_loss"] is not None else "n/a"
            lines.append(f"| {r['name']} | {p['steps'] * r['tokens_per_step']} | {p['steps']} | {p['decay_steps']} | {p['loss']:.4f} | {val} |")
    return "\n".join(lines) + "\n"


def artifacts(result: dict[str, Any]) -> View:
    """The dashboard's view of a budget study: one row per (run, budget)."""
    names = ("run", "tokens", "steps", "decay_steps", "loss", "val_loss")
    rows = [[r["name"], p["steps"] * r["tokens_per_step"], p["steps"], p["decay_steps"], round(p["loss"], 4),
             round(p["val_loss"], 4) if p["val_loss"] is not None else None]
            for r in result["runs"] for p in r["points"]]  # fmt: skip
    return View(blocks=(
        Table(columns(*names), rows, key="scaling-study-budgets",
              description=f"Loss at each token budget ({result['mode']}, {result['steps_trained']} steps trained)"),
        Markdown(markdown(result), key="scaling-study-budgets-table"),
    ))  # fmt: skip
