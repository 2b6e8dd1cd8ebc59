"""Where the corpus's units lie on disk, and how it is cut into parts.

The encode step writes, per shard of the corpus (earlier outputs' shards first, then the input's),
``enc/NNNNN.bin`` (each document's units followed by SEP) and ``enc/NNNNN.off.npy`` (int64: where each
document starts, then the file's length). Laid end to end these files are the corpus as one byte
string; a *global* position is an offset in it. A part is a range of global positions that starts and
ends at document boundaries; all the main process keeps is the shards' and the parts' start offsets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from selene.errors import ConfigError, InputError
from selene.io import fs

# Bytes a part task holds per unit of its part, measured (ru_maxrss) at pydivsufsort's peak: the text
# (1), the suffix array (4, int32), kasai's LCP array and the rank array it uses (4 + 4), and
# longest_previous_factor's LPF array and its working array (4 + 4) = 21; the window hashes after it
# hold less (text, LPF, repeat flags and 8 per entry, at most one entry per unit: 14). 3 more leave
# room for the worker's own footprint (~100 MB once imported) at parts of ~100 MB.
# keep: none adds a bool per unit (whether its window occurs anywhere else), alive through LPF: 22.
BYTES_PER_UNIT = 24
# What a task's budget holds besides its part: the worker's own memory once imported (37 MB anonymous)
# and its share of the command's process (75 MB), measured; 24 bytes per unit alone covered them only
# at parts of ~100 MB. A budget under twice this (the tests' tiny ones) keeps half for its parts.
TASK_RESERVE = 96 << 20
MAX_PART = (1 << 31) - 1  # int32 suffix arrays: libdivsufsort's 32-bit variant


def enc_path(root: str, k: int, kind: str = "bin") -> str:
    return fs.join(root, "enc", f"{k:05d}.{'bin' if kind == 'bin' else 'off.npy'}")


@dataclass(frozen=True)
class Layout:
    """The corpus on disk: per shard its encoded file and global start; the parts' global starts."""

    enc: str
    """The work directory holding ``enc/`` (the encode step's files)."""
    root: str
    """This layout's own work directory (part, match and cut files)."""
    shard_starts: tuple[int, ...]
    """Global start of each shard's units, then the corpus length."""
    part_starts: tuple[int, ...]
    """Global start of each part, then the corpus length."""
    window: int
    """Bytes of a window: min_length × the unit's width."""
    width: int
    """Bytes per unit (1; a token code's width)."""
    protected: int = 0
    """Shards (the first ones, of earlier outputs) that are read and never cut."""
    keep_first: bool = True
    """A repeated window's first occurrence stays (keep: first); False: every copy is cut."""

    @property
    def parts(self) -> int:
        return len(self.part_starts) - 1

    @property
    def shards(self) -> int:
        return len(self.shard_starts) - 1

    def part_range(self, j: int) -> tuple[int, int]:
        return self.part_starts[j], self.part_starts[j + 1]

    def shards_of_part(self, j: int) -> range:
        return self.shards_of_range(*self.part_range(j))

    def shards_of_range(self, lo: int, hi: int) -> range:
        """The shards that hold global positions [lo, hi)."""
        return _overlapping(self.shard_starts, lo, hi)

    def parts_of_shard(self, k: int) -> range:
        return _overlapping(self.part_starts, self.shard_starts[k], self.shard_starts[k + 1])

    def read(self, lo: int, hi: int) -> np.ndarray:
        """Global positions [lo, hi) as one writable uint8 array, read from the files (a part's text is
        read once, in order: through a memory map its pages would stay in the task's RSS besides)."""
        out = np.empty(hi - lo, dtype=np.uint8)
        view = out.data  # a memoryview of the array: read into in place
        for k in self.shards_of_range(lo, hi):
            s, e = self.shard_starts[k], self.shard_starts[k + 1]
            a, b = max(lo, s), min(hi, e)
            if b - a < 1 << 16:  # a span's text: a few pages of the map
                out[a - lo : b - lo] = _units(self.enc, k)[a - s : b - s]
                continue
            filesystem, path = fs.get_fs(enc_path(self.enc, k))
            with filesystem.open(path, "rb") as f:
                f.seek(a - s)
                got = f.readinto(view[a - lo : b - lo])
            if got != b - a:
                raise InputError(
                    f"{enc_path(self.enc, k)}: {got} bytes at {a - s}, expected {b - a} (a work file cut short)"
                )
        return out

    def windows(self, pos: np.ndarray, length: int) -> np.ndarray:
        """The `length` bytes at each global position of `pos` (each inside one shard), one row each."""
        out = np.empty((len(pos), length), dtype=np.uint8)
        if not len(pos):
            return out
        shard = np.searchsorted(np.asarray(self.shard_starts), pos, side="right") - 1
        steps = np.arange(length, dtype=np.int64)
        for k in np.unique(shard).tolist():
            sel = np.flatnonzero(shard == k)
            local = pos[sel] - self.shard_starts[k]
            out[sel] = _units(self.enc, k)[local[:, None] + steps]
        return out

    def offsets(self, k: int) -> np.ndarray:
        """Where each document of shard `k` starts in it, then its length."""
        return np.asarray(fs.load_npy(enc_path(self.enc, k, "off")))


