"""Prefect deployments of the pipeline and of each stage, served from one process or run by a work pool.

Deployment parameters must be JSON, so the deployed flows are thin wrappers that take the *path* of
a pipeline YAML file (not the pydantic model), load it with :func:`selene.config.load_pipeline_config`
and run the same flows, on the same ``<run_dir>/<stage>`` directories, as :func:`pipeline_flow`.

- ``serve_pipeline(path)`` serves ``selene-pipeline/<config name>`` and ``selene-<stage>/<config name>``
  for every stage from this process (``prefect.serve``); trigger them from the UI, ``prefect deployment
  run`` or ``run_deployment``.
- ``prefect deploy --all`` (``prefect.yaml`` at the repository root) registers the same wrappers for
  the ``selene`` process work pool; ``prefect worker start --pool selene`` runs them.

Relative paths inside the config (``run_dir``, source globs, task files) are resolved against the
working directory of the process that runs the flow: the serving process, or the repository root for
work-pool runs (the ``set_working_directory`` pull step).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from prefect import flow
from prefect.deployments.runner import EntrypointType, RunnerDeployment

from selene import registry
from selene.config.pipeline import PipelineConfig, load_pipeline_config
from selene.errors import ConfigError, Stopped
from selene.flows import command
from selene.flows.pipeline import pipeline_flow
from selene.flows.stage import run_flow
from selene.pipeline import active_stages, claim, job


def _load(config_path: str) -> PipelineConfig:
    return load_pipeline_config(config_path)


# ------------------------------------------------------------------------------ wrapper flows


@flow(name="selene-pipeline", log_prints=True)
def run_pipeline_from_file(
    config_path: str,
    force: list[str] | None = None,
    from_stage: str | None = None,
    until_stage: str | None = None,
) -> dict[str, Any]:
    """The whole pipeline (ingest → ... → eval), or the slice `from_stage`..`until_stage`, on the
    pipeline config file `config_path`; `force` names the stages to redo."""
    cfg = _load(config_path)
    return _cancelled_cleanly(
        lambda: pipeline_flow(cfg, force=force, from_stage=from_stage, until_stage=until_stage)
    )


def _cancelled_cleanly(run: Callable[[], Any]) -> Any:
    """`run()`; a stage that stopped cleanly (a Cancel of this deployment's run: the cancel watch's
    request, or the SIGTERM Prefect's runner sends) ends the run Cancelled with the stage's line
    (training: its step and checkpoint), not Failed with a traceback."""
    from prefect.states import Cancelled

    try:
        return run()
    except Stopped as e:
        return Cancelled(message=str(e))


def _stage_wrapper(stage: registry.Stage) -> Any:
    def run_from_file(config_path: str, force: bool = False) -> Any:
        cfg = _load(config_path)
        with claim(cfg):  # the run's directory, as a pipeline run holds it: no source inside, no other writer
            return _cancelled_cleanly(lambda: run_flow(job(cfg, stage.name), force).summary())

    run_from_file.__name__ = run_from_file.__qualname__ = f"run_{stage.name}_from_file"
    reads = (
        "the config's sources"
        if stage.reads == "sources"
        else f"its {stage.reads} (the previous stage's output)"
    )
    run_from_file.__doc__ = (
        f"{stage.help} Reads {reads}; writes its {stage.writes} to `<run_dir>/{stage.name}`."
    )
    return flow(name=f"selene-{stage.name}", log_prints=True)(run_from_file)


@cache
def stage_file_flow(name: str) -> Any:
    """The wrapper flow of registered stage `name` (deployment `selene-<stage>/<config name>`)."""
    return _stage_wrapper(registry.get(name))


def __getattr__(attr: str) -> Any:
    """``run_<stage>_from_file``: the entrypoints of prefect.yaml, one per registered stage."""
    name = attr.removeprefix("run_").removesuffix("_from_file")
    if attr.startswith("run_") and attr.endswith("_from_file") and name in registry.BY_NAME:
        return stage_file_flow(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


# -------------------------------------------------------------------------------- deployments


def build_deployments(config_path: str, *, only: Sequence[str] | None = None) -> list[RunnerDeployment]:
    """The deployments of `config_path`: `pipeline` and every stage it runs, or the names in `only`.

    The config is loaded (and so validated) here, so a bad file fails before anything is served.
    """
    path = os.path.abspath(config_path)
    cfg = _load(path)
    if cfg.name == command.DEPLOYMENT:
        raise ConfigError(
            f"{config_path}: name {cfg.name!r} is the deployment that selene commands' own runs come from; "
            "choose another name for the served deployments"
        )
    stages = registry.NAMES
    names = (
        list(only) if only is not None else ["pipeline", *active_stages(cfg)]
    )  # a stage the config leaves off has nothing to run
    unknown = sorted(set(names) - {"pipeline", *stages})
    if unknown:
        raise ConfigError(
            f"unknown deployment(s) {', '.join(unknown)}; choose from pipeline, {', '.join(stages)}"
        )
    out: list[RunnerDeployment] = []
    for name in names:
        fl: Any = run_pipeline_from_file if name == "pipeline" else stage_file_flow(name)
        out.append(
            fl.to_deployment(
                name=cfg.name,
                parameters={"config_path": path},
                description=f"{fl.description} Config: {path} (run_dir {cfg.run_dir}).",
                tags=["selene", name, f"config:{cfg.name}"],
                entrypoint_type=EntrypointType.MODULE_PATH,
            )
        )
    return out


def serve_pipeline(
    config_path: str,
    *,
    limit: int | None = None,
    run_once_for_tests: bool = False,
    only: Sequence[str] | None = None,
) -> None:
    """Serve `selene-pipeline/<name>` and `selene-<stage>/<name>` for the config file, until interrupted.

    limit: the most flow runs executed at once by this process. only: a subset of ``pipeline`` and
    the stage names. run_once_for_tests: register the deployments, execute the runs already due
    (one poll of the scheduler) and return instead of serving forever.
    """
    deployments = build_deployments(config_path, only=only)
    if not run_once_for_tests:
        from prefect import serve

        serve(*deployments, limit=limit)
        return
    from prefect.runner import Runner

    runner = Runner(limit=limit, pause_on_shutdown=False)
    for d in deployments:
        runner.add_deployment(d)
    asyncio.run(runner.start(run_once=True))
