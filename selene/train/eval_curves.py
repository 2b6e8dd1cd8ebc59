"""The in-run evaluation's curves (`selene.train.evaluate` logs ``eval/<task>/<metric>`` beside the
loss in metrics.jsonl): read back for the run report, the dashboard (live and after the run) and
`selene ablate`, which compares variants by their whole curves, not only their last points."""

from __future__ import annotations

from typing import Any

from selene.charts import metric_curves

PREFIX = "eval/"
FILE = "evals.svg"  # beside loss.svg in the training output


def curves(records: list[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """``<task> <metric>`` → [(step, value)] of every in-run score in `records`, in step order (a
    step logged again after a resume counts once: its last line)."""
    by_step: dict[str, dict[int, float]] = {}
    for r in records:
        for key, value in r.items():
            if key.startswith(PREFIX) and isinstance(value, int | float):
                task, _, metric = key[len(PREFIX) :].partition("/")
                by_step.setdefault(f"{task} {metric}", {})[int(r["step"])] = float(value)
    return {name: sorted(points.items()) for name, points in sorted(by_step.items())}


def chart(records: list[dict[str, Any]]) -> str | None:
    """One panel per in-run score against step; None when the run scored none."""
    found = curves(records)
    return metric_curves({name: {"this run": pts} for name, pts in found.items()}) if found else None


def table(records: list[dict[str, Any]]) -> str | None:
    """A markdown table of each in-run score: first and last step, their values, and its best."""
    found = curves(records)
    if not found:
        return None
    lines = ["| score | first | last | best |", "|---|---:|---:|---:|"]
    for name, pts in found.items():
        lower = any(w in name for w in ("bits_per_byte", "perplexity", "loss"))
        best = (min if lower else max)(pts, key=lambda p: p[1])
        (s0, v0), (s1, v1) = pts[0], pts[-1]
        lines.append(
            f"| {name} | {v0:.4f} (step {s0}) | {v1:.4f} (step {s1}) | {best[1]:.4f} (step {best[0]}) |"
        )
    return "\n".join(lines) + "\n"
