"""The ingest stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.ingest.config import IngestConfig
from selene.ingest.stage import preflight


def check(inp: str | None, out: str, cfg: IngestConfig) -> None:
    """Inputs exist and have known formats, `out` is writable: before any work starts."""
    preflight(out, cfg)
