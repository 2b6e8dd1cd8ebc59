"""Document filters: length bounds and the Gopher quality and repetition rules.

Rae et al. 2021, "Scaling Language Models: Methods, Analysis & Insights from Training Gopher",
appendix A.1.1 and table A1. As in datatrove, every rule either keeps a document or names why not;
the reason (``filter:<filter>.<rule>``) becomes a counter and the detail (the measurement and the
bound, e.g. ``mean_word_length=11.20 > 10.0``) is stored with the removed document.

Conventions shared by all rules:

* A *token* is a whitespace-separated piece of text (``str.split()``); punctuation stays attached
  ("end." is one token of 4 characters), as in the Gopher paper, which counts whitespace words.
* A *word* is a token with at least one letter, digit or underscore; tokens of punctuation or
  symbols only ("-", "—", "|", "...") are not words (datatrove drops them the same way).
* *Lines* and *paragraphs* are the non-blank ones, stripped of surrounding whitespace; paragraphs are
  separated by blank lines.

Everything a rule measures is computed once per document on a :class:`DocView` and shared; the
per-token work runs in C (``str.split``, dict and set operations, numpy), never in a Python loop.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from functools import cached_property

import numpy as np

from selene.config import FiltersConfig, GopherQualityConfig, GopherRepetitionConfig, LengthFilterConfig
from selene.errors import ConfigError
from selene.ingest.ngrams import NGrams

__all__ = ["DocView", "FilterChain", "Reason"]

Reason = tuple[str, str]

# Lines that start with one of these (after indentation) are bullet points.
BULLETS = ("•", "‣", "⁃", "◦", "○", "●", "▪", "▫", "■", "□", "►", "▶", "➢", "✓", "-", "*", "–", "·")
ELLIPSES = ("...", "…")
# Stripped from both ends of a token before it is compared with the stop words.
_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’«»„‚‹›…—–¿¡"
_strip_punct = operator.methodcaller("strip", _PUNCT)
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

    def __init__(self, text: str) -> None:
        self.text = text

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


# ------------------------------------------------------------------------------------- filters

Rule = Callable[[DocView], "str | None"]


def _above(name: str, value: float, bound: float, fmt: str = ".3f") -> str | None:
    return f"{name}={value:{fmt}} > {bound}" if value > bound else None


def _below(name: str, value: float, bound: float, fmt: str = ".3f") -> str | None:
    return f"{name}={value:{fmt}} < {bound}" if value < bound else None


class _Filter:
    """Named rules, cheapest first; `check` returns the first failing rule's (reason, detail).

    A rule takes the document view and returns None (pass) or the measurement that failed.
    """

    name = ""

    def __init__(self, enabled: bool, exclude_sources: list[str]) -> None:
        self.enabled = enabled
        self.exclude_sources = frozenset(exclude_sources)
        self.rules: list[tuple[str, Rule]] = []

    def applies_to(self, source: str) -> bool:
        return self.enabled and source not in self.exclude_sources

    def check(self, doc: DocView) -> Reason | None:
        for rule, measure in self.rules:
            detail = measure(doc)
            if detail is not None:
                return f"filter:{self.name}.{rule}", detail
        return None


class LengthFilter(_Filter):
    """Characters (whitespace included) and tokens within bounds."""

    name = "length"

    def __init__(self, cfg: LengthFilterConfig) -> None:
        super().__init__(cfg.enabled, cfg.exclude_sources)
        self.cfg = cfg
        self.rules = [
            ("min_chars", lambda d: _below("chars", len(d.text), cfg.min_chars, "d")),
            ("max_chars", lambda d: self.max_chars(d.text)),
            ("min_words", lambda d: _below("words", len(d.tokens), cfg.min_words, "d")),
            ("max_words", self._max_words),
        ]

    def max_chars(self, text: str) -> str | None:
        bound = self.cfg.max_chars
        return None if bound is None else _above("chars", len(text), bound, "d")

    def _max_words(self, doc: DocView) -> str | None:
        bound = self.cfg.max_words
        return None if bound is None else _above("words", len(doc.tokens), bound, "d")


class GopherQualityFilter(_Filter):
    """Gopher's heuristics for prose written by people for people (Rae et al. 2021, A.1.1)."""

    name = "gopher_quality"

    def __init__(self, cfg: GopherQualityConfig) -> None:
        super().__init__(cfg.enabled, cfg.exclude_sources)
        self.cfg = cfg
        self.stop_words = frozenset(w.lower() for w in cfg.stop_words)
        self.rules = [
            ("min_words", lambda d: _below("words", d.n_words, cfg.min_words, "d")),
            ("max_words", lambda d: _above("words", d.n_words, cfg.max_words, "d")),
            ("mean_word_length", self._mean_word_length),
            ("symbol_word_ratio", self._symbol_word_ratio),
            ("bullet_lines", self._bullet_lines),
            ("ellipsis_lines", self._ellipsis_lines),
            ("alpha_words", self._alpha_words),
            ("stop_words", self._stop_words),
        ]

    def _mean_word_length(self, doc: DocView) -> str | None:
        """Mean characters per word (punctuation-only tokens excluded, attached punctuation kept)."""
        mean = doc.word_chars / doc.n_words if doc.n_words else 0.0
        c = self.cfg
        return _below("mean_word_length", mean, c.min_mean_word_length, ".2f") or _above(
            "mean_word_length", mean, c.max_mean_word_length, ".2f"
        )

    def _symbol_word_ratio(self, doc: DocView) -> str | None:
        """'#' per word, and ellipses ('...' or '…') per word, each against the same bound."""
        bound = self.cfg.max_symbol_word_ratio
        words = max(doc.n_words, 1)  # a document without words counts as one word
        hashes = doc.text.count("#") / words
        ellipses = (doc.text.count("...") + doc.text.count("…")) / words
        return _above("hash_word_ratio", hashes, bound) or _above("ellipsis_word_ratio", ellipses, bound)

    def _bullet_lines(self, doc: DocView) -> str | None:
        """Fraction of non-blank lines that start with a bullet (after indentation)."""
        frac = _count_lines(doc.lines, "startswith", BULLETS) / max(len(doc.lines), 1)
        return _above("bullet_lines_ratio", frac, self.cfg.max_bullet_lines_ratio)

    def _ellipsis_lines(self, doc: DocView) -> str | None:
        """Fraction of non-blank lines that end with '...' or '…' (truncated snippets)."""
        frac = _count_lines(doc.lines, "endswith", ELLIPSES) / max(len(doc.lines), 1)
        return _above("ellipsis_lines_ratio", frac, self.cfg.max_ellipsis_lines_ratio)

    def _alpha_words(self, doc: DocView) -> str | None:
        """Fraction of tokens (punctuation-only ones included) with at least one letter."""
        frac = doc.n_alpha_tokens / len(doc.tokens) if doc.tokens else 0.0
        return _below("alpha_words_ratio", frac, self.cfg.min_alpha_words_ratio)

    def _stop_words(self, doc: DocView) -> str | None:
        """Distinct stop words present as a token, ignoring case and surrounding punctuation."""
        need = self.cfg.min_stop_words
        # Most documents pass on bare lowercase tokens: one set intersection in C.
        found = len(self.stop_words & doc.distinct.keys())
        if found < need:
            found = len(self.stop_words & set(map(_strip_punct, map(str.lower, doc.distinct))))
        return _below("stop_words", found, need, "d")


