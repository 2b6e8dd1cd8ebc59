"""What verifying shards against their manifest costs a reader (selene/io/integrity.py).

    python benchmarks/integrity.py DATASET [--rounds 5]

Reads every shard of a finished document dataset (all columns, one row group at a time, as the stages
do) with and without the sha256 check, alternating which goes first each round, and prints the
median seconds of each and the overhead. "without" opens the file as selene did before the check (an
fsspec file handed to pyarrow); "with" starts each round from an empty cache of verified files, so
every shard is read into memory and hashed once. Also timed: reading only the `id` column, the
worst case for the check (it reads the whole file where pyarrow would read one column).
Files are in the page cache after the first round: this measures CPU, the check's real cost.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
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
