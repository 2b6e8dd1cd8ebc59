"""The last, partial pass over each source, chosen by tokens: where it ends, found without holding
a source's documents in one place.

A source with ``frac = epochs - floor(epochs) > 0`` takes, after its whole passes, a last pass of
``frac · bytes`` (bytes are the source's token unit: tokens are bytes × its tokens/byte). Its documents
are put in a seeded order (`partial_keys`) and taken in that order while they fit; around the first
that does not, a few documents are swapped so the pass ends close to its budget (`_Search.fill`).
`partial_passes` narrows down where each pass ends by rounds of per-shard histograms and then lists
the few documents that matter; how a round reaches the shards is the caller's (`Listing`).

Pure functions of what is passed in, like `selene.blend.mix`: the blend's planning step
(`selene.blend.plan`) does the reading.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from selene.blend.mix import PARTIAL, U64, SourceSize, rng, source_seed
from selene.errors import ConfigError

PARTIAL_TOLERANCE = 1e-3
"""The partial pass stops looking for documents that fit once it is this close to its budget, as a
fraction of the source's planned bytes (the promise is 1%)."""
PARTIAL_WINDOW = 4096
"""Documents before and after the first that does not fit that the partial pass may drop or take."""
PARTIAL_BINS = 4096
"""Bins of a histogram round of the partial-pass search."""
PARTIAL_COLLECT = 1 << 16
"""Documents of a source the main process lists one by one (else histogram rounds first)."""


@dataclass(frozen=True)
class Partial:
    """The last, partial pass over one source: every document whose key is below `lo`, plus `picks`
    (shard → indices among that shard's documents of the source). `documents` and `bytes`: its size."""

    lo: int
    picks: dict[int, list[int]]
    documents: int
    bytes: int


NO_PARTIAL = Partial(0, {}, 0, 0)


def partial_keys(seed: int, source: str, shard: int, n: int) -> np.ndarray:
    """The seeded order of the partial pass: a uint64 key per document of `source` in `shard` (in row
    order). Documents are taken by (key, shard, index): independent of workers and of other sources."""
    return rng(source_seed(seed, source, PARTIAL, shard)).integers(0, U64, size=n, dtype=np.uint64)


def partial_mask(keys: np.ndarray, part: Partial, shard: int) -> np.ndarray:
    """Which documents of one shard (with these keys) `part` takes."""
    chosen = keys < np.uint64(part.lo)
    chosen[np.asarray(part.picks.get(shard, []), dtype=np.int64)] = True
    return chosen


Query = tuple[int, int, int]
"""(lo, hi, width) of a round of the partial-pass search: documents with lo <= key < hi, as a
histogram of bins `width` keys wide, or listed one by one when width is 0."""
Listed = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(indices, keys, bytes) of one shard's documents of a source in a query's key range."""
Answer = np.ndarray | Listed
"""One shard's answer to a query for one source: a histogram (bins × [bytes, documents]) or a listing."""


