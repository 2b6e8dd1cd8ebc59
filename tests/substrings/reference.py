"""The brute-force reference of `selene substrings`: plain Python, window by window, in corpus order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence


def removed_units(
    docs: Sequence[Sequence[int]], n: int, start_doc: int = 0, keep_first: bool = True
) -> list[set[int]]:
    """Per document (units as a sequence of hashable items), the positions inside a repeated window:
    a window of `n` units whose content occurs at an earlier position of the corpus, or with
    `keep_first` False at any other position (documents before `start_doc` only provide content)."""
    windows = [[tuple(units[p : p + n]) for p in range(len(units) - n + 1)] for units in docs]
    copies = Counter(w for ws in windows for w in ws)
    seen: set[tuple[int, ...]] = set()
    out: list[set[int]] = []
    for d, ws in enumerate(windows):
        cut: set[int] = set()
        for p, w in enumerate(ws):
            if w in seen or (not keep_first and copies[w] > 1):
                cut.update(range(p, p + n))
            seen.add(w)
        if d >= start_doc:
            out.append(cut)
    return out


def apply_bytes(text: str, cut: set[int]) -> str:
    """The text without the characters whose first UTF-8 byte is cut."""
    kept, at = [], 0
    for ch in text:
        if at not in cut:
            kept.append(ch)
        at += len(ch.encode("utf-8"))
    return "".join(kept)


def apply_tokens(text: str, starts: Sequence[int], cut: set[int]) -> str:
    """The text without the characters from each cut token's start to the next token's start."""
    bounds = [*starts, len(text)]
    drop = set()
    for t in cut:
        drop.update(range(bounds[t], bounds[t + 1]))
    return "".join(c for i, c in enumerate(text) if i not in drop)


def expected(texts: Sequence[str], n: int, to_units: Callable[[str], list[int]], apply: Callable[[str, set[int]], str],
             start_doc: int = 0, keep_first: bool = True) -> list[str]:  # fmt: skip
    cuts = removed_units([to_units(t) for t in texts], n, start_doc, keep_first)
    return [apply(t, c) for t, c in zip(texts[start_doc:], cuts, strict=True)]
