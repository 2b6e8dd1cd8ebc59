"""The built-in filters: length bounds and the Gopher quality and repetition rules.

Rae et al. 2021, "Scaling Language Models: Methods, Analysis & Insights from Training Gopher",
appendix A.1.1 and table A1. Each rule either keeps a document or names why not: the reason
``filter:<filter>.<rule>`` and the detail (the measurement and the bound, e.g.
``mean_word_length=11.20 > 10.0``). What the rules measure is shared on a :class:`DocView`.
"""

from __future__ import annotations

import functools
import operator

from pydantic import Field, field_validator

from selene.ingest.filters.base import FilterConfig, Reason, RuleFilter, above, below
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.registry import register_filter

__all__ = ["GopherQualityFilter", "GopherRepetitionFilter", "LengthFilter"]

# Lines that start with one of these (after indentation) are bullet points.
BULLETS = ("•", "‣", "⁃", "◦", "○", "●", "▪", "▫", "■", "□", "►", "▶", "➢", "✓", "-", "*", "–", "·")
ELLIPSES = ("...", "…")
# Stripped from both ends of a token before it is compared with the stop words.
_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’«»„‚‹›…—–¿¡"
_strip_punct = operator.methodcaller("strip", _PUNCT)


@register_filter
class LengthFilter(RuleFilter):
    """Characters (whitespace included) and tokens within bounds; `max_chars` also before cleaning."""

    name = "length"

    class Config(FilterConfig):
        """Document length bounds. `max_chars` is checked before cleaning, to bound the work on huge records."""

        min_words: int = Field(default=5, ge=0, description="Fewest words (whitespace-separated tokens).")
        max_words: int | None = Field(default=None, ge=1, description="Most words; null: no bound.")
        min_chars: int = Field(default=20, ge=0, description="Fewest characters, whitespace included.")
        max_chars: int | None = Field(
            default=1_000_000, ge=1, description="Most characters, also checked before cleaning; null: no bound."
        )

    cfg: Config

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.rules = [
            ("min_chars", lambda d: below("chars", len(d.text), cfg.min_chars, "d")),
            ("max_chars", lambda d: self._max_chars(d.text)),
            ("min_words", lambda d: below("words", len(d.tokens), cfg.min_words, "d")),
            ("max_words", self._max_words),
        ]

    def precheck(self, text: str) -> Reason | None:
        detail = self._max_chars(text)
        return None if detail is None else self.reject("max_chars", detail)

    def _max_chars(self, text: str) -> str | None:
        bound = self.cfg.max_chars
        return None if bound is None else above("chars", len(text), bound, "d")

    def _max_words(self, doc: DocView) -> str | None:
        bound = self.cfg.max_words
        return None if bound is None else above("words", len(doc.tokens), bound, "d")


