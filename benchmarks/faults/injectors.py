"""Damage to a file: the faults a case injects into an input, an output or a checkpoint."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path


def flip_bit(path: Path, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    lo, hi = (8, len(data) - 16) if len(data) > 64 else (0, len(data))
    i = rng.randrange(lo, hi)
    data[i] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


def truncate(path: Path, rng: random.Random) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def random_bytes(path: Path, rng: random.Random) -> None:
    """64 random bytes over the middle of the file (the whole file if it is small)."""
    data = bytearray(path.read_bytes())
    n = min(64, len(data))
    i = (len(data) - n) // 2
    data[i : i + n] = bytes(rng.getrandbits(8) for _ in range(n))
    path.write_bytes(bytes(data))


def flip_bit_zst(path: Path, rng: random.Random) -> None:
    """A bit flip in a .zst written as the zstd tool writes it, with the frame's content checksum
    (the test corpus is written without one, which makes a flip undetectable by anyone)."""
    import zstandard

    raw = zstandard.ZstdDecompressor().stream_reader(path.read_bytes()).read()
    path.write_bytes(zstandard.ZstdCompressor(level=3, write_checksum=True).compress(raw))
    flip_bit(path, rng)


def remove(path: Path, rng: random.Random) -> None:
    path.unlink()


def garbage(path: Path, rng: random.Random) -> None:
    path.write_bytes(bytes(rng.getrandbits(8) for _ in range(512)))


DAMAGE: dict[str, Callable[[Path, random.Random], None]] = {
    "bitflip": flip_bit, "bitflip+checksum": flip_bit_zst, "truncate": truncate, "random": random_bytes, "removed": remove, "garbage": garbage,
}  # fmt: skip
