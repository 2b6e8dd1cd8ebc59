"""`blend_flow`: per-source weights/epochs → a shuffled mix, with requested vs realised as an artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact

from selene.blend.stage import report_rows, run_blend
from selene.config import BlendConfig
from selene.flows.runtime import run_with_mapper


@flow(name="blend", log_prints=True, validate_parameters=False)
def blend_flow(inp: str, out: str, cfg: BlendConfig, force: bool = False) -> dict[str, Any]:
    """Documents in `inp` → the blended, shuffled documents in `out`."""
    result = run_with_mapper(run_blend, cfg, [inp, out], inp, out, force=force)
    if result.manifest:
        create_table_artifact(
            table=report_rows(result.manifest),
            key="blend-mix",
            description=f"Requested vs realised mix in `{out}` (seed {cfg.seed})",
        )
    return result.summary()
