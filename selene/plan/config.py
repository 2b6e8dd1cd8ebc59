"""`selene scaling-study`'s settings: short training runs that calibrate the planner."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from selene.config.base import Strict
from selene.train.config import ModelConfig, ParallelConfig


class StudyRun(Strict):
    """One short training run of a scaling study: a model, a layout and a batch."""

    name: str = Field(description="Label in the study's tables and plot.")
    model: ModelConfig = Field(default_factory=ModelConfig)
    parallel: ParallelConfig = Field(default_factory=lambda: ParallelConfig(dp_shard=-1))
    nproc: int = Field(default=1, ge=1, description="Processes (devices) of this run.")
    micro_batch: int = Field(default=1, ge=1, description="Sequences per data-parallel rank per forward.")
    global_batch: int | None = Field(default=None, ge=1, description="Default: micro_batch × data-parallel size.")
    seq_len: int | None = Field(default=None, ge=8, description="Default: the model's max_seq_len.")


class ScalingStudyConfig(Strict):
    """`selene scaling-study`: short runs that measure TFLOP/s and memory and calibrate the planner."""

    out: str = Field(description="Directory for the runs, study.json, calibration.json and the plot.")
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="Where the runs train; auto: cuda when there is a GPU.")
    gpu: str | None = Field(
        default=None, description="Planner device name (a100-80g, h100, ...); default: detected from CUDA."
    )
    steps: int = Field(default=6, ge=2, description="Optimizer steps per run.")
    warmup: int = Field(default=2, ge=1, description="First steps left out of the timing (allocation, compile).")
    vocab_size: int = Field(default=512, ge=8, description="Vocabulary of the synthetic token data.")
    seed: int = Field(default=1234, description="Seed of the synthetic token data and of every run.")
    runs: list[StudyRun] = Field(min_length=2, description="At least two, of different sizes, to fit two factors.")
    # a loss study over token budgets instead of the timing calibration (selene.plan.study_budgets)
    budgets: list[int] | None = Field(
        default=None,
        description="Token budgets: each run's model is trained to each and its final loss reported (a loss "
        "scaling study); unset: the timing study that calibrates the planner.",
    )
    budget_mode: Literal["branches", "separate"] = Field(
        default="branches",
        description="branches: one WSD run per model to the largest budget, the others annealed from its "
        "stable-phase checkpoints (`selene train --anneal-from`); separate: one WSD run per budget from step 0 "
        "(the same losses, at the cost of every budget's full run).",
    )
    decay_fraction: float = Field(default=0.2, gt=0, lt=1, description="The WSD decay's share of each budget.")
    lr: float = Field(default=1e-3, gt=0, description="Peak learning rate of the budget runs.")
    lr_warmup_steps: int = Field(default=0, ge=0, description="Warmup steps of the budget runs.")
    data: str | None = Field(
        default=None,
        description="Token dataset prefix for the budget runs (with its tokenize manifest); default: synthetic "
        "tokens, whose losses measure cost, not a scaling law.",
    )

    @model_validator(mode="after")
    def _check(self) -> ScalingStudyConfig:
        if self.warmup >= self.steps:
            raise ValueError(f"warmup {self.warmup} must be less than steps {self.steps}: no step would be timed")
        if self.budgets is not None and (not self.budgets or min(self.budgets) < 1 or len(set(self.budgets)) != len(self.budgets)):
            raise ValueError(f"budgets must be distinct positive token counts, got {self.budgets}")
        names = [r.name for r in self.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"run names must be unique, got {names}")
        return self
