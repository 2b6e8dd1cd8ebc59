"""`selene spans`'s settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from selene.config.base import StageConfig

Unit = Literal["sentence", "paragraph", "line"]


class SpansConfig(StageConfig):
    """`selene spans`: spans of consecutive sentences, paragraphs or lines repeated anywhere in the
    corpus are cut from every document but the first that holds them (C4's and datatrove's
    SentenceDedup; Dolma's paragraphs, CCNet's lines)."""

    unit: Unit | None = Field(
        default=None,
        description="What a span is made of: sentence (datatrove's English splitter, as spaCy's sentencizer "
        "finds them), paragraph (blank-line separated) or line; unset, the stage is off in a pipeline and "
        "`selene spans` asks for one.",
    )
    span: int = Field(
        default=3,
        ge=1,
        le=64,
        description="Consecutive units that make a span (datatrove's n_sentences; C4: 3 sentences).",
    )
    min_span_chars: int = Field(
        default=50,
        ge=0,
        le=100_000,
        description="A span shorter than this, in characters of its normalised text, is never cut: three menu "
        'lines ("Home About Contact": 18) or short replies repeat everywhere without being copied text; a '
        "cookie notice or licence sentence is well over 50. 0: every span counts (datatrove).",
    )
    min_doc_words: int = Field(
        default=50,
        ge=0,
        description="A document left with fewer words (spaCy-like tokens, punctuation included, as datatrove "
        "counts them) after its cuts goes to removed.parquet (spans:too_short). 0: no minimum. A document "
        "with nothing cut is never dropped.",
    )
    min_sentences: int = Field(
        default=3,
        ge=0,
        description="A document left with fewer sentences after its cuts goes to removed.parquet "
        "(spans:too_short), whatever the unit (datatrove's min_num_sentences). 0: no minimum.",
    )
    min_words_to_remove: int = Field(
        default=0,
        ge=0,
        description="A run of consecutive cut units with fewer words than this is left in the document "
        "(datatrove's min_words_to_remove_span). 0: every duplicate span is cut.",
    )
    lowercase: bool = Field(default=True, description="Normalisation before hashing: lower-case.")
    strip_punctuation: bool = Field(
        default=True, description="Normalisation: punctuation (datatrove's list) becomes whitespace."
    )
    normalize_numbers: bool = Field(default=True, description="Normalisation: every number becomes 0.")
    strip_diacritics: bool = Field(
        default=True, description="Normalisation: accents removed (NFD, marks dropped)."
    )
    normalize_weekdays: bool = Field(
        default=False,
        description="Normalisation: English weekday names become one token (after lower-casing).",
    )
    normalize_months: bool = Field(
        default=False, description="Normalisation: English month names become one token (after lower-casing)."
    )
    against: list[str] = Field(
        default_factory=list,
        description="Earlier spans outputs (a curated crawl): spans they hold are cut from every document of "
        "this input, the first copy too; theirs are read, never changed. Same unit, span and normalisation "
        "required. For a chain of crawls give every earlier output.",
    )
    only_against: bool = Field(
        default=False,
        description="With `against`: cut only spans the earlier outputs hold, not spans repeated within this "
        "input (datatrove's only_dedup_in_index, its default when it has an index).",
    )
    store_index: bool = Field(
        default=True,
        description="Keep a sorted, partitioned index of the span hashes of what this output holds "
        "(OUT/spans-index/, 8 bytes a span) so that a later run can be cut --against it.",
    )

    def extra_inputs(self) -> list[str]:
        return list(self.against)

    @model_validator(mode="after")
    def _only_against(self) -> SpansConfig:
        if self.only_against and not self.against:
            raise ValueError("only_against needs `against`, the earlier spans outputs whose spans are cut")
        return self
