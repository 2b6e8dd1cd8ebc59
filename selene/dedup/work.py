"""What every dedup task shares: the corpus as shards with global document indices (`Work`), the
per-shard arrays the steps write (signatures, band keys, lengths, keep ranks), and the similarity of
document pairs, estimated on signatures or exact on shingles."""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

import numpy as np

from selene.dedup import minhash, shingle, stored
from selene.dedup.config import DedupConfig
from selene.io import dataset, fs, steps

# one band's keys of a group of shards: key, shard (in `Work.shards`), row in the shard
KEY_DTYPE = np.dtype([("key", "<u8"), ("shard", "<u4"), ("row", "<u4")])
# a verified pair of documents (global indices, a < b) and its similarity
EDGE_DTYPE = np.dtype([("a", "<i8"), ("b", "<i8"), ("j", "<f4")])
VERIFY_CHUNK = 1 << 16  # candidate pairs verified at once: two (chunk × num_perm) blocks of signatures
EXACT_BATCH_CHARS = 4 << 20  # text of the pairs whose shingles are hashed at once by an exact check
READ_CHARS = 64 << 20  # text an exact check reads at once when its `Reader` has no budget of its own


class EdgeFile(steps.StepResult):
    """A file of verified pairs (EDGE_DTYPE) and how many it holds: what a band task, or an earlier
    output's stored pairs turned into edges, gives the cluster step."""

    path: str
    pairs: int


