"""What `selene tokenize` records in its manifest."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import Field

from selene.io.dataset import read_manifest
from selene.manifest import DatasetInputs, FileEntry, Record, StageManifest, Stats


class TiktokenInfo(Record):
    """tokenize: what a tiktoken encoding's ``.tiktoken`` file (ranks only) does not hold."""

    name: str = Field(description="The encoding's name (cl100k_base ...; empty for an unnamed one).")
    pat_str: str = Field(description="Its split pattern (the regex that cuts text before BPE).")
    special_tokens: dict[str, int] = Field(description="Its special tokens and their ids.")


class TokenizerInfo(Record):
    """tokenize: the tokenizer next to the token data."""

    kind: Literal["sentencepiece", "huggingface", "tiktoken"] = Field(
        default="sentencepiece",
        description="sentencepiece (a .model), huggingface (a tokenizer.json) or tiktoken (a .tiktoken file).",
    )
    file: str = Field(description="Its file name in the output directory.")
    sha256: str = Field(description="sha256 of that file.")
    _omit_if_none = ("vocab_size_requested", "tiktoken")

    vocab_size: int = Field(description="Pieces in the vocabulary (what the model has).")
    vocab_size_requested: int | None = Field(
        default=None,
        description="tokenize.vocab_size of a trained model: more than `vocab_size` only with "
        "allow_smaller_vocab (absent: a given model, or a manifest written before it was recorded).",
    )
    eod_id: int = Field(description="The end-of-document id appended to every document.")
    eod_piece: str = Field(description="The piece of that id.")
    trained: bool = Field(description="True: trained on the input; False: given (tokenize.tokenizer).")
    tiktoken: TiktokenInfo | None = Field(
        default=None,
        description="A tiktoken encoding's name, pattern and special tokens (also in <file>.json beside it).",
    )


class TokenizeStats(Stats):
    """tokenize's stats: with sequences and tokens (per source too)."""

    sequences: int = Field(description="Sequences in the .idx (one per document).")
    tokens: int = Field(description="Tokens in the .bin, EOD included.")


class TokenizeManifest(StageManifest):
    """tokenize: a Megatron-LM indexed dataset (``<prefix>.bin`` / ``.idx``) and its tokenizer."""

    stage: Literal["tokenize"] = "tokenize"
    inputs: DatasetInputs = Field(description="The dataset read.")
    shards: list[FileEntry] = Field(description="``<prefix>.bin`` and ``<prefix>.idx``.")
    removed: None = Field(default=None, exclude=True, description="Nothing is removed (not written).")
    prefix: str = Field(description="The data prefix, relative to the output directory.")
    tokenizer: TokenizerInfo = Field(description="The tokenizer: kind, file, vocabulary and EOD id.")
    dtype: str = Field(description="Token dtype of the .bin (uint16 below 65,500 pieces, else int32).")
    stats: TokenizeStats = Field(description="Documents and tokens per source.")


def token_manifest(prefix: str) -> TokenizeManifest | None:
    """The tokenize manifest next to the token data `prefix` (``<dir>/<name>`` of ``.bin``/``.idx``),
    or None when there is none (token data made by another tool)."""
    return read_manifest(os.path.dirname(prefix) or ".", TokenizeManifest)