def _count_lines(lines: list[str], method: str, affixes: tuple[str, ...]) -> int:
    return sum(map(operator.methodcaller(method, affixes), lines))


class GopherRepetitionFilter(_Filter):
    """Gopher's repetition rules (Rae et al. 2021, table A1): repeated lines, paragraphs, n-grams.

    Duplicate lines / paragraphs: every copy after the first occurrence is a duplicate; the
    fractions are duplicates over all non-blank lines (paragraphs), and their characters over the
    characters of all lines (paragraphs). N-gram fractions, over the characters of all tokens:
    ``top_<n>gram_char_frac`` is the most frequent repeated n-gram's characters times its
    occurrences, ``dup_<n>gram_char_frac`` the characters inside the duplicate (non-first)
    occurrences of repeated n-grams; see :class:`selene.ingest.ngrams.NGrams`.
    """

    name = "gopher_repetition"

    def __init__(self, cfg: GopherRepetitionConfig) -> None:
        super().__init__(cfg.enabled, cfg.exclude_sources)
        self.cfg = cfg
        for field in ("top_ngram_char_frac", "dup_ngram_char_frac"):
            bad = sorted(n for n in getattr(cfg, field) if n < 1)
            if bad:
                raise ConfigError(f"filters.gopher_repetition.{field}: n-gram sizes must be >= 1, got {bad}")
        dups = (
            ("dup_line_frac", "line_dups", 0, cfg.max_dup_line_frac),
            ("dup_para_frac", "para_dups", 0, cfg.max_dup_para_frac),
            ("dup_line_char_frac", "line_dups", 1, cfg.max_dup_line_char_frac),
            ("dup_para_char_frac", "para_dups", 1, cfg.max_dup_para_char_frac),
        )
        self.rules = [
            (name, functools.partial(_dup_rule, attr, i, name, bound)) for name, attr, i, bound in dups
        ]
        for n, bound in sorted(cfg.top_ngram_char_frac.items()):
            name = f"top_{n}gram_char_frac"
            self.rules.append((name, functools.partial(_top_ngram_rule, n, name, bound)))
        for n, bound in sorted(cfg.dup_ngram_char_frac.items()):
            name = f"dup_{n}gram_char_frac"
            self.rules.append((name, functools.partial(_dup_ngram_rule, n, name, bound)))


