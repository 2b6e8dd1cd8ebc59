"""The pipeline: the active stages of a config, in order, each into ``<run_dir>/<stage>/``.

Prefect-free: `run_pipeline` takes the function that runs one `Job`, so the same loop runs in this
process or as the body of the Prefect pipeline flow (each stage then a sub-flow). Stages read the
previous active stage's directory; a stage whose manifest matches its inputs and config is skipped.
Decontamination runs when tasks are configured, blending when weights or epochs are, the others
always. `from_stage` / `until_stage` run a slice (earlier stages must be complete), `force` redoes
the named stages. Training, which has no manifest, is moved aside to ``train.previous-<time>`` and
redone when the token data changed under its checkpoints (`selene.train.renew`).
``<run_dir>/report.md`` ends every run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from selene import guard, registry
from selene.config.pipeline import PipelineConfig
from selene.errors import ConfigError, InternalError
from selene.job import Job
from selene.report import write_report

RunJob = Callable[[Job, bool], Any]
StageDone = Callable[[str, Any], None]
_stage_done: list[StageDone] = []


def set_stage_done_hook(hook: StageDone | None) -> None:
    """Called as (stage, result) as each stage of `run_pipeline` finishes: the command prints the
    stage's summary then, in its place before the next stage's lines, not all of them at the end."""
    _stage_done.clear()
    if hook is not None:
        _stage_done.append(hook)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def active_stages(cfg: PipelineConfig) -> list[str]:
    """The stages this config runs, in order (a stage's `active` rule decides, e.g. decontamination
    runs when tasks are configured)."""
    return [s.name for s in registry.STAGES if s.active is None or s.active(cfg.section(s.name))]


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


def stage_output(cfg: PipelineConfig, stage: str) -> str:
    """Where `stage` writes: its section's own `out` where it has one (training), else
    ``<run_dir>/<stage>``."""
    return getattr(cfg.section(stage), "out", None) or cfg.stage_dir(stage)


def stage_input(cfg: PipelineConfig, stage: str) -> str:
    """What a stage reads: the previous active stage's output (for eval, the training directory,
    whose latest checkpoint it evaluates)."""
    stages = active_stages(cfg)
    if stage not in stages:
        raise ConfigError(f"{stage!r} is not a stage of this pipeline; its stages are {', '.join(stages)}")
    i = stages.index(stage)
    if i == 0:
        raise InternalError(f"stage {stage!r} reads the configured sources, not a stage directory")
    return stage_output(cfg, stages[i - 1])


def job(cfg: PipelineConfig, stage: str) -> Job:
    """Stage `stage` of `cfg`: its section, what it reads, where it writes, the run's executor."""
    spec = registry.get(stage)
    inp = None if spec.reads == "sources" else stage_input(cfg, stage)
    return Job(stage, inp, stage_output(cfg, stage), cfg.section(stage), cfg.executor)


def inputs(cfg: PipelineConfig) -> list[str]:
    """What a pipeline reads from outside its run: what each active stage's settings name beyond
    its input (the sources, task files, a given tokenizer ...)."""
    return list(dict.fromkeys(p for stage in active_stages(cfg) for p in cfg.section(stage).extra_inputs()))


def outputs(cfg: PipelineConfig) -> list[str]:
    """Where a pipeline writes: its run dir, and a stage's own `out` outside it (training)."""
    run_dir = guard.place(cfg.run_dir)
    outs = [cfg.run_dir]
    for stage in active_stages(cfg):
        out = stage_output(cfg, stage)
        if guard.relation(guard.place(out), run_dir) not in ("is", "is inside"):
            outs.append(out)
    return outs


def claim(cfg: PipelineConfig, say: Callable[[str], None] | None = None) -> Any:
    """`selene.guard.claim` of the run: no output in the sources, none another command uses."""
    return guard.claim(f"selene run (pipeline {cfg.name})", inputs(cfg), outputs(cfg), say)


def run_pipeline(
    cfg: PipelineConfig,
    run_job: RunJob,
    force: list[str] | None = None,
    from_stage: str | None = None,
    until_stage: str | None = None,
    progress: Callable[[float], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the selected stages with `run_job`, then write ``<run_dir>/report.md``; stage → result.
    A stage's `renew` hook runs first unless it is forced (training on changed data: its old run is
    moved aside); `say` gets its line (default: standard error)."""
    force = list(force or [])
    run = selected(cfg, from_stage, until_stage, force)
    stages = active_stages(cfg)
    results: dict[str, Any] = {}
    with claim(cfg):  # a no-op under `Runtime.pipeline`, which claimed before Prefect started
        for i, stage in enumerate(stages):
            if stage in run:
                j = job(cfg, stage)
                renew = registry.get(stage).renew
                if renew and stage not in force:
                    renew.load()(j.inp, j.out, j.cfg, say or _say)
                results[stage] = run_job(j, stage in force)
                for hook in _stage_done:
                    hook(stage, results[stage])
            if progress is not None:
                progress(100.0 * (i + 1) / len(stages))
        write_report(cfg.run_dir, cfg.name)
    return results
