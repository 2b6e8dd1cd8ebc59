"""`scaling_study_flow`: a scaling study as a Prefect flow; each run a task, the comparison as artifacts."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from selene.config import ScalingStudyConfig, StudyRun
from selene.plan import study
from selene.plan.devices import DeviceSpec


@task(name="probe-device", cache_policy=NO_CACHE)
def probe_task(cfg: ScalingStudyConfig) -> dict[str, Any]:
    return dataclasses.asdict(study.device_spec(cfg))


@task(name="synthetic-tokens", cache_policy=NO_CACHE)
def data_task(cfg: ScalingStudyConfig) -> str:
    return study.synthetic_tokens(cfg.out, cfg)


@task(name="study-run", cache_policy=NO_CACHE, task_run_name="run-{run.name}")
def run_task(run: StudyRun, cfg: ScalingStudyConfig, prefix: str, device: str) -> dict[str, Any]:
    return study.run_one(run, cfg, prefix, device)


@flow(name="scaling-study", log_prints=True, validate_parameters=False)
def scaling_study_flow(cfg: ScalingStudyConfig) -> dict[str, Any]:
    """Short runs one after another (each uses the whole device), then calibration and artifacts."""
    spec = DeviceSpec(**probe_task(cfg))
    prefix = data_task(cfg)
    device = study.resolve_device(cfg)
    measured = [run_task(run, cfg, prefix, device) for run in cfg.runs]
    result = study.finish(cfg, spec, measured)
    create_table_artifact(
        key="scaling-study",
        table=[
            {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items() if k != "work_per_layer_flops"}
            for r in result["runs"]
        ],
        description=f"Scaling study on {spec.name}: measured vs predicted step time, TFLOP/s and memory",
    )
    with open(f"{cfg.out}/predicted_vs_measured.svg") as f:
        svg = f.read()
    create_markdown_artifact(
        key="scaling-study-plot",
        markdown=study.markdown(result)
        + f"\n![predicted vs measured](data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()})\n",
    )
    return result
