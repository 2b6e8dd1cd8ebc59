"""The comparison of `benchmarks/spans.py`: two span dedups' decisions on the same documents, and why
they differ.

Every document ends one of three ways on each side: unchanged, edited (kept with spans cut out) or
dropped. The sides agree on a document when they end it the same way, and, where both keep it, in
the same text.

A disagreement is explained by replaying datatrove's algorithm (`simulate`, `cut_text`: the first
occurrence of each n-sentence span in corpus order stays, every later one is cut, n sentences from
where it starts; a cut document stays when it keeps >= 50 words and >= 3 sentences) with one
ingredient of selene's swapped in at a time:

    A  datatrove's sentences, datatrove's normalisation   (must reproduce datatrove's own output)
    B  selene's sentences,    datatrove's normalisation
    C  selene's sentences,    selene's normalisation
    S  selene's own output

and naming the first step at which the document's outcome departs from datatrove's:
`split` (A -> B: the sentence splitter, in the document or in the earlier one that holds the span),
`normalisation` (B -> C: the text two spans are compared by), and after C what is selene's own:
`drop rule` (kept by one, dropped by the other), `span matching` (one cuts, the other does not, with
the same sentences and keys: how selene hashes spans or picks the first copy) or `cut text` (both
keep it, cut in different text: the whitespace kept around a cut). `replay` counts documents the replay of
datatrove got wrong (A differs from datatrove's output): it must be 0 for the rest to be trusted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

UNCHANGED, EDITED, DROPPED = "unchanged", "edited", "dropped"
CLASSES = ("split", "normalisation", "drop rule", "span matching", "cut text", "replay")


@dataclass(frozen=True)
class Outcome:
    """How one side ended a document: its state and, unless dropped, its text."""

    state: str
    text: str | None = None


def outcome(original: str, text: str | None) -> Outcome:
    """The outcome of a document whose output text is `text` (None: not in the output)."""
    if text is None:
        return Outcome(DROPPED)
    return Outcome(UNCHANGED if text == original else EDITED, text)


@dataclass
class Split:
    """One document as a span dedup sees it: where its sentences end (sentence k is
    text[ends[k-1]:ends[k]], from 0 for the first) and the keys its spans are hashed by (key k is
    sentence k's normalised text; datatrove numbers its keys over non-blank sentences only)."""

    ends: list[int]
    keys: list[str]


@dataclass
class Replay:
    """`simulate`'s result for one document: the sentences cut, and where each cut span was first seen."""

    cut: set[int] = field(default_factory=set)
    # a cut span's start -> (document, start) of its first occurrence
    sources: dict[int, tuple[int, int]] = field(default_factory=dict)


def simulate(docs: Sequence[Split], n: int) -> list[Replay]:
    """datatrove's decisions, in memory: span i of a document is keys[i:i+n] joined by spaces (a span
    whose joined keys are blank is not hashed); a span seen earlier in corpus order (an earlier
    document, or earlier in the same one) cuts sentences i..i+n-1."""
    first: dict[str, tuple[int, int]] = {}
    out = []
    for d, doc in enumerate(docs):
        rep = Replay()
        for i in range(len(doc.keys) - n + 1):
            span = " ".join(doc.keys[i : i + n])
            if not span.strip():
                continue
            if span not in first:
                first[span] = (d, i)
                continue
            rep.sources[i] = first[span]
            rep.cut.update(range(i, min(i + n, len(doc.ends))))
        out.append(rep)
    return out


def cut_text(text: str, ends: Sequence[int], cut: Iterable[int]) -> str:
    """The text datatrove's filter keeps: each kept sentence with the whitespace before it (the text
    since the previous sentence's end), joined, leading whitespace stripped."""
    drop = set(cut)
    parts, last = [], 0
    for k, e in enumerate(ends):
        if k not in drop:
            parts.append(text[last:e])
        last = e
    return "".join(parts).lstrip()


def decide(
    text: str,
    kept: str,
    measure: Callable[[str], tuple[int, int]],
    min_words: int = 50,
    min_sentences: int = 3,
) -> Outcome:
    """datatrove's filter's verdict on a cut document: unchanged, or kept when it is not empty and
    keeps >= min_words words and >= min_sentences sentences (`measure` counts them), else dropped."""
    if kept == text:
        return Outcome(UNCHANGED, text)
    if not kept:
        return Outcome(DROPPED)
    words, sentences = measure(kept)
    if words >= min_words and sentences >= min_sentences:
        return Outcome(EDITED, kept)
    return Outcome(DROPPED)


def classify(dt: Outcome, a: Outcome, b: Outcome, c: Outcome, sel: Outcome) -> str | None:
    """The class of a document's disagreement (see the module doc), None when the sides agree."""
    if dt == sel:
        return None
    if a != dt:
        return "replay"
    if b != a:
        return "split"
    if c != b:
        return "normalisation"
    if c.state != sel.state:
        return "drop rule" if DROPPED in (c.state, sel.state) else "span matching"
    return "cut text"


_WS = re.compile(r"\s+")


def whitespace_only(x: str, y: str) -> bool:
    """Whether two texts differ only in whitespace."""
    return _WS.sub(" ", x).strip() == _WS.sub(" ", y).strip()


def boundary_kind(text: str, end: int) -> str:
    """What stands before a sentence end only one splitter puts at `end`: a name for the rule that
    decided it (for the report's table of split differences)."""
    before = text[:end].rstrip()
    tail = before[-12:]
    word = before.split()[-1] if before.split() else ""
    if not before:
        return "start of text"
    if end < len(text) and not text[end].isspace() and not text[end - 1].isspace():
        return "inside a token"
    if tail.endswith(("...", "…")):
        return "ellipsis"
    if tail.endswith(("!", "?")) or re.search(r"[!?][\"')\]”’]+$", tail):
        return "! or ?"
    if re.search(r"[\"')\]”’]$", tail):
        return "closing quote or bracket"
    if not before.endswith("."):
        return f"after {before[-1]!r}"
    if re.fullmatch(r"\d+(\.\d+)*\.", word):
        return "number + ."
    if re.fullmatch(r"(\w\.){2,}", word.lstrip("(\"'")):
        return "dotted abbreviation (U.S.)"
    if re.fullmatch(r"[A-Z]\.", word):
        return "initial (J.)"
    after = text[end:].lstrip()[:1]
    if after.islower():
        return "word + . before a lower-case word"
    if "\n" in text[end : end + 1]:
        return "line break after"
    return "word + ."


def context(text: str, at: int, width: int = 60) -> str:
    """`text` around offset `at`, the offset marked with '|', on one line."""
    a, b = max(0, at - width), min(len(text), at + width)
    return (("…" if a else "") + text[a:at] + "|" + text[at:b] + ("…" if b < len(text) else "")).replace(
        "\n", "⏎"
    )
