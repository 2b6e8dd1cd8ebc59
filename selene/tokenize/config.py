"""`selene tokenize`'s settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.config.base import StageConfig


class TokenizeConfig(StageConfig):
    """`selene tokenize`: a tokenizer, then Megatron-LM indexed shards (.bin + .idx)."""

    tokenizer: str | None = Field(
        default=None,
        description="An existing tokenizer: a sentencepiece .model, a Hugging Face tokenizer.json or a directory "
        "holding one (with tokenizer_config.json naming its eos_token), a tiktoken .tiktoken file (a published "
        "encoding by name, else with NAME.tiktoken.json beside it) or tiktoken:NAME from tiktoken's cache; else a "
        "sentencepiece model is trained.",
    )
    vocab_size: int = Field(default=32_000, ge=64, le=1_000_000)
    allow_smaller_vocab: bool = Field(
        default=False,
        description="Accept fewer pieces than vocab_size when the training sample supports no more "
        "(the manifest records the size); default: an error naming the most the sample supports.",
    )
    model_type: Literal["bpe", "unigram"] = "bpe"
    character_coverage: float = Field(default=0.9995, gt=0.0, le=1.0)
    byte_fallback: bool = Field(default=True, description="Unknown characters become UTF-8 byte pieces.")
    sample_docs: int = Field(default=100_000, ge=1, description="Documents of the seeded training sample.")
    sample_chars: int = Field(default=200_000_000, ge=1000, description="Characters of the sample, at most.")
    # sentencepiece holds its training sample in memory: up to ~9.5 bytes per byte of text (measured, BPE,
    # vocab 32000, every line distinct: 1020 MiB peak at 100 MB). 80 MB keeps training under 1 GiB.
    sample_bytes: int | None = Field(
        default=80_000_000,
        ge=1000,
        description="UTF-8 bytes of the sample, at most: a seeded random subset of the drawn documents "
        "that fits (training memory is up to ~10x this); null: no cap, the first sample_chars in corpus order.",
    )
    max_sentence_length: int = Field(default=16_384, ge=256, description="Longer training lines are cut.")
    eod_piece: str = Field(
        default="</s>", description="End-of-document piece of a sentencepiece model (a control symbol)."
    )
    eod_token: str | None = Field(
        default=None,
        description="End-of-document token of a given tokenizer; default: its own EOS (a sentencepiece model: eod_piece).",
    )
    prefix: str = Field(
        default="data_text_document", description="Output prefix: <prefix>.bin, <prefix>.idx."
    )
    encode_batch_bytes: int = Field(
        default=4 << 20,
        ge=1,
        description="UTF-8 bytes of text per batch encode call (a longer document alone).",
    )
    encode_batch: int | None = Field(
        default=None,
        ge=1,
        description="Documents per batch encode call, at most (batches are sized in bytes).",
    )
    threads: int = Field(default=1, ge=1, description="Encoding threads per worker.")
    seed: int = 1234

    def extra_inputs(self) -> list[str]:
        # tiktoken:NAME is no path: it names a file in tiktoken's own cache
        return [self.tokenizer] if self.tokenizer and not self.tokenizer.startswith("tiktoken:") else []
