"""The pipeline's train stage: torchrun on the token dataset, then the loss curve.

Training itself runs in the processes torchrun starts (`selene.train.launch`); this process only
launches them, so the run is the same under Prefect or without it.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from selene.charts import loss_curve
from selene.errors import ConfigError, InputError
from selene.executor import events
from selene.executor.mappers import Mapper
from selene.io import dataset
from selene.io.results import StageResult
from selene.tokenize.manifest import TokenizeManifest
from selene.train import checkpoint, eval_curves
from selene.train.args import model_args
from selene.train.config import TrainConfig
from selene.train.data import tokenizer_sha256
from selene.train.launch import expected_model, launch
from selene.train.metrics import read_metrics


def run_train(
    inp: str | None, out: str, cfg: TrainConfig, *, mapper: Mapper | None = None, force: bool = False
) -> StageResult:
    """Train on `cfg.data.prefixes` (default: `<inp>/<prefix>` of a tokenize output) into `out`, or
    resume, or skip when the last step's checkpoint exists; `force` starts again from step 0
    (earlier checkpoints are replaced as the new run reaches their steps)."""
    if not cfg.data.prefixes:
        if not inp:
            raise ConfigError("train: no data; set train.data.prefixes or give a tokenize output as input")
        m = dataset.read_manifest(inp, TokenizeManifest)
        if m is None:
            raise InputError(f"{inp!r} is not a finished tokenize output (no manifest.json): run `selene tokenize`")
        cfg = cfg.model_copy(update={"data": cfg.data.model_copy(update={"prefixes": [os.path.join(inp, m.prefix)]})})
    root = os.path.join(out, "checkpoints")
    done = checkpoint.complete_steps(root)
    skipped = bool(done) and done[-1] >= cfg.steps and not force
    if force:
        cfg = cfg.model_copy(update={"checkpoint": cfg.checkpoint.model_copy(update={"resume": False, "load": None})})
    if not skipped:
        watch = _Watch(out, cfg.steps) if events.watched() else None
        try:
            launch(cfg, out, cfg.nproc_per_node, cfg.nnodes, cfg.node_rank, cfg.rdzv_endpoint)
        finally:
            if watch is not None:
                watch.finish()
    else:  # reused: only if it is the model asked for, trained with the data's tokenizer
        _check_reuse(checkpoint.step_dir(root, done[-1]), cfg)
    records = read_metrics(os.path.join(out, "metrics.jsonl"))
    with open(os.path.join(out, "loss.svg"), "w") as f:
        f.write(loss_curve(records))
    if (evals := eval_curves.chart(records)) is not None:
        with open(os.path.join(out, eval_curves.FILE), "w") as f:
            f.write(evals)
    last = records[-1] if records else {}
    steps = checkpoint.complete_steps(root)
    return StageResult(out, skipped=skipped, info={"last": last, "checkpoint": checkpoint.step_dir(root, steps[-1])})


class _Watch:
    """What the ranks write while training runs (metrics.jsonl, complete checkpoints), read once a
    second and passed on as live events (`selene.executor.events.live`): "train-step" (a logged step's
    metrics, the steps asked for, an ETA), "train-plot" (the loss curve, at each validation and
    checkpoint) and "train-checkpoint". It reads files in this process, so the ranks pay nothing."""

    INTERVAL = 1.0

    def __init__(self, out: str, steps: int) -> None:
        self.path = os.path.join(out, "metrics.jsonl")
        self.root = os.path.join(out, "checkpoints")
        self.steps = steps
        self.offset = 0
        self.rows: list[dict[str, Any]] = []
        self.last_step = 0
        self.checkpoints = set(checkpoint.complete_steps(self.root))
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="selene-train-watch", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.done.wait(self.INTERVAL):
            self.poll()

    def finish(self) -> None:
        self.done.set()
        self.thread.join(timeout=10)
        self.poll()  # the last steps and the final checkpoint

    def poll(self) -> None:
        try:
            new = self._read()
        except OSError:
            return
        plot = scored = False
        for row in new:
            step = int(row.get("step", 0))
            if step <= self.last_step:
                continue  # logged again after a resume: shown already
            self.last_step = step
            times = [float(r["step_time_s"]) for r in self.rows[-10:] if "step_time_s" in r]
            eta = (self.steps - step) * sorted(times)[len(times) // 2] if times else None
            events.live("train-step", row=row, steps=self.steps, eta_s=eta)
            plot = plot or "val_loss" in row
            scored = scored or any(k.startswith(eval_curves.PREFIX) for k in row)
        saved = set(checkpoint.complete_steps(self.root)) - self.checkpoints
        for step in sorted(saved):
            self.checkpoints.add(step)
            events.live("train-checkpoint", step=step, path=checkpoint.step_dir(self.root, step))
        if (plot or saved) and self.rows:
            events.live("train-plot", svg=loss_curve(self.rows), step=self.last_step)
        if scored and (evals := eval_curves.chart(self.rows)) is not None:
            events.live("train-evals", svg=evals, table=eval_curves.table(self.rows), step=self.last_step)

    def _read(self) -> list[dict[str, Any]]:
        """The complete lines added since the last read (rank 0 rewrites the file on a resume: read
        it again from the start)."""
        if not os.path.exists(self.path):
            return []
        if os.path.getsize(self.path) < self.offset:
            self.offset, self.rows = 0, []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
        self.offset += end
        new = []
        for line in data[:end].splitlines():
            try:
                new.append(json.loads(line))
            except ValueError:
                continue
        self.rows += new
        return new


def _check_reuse(path: str, cfg: TrainConfig) -> None:
    """The finished checkpoint `path` is of the model `cfg` asks for (`checkpoint.check_resume`); when
    the vocabulary cannot be known any more (no vocab_size, data gone), the checkpoint's is taken."""
    try:
        args = expected_model(cfg)
    except ConfigError:
        saved = checkpoint.model_args_of(checkpoint.read_meta(path), path)
        if saved is None:
            return
        args = model_args(cfg.model, saved.vocab_size)
    checkpoint.check_resume(path, args, tokenizer_sha256(cfg.data.prefixes))
