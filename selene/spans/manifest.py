"""What `selene spans` records in its manifest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, EditStats, Record, Repeat


class SpansInputs(DatasetInputs):
    """The document dataset spans read, and the earlier outputs it was cut against."""

    against: list[DatasetInputs] | None = Field(
        default=None, description="Earlier spans outputs whose spans were cut from this input (--against)."
    )


class SpanCounts(Record):
    """spans: the spans hashed and found repeated."""

    unit: str = Field(description="sentence, paragraph or line.")
    span: int = Field(description="Consecutive units in a span.")
    spans: int = Field(description="Spans hashed (windows of `span` units that can be cut).")
    duplicate_spans: int = Field(description="Of those, copies of a span seen before (cut).")
    distinct_repeated: int = Field(description="Distinct spans seen more than once in this input.")
    in_earlier: int = Field(description="Spans cut because an earlier output (--against) holds them.")
    index_spans: int | None = Field(
        default=None, description="Distinct spans in this output's index (OUT/spans-index), for --against."
    )


class SpansManifest(DocumentManifest):
    """spans: documents with repeated spans of sentences, paragraphs or lines cut out."""

    stage: Literal["spans"] = "spans"
    inputs: SpansInputs = Field(description="The dataset read and the earlier outputs cut against.")
    spans: SpanCounts = Field(description="The spans hashed and found repeated.")
    repeats: list[Repeat] = Field(description="The 20 most repeated spans, by occurrences in this input.")
    stats: EditStats = Field(description="Documents per source: edited, characters and units cut, dropped.")
