"""The pipeline's train stage: torchrun on the token dataset, then the loss curve.

Training itself runs in the processes torchrun starts (`selene.train.launch`); this process only
launches them, so the run is the same under Prefect or without it.
"""

from __future__ import annotations

import os

from rich.console import Console

from selene.artifacts import Artifact, Markdown, svg_image
from selene.config import TrainConfig
from selene.errors import ConfigError, InputError
from selene.executor import Mapper
from selene.io import dataset
from selene.io.dataset import StageResult
from selene.manifest import TokenizeManifest
from selene.train import checkpoint
from selene.train.launch import launch
from selene.train.metrics import loss_curve_svg, read_metrics


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
        launch(cfg, out, cfg.nproc_per_node)
    else:  # reused: only if it is the model asked for, trained with the data's tokenizer
        _check_reuse(checkpoint.step_dir(root, done[-1]), cfg)
    records = read_metrics(os.path.join(out, "metrics.jsonl"))
    with open(os.path.join(out, "loss.svg"), "w") as f:
        f.write(loss_curve_svg(records))
    last = records[-1] if records else {}
    steps = checkpoint.complete_steps(root)
    return StageResult(out, skipped=skipped, info={"last": last, "checkpoint": checkpoint.step_dir(root, steps[-1])})


def _check_reuse(path: str, cfg: TrainConfig) -> None:
    """The finished checkpoint `path` is of the model `cfg` asks for (`checkpoint.check_resume`); when
    the vocabulary cannot be known any more (no vocab_size, data gone), the checkpoint's is taken."""
    from selene.train.data import tokenizer_sha256
    from selene.train.launch import expected_model
    from selene.train.model import model_args

    try:
        args = expected_model(cfg)
    except ConfigError:
        saved = checkpoint.model_args_of(checkpoint.read_meta(path), path)
        if saved is None:
            return
        args = model_args(cfg.model, saved.vocab_size)
    checkpoint.check_resume(path, args, tokenizer_sha256(cfg.data.prefixes))


def artifacts(result: StageResult, cfg: TrainConfig) -> list[Artifact]:
    records = read_metrics(os.path.join(result.out, "metrics.jsonl"))
    last = result.info["last"]
    return [
        Markdown(
            "train-loss",
            f"### Training: {len(records)} logged steps, final loss {last.get('loss', float('nan')):.4f}\n\n"
            + svg_image(loss_curve_svg(records), "loss")
            + "\n",
        )
    ]


def summary(result: StageResult, console: Console) -> None:
    last, out = result.info["last"], result.out
    console.print(
        f"train → {out}{' (complete already: reused)' if result.skipped else ''}: "
        f"step {last.get('step')}, loss {last.get('loss', float('nan')):.4f}"
        + (f", validation loss {last['val_loss']:.4f}" if "val_loss" in last else "")
        + f"\nmodel (last checkpoint): [b]{result.info['checkpoint']}[/b]; loss curve {out}/loss.svg"
    )
