"""One document and the measurements the filters share, each computed once, on first use.

Conventions shared by all rules:

* A *token* is a whitespace-separated piece of text (``str.split()``); punctuation stays attached
  ("end." is one token of 4 characters), as in the Gopher paper, which counts whitespace words.
* A *word* is a token with at least one letter, digit or underscore; tokens of punctuation or
  symbols only ("-", "—", "|", "...") are not words (datatrove drops them the same way).
* *Lines* and *paragraphs* are the non-blank ones, stripped of surrounding whitespace; paragraphs are
  separated by blank lines.

The per-token work runs in C (``str.split``, dict and set operations, numpy), never in a Python loop.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from functools import cached_property
from typing import Any

import numpy as np

from selene.ingest.ngrams import NGrams

__all__ = ["DocView"]

_PARA_BREAK = re.compile(r"\n[^\S\n]*\n")

# Character classes, one bit each, looked up per code point in a table (see `_char_flags`).
_ALPHA = 1  # str.isalpha: a letter of any script
_WORD = 2  # what `\w` matches: str.isalnum() or "_"


def _flags_of(ch: str) -> int:
    return (_ALPHA if ch.isalpha() else 0) | (_WORD if ch.isalnum() or ch == "_" else 0)


@functools.lru_cache(maxsize=1)
def _bmp_flags() -> np.ndarray:
    """Class bits of every code point of the Basic Multilingual Plane (built once per process, ~40 ms)."""
    return np.frombuffer(bytes(_flags_of(chr(c)) for c in range(0x10000)), dtype=np.uint8)


def _char_flags(s: str) -> np.ndarray:
    """Class bits of each character of `s`, as a uint8 array."""
    table = _bmp_flags()
    if s.isascii():
        return table[np.frombuffer(s.encode("ascii"), dtype=np.uint8)]
    cps = np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32)
    flags = table[np.minimum(cps, 0xFFFF)]
    astral = cps > 0xFFFF
    if astral.any():  # rare (emoji, historic scripts): classify the distinct ones in Python
        uniq, inv = np.unique(cps[astral], return_inverse=True)
        flags[astral] = np.array([_flags_of(chr(c)) for c in uniq.tolist()], dtype=np.uint8)[inv]
    return flags


def _dup_fracs(items: list[str]) -> tuple[float, float]:
    """(duplicates / items, duplicate characters / all characters), where every copy of an item after
    its first occurrence is a duplicate (the MassiveText / datatrove definition): k equal lines give
    k - 1 duplicates. (0, 0) when there are no items."""
    if not items:
        return 0.0, 0.0
    first = dict.fromkeys(items)
    chars = sum(map(len, items))
    return (len(items) - len(first)) / len(items), (chars - sum(map(len, first))) / chars


class DocView:
    """One document, with the measurements the rules share, each computed on first use."""

    def __init__(self, text: str, meta: Mapping[str, Any] | None = None) -> None:
        self.text = text
        self.meta: Mapping[str, Any] = {} if meta is None else meta  # the record's metadata (url, ...)

    @cached_property
    def tokens(self) -> list[str]:
        return self.text.split()

    @cached_property
    def _index(self) -> tuple[np.ndarray, dict[str, int]]:
        """(token ids in document order, distinct token -> id). A token's id is the position of its
        first occurrence: deterministic (unlike ``hash()``), and found for all tokens in one C-level
        pass of ``dict.setdefault``."""
        first: dict[str, int] = {}
        n = len(self.tokens)
        ids = np.fromiter(map(first.setdefault, self.tokens, range(n)), dtype=np.int64, count=n)
        return ids, first

    @property
    def ids(self) -> np.ndarray:
        return self._index[0]

    @property
    def distinct(self) -> dict[str, int]:
        """Distinct token -> id, in order of first occurrence."""
        return self._index[1]

    @cached_property
    def _distinct_ids(self) -> np.ndarray:
        return np.fromiter(self.distinct.values(), dtype=np.int64, count=len(self.distinct))

    @cached_property
    def _vocab_stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per distinct token, in order of first occurrence: occurrences, length, has a letter, is a
        word (has a \\w character)."""
        distinct = self.distinct
        v = len(distinct)
        counts = np.bincount(self.ids, minlength=len(self.tokens))[self._distinct_ids]
        lens = np.fromiter(map(len, distinct), dtype=np.int64, count=v)
        if v == 0:
            empty = np.zeros(0, dtype=bool)
            return counts, lens, empty, empty
        # One pass over the concatenated distinct tokens, OR-reduced per token.
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        bits = np.bitwise_or.reduceat(_char_flags("".join(distinct)), starts)
        return counts, lens, (bits & _ALPHA) > 0, (bits & _WORD) > 0

    @cached_property
    def n_words(self) -> int:
        counts, _, _, is_word = self._vocab_stats
        return int(counts[is_word].sum())

    @cached_property
    def word_chars(self) -> int:
        counts, lens, _, is_word = self._vocab_stats
        return int((counts * lens)[is_word].sum())

    @cached_property
    def n_alpha_tokens(self) -> int:
        counts, _, has_alpha, _ = self._vocab_stats
        return int(counts[has_alpha].sum())

    @cached_property
    def lines(self) -> list[str]:
        return list(filter(None, map(str.strip, self.text.splitlines())))

    @cached_property
    def raw_lines(self) -> list[str]:
        """The non-blank lines as split on "\\n", unstripped (FineWeb's rules: a line ending in a
        space does not end in punctuation)."""
        return [line for line in self.text.split("\n") if line.strip()]

    @cached_property
    def paragraphs(self) -> list[str]:
        return list(filter(None, map(str.strip, _PARA_BREAK.split(self.text))))

    @cached_property
    def line_dups(self) -> tuple[float, float]:
        """(duplicate fraction, duplicate character fraction) of the lines; see `_dup_fracs`."""
        return _dup_fracs(self.lines)

    @cached_property
    def para_dups(self) -> tuple[float, float]:
        """The same for paragraphs. Two equal paragraphs have equal lines, so a document without
        duplicate lines has no duplicate paragraphs: most documents are settled without splitting."""
        if self.line_dups[0] == 0.0:
            return 0.0, 0.0
        return _dup_fracs(self.paragraphs)

    @cached_property
    def ngrams(self) -> NGrams:
        lens_by_id = np.zeros(len(self.tokens), dtype=np.int64)
        lens_by_id[self._distinct_ids] = self._vocab_stats[1]
        return NGrams(self.ids, len(self.tokens), lens_by_id[self.ids])
