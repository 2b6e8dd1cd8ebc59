"""Benchmark the GPT sample index and sample reads.

0. `build_sample_index` against Megatron-LM's compiled helper (helpers.cpp ``build_sample_idx``) on the
   very same arrays: 1.1B tokens in 2M lognormal documents in one shuffled epoch, seq_length 128
   (8.6M samples) and 2048. The C++ side runs in a worker process of a Python that has megatron-core
   (``--megatron-python``, default /work/venvs/megatron/bin/python) and times only the call; calls
   alternate between the two sides and each reports its best of ``--repeats``; the arrays must be
   identical (dtype included). Without such a Python it prints selene's times and how to get one.
1. `build_indices` over a synthetic 1B-token corpus (2M documents, lognormal lengths; only the length
   array exists, the index build never touches tokens) at seq_length 2048, one epoch and 3.5 epochs.
2. `build_blending_indices` for 10M samples of a 3-way blend (a Python loop, see its docstring).
3. Random sample reads from a real ~50M-token mmap dataset written with `IndexedWriter` in a temp dir.

Run: ``python benchmarks/sample_index.py`` (about 40 s); ``--only-megatron`` runs part 0 alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

# `python benchmarks/x.py` puts benchmarks/ first on sys.path, where benchmarks/tokenize.py would
# shadow the standard library's tokenize module that numpy imports
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import numpy as np

from selene.tokenize.gpt_dataset import (
    GPTDataset,
    _document_index,
    build_blending_indices,
    build_indices,
    build_sample_index,
)
from selene.tokenize.indexed import IndexedWriter

SEQ = 2048
MEGATRON_PYTHON = "/work/venvs/megatron/bin/python"

# Runs in the megatron-core venv: loads the compiled helper without importing megatron.core (whose
# __init__ wants torch and more), then times one call per line read from stdin ("seq_length out.npy").
# The int32/int64 choice is made outside the timed call, as megatron's helpers.build_sample_idx does.
WORKER = r"""
import glob, importlib.util, os, sys, time
import numpy as np
spec = importlib.util.find_spec("megatron")
found = [p for d in spec.submodule_search_locations for p in glob.glob(os.path.join(d, "core/datasets/helpers_cpp*.so"))]
if not found:
    sys.exit("megatron-core is installed but its compiled helpers_cpp is missing")
spec = importlib.util.spec_from_file_location("helpers_cpp", found[0])
helpers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(helpers)
sizes, doc_idx = np.load(sys.argv[1]), np.load(sys.argv[2])
tokens = int(sizes[doc_idx].sum(dtype=np.int64))
wide = max(doc_idx.shape[0], sizes.max()) > np.iinfo(np.int32).max
build = helpers.build_sample_idx_int64 if wide else helpers.build_sample_idx_int32
print(found[0], flush=True)
for line in sys.stdin:
    seq, path = line.split()
    t = time.perf_counter()
    out = build(sizes, doc_idx, int(seq), 1, tokens, True, 1)
    dt = time.perf_counter() - t
    if path != "-":
        np.save(path, out)
    del out
    print(dt, flush=True)
"""


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


def bench_megatron(megatron_python: str | None, repeats: int) -> None:
    rng = np.random.default_rng(0)
    total, docs = 1_100_000_000, 2_000_000
    sizes = lognormal_lengths(rng, docs, total)
    doc_idx = _document_index(np.arange(docs), 1, np.random.RandomState(1234), False)  # int32, as Megatron's
    header = f"sample index   {total / 1e9:.1f}B tokens, {docs / 1e6:.0f}M docs, seq"
    if megatron_python is None:
        for seq in (128, 2048):
            best = min(_timed(build_sample_index, sizes, doc_idx, seq) for _ in range(repeats))
            print(f"{header} {seq:>4}: selene {best:.3f} s (best of {repeats})")
        print(
            "               no megatron-core baseline: `pip install megatron-core==0.16.1 --no-deps numpy` into a "
            "venv (only its compiled helper is loaded, no torch needed) and pass --megatron-python VENV/bin/python"
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        np.save(f"{tmp}/sizes.npy", sizes)
        np.save(f"{tmp}/doc_idx.npy", doc_idx)
        worker = subprocess.Popen(
            [megatron_python, "-c", WORKER, f"{tmp}/sizes.npy", f"{tmp}/doc_idx.npy"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert worker.stdin is not None and worker.stdout is not None
        helper = worker.stdout.readline().strip()
        if not helper:
            raise SystemExit(f"{megatron_python} could not load megatron-core's helpers_cpp (see above)")
        print(f"megatron       {helper}")

        def cpp(seq: int, path: str = "-") -> float:
            worker.stdin.write(f"{seq} {path}\n")  # type: ignore[union-attr]
            worker.stdin.flush()  # type: ignore[union-attr]
            return float(worker.stdout.readline())  # type: ignore[union-attr]

        try:
            for seq in (128, 2048):
                cpp(seq, f"{tmp}/cpp.npy")
                theirs = np.load(f"{tmp}/cpp.npy")
                ours = build_sample_index(sizes, doc_idx, seq)
                same = ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
                del ours, theirs
                if not same:
                    raise SystemExit(f"seq {seq}: selene's sample index differs from megatron-core's")
                t_ours, t_cpp = [], []
                for _ in range(repeats):  # alternate, so both see the same machine load
                    t_ours.append(_timed(build_sample_index, sizes, doc_idx, seq))
                    t_cpp.append(cpp(seq))
                rows = total // seq
                print(
                    f"{header} {seq:>4} ({rows / 1e6:.2f}M samples, identical): selene {min(t_ours):.3f} s, "
                    f"megatron C++ {min(t_cpp):.3f} s, ratio {min(t_ours) / min(t_cpp):.2f} (best of {repeats})"
                )
        finally:
            worker.stdin.close()
            worker.wait()


def _timed(fn: Any, *args: Any) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--megatron-python",
        help=f"a Python with megatron-core installed (default {MEGATRON_PYTHON} when it exists)",
    )
    parser.add_argument("--repeats", type=int, default=7, help="timed calls per side; the best is reported")
    parser.add_argument(
        "--only-megatron", action="store_true", help="run only the comparison with megatron-core"
    )
    args = parser.parse_args()
    megatron_python = args.megatron_python or (MEGATRON_PYTHON if os.path.exists(MEGATRON_PYTHON) else None)
    bench_megatron(megatron_python, args.repeats)
    if not args.only_megatron:
        bench_index()
        bench_blend()
        bench_reads()


if __name__ == "__main__":
    main()
