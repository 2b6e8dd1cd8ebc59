"""Connected components of the verified pairs as steps over files: no process holds the whole graph.

Each edge file is first reduced to stars in its own task (union-find over that file's documents: each
document linked to the smallest of its local component). Then the large-star and small-star steps of
Kiveris et al. ("Connected Components in MapReduce and Beyond", SoCC 2014) alternate, each a shuffle
through files: documents are split into `parts` by global index (index mod parts), and a task holds the
pairs of its own part only.

- large-star (a task has its documents u with all their neighbours): every neighbour v > u is linked to
  the smallest of u and its neighbours instead of to u;
- small-star (a task has its documents u with their smaller neighbours): u and those neighbours are all
  linked to the smallest of them.

Both keep the components and make them shallower; the pairs stop changing when they form stars, each
centred on its component's smallest document. A large-star task sees every neighbour of its documents,
so it tells whether its part is such a set of stars already: each document has at most one smaller
neighbour, and then no larger one. When every part says so, the (centre, leaf) pairs are the components;
the tasks wrote them split by the centre's part, ready for the cluster step, and the loop ends.

Components are named by their smallest document, so the result depends on the pairs only: never on the
number of parts, the order or grouping of the edge files, or the executor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from selene.errors import InternalError
from selene.executor.mappers import Budget, Mapper
from selene.io import fs, steps

PAIR_DTYPE = np.dtype([("u", "<i8"), ("v", "<i8")])
BYTES_PER_PAIR = 96  # a step's memory per pair of its part: both orientations, sort order, scratch
MIN_PAIRS_PER_PART = 1 << 14  # a part this small (1.5 MB) is never worth its own tasks and files
MAX_ROUNDS = 256  # large-star + small-star rounds; O(log² n) in the worst case, a handful in practice


@dataclass(frozen=True)
class Graph:
    """Where the steps' files go, and how many parts the documents are split into."""

    root: str
    parts: int
    # documents in the corpus: the (centre, leaf) pairs of the result are split by contiguous ranges
    # of centres, so that a cluster task's documents lie near each other in corpus order and its exact
    # checks read few row groups, each by about one task (0: by index mod parts, like the steps)
    span: int = 0

    def path(self, step: int, producer: int, part: int) -> str:
        return fs.join(self.root, f"s{step:03d}", f"{producer:05d}-{part:05d}.npy")

    def leaves(self, step: int, producer: int, part: int) -> str:
        return fs.join(self.root, "stars", f"s{step:03d}-{producer:05d}-{part:05d}.npy")


