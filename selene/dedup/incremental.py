"""What a dedup output keeps for a later run against it, and what an incremental run takes from the
earlier outputs (`stored` holds their formats and checks): the kept documents' sorted key index and
verified pairs, written after the shards from this run's work files; the earlier outputs' stored
pairs turned into edge files of this run's components."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from selene.dedup import stored
from selene.dedup.work import EDGE_DTYPE, EdgeFile, Work
from selene.io import fs


def earlier_links(work: Work, i: int, band: int, part: int, cross_to: Sequence[int] = ()) -> EdgeFile:
    """Earlier output i's stored pairs between its kept documents (band, key partition), in this run's
    global indices, as an edge file: its old documents join components as they did in that run,
    so a new document meets, through them, every old copy that one run over everything would
    compare it with (they are never removed, and their pairs are not verified again). With them, its
    pairs with the documents of the outputs it was itself deduplicated against that this run reads
    too (`cross_to`: their numbers here, -1 for one it does not read), so a chain of crawls joins as
    one run over all of them."""
    out, first, _ = work.indexes[i]
    target = fs.join(work.root, "earlier-links", f"{i:03d}-b{band:04d}-p{part:05d}.npy")
    links = fs.load_npy(stored.links(out, band, part))
    base = work.offsets[first]
    a, b, j = [links["a"] + base], [links["b"] + base], [links["j"]]
    if cross_to:
        cross = fs.load_npy(stored.cross(out, band, part))
        here = np.asarray(cross_to, dtype=np.int64)[cross["prior"]]
        cross = cross[here >= 0]
        theirs = work.prior_starts[here[here >= 0]] + cross["a"]
        ours = cross["b"] + base
        a.append(np.minimum(theirs, ours))
        b.append(np.maximum(theirs, ours))
        j.append(cross["j"])
    edges = np.empty(sum(x.size for x in a), dtype=EDGE_DTYPE)
    edges["a"], edges["b"], edges["j"] = np.concatenate(a), np.concatenate(b), np.concatenate(j)
    fs.save_npy(target, edges)
    return EdgeFile(path=target, pairs=int(edges.size))


def removed_index(work: Work) -> str:
    """This run's removed documents as one sorted array of global indices, from the write step's
    per-shard rows (`gone`): what `store_links` tasks look their pairs' documents up in, one file
    each instead of every cluster group's. Memory: 8 bytes a removed document, in this one task."""
    target = fs.join(work.root, "removed.npy")
    parts = [fs.load_npy(work.path("gone", k)).astype(np.int64) + work.offsets[k] for k in work.new_shards]
    fs.save_npy(target, np.concatenate(parts) if parts else np.empty(0, dtype=np.int64))
    return target


def store_links(work: Work, band: int, part: int, removed_file: str, out: str) -> None:
    """The output's verified pairs between two documents it keeps, from one edge file, numbered in
    output order (`stored.links`): all of this run's (new) documents, less the removed ones, which
    are looked up by binary search in the memory-mapped `removed_index`. In an incremental run, also
    its pairs of a kept document with an earlier output's (`stored.cross`): what joins them in a later
    run against both. (A band task's pairs put the smaller index first, and earlier outputs' documents
    come first: `a` is the earlier one.)"""
    target = stored.links(out, band, part)
    if fs.exists(target):
        return
    removed = fs.load_npy(removed_file, mmap=True)
    edges = fs.load_npy(work.edges(band, part))
    a, b = edges["a"], edges["b"]
    kept = np.ones(a.size, dtype=bool)
    before = {}
    for end, g in (("a", a), ("b", b)):
        at = np.searchsorted(removed, g)  # documents removed before g
        if removed.size:
            kept &= removed[np.minimum(at, removed.size - 1)] != g  # (earlier outputs' are never removed)
        before[end] = at
    new = a >= work.protected
    if work.indexes:
        old = kept & ~new
        bases = work.prior_starts
        prior = np.searchsorted(bases, a[old], side="right") - 1
        cross = np.empty(prior.size, dtype=stored.CROSS_DTYPE)
        cross["prior"], cross["a"] = prior, a[old] - bases[prior]
        cross["b"] = b[old] - work.protected - before["b"][old]
        cross["j"] = edges["j"][old]
        fs.save_npy(stored.cross(out, band, part), cross)
    keep = kept & new
    links = np.empty(int(keep.sum()), dtype=stored.LINK_DTYPE)
    for end, g in (("a", a), ("b", b)):
        links[end] = g[keep] - work.protected - before[end][keep]
    links["j"] = edges["j"][keep]
    fs.save_npy(target, links)


def index_keys(work: Work, band: int, part: int, removed_file: str, out: str) -> None:
    """The output's sorted key index of one band and key partition (`stored.key_index`): the keys of
    the documents it kept, with their output shard and row; removed documents are looked up in the
    memory-mapped `removed_index`. Memory: as a band task."""
    target = stored.key_index(out, band, part)
    if fs.exists(target):
        return
    removed = fs.load_npy(removed_file, mmap=True)
    offsets = np.asarray(work.offsets, dtype=np.int64)
    recs = []
    for i in work.groups:
        rec = fs.load_npy(work.keys(band, part, i))
        first = offsets[rec["shard"]]
        g = first + rec["row"]
        at = np.searchsorted(removed, g)  # documents removed before g
        kept = removed[np.minimum(at, removed.size - 1)] != g if removed.size else np.ones(g.size, bool)
        idx = np.empty(int(kept.sum()), dtype=stored.INDEX_DTYPE)
        idx["key"], idx["shard"] = rec["key"][kept], rec["shard"][kept] - len(work.prior)
        # its row in the output shard: less the documents of its shard removed before it
        idx["row"] = (rec["row"] - (at - np.searchsorted(removed, first)))[kept]
        recs.append(idx)
    index = np.concatenate(recs) if recs else np.empty(0, dtype=stored.INDEX_DTYPE)
    fs.save_npy(target, index[np.lexsort((index["row"], index["shard"], index["key"]))])
