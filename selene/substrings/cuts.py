"""From repeated windows to what is cut: per part the ranges of each document, per bucket of span
fingerprints the most repeated spans.

A part's repeated windows are those LPF found inside it and those `matches` found in earlier parts.
The union of [p, p + window) over them is cut; as every window lies inside one document (and ends at
most at its SEP), so does every merged range. `cut_part` writes them per document as unit offsets
(shard, row, start, end), in corpus order, and, per range, its *anchor*, its global position and
length. The anchor is the smallest fingerprint of the range's windows: a cookie notice cut with a
different neighbouring character or line on each page ("s | Example Docs ...", "module | Example
Docs ...") is one range of different bytes per page, but its windows are the same, so the ranges share
their anchor and are counted together by `top_spans`, in a bucket of anchors (a span lives in one
bucket, so no count is split), shown by the text of the first range cut.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from pydantic import BaseModel

from selene.io import fs
from selene.io.edits import repeat
from selene.manifest import Repeat
from selene.substrings import matches, suffix
from selene.substrings.layout import Layout, unmap

CUT_FIELDS = ("shard", "row", "start", "end")


def cut_file(root: str, j: int, kind: str = "cuts") -> str:
    return fs.join(root, kind, f"{j:05d}.npz")


def merged(starts: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """The union of [s, s + window) over sorted, distinct `starts`, as [begin, end) ranges."""
    if not len(starts):
        return starts, starts
    ends = starts + window
    new = np.r_[True, starts[1:] > ends[:-1]]  # ends grow with starts: the previous end is the furthest
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(starts) - 1]
    return starts[first], ends[last]


def cut_part(layout: Layout, j: int, buckets: int) -> tuple[int, int]:
    """Part `j`'s ranges to cut (`cut_file`) and its spans' fingerprints; returns (windows cut, ranges)."""
    lo, hi = layout.part_range(j)
    bits = np.unpackbits(fs.load_npy(matches.part_file(layout.root, j, "rep")))[: hi - lo].astype(bool)
    bits[matches.cross_of_part(layout.root, j, buckets)] = True
    starts = np.flatnonzero(bits).astype(np.int64)
    begin, end = merged(starts, layout.window)
    begin, end = begin + lo, end + lo  # global
    keep = begin >= layout.shard_starts[layout.protected]  # earlier outputs' documents are never cut
    begin, end = begin[keep], end[keep]
    cols: dict[str, list[np.ndarray]] = {name: [] for name in CUT_FIELDS}
    for k in layout.shards_of_part(j):
        s = layout.shard_starts[k]
        sel = (begin >= s) & (begin < layout.shard_starts[k + 1])
        if not sel.any():
            continue
        off = layout.offsets(k)
        local_b, local_e = begin[sel] - s, end[sel] - s
        row = np.searchsorted(off, local_b, side="right") - 1
        cols["shard"].append(np.full(len(row), k, dtype=np.int64))
        cols["row"].append(row.astype(np.int64))
        cols["start"].append((local_b - off[row]) // layout.width)
        cols["end"].append((local_e - off[row]) // layout.width)
    arrays = {n: np.concatenate(c) if c else np.empty(0, dtype=np.int64) for n, c in cols.items()}
    _save_npz(cut_file(layout.root, j), arrays)
    hashes = anchors(layout.read(lo, hi), begin - lo, end - lo, layout.window)
    unmap()
    order = np.argsort(hashes, kind="stable")
    _save_npz(
        cut_file(layout.root, j, "spans"),
        {"hash": hashes[order], "at": begin[order], "len": (end - begin)[order]},
    )
    return len(starts), len(begin)


def anchors(text: np.ndarray, begin: np.ndarray, end: np.ndarray, window: int) -> np.ndarray:
    """Per range [begin, end) of `text` (each at least `window` long, sorted, disjoint), the smallest
    fingerprint of its windows."""
    out = np.empty(len(begin), dtype=np.uint64)
    count = end - begin - window + 1  # windows per range
    cum = np.cumsum(count)
    done = 0
    while done < len(begin):  # ranges in batches of about CHUNK windows
        before = int(cum[done - 1]) if done else 0
        stop = max(done + 1, int(np.searchsorted(cum, before + suffix.CHUNK, "right")))
        n = count[done:stop]
        first = np.r_[0, np.cumsum(n)[:-1]]
        pos = np.repeat(begin[done:stop] - first, n) + np.arange(int(n.sum()))
        h = np.empty(len(pos), dtype=np.uint64)
        # window_hashes takes positions within one CHUNK of text: the batch cut where it spans more
        piece = (pos - pos[0]) // suffix.CHUNK
        cuts = np.r_[0, np.flatnonzero(np.diff(piece)) + 1, len(pos)]
        for a, b in itertools.pairwise(cuts.tolist()):
            h[a:b] = suffix.window_hashes(text, int(pos[a]), pos[a:b], window)
        out[done:stop] = np.minimum.reduceat(h, first)
        done = stop
    return out


def cuts_of_shard(layout: Layout, k: int) -> dict[int, list[tuple[int, int]]]:
    """Row → the unit ranges cut out of that document of shard `k`."""
    out: dict[int, list[tuple[int, int]]] = {}
    for j in layout.parts_of_shard(k):
        c = _load_npz(cut_file(layout.root, j))
        sel = c["shard"] == k
        for row, a, b in zip(
            c["row"][sel].tolist(), c["start"][sel].tolist(), c["end"][sel].tolist(), strict=True
        ):
            out.setdefault(row, []).append((a, b))
    return out


class Ranked(BaseModel):
    """A repeat with what orders it the same in every bucket: occurrences, then length in units,
    then the fingerprint (the order does not depend on how spans were bucketed)."""

    count: int
    units: int
    fingerprint: int
    repeat: Repeat

    def key(self) -> tuple[int, int, int]:
        return -self.count, -self.units, self.fingerprint


def top_spans(layout: Layout, b: int, bits: int, decode: Callable[[bytes], str], n: int = 20) -> list[Ranked]:
    """The `n` spans of fingerprint bucket `b` cut most often, with their occurrences (the copies cut
    and, with keep: first, the first one, kept). `decode(units)` gives a span's text."""
    hs, at, ln = [], [], []
    for j in range(layout.parts):
        s = _load_npz(cut_file(layout.root, j, "spans"))
        h = s["hash"]
        sel = (h >> np.uint64(64 - bits)) == b if bits else np.ones(len(h), dtype=bool)
        hs.append(h[sel])
        at.append(s["at"][sel])
        ln.append(s["len"][sel])
    h, a, size = np.concatenate(hs), np.concatenate(at), np.concatenate(ln)
    if not len(h):
        return []
    order = np.lexsort((a, h))
    h, a, size = h[order], a[order], size[order]
    first = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    # the copies cut, and the first occurrence where it was kept
    counts = np.diff(np.r_[first, len(h)]) + int(layout.keep_first)
    best = np.lexsort((h[first], -size[first], -counts))[:n]
    out = []
    for i in best.tolist():
        at_, len_ = int(a[first[i]]), int(size[first[i]])
        text = decode(layout.read(at_, at_ + len_).tobytes())
        out.append(
            Ranked(
                count=int(counts[i]),
                units=len_,
                fingerprint=int(h[first[i]]),
                repeat=repeat(text, int(counts[i])),
            )
        )
    return out


def most_repeated(parts: Iterable[list[Ranked]], n: int = 20) -> list[Repeat]:
    """The `n` most repeated spans over the buckets' lists, in the buckets' order."""
    return [r.repeat for r in sorted((r for p in parts for r in p), key=Ranked.key)[:n]]


def _save_npz(path: str, arrays: dict[str, Any]) -> None:
    """`arrays` as one .npz at `path`, atomically (a killed task leaves no file that looks whole)."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    fs.atomic_write(path, buf.getvalue())


def _load_npz(path: str) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(fs.read_bytes(path))) as z:
        return {k: z[k] for k in z.files}
