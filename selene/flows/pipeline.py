"""`pipeline_flow`: the whole pipeline as one Prefect flow, each stage a sub-flow.

Stages write into ``<run_dir>/<stage>/`` and read the previous stage's directory; a stage whose
manifest matches its inputs and config is skipped (shown as such). Decontamination runs when tasks
are configured, blending when weights or epochs are; the others always. `from_stage` / `until_stage`
run a slice of the pipeline (earlier stages must be complete), `force` redoes the named stages.
A progress artifact follows the run; `<run_dir>/report.md` (also an artifact) ends it.
"""

from __future__ import annotations

import os
from typing import Any, cast
from uuid import UUID

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, update_progress_artifact

from selene.config import PipelineConfig, TrainConfig
from selene.errors import ConfigError
from selene.flows.blend import blend_flow
from selene.flows.decontam import decontam_flow
from selene.flows.dedup import dedup_flow
from selene.flows.eval import eval_flow
from selene.flows.ingest import ingest_flow
from selene.flows.runtime import runner_for
from selene.flows.tokenization import tokenize_flow
from selene.flows.train import train_flow
from selene.report import build_report, write_report

STAGES = ("ingest", "dedup", "decontaminate", "blend", "tokenize", "train", "eval")


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


@flow(name="selene-pipeline", log_prints=True, validate_parameters=False)
def pipeline_flow(
    cfg: PipelineConfig,
    force: list[str] | None = None,
    from_stage: str | None = None,
    until_stage: str | None = None,
) -> dict[str, Any]:
    force = list(force or [])
    run = selected(cfg, from_stage, until_stage, force)
    stages = active_stages(cfg)
    progress = cast(
        UUID, create_progress_artifact(progress=0.0, key="pipeline-progress", description=f"{cfg.name}: stages done")
    )  # a coroutine only when called from async code
    results: dict[str, Any] = {}
    for i, stage in enumerate(stages):
        if stage in run:
            results[stage] = run_stage(stage, cfg, stage in force)
        update_progress_artifact(artifact_id=progress, progress=100.0 * (i + 1) / len(stages))
    report = write_report(cfg.run_dir, cfg.name)
    create_markdown_artifact(markdown=build_report(cfg.run_dir, cfg.name), key="run-report",
                             description=f"selene run report: {report}")
    return results


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


def run_stage(stage: str, cfg: PipelineConfig, force: bool) -> Any:
    """Run one stage of `cfg` as its sub-flow, on its ``<run_dir>/<stage>`` directory."""
    if stage == "ingest":
        return ingest_flow.with_options(task_runner=runner_for(cfg.ingest))(cfg.stage_dir("ingest"), cfg.ingest, force=force)
    data_flows: dict[str, tuple[Any, Any]] = {
        "dedup": (dedup_flow, cfg.dedup),
        "decontaminate": (decontam_flow, cfg.decontaminate),
        "blend": (blend_flow, cfg.blend),
        "tokenize": (tokenize_flow, cfg.tokenize),
    }
    if stage in data_flows:
        flow_fn, sub = data_flows[stage]
        return flow_fn.with_options(task_runner=runner_for(sub))(stage_input(cfg, stage), cfg.stage_dir(stage), sub, force=force)
    if stage == "train":
        train_cfg = train_config(cfg)
        return train_flow(train_cfg, train_cfg.out or cfg.stage_dir("train"), train_cfg.nproc_per_node, force=force)
    if stage == "eval":
        return eval_flow(cfg.eval, latest_checkpoint(cfg), cfg.stage_dir("eval"), force=force)
    raise ConfigError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
