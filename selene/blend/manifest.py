"""What `selene blend` records in its manifest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, Record


class BlendInputs(DatasetInputs):
    """The document dataset blend read, its shards and the tokenizer that counted tokens."""

    shards: list[str] = Field(description="sha256 of each input shard.")
    tokenizer: str | None = Field(
        description="The tokenizer that counted tokens (None: estimated from bytes)."
    )


TokensMethod = Literal["counted", "sampled", "estimated"]


class BlendSource(Record):
    """blend: one source, what was asked, planned and realised."""

    documents: int = Field(description="Documents in the input.")
    bytes: int = Field(description="UTF-8 bytes of their text.")
    tokens: int = Field(description="Tokens (counted, extrapolated from a sample, or estimated).")
    tokens_method: TokensMethod = Field(description="How `tokens` was found.")
    tokens_per_byte: float = Field(description="tokens / bytes.")
    weight_requested: float | None = Field(description="blend.weights[source], if set.")
    epochs_requested: float | None = Field(description="blend.epochs[source], if set.")
    epochs: float = Field(description="Passes over the source in the mix.")
    tokens_planned: int = Field(description="tokens × epochs.")
    documents_sampled: int = Field(description="Documents in the mix, repeats counted.")
    documents_distinct: int = Field(description="Distinct documents in the mix.")
    bytes_sampled: int = Field(description="UTF-8 bytes of the documents in the mix.")
    tokens_sampled: int = Field(description="bytes_sampled × tokens_per_byte.")
    share_requested: float = Field(description="Planned share of the mix's tokens.")
    share_realised: float = Field(description="Realised share of the mix's tokens.")


class BlendTotals(Record):
    """blend: the whole mix."""

    sources: int = Field(description="Sources in the input.")
    documents: int = Field(description="Documents in the input.")
    bytes: int = Field(description="UTF-8 bytes of their text.")
    tokens: int = Field(description="Their tokens.")
    target_tokens: int | None = Field(description="blend.target_tokens, if set.")
    tokens_planned: int = Field(description="Tokens the plan asks for.")
    documents_sampled: int = Field(description="Documents in the mix, repeats counted.")
    documents_distinct: int = Field(description="Distinct documents in the mix.")
    bytes_sampled: int = Field(description="UTF-8 bytes of the mix.")
    tokens_sampled: int = Field(description="Tokens of the mix.")
    max_share_error: float = Field(description="Largest |realised − requested| share over the sources.")
    shuffle_buckets: int | None = Field(
        default=None,
        description="Buckets of the out-of-core shuffle (blend.shuffle_buckets, or chosen from the planned "
        "bytes); absent in manifests written before it was recorded.",
    )


class BlendSummary(Record):
    """blend: requested vs realised, per source and in total (also written as blend.json)."""

    sources: dict[str, BlendSource] = Field(description="Per source.")
    totals: BlendTotals = Field(description="Over all sources.")


class BlendManifest(DocumentManifest):
    """blend: the training mix, sampled per source and shuffled."""

    stage: Literal["blend"] = "blend"
    inputs: BlendInputs = Field(description="The dataset read, its shards and the tokenizer.")
    blend: BlendSummary = Field(description="Requested vs realised, per source and in total.")
