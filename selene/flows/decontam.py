"""`decontam_flow`: evaluation-task n-grams removed from a dataset, with a per-task report artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact

from selene.config import DecontamConfig
from selene.decontam.stage import report_rows, run_decontam
from selene.flows.runtime import mapper_for


@flow(name="decontaminate", log_prints=True, validate_parameters=False)
def decontam_flow(inp: str, out: str, cfg: DecontamConfig, force: bool = False) -> dict[str, Any]:
    """Documents in `inp` → `out` with every task n-gram (± margin) cut out."""
    mapper = mapper_for(cfg.executor, cfg.workers, [inp, out, *cfg.tasks])
    try:
        result = run_decontam(inp, out, cfg, mapper=mapper, force=force)
    finally:
        mapper.close()
    if result.manifest:
        create_table_artifact(
            table=report_rows(result.manifest),
            key="decontam-report",
            description=f"Task n-grams found in `{inp}` and what was cut (n = overlap length in words)",
        )
    return {"out": result.out, "skipped": result.skipped, "manifest": result.manifest}