@dataclass(frozen=True, kw_only=True)
class Work:
    """The work every task shares: input shards, their row offsets, LSH shape, work root. Built by
    keyword only: ten settings of which several are ints side by side.

    `partitions`: each band's keys are split by key value into this many ranges, one task each, so a
    task holds 1/partitions of the corpus's keys. It follows the memory budget; clusters do not
    depend on it (equal keys always share a partition, and components ignore the order of edges)."""

    shards: tuple[str, ...]
    offsets: tuple[int, ...]  # global index of each shard's first row
    bands: int
    rows: int
    root: str
    partitions: int = 1
    sets: int = 1  # band sets cut from one signature (`lsh.band_positions`); keys per document: sets × bands
    # --against: the first shards are earlier outputs' (output directory, shard number): their
    # signatures, keys and lengths are read where those outputs stored them, and their documents
    # (global index < `protected`) are never removed
    prior: tuple[tuple[str, int], ...] = ()
    protected: int = 0
    # per earlier output: (its directory, its first shard's number here, its key index's partitions)
    indexes: tuple[tuple[str, int, int], ...] = ()
    # new shards per signature task: its band keys go to one file per band and key partition for
    # the whole group, so a band task opens one file per group, not one per shard
    group: int = 1

    def path(self, kind: str, i: int, ext: str = "npy") -> str:
        if i < len(self.prior) and kind in stored.STORED_KINDS:
            return stored.path(*self.prior[i][:1], kind, self.prior[i][1])
        return fs.join(self.root, kind, f"{i:05d}.{ext}")

    @property
    def prior_starts(self) -> np.ndarray:
        """The global index of each earlier output's first document (`indexes` order)."""
        return np.asarray([self.offsets[first] for _, first, _ in self.indexes], dtype=np.int64)

    @property
    def new_shards(self) -> range:
        """The shards of this run's input (after the earlier outputs' shards)."""
        return range(len(self.prior), len(self.shards))

    @property
    def groups(self) -> range:
        """The signature tasks: groups of `group` consecutive new shards."""
        return range(-(-len(self.new_shards) // self.group))

    def group_shards(self, i: int) -> range:
        first = len(self.prior) + i * self.group
        return range(first, min(first + self.group, len(self.shards)))

    def keys(self, band: int, part: int, i: int) -> str:
        """Group i's LSH keys of one band and key partition (`KEY_DTYPE`, sorted), from its signature task."""
        where = f"keys-p{self.partitions}-g{self.group}"
        return fs.join(self.root, where, f"b{band:04d}-p{part:05d}", f"{i:05d}.npy")

    def keys_done(self, i: int) -> str:
        """Group i's signature task's result, written when its key files are (named after the
        partitions and group size: keys cut another way are never taken as done)."""
        return steps.marker(self.root, f"keys-p{self.partitions}-g{self.group}", i)

    def edges(self, band: int, part: int) -> str:
        return fs.join(self.root, f"edges-p{self.partitions}", f"b{band:04d}-p{part:05d}.npy")

    def edges_done(self, band: int, part: int) -> str:
        """The band task's result (`EdgeFile`), one per band and key partition."""
        return steps.marker(self.root, f"edges-p{self.partitions}", band * self.partitions + part)

    def locate(self, gidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(shard, row) of global document indices."""
        shard = np.searchsorted(np.asarray(self.offsets), gidx, side="right") - 1
        return shard, gidx - np.asarray(self.offsets)[shard]


class Reader:
    """What one task reads of the corpus, kept while the task runs: the memory maps of per-shard arrays
    (opened once, not once a call), texts and shingle sets. With `prefetch` (sorted global indices:
    the documents the task may compare later), reading a row group for some documents also keeps the
    texts of the `prefetch` documents in it, up to `budget` bytes of texts and shingle sets: `assign`
    compares a component's documents round after round, and a row group (4 MB of text) is then
    decoded once rather than once a round. A text held is let go once its shingle set is (the set is
    all an exact check needs of it). `read_chars`: the characters of text an exact check reads at once,
    half the budget (`READ_CHARS` without one), so that it never holds the texts of all its pairs."""

    def __init__(
        self,
        work: Work,
        prefetch: np.ndarray | None = None,
        budget: int = 0,
        texts: dict[int, str] | None = None,
    ) -> None:
        self.work = work
        self.prefetch = (
            np.empty(0, dtype=np.int64) if prefetch is None else np.asarray(prefetch, dtype=np.int64)
        )
        self.read_chars = max(EXACT_BATCH_CHARS, budget // 2) if budget else READ_CHARS
        self.maps: dict[tuple[str, int], np.ndarray] = {}
        self.text: dict[int, str] = texts or {}  # `texts`: read already (a cluster batch's routed texts)
        self.budget, self.held = budget, sum(sys.getsizeof(t) for t in self.text.values())
        self.shingled: dict[int, np.ndarray] = {}

    def rows(self, kind: str, gidx: np.ndarray) -> np.ndarray:
        """Rows `gidx` (global indices) of the per-shard arrays `kind`, read through memory maps."""
        shard, row = self.work.locate(gidx)
        out: np.ndarray | None = None
        for k in np.unique(shard).tolist():
            if (kind, k) not in self.maps:
                self.maps[(kind, k)] = fs.load_npy(self.work.path(kind, k), mmap=True)
            sel = shard == k
            part = self.maps[(kind, k)][row[sel]]
            if out is None:
                out = np.empty((gidx.size, *part.shape[1:]), dtype=part.dtype)
            out[sel] = part
        assert out is not None
        return out

    def texts(self, gidx: np.ndarray) -> dict[int, str]:
        """The texts of documents `gidx`, by global index; only the row groups holding them are read."""
        wanted = np.unique(gidx)
        need = wanted[[g not in self.text for g in wanted.tolist()]]
        shard, row = self.work.locate(need)
        out = {g: self.text[g] for g in wanted.tolist() if g in self.text}
        for k in np.unique(shard).tolist():
            rows = row[shard == k]
            extra = self._neighbours(k, rows) if self.held < self.budget else np.empty(0, dtype=np.int64)
            take = np.union1d(rows, extra)
            col = dataset.take_rows(self.work.shards[k], take, ["text"]).column("text").to_pylist()
            first = self.work.offsets[k]
            asked = set(rows.tolist())
            for r, t in zip(take.tolist(), col, strict=True):
                if r in asked:
                    out[first + r] = t
                if self.held < self.budget and first + r not in self.shingled:
                    self.text[first + r] = t
                    self.held += sys.getsizeof(t)
        return out

    def _neighbours(self, k: int, rows: np.ndarray) -> np.ndarray:
        """Rows of `prefetch` documents of shard k in the row groups of `rows`, not yet held."""
        lo, hi = np.searchsorted(self.prefetch, [self.work.offsets[k], self.work.offsets[k] + (1 << 62)])
        mine = self.prefetch[lo:hi] - self.work.offsets[k]
        if k + 1 < len(self.work.offsets):
            mine = mine[mine < self.work.offsets[k + 1] - self.work.offsets[k]]
        if not mine.size:
            return mine
        meta = dataset.open_parquet(self.work.shards[k]).metadata
        starts = np.cumsum([0, *(meta.row_group(g).num_rows for g in range(meta.num_row_groups))])
        groups = np.unique(np.searchsorted(starts, rows, side="right"))
        mine = mine[np.isin(np.searchsorted(starts, mine, side="right"), groups)]
        first = self.work.offsets[k]
        return mine[[first + r not in self.text and first + r not in self.shingled for r in mine.tolist()]]

    def shingle_sets(self, gidx: list[int], texts: dict[int, str], cfg: DedupConfig) -> dict[int, np.ndarray]:
        """The sorted, distinct shingle hashes of documents `gidx` (global indices), those not held
        yet hashed together from `texts` (`shingle.batch_hashes`: one pass over all their words, not
        numpy's per-call overhead a document); kept while the budget lasts."""
        out = {g: self.shingled[g] for g in gidx if g in self.shingled}
        need = sorted({g for g in gidx if g not in out})
        if not need:
            return out
        values, counts = shingle.batch_hashes([texts.get(g, "") for g in need], cfg.ngram, cfg.shingle)
        for g, part in zip(need, np.split(values, np.cumsum(counts)[:-1]), strict=True):
            sh = shingle.distinct(part.copy())
            out[g] = sh
            if g in self.text:
                self.held -= sys.getsizeof(self.text.pop(g))
            if self.held < self.budget:
                self.shingled[g] = sh
                self.held += sh.nbytes
        return out


def similarity(
    work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig, reader: Reader | None = None
) -> np.ndarray:
    """Jaccard of the pairs (a, b) as float64, VERIFY_CHUNK pairs at a time: exact on shingles for
    `verify: exact`, else estimated from the full signatures (agreeing values / num_perm)."""
    reader = reader or Reader(work)
    out = np.empty(a.size, dtype=np.float64)
    for lo in range(0, a.size, VERIFY_CHUNK):
        x, y = a[lo : lo + VERIFY_CHUNK], b[lo : lo + VERIFY_CHUNK]
        if cfg.verify == "exact":
            out[lo : lo + x.size] = exact_jaccard(work, x, y, cfg, reader)
        else:
            out[lo : lo + x.size] = minhash.jaccard_estimates(reader.rows("sig", x), reader.rows("sig", y))
    return out


def exact_jaccard(
    work: Work, a: np.ndarray, b: np.ndarray, cfg: DedupConfig, reader: Reader | None = None
) -> np.ndarray:
    """Exact Jaccard of the shingle sets of the pairs (a, b), from their texts: read `reader.read_chars`
    characters at a time (cut on the stored lengths; a document whose set is held reads nothing), and
    hashed EXACT_BATCH_CHARS at a time (a batch's words are Python objects, some ten times the size
    of its text). The cuts change what is held at once, never a value."""
    reader = reader or Reader(work)
    out = np.empty(a.size, dtype=np.float64)
    if not a.size:
        return out
    both = np.concatenate([a, b])
    held = np.fromiter((g in reader.shingled for g in both.tolist()), dtype=bool, count=both.size)
    chars = np.where(held, 0, reader.rows("len", both))
    per_pair = chars[: a.size] + chars[a.size :]
    for start, stop in itertools.pairwise(dataset.byte_cuts(per_pair, reader.read_chars)):
        xs, ys = a[start:stop], b[start:stop]
        batch = np.concatenate([xs, ys])
        texts = reader.texts(batch[[g not in reader.shingled for g in batch.tolist()]])
        cuts = dataset.byte_cuts(per_pair[start:stop], EXACT_BATCH_CHARS)
        for lo, hi in itertools.pairwise(cuts):
            _jaccard_into(
                out[start + lo : start + hi], xs[lo:hi].tolist(), ys[lo:hi].tolist(), texts, cfg, reader
            )
        del texts
    return out


def _jaccard_into(
    out: np.ndarray, xs: list[int], ys: list[int], texts: dict[int, str], cfg: DedupConfig, reader: Reader
) -> None:
    sets = reader.shingle_sets(xs + ys, texts, cfg)
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        sx, sy = sets[x], sets[y]
        if sx.size < sy.size:
            sx, sy = sy, sx
        # both sorted and distinct: the smaller one looked up in the larger by binary search
        inter = (
            int(np.count_nonzero(sx[np.minimum(np.searchsorted(sx, sy), sx.size - 1)] == sy))
            if sx.size
            else 0
        )
        union = sx.size + sy.size - inter
        out[i] = inter / union if union else 1.0
