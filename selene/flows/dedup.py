"""`dedup_flow`: MinHash LSH near-duplicate removal as a Prefect flow, with its artifacts."""

from __future__ import annotations

import base64
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from selene.config import DedupConfig
from selene.dedup.stage import DedupResult, run_dedup
from selene.flows.runtime import run_with_mapper
from selene.io import fs


@flow(name="dedup", log_prints=True, validate_parameters=False)
def dedup_flow(inp: str, out: str, cfg: DedupConfig, force: bool = False) -> dict[str, Any]:
    """Documents in `inp` → `out` without near-duplicates (Jaccard >= threshold)."""
    result = run_with_mapper(run_dedup, cfg, [inp, out], inp, out, force=force)
    publish_dedup_artifacts(result, cfg)
    return result.summary()


def publish_dedup_artifacts(result: DedupResult, cfg: DedupConfig) -> None:
    m = result.manifest
    if not m:
        return
    st = m.stats
    create_table_artifact(
        table=[{"source": s, "in": v.documents_in, "kept": v.kept, "duplicates": v.removed.get("near_dup", 0)} for s, v in st.per_source.items()],
        key="dedup-stats",
        description=f"Near-duplicates removed in `{result.out}` (threshold {cfg.threshold})",
    )
    plot = fs.join(result.out, "s_curve.svg")
    if fs.exists(plot):
        svg = base64.b64encode(fs.read_bytes(plot)).decode()
        curve = f"![S-curve](data:image/svg+xml;base64,{svg})"
    else:
        curve = ""
    shape = m.lsh
    create_markdown_artifact(
        key="dedup-s-curve",
        markdown=(
            f"### LSH: {shape.bands} bands × {shape.rows} rows, threshold {cfg.threshold}\n\n"
            f"P(candidate | J) = 1 − (1 − J^{shape.rows})^{shape.bands}\n\n{curve}\n"
        ),
    )
    clusters = fs.join(result.out, "clusters.md")
    if fs.exists(clusters):
        create_markdown_artifact(key="dedup-clusters", markdown=fs.read_text(clusters))