def _overlapping(starts: tuple[int, ...], lo: int, hi: int) -> range:
    """The ranges (given by their `starts`, then the end) that overlap [lo, hi)."""
    a = np.asarray(starts)
    first = int(np.searchsorted(a, lo, side="right")) - 1
    last = int(np.searchsorted(a, hi, side="left"))
    return range(max(first, 0), min(last, len(starts) - 1))


def unmap() -> None:
    """Drop this process's maps of the encoded files: a task that compared windows all over the corpus
    would otherwise keep those pages in its RSS while the worker runs its next task."""
    _units.cache_clear()


@lru_cache(maxsize=64)
def _units(root: str, k: int) -> np.ndarray:
    path = enc_path(root, k)
    if not fs.size(path):
        return np.empty(0, dtype=np.uint8)
    if fs.is_local(path):
        return np.memmap(
            fs.get_fs(path)[1], dtype=np.uint8, mode="r"
        )  # local: pages read as windows are compared
    return np.frombuffer(fs.read_bytes(path), dtype=np.uint8)


def _for_parts(task_memory: int) -> int:
    """The part of a task's budget its part's arrays may take."""
    return task_memory - min(TASK_RESERVE, task_memory // 2)


def task_memory_for(units: int) -> int:
    """The least task budget whose part can hold `units` bytes of units."""
    need = units * BYTES_PER_UNIT
    return need + TASK_RESERVE if need >= TASK_RESERVE else 2 * need


def part_capacity(task_memory: int, window: int) -> int:
    """The most units' bytes one part may hold under the task memory budget; a budget that cannot
    hold a part of one window is the user's to raise (`ConfigError`)."""
    cap = min(_for_parts(task_memory) // BYTES_PER_UNIT, MAX_PART)
    if cap <= window:
        raise ConfigError(
            f"executor.memory_gb: a task's memory ({task_memory:,} bytes) cannot hold the suffix array of one "
            f"window of {window:,} bytes ({BYTES_PER_UNIT} bytes per unit and the worker's own): give at least "
            f"{task_memory_for(window + 1):,} bytes per worker"
        )
    return cap


def plan_parts(root: str, shard_starts: list[int], cap: int) -> list[int]:
    """Part starts (then the corpus length): consecutive documents, each part at most `cap` bytes.
    Reads one shard's offsets at a time. A document (with its separator) longer than `cap` cannot be
    in any part: a `ConfigError` that says how much memory it needs."""
    bounds = [0]
    total = shard_starts[-1]
    for k in range(len(shard_starts) - 1):
        base = shard_starts[k]
        ends = base + fs.load_npy(enc_path(root, k, "off"))  # document starts, then the shard's end
        longest = int(np.diff(ends).max()) if len(ends) > 1 else 0
        if longest > cap:
            raise ConfigError(
                f"shard {k}: a document of {longest - 1:,} bytes of units does not fit a part of {cap:,} bytes "
                f"({BYTES_PER_UNIT} bytes of the task memory budget per unit); raise executor.memory_gb to give "
                f"each worker at least {task_memory_for(longest):,} bytes ({task_memory_for(longest) / (1 << 30):.3f} GiB)"
            )
        while ends[-1] - bounds[-1] > cap:
            i = int(np.searchsorted(ends, bounds[-1] + cap, side="right")) - 1
            bounds.append(int(ends[i]))
    if bounds[-1] != total or len(bounds) == 1:
        bounds.append(total)
    return bounds