def _dup_rule(attr: str, index: int, name: str, bound: float, doc: DocView) -> str | None:
    return _above(name, getattr(doc, attr)[index], bound)


def _top_ngram_rule(n: int, name: str, bound: float, doc: DocView) -> str | None:
    return _above(name, doc.ngrams.top_char_frac(n), bound) if doc.tokens else None


def _dup_ngram_rule(n: int, name: str, bound: float, doc: DocView) -> str | None:
    # Cheap first: the top n-gram rules have built levels up to 4, say, and a bound from those
    # often settles the rule without building level n.
    if not doc.tokens or doc.ngrams.dup_char_frac_bound(n) <= bound:
        return None
    return _above(name, doc.ngrams.dup_char_frac(n), bound)


class FilterChain:
    """The enabled filters in order length → gopher_quality → gopher_repetition."""

    def __init__(self, cfg: FiltersConfig) -> None:
        self.cfg = cfg
        self.length = LengthFilter(cfg.length)
        chain = (
            self.length,
            GopherQualityFilter(cfg.gopher_quality),
            GopherRepetitionFilter(cfg.gopher_repetition),
        )
        self.filters: list[_Filter] = [f for f in chain if f.enabled]

    def __reduce__(self) -> tuple[type[FilterChain], tuple[FiltersConfig]]:
        # Rules are closures; a worker process rebuilds them from the config.
        return FilterChain, (self.cfg,)

    def precheck(self, text: str, source: str) -> Reason | None:
        """Cheap check on the raw (uncleaned) text: only LengthFilterConfig.max_chars. None = keep."""
        if not self.length.applies_to(source):
            return None
        detail = self.length.max_chars(text)
        return None if detail is None else ("filter:length.max_chars", detail)

    def check(self, text: str, source: str) -> Reason | None:
        """All enabled filters on the cleaned text, in order length → gopher_quality →
        gopher_repetition; the first failing rule wins. Returns (reason, detail) or None to keep."""
        doc = DocView(text)
        for f in self.filters:
            if f.applies_to(source):
                reason = f.check(doc)
                if reason is not None:
                    return reason
        return None
