"""`eval_flow`: harness tasks and perplexity of the trained checkpoint, as artifacts."""

from __future__ import annotations

import json
import os
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from selene.config import EvalConfig
from selene.eval.stage import run_eval


@flow(name="eval", log_prints=True, validate_parameters=False)
def eval_flow(cfg: EvalConfig, checkpoint: str, out: str, force: bool = False) -> dict[str, Any]:
    """Evaluate `checkpoint` into `out`; skipped when `out` holds this checkpoint's results already."""
    cfg = cfg.model_copy(update={"checkpoint": checkpoint})
    previous = os.path.join(out, "summary.json")
    settings = cfg.model_dump(mode="json")
    if not force and os.path.exists(previous):
        with open(previous) as f:
            old = json.load(f)
        if old.get("config") == settings:
            return {"out": out, "skipped": True, "summary": old}
    summary = run_eval(cfg, out)
    summary["config"] = settings
    with open(previous, "w") as f:
        json.dump(summary, f, indent=1)
    rows = [{"task": t, "metric": k, "value": round(v, 4)} for t, m in summary["tasks"].items() for k, v in m.items()]
    if "perplexity" in summary:
        rows += [{"task": "held-out", "metric": k, "value": round(summary["perplexity"][k], 4)}
                 for k in ("perplexity", "bits_per_byte") if k in summary["perplexity"]]
    create_table_artifact(table=rows, key="eval-results", description=f"Evaluation of `{checkpoint}`")
    md = os.path.join(out, "results.md")
    if os.path.exists(md):
        with open(md) as f:
            create_markdown_artifact(markdown=f.read(), key="eval-table")
    return {"out": out, "skipped": False, "summary": summary}
