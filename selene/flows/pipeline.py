"""`pipeline_flow`: the whole pipeline as one Prefect flow, each stage a sub-flow.

The loop is `selene.pipeline.run_pipeline`, the same one a run without Prefect uses; here each
stage runs as its registered flow (`selene.flows.stage`). A progress artifact follows the run and
``<run_dir>/report.md`` ends it, also as an artifact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast
from uuid import UUID

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, update_progress_artifact

from selene.config.pipeline import PipelineConfig
from selene.errors import Stopped
from selene.executor import events
from selene.flows import command, live
from selene.flows.stage import engine_settings, run_flow
from selene.job import Job, checked
from selene.pipeline import run_pipeline
from selene.report import build_report


@flow(name="selene-pipeline", log_prints=True, validate_parameters=False, flow_run_name="pipeline {cfg.name}")
def _pipeline_flow(
    cfg: PipelineConfig,
    force: list[str] | None = None,
    from_stage: str | None = None,
    until_stage: str | None = None,
) -> dict[str, Any]:
    progress = cast(
        UUID,
        create_progress_artifact(
            progress=0.0, key="pipeline-progress", description=f"{cfg.name}: stages done"
        ),
    )  # a coroutine only when called from async code

    def advance(done: float) -> None:
        update_progress_artifact(artifact_id=progress, progress=done)

    try:
        with live.watched(with_board=False):  # a Cancel of the pipeline's run stops the stage running
            results = run_pipeline(cfg, _unless_cancelled(checked(run_flow)), force, from_stage, until_stage,
                                   progress=advance)  # fmt: skip
    except Stopped as e:
        return live.cancelled(e)
    create_markdown_artifact(
        markdown=build_report(cfg.run_dir, cfg.name), key="run-report",
        description=f"selene run report: {cfg.run_dir}/report.md",
    )  # fmt: skip
    return results


def _unless_cancelled(run: Callable[[Job, bool], Any]) -> Callable[[Job, bool], Any]:
    """`run`, refused once a Cancel came: a stage that has no stop of its own (the data stages) ends,
    and the next one does not start."""

    def run_job(job: Job, force: bool) -> Any:
        reason = events.stop_requested()
        if reason is not None:
            raise Stopped(f"cancelled ({reason}) before the {job.stage} stage")
        return run(job, force)

    return run_job


def pipeline_flow(
    cfg: PipelineConfig,
    force: list[str] | None = None,
    from_stage: str | None = None,
    until_stage: str | None = None,
) -> dict[str, Any]:
    """The pipeline (or the slice `from_stage`..`until_stage`) as one flow run; stage → result."""
    with engine_settings(), live.reraise_stopped():
        return command.call(
            _pipeline_flow, {"cfg": cfg, "force": force, "from_stage": from_stage, "until_stage": until_stage}
        )
