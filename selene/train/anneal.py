"""Decay branches of a WSD run: `selene train CFG --anneal-from step-N --decay-steps K`.

A warmup-stable-decay run (`optim.schedule: wsd`) holds its learning rate constant between warmup and
its final decay, so every checkpoint of that stable phase is where a shorter run of the same model
would have started its decay. A branch loads such a checkpoint — weights, optimizer state, data
cursor and RNG, as a resume does — and trains K more steps with the decay starting at step N: the
run it yields is the WSD run of N + K steps with a K-step decay, step for step (the tests compare the
losses), for the price of K steps. This is how MiniCPM and OLMo 2 anneal, and how a scaling study
gets a loss at several token budgets from one run per model size (`selene.plan.study_budgets`).

A branch writes only into its own folder, ``<out>.anneals/step-N-decay-K/`` beside the run (its
checkpoints, metrics.jsonl, run.json with the ``anneal`` section naming its source): the run is never
written, and can go on training while branches of it run (its folder is not the branch's output).
A killed branch resumes from its own checkpoints (its parent's may be pruned by then); a finished
one is skipped.

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
from selene.train import checkpoint
from selene.train.config import AnnealConfig, OptimConfig, TrainConfig
from selene.train.data import tokenizer_sha256
from selene.train.launch import expected_model
from selene.train.renew import data_change
from selene.train.schedule import decay_start, wsd_decay_steps

_STEP = re.compile(r"^(?:step-)?(\d+)$")
SHAPES = ("linear", "cosine", "1-sqrt")


def anneals_root(out: str) -> str:
    """The folder of a run's branches: beside the run's folder, not in it."""
    return os.path.normpath(out) + ".anneals"


def branch_name(step: int, decay_steps: int, shape: str | None) -> str:
    """``step-N-decay-K``, with the decay's shape when --decay-shape names one."""
    return f"step-{step}-decay-{decay_steps}" + (f"-{shape}" if shape else "")


def source_checkpoint(anneal_from: str, out: str) -> str:
    """The checkpoint `anneal_from` names: ``step-N`` (or N) of the run in `out`, or a step directory;
    `PathError` listing the run's finished steps when there is none."""
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


def _requested_step(anneal_from: str) -> int | None:
    """The step `anneal_from` names: ``step-N``, ``N`` or a ``.../step-NNNNNN`` directory."""
    m = _STEP.match(anneal_from) or _STEP.match(os.path.basename(os.path.normpath(anneal_from)))
    return int(m.group(1)) if m else None


def _started(branch_out: str) -> tuple[AnnealConfig, str] | None:
    """(the anneal section, the decay shape) recorded by the branch's own latest checkpoint, when it
    has one: a started branch goes on from there, needing nothing of its parent (whose checkpoint
    may be pruned by now)."""
    steps = checkpoint.complete_steps(os.path.join(branch_out, "checkpoints"))
    if not steps:
        return None
    meta = checkpoint.read_meta(checkpoint.step_dir(os.path.join(branch_out, "checkpoints"), steps[-1]))
    try:
        recorded = TrainConfig.model_validate(meta.get("config"))
    except ValidationError:
        return None
    return (recorded.anneal, recorded.optim.decay_shape) if recorded.anneal is not None else None


def prepare(
    cfg: TrainConfig, out: str, anneal_from: str, decay_steps: int, shape: str | None = None
) -> tuple[TrainConfig, str]:
    """(the branch's config, its folder) for a decay of `decay_steps` from the checkpoint `anneal_from`
    of the run `cfg` trains into `out`; every refusal of the module doc before anything is written.

    The folder is named by the options (`branch_name`: the shape only when --decay-shape is given), so
    a started branch is found, and resumed from its own checkpoints, without its parent's."""
    if decay_steps < 1:
        raise ConfigError(f"--decay-steps {decay_steps}: a decay needs at least 1 step")
    if shape is not None and shape not in SHAPES:
        raise ConfigError(f"--decay-shape {shape!r}: expected one of {', '.join(SHAPES)}")
    requested = _requested_step(anneal_from)
    if requested is not None:
        branch_out = os.path.join(anneals_root(out), branch_name(requested, decay_steps, shape))
        if (started := _started(branch_out)) is not None:
            anneal, recorded_shape = started
            return _branch_config(cfg, anneal, shape or recorded_shape, None, branch_out), branch_out
    source = os.path.normpath(source_checkpoint(anneal_from, out))
    meta = _check_source(cfg, source)
    step = int(meta["step"])
    parent_optim, parent_steps = parent_schedule(meta, cfg)
    check_stable(source, step, parent_optim, parent_steps)
    branch_out = os.path.join(anneals_root(out), branch_name(step, decay_steps, shape))
    anneal = AnnealConfig(source=source, step=step, decay_steps=decay_steps, data_steps=parent_steps)
    return _branch_config(cfg, anneal, shape or parent_optim.decay_shape, source, branch_out), branch_out


def _check_source(cfg: TrainConfig, source: str) -> dict[str, Any]:
    """The meta of the checkpoint `source` once it is known to hold the model `cfg` builds, trained
    with its tokenizer on its token data (`ConfigError` naming what differs)."""
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
    if (change := data_change(meta, cfg.data.prefixes)) is not None:
        raise ConfigError(
            f"--anneal-from {source}: the checkpoint was trained on other token data ({change}); a branch continues "
            "its data cursor, so it needs the data the run trained on"
        )
    return meta


def _branch_config(cfg: TrainConfig, anneal: AnnealConfig, shape: str, load: str | None, out: str) -> TrainConfig:
    """`cfg` as the branch `anneal`: a WSD run of step + decay_steps steps whose decay starts at the
    branch point, started from the parent's checkpoint (`load`) or, None, resumed from its own."""
    optim = cfg.optim.model_copy(
        update={"schedule": "wsd", "decay_steps": anneal.decay_steps, "decay_fraction": None, "decay_shape": shape}
    )
    ckpt = cfg.checkpoint.model_copy(update={"load": load, "resume": True})
    steps = anneal.step + anneal.decay_steps
    return cfg.model_copy(update={"optim": optim, "checkpoint": ckpt, "steps": steps, "anneal": anneal, "out": out})
