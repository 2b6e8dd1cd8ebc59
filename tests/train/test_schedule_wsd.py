"""Learning-rate schedules: cosine as it always was, linear, and warmup-stable-decay with its three shapes."""

from __future__ import annotations

import itertools
import math

import pytest

from selene.errors import ConfigError
from selene.train.anneal import check_stable
from selene.train.config import OptimConfig, TrainConfig
from selene.train.schedule import check_schedule, decay_start, lr_at, wsd_decay_steps


def _cosine_before(step: int, cfg: OptimConfig, total_steps: int) -> float:
    """The only schedule selene had before WSD, verbatim: existing runs must keep its numbers bit for bit."""
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    decay = max(1, (cfg.decay_steps or total_steps) - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / decay)
    floor = cfg.lr * cfg.min_lr_ratio
    return floor + (cfg.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


@pytest.mark.parametrize(
    "settings", [{}, {"lr": 6e-4, "warmup_steps": 7, "min_lr_ratio": 0.0}, {"warmup_steps": 0, "decay_steps": 40}]
)
def test_cosine_is_unchanged_bit_for_bit(settings: dict[str, float]) -> None:
    cfg = OptimConfig(**settings)  # type: ignore[arg-type]
    assert cfg.schedule == "cosine" and TrainConfig().optim.schedule == "cosine"  # the default stays cosine
    for step in range(130):
        assert lr_at(step, cfg, 100) == _cosine_before(step, cfg, 100), step


def test_linear_decays_on_a_straight_line_from_warmup_to_the_floor() -> None:
    cfg = OptimConfig(lr=1.0, warmup_steps=10, min_lr_ratio=0.1, schedule="linear")
    lrs = [lr_at(s, cfg, 110) for s in range(120)]
    assert lrs[9] == 1.0 and lrs[10] == 1.0  # the decay's first step trains at the peak
    assert lrs[60] == pytest.approx(0.55) and lrs[110] == pytest.approx(0.1) and lrs[119] == pytest.approx(0.1)
    steps = [b - a for a, b in itertools.pairwise(lrs[10:111])]
    assert all(d == pytest.approx(-0.009) for d in steps)


@pytest.mark.parametrize("shape", ["linear", "cosine", "1-sqrt"])
def test_wsd_warms_up_holds_then_decays_in_its_shape(shape: str) -> None:
    cfg = OptimConfig(lr=2.0, warmup_steps=10, min_lr_ratio=0.0, schedule="wsd", decay_steps=20, decay_shape=shape)  # type: ignore[arg-type]
    lrs = [lr_at(s, cfg, 100) for s in range(100)]
    assert lrs[0] == pytest.approx(0.2) and lrs[9] == 2.0
    assert set(lrs[10:81]) == {2.0}  # stable through the step that starts the decay (80)
    assert decay_start(cfg, 100) == 80 and lrs[81] < 2.0
    decay = lrs[80:]
    assert all(a > b for a, b in itertools.pairwise(decay))  # strictly down
    half = {"linear": 0.5, "cosine": 0.5, "1-sqrt": 1 - math.sqrt(0.5)}[shape]
    assert lrs[90] == pytest.approx(2.0 * half)
    assert lrs[99] == pytest.approx(2.0 * {"linear": 0.05, "cosine": 0.5 * (1 + math.cos(math.pi * 0.95)), "1-sqrt": 1 - math.sqrt(0.95)}[shape])
    assert lr_at(100, cfg, 100) == 0.0 == lr_at(150, cfg, 100)  # the floor from the step after the last


def test_1_sqrt_stays_below_linear_and_ends_above_cosine() -> None:
    shaped = {s: OptimConfig(lr=1.0, warmup_steps=0, min_lr_ratio=0.0, schedule="wsd", decay_steps=100, decay_shape=s)
              for s in ("linear", "cosine", "1-sqrt")}  # type: ignore[arg-type]  # fmt: skip
    lr = {s: [lr_at(t, c, 200) for t in range(200)] for s, c in shaped.items()}
    assert all(lr["1-sqrt"][t] < lr["linear"][t] for t in range(101, 200))  # sqrt(p) > p: lower all along
    assert lr["1-sqrt"][110] < lr["linear"][110] < lr["cosine"][110]
    assert lr["linear"][199] > lr["1-sqrt"][199] > lr["cosine"][199]  # the tail: cosine flattens to the floor first


def test_wsd_decay_length_from_steps_fraction_or_the_default_fifth() -> None:
    wsd = OptimConfig(schedule="wsd", warmup_steps=5)
    assert wsd_decay_steps(wsd, 1000) == 200  # Hägele et al.: a 20% cooldown
    assert wsd_decay_steps(wsd.model_copy(update={"decay_fraction": 0.1}), 1000) == 100
    assert wsd_decay_steps(wsd.model_copy(update={"decay_steps": 37}), 1000) == 37
    with_floor = OptimConfig(lr=1.0, min_lr_ratio=0.25, warmup_steps=0, schedule="wsd", decay_fraction=0.5)
    assert lr_at(49, with_floor, 100) == 1.0 and lr_at(100, with_floor, 100) == 0.25


def test_schedule_settings_that_contradict_each_other_are_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"train.optim.decay_fraction is for schedule: wsd"):
        check_schedule(OptimConfig(decay_fraction=0.2), 100)
    with pytest.raises(ConfigError, match=r"decay_steps \(10\) and train.optim.decay_fraction \(0.2\) both"):
        check_schedule(OptimConfig(schedule="wsd", decay_steps=10, decay_fraction=0.2), 100)
    with pytest.raises(ConfigError, match=r"train.optim.decay_steps: a WSD decay of 95 steps after 10 warmup"):
        check_schedule(OptimConfig(schedule="wsd", decay_steps=95, warmup_steps=10), 100)
    check_schedule(OptimConfig(schedule="wsd", decay_steps=90, warmup_steps=10), 100)
    check_schedule(OptimConfig(), 100)


def test_a_branch_point_must_be_in_a_wsd_runs_stable_phase() -> None:
    wsd = OptimConfig(schedule="wsd", warmup_steps=10, decay_steps=20)
    for step in (10, 50, 80):  # the end of warmup to the start of the run's own decay, both included
        check_stable("step-x", step, wsd, 100)
    with pytest.raises(ConfigError, match="step 9 is still in the run's warmup"):
        check_stable("step-x", 9, wsd, 100)
    with pytest.raises(ConfigError, match="from step 80 on: step 81 is past its stable phase"):
        check_stable("step-x", 81, wsd, 100)
    with pytest.raises(ConfigError, match="schedule cosine, whose learning rate decays from the end of warmup"):
        check_stable("step-x", 50, OptimConfig(warmup_steps=10), 100)