def partial_query(keys: np.ndarray, nbytes: np.ndarray, query: Query, bins: int) -> Answer:
    """One shard's answer to `query` for one source: an int64 array (bins, 2) of bytes and documents per
    bin, or (indices, keys, bytes) of the documents in [lo, hi) when the query lists them."""
    lo, hi, width = query
    inside = keys >= np.uint64(lo)
    if hi < U64:
        inside &= keys < np.uint64(hi)
    idx = np.flatnonzero(inside)
    if not width:
        return idx, keys[idx], nbytes[idx]
    b = ((keys[idx] - np.uint64(lo)) // np.uint64(width)).astype(np.int64)
    out = np.empty((bins, 2), dtype=np.int64)
    # float64 sums of int64 sizes: exact below 2**53 bytes (8 PiB) in one bin of one shard
    out[:, 0] = np.rint(np.bincount(b, weights=nbytes[idx], minlength=bins))
    out[:, 1] = np.bincount(b, minlength=bins)
    return out


@dataclass
class _Search:
    """Where the partial pass of one source ends, narrowed round by round (see `partial_passes`)."""

    budget: float
    tolerance: float
    docs: int
    lo: int = 0
    hi: int = U64
    below_bytes: int = 0
    below_docs: int = 0

    def query(self, bins: int, collect: int) -> Query:
        span = self.hi - self.lo
        if self.docs <= collect or span <= bins:
            return (self.lo, self.hi, 0)
        return (self.lo, self.hi, -(-span // bins))

    def narrow(self, hist: np.ndarray, width: int, window: int) -> None:
        """From the bins of [lo, hi): keep the bin where the pass stops being a prefix (the first whose
        cumulative bytes pass the budget), with the bins around it that hold `window` documents before
        it and `window` after it."""
        n_bins = -(-(self.hi - self.lo) // width)
        nbytes, ndocs = hist[:n_bins, 0], hist[:n_bins, 1]
        over = np.flatnonzero(self.below_bytes + np.cumsum(nbytes) > self.budget)
        b = int(over[0]) if over.size else n_bins - 1
        after = np.cumsum(ndocs[b + 1 :])
        e = b + 1 + int(np.searchsorted(after, window)) if after.size and after[-1] >= window else n_bins - 1
        before = np.cumsum(ndocs[:b][::-1])
        s = b - 1 - int(np.searchsorted(before, window)) if before.size and before[-1] >= window else 0
        lo, hi = self.lo + s * width, min(self.hi, self.lo + (e + 1) * width)
        if (lo, hi) == (self.lo, self.hi):  # no progress (not seen with random keys): list them all
            self.docs = 0
            return
        self.below_bytes += int(nbytes[:s].sum())
        self.below_docs += int(ndocs[:s].sum())
        self.lo, self.hi, self.docs = lo, hi, int(ndocs[s : e + 1].sum())

    def fill(self, listed: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]], window: int) -> Partial:
        """The pass from the listed documents of [lo, hi) (every document below `lo` is in it).

        In (key, shard, index) order, documents are taken while they fit the budget left. At the first
        that does not (the crossing), two endings are tried, and the one closer to the budget is kept
        (the first on a tie):

        - leave it out and look at the `window` documents after it, taking those that fit; at the
          end, the smallest one left out is taken if that ends closer;
        - take it, and drop, among the `window` documents before it, the latest that fit in the
          overshoot; at the end, the smallest one kept is dropped if that ends closer.

        Each stops once the pass is within `tolerance` of its budget. So a long document near the
        end costs nothing when shorter ones surround it; the pass is a prefix of a random order but
        for a few documents around where it ends.
        """
        shard = np.concatenate(
            [np.full(len(i), k, np.int64) for k, i, _, _ in listed] or [np.empty(0, np.int64)]
        )
        index = np.concatenate([i for _, i, _, _ in listed] or [np.empty(0, np.int64)]).astype(np.int64)
        keys = np.concatenate([x for _, _, x, _ in listed] or [np.empty(0, np.uint64)]).astype(np.uint64)
        sizes = np.concatenate([x for _, _, _, x in listed] or [np.empty(0, np.int64)]).astype(np.int64)
        order = np.lexsort((index, shard, keys))
        sz: list[int] = sizes[order].tolist()
        tol = self.tolerance
        left = self.budget - self.below_bytes
        c = 0
        while c < len(sz) and sz[c] <= left:
            left -= sz[c]
            c += 1
        taken = list(range(c))
        if c < len(sz):
            # leave the crossing document out, fill with the ones after it
            added: list[int] = []
            short, smallest = left, None
            for j in range(c, min(len(sz), c + window + 1)):
                if short <= tol:
                    break
                if sz[j] <= short:
                    added.append(j)
                    short -= sz[j]
                elif smallest is None or sz[j] < sz[smallest]:
                    smallest = j
            if smallest is not None and short > tol and sz[smallest] - short <= short:
                added.append(smallest)
                short -= sz[smallest]
            # take it, and drop the latest ones before it that fit in the overshoot
            dropped: set[int] = set()
            over, kept = sz[c] - left, None
            for j in range(c - 1, max(-1, c - 1 - window), -1):
                if over <= tol:
                    break
                if sz[j] <= over:
                    dropped.add(j)
                    over -= sz[j]
                elif kept is None or sz[j] < sz[kept]:
                    kept = j
            if kept is not None and over > tol and sz[kept] - over < over:
                dropped.add(kept)
                over -= sz[kept]
            if abs(over) < abs(short):
                taken = [j for j in taken if j not in dropped] + [c]
            else:
                taken += added
        picked = order[np.asarray(taken, dtype=np.int64)]
        picks: dict[int, list[int]] = {}
        for k, i in zip(shard[picked].tolist(), index[picked].tolist(), strict=True):
            picks.setdefault(k, []).append(i)
        return Partial(
            self.lo,
            {k: sorted(v) for k, v in sorted(picks.items())},
            self.below_docs + len(taken),
            self.below_bytes + int(sizes[picked].sum()),
        )


Listing = Callable[[int, Mapping[str, Query]], Iterable[tuple[int, Mapping[str, Answer]]]]
"""``rounds(r, queries)``: each shard's answers (`partial_query`) to round `r`'s queries, as
(shard, {source: answer}) for the shards that hold documents of those sources."""


def partial_budget(size: SourceSize, epochs: float) -> tuple[float, float]:
    """Bytes the partial pass should hold (frac · bytes) and how close is close enough (see
    `PARTIAL_TOLERANCE`)."""
    frac = epochs - math.floor(epochs)
    return frac * size.bytes, PARTIAL_TOLERANCE * epochs * size.bytes


def partial_passes(
    sizes: Mapping[str, SourceSize],
    epochs: Mapping[str, float],
    rounds: Listing,
    *,
    bins: int | None = None,
    collect: int | None = None,
    window: int | None = None,
) -> dict[str, Partial]:
    """The last, partial pass of every source, chosen by tokens (bytes: the blend's token unit).

    A source's documents are put in a seeded order (`partial_keys`) and taken in that order while they
    fit ``frac · bytes``. Where the first one does not fit, it is either left out and shorter ones
    after it fill the rest, or taken and shorter ones before it dropped, whichever ends closer
    (`_Search.fill`): a long document there costs nothing when shorter ones surround it. The pass
    misses its budget by at most half a document, and only when no shorter documents can make up
    the difference (one document holding much of a source).

    The main process never holds a source's documents: while more than `collect` documents are left
    in the key range that matters, each round asks every shard for a histogram of bytes over `bins`
    bins of that range (`rounds`), and the range shrinks to the bin where the pass stops and the bins
    around it that hold `window` documents either side; then the range's documents are listed and
    walked. The result does not depend on `bins` or `collect` (`window` bounds what the walk looks at).
    """
    bins = bins or PARTIAL_BINS
    collect = collect or PARTIAL_COLLECT
    window = window or PARTIAL_WINDOW
    out = {s: NO_PARTIAL for s in sorted(sizes)}
    searches = {}
    for s in sorted(sizes):
        budget, tolerance = partial_budget(sizes[s], epochs.get(s, 0.0))
        if budget > 0:
            searches[s] = _Search(budget, tolerance, sizes[s].documents)
    r = 0
    while searches:
        queries = {s: q.query(bins, collect) for s, q in searches.items()}
        hist = {s: np.zeros((bins, 2), np.int64) for s, (_, _, w) in queries.items() if w}
        listed: dict[str, list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = {
            s: [] for s, (_, _, w) in queries.items() if not w
        }
        for k, answers in rounds(r, queries):
            for s, a in answers.items():
                if isinstance(a, tuple):
                    listed[s].append((k, *a))
                else:
                    hist[s] += a
        for s, h in hist.items():
            searches[s].narrow(h, queries[s][2], window)
        for s, docs in listed.items():
            out[s] = searches.pop(s).fill(docs, window)
        r += 1
    return out


def check_sampled(
    sizes: Mapping[str, SourceSize], epochs: Mapping[str, float], partial: Mapping[str, Partial]
) -> None:
    """A plan that samples no document at all is a ConfigError."""
    if not sum(math.floor(epochs[s]) * sizes[s].documents + partial[s].documents for s in sizes):
        raise ConfigError(
            f"blend: the plan samples no documents (epochs: {dict(epochs)}); raise the weights or epochs"
        )

