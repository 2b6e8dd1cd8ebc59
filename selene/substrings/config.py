"""`selene substrings`'s settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from selene.config.base import StageConfig


class SubstringsConfig(StageConfig):
    """`selene substrings`: cut every repeat of a substring of at least `min_length` units out of all
    but its first occurrence in the corpus, or out of all of them (Lee et al. 2022; RefinedWeb, DCLM)."""

    min_length: int | None = Field(
        default=None,
        ge=8,
        le=100_000,
        description="Length of a repeated substring that is cut, in `unit`s (Lee et al. and RefinedWeb: 50 "
        "GPT-2 tokens, about 200 bytes of English). Unset: the stage does not run in a pipeline.",
    )
    unit: Literal["bytes", "tokens"] = Field(
        default="bytes",
        description="What `min_length` counts: bytes of the UTF-8 text (the default: no tokenizer needed, and "
        "the suffix array works on the text itself), or tokens of `tokenizer` (a window then starts and ends "
        "at token boundaries, as in Lee et al.'s tool, which works on GPT-2 tokens).",
    )
    tokenizer: str | None = Field(
        default=None,
        description="unit: tokens — a sentencepiece .model, a Hugging Face tokenizer.json (or its directory), "
        "a .tiktoken file or tiktoken:NAME.",
    )
    min_chars: int = Field(
        default=1,
        ge=0,
        description="A cut document left with fewer characters than this (leading and trailing whitespace not "
        "counted) goes whole to removed.parquet (substrings:too_short); 1: only a document cut to nothing.",
    )
    min_words: int = Field(
        default=0,
        ge=0,
        description="A cut document left with fewer whitespace-separated words than this goes whole to "
        "removed.parquet (substrings:too_short).",
    )
    keep: Literal["first", "none"] = Field(
        default="first",
        description="Which copy of a repeated substring stays: first (the first occurrence in corpus order, "
        "every later one cut) or none (every copy cut, the first too: Lee et al.'s tool and datatrove's "
        "ExactSubstr, whose byte ranges name every occurrence).",
    )
    against: list[str] = Field(
        default_factory=list,
        description="Earlier `substrings` outputs (a curated corpus): their documents come first in corpus "
        "order and are never changed, so this input's substrings that repeat theirs are cut. Same min_length, "
        "unit and tokenizer required.",
    )

    def extra_inputs(self) -> list[str]:
        own = [self.tokenizer] if self.tokenizer and not self.tokenizer.startswith("tiktoken:") else []
        return [*own, *self.against]

    @model_validator(mode="after")
    def _unit(self) -> SubstringsConfig:
        if self.unit == "tokens" and not self.tokenizer:
            raise ValueError(
                "unit: tokens needs `tokenizer` (a .model, tokenizer.json, .tiktoken or tiktoken:NAME)"
            )
        if self.unit == "bytes" and self.tokenizer:
            raise ValueError("`tokenizer` is only used with unit: tokens (unit is bytes)")
        return self
