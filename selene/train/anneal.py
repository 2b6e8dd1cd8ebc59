"""Decay branches of a WSD run: `selene train CFG --anneal-from step-N --decay-steps K`.

A warmup-stable-decay run (`optim.schedule: wsd`) holds its learning rate constant between warmup and
its final decay, so every checkpoint of that stable phase is where a shorter run of the same model
would have started its decay. A branch loads such a checkpoint — weights, optimizer state, data
cursor and RNG, as a resume does — and trains K more steps with the decay starting at step N: the
run it yields is the WSD run of N + K steps with a K-step decay, step for step (the tests compare the
losses), for the price of K steps. This is how MiniCPM and OLMo 2 anneal, and how a scaling study
gets a loss at several token budgets from one run per model size (`selene.plan.study`).

A branch writes only into its own folder, ``<out>.anneals/step-N-decay-K/`` beside the run (its
checkpoints, metrics.jsonl, run.json with the ``anneal`` section naming its source): the run is never
written, and can go on training while branches of it run (its folder is not the branch's output).
A killed branch resumes from its own checkpoints; a finished one is skipped.

Refused before anything is written, in one line (exit 2): K < 1, a step the run has no finished
checkpoint for, a checkpoint of another model or tokenizer (`checkpoint.check_resume`) or of other
token data (`renew.data_change`), and a step outside the run's stable phase. The last one decides
what "WSD-compatible" means: the run's recorded schedule must be wsd (cosine and linear decay from
the end of warmup on: none of their checkpoints sits at the peak learning rate a decay starts from),
and N must lie between the end of its warmup and the start of its own decay, both included (the
step that starts a decay trains at the peak learning rate, `selene.train.schedule`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import ValidationError

from selene.errors import ConfigError, PathError
from selene.train.config import AnnealConfig, OptimConfig, TrainConfig
from selene.train.schedule import decay_start, wsd_decay_steps

_STEP = re.compile(r"^(?:step-)?(\d+)$")
SHAPES = ("linear", "cosine", "1-sqrt")


def anneals_root(out: str) -> str:
    """The folder of a run's branches: beside the run's folder, not in it."""
    return os.path.normpath(out) + ".anneals"


def branch_name(step: int, decay_steps: int, shape: str | None) -> str:
    """``step-N-decay-K``, with the decay's shape when it is not the run's own."""
    return f"step-{step}-decay-{decay_steps}" + (f"-{shape}" if shape else "")


def index_steps(cfg: TrainConfig) -> int:
    """Steps the sample index is sized for: a branch reads its parent's index (the same data order,
    so the parent's cursor means the same samples), longer when the branch runs past the parent."""
    return max(cfg.steps, cfg.anneal.data_steps) if cfg.anneal is not None else cfg.steps


def source_checkpoint(anneal_from: str, out: str) -> str:
    """The checkpoint `anneal_from` names: ``step-N`` (or N) of the run in `out`, or a step directory;
    `PathError` listing the run's finished steps when there is none."""
    from selene.train import checkpoint

    root = os.path.join(out, "checkpoints")
    m = _STEP.match(anneal_from)
    path = checkpoint.step_dir(root, int(m.group(1))) if m else anneal_from
    if os.path.exists(os.path.join(path, checkpoint.META)):
        return path
    if m:
        steps = checkpoint.complete_steps(root)
        found = f"its finished checkpoints are steps {', '.join(map(str, steps))}" if steps else "it has no finished checkpoint"
        raise PathError(
            f"--anneal-from {anneal_from}: the run in {out} has no finished checkpoint at step {int(m.group(1))}; {found} "
            "(train.checkpoint.keep prunes older ones: keep the stable-phase steps you want to branch from)"
        )
    raise PathError(f"--anneal-from {anneal_from}: not a finished checkpoint (no {checkpoint.META}); give step-N of the run or a step-NNNNNN directory")


def parent_schedule(meta: dict[str, Any], fallback: TrainConfig) -> tuple[OptimConfig, int]:
    """(optimizer settings, steps) the checkpoint's run trained with, as its meta.json recorded
    them; the config in use now when the record is missing or unreadable (an older selene)."""
    raw = meta.get("config")
    if isinstance(raw, dict):
        try:
            recorded = TrainConfig.model_validate(raw)
            return recorded.optim, recorded.steps
        except ValidationError:
            pass
    return fallback.optim, fallback.steps


