"""C4's page cleaning (Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified
Text-to-Text Transformer", section 2.2), as TensorFlow Datasets' ``c4_utils`` built the dataset.

Line rules drop lines and keep the page (an :class:`Edit`): a line must end in terminal punctuation
(not an ellipsis), have at least `min_words_per_line` words, no word longer than `max_word_length`,
and not mention JavaScript or a cookie/terms/privacy policy; Wikipedia-style citation marks
("[1]", "[edit]", "[citation needed]") are cut from lines. Page rules remove the page: "lorem
ipsum" or a curly bracket in a kept line, fewer than `min_num_sentences` sentences in the kept lines,
or (with a `bad_words` list) any listed word. The defaults are the ones C4 was built with (TFDS:
5 words per line, 3 sentences, end marks ``. ? ! "``); datatrove's ``C4QualityFilter`` defaults
differ (3 words, 5 sentences, also ``'``): set those to compare.
"""

from __future__ import annotations

import re

from pydantic import Field

from selene.ingest.filters.base import Edit, Filter, FilterConfig, Reason
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.lists import read_list
from selene.ingest.filters.registry import register_filter
from selene.ingest.filters.segment import count_sentences

__all__ = ["C4Filter"]

CITATION = re.compile(r"\[\d*\]|\[edit\]|\[citation needed\]")
POLICY = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")


@register_filter
class C4Filter(Filter):
    """C4's line and page rules; each rule can be switched off."""

    name = "c4"

    class Config(FilterConfig):
        """C4's rules (Raffel et al. 2020, 2.2); defaults are those of the released C4 (TFDS c4_utils)."""

        split_paragraph: bool = Field(
            default=True, description="Lines are newline-separated (true) or the page's sentences (false)."
        )
        remove_citations: bool = Field(
            default=True, description="Cut [1], [edit], [citation needed] from lines."
        )
        filter_no_terminal_punct: bool = Field(
            default=True, description="Drop lines not ending in end_punctuation."
        )
        end_punctuation: list[str] = Field(
            default_factory=lambda: [".", "?", "!", '"'], description="What a kept line may end with."
        )
        min_words_per_line: int = Field(default=5, ge=0, description="Drop lines with fewer words.")
        max_word_length: int | None = Field(default=1000, ge=1, description="Drop lines with a longer word.")
        min_num_sentences: int | None = Field(
            default=3, ge=0, description="Remove pages whose kept lines hold fewer sentences."
        )
        filter_lorem_ipsum: bool = Field(default=True, description="Remove pages with 'lorem ipsum'.")
        filter_javascript: bool = Field(default=True, description="Drop lines mentioning javascript.")
        filter_curly_bracket: bool = Field(default=True, description="Remove pages with '{' in a kept line.")
        filter_policy: bool = Field(default=True, description="Drop cookie/terms/privacy policy lines.")
        bad_words: str | None = Field(
            default=None,
            description="A word list file (LDNOOBW's format, one word or phrase per line): remove pages "
            "holding any of them as a whole word, case-insensitive.",
        )

        def input_files(self) -> list[str]:
            return [self.bad_words] if self.bad_words else []

    cfg: Config

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        self.end = tuple(cfg.end_punctuation)
        self.bad = None
        if cfg.bad_words:
            words = sorted(
                {w.lower() for w in read_list(cfg.bad_words, "filters.c4.bad_words")}, key=len, reverse=True
            )
            self.bad = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")(?!\w)")

    def filter(self, doc: DocView) -> Reason | Edit | None:
        c = self.cfg
        if self.bad is not None and (m := self.bad.search(doc.text.lower())):
            return self.reject("bad_words", f"word={m.group(0)!r}")
        lines = doc.text.splitlines() if c.split_paragraph else _sentences(doc.text)
        kept: list[str] = []
        dropped = sentences = 0
        for raw in lines:
            line = raw.strip()
            if not line:
                continue
            words = line.split()
            if c.max_word_length is not None and any(len(w) > c.max_word_length for w in words):
                dropped += 1
                continue
            if c.remove_citations:
                line = CITATION.sub("", line)
            if c.filter_no_terminal_punct and (not line.endswith(self.end) or line.endswith("...")):
                dropped += 1
                continue
            if len(words) < c.min_words_per_line:
                dropped += 1
                continue
            lower = line.lower()
            if c.filter_lorem_ipsum and "lorem ipsum" in lower:
                return self.reject("lorem_ipsum", f"line={_clip(line)!r}")
            if c.filter_javascript and "javascript" in lower:
                dropped += 1
                continue
            if c.filter_curly_bracket and "{" in line:
                return self.reject("curly_bracket", f"line={_clip(line)!r}")
            if c.filter_policy and any(p in lower for p in POLICY):
                dropped += 1
                continue
            if c.min_num_sentences:
                sentences += count_sentences(line) if c.split_paragraph else 1
            kept.append(line)
        if c.min_num_sentences and sentences < c.min_num_sentences:
            return self.reject("too_few_sentences", f"sentences={sentences} < {c.min_num_sentences}")
        text = ("\n" if c.split_paragraph else " ").join(kept).strip()
        if text == doc.text:
            return None
        return Edit(text, {"lines_removed": dropped})


def _sentences(text: str) -> list[str]:
    """The page as sentences (``split_paragraph: false``): lines joined, then split at sentence ends."""
    out: list[str] = []
    for line in text.splitlines():
        out += [s for s in _SENT_SPLIT.split(line) if s.strip()]
    return out


# Splits where `count_sentences` counts a boundary after ?/! or a plain word's period.
_SENT_SPLIT = re.compile(r"(?<=[.?!])[\"'”’)\]]*\s+(?=[A-Z0-9\"'“‘(\[])")


def _clip(line: str, n: int = 80) -> str:
    return line if len(line) <= n else line[: n - 1] + "…"
