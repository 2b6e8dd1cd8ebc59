"""Where a spans run keeps its work files (``OUT/_work/<fingerprint>/``) and how hashes are split into
partitions: the one description every step's task receives (small: paths and counts)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from selene.executor.mappers import Budget
from selene.io import fs

# a span as the signature step writes it, per shard sorted (hash, row, first): 16 bytes
SIG_DTYPE = np.dtype([("hash", "<u8"), ("row", "<u4"), ("first", "<u4")])
# a duplicate span to cut, per shard sorted (row, first)
DUP_DTYPE = np.dtype([("row", "<u4"), ("first", "<u4")])
# a find task's memory per span of its partition: the records with their shard (20 bytes), the sort
# order (8), the sorted copy (20) and masks
BYTES_PER_SPAN = 64


def partitions_for(n_spans: int, budget: Budget) -> int:
    """Hash partitions so that one find task fits half of `Budget.task_memory`."""
    need = n_spans * BYTES_PER_SPAN
    return max(1, -(-need // max(1, budget.task_memory // 2)))


def partition_of(hashes: np.ndarray, parts: int) -> np.ndarray:
    """Partition of each hash: its high 32 bits scaled to [0, parts), so hash ranges split evenly and
    a partition is one contiguous range of a sorted hash array."""
    return ((hashes >> np.uint64(32)) * np.uint64(parts)) >> np.uint64(32)


def partition_start(p: int, parts: int) -> int:
    """The least hash of partition p (`partition_of` is monotonic in the hash)."""
    return (-(-(p << 32) // parts)) << 32


def partition_slice(hashes: np.ndarray, p: int, parts: int) -> slice:
    """The records of partition p in a hash-sorted array (memory-mapped: only two binary searches)."""
    lo = int(np.searchsorted(hashes, np.uint64(partition_start(p, parts)), side="left"))
    hi = (
        len(hashes)
        if p == parts - 1
        else int(np.searchsorted(hashes, np.uint64(partition_start(p + 1, parts)), side="left"))
    )
    return slice(lo, hi)


@dataclass(frozen=True)
class Work:
    """A spans run's work directory and inputs: the input shards (in corpus order) and, once the
    signatures are counted, the hash partitions; `priors` are the earlier outputs cut against
    (directory, index partitions)."""

    root: str
    shards: tuple[str, ...]
    partitions: int = 1
    priors: tuple[tuple[str, int], ...] = ()

    def sig(self, k: int, kind: str = "sig") -> str:
        return fs.join(self.root, kind, f"{k:05d}.npy")

    @property
    def find_step(self) -> str:
        """The find step's name, with the partition count: a run resumed under another memory budget
        cuts the hashes otherwise and must not take the other partitioning's results."""
        return f"find-{self.partitions}"

    def dups(self, p: int, k: int) -> str:
        return fs.join(self.root, f"dups-{self.partitions}", f"p{p:05d}-s{k:05d}.npy")
