"""The run report: every stage's numbers in one markdown file (`<run_dir>/report.md`).

Built from what the stages wrote (manifests, metrics.jsonl, eval results), never from memory of
the run, so it can be rebuilt for any finished run directory: `selene report RUN_DIR`. The documents
table covers every stage that writes documents; each stage adds its own section: its view
(`Stage.view`, `selene.view`) made from its directory alone, rendered as markdown.
"""

from __future__ import annotations

import os

from selene import registry
from selene.io import dataset
from selene.io.results import StageResult
from selene.manifest import StageManifest
from selene.view import Column, Markdown, Table, Text, View, markdown_table


def _manifest(directory: str) -> StageManifest | None:
    return dataset.read_manifest(directory) if os.path.isdir(directory) else None


def documents_table(run_dir: str) -> list[str]:
    """Documents per source entering and leaving every data stage, with the reasons they left."""
    rows = []
    for stage in (s.name for s in registry.STAGES if s.writes == "documents"):
        m = _manifest(os.path.join(run_dir, stage))
        if not m:
            continue
        for src, st in m.stats.per_source.items():
            top = sorted(st.removed.items(), key=lambda x: -x[1])[:3]
            reasons = ", ".join(f"{r} {n}" for r, n in top) or "—"
            rows.append((stage, src, st.documents_in, st.kept, f"{sum(st.removed.values())}: {reasons}"))
    cols = (Column("stage", right=False), Column("source", right=False), Column("in"), Column("kept"),
            Column("removed (top reasons)", right=False))
    return markdown_table(Table(cols, rows))


def build_report(run_dir: str, name: str = "") -> str:
    parts = [
        f"# selene run report{': ' + name if name else ''}",
        "",
        f"Run directory: `{run_dir}`",
        "",
        "## Documents through the data stages",
        "",
        *documents_table(run_dir),
        "",
    ]
    for stage in registry.STAGES:
        if stage.view:
            out = os.path.join(run_dir, stage.name)
            view = stage.view.load()(StageResult(out, skipped=False, manifest=_manifest(out)))
            if view.title:
                parts += [f"## {view.title}", "", *section(view), ""]
    return "\n".join(parts)


def section(view: View) -> list[str]:
    """The report.md rendering of a view (`selene.view`): its report blocks, a blank line between."""
    lines: list[str] = []
    for block in view.to("report"):
        if lines:
            lines.append("")
        if isinstance(block, Table):
            lines += markdown_table(block)
        elif isinstance(block, Text):
            lines.append(block.text)
        elif isinstance(block, Markdown):
            lines += block.markdown.split("\n")
    return lines


def write_report(run_dir: str, name: str = "") -> str:
    path = os.path.join(run_dir, "report.md")
    text = build_report(run_dir, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
