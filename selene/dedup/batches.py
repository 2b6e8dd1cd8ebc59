"""The cluster step's texts, brought to the tasks that compare them through files.

A cluster task decides its components in batches of whole components, each of at most the budget's
share of text (`plan_group`): what a task holds at once follows the memory budget, never its number
of linked documents. The copies of one cluster lie anywhere in the corpus, so a batch read straight
from the shards would decode most of the corpus's row groups, and a task of many batches would do so
once a batch. Instead, one task per input shard reads the text of the shard's linked documents once,
in order (`route_texts`), and writes it grouped by (cluster group, batch), one zstd frame a batch, to
one file plus an index; a batch then reads its frame of every shard's file (`batch_texts`), with no
Parquet decoding and no text read twice. Components larger than a batch are left to the
`Reader`, which reads them from the shards in bounded pieces.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import zstandard

from selene.dedup.components import gather
from selene.dedup.work import Reader, Work
from selene.io import dataset, fs, steps

# a linked document of a cluster group: its global index, its component, its batch (-1: a component
# larger than a batch, whose texts are not routed), sorted by global index for the route tasks
PLAN_DTYPE = np.dtype([("gidx", "<i8"), ("comp", "<i8"), ("batch", "<i8")])
# a routed text: (group << 32 | batch), global index, its bytes in its batch's decompressed frame,
# and that frame's bytes in the shard's text file; sorted by key and document
ROUTE_DTYPE = np.dtype(
    [
        ("key", "<i8"),
        ("gidx", "<i8"),
        ("start", "<i8"),
        ("end", "<i8"),
        ("frame", "<i8"),
        ("frame_end", "<i8"),
    ]
)
ZSTD_LEVEL = 1  # the routed texts of a batch, one zstd frame: a third or so of their size on disk
# a batch holds texts of at most budget / BATCH_SHARE characters: their shingle sets (8 bytes a
# shingle, about 1.3 a character of English) and the Python strings take the rest of the budget
BATCH_SHARE = 3
# a larger batch saves nothing: its texts are read and shingled once either way
MAX_BATCH_CHARS = 32 << 20


def plan_path(work: Work, g: int) -> str:
    return fs.join(work.root, "plan", f"g{g:05d}.npy")


def route_paths(work: Work, k: int) -> tuple[str, str]:
    return fs.join(work.root, "texts", f"{k:05d}.npy"), fs.join(work.root, "texts", f"{k:05d}-index.npy")


def batch_limit(budget: int) -> int:
    """Characters of text a batch holds at most."""
    return max(1, min(budget // BATCH_SHARE, MAX_BATCH_CHARS))


def component_batches(work: Work, comp: np.ndarray, linked: np.ndarray, budget: int) -> np.ndarray:
    """The batch of each document (`comp`, `linked` sorted by component then document): consecutive
    whole components of at most `batch_limit(budget)` characters of text together; a component
    larger than that alone in a batch of its own, marked -1 (not routed). Without a budget: one batch."""
    if not linked.size:
        return np.zeros(0, dtype=np.int64)
    if not budget:
        return np.zeros(linked.size, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], comp[1:] != comp[:-1]]))
    chars = np.add.reduceat(Reader(work).rows("len", linked), starts)
    cuts = dataset.byte_cuts(chars, batch_limit(budget))
    of_comp = np.repeat(np.arange(len(cuts) - 1), np.diff(cuts))
    of_comp[chars > batch_limit(budget)] = -1
    return np.repeat(of_comp, np.diff(np.append(starts, linked.size)))


class GroupPlan(steps.StepResult):
    """A cluster group's plan (`plan_group`): the group, its plan file (PLAN_DTYPE), its number of
    batches and the shards its documents are in."""

    group: int
    plan: str
    batches: int
    shards: list[int]


def plan_group(work: Work, g: int, stars: Sequence[str], budget: int) -> GroupPlan:
    """Group g's components (`stars`: their (centre, leaf) pair files) cut into batches; written
    as ``plan/gNNNNN.npy`` (PLAN_DTYPE)."""
    centre, leaf = gather(stars)
    centres = np.unique(centre)
    linked = np.concatenate([centres, leaf])
    comp = np.concatenate([centres, centre])
    order = np.lexsort((linked, comp))
    comp, linked = comp[order], linked[order]
    rec = np.empty(linked.size, dtype=PLAN_DTYPE)
    rec["gidx"], rec["comp"], rec["batch"] = linked, comp, component_batches(work, comp, linked, budget)
    rec = rec[np.argsort(linked, kind="stable")]
    fs.save_npy(plan_path(work, g), rec)
    return GroupPlan(
        group=g,
        plan=plan_path(work, g),
        batches=int(rec["batch"].max()) + 1 if rec.size else 0,
        shards=np.unique(work.locate(rec["gidx"])[0]).tolist(),
    )


def route_texts(work: Work, k: int, plans: Sequence[tuple[int, str]]) -> None:
    """The texts of shard k's linked documents in batches (`plans`: the (group, plan file) holding
    some of them), read once, one row group at a time: their UTF-8 bytes in shard order, and an index
    (ROUTE_DTYPE) sorted by group, batch and document. Memory: one row group, plus the routed bytes."""
    first = work.offsets[k]
    pf = dataset.open_parquet(work.shards[k])
    keys, gidx = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for g, path in plans:
        plan = fs.load_npy(path, mmap=True)
        lo, hi = np.searchsorted(plan["gidx"], [first, first + pf.metadata.num_rows])
        mine = np.asarray(plan[lo:hi])
        mine = mine[mine["batch"] >= 0]
        keys.append((np.int64(g) << np.int64(32)) | mine["batch"])
        gidx.append(mine["gidx"])
    key, doc = np.concatenate(keys), np.concatenate(gidx)
    by_row = np.argsort(doc, kind="stable")
    rows = doc[by_row] - first
    data, sizes, start = [np.empty(0, np.uint8)], [np.empty(0, np.int64)], 0
    for rg in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(rg).num_rows
        lo, hi = np.searchsorted(rows, [start, start + n])
        if hi > lo:
            text = pf.read_row_group(rg, columns=["text"]).column("text").combine_chunks()
            text = text.take(pa.array(rows[lo:hi] - start))
            off = np.frombuffer(text.buffers()[1], dtype=np.int32)[text.offset : text.offset + len(text) + 1]
            body = text.buffers()[2]
            raw = np.frombuffer(body, dtype=np.uint8) if body is not None else np.empty(0, np.uint8)
            data.append(raw[off[0] : off[-1]].copy())
            sizes.append(np.diff(off).astype(np.int64))
        start += n
    size = np.concatenate(sizes)
    blob = np.concatenate(data).data  # a memoryview: slices without copies
    del data
    ends = np.cumsum(size)
    starts = ends - size
    rec = np.empty(doc.size, dtype=ROUTE_DTYPE)
    order = np.lexsort((doc, key))  # by batch, then document
    rec["key"], rec["gidx"] = key[order], doc[order]
    at = np.empty(doc.size, dtype=np.int64)
    at[by_row] = np.arange(doc.size)  # each document's place in the rows read
    src = at[order]
    frames: list[bytes] = []
    written = 0
    cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    cuts = np.flatnonzero(np.concatenate([[True], rec["key"][1:] != rec["key"][:-1], [True]]))
    for lo, hi in itertools.pairwise(cuts.tolist()):
        pieces = [blob[starts[i] : ends[i]] for i in src[lo:hi].tolist()]
        within = np.cumsum([0, *(len(p) for p in pieces)])
        rec["start"][lo:hi], rec["end"][lo:hi] = within[:-1], within[1:]
        frames.append(cctx.compress(b"".join(pieces)))
        rec["frame"][lo:hi], rec["frame_end"][lo:hi] = written, written + len(frames[-1])
        written += len(frames[-1])
    path, index = route_paths(work, k)
    fs.save_npy(path, np.frombuffer(b"".join(frames), dtype=np.uint8))
    fs.save_npy(index, rec)


def batch_texts(work: Work, g: int, b: int, shards: Sequence[int]) -> dict[int, str]:
    """The routed texts of group g's batch b, by global index: its frame of each of `shards`' route
    files, decompressed and sliced."""
    key = (g << 32) | b
    out: dict[int, str] = {}
    dctx = zstandard.ZstdDecompressor()
    for k in shards:
        path, index = route_paths(work, k)
        rec = fs.load_npy(index, mmap=True)
        lo, hi = np.searchsorted(rec["key"], [key, key + 1])
        if hi <= lo:
            continue
        part = np.asarray(rec[lo:hi])
        frame = fs.load_npy(path, mmap=True)[int(part["frame"][0]) : int(part["frame_end"][0])]
        body = dctx.decompress(frame.tobytes(), max_output_size=int(part["end"][-1]))
        for doc, s, e in zip(
            part["gidx"].tolist(), part["start"].tolist(), part["end"].tolist(), strict=True
        ):
            out[doc] = body[s:e].decode("utf-8")
    return out
