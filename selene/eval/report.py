"""The evaluation stage's part of the run report (`selene.report`)."""

from __future__ import annotations

import json
import os


def report_section(stage_dir: str, run_dir: str) -> tuple[str, list[str]]:
    """The run report's evaluation section: each task's metrics and the held-out perplexity."""
    path = os.path.join(stage_dir, "summary.json")
    if not os.path.exists(path):
        return "Evaluation", ["(not evaluated yet)"]
    with open(path) as f:
        summary = json.load(f)
    out = [f"Checkpoint `{summary['checkpoint']}`", "", "| task | metric | value |", "|---|---|---:|"]
    for task, metrics in summary["tasks"].items():
        out += [f"| {task} | {k} | {v:.4f} |" for k, v in metrics.items()]
    if "perplexity" in summary:
        p = summary["perplexity"]
        out += [f"| held-out | perplexity | {p['perplexity']:.4f} |", f"| held-out | bits per byte | {p['bits_per_byte']:.4f} |"]
    return "Evaluation", out
