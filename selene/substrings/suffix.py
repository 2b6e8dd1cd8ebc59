"""One part's repeats, from its suffix array, and the fingerprints of its first occurrences.

`pydivsufsort` builds the part's suffix array (`divsufsort`), its LCP array (`kasai`) and from them
the longest previous factor: LPF[p] is the length of the longest prefix of the suffix at p that also
starts at an earlier position of the part (overlaps allowed). So the window at p (`window` bytes,
inside one document) repeats an earlier window of the part exactly when LPF[p] >= window. With
`keep: none` the window is cut when its bytes occur anywhere else in the part, earlier or later: when
its suffix shares `window` bytes with a neighbour in the suffix array.

The other windows are the part's first occurrences. Each gets a 64-bit fingerprint (a polynomial
hash of its bytes modulo 2**64, then MurmurHash3's finaliser), stored with its position as one
uint64 *entry*: the fingerprint's top 64 - `pos_bits` bits, then the position. Sorted, a part's
entries are ordered by fingerprint, so any number of buckets (the fingerprint's top bits) is a
binary search away. A fingerprint only proposes a match across parts; `matches` verifies it on the
bytes, so a collision costs a comparison and never cuts text.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from pydivsufsort import divsufsort, kasai, longest_previous_factor

from selene.hashing import fmix64
from selene.substrings.units import SEP

_R = 0x9E3779B97F4A7C15  # odd: invertible modulo 2**64
_R_INV = pow(_R, -1, 1 << 64)
# positions hashed at a time: a few arrays of 8 bytes per position, and two tables of powers, whatever
# the part's size. At 2**22 they took ~245 MB: a task of 18 MB parts held 29.3 bytes per unit, at 2**19
# 15.8, and hashing is faster (the arrays stay in cache)
CHUNK = 1 << 19


@lru_cache(maxsize=4)
def _table(base: int, n: int) -> np.ndarray:
    p = np.full(n, base, dtype=np.uint64)
    p[0] = 1
    return np.cumprod(p, dtype=np.uint64)  # uint64 products wrap: powers modulo 2**64


def _powers(base: int, n: int) -> np.ndarray:
    """base**0 .. base**(n - 1) modulo 2**64, from a table made once per process (a chunk's size)."""
    size = CHUNK + (1 << 16)
    return _table(base, size)[:n] if n <= size else _table(base, n)


def previous_factor(text: np.ndarray, shared: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """LPF of `text` (uint8, writable): int32 per position; with `shared`, also whether the `shared`
    bytes at each position occur at another position of the text (before or after it)."""
    if len(text) == 0:
        return np.zeros(0, dtype=np.int32), None if shared is None else np.zeros(0, dtype=bool)
    sa = divsufsort(text)
    lcp = kasai(text, sa)  # lcp[i]: the common prefix of the suffixes at sa[i] and sa[i + 1]
    elsewhere = None
    if shared is not None:
        # a prefix occurs elsewhere iff a neighbour in suffix order shares it: the LCP of two suffixes is
        # the minimum of the adjacent LCPs between them. Computed before LPF, whose working arrays peak
        # higher than these three bool arrays.
        near = np.asarray(lcp) >= shared
        near[1:] |= near[:-1].copy()
        elsewhere = np.empty(len(text), dtype=bool)
        elsewhere[sa] = near
        del near
    lpf = longest_previous_factor(text, sa, lcp)
    del sa, lcp
    return np.asarray(lpf), elsewhere


def window_starts(text: np.ndarray, lo: int, hi: int, window: int, width: int) -> np.ndarray:
    """Whether a window starts at each position of [lo, hi): it fits before the end of its document
    (no SEP in it) and, for token codes, it starts at a token's first byte."""
    seg = text[lo : min(len(text), hi + window)]
    k = hi - lo
    ends = np.r_[np.flatnonzero(seg == SEP), len(seg)]  # each stretch between SEPs ends here
    begins = np.r_[0, ends[:-1] + 1]
    last = ends - window  # the last start whose window fits in its stretch
    fit = last >= begins
    # +1 where a stretch's valid starts begin, -1 after they end: a running sum marks them
    marks = np.zeros(k + 1, dtype=np.int8)
    np.add.at(marks, np.minimum(begins[fit], k), 1)
    np.add.at(marks, np.minimum(last[fit] + 1, k), -1)
    ok = np.cumsum(marks[:k], dtype=np.int8) > 0
    if width > 1:
        ok &= seg[:k] >= 0x80
    return ok


def window_hashes(text: np.ndarray, lo: int, pos: np.ndarray, window: int) -> np.ndarray:
    """Fingerprints of the windows at `pos` (sorted, within [lo, lo + CHUNK), each fitting in `text`)."""
    if not len(pos):
        return np.empty(0, dtype=np.uint64)
    hi = int(pos[-1]) + window
    seg = text[lo:hi].astype(np.uint64) + np.uint64(1)
    q = np.concatenate([[np.uint64(0)], np.cumsum(seg * _powers(_R, len(seg)), dtype=np.uint64)])
    rel = pos - lo
    h = (q[rel + window] - q[rel]) * _powers(_R_INV, int(rel[-1]) + 1)[rel]  # shifted back to R**0
    return fmix64(h)


def analyse(
    text: np.ndarray, window: int, width: int, pos_bits: int, keep_first: bool = True
) -> tuple[np.ndarray, np.ndarray, int]:
    """(packed bits: a window at p repeats an earlier one of the part, or with `keep_first` False any
    other one; the part's entries (its first occurrences), sorted; windows in the part)."""
    n = len(text)
    lpf, elsewhere = previous_factor(text, None if keep_first else window)
    repeats = np.zeros(n, dtype=bool)
    # at most one entry per position: filled in place, no list of chunks to concatenate (which would
    # hold every entry twice at the end)
    entries = np.empty(n, dtype=np.uint64)
    count = windows = 0
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        ok = window_starts(text, lo, hi, window, width)
        windows += int(ok.sum())
        later = ok & (lpf[lo:hi] >= window)
        repeats[lo:hi] = later if elsewhere is None else ok & elsewhere[lo:hi]
        first = np.flatnonzero(ok & ~later) + lo
        h = window_hashes(text, lo, first, window)
        shift = np.uint64(pos_bits)
        entries[count : count + len(first)] = ((h >> shift) << shift) | first.astype(np.uint64)
        count += len(first)
    del lpf, elsewhere
    out = entries[:count]
    out.sort()
    return np.packbits(repeats), out, windows
