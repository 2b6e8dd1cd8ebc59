"""The ingest stage's checks before it runs and its dashboard artifacts (see `selene.registry`)."""

from __future__ import annotations

from typing import Any

from selene.artifacts import Artifact, Markdown, Table
from selene.ingest.config import IngestConfig
from selene.ingest.manifest import IngestManifest
from selene.ingest.stage import preflight, summary_rows
from selene.io.dataset import StageResult


def check(inp: str | None, out: str, cfg: IngestConfig) -> None:
    """Inputs exist and have known formats, `out` is writable: before any work starts."""
    preflight(out, cfg)


def artifacts(result: StageResult[IngestManifest], cfg: Any) -> list[Artifact]:
    m = result.manifest
    if not m:
        return []
    lines = ["| source | reason | documents |", "|---|---|---:|"]
    for src, st in m.stats.per_source.items():
        lines.append(f"| {src} | kept | {st.kept} |")
        lines += [f"| {src} | {r} | {n} |" for r, n in st.removed.items()]
    return [
        Table("ingest-stats", summary_rows(m), f"Documents per source in `{result.out}`" + (" (reused)" if result.skipped else "")),
        Markdown("ingest-reasons", "### Ingest: every input document, kept or removed with its reason\n\n" + "\n".join(lines)),
    ]
