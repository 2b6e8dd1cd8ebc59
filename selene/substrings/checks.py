"""The substrings stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.substrings.config import SubstringsConfig
from selene.substrings.stage import preflight


def check(inp: str, out: str, cfg: SubstringsConfig) -> None:
    """Before the command claims its output: the input, min_length, the tokenizer, the earlier outputs."""
    preflight(inp, out, cfg)
