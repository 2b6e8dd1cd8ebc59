"""N-gram overlap between training documents and evaluation tasks (GPT-3 appendix C, MT-NLG 530B).

A document n-gram that also occurs in a task is cut out of the document together with `margin_chars`
on each side; pieces shorter than `min_piece_chars` are dropped, and a document cut more than
`max_splits` times is dropped whole.

Words. A word is a maximal run of Unicode letters and digits (``[^\\W_]+``), compared case-folded
(``str.casefold``: "STRASSE" is "straße"; for ASCII that is lower-casing):
punctuation, underscores and whitespace all separate words, so "Don't!" and "don t" are the same two
words. Tasks and documents go through the same `words` function. Tokens come from a regex over the
*original* text and are folded one by one, so each word keeps its character span there (folding first
would move spans: "ß" folds to "ss"); ASCII text, the common case, is lower-cased and tokenised as bytes.

Hashes. Each word is hashed with xxh64; an n-gram's hash is the polynomial of its word hashes modulo
2**64, computed for all positions of a text in n vectorised numpy steps, then bit-mixed (MurmurHash3's finaliser)
so its top bits can address a bitmap. 64 bits: with 1e8 task n-grams and 1e12 document n-grams the
expected number of chance collisions is about 5 (1e20 / 2**64), each costing at most one cut.

Short tasks. A task's n is `ngram`, unless its median example is shorter than `ngram` words: then n is
that median, but at least `min_ngram` (GPT-3 took the 5th percentile; the median keeps n long enough
that common phrases of short tasks do not cut the web). Example texts shorter than n words add
nothing: a 5-word answer ("the united states of america") would match everywhere.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import xxhash
from pydantic import BaseModel, ConfigDict

from selene.decontaminate.tasks import TaskText
from selene.hashing import fmix64

_WORD = re.compile(r"[^\W_]+")
_WORD_ASCII = re.compile(rb"[a-z0-9]+")  # the same tokens as _WORD on lower-cased ASCII text
_P = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier of the n-gram polynomial


def words(text: str) -> list[bytes]:
    """The normalised words of `text` (case-folded, UTF-8), as hashed by the index."""
    if text.isascii():
        return _WORD_ASCII.findall(text.lower().encode("ascii"))
    ws = _WORD.findall(text)
    # casefold maps characters one by one (no context, unlike lower()'s final sigma), so folding the
    # joined words folds each; "\0" is no word character. One call instead of two per word.
    return "\0".join(ws).casefold().encode("utf-8").split(b"\0") if ws else []


def word_hashes(ws: list[bytes]) -> np.ndarray:
    return np.fromiter(map(xxhash.xxh64_intdigest, ws), dtype=np.uint64, count=len(ws))


def ngram_hashes(wh: np.ndarray, n: int) -> np.ndarray:
    """Hash of the n-gram starting at every position of a word-hash array (len(wh) - n + 1 values)."""
    k = len(wh) - n + 1
    if k <= 0:
        return np.empty(0, dtype=np.uint64)
    h = wh[:k].copy()
    for j in range(1, n):  # uint64 arithmetic wraps: the polynomial is modulo 2**64
        h *= _P
        h += wh[j : j + k]
    return fmix64(h)


def task_ngram(lengths: Iterable[int], ngram: int, min_ngram: int) -> int:
    """The n of a task whose examples have `lengths` words (see the module docstring)."""
    arr = np.fromiter(lengths, dtype=np.int64)
    median = int(np.median(arr)) if len(arr) else ngram
    return ngram if median >= ngram else min(ngram, max(min_ngram, median))


@dataclass
class TaskStats:
    """What one task put into the index: its n, examples long enough to index, distinct n-grams."""

    task: str
    n: int
    examples: int
    indexed_examples: int
    ngrams: int


@dataclass
class _Table:
    """The n-grams of one length: sorted hashes, their owners, and a bitmap of their top bits."""

    n: int
    hashes: np.ndarray  # uint64, sorted, unique
    owners: np.ndarray  # int32 index into NgramIndex.task_sets
    bitmap: np.ndarray  # uint8, packed bits; ~1/16 of bits set, so 15/16 of misses stop here
    shift: np.uint64

    def find(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions of `h` present in the table and their owners."""
        top = h >> self.shift
        cand = np.flatnonzero((self.bitmap[top >> np.uint64(3)] >> (top & np.uint64(7)).astype(np.uint8)) & 1)
        if not len(cand):
            return cand, cand
        j = np.searchsorted(self.hashes, h[cand]).clip(max=len(self.hashes) - 1)
        hit = self.hashes[j] == h[cand]
        return cand[hit], self.owners[j[hit]]


