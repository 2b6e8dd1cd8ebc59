"""Benchmark the GPT sample index and sample reads.

1. `build_indices` over a synthetic 1B-token corpus (2M documents, lognormal lengths; only the length
   array exists, the index build never touches tokens) at seq_length 2048, one epoch and 3.5 epochs.
2. `build_blending_indices` for 10M samples of a 3-way blend (a Python loop, see its docstring).
3. Random sample reads from a real ~50M-token mmap dataset written with `IndexedWriter` in a temp dir.

Run: ``python benchmarks/sample_index.py`` (about 20 s).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

# `python benchmarks/x.py` puts benchmarks/ first on sys.path, where benchmarks/tokenize.py would
# shadow the standard library's tokenize module that numpy imports
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import numpy as np

from selene.tokenize.gpt_dataset import GPTDataset, build_blending_indices, build_indices
from selene.tokenize.indexed import IndexedWriter

SEQ = 2048


def lognormal_lengths(rng: np.random.Generator, docs: int, total: int) -> np.ndarray:
    raw = rng.lognormal(mean=6.0, sigma=1.2, size=docs)
    lengths = np.maximum(1, np.round(raw / raw.sum() * total)).astype(np.int64)
    lengths[np.argmax(lengths)] += total - int(lengths.sum())  # exact total
    return lengths.astype(np.int32)


def bench_index() -> None:
    rng = np.random.default_rng(0)
    total, docs = 1_000_000_000, 2_000_000
    lengths = lognormal_lengths(rng, docs, total)
    for epochs in (1.0, 3.5):
        num_samples = int(total * epochs) // SEQ
        t = time.perf_counter()
        di, si, _ = build_indices(lengths, np.arange(docs), SEQ, num_samples, seed=1234)
        dt = time.perf_counter() - t
        print(
            f"build_indices  {total / 1e9:.0f}B tokens, {docs / 1e6:.0f}M docs, seq {SEQ}, "
            f"{num_samples:,} samples ({epochs} epochs -> {len(di) // docs} doc epochs, "
            f"{len(si) - 1:,} indexed): {dt:.2f} s"
        )


def bench_blend() -> None:
    t = time.perf_counter()
    index, _ = build_blending_indices([0.5, 0.3, 0.2], 10_000_000)
    dt = time.perf_counter() - t
    shares = np.bincount(index) / len(index)
    print(f"blending       10M samples, 3 datasets: {dt:.2f} s (shares {np.round(shares, 6).tolist()})")


def bench_reads() -> None:
    rng = np.random.default_rng(1)
    lengths = lognormal_lengths(rng, 50_000, 50_000_000)
    tokens = rng.integers(0, 50_000, size=int(lengths.sum()), dtype=np.uint16)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = f"{tmp}/bench"
        t = time.perf_counter()
        with IndexedWriter(prefix, np.uint16) as w:
            start = 0
            for n in lengths:
                w.add_document(tokens[start : start + n])
                start += n
        dt = time.perf_counter() - t
        print(
            f"IndexedWriter  {start / 1e6:.0f}M tokens, {len(lengths):,} docs: {dt:.2f} s ({start / dt / 1e6:.0f}M tok/s)"
        )
        t = time.perf_counter()
        ds = GPTDataset(prefix, SEQ, None, seed=1)
        print(f"GPTDataset     index of {len(ds):,} samples built in {time.perf_counter() - t:.2f} s")
        order = rng.integers(0, len(ds), size=20_000)
        t = time.perf_counter()
        for i in order:
            ds[int(i)]
        dt = time.perf_counter() - t
        rate = len(order) / dt
        print(
            f"random reads   {len(order):,} samples: {rate:,.0f} samples/s, {rate * (SEQ + 1) / 1e6:.0f}M tokens/s"
        )


if __name__ == "__main__":
    bench_index()
    bench_blend()
    bench_reads()
