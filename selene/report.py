"""The run report: every stage's numbers in one markdown file (`<run_dir>/report.md`).

Built from what the stages wrote (manifests, metrics.jsonl, eval results), never from memory of
the run, so it can be rebuilt for any finished run directory: `selene report RUN_DIR`. The documents
table covers every stage that writes documents; each stage adds its own section (`Stage.report`).
"""

from __future__ import annotations

import os

from selene import registry
from selene.io import dataset
from selene.manifest import StageManifest


def _manifest(directory: str) -> StageManifest | None:
    return dataset.read_manifest(directory) if os.path.isdir(directory) else None


def documents_table(run_dir: str) -> list[str]:
    """Documents per source entering and leaving every data stage, with the reasons they left."""
    rows = ["| stage | source | in | kept | removed (top reasons) |", "|---|---|---:|---:|---|"]
    for stage in (s.name for s in registry.STAGES if s.writes == "documents"):
        m = _manifest(os.path.join(run_dir, stage))
        if not m:
            continue
        for src, st in m.stats.per_source.items():
            top = sorted(st.removed.items(), key=lambda x: -x[1])[:3]
            reasons = ", ".join(f"{r} {n}" for r, n in top) or "—"
            rows.append(f"| {stage} | {src} | {st.documents_in} | {st.kept} | {sum(st.removed.values())}: {reasons} |")
    return rows


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
        section = registry.load(stage.report)(os.path.join(run_dir, stage.name), run_dir) if stage.report else None
        if section is not None:
            title, lines = section
            parts += [f"## {title}", "", *lines, ""]
    return "\n".join(parts)


def write_report(run_dir: str, name: str = "") -> str:
    path = os.path.join(run_dir, "report.md")
    text = build_report(run_dir, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
