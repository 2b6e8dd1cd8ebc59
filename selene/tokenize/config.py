"""`selene tokenize`'s settings."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from selene.config.base import StageConfig

FLAGS = {
    "tokenizer": "--tokenizer",
    "vocab_size": "--vocab-size",
    "allow_smaller_vocab": "--allow-smaller-vocab",
    "model_type": "--model-type",
    "eod_token": "--eod-token",
}
"""The settings `selene tokenize` has options for, named with them in errors."""


class TokenizeConfig(StageConfig):
    """`selene tokenize`: a tokenizer, then Megatron-LM indexed shards (.bin + .idx)."""

    tokenizer: str | None = Field(
        default=None,
        description="An existing tokenizer: a sentencepiece .model, a Hugging Face tokenizer.json or a directory "
        "holding one (with tokenizer_config.json naming its eos_token), a tiktoken .tiktoken file (a published "
        "encoding by name, else with NAME.tiktoken.json beside it) or tiktoken:NAME from tiktoken's cache; else a "
        "sentencepiece model is trained.",
    )
    vocab_size: int = Field(
        default=32_000, ge=64, le=1_000_000, description="Vocabulary of a trained tokenizer."
    )
    allow_smaller_vocab: bool = Field(
        default=False,
        description="Accept fewer pieces than vocab_size when the training sample supports no more "
        "(the manifest records the size); default: an error naming the most the sample supports.",
    )
    model_type: Literal["bpe", "unigram"] = Field(
        default="bpe", description="sentencepiece model type of a trained tokenizer."
    )
    character_coverage: float = Field(
        default=0.9995,
        gt=0.0,
        le=1.0,
        description="Share of the sample's characters a trained tokenizer covers (sentencepiece's).",
    )
    byte_fallback: bool = Field(default=True, description="Unknown characters become UTF-8 byte pieces.")
    sample_docs: int = Field(default=100_000, ge=1, description="Documents of the seeded training sample.")
    sample_chars: int = Field(default=200_000_000, ge=1000, description="Characters of the sample, at most.")
    # sentencepiece holds its training sample in memory: up to ~9.5 bytes per byte of text (measured, BPE,
    # vocab 32000, every line distinct: 1020 MiB peak at 100 MB). 80 MB keeps training under 1 GiB.
    sample_bytes: int | None = Field(
        default=80_000_000,
        ge=1000,
        description="UTF-8 bytes of the sample, at most: a seeded random subset of the drawn documents "
        "that fits (sentencepiece's training memory grows with it: docs/stages/tokenize.md says "
        "how much); null: no cap, the first sample_chars in corpus order.",
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
    seed: int = Field(default=1234, description="Seed of the training sample and of sentencepiece's trainer.")

    TRAINING: ClassVar[tuple[str, ...]] = (
        "vocab_size", "allow_smaller_vocab", "model_type", "character_coverage", "byte_fallback",
        "sample_docs", "sample_chars", "sample_bytes", "max_sentence_length",
    )  # fmt: skip
    """Settings of a sentencepiece model being trained: with a given tokenizer nothing reads them."""

    @model_validator(mode="after")
    def _no_conflicts(self) -> TokenizeConfig:
        """Settings that the others make unused are refused: a given tokenizer has its own vocabulary
        (a `vocab_size` beside it would be recorded in the manifest, never applied), a trained one
        ends documents with `eod_piece`, and `eod_token` replaces `eod_piece` of a given one.
        Changed from its default is what counts as set: a file that spells out a default is no mistake."""
        defaults = type(self).model_fields
        changed = [
            k for k in self.TRAINING if getattr(self, k) != defaults[k].get_default(call_default_factory=True)
        ]
        if self.tokenizer is not None and changed:
            said = ", ".join(f"{_name(k)} = {getattr(self, k)!r}" for k in changed)
            raise ValueError(
                f"{_name('tokenizer')} and {said} conflict: {'that setting trains' if len(changed) == 1 else 'those settings train'} "
                "a sentencepiece model, and a given tokenizer is used as it is (its own vocabulary). "
                "Unset the tokenizer to train one, or unset the training settings"
            )
        if self.eod_token is not None and self.tokenizer is None:
            raise ValueError(
                f"{_name('eod_token')} = {self.eod_token!r} needs {_name('tokenizer')}: it names the end-of-document "
                "token of a given tokenizer; a trained model ends documents with eod_piece"
            )
        if self.eod_token is not None and self.eod_piece != defaults["eod_piece"].default:
            raise ValueError(
                f"{_name('eod_token')} = {self.eod_token!r} and eod_piece = {self.eod_piece!r} conflict: both name "
                "the end-of-document token of the given tokenizer; set one"
            )
        return self

    def extra_inputs(self) -> list[str]:
        # tiktoken:NAME is no path: it names a file in tiktoken's own cache
        return [self.tokenizer] if self.tokenizer and not self.tokenizer.startswith("tiktoken:") else []


def _name(field: str) -> str:
    """A setting as the user may have given it: its key, and its option where it has one."""
    return f"{field} ({FLAGS[field]})" if field in FLAGS else field
