"""What the suffix array reads: each document as a string of bytes (its units), and the way back from
units to the document's characters.

unit: bytes — the document's UTF-8 bytes, one byte a unit.

unit: tokens — each token id written as `width` bytes: the first with its high bit set (0x80 | the
id's top 7 bits, never 0xFF), the others below 0x80 (7 bits each). A byte string can then only equal
another when both start at a token's first byte (the only bytes >= 0x80), so a match of `min_length`
× `width` bytes is a match of `min_length` whole tokens, and a window never starts inside a token.

Documents are joined with SEP (0xFF) after each: UTF-8 never produces it and no token code starts
with it, so a window (which lies inside one document) never holds it, and a repeat of a window is
inside one document too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from selene.substrings.config import SubstringsConfig
    from selene.tokenize.tokenizer import Tokenizer

SEP = 0xFF


def token_width(vocab_size: int) -> int:
    """Bytes per token code: the fewest whose first byte (7 bits, at most 0x7E) and 7 bits per further
    byte hold every id below `vocab_size` (3 for GPT-2's 50,257)."""
    width = 1
    while (vocab_size - 1) >> (7 * (width - 1)) > 0x7E:
        width += 1
    return width


def token_codes(ids: np.ndarray, width: int) -> np.ndarray:
    """The codes of `ids` (uint8, `width` bytes per id), as the module docstring says."""
    ids = ids.astype(np.int64, copy=False)
    out = np.empty((len(ids), width), dtype=np.uint8)
    for b in range(width):
        shift = 7 * (width - 1 - b)
        out[:, b] = (ids >> shift) & 0x7F
    out[:, 0] |= 0x80
    return out.reshape(-1)


@lru_cache(maxsize=2)
def tokenizer(path: str) -> Tokenizer:
    """The tokenizer of unit: tokens, loaded once per process."""
    from selene.tokenize.tokenizer import load  # lazy: the tokenizer libraries only for unit tokens

    return load(path, require_eod=False)


class Units:
    """Encodes documents into units and maps unit ranges back to character ranges."""

    def __init__(self, cfg: SubstringsConfig) -> None:
        self.unit = cfg.unit
        self.tok = tokenizer(cfg.tokenizer) if cfg.unit == "tokens" and cfg.tokenizer else None
        self.width = token_width(self.tok.vocab_size) if self.tok is not None else 1

    @property
    def identity(self) -> str | None:
        """The tokenizer's identity (sha256 of what fixes its ids), None for bytes."""
        return self.tok.identity if self.tok is not None else None

    def decode(self, units: bytes) -> str:
        """The text of a span of units (bytes: invalid UTF-8 at a span's ends shown as U+FFFD)."""
        if self.tok is None:
            return units.decode("utf-8", errors="replace")
        raw = np.frombuffer(units, dtype=np.uint8).reshape(-1, self.width).astype(np.int64)
        ids = np.zeros(len(raw), dtype=np.int64)
        for b in range(self.width):
            ids = (ids << 7) | (raw[:, b] & 0x7F)
        return self.tok.decode(ids.tolist())

    def encode(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's units as bytes (uint8)."""
        if self.tok is None:
            return [np.frombuffer(t.encode("utf-8"), dtype=np.uint8) for t in texts]
        return [token_codes(ids, self.width) for ids in self.tok.encode_batch(texts, 1)]

    def boundaries(self, text: str) -> np.ndarray:
        """The character offset where each unit starts, then len(text): non-decreasing, length
        units + 1. A unit range [a, b) covers the characters [bounds[a], bounds[b])."""
        if self.tok is None:
            raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
            # a byte inside a character (a continuation byte) starts no character: cut only where one
            # starts, so a cut range keeps a character that it covers only in part
            starts = (raw & 0xC0) != 0x80
            return np.concatenate([np.cumsum(starts) - starts, [len(text)]]).astype(np.int64)
        return _token_bounds(self.tok, text)


def _token_bounds(tok: Tokenizer, text: str) -> np.ndarray:
    """Character offsets of the tokens' starts (+ len(text)), from the tokenizer's own offsets."""
    kind = getattr(tok, "kind", "")
    if kind == "huggingface":
        enc = tok.tok.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
        starts = [s for s, _ in enc.offsets]
    elif kind == "tiktoken":
        ids = tok.encode(text)
        _, starts = tok.enc.decode_with_offsets(ids)  # type: ignore[attr-defined]
    else:
        proto = tok.sp.encode(text, return_type="proto")  # type: ignore[attr-defined]
        starts = [p.begin for p in proto.pieces]
        if not text.isascii():  # sentencepiece's offsets are in bytes of the UTF-8 text
            b2c = np.cumsum((np.frombuffer(text.encode(), dtype=np.uint8) & 0xC0) != 0x80)
            b2c = np.concatenate([[0], b2c])
            starts = [int(b2c[s]) for s in starts]
    bounds = np.array([*starts, len(text)], dtype=np.int64)
    return np.minimum(np.maximum.accumulate(bounds), len(text))
