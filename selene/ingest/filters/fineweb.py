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

__all__ = ["SENTENCE_TERMINAL", "FineWebFilter"]

# Unicode's Sentence_Terminal characters (Unicode 16, from the `regex` module's \p{Sentence_Terminal}):
# the set datatrove's FineWebQualityFilter ends lines with (it adds three Khmer signs). No quotes:
# a line ending in a closing quote does not count as ending in punctuation.
SENTENCE_TERMINAL = (
    "!.?\u0589\u061d\u061e\u061f\u06d4\u0700\u0701\u0702\u07f9\u0837\u0839\u083d\u083e\u0964\u0965"
    "\u104a\u104b\u1362\u1367\u1368\u166e\u1735\u1736\u17d4\u17d5\u1803\u1809\u1944\u1945\u1aa8\u1aa9"
    "\u1aaa\u1aab\u1b4e\u1b4f\u1b5a\u1b5b\u1b5e\u1b5f\u1b7d\u1b7e\u1b7f\u1c3b\u1c3c\u1c7e\u1c7f\u2024"
    "\u203c\u203d\u2047\u2048\u2049\u2cf9\u2cfa\u2cfb\u2e2e\u2e3c\u2e53\u2e54\u2e60\u2e61\u3002\ua4ff"
    "\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877\ua8ce\ua8cf\ua92f\ua9c8\ua9c9\uaa5d\uaa5e\uaa5f\uaaf0\uaaf1"
    "\uabeb\ufe12\ufe15\ufe16\ufe52\ufe56\ufe57\uff01\uff0e\uff1f\uff61\U00010a56\U00010a57\U00010f55"
    "\U00010f56\U00010f57\U00010f58\U00010f59\U00010f86\U00010f87\U00010f88\U00010f89\U00011047"
    "\U00011048\U000110be\U000110bf\U000110c0\U000110c1\U00011141\U00011142\U00011143\U000111c5"
    "\U000111c6\U000111cd\U000111de\U000111df\U00011238\U00011239\U0001123b\U0001123c\U000112a9"
    "\U000113d4\U000113d5\U0001144b\U0001144c\U000115c2\U000115c3\U000115c9\U000115ca\U000115cb"
    "\U000115cc\U000115cd\U000115ce\U000115cf\U000115d0\U000115d1\U000115d2\U000115d3\U000115d4"
    "\U000115d5\U000115d6\U000115d7\U00011641\U00011642\U0001173c\U0001173d\U0001173e\U00011944"
    "\U00011946\U00011a42\U00011a43\U00011a9b\U00011a9c\U00011c41\U00011c42\U00011ef7\U00011ef8"
    "\U00011f43\U00011f44\U00016a6e\U00016a6f\U00016af5\U00016b37\U00016b38\U00016b44\U00016d6e"
    "\U00016d6f\U00016e98\U0001bc9f\U0001da88"
)
# Words as datatrove's English word tokenizer (spaCy's rules) counts them, near enough for a ratio:
# runs of word characters, joined by a dot or comma unless a capital follows ("3.14", "os.path" are
# one word, "io.StringIO" three), and each punctuation mark apart ("file-like" is three, "():" three).
_WORDS = re.compile(r"\w+(?:[.,](?![A-Z])\w+)*|[^\w\s]")


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
            default_factory=lambda: list(SENTENCE_TERMINAL),
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