def parts_for(pairs: int, budget: Budget) -> int:
    """Parts so that a step's share of `pairs` verified pairs fits one task (`Budget.task_memory`),
    and at least one per worker: the cluster step runs a task per part, and its exact checks are
    the longest step of a corpus with many near-threshold copies."""
    need = -(-pairs * BYTES_PER_PAIR // max(1, budget.task_memory // 2))
    return max(1, min(max(need, budget.workers), pairs // MIN_PAIRS_PER_PART))


def union(parent: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Merge the components of the pairs (a, b) into `parent` (in place), vectorised.

    `parent` must map every node to its root on entry and does on return. Each round hooks the larger
    root of every pair that spans two components under the smaller one (`np.minimum.at`: the smallest
    offer wins), then jumps pointers until every node points at a root. Parents only ever decrease, so
    there are no cycles, and the root of a component is its smallest index: the result is the same
    for any order or grouping of the pairs.
    """
    while a.size:
        ra, rb = parent[a], parent[b]
        spans = ra != rb
        if not spans.any():
            return
        a, b, ra, rb = a[spans], b[spans], ra[spans], rb[spans]
        np.minimum.at(parent, np.maximum(ra, rb), np.minimum(ra, rb))
        while True:
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent[:] = up


def _scatter(
    parts: int, path: Callable[[int], str], u: np.ndarray, v: np.ndarray, span: int = 0
) -> list[int]:
    """Pairs (u, v) split by the part of u (index mod parts; with `span`, u's range of span / parts),
    one file per part that gets any; returns those parts."""
    part = u * parts // span if span else u % parts
    order = np.lexsort((v, u, part))
    u, v, part = u[order], v[order], part[order]
    bounds = np.searchsorted(part, np.arange(parts + 1))
    written = []
    for r in range(parts):
        lo, hi = int(bounds[r]), int(bounds[r + 1])
        if hi > lo:
            rec = np.empty(hi - lo, dtype=PAIR_DTYPE)
            rec["u"], rec["v"] = u[lo:hi], v[lo:hi]
            fs.save_npy(path(r), rec)
            written.append(r)
    return written


def gather(paths: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of `paths`, sorted by (u, v), each once."""
    if not paths:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    rec = np.concatenate([fs.load_npy(p) for p in paths])
    order = np.lexsort((rec["v"], rec["u"]))
    u, v = rec["u"][order], rec["v"][order]
    once = np.ones(u.size, dtype=bool)
    once[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
    return u[once], v[once]


def _groups(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For `u` sorted: where each run of equal values starts, and each element's run."""
    first = np.ones(u.size, dtype=bool)
    first[1:] = u[1:] != u[:-1]
    return np.flatnonzero(first), np.cumsum(first) - 1


def local_stars(g: Graph, i: int, edge_file: str) -> list[int]:
    """The pairs of one edge file as stars: each document of a local component linked to its smallest,
    both ways round, split by part (step 0). Returns the parts written."""
    edges = fs.load_npy(edge_file)
    nodes = np.unique(np.concatenate([edges["a"], edges["b"]]))
    parent = np.arange(nodes.size, dtype=np.int64)
    union(parent, np.searchsorted(nodes, edges["a"]), np.searchsorted(nodes, edges["b"]))
    del edges
    leaf = parent != np.arange(nodes.size)
    a, b = nodes[leaf], nodes[parent[leaf]]
    return _scatter(g.parts, lambda r: g.path(0, i, r), np.concatenate([a, b]), np.concatenate([b, a]))


class LargeStar(steps.StepResult):
    """A large-star task's result: whether its part is stars already, the parts it wrote pairs for
    (the next step's), and the parts it wrote (centre, leaf) pairs for when it is."""

    star: bool
    next: list[int]
    leaves: list[int]


def large_star(g: Graph, step: int, r: int, paths: Sequence[str]) -> LargeStar:
    """Part r's documents with all their neighbours: each neighbour above a document is linked to the
    smallest of the document and its neighbours (written keyed by the larger end, for small-star).
    Tells whether the part is stars already; if so writes its (centre, leaf) pairs by centre's part
    (`Graph.span`: by range)."""
    u, v = gather(paths)
    if not u.size:
        return LargeStar(star=True, next=[], leaves=[])
    starts, run = _groups(u)
    smallest = np.minimum(u[starts], v[starts])  # v is sorted within a run: its first is the smallest
    below = np.add.reduceat((v < u).astype(np.int64), starts)
    above = np.diff(np.append(starts, u.size)) - below
    star = bool(np.all((below == 0) | ((below == 1) & (above == 0))))
    up = v > u
    written = _scatter(g.parts, lambda q: g.path(step + 1, r, q), v[up], smallest[run][up])
    leaves = _scatter(g.parts, lambda q: g.leaves(step, r, q), v[~up], u[~up], g.span) if star else []
    return LargeStar(star=star, next=written, leaves=leaves)


def small_star(g: Graph, step: int, r: int, paths: Sequence[str]) -> list[int]:
    """Part r's documents with their smaller neighbours: the document and those neighbours are all
    linked to the smallest of them, both ways round (for large-star). Returns the parts written."""
    u, v = gather(paths)
    if not u.size:
        return []
    starts, run = _groups(u)
    smallest = v[starts]  # every neighbour here is below its document
    m = smallest[run]
    rest = v != m
    a = np.concatenate([v[rest], u[starts]])
    b = np.concatenate([m[rest], smallest])
    return _scatter(g.parts, lambda q: g.path(step + 1, r, q), np.concatenate([a, b]), np.concatenate([b, a]))


def _inputs(g: Graph, step: int, written: Sequence[Sequence[int]]) -> list[list[str]]:
    """Per part, the files the producers of `step` wrote for it."""
    return [[g.path(step, p, r) for p, parts in enumerate(written) if r in parts] for r in range(g.parts)]


def components(mapper: Mapper, g: Graph, edge_files: Sequence[str]) -> list[list[str]]:
    """Connected components of the pairs in `edge_files`: per part, the files of (centre, leaf) pairs
    (PAIR_DTYPE, u the centre) whose centre, the component's smallest document, is in that part (of
    the index mod parts, or with `Graph.span` of its range).
    Every document of some pair is a leaf or a centre. A step's files are removed once the next step
    has read them."""
    written = mapper("dedup-links", local_stars, [(g, i, f) for i, f in enumerate(edge_files)])
    step = 0
    for _ in range(MAX_ROUNDS):
        todo = _inputs(g, step, written)
        parts = [r for r in range(g.parts) if todo[r]]
        done = mapper("dedup-large-star", large_star, [(g, step, r, todo[r]) for r in parts])
        fs.rm(fs.join(g.root, f"s{step:03d}"), recursive=True)
        if all(d.star for d in done):
            fs.rm(fs.join(g.root, f"s{step + 1:03d}"), recursive=True)  # written for a round not needed
            by_part = dict(zip(parts, done, strict=True))
            return [
                [g.leaves(step, p, r) for p, d in sorted(by_part.items()) if r in d.leaves]
                for r in range(g.parts)
            ]
        todo = _inputs(g, step + 1, _expand(parts, [d.next for d in done], g.parts))
        parts = [r for r in range(g.parts) if todo[r]]
        small = mapper("dedup-small-star", small_star, [(g, step + 1, r, todo[r]) for r in parts])
        fs.rm(fs.join(g.root, f"s{step + 1:03d}"), recursive=True)
        written = _expand(parts, small, g.parts)
        step += 2
    raise InternalError(f"connected components did not converge in {MAX_ROUNDS} rounds")  # pragma: no cover


def _expand(parts: Sequence[int], results: Sequence[list[int]], n: int) -> list[list[int]]:
    """Producer results indexed by producer part (parts that ran no task wrote nothing)."""
    out: list[list[int]] = [[] for _ in range(n)]
    for p, res in zip(parts, results, strict=True):
        out[p] = res
    return out