def check_stable(source: str, step: int, optim: OptimConfig, steps: int) -> None:
    """`ConfigError` unless `step` lies in the stable phase of a WSD run of `steps` (see the module doc)."""
    where = f"--anneal-from {source}"
    if optim.schedule != "wsd":
        raise ConfigError(
            f"{where}: the run trained with train.optim.schedule {optim.schedule}, whose learning rate decays from the "
            f"end of warmup (step {optim.warmup_steps}) on: step {step} is not in a stable phase a decay can branch "
            "from; train the run with train.optim.schedule: wsd"
        )
    if step < optim.warmup_steps:
        raise ConfigError(
            f"{where}: step {step} is still in the run's warmup (train.optim.warmup_steps {optim.warmup_steps}); "
            "branch from a checkpoint of the stable phase"
        )
    start = decay_start(optim, steps)
    if step > start:
        raise ConfigError(
            f"{where}: the run decays over its last {wsd_decay_steps(optim, steps)} of {steps} steps, from step {start} "
            f"on: step {step} is past its stable phase; branch from a checkpoint at step {start} or before"
        )


def prepare(
    cfg: TrainConfig, out: str, anneal_from: str, decay_steps: int, shape: str | None = None
) -> tuple[TrainConfig, str]:
    """(the branch's config, its folder) for a decay of `decay_steps` from the checkpoint `anneal_from`
    of the run `cfg` trains into `out`; every refusal of the module doc before anything is written."""
    from selene.train import checkpoint
    from selene.train.data import tokenizer_sha256
    from selene.train.launch import expected_model
    from selene.train.renew import data_change

    if decay_steps < 1:
        raise ConfigError(f"--decay-steps {decay_steps}: a decay needs at least 1 step")
    if shape is not None and shape not in SHAPES:
        raise ConfigError(f"--decay-shape {shape!r}: expected one of {', '.join(SHAPES)}")
    source = os.path.normpath(source_checkpoint(anneal_from, out))
    args, tokenizer = expected_model(cfg), tokenizer_sha256(cfg.data.prefixes)
    meta = checkpoint.read_meta(source)
    saved = checkpoint.model_args_of(meta, source)
    if saved is not None and (diffs := checkpoint.shape_diffs(saved, args)):
        raise ConfigError(
            f"--anneal-from {source}: the checkpoint is of another model ({'; '.join(diffs)}); a branch continues "
            "the run's model: set train.model back to the run's"
        )
    checkpoint.check_tokenizer(meta, source, tokenizer, "the tokenizer of the training data", ConfigError,
                               "A branch continues the run's token ids: train it on the run's data")  # fmt: skip
    checkpoint.check_resume(source, args, tokenizer)  # its tensors against the model, its files and digests
    step = int(meta["step"])
    if (change := data_change(meta, cfg.data.prefixes)) is not None:
        raise ConfigError(
            f"--anneal-from {source}: the checkpoint was trained on other token data ({change}); a branch continues "
            "its data cursor, so it needs the data the run trained on"
        )
    parent_optim, parent_steps = parent_schedule(meta, cfg)
    check_stable(source, step, parent_optim, parent_steps)
    own_shape = shape if shape is not None and shape != parent_optim.decay_shape else None
    branch_out = os.path.join(anneals_root(out), branch_name(step, decay_steps, own_shape))
    optim = cfg.optim.model_copy(
        update={"schedule": "wsd", "decay_steps": decay_steps, "decay_fraction": None, "decay_shape": shape or parent_optim.decay_shape}
    )
    started = bool(checkpoint.complete_steps(os.path.join(branch_out, "checkpoints")))
    # a branch that has checkpoints of its own resumes from them, never from the parent's again
    ckpt = cfg.checkpoint.model_copy(update={"load": None if started else source, "resume": True})
    anneal = AnnealConfig(source=source, step=step, decay_steps=decay_steps, data_steps=parent_steps)
    branch = cfg.model_copy(
        update={"optim": optim, "checkpoint": ckpt, "steps": step + decay_steps, "anneal": anneal, "out": branch_out}
    )
    return branch, branch_out
