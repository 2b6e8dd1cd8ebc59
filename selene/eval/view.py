"""What the evaluation stage shows (`selene.view`): each task's metrics and the held-out perplexity:
in the terminal beside a suite's published figures, on the dashboard with the harness's table, in
the run report from summary.json."""

from __future__ import annotations

import json
import os
from typing import Any

from selene.io.results import StageResult
from selene.view import PREFECT, REPORT, TERMINAL, Block, Column, Markdown, Table, Text, View


def view(result: StageResult[Any]) -> View:
    summary = result.info.get("summary")
    path = os.path.join(result.out, "summary.json")
    if summary is None and os.path.exists(path):  # the report: the directory only
        with open(path) as f:
            summary = json.load(f)
    if summary is None:
        return View("Evaluation", (Text("(not evaluated yet)", REPORT),))
    checkpoint = summary["checkpoint"]
    scores = [(t, k, v) for t, m in summary["tasks"].items() for k, v in m.items()]
    held_out = summary.get("perplexity", {})
    held_out_keys = [k for k in ("perplexity", "bits_per_byte") if k in held_out]
    ref = summary.get("reference") or {}
    figures = ref.get("figures", {})

    # Three tables, each as its place has always shown it: the terminal's formats the scores beside a
    # suite's figures, the dashboard's keeps the numbers (and a paper column), report.md's names the
    # held-out metrics in words.
    # The terminal: the step in the title; the whole path on a line of its own (a long path in a
    # title wraps into the table's narrow width, cutting the step's name in two)
    terminal_rows = [
        (t, k, f"{v:.4f}", *([f"{f:.4f}" if (f := figures.get(t, {}).get(k)) is not None else ""] if ref else []))
        for t, k, v in scores
    ] + [("held-out", k, f"{held_out[k]:.4f}", *([""] if ref else [])) for k in held_out_keys]
    terminal: list[Block] = [
        Text(f"eval of [b]{checkpoint}[/b]", TERMINAL, soft_wrap=True),
        Table((Column("task", right=False), Column("metric", right=False), Column("value"),
               *([Column(ref["column"])] if ref else [])),
              terminal_rows, title=os.path.basename(os.path.normpath(str(checkpoint))), to=TERMINAL),
        *([Text(f"{ref['column']}: {ref['source']}", TERMINAL, soft_wrap=True)] if ref else []),
        *([Text(f"[yellow]held-out perplexity not computed: {summary['perplexity_skipped']}[/yellow]", TERMINAL)]
          if "perplexity_skipped" in summary else []),
        Text(f"results in [b]{summary['out']}[/b] (results.json, results.md)", TERMINAL),
    ]  # fmt: skip

    # The dashboard: values rounded, a suite's published figures in a column of their own
    dashboard_rows = [(t, k, round(v, 4), *([figures.get(t, {}).get(k)] if figures else [])) for t, k, v in scores]
    dashboard_rows += [("held-out", k, round(held_out[k], 4), *([None] if figures else [])) for k in held_out_keys]
    names = ("task", "metric", "value", *(["paper"] if figures else []))
    dashboard: list[Block] = [Table(tuple(Column(n) for n in names), dashboard_rows, key="eval-results", to=PREFECT,
                                    description=f"Evaluation of `{checkpoint}`")]
    md = os.path.join(result.out, "results.md")
    if os.path.exists(md):
        with open(md) as f:
            dashboard.append(Markdown(f.read(), key="eval-table", to=PREFECT))

    report_rows = [(t, k, f"{v:.4f}") for t, k, v in scores]
    if "perplexity" in summary:
        report_rows += [("held-out", "perplexity", f"{held_out['perplexity']:.4f}"),
                        ("held-out", "bits per byte", f"{held_out['bits_per_byte']:.4f}")]
    report: list[Block] = [
        Text(f"Checkpoint `{checkpoint}`", REPORT),
        Table((Column("task", right=False), Column("metric", right=False), Column("value")), report_rows, to=REPORT),
    ]  # fmt: skip
    return View("Evaluation", (*terminal, *dashboard, *report))
