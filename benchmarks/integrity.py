"""What verifying shards against their manifest costs a reader (selene/io/integrity.py).

    python benchmarks/integrity.py DATASET [--rounds 5]
    python benchmarks/integrity.py DATASET --stage dedup --before CHECKOUT [-c CONFIG] [--rounds 3]

Reads every shard of a finished document dataset (all columns, one row group at a time, as the stages
do) with and without the sha256 check, alternating which goes first each round, and prints the
median seconds of each and the overhead. "without" opens the file as selene did before the check (an
fsspec file handed to pyarrow); "with" starts each round from an empty cache of verified files, so
every shard is read into memory and hashed once. Also timed: reading only the `id` column, the
worst case for the check (it reads the whole file where pyarrow would read one column).
Files are in the page cache after the first round: this measures CPU, the check's real cost.

With --stage: the stage command (``python -m selene.cli STAGE -i DATASET -o TMP --force --workers W``,
SELENE_PREFECT=off) run from this checkout (or --after) and from CHECKOUT (a selene without the check, e.g.
``git archive <commit> | tar -x -C DIR``), alternating, wall and CPU seconds (children's rusage).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from selene.io import dataset, integrity


def read_all(directory: str, columns: list[str] | None) -> int:
    rows = 0
    for path in dataset.list_shards(directory):
        for table in dataset.iter_row_groups(path, columns):
            rows += table.num_rows
    return rows


def timed(fn: Callable[[], int]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def stage_runs(args: argparse.Namespace) -> None:
    here = args.after or str(Path(__file__).resolve().parents[1])
    out = tempfile.mkdtemp(prefix="selene-integrity-bench-")
    cmd = [sys.executable, "-m", "selene.cli", args.stage, "-i", args.dataset, "-o", out, "--force", "--workers", str(args.workers)]
    if args.config:
        cmd += ["-c", args.config]
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for r in range(args.rounds):
        order = [("before", args.before), ("after", here)]
        for label, root in order if r % 2 == 0 else order[::-1]:
            env = {**os.environ, "PYTHONPATH": root, "SELENE_PREFECT": "off"}
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            wall = time.perf_counter() - t
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[label].append((wall, cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime))
    for label, xs in times.items():
        print(f"{args.stage} {label:6s}: wall {statistics.median(x[0] for x in xs):.2f} s, CPU "
              f"{statistics.median(x[1] for x in xs):.2f} s (median of {len(xs)}; "
              f"{', '.join(f'{w:.1f}/{c:.1f}' for w, c in xs)})")
    b, a = (statistics.median(x[1] for x in times[k]) for k in ("before", "after"))
    bw, aw = (statistics.median(x[0] for x in times[k]) for k in ("before", "after"))
    print(f"overhead: CPU {100 * (a - b) / b:+.1f}%, wall {100 * (aw - bw) / bw:+.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stage", help="time this stage command instead of plain reads")
    ap.add_argument("--before", help="a checkout of selene without the check (with --stage)")
    ap.add_argument("-c", "--config", help="config file for the stage command")
    ap.add_argument("--workers", type=int, default=1, help="with --stage (1: all CPU in one process, measured)")
    ap.add_argument("--after", help="the checkout with the check (default: this one)")
    args = ap.parse_args()
    if args.stage:
        stage_runs(args)
        return
    m = dataset.read_manifest(args.dataset)
    assert m is not None
    mb = sum(s.bytes for s in m.shards) / 1e6
    read_all(args.dataset, None)  # warm the page cache
    for columns, label in ((None, "all columns"), (["id"], "id only")):
        off: list[float] = []
        on: list[float] = []

        def without(columns: list[str] | None = columns) -> int:
            with mock.patch.object(integrity, "expected", lambda path: None):
                return read_all(args.dataset, columns)

        def with_check(columns: list[str] | None = columns) -> int:
            integrity.forget()
            return read_all(args.dataset, columns)

        for r in range(args.rounds):
            order = [(without, off), (with_check, on)]
            for fn, out in order if r % 2 == 0 else order[::-1]:
                out.append(timed(fn))
        a, b = statistics.median(off), statistics.median(on)
        print(
            f"{label:12s} {len(m.shards)} shards, {mb:.0f} MB: without check {a:.3f} s, with {b:.3f} s "
            f"(median of {args.rounds}), overhead {100 * (b - a) / a:+.1f}%  [without: {', '.join(f'{x:.2f}' for x in off)}; "
            f"with: {', '.join(f'{x:.2f}' for x in on)}]"
        )


if __name__ == "__main__":
    main()
