"""The pipeline: the active stages of a config, in order, each into ``<run_dir>/<stage>/``.

Prefect-free: `run_pipeline` takes the function that runs one `Job`, so the same loop runs in this
process or as the body of the Prefect pipeline flow (each stage then a sub-flow). Stages read the
previous active stage's directory; a stage whose manifest matches its inputs and config is skipped.
Decontamination runs when tasks are configured, blending when weights or epochs are, the others
always. `from_stage` / `until_stage` run a slice (earlier stages must be complete), `force` redoes
the named stages. ``<run_dir>/report.md`` ends every run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from selene.config import PipelineConfig, TrainConfig
from selene.errors import ConfigError
from selene.registry import NAMES as STAGES
from selene.runner import Job

RunJob = Callable[[Job, bool], Any]


def active_stages(cfg: PipelineConfig) -> list[str]:
    """The stages this config runs, in order."""
    skip = set()
    if not cfg.decontaminate.tasks:
        skip.add("decontaminate")
    if not (cfg.blend.weights or cfg.blend.epochs):
        skip.add("blend")
    return [s for s in STAGES if s not in skip]


def selected(cfg: PipelineConfig, from_stage: str | None, until_stage: str | None, force: list[str]) -> list[str]:
    stages = active_stages(cfg)
    for name, value in (("--from", from_stage), ("--until", until_stage), *(("--force", f) for f in force)):
        if value is not None and value not in stages:
            raise ConfigError(f"{name} {value!r}: not a stage of this pipeline; its stages are {', '.join(stages)}")
    start = stages.index(from_stage) if from_stage else 0
    end = stages.index(until_stage) + 1 if until_stage else len(stages)
    if start >= end:
        raise ConfigError(f"--from {from_stage} comes after --until {until_stage}")
    return stages[start:end]


def stage_input(cfg: PipelineConfig, stage: str) -> str:
    """The directory a data stage reads: the previous active stage's output."""
    stages = active_stages(cfg)
    if stage not in stages:
        raise ConfigError(f"{stage!r} is not a stage of this pipeline; its stages are {', '.join(stages)}")
    i = stages.index(stage)
    if i == 0:
        raise ValueError(f"stage {stage!r} reads the configured sources, not a stage directory")
    return cfg.stage_dir(stages[i - 1])


def train_config(cfg: PipelineConfig) -> TrainConfig:
    """The train section with the tokenize output as its data when it names none."""
    train_cfg = cfg.train.model_copy(deep=True)
    if not train_cfg.data.prefixes:
        train_cfg.data.prefixes = [f"{cfg.stage_dir('tokenize')}/{cfg.tokenize.prefix}"]
    return train_cfg


def latest_checkpoint(cfg: PipelineConfig) -> str:
    """`eval.checkpoint`, or the last complete checkpoint the train stage wrote."""
    if cfg.eval.checkpoint:
        return cfg.eval.checkpoint
    from selene.train import checkpoint

    root = os.path.join(train_config(cfg).out or cfg.stage_dir("train"), "checkpoints")
    steps = checkpoint.complete_steps(root)
    if not steps:
        raise ConfigError(f"eval: no complete checkpoint under {root}; run the train stage or set eval.checkpoint")
    return checkpoint.step_dir(root, steps[-1])


def job(cfg: PipelineConfig, stage: str) -> Job:
    """Stage `stage` of `cfg` on its ``<run_dir>/<stage>`` directory (made when the stage is due:
    the eval job names the checkpoint training has just written)."""
    if stage == "ingest":
        return Job("ingest", None, cfg.stage_dir("ingest"), cfg.ingest, cfg.executor)
    if stage == "train":
        tc = train_config(cfg)
        return Job("train", cfg.stage_dir("tokenize"), tc.out or cfg.stage_dir("train"), tc, cfg.executor)
    if stage == "eval":
        return Job("eval", latest_checkpoint(cfg), cfg.stage_dir("eval"), cfg.eval, cfg.executor)
    if stage not in STAGES:
        raise ConfigError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
    return Job(stage, stage_input(cfg, stage), cfg.stage_dir(stage), getattr(cfg, stage), cfg.executor)


def run_pipeline(
    cfg: PipelineConfig,
    run_job: RunJob,
    force: list[str] | None = None,
    from_stage: str | None = None,
    until_stage: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Run the selected stages with `run_job`, then write ``<run_dir>/report.md``; stage → result."""
    from selene.report import write_report

    force = list(force or [])
    run = selected(cfg, from_stage, until_stage, force)
    stages = active_stages(cfg)
    results: dict[str, Any] = {}
    for i, stage in enumerate(stages):
        if stage in run:
            results[stage] = run_job(job(cfg, stage), stage in force)
        if progress is not None:
            progress(100.0 * (i + 1) / len(stages))
    write_report(cfg.run_dir, cfg.name)
    return results
