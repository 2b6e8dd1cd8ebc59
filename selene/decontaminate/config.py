"""`selene decontaminate`'s settings."""

from __future__ import annotations

from pydantic import Field

from selene.config.base import StageConfig


class DecontaminateConfig(StageConfig):
    """`selene decontaminate`: remove evaluation-task text from the training data (GPT-3 / MT-NLG)."""

    tasks: list[str] = Field(default_factory=list, description="jsonl files or lm-eval task directories.")
    ngram: int = Field(default=13, ge=3, le=64, description="Overlap length in normalised words.")
    min_ngram: int = Field(
        default=8, ge=3, description="Shorter n for tasks whose examples are shorter than `ngram` words."
    )
    margin_chars: int = Field(default=200, ge=0, description="Characters removed on each side of a match.")
    min_piece_chars: int = Field(default=200, ge=0, description="Pieces shorter than this are dropped.")
    max_splits: int = Field(default=10, ge=0, description="Documents split more often are dropped whole.")


    def extra_inputs(self) -> list[str]:
        return list(self.tasks)
