"""`train_flow`: training launched with torchrun from a Prefect flow; the loss curve as an artifact."""

from __future__ import annotations

import base64
import os
from typing import Any

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from selene.config import TrainConfig
from selene.train import checkpoint
from selene.train.launch import launch
from selene.train.metrics import loss_curve_svg, read_metrics


@flow(name="train", log_prints=True, validate_parameters=False)
def train_flow(cfg: TrainConfig, out: str, nproc_per_node: int = 1, force: bool = False) -> dict[str, Any]:
    """Train (or resume, or skip when the last step's checkpoint exists) into `out`; `force` starts
    again from step 0 (earlier checkpoints are replaced as the new run reaches their steps)."""
    done = checkpoint.complete_steps(os.path.join(out, "checkpoints"))
    skipped = bool(done) and done[-1] >= cfg.steps and not force
    if force:
        cfg = cfg.model_copy(update={"checkpoint": cfg.checkpoint.model_copy(update={"resume": False, "load": None})})
    if not skipped:
        launch(cfg, out, nproc_per_node)
    records = read_metrics(os.path.join(out, "metrics.jsonl"))
    svg = loss_curve_svg(records)
    with open(os.path.join(out, "loss.svg"), "w") as f:
        f.write(svg)
    last = records[-1] if records else {}
    create_markdown_artifact(
        key="train-loss",
        markdown=(
            f"### Training: {len(records)} logged steps, final loss {last.get('loss', float('nan')):.4f}\n\n"
            f"![loss](data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()})\n"
        ),
    )
    return {"out": out, "skipped": skipped, "last": last, "checkpoint": checkpoint.step_dir(
        os.path.join(out, "checkpoints"), checkpoint.complete_steps(os.path.join(out, "checkpoints"))[-1])}
