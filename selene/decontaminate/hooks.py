"""The decontaminate stage's checks before it runs and its dashboard artifacts (see `selene.registry`)."""

from __future__ import annotations

from selene.artifacts import Artifact, Table
from selene.decontaminate.config import DecontaminateConfig
from selene.decontaminate.manifest import DecontaminateManifest
from selene.decontaminate.stage import preflight, report_rows
from selene.errors import UsageError
from selene.io.dataset import StageResult


def check(inp: str, out: str, cfg: DecontaminateConfig) -> None:
    if not cfg.tasks:
        raise UsageError("no evaluation tasks: give --tasks PATH (a jsonl file or an lm-eval task directory), "
                         "or decontaminate.tasks in the config")
    preflight(inp, out, cfg)


def artifacts(result: StageResult[DecontaminateManifest], cfg: DecontaminateConfig) -> list[Artifact]:
    if not result.manifest:
        return []
    return [Table("decontam-report", report_rows(result.manifest),
                  f"Task n-grams found in `{result.out}`'s input and what was cut (n = overlap length in words)")]
