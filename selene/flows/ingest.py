"""`ingest_flow`: the ingest stage as a Prefect flow, with its stats as a table artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from selene.config import IngestConfig
from selene.flows.runtime import run_with_mapper
from selene.ingest.stage import IngestResult, run_ingest, summary_rows


@flow(name="ingest", log_prints=True, validate_parameters=False)
def ingest_flow(out: str, cfg: IngestConfig, force: bool = False) -> dict[str, Any]:
    """Raw files → cleaned, filtered, exactly-deduplicated documents in `out`."""
    result = run_with_mapper(run_ingest, cfg, [out, *(s.glob for s in cfg.sources)], out, force=force)
    publish_ingest_artifacts(result)
    return result.summary()


def publish_ingest_artifacts(result: IngestResult) -> None:
    m = result.manifest
    if not m:
        return
    create_table_artifact(
        table=summary_rows(m),
        key="ingest-stats",
        description=f"Documents per source in `{result.out}`" + (" (reused)" if result.skipped else ""),
    )
    lines = ["| source | reason | documents |", "|---|---|---:|"]
    for src, st in m.stats.per_source.items():
        lines.append(f"| {src} | kept | {st.kept} |")
        lines += [f"| {src} | {r} | {n} |" for r, n in st.removed.items()]
    create_markdown_artifact(
        markdown="### Ingest: every input document, kept or removed with its reason\n\n" + "\n".join(lines),
        key="ingest-reasons",
    )
