"""The dedup stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.dedup.config import DedupConfig
from selene.dedup.keep import check_priority, check_score_key
from selene.dedup.stage import input_dataset
from selene.io import fs


def check(inp: str, out: str, cfg: DedupConfig) -> None:
    """Before the command claims its output: the refusals that need only the input (the writability
    probe creates the output directory, which a refusal after it would leave behind)."""
    m_in = input_dataset(inp)
    if cfg.strict:  # only the error: the warning comes once, from the stage
        check_priority(m_in, cfg)
    check_score_key(inp, m_in, cfg)
    fs.check_writable(out)
