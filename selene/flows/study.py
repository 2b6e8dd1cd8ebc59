"""`scaling_study_flow`: a scaling study as a Prefect flow; each step a task, the comparison as artifacts."""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from selene.errors import Stopped
from selene.executor import events
from selene.flows import command, live
from selene.flows.stage import engine_settings, publish
from selene.plan import study
from selene.plan.config import ScalingStudyConfig


def _as_task(name: str, fn: Any, *args: Any) -> Any:
    """The study's step `name` as a task; refused once a Cancel came (the step at hand finishes)."""
    reason = events.stop_requested()
    if reason is not None:
        raise Stopped(f"cancelled ({reason}) before the study's {name} step")
    return task(fn, name=name, cache_policy=NO_CACHE)(*args)


@flow(name="scaling-study", log_prints=True, validate_parameters=False)
def _scaling_study_flow(cfg: ScalingStudyConfig) -> dict[str, Any]:
    try:
        with live.watched(with_board=False):
            result = study.run_study(cfg, _as_task)
    except Stopped as e:
        return live.cancelled(e)
    publish(study.artifacts(cfg, result))
    return result


def scaling_study_flow(cfg: ScalingStudyConfig) -> dict[str, Any]:
    with engine_settings(), live.reraise_stopped():
        return command.call(_scaling_study_flow, {"cfg": cfg})
