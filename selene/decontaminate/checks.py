"""The decontaminate stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.decontaminate.config import DecontaminateConfig
from selene.decontaminate.stage import preflight
from selene.errors import UsageError


def check(inp: str, out: str, cfg: DecontaminateConfig) -> None:
    if not cfg.tasks:
        raise UsageError("no evaluation tasks: give --tasks PATH (a jsonl file or an lm-eval task directory), "
                         "or decontaminate.tasks in the config")
    preflight(inp, out, cfg)
