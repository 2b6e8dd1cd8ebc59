"""Step 2 of spans, per hash partition: the spans of the whole corpus whose hash falls in the
partition, sorted (hash, shard, row, first unit): the first occurrence of a hash in corpus order is
kept, every later one is a duplicate; with ``--against``, every occurrence of a hash that an earlier
output's index holds is one too. Duplicates are written per shard (row, first unit), sorted, for the
cut step; the partition's most repeated spans (with the text of their first occurrence) go to the
report. Memory: the partition's spans (1/partitions of the corpus's, `work.partitions_for`)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from selene.faults import kill_once
from selene.io import dataset, edits, fs, steps
from selene.io.edits import repeat
from selene.manifest import Record, Repeat
from selene.spans import stored
from selene.spans.config import SpansConfig
from selene.spans.units import span_text
from selene.spans.work import DUP_DTYPE, SIG_DTYPE, Work, partition_slice

TOP = 20  # repeats kept per partition: the corpus's top 20 are among the partitions' top 20s


class RepeatAt(Record):
    """A repeated span with its first occurrence (shard, row, first unit): the tie-break every
    partitioning agrees on, so the corpus's top spans do not depend on the memory budget."""

    shard: int
    row: int
    first: int
    repeat: Repeat


class Found(steps.StepResult):
    """What one partition's find step stores: the shards it wrote duplicates for, its counts and
    its most repeated spans (by occurrences, then first occurrence in corpus order)."""

    shards: list[int]
    spans: int
    duplicates: int
    distinct_repeated: int
    in_earlier: int
    repeats: list[RepeatAt]


def find_partition(work: Work, p: int, cfg: SpansConfig) -> Found:
    return steps.resumable(steps.marker(work.root, work.find_step, p), Found, lambda: _find(work, p, cfg))


def _find(work: Work, p: int, cfg: SpansConfig) -> Found:
    kill_once("spans:find")
    recs, shard_of = [], []
    for k in range(len(work.shards)):
        sig = fs.load_npy(work.sig(k), mmap=True)
        part = np.asarray(sig[partition_slice(sig["hash"], p, work.partitions)])
        recs.append(part)
        shard_of.append(np.full(part.size, k, dtype=np.uint32))
    rec = np.concatenate(recs) if recs else np.empty(0, dtype=SIG_DTYPE)
    shard = np.concatenate(shard_of) if shard_of else np.empty(0, dtype=np.uint32)
    del recs, shard_of
    # shards were read in order and each is sorted (hash, row, first): a stable sort on the hash
    # alone gives (hash, shard, row, first), corpus order within a hash
    order = np.argsort(rec["hash"], kind="stable")
    rec, shard = rec[order], shard[order]
    del order
    h = rec["hash"]
    n = h.size
    first = np.ones(n, dtype=bool)
    first[1:] = h[1:] != h[:-1]
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, n))
    earlier = np.zeros(n, dtype=bool)
    if work.priors:
        seen = stored.held(work.priors, h[starts])
        earlier = np.repeat(seen, sizes)
    dup = earlier if cfg.only_against and work.priors else (~first | earlier)
    shards = _write_dups(work, p, shard[dup], rec[dup])
    return Found(
        shards=shards,
        spans=int(n),
        duplicates=int(dup.sum()),
        distinct_repeated=int((sizes > 1).sum()),
        in_earlier=int(earlier.sum()),
        repeats=_top(work, cfg, rec[starts], shard[starts], sizes),
    )


def _write_dups(work: Work, p: int, shard: np.ndarray, rec: np.ndarray) -> list[int]:
    order = np.lexsort((rec["first"], rec["row"], shard))
    shard, rec = shard[order], rec[order]
    written = []
    bounds = np.flatnonzero(np.diff(shard)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, shard.size], strict=True):
        if hi <= lo:
            continue
        k = int(shard[lo])
        out = np.empty(hi - lo, dtype=DUP_DTYPE)
        out["row"], out["first"] = rec["row"][lo:hi], rec["first"][lo:hi]
        fs.save_npy(work.dups(p, k), out)
        written.append(k)
    return written


def _top(
    work: Work, cfg: SpansConfig, firsts: np.ndarray, shard: np.ndarray, sizes: np.ndarray
) -> list[RepeatAt]:
    """The partition's TOP most repeated spans, by occurrences then their first occurrence in corpus
    order (an order every partitioning agrees on), each with its first occurrence's text."""
    many = np.flatnonzero(sizes > 1)
    order = np.lexsort(
        (firsts["first"][many], firsts["row"][many], shard[many], -sizes[many].astype(np.int64))
    )
    top = many[order[:TOP]]
    wanted: dict[int, list[int]] = defaultdict(list)
    for i in top.tolist():
        wanted[int(shard[i])].append(i)
    texts: dict[int, str] = {}
    for k, idx in sorted(wanted.items()):
        rows = firsts["row"][idx].astype(np.int64)
        uniq, back = np.unique(rows, return_inverse=True)
        docs = dataset.take_rows(work.shards[k], uniq, ["text"]).column("text").to_pylist()
        for i, j in zip(idx, back.tolist(), strict=True):
            texts[i] = span_text(docs[j], cfg, int(firsts["first"][i]))
    return [
        RepeatAt(shard=int(shard[i]), row=int(firsts["row"][i]), first=int(firsts["first"][i]),
                 repeat=repeat(texts[i], int(sizes[i])))
        for i in top.tolist()
    ]  # fmt: skip


def most_repeated(found: list[Found], n: int = TOP) -> list[Repeat]:
    """The corpus's `n` most repeated spans, from the partitions' own tops (a hash lives in one
    partition, so no count is split), ordered as `edits.most_repeated` shows them."""
    every = [r for f in found for r in f.repeats]
    every.sort(key=lambda r: (-r.repeat.count, r.shard, r.row, r.first))
    return edits.most_repeated([[r.repeat for r in every[:n]]], n)
