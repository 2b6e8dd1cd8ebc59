"""`selene blend`'s settings."""

from __future__ import annotations

from pydantic import Field

from selene.config.base import StageConfig


class BlendConfig(StageConfig):
    """`selene blend`: per-source weights (shares of the mix) or epochs → a shuffled document dataset."""

    weights: dict[str, float] = Field(
        default_factory=dict, description="Source → share of the training tokens (normalised to sum 1)."
    )
    epochs: dict[str, float] = Field(
        default_factory=dict, description="Source → passes over it (e.g. Books3: 1.5); fixed, not normalised."
    )
    target_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Tokens of the mix; default: the weighted sources' own tokens (shared by weight) plus "
        "what the epoch sources ask for.",
    )
    tokenizer: str | None = Field(
        default=None,
        description="Tokenizer to count tokens with, any that tokenize takes (a sentencepiece .model, a Hugging "
        "Face tokenizer.json or its directory, a .tiktoken file or tiktoken:NAME); else tokens are estimated.",
    )
    bytes_per_token: float = Field(
        default=4.0, gt=0, description="Token estimate without a tokenizer (GPT-2-like BPE: ~4 bytes/token)."
    )
    token_sample_docs: int = Field(default=2000, ge=1, description="Documents per source to count tokens on.")
    shuffle_buckets: int | None = Field(
        default=None,
        ge=1,
        description="Out-of-core shuffle: documents scatter to buckets, each shuffled in memory; default: "
        "planned bytes of the mix / shuffle_bucket_bytes (from the data and config, never the workers).",
    )
    shuffle_bucket_bytes: int = Field(
        default=128 << 20,
        ge=1 << 20,
        description="Bytes of text per shuffle bucket when shuffle_buckets is unset (a shuffle task holds one).",
    )
    shard_bytes: int = Field(default=32 << 20, ge=1024, description="Bytes of text per output shard.")
    shard_docs: int | None = Field(default=None, ge=1, description="Documents per output shard, at most.")
    max_epochs: float | None = Field(
        default=None,
        gt=0,
        description="Most passes over any source; more is an error naming the source. Unset: a source "
        "its weight repeats more than 4 times is warned about.",
    )
    seed: int = Field(default=1234, description="Seed of the sampling and the global shuffle.")


    def extra_inputs(self) -> list[str]:
        # tiktoken:NAME is no path: it names a file in tiktoken's own cache
        return [self.tokenizer] if self.tokenizer and not self.tokenizer.startswith("tiktoken:") else []
