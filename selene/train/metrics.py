"""Training metrics: one JSON object per step in metrics.jsonl, TensorBoard, the console, and
Weights & Biases when `train.wandb.enabled`.

Only rank 0 writes. Each metric is computed where the loop has it; this module only records them.
metrics.jsonl is the record; TensorBoard and W&B are views of it, so a failing W&B (no login, no
network, a broken install) costs one warning, never the training run.
The loss curve is also drawn as an SVG (no plotting dependency) for the report and Prefect.
"""

from __future__ import annotations

import json
import os
import secrets
from typing import TYPE_CHECKING, Any

from selene.consoles import console

if TYPE_CHECKING:
    from selene.train.config import TrainConfig

_console = console(stderr=True)  # a step's line whole in a log (selene.consoles)


class MetricsLogger:
    def __init__(
        self, out: str, tensorboard: bool, enabled: bool, wandb: TrainConfig.WandbConfig | None = None
    ) -> None:
        self.enabled = enabled
        self.out = out
        self.path = os.path.join(out, "metrics.jsonl")
        self._tb: Any = None
        self._wandb_cfg = wandb if enabled and wandb is not None and wandb.enabled else None
        self._wandb: Any = None  # the W&B run, from `begin` until `close` or its first failure
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

    def begin(self, run: dict[str, Any], step: int) -> None:
        """Start the W&B run (when enabled) with `run` (run.json: the config and what the run found)
        as its config; `step` > 0, a resumed training run, continues the W&B run of <out>/wandb-run-id."""
        if self._wandb_cfg is None:
            return
        try:
            self._wandb = start_wandb(self._wandb_cfg, self.out, run, resumed=step > 0)
        except Exception as e:  # init fails on a missing login, an unreachable server, a broken install
            self._drop_wandb("could not start", e)

    def log(self, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
        if self._tb is not None:
            for k, v in record.items():
                if k != "step" and isinstance(v, int | float):
                    self._tb.add_scalar(k, v, record["step"])
        if self._wandb is not None:
            try:
                self._wandb.log({k: v for k, v in record.items() if k != "step"}, step=record["step"])
            except Exception as e:
                self._drop_wandb("failed", e)
        shown = " ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in record.items() if k in _SHOWN
        )
        _console.print(shown, highlight=False)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            run, self._wandb = self._wandb, None
            try:
                run.finish()
            except Exception as e:
                self._drop_wandb("could not finish", e)

    def _drop_wandb(self, what: str, error: Exception) -> None:
        """One warning, then the other sinks only: a W&B that failed once is not retried every step."""
        self._wandb = None
        others = "metrics.jsonl and TensorBoard" if self._tb is not None else "metrics.jsonl"
        _console.print(
            f"[yellow]W&B {what} ({type(error).__name__}: {error}): metrics go to {others} only[/yellow]"
        )


def start_wandb(cfg: TrainConfig.WandbConfig, out: str, run: dict[str, Any], resumed: bool) -> Any:
    """`wandb.init` for the training run in `out`; imported here, not at module import, so that
    commands that never train (`selene --help`) do not pay for it."""
    import wandb

    run_dir = cfg.dir or out
    os.makedirs(run_dir, exist_ok=True)
    config = {**run.get("config", {}), "run": {k: v for k, v in run.items() if k != "config"}}
    return wandb.init(
        project=cfg.project,
        entity=cfg.entity,
        name=cfg.name or run_name(out),
        dir=run_dir,
        # WANDB_MODE wins: wandb reads it itself when mode is None, and knows all of its spellings
        mode=None if os.environ.get("WANDB_MODE") else cfg.mode,
        id=wandb_run_id(out, resumed),
        resume="allow",
        config=config,
    )


def wandb_run_id(out: str, resumed: bool) -> str:
    """The W&B run id of the training run in `out`, kept in <out>/wandb-run-id: a resumed run
    continues the same W&B run (the steps after its checkpoint that it logs again, W&B drops: it
    keeps a step's first values); a run that starts at step 0 is a new W&B run, as its metrics.jsonl is."""
    path = os.path.join(out, "wandb-run-id")
    if resumed and os.path.exists(path):
        with open(path) as f:
            run_id = f.read().strip()
        if run_id:
            return run_id
    run_id = secrets.token_hex(6)  # W&B ids: letters and digits, unique within a project
    with open(path + ".tmp", "w") as f:
        f.write(run_id + "\n")
    os.replace(path + ".tmp", path)
    return run_id


def run_name(out: str) -> str:
    """The run directory's name: <run_dir> of a pipeline's <run_dir>/train, else the output's own."""
    path = os.path.abspath(out)
    name = os.path.basename(path)
    return os.path.basename(os.path.dirname(path)) if name == "train" else name


_SHOWN = ("step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "tflops_per_device", "mfu", "batch")


def read_metrics(path: str) -> list[dict[str, Any]]:
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]
