"""The spans stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.spans.config import SpansConfig
from selene.spans.stage import preflight


def check(inp: str, out: str, cfg: SpansConfig) -> None:
    """Before the command claims its output: a unit given, the input finished, every earlier output
    (--against) a finished spans output with an index of the same settings, the output writable."""
    preflight(inp, out, cfg)
