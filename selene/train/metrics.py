"""Training metrics: one JSON object per step in metrics.jsonl, TensorBoard, and the console.

Only rank 0 writes. Each metric is computed where the loop has it; this module only records them.
The loss curve is also drawn as an SVG (no plotting dependency) for the report and Prefect.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rich.console import Console

_console = Console(stderr=True)


class MetricsLogger:
    def __init__(self, out: str, tensorboard: bool, enabled: bool) -> None:
        self.enabled = enabled
        self.path = os.path.join(out, "metrics.jsonl")
        self._tb: Any = None
        if not enabled:
            return
        os.makedirs(out, exist_ok=True)
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(log_dir=os.path.join(out, "tensorboard"))
            except ImportError:  # tensorboard is a dependency; a stripped install only loses this sink
                _console.print("[yellow]tensorboard is not installed: metrics go to metrics.jsonl only[/yellow]")

    def truncate_after(self, step: int) -> None:
        """On resume, drop lines of steps after the checkpoint (they will be logged again)."""
        if not self.enabled or not os.path.exists(self.path):
            return
        with open(self.path) as f:
            lines = [ln for ln in f if ln.strip() and json.loads(ln).get("step", 0) <= step]
        with open(self.path, "w") as f:
            f.writelines(lines)

    def log(self, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
        if self._tb is not None:
            for k, v in record.items():
                if k != "step" and isinstance(v, int | float):
                    self._tb.add_scalar(k, v, record["step"])
        shown = " ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in record.items() if k in _SHOWN
        )
        _console.print(shown, highlight=False)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()


_SHOWN = ("step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "tflops_per_device", "mfu", "batch")


def read_metrics(path: str) -> list[dict[str, Any]]:
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def loss_curve_svg(records: list[dict[str, Any]], width: int = 480, height: int = 240) -> str:
    """Training (and validation) loss against step, as a small standalone SVG."""
    pts = [(r["step"], r["loss"]) for r in records if "loss" in r]
    val = [(r["step"], r["val_loss"]) for r in records if "val_loss" in r]
    if not pts:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"></svg>'
    xs = [p[0] for p in pts + val]
    ys = [p[1] for p in pts + val]
    x0, x1, y0, y1 = min(xs), max(xs) or 1, min(ys), max(ys)
    pad = 40

    def xy(x: float, y: float) -> str:
        px = pad + (x - x0) / max(x1 - x0, 1) * (width - 2 * pad)
        py = height - pad - (y - y0) / max(y1 - y0, 1e-9) * (height - 2 * pad)
        return f"{px:.1f},{py:.1f}"

    line = " ".join(xy(x, y) for x, y in pts)
    vline = " ".join(xy(x, y) for x, y in val)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">'
        f'<rect width="100%" height="100%" fill="white"/>'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>'
        f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{line}"/>'
        + (f'<polyline fill="none" stroke="#d62728" stroke-width="1.5" points="{vline}"/>' if val else "")
        + f'<text x="{pad}" y="{pad - 8}">loss (blue: train, red: validation)</text>'
        f'<text x="{pad}" y="{height - pad + 14}">step {x0}</text>'
        f'<text x="{width - pad - 50}" y="{height - pad + 14}">step {x1}</text>'
        f'<text x="2" y="{height - pad}">{y0:.2f}</text><text x="2" y="{pad + 4}">{y1:.2f}</text></svg>'
    )
