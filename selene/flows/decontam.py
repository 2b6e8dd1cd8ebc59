"""`decontam_flow`: evaluation-task n-grams removed from a dataset, with a per-task report artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact

from selene.config import DecontamConfig
from selene.decontam.stage import report_rows, run_decontam
from selene.flows.runtime import run_with_mapper


@flow(name="decontaminate", log_prints=True, validate_parameters=False)
def decontam_flow(inp: str, out: str, cfg: DecontamConfig, force: bool = False) -> dict[str, Any]:
    """Documents in `inp` → `out` with every task n-gram (± margin) cut out."""
    result = run_with_mapper(run_decontam, cfg, [inp, out, *cfg.tasks], inp, out, force=force)
    if result.manifest:
        create_table_artifact(
            table=report_rows(result.manifest),
            key="decontam-report",
            description=f"Task n-grams found in `{inp}` and what was cut (n = overlap length in words)",
        )
    return result.summary()
