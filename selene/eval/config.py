"""`selene eval`'s settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.config.base import StageConfig


class EvalConfig(StageConfig):
    """`selene eval`: lm-evaluation-harness tasks, perplexity and bits per byte of a checkpoint."""

    checkpoint: str | None = Field(default=None, description="Checkpoint dir; default: the run's latest.")
    tasks: list[str] = Field(
        default_factory=lambda: ["selene_cloze", "selene_piqa", "selene_hellaswag", "selene_firstword"],
        description=(
            "Harness task names: selene's bundled selene_* tasks, tasks of include_path, any task of "
            "lm-eval's registry (piqa, hellaswag, lambada_openai, ...; its data from the Hugging Face "
            "datasets cache or task_data), or the suite mt-nlg (the MT-NLG 530B paper's table)."
        ),
    )
    task_data: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Task → directory of local files that replace its dataset: one <split>.jsonl or "
            "<split>.parquet per split, named as the task's lm-eval YAML names its splits."
        ),
    )
    include_path: str | None = Field(default=None, description="Extra directory of harness task YAMLs.")
    num_fewshot: int = Field(default=0, ge=0, description="Shots of every task named on its own (a suite has its own).")
    limit: int | None = Field(default=None, ge=1, description="Documents per task, at most.")
    batch_size: int = Field(default=8, ge=1, description="Requests per forward.")
    perplexity: bool = Field(default=True, description="Also perplexity and bits/byte on the held-out split.")
    perplexity_documents: int | None = Field(default=None, ge=1, description="Held-out documents to score, at most.")
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto: cuda when there is a GPU, else cpu.")
    seed: int = Field(default=1234, description="Seed of the harness's sampling (generation tasks, few-shot examples).")
