"""The blend stage's checks before it runs, its dashboard artifacts and its part of the run report
(see `selene.registry`)."""

from __future__ import annotations

import os

from rich.console import Console
from rich.table import Table as RichTable

from selene.artifacts import Artifact, Markdown, Table
from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendManifest
from selene.blend.stage import manifest_warnings, report_rows
from selene.errors import UsageError
from selene.io import dataset, fs
from selene.io.dataset import StageResult
from selene.summary import documents


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


def report_section(out: str, run_dir: str) -> tuple[str, list[str]]:
    """The run report's blend section: each source's requested and realised share."""
    m = dataset.read_manifest(out) if os.path.isdir(out) else None
    if not isinstance(m, BlendManifest):
        return "Blend: requested vs realised", ["(no blend stage in this run)"]
    rows = report_rows(m)
    if not rows:
        return "Blend: requested vs realised", []
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")
    return "Blend: requested vs realised", lines


def summary(result: StageResult[BlendManifest], console: Console) -> None:
    """The documents table, then the requested and realised mix (and, for a reused output, the
    warnings its plan gave: a run says them on stderr as it plans)."""

    def mix() -> None:
        assert result.manifest is not None
        rows = report_rows(result.manifest)
        table = RichTable(title="blend: requested vs realised")
        for col in rows[0] if rows else []:
            table.add_column(col, justify="left" if col == "source" else "right")
        for r in rows:
            table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()))
        console.print(table)
        for warning in manifest_warnings(result.manifest) if result.skipped else []:
            console.print(f"[yellow]warning:[/yellow] blend: {warning}", highlight=False)

    documents(result, console, extra=mix)
