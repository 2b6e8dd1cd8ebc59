"""`scaling_study_flow`: a scaling study as a Prefect flow; each step a task, the comparison as artifacts."""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from selene.flows import command
from selene.flows.stage import engine_settings, publish
from selene.plan import study
from selene.plan.config import ScalingStudyConfig


def _as_task(name: str, fn: Any, *args: Any) -> Any:
    return task(fn, name=name, cache_policy=NO_CACHE)(*args)


@flow(name="scaling-study", log_prints=True, validate_parameters=False)
def _scaling_study_flow(cfg: ScalingStudyConfig) -> dict[str, Any]:
    result = study.run_study(cfg, _as_task)
    publish(study.artifacts(cfg, result))
    return result


def scaling_study_flow(cfg: ScalingStudyConfig) -> dict[str, Any]:
    with engine_settings():
        return command.call(_scaling_study_flow, {"cfg": cfg})
