"""What `selene substrings` records in its manifest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, EditStats, Record, Repeat


class SubstringsInputs(DatasetInputs):
    """The document dataset read, and the earlier outputs it was deduplicated against."""

    against: list[DatasetInputs] | None = Field(
        default=None, description="Earlier substrings outputs whose documents came first (never changed)."
    )
    tokenizer: str | None = Field(
        default=None, description="unit: tokens — the tokenizer's identity (sha256)."
    )


class SuffixWork(Record):
    """What the suffix arrays read and found (the same whatever the budget cut into parts)."""

    corpus_bytes: int = Field(
        description="Bytes the suffix arrays read (units, document separators included)."
    )
    windows: int = Field(description="Windows of min_length units inside documents.")
    repeated_windows: int = Field(
        description="Of those, repeats of an earlier window: all cut (earlier outputs' windows never are)."
    )


class SubstringsManifest(DocumentManifest):
    """substrings: every repeat of a substring of at least min_length units cut from all but its first
    occurrence."""

    stage: Literal["substrings"] = "substrings"
    inputs: SubstringsInputs = Field(description="The dataset read and the earlier outputs.")
    work: SuffixWork = Field(
        description="Bytes and windows the suffix arrays read, and the repeated windows."
    )
    repeats: list[Repeat] = Field(description="The 20 most repeated spans cut, by occurrences.")
    stats: EditStats = Field(
        description="Documents per source: edited, characters and substrings cut, dropped."
    )
