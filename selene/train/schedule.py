"""Learning-rate schedule and batch-size ramp-up, as pure functions of the step.

Pure functions (no state) make resume exact: the step alone says what the learning rate and the
batch size are, so a restored run continues on the same curve.
"""

from __future__ import annotations

import math

from selene.train.config import BatchConfig, OptimConfig


def lr_at(step: int, cfg: OptimConfig, total_steps: int) -> float:
    """Linear warmup from 0 to `lr` over `warmup_steps`, then cosine decay to `min_lr_ratio` × lr
    at `decay_steps` (default: the last step), constant after."""
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    decay = max(1, (cfg.decay_steps or total_steps) - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / decay)
    floor = cfg.lr * cfg.min_lr_ratio
    return floor + (cfg.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


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
