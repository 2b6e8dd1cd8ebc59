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
    micro_batch: int = Field(default=1, ge=1)
    global_batch: int | None = Field(default=None, ge=1, description="Default: micro_batch × data-parallel size.")
    seq_len: int | None = Field(default=None, ge=8, description="Default: the model's max_seq_len.")


class ScalingStudyConfig(Strict):
    """`selene scaling-study`: short runs that measure TFLOP/s and memory and calibrate the planner."""

    out: str = Field(description="Directory for the runs, study.json, calibration.json and the plot.")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    gpu: str | None = Field(
        default=None, description="Planner device name (a100-80g, h100, ...); default: detected from CUDA."
    )
    steps: int = Field(default=6, ge=2, description="Optimizer steps per run.")
    warmup: int = Field(default=2, ge=1, description="First steps left out of the timing (allocation, compile).")
    vocab_size: int = Field(default=512, ge=8, description="Vocabulary of the synthetic token data.")
    seed: int = 1234
    runs: list[StudyRun] = Field(min_length=2, description="At least two, of different sizes, to fit two factors.")

    @model_validator(mode="after")
    def _check(self) -> ScalingStudyConfig:
        if self.warmup >= self.steps:
            raise ValueError(f"warmup {self.warmup} must be less than steps {self.steps}: no step would be timed")
        names = [r.name for r in self.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"run names must be unique, got {names}")
        return self
