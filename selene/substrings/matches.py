"""Across parts: which first occurrences of a part repeat a window of an earlier part.

A bucket task takes, from every part's sorted entries, those whose fingerprint starts with its
bucket's bits, and sorts them (stably: by fingerprint, then part, then position). Entries with the
same fingerprint form a group; within a part a window's content is there once (the part's repeats
are not entries), so an entry's earlier copies can only be entries of its group from earlier parts.
An entry is compared, byte for byte, with the first entry of its group; if that is another content
(a fingerprint collision) with the next, and so on while the candidate's part is earlier. An entry
equal to one of them is a repeat: written as (part << 32 | position), sorted, for `cuts`. With
`keep: none` the earlier entry it equals is written too (every copy is cut).
"""

from __future__ import annotations

import numpy as np

from selene.faults import kill_once
from selene.io import fs
from selene.substrings.layout import Layout, unmap

PAIRS = 1 << 16  # window pairs compared at a time: 2 × PAIRS × window bytes


def part_file(root: str, j: int, kind: str) -> str:
    return fs.join(root, "part", f"{j:05d}.{kind}.npy")


def cross_file(root: str, b: int) -> str:
    return fs.join(root, "cross", f"{b:05d}.npy")


def bucket_slice(entries: np.ndarray, b: int, bits: int) -> np.ndarray:
    """The entries (sorted) whose top `bits` bits are `b`."""
    if bits == 0:
        return entries
    shift = np.uint64(64 - bits)
    lo = int(np.searchsorted(entries, np.uint64(b) << shift))
    hi = len(entries) if b == (1 << bits) - 1 else int(np.searchsorted(entries, np.uint64(b + 1) << shift))
    return entries[lo:hi]


def same(layout: Layout, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether the windows at global positions `a` and `b` hold the same bytes."""
    out = np.empty(len(a), dtype=bool)
    for lo in range(0, len(a), PAIRS):
        hi = min(len(a), lo + PAIRS)
        wa, wb = layout.windows(a[lo:hi], layout.window), layout.windows(b[lo:hi], layout.window)
        out[lo:hi] = (wa == wb).all(axis=1)
    return out


def cross_bucket(layout: Layout, b: int, bits: int, pos_bits: int) -> int:
    """Bucket `b` of `bits` bits: its cross-part repeats written to `cross_file`; returns their number."""
    kill_once("substrings:match")
    if layout.parts == 1:  # nothing earlier to repeat
        fs.save_npy(cross_file(layout.root, b), np.empty(0, dtype=np.uint64))
        return 0
    mask = np.uint64((1 << pos_bits) - 1)
    slices = [
        bucket_slice(fs.load_npy(part_file(layout.root, j, "idx"), mmap=True), b, bits)
        for j in range(layout.parts)
    ]
    total = sum(len(e) for e in slices)
    # filled in place (no list of pieces to concatenate): 20 bytes per entry before the sort
    key = np.empty(total, dtype=np.uint64)
    where = np.empty(total, dtype=np.int64)
    part = np.empty(total, dtype=np.int32)
    at = 0
    for j, e in enumerate(slices):
        key[at : at + len(e)] = e >> np.uint64(pos_bits)
        where[at : at + len(e)] = e & mask
        part[at : at + len(e)] = j
        at += len(e)
    del slices  # unmapped: the index files' pages leave this task's RSS
    order = np.argsort(key, kind="stable")  # ties keep part order, then position order
    key = key[order]
    group = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    first = np.flatnonzero(group)
    last = np.r_[first[1:], len(key)] - 1
    # only a fingerprint held by two parts or more can repeat across parts: the rest (most) go now
    spans = part[order[last]] != part[order[first]]
    keep = np.repeat(spans, last - first + 1)
    order, key = order[keep], key[keep]
    part, where = part[order], where[order]
    n = len(key)
    glob = np.asarray(layout.part_starts, dtype=np.int64)[part] + where
    group = np.r_[True, key[1:] != key[:-1]] if n else np.zeros(0, dtype=bool)
    cand = np.maximum.accumulate(np.where(group, np.arange(n), 0)) if n else np.zeros(0, dtype=np.int64)
    repeat = np.zeros(n, dtype=bool)
    pending = np.flatnonzero(part[cand] < part)
    while len(pending):
        c = cand[pending]
        ok = same(layout, glob[pending], glob[c])
        repeat[pending[ok]] = True
        if not layout.keep_first:  # the earlier copy is cut too
            repeat[c[ok]] = True
        failed = pending[~ok]
        nxt = cand[failed] + 1
        cand[failed] = nxt
        at = np.minimum(nxt, n - 1)
        pending = failed[(nxt < n) & (key[at] == key[failed]) & (part[at] < part[failed])]
    unmap()
    found = np.sort((part[repeat].astype(np.uint64) << np.uint64(32)) | where[repeat].astype(np.uint64))
    fs.save_npy(cross_file(layout.root, b), found)
    return len(found)


def cross_of_part(root: str, j: int, buckets: int) -> np.ndarray:
    """The positions (in part `j`) of its first occurrences that repeat an earlier part's window."""
    lo, hi = np.uint64(j) << np.uint64(32), np.uint64(j + 1) << np.uint64(32)
    out = []
    for b in range(buckets):
        f = fs.load_npy(cross_file(root, b), mmap=True)
        a, z = np.searchsorted(f, [lo, hi])
        out.append((f[a:z] & np.uint64(0xFFFFFFFF)).astype(np.int64))
    return np.concatenate(out) if out else np.empty(0, dtype=np.int64)
