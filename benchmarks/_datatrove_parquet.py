"""datatrove's ParquetReader over a directory of Parquet files, as its users run it, on one core: per
file the fastest of `--repeats` reads, summed over the files (as `benchmarks/readers.py` times selene).

    /work/venvs/datatrove/bin/python benchmarks/_datatrove_parquet.py DIR [--text-only] [--repeats 3]

Run by `benchmarks/readers.py` with datatrove's own Python (it is not importable from selene's
venv). Default: `read_metadata=True`, every column read and the others than text and id put in each
document's metadata (what selene's default `meta_keys` does); `--text-only`: `read_metadata=False`,
the text and id columns alone. Prints one JSON line: {"seconds", "cpu_s", "documents", "text_chars"}.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from datatrove.pipeline.readers import ParquetReader


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("--text-only", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    names = sorted(p.name for p in Path(args.input).glob("*.parquet"))
    best = {name: (float("inf"), 0.0, 0, 0) for name in names}
    for _ in range(args.repeats):
        for name in names:
            reader = ParquetReader(
                args.input, glob_pattern=name, text_key="text", id_key="id", read_metadata=not args.text_only
            )
            t, c = time.perf_counter(), time.process_time()
            docs = chars = 0
            for doc in reader.run():
                docs += 1
                chars += len(doc.text)
            best[name] = min(best[name], (time.perf_counter() - t, time.process_time() - c, docs, chars))
    total = [sum(best[name][k] for name in names) for k in range(4)]
    print(json.dumps(dict(zip(("seconds", "cpu_s", "documents", "text_chars"), total, strict=True))))


if __name__ == "__main__":
    main()
