"""`selene ablate`'s settings: a pipeline, named variants of its data stages, the proxy model.

A variant is a set of overrides of the pipeline file's data-stage settings, as dotted keys
(``quality.fraction: 0.1``) or nested sections (``quality: {rule: top_fraction}``); ``STAGE: off``
leaves an optional stage out (quality, decontaminate, blend). Training and evaluation are not
variant settings: every variant trains the same proxy (the pipeline's `train` section with the
ablation's `proxy` overrides) with each of `seeds` and evaluates it the same way (`eval` overrides),
so the data is the only difference.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from selene.config.base import Strict


class AblationConfig(Strict):
    """`selene ablate`: which data makes the better model."""

    name: str = Field(default="ablation", description="Name shown in the tables and on the dashboard.")
    pipeline: str = Field(description="The pipeline YAML whose data stages the variants change.")
    out: str = Field(
        description="Directory for the stages, the proxy runs, ablation.json, ablation.md and the plot."
    )
    variants: dict[str, dict[str, Any]] = Field(
        min_length=1,
        description="Name → overrides of the pipeline's data-stage settings (`{}`: the pipeline as it is). "
        "The first variant is the baseline the others are compared with.",
    )
    seeds: list[int] = Field(
        default_factory=lambda: [1234, 1235],
        min_length=1,
        description="Training seeds: each variant's proxy is trained once per seed; two or more give the spread "
        "that says which differences are real.",
    )
    proxy: dict[str, Any] = Field(
        default_factory=dict,
        description="Overrides of the pipeline's `train` section for the proxy model (model, steps, batch ...), "
        "the same for every variant.",
    )
    eval: dict[str, Any] = Field(
        default_factory=dict,
        description="Overrides of the pipeline's `eval` section (tasks, limit ...), the same for every variant.",
    )
    reference: list[str] = Field(
        default_factory=list,
        description="Files of reference text (globs: jsonl(.gz/.zst) with a `text` field, Parquet, selene "
        "datasets): bits per byte of every proxy on them, comparable across tokenizers.",
    )
    reference_documents: int | None = Field(
        default=None, ge=1, description="Reference documents scored, at most (the first, in file order)."
    )
    tokenizer: Literal["shared", "per-variant"] = Field(
        default="shared",
        description="shared: every variant tokenizes with one tokenizer (the pipeline's, else the one the first "
        "variant trains), so only the documents differ; per-variant: each trains its own.",
    )

    @field_validator("variants", mode="before")
    @classmethod
    def _empty(cls, v: Any) -> Any:
        # `baseline:` with nothing after it is YAML's null: the pipeline as it is
        return {k: ({} if o is None else o) for k, o in v.items()} if isinstance(v, dict) else v

    @field_validator("variants")
    @classmethod
    def _names(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name in v:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", name):
                raise ValueError(
                    f"variant name {name!r}: use letters, digits, '_', '.', '-' (it names a directory)"
                )
        return v

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError(f"seeds must differ, got {v}")
        return v
