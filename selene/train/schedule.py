"""Learning-rate schedule and batch-size ramp-up, as pure functions of the step.

Pure functions (no state) make resume exact: the step alone says what the learning rate and the
batch size are, so a restored run continues on the same curve.

Three schedules (`optim.schedule`), each after a linear warmup:

- ``cosine`` (the default, as GPT-3 and Megatron): cosine from `lr` at the end of warmup down to
  `min_lr_ratio` × lr at `decay_steps` (default: the last step).
- ``linear``: the same window, a straight line.
- ``wsd`` (warmup-stable-decay; MiniCPM, OLMo 2, Hägele et al. 2024): `lr` held constant until the
  final `decay_steps` steps (or `decay_fraction` of the run), which decay to `min_lr_ratio` × lr in
  `decay_shape`. Every checkpoint of the stable phase is a point from which a decay can be branched
  off (`selene.train.anneal`): a run of any length up to the parent's costs only its decay.

A decay's progress is ``(step - start) / length``, as the cosine's always was: the step that starts it
trains at `lr`, and the floor is reached at the step after the last one trained.
"""

from __future__ import annotations

import math

from selene.errors import ConfigError
from selene.train.config import BatchConfig, OptimConfig, TrainConfig

WSD_DECAY_FRACTION = 0.2
"""The decay's share of a WSD run when neither decay_steps nor decay_fraction is set: Hägele et al.
(2024) found a 20% cooldown matches or beats a cosine run of the same length."""


def decay_shape(shape: str, progress: float) -> float:
    """From 1 at `progress` 0 to 0 at 1: ``linear``, ``cosine`` (half a cosine) or ``1-sqrt``
    (Hägele et al. 2024: drops faster early, then slower than linear; their best cooldown)."""
    if shape == "linear":
        return 1.0 - progress
    if shape == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * progress))
    if shape == "1-sqrt":
        return 1.0 - math.sqrt(progress)
    raise ConfigError(f"train.optim.decay_shape {shape!r}: expected linear, cosine or 1-sqrt")


def wsd_decay_steps(cfg: OptimConfig, total_steps: int) -> int:
    """Length of a WSD run's decay: `decay_steps`, else `decay_fraction` (default 0.2) of the run."""
    if cfg.decay_steps is not None:
        return cfg.decay_steps
    fraction = WSD_DECAY_FRACTION if cfg.decay_fraction is None else cfg.decay_fraction
    return max(1, round(fraction * total_steps))


def decay_start(cfg: OptimConfig, total_steps: int) -> int:
    """The first step whose learning rate is below `lr` (after warmup): the end of warmup for cosine
    and linear, the end of the stable phase for WSD."""
    if cfg.schedule == "wsd":
        return total_steps - wsd_decay_steps(cfg, total_steps)
    return cfg.warmup_steps


def lr_at(step: int, cfg: OptimConfig, total_steps: int) -> float:
    """The learning rate of `step` (0-based: the update that makes step + 1) in a run of `total_steps`."""
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    floor = cfg.lr * cfg.min_lr_ratio
    if cfg.schedule == "wsd":
        length = wsd_decay_steps(cfg, total_steps)
        start = total_steps - length
        if step < start:
            return cfg.lr
        return floor + (cfg.lr - floor) * decay_shape(cfg.decay_shape, min(1.0, (step - start) / length))
    decay = max(1, (cfg.decay_steps or total_steps) - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / decay)
    if cfg.schedule == "linear":
        return floor + (cfg.lr - floor) * (1.0 - progress)
    return floor + (cfg.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def check_schedule(cfg: OptimConfig, total_steps: int) -> None:
    """`ConfigError` naming the field when the schedule's settings contradict each other or the run's
    length: a decay fraction outside WSD, both a decay length and a fraction, a WSD decay that does
    not fit after warmup."""
    if cfg.decay_fraction is not None and cfg.schedule != "wsd":
        raise ConfigError(
            f"train.optim.decay_fraction is for schedule: wsd, but train.optim.schedule is {cfg.schedule}; "
            "set train.optim.decay_steps (the step the decay ends) or schedule: wsd"
        )
    if cfg.schedule != "wsd":
        return
    if cfg.decay_fraction is not None and cfg.decay_steps is not None:
        raise ConfigError(
            f"train.optim.decay_steps ({cfg.decay_steps}) and train.optim.decay_fraction ({cfg.decay_fraction}) "
            "both set the length of the WSD decay: give one"
        )
    length = wsd_decay_steps(cfg, total_steps)
    if cfg.warmup_steps + length > total_steps:
        field = "decay_steps" if cfg.decay_steps is not None else "decay_fraction"
        raise ConfigError(
            f"train.optim.{field}: a WSD decay of {length} steps after {cfg.warmup_steps} warmup steps does not fit "
            f"in train.steps {total_steps}; shorten the decay or the warmup"
        )


def batch_at(tokens_seen: int, cfg: BatchConfig) -> int:
    """Global batch (sequences) after `tokens_seen` tokens: MT-NLG's ramp from `ramp_start` to
    `global_batch` in steps of `ramp_increment`, spread evenly over `ramp_tokens`; no ramp when
    `ramp_start` is unset."""
    if cfg.ramp_start is None or cfg.ramp_tokens == 0 or cfg.ramp_start >= cfg.global_batch:
        return cfg.global_batch
    increments = (cfg.global_batch - cfg.ramp_start) // cfg.ramp_increment
    if increments <= 0:
        return cfg.global_batch
    done = tokens_seen * increments // cfg.ramp_tokens  # integers: no rounding at the boundaries
    return min(cfg.global_batch, cfg.ramp_start + done * cfg.ramp_increment)


def samples_needed(steps: int, cfg: BatchConfig, seq_len: int) -> int:
    """Sequences consumed by `steps` optimizer steps under the ramp (to size the sample index)."""
    tokens = total = 0
    for _ in range(steps):
        b = batch_at(tokens, cfg)
        total += b
        tokens += b * seq_len
    return total


def index_steps(cfg: TrainConfig) -> int:
    """Steps the sample index is sized for: a branch reads its parent's index (the same data order,
    so the parent's cursor means the same samples), longer when the branch runs past the parent."""
    return max(cfg.steps, cfg.anneal.data_steps) if cfg.anneal is not None else cfg.steps
