"""FineWeb's three heuristic filters and its list-document rule (Penedo et al. 2024, "The FineWeb
Datasets", section 3.3.4), with the thresholds of datatrove's ``FineWebQualityFilter``, the code
FineWeb was built with.

Over the non-blank lines of a page: the fraction ending in terminal punctuation must be at least
`line_punct_thr` (0.12); the fraction of at most `short_line_length` (30) characters must stay
below `short_line_thr` (0.67); the characters of lines repeated earlier in the page, over all
characters but newlines, must stay below `char_duplicates_ratio` (0.01 in the released pipeline; the
paper's text says 0.1); and newlines per word must not exceed `new_line_ratio` (0.3: a list, not prose).
"""

from __future__ import annotations

import re

from pydantic import Field

from selene.ingest.filters.base import FilterConfig, RuleFilter
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.registry import register_filter

__all__ = ["TERMINAL_PUNCTUATION", "FineWebFilter"]

# Sentence-final punctuation of the world's scripts, and the closing quotes a sentence may end with.
TERMINAL_PUNCTUATION = (
    ".", "!", "?", '"', "'", "”", "’", "»", "…", "‼", "‽", "⁇", "⁈", "⁉", "。", "．", "｡", "！", "？",
    "؟", "۔", "।", "॥", "።", "፧", "፨", "᙮", "၊", "။", "჻", "܀", "܁", "܂", "߹", "࠷", "࠹", "࠽", "࠾",
    "᥄", "᥅", "᪨", "᪩", "᪪", "᪫", "᭚", "᭛", "᭞", "᭟", "᰻", "᰼", "᱾", "᱿", "⸮", "⸼", "꓿", "꘎", "꘏",
    "꛳", "꛷", "꡶", "꡷", "꣎", "꣏", "꤯", "꧈", "꧉", "꩝", "꩞", "꩟", "꫰", "꫱", "꯫", "﹒", "﹖", "﹗",
)  # fmt: skip
# Words as NLTK's Treebank tokenizer counts them: runs of word characters (with inner apostrophes,
# hyphens and decimal points) and each run of other non-space characters (punctuation) apart.
_WORDS = re.compile(r"\w+(?:[-'’.,]\w+)*|[^\w\s]+")


@register_filter
class FineWebFilter(RuleFilter):
    """FineWeb's line-punctuation, short-line, duplicated-line and list-document rules."""

    name = "fineweb"

    class Config(FilterConfig):
        """FineWeb's rules (Penedo et al. 2024, 3.3.4); defaults are those of the released pipeline."""

        line_punct_thr: float = Field(
            default=0.12, ge=0, le=1, description="Min. fraction of lines ending in punctuation."
        )
        line_punct_exclude_zero: bool = Field(
            default=False, description="Keep pages where no line ends in punctuation (ratio exactly 0)."
        )
        stop_chars: list[str] = Field(
            default_factory=lambda: list(TERMINAL_PUNCTUATION),
            description="What a line 'ending in punctuation' ends with.",
        )
        short_line_thr: float = Field(
            default=0.67, ge=0, le=1, description="Max. fraction of short lines (exclusive)."
        )
        short_line_length: int = Field(
            default=30, ge=0, description="A short line has at most this many characters."
        )
        char_duplicates_ratio: float = Field(
            default=0.01, ge=0, le=1, description="Max. fraction of characters in repeated lines (exclusive)."
        )
        new_line_ratio: float = Field(default=0.3, ge=0, description="Max. newlines per word.")

    cfg: Config

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.stop_chars = tuple(cfg.stop_chars)
        self.rules = [
            ("empty", lambda d: None if d.raw_lines else "non-blank lines=0"),
            ("line_punct_ratio", self._line_punct),
            ("short_line_ratio", self._short_lines),
            ("char_dup_ratio", self._char_dups),
            ("list_ratio", self._list_ratio),
        ]

    def _line_punct(self, doc: DocView) -> str | None:
        lines = doc.raw_lines
        ratio = sum(map(lambda line: line.endswith(self.stop_chars), lines)) / len(lines)
        if ratio < self.cfg.line_punct_thr and not (ratio == 0 and self.cfg.line_punct_exclude_zero):
            return f"line_punct_ratio={ratio:.3f} < {self.cfg.line_punct_thr}"
        return None

    def _short_lines(self, doc: DocView) -> str | None:
        lines, n = doc.raw_lines, self.cfg.short_line_length
        ratio = sum(len(line) <= n for line in lines) / len(lines)
        return (
            f"short_line_ratio={ratio:.3f} >= {self.cfg.short_line_thr}"
            if ratio >= self.cfg.short_line_thr
            else None
        )

    def _char_dups(self, doc: DocView) -> str | None:
        lines = doc.raw_lines
        first = dict.fromkeys(lines)
        dup_chars = sum(map(len, lines)) - sum(map(len, first))
        chars = len(doc.text) - doc.text.count("\n")
        ratio = dup_chars / chars if chars else 0.0
        bound = self.cfg.char_duplicates_ratio
        return f"char_dup_ratio={ratio:.4f} >= {bound}" if ratio >= bound else None

    def _list_ratio(self, doc: DocView) -> str | None:
        words = len(_WORDS.findall(doc.text))
        ratio = doc.text.count("\n") / words if words else float("inf")
        return (
            f"new_line_ratio={ratio:.3f} > {self.cfg.new_line_ratio}"
            if ratio > self.cfg.new_line_ratio
            else None
        )
