"""Units (sentences, paragraphs, lines), their normalised text and the hashes of their spans.

A document is cut into units by their end offsets: unit k is ``text[ends[k-1]:ends[k]]`` (from 0
for the first) and the last ends at ``len(text)``, so the units put back together are the text, byte
for byte, and the whitespace between two units goes with the second (datatrove's `split_into_parts`).

A span is `span` consecutive units; its hash is xxh64 of its units' normalised texts joined by a
space, datatrove's `simplify_text` and hash (`SentDedupConfig`'s defaults), so a span hashes here to
the same 64-bit value as in datatrove's SentenceDedup when both split the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from selene.spans.config import SpansConfig
from selene.spans.sentences import sentence_ends
from selene.spans.words import count_words

# The characters datatrove's `simplify_text` turns into spaces (its PUNCTUATION string: ASCII and
# full-width punctuation, C0 and C1 controls), so that normalised texts, and hashes, agree with it.
PUNCTUATION = (
    "!/—”:％１〈&(、━\\【#%「」，】；+^]~“《„';’{|∶´[=-`*．（–？！：$～«〉,><》)?）。…@_.\"}►»"
    + "".join(map(chr, (*range(0, 9), *range(11, 13), *range(13, 32), *range(127, 160))))
)
# runs of them become one space (whitespace runs become one space next anyway): a regular expression,
# several times faster than str.translate on a text that is not ASCII
_PUNCT = re.compile("[" + re.escape(PUNCTUATION) + "]+")
# joins a document's units so that they are normalised in one pass of each step: NUL, which no step
# but the punctuation's changes (and that one is told to keep it here), no pattern matches across, and
# ASCII, so that an ASCII document keeps Python's fast paths; a text holding NUL itself is done unit by unit
_SEP = "\x00"
_PUNCT_KEEP_SEP = re.compile("[" + re.escape(PUNCTUATION.replace(_SEP, "")) + "]+")
# digits of any script (Python's \d is Unicode's Nd), with one decimal part after a separator
_NUMBERS = re.compile(r"\d+(?:[.,،٫⎖⎗⎘]\d+)?")
_WHITESPACE = re.compile(r"\s+")
DEFAULTS = SpansConfig()
_WEEKDAYS = re.compile(r"monday|tuesday|wednesday|thursday|friday|saturday|sunday")
_MONTHS = re.compile(r"january|february|march|april|may|june|july|august|september|october|november|december")
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")  # a line of only whitespace between two paragraphs
# where str.splitlines breaks (datatrove's line mode splits with it): \r\n as one break
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def unit_ends(text: str, unit: str) -> list[int]:
    """The end offset of each unit of `text` (see the module's docstring); one unit for a text
    without a break (an empty text is one empty unit)."""
    if unit == "sentence":
        return sentence_ends(text)
    if unit == "line":
        # at str.splitlines' breaks; the break goes with the line after it, a final one ends no line
        breaks = list(_LINE_BREAK.finditer(text))
        if breaks and breaks[-1].end() == len(text):
            breaks.pop()
        ends = [m.start() for m in breaks]
    elif unit == "paragraph":
        ends = [m.start() for m in _PARAGRAPH_BREAK.finditer(text)]
        if ends and ends[0] == 0:
            ends.pop(0)
        if ends and not text[ends[-1] :].strip():  # trailing blank lines: part of the last paragraph
            ends.pop()
    else:
        raise ValueError(f"unknown unit {unit!r}")
    ends.append(len(text))
    return ends


def units(text: str, ends: Sequence[int]) -> list[str]:
    return [text[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


def normalize(text: str, cfg: SpansConfig = DEFAULTS, punctuation: re.Pattern[str] = _PUNCT) -> str:
    """datatrove's `simplify_text` under the normalisation settings of `cfg` (by default, its own)."""
    if cfg.lowercase:
        text = text.lower()
    if cfg.normalize_numbers:
        text = _NUMBERS.sub("0", text)
    if cfg.normalize_weekdays:
        text = _WEEKDAYS.sub("WEEKDAY", text)
    if cfg.normalize_months:
        text = _MONTHS.sub("MONTH", text)
    if cfg.strip_punctuation:
        text = punctuation.sub(" ", text)
    text = _WHITESPACE.sub(" ", text.strip())
    if cfg.strip_diacritics and not text.isascii():
        text = unicodedata.normalize("NFD", text)
        marks = {ord(c): None for c in set(text) if unicodedata.category(c) == "Mn"}
        text = text.translate(marks) if marks else text
    return text.strip()


def normalize_units(parts: Sequence[str], cfg: SpansConfig) -> list[str]:
    """`normalize` of each unit, done on the units joined (a few regular-expression calls per document
    instead of per unit); unit by unit for the rare text that holds the separator itself."""
    joined = _SEP.join(parts)
    if joined.count(_SEP) != len(parts) - 1:
        return [normalize(p, cfg) for p in parts]
    return [p.strip() for p in normalize(joined, cfg, _PUNCT_KEEP_SEP).split(_SEP)]


@dataclass(frozen=True)
class Spans:
    """A document's spans that can be cut: their hashes and the index of each one's first unit."""

    hashes: np.ndarray  # uint64
    first: np.ndarray  # uint32: the span covers units first .. first + span - 1


def spans(text: str, cfg: SpansConfig, ends: Sequence[int] | None = None) -> Spans:
    """The spans of `text` (every window of `cfg.span` consecutive units) that can be cut: not all
    empty once normalised (datatrove skips those), at least `cfg.min_span_chars` long normalised.
    Units that are only whitespace at the end of a text are in no span (datatrove's signature step
    splits with ``sent_tokenize``, which drops them)."""
    assert cfg.unit is not None
    ends = unit_ends(text, cfg.unit) if ends is None else ends
    parts = units(text, ends)
    if cfg.unit != "line":
        while parts and not parts[-1].strip():
            parts.pop()
    n = cfg.span
    if len(parts) < n:
        return Spans(np.empty(0, np.uint64), np.empty(0, np.uint32))
    norm = normalize_units(parts, cfg)
    hashes, first = [], []
    for i in range(len(norm) - n + 1):
        joined = " ".join(norm[i : i + n])
        if not joined.strip() or len(joined) < cfg.min_span_chars:
            continue
        hashes.append(xxhash.xxh64_intdigest(joined.encode()))  # UTF-8, as xxhash hashes a str
        first.append(i)
    return Spans(np.array(hashes, dtype=np.uint64), np.array(first, dtype=np.uint32))


def span_text(text: str, cfg: SpansConfig, first: int) -> str:
    """The text of the span of `text` starting at unit `first` (a repeat's example), stripped."""
    assert cfg.unit is not None
    parts = units(text, unit_ends(text, cfg.unit))
    return "".join(parts[first : first + cfg.span]).strip()


@dataclass(frozen=True)
class Edited:
    """A document after its duplicate spans are cut: the text left, characters and units cut."""

    text: str
    chars: int
    units: int


def cut(text: str, cfg: SpansConfig, starts: Sequence[int]) -> Edited:
    """`text` less the units of the duplicate spans starting at `starts` (sorted unit indices), as
    datatrove's filter does it: the union of their units goes, a run of cut units with fewer than
    `min_words_to_remove` words stays, what is left is joined as it was and stripped on the left."""
    assert cfg.unit is not None
    parts = units(text, unit_ends(text, cfg.unit))
    drop = [False] * len(parts)
    for s in starts:
        for k in range(s, min(s + cfg.span, len(parts))):
            drop[k] = True
    if cfg.min_words_to_remove > 0:
        k = 0
        while k < len(parts):
            if not drop[k]:
                k += 1
                continue
            end = k
            while end < len(parts) and drop[end]:
                end += 1
            if count_words("\n".join(parts[k:end])) < cfg.min_words_to_remove:
                drop[k:end] = [False] * (end - k)
            k = end
    left = "".join(p for p, d in zip(parts, drop, strict=True) if not d).lstrip()
    return Edited(left, len(text) - len(left), sum(drop))