@dataclass
class NgramIndex:
    """Hashes of every task n-gram, per n, mapping each to the task(s) it occurs in. Picklable."""

    tables: list[_Table]
    task_sets: list[tuple[str, ...]]
    stats: list[TaskStats]

    @property
    def min_n(self) -> int:
        return min((t.n for t in self.tables), default=1 << 30)

    @classmethod
    def build(cls, tasks: list[TaskText], ngram: int, min_ngram: int) -> NgramIndex:
        per_n: dict[int, list[tuple[np.ndarray, int]]] = {}
        stats = []
        for ti, task in enumerate(tasks):
            wl = [words(t) for t in task.texts]
            n = task_ngram(map(len, wl), ngram, min_ngram)
            flat = word_hashes([w for ws in wl for w in ws])
            text_id = np.repeat(np.arange(len(wl)), [len(ws) for ws in wl])
            h = ngram_hashes(flat, n)
            inside = text_id[: len(h)] == text_id[n - 1 :]  # n-grams do not cross examples
            uniq = _sorted_unique(h[inside])
            per_n.setdefault(n, []).append((uniq, ti))
            indexed = sum(len(ws) >= n for ws in wl)
            stats.append(TaskStats(task.task, n, len(wl), indexed, len(uniq)))
        task_sets: list[tuple[str, ...]] = [(t.task,) for t in tasks]
        set_id = {s: i for i, s in enumerate(task_sets)}
        tables = []
        for n in sorted(per_n):
            hs = np.concatenate([h for h, _ in per_n[n]])
            ts = np.concatenate([np.full(len(h), ti, dtype=np.int32) for h, ti in per_n[n]])
            order = np.lexsort((ts, hs))
            hs, ts = hs[order], ts[order]
            uniq, first, counts = np.unique(hs, return_index=True, return_counts=True)
            owners = ts[first].copy()
            for i in np.flatnonzero(counts > 1).tolist():  # an n-gram of several tasks: a task set
                key = tuple(tasks[t].task for t in ts[first[i] : first[i] + counts[i]].tolist())
                if key not in set_id:
                    set_id[key] = len(task_sets)
                    task_sets.append(key)
                owners[i] = set_id[key]
            tables.append(_table(n, uniq, owners))
        return cls(tables, task_sets, stats)

    def lookup(self, wh: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(n, start word positions, owner ids) of the document n-grams found, for each n with hits."""
        out = []
        for table in self.tables:
            pos, owners = table.find(ngram_hashes(wh, table.n))
            if len(pos):
                out.append((table.n, pos, owners))
        return out


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting: numpy 2's hash-table unique is ~10x slower on random uint64."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


def _table(n: int, hashes: np.ndarray, owners: np.ndarray) -> _Table:
    bits = max(16, int(16 * len(hashes) - 1).bit_length())  # a power of two >= 16 bits per n-gram
    top = hashes >> np.uint64(64 - bits)
    bitmap = np.zeros(1 << max(0, bits - 3), dtype=np.uint8)
    np.bitwise_or.at(bitmap, top >> np.uint64(3), np.left_shift(1, top & np.uint64(7)).astype(np.uint8))
    return _Table(n, hashes, owners, bitmap, np.uint64(64 - bits))


@dataclass(frozen=True)
class Match:
    """A task n-gram found in a document: the document's own text of it and its character span."""

    task: str
    ngram_text: str
    start_char: int
    end_char: int


@dataclass
class Result:
    """What decontamination keeps of one document, and why."""

    pieces: list[str]
    matches: list[Match] = field(default_factory=list)
    removed_chars: int = 0
    dropped: bool = False
    reason: str | None = None  # decontam:<task with most matches>, for every touched document
    splits: int = 0  # spans cut out (after widening and merging)
    detail: str | None = None


def decontaminate(
    text: str, index: NgramIndex, margin_chars: int, min_piece_chars: int, max_splits: int
) -> Result:
    """Cut every task n-gram (± `margin_chars`) out of `text`; see the module docstring."""
    ws = words(text)
    hits = index.lookup(word_hashes(ws)) if len(ws) >= index.min_n else []
    if not hits:  # most documents: no spans, no Match objects
        return Result([text])
    spans = [m.span() for m in _WORD.finditer(text)]  # only documents with hits pay for spans
    matches: list[Match] = []
    for n, pos, owners in hits:
        for p, o in zip(pos.tolist(), owners.tolist(), strict=True):
            s, e = spans[p][0], spans[p + n - 1][1]
            matches.extend(Match(task, text[s:e], s, e) for task in index.task_sets[o])
    matches.sort(key=lambda m: (m.start_char, m.end_char, m.task))
    cuts: list[list[int]] = []
    for m in matches:
        a, b = max(0, m.start_char - margin_chars), min(len(text), m.end_char + margin_chars)
        if cuts and a <= cuts[-1][1]:
            cuts[-1][1] = max(cuts[-1][1], b)
        else:
            cuts.append([a, b])
    counts = Counter(m.task for m in matches)
    top = min(counts, key=lambda t: (-counts[t], t))
    result = Result([], matches, len(text), dropped=True, reason=f"decontam:{top}", splits=len(cuts))
    if len(cuts) > max_splits:
        result.detail = f"{len(cuts)} splits > max_splits {max_splits}"
        return result
    bounds = [0, *(x for c in cuts for x in c), len(text)]
    pieces = [text[a:b] for a, b in zip(bounds[0::2], bounds[1::2], strict=True)]
    result.pieces = [p for p in pieces if p and len(p) >= min_piece_chars]
    result.removed_chars = len(text) - sum(map(len, result.pieces))
    result.dropped = not result.pieces
    short = sum(1 for p in pieces if 0 < len(p) < min_piece_chars)
    result.detail = (
        f"{len(matches)} matches, {len(cuts)} cuts, {short} pieces < {min_piece_chars} chars dropped"
    )
    return result


# --------------------------------------------------------------------------------------- report


class TaskMatches(BaseModel):
    """What one task matched in a set of documents (a shard, then the corpus): n-grams matched, a few
    distinct matched n-grams as document text, documents touched, of which split and dropped."""

    model_config = ConfigDict(extra="forbid")

    ngrams: int = 0
    documents: int = 0
    split: int = 0
    dropped: int = 0
    examples: list[str] = []


Report = dict[str, TaskMatches]  # task -> what it matched


def add_to_report(report: Report, result: Result, max_examples: int = 5) -> None:
    """Count `result` into `report` (task -> `TaskMatches`), in place.

    Per task: ``ngrams`` matched, up to `max_examples` distinct matched ``examples`` (document text),
    ``documents`` touched, of which ``split`` (kept in pieces) and ``dropped`` (removed whole). A
    document touched by two tasks counts for both.
    """
    for task, k in Counter(m.task for m in result.matches).items():
        row = report.setdefault(task, TaskMatches())
        row.ngrams += k
        row.documents += 1
        if result.dropped:
            row.dropped += 1
        else:
            row.split += 1
        for m in result.matches:
            if len(row.examples) >= max_examples:
                break
            if m.task == task and m.ngram_text not in row.examples:
                row.examples.append(m.ngram_text)


def summarize(results: Iterable[Result], max_examples: int = 5) -> Report:
    """The report (see `add_to_report`) of many results: mergeable with `merge_reports`."""
    report: Report = {}
    for r in results:
        add_to_report(report, r, max_examples)
    return report


def merge_reports(a: Report, b: Report, max_examples: int = 5) -> Report:
    """The report of both shards (neither input is modified); examples of `a` come first."""
    out: Report = {}
    for task in sorted({*a, *b}):
        row = TaskMatches()
        for part in (p for p in (a.get(task), b.get(task)) if p is not None):
            row.ngrams += part.ngrams
            row.documents += part.documents
            row.split += part.split
            row.dropped += part.dropped
            for ex in part.examples:
                if len(row.examples) < max_examples and ex not in row.examples:
                    row.examples.append(ex)
        out[task] = row
    return out
