"""`ablation_flow`: an ablation as one Prefect flow: each stage a sub-flow (training's live loss
curve included), the reference scoring a task, the comparison an artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from selene.ablate import compare
from selene.ablate.config import AblationConfig
from selene.ablate.run import run_ablation
from selene.errors import Stopped
from selene.flows import command, live
from selene.flows.pipeline import _unless_cancelled as unless_cancelled
from selene.flows.stage import engine_settings, publish, run_flow
from selene.job import checked


def _as_task(name: str, fn: Any, *args: Any) -> Any:
    return task(fn, name=name, cache_policy=NO_CACHE)(*args)


@flow(name="selene-ablation", log_prints=True, validate_parameters=False, flow_run_name="ablation {cfg.name}")
def _ablation_flow(cfg: AblationConfig, where: str) -> dict[str, Any]:
    try:
        with live.watched(with_board=False):  # a Cancel of the ablation's run stops the stage running
            result = run_ablation(cfg, where, unless_cancelled(checked(run_flow)), _as_task)
    except Stopped as e:
        return live.cancelled(e)
    publish(compare.artifacts(result))
    return result


def ablation_flow(cfg: AblationConfig, where: str) -> dict[str, Any]:
    with engine_settings(), live.reraise_stopped():
        return command.call(_ablation_flow, {"cfg": cfg, "where": where})
