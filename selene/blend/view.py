"""What the blend stage shows (`selene.view`): the documents table, then each source's requested and
realised share of the mix (one table: terminal, dashboard and report) and the plan's warnings."""

from __future__ import annotations

from typing import Any

from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendManifest
from selene.blend.stage import manifest_warnings
from selene.io.results import StageResult
from selene.view import (
    EVERYWHERE,
    PREFECT,
    REPORT,
    TERMINAL,
    Block,
    Cell,
    Markdown,
    Table,
    Text,
    View,
    columns,
    documents,
)

TITLE = "Blend: requested vs realised"


def _cell(v: Any) -> Any:
    return Cell(v, f"{v:.3f}") if isinstance(v, float) else v


def mix_table(manifest: BlendManifest, description: str = "") -> Table:
    """One row per source: epochs, requested and realised share of tokens, what was sampled."""
    rows = [
        tuple(_cell(v) for v in (src, round(b.epochs, 4), round(b.share_requested, 4), round(b.share_realised, 4),
                                 b.documents_sampled, b.tokens_sampled, b.tokens_method))
        for src, b in manifest.blend.sources.items()
    ]  # fmt: skip
    names = ("source", "epochs", "requested share", "realised share", "documents", "tokens", "tokens counted")
    # report.md's table marks no alignment; an empty mix is a titled table without columns in the terminal
    return Table(columns(*names) if rows else (), rows, key="blend-mix", title="blend: requested vs realised",
                 description=description, aligned=False, to=EVERYWHERE if rows else TERMINAL | PREFECT)


def view(result: StageResult[BlendManifest]) -> View:
    """The terminal says the plan's warnings again for a reused output only: a run says them on
    stderr as it plans."""
    m = result.manifest
    if not isinstance(m, BlendManifest):
        return View(TITLE, (Text("(no blend stage in this run)", REPORT),))
    seed = BlendConfig.model_validate(m.config).seed
    warnings = manifest_warnings(m)
    blocks: list[Block] = [
        *documents(result, extra=[
            mix_table(m, f"Requested vs realised mix in `{result.out}` (seed {seed})"),
            *(Text(f"[yellow]warning:[/yellow] blend: {w}", TERMINAL, highlight=False) for w in warnings if result.skipped),
        ]),
    ]  # fmt: skip
    if warnings:
        blocks.append(Markdown("\n".join(f"- {w}" for w in warnings), key="blend-warnings", to=PREFECT,
                               description="What the blend plan warned of"))
    return View(TITLE, blocks)
