"""The blend stage's checks before it runs and its dashboard artifacts (see `selene.registry`)."""

from __future__ import annotations

from selene.artifacts import Artifact, Markdown, Table
from selene.blend.stage import manifest_warnings, report_rows
from selene.config import BlendConfig
from selene.errors import UsageError
from selene.io import dataset, fs
from selene.io.dataset import StageResult
from selene.manifest import BlendManifest


def check(inp: str, out: str, cfg: BlendConfig) -> None:
    if not cfg.weights and not cfg.epochs:
        raise UsageError("give --weights SRC=W,... or --epochs SRC=E,... (or blend.weights/epochs in the config)")
    dataset.require_documents(inp, "blend")
    fs.check_writable(out)


def artifacts(result: StageResult[BlendManifest], cfg: BlendConfig) -> list[Artifact]:
    if not result.manifest:
        return []
    out: list[Artifact] = [
        Table("blend-mix", report_rows(result.manifest), f"Requested vs realised mix in `{result.out}` (seed {cfg.seed})")
    ]
    warnings = manifest_warnings(result.manifest)
    if warnings:
        out.append(Markdown("blend-warnings", "\n".join(f"- {w}" for w in warnings), "What the blend plan warned of"))
    return out