@register_filter
class GopherQualityFilter(RuleFilter):
    """Gopher's heuristics for prose written by people for people (Rae et al. 2021, A.1.1)."""

    name = "gopher_quality"

    class Config(FilterConfig):
        """Gopher quality rules (Rae et al. 2021, appendix A.1.1); defaults are the paper's."""

        min_words: int = Field(default=50, description="Fewest words (punctuation-only tokens excluded).")
        max_words: int = Field(default=100_000, description="Most words.")
        min_mean_word_length: float = Field(default=3.0, description="Shortest mean word length, in characters.")
        max_mean_word_length: float = Field(default=10.0, description="Longest mean word length, in characters.")
        max_symbol_word_ratio: float = Field(default=0.1, description="'#' and '...' per word.")
        max_bullet_lines_ratio: float = Field(default=0.9, description="Lines starting with a bullet.")
        max_ellipsis_lines_ratio: float = Field(default=0.3, description="Lines ending with an ellipsis.")
        min_alpha_words_ratio: float = Field(default=0.8, description="Words with at least one letter.")
        min_stop_words: int = Field(default=2, description="Distinct English stop words required.")
        stop_words: list[str] = Field(
            default_factory=lambda: ["the", "be", "to", "of", "and", "that", "have", "with"],
            description="The stop words counted, ignoring case and surrounding punctuation.",
        )

    cfg: Config

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.stop_words = frozenset(w.lower() for w in cfg.stop_words)
        self.rules = [
            ("min_words", lambda d: below("words", d.n_words, cfg.min_words, "d")),
            ("max_words", lambda d: above("words", d.n_words, cfg.max_words, "d")),
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
        return below("mean_word_length", mean, c.min_mean_word_length, ".2f") or above(
            "mean_word_length", mean, c.max_mean_word_length, ".2f"
        )

    def _symbol_word_ratio(self, doc: DocView) -> str | None:
        """'#' per word, and ellipses ('...' or '…') per word, each against the same bound."""
        bound = self.cfg.max_symbol_word_ratio
        words = max(doc.n_words, 1)  # a document without words counts as one word
        hashes = doc.text.count("#") / words
        ellipses = (doc.text.count("...") + doc.text.count("…")) / words
        return above("hash_word_ratio", hashes, bound) or above("ellipsis_word_ratio", ellipses, bound)

    def _bullet_lines(self, doc: DocView) -> str | None:
        """Fraction of non-blank lines that start with a bullet (after indentation)."""
        frac = _count_lines(doc.lines, "startswith", BULLETS) / max(len(doc.lines), 1)
        return above("bullet_lines_ratio", frac, self.cfg.max_bullet_lines_ratio)

    def _ellipsis_lines(self, doc: DocView) -> str | None:
        """Fraction of non-blank lines that end with '...' or '…' (truncated snippets)."""
        frac = _count_lines(doc.lines, "endswith", ELLIPSES) / max(len(doc.lines), 1)
        return above("ellipsis_lines_ratio", frac, self.cfg.max_ellipsis_lines_ratio)

    def _alpha_words(self, doc: DocView) -> str | None:
        """Fraction of tokens (punctuation-only ones included) with at least one letter."""
        frac = doc.n_alpha_tokens / len(doc.tokens) if doc.tokens else 0.0
        return below("alpha_words_ratio", frac, self.cfg.min_alpha_words_ratio)

    def _stop_words(self, doc: DocView) -> str | None:
        """Distinct stop words present as a token, ignoring case and surrounding punctuation."""
        need = self.cfg.min_stop_words
        # Most documents pass on bare lowercase tokens: one set intersection in C.
        found = len(self.stop_words & doc.distinct.keys())
        if found < need:
            found = len(self.stop_words & set(map(_strip_punct, map(str.lower, doc.distinct))))
        return below("stop_words", found, need, "d")


def _count_lines(lines: list[str], method: str, affixes: tuple[str, ...]) -> int:
    return sum(map(operator.methodcaller(method, affixes), lines))


@register_filter
class GopherRepetitionFilter(RuleFilter):
    """Gopher's repetition rules (Rae et al. 2021, table A1): repeated lines, paragraphs, n-grams.

    Duplicate lines / paragraphs: every copy after the first occurrence is a duplicate; the
    fractions are duplicates over all non-blank lines (paragraphs), and their characters over the
    characters of all lines (paragraphs). N-gram fractions, over the characters of all tokens:
    ``top_<n>gram_char_frac`` is the most frequent repeated n-gram's characters times its
    occurrences, ``dup_<n>gram_char_frac`` the characters inside the duplicate (non-first)
    occurrences of repeated n-grams; see :class:`selene.ingest.ngrams.NGrams`.
    """

    name = "gopher_repetition"

    class Config(FilterConfig):
        """Gopher repetition rules (Rae et al. 2021, table A1); defaults are the paper's."""

        max_dup_line_frac: float = Field(default=0.30, description="Duplicate lines over all non-blank lines.")
        max_dup_para_frac: float = Field(default=0.30, description="Duplicate paragraphs over all paragraphs.")
        max_dup_line_char_frac: float = Field(
            default=0.20, description="Characters of duplicate lines over the characters of all lines."
        )
        max_dup_para_char_frac: float = Field(
            default=0.20, description="Characters of duplicate paragraphs over the characters of all paragraphs."
        )
        top_ngram_char_frac: dict[int, float] = Field(
            default_factory=lambda: {2: 0.20, 3: 0.18, 4: 0.16},
            description="n → the most a document's most frequent n-gram may take of its characters "
            "(its characters times its occurrences).",
        )
        dup_ngram_char_frac: dict[int, float] = Field(
            default_factory=lambda: {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10},
            description="n → the most of a document's characters that may lie in repeated occurrences of n-grams.",
        )

        @field_validator("top_ngram_char_frac", "dup_ngram_char_frac")
        @classmethod
        def _ngram_sizes(cls, v: dict[int, float]) -> dict[int, float]:
            bad = sorted(n for n in v if n < 1)
            if bad:
                raise ValueError(f"n-gram sizes must be >= 1, got {bad}")
            return v

    cfg: Config

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
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
    return above(name, getattr(doc, attr)[index], bound)


def _top_ngram_rule(n: int, name: str, bound: float, doc: DocView) -> str | None:
    return above(name, doc.ngrams.top_char_frac(n), bound) if doc.tokens else None


def _dup_ngram_rule(n: int, name: str, bound: float, doc: DocView) -> str | None:
    # Cheap first: the top n-gram rules have built levels up to 4, say, and a bound from those
    # often settles the rule without building level n.
    if not doc.tokens or doc.ngrams.dup_char_frac_bound(n) <= bound:
        return None
    return above(name, doc.ngrams.dup_char_frac(n), bound)
