"""`pipeline_flow`: the whole pipeline as one Prefect flow, each stage a sub-flow.

Stages write into ``<run_dir>/<stage>/``; a stage whose manifest matches its inputs and config is
skipped. Later stages (dedup, decontaminate, blend, tokenize, train, eval) join here as they land.
"""

from __future__ import annotations

from typing import Any

from prefect import flow

from selene.config import PipelineConfig
from selene.flows.ingest import ingest_flow
from selene.flows.runtime import task_runner


@flow(name="selene-pipeline", log_prints=True, validate_parameters=False)
def pipeline_flow(cfg: PipelineConfig, force: bool = False) -> dict[str, Any]:
    ingest = ingest_flow.with_options(task_runner=task_runner(cfg.ingest.workers))
    return {"ingest": ingest(cfg.stage_dir("ingest"), cfg.ingest, force=force)}
