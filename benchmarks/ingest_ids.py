"""What ingest's checks of a source's fields and ids cost: `selene ingest --workers 1` (filters and
language id off, cleaning and exact dedup on) on Parquet files with an `id` column, with and without
`id_key` (with it: the sampled first row group before any work, then every kept document's id hashed
and bucketed), against a baseline checkout of selene on the same files with `id_key`.

    python benchmarks/ingest_ids.py --baseline DIR [--docs 100000] [--files 4] [--repeats 3]

DIR is a checkout without the checks (e.g. ``git archive main | tar -x -C DIR``). Each run is a fresh
process; the commands take turns, and the least wall and CPU seconds of `--repeats` are kept (a
shared machine's noise only slows a run down). CPU seconds are the process's and its children's.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus import PROSE  # noqa: E402 - the checkout's own test data


def corpus(directory: Path, docs: int, files: int) -> int:
    """`docs` documents of ~1-3 KB (paragraphs of the bundled prose, seeded) with unique ids."""
    rng = random.Random(0)
    words = " ".join(PROSE).split()
    per = -(-docs // files)
    total = 0
    for f in range(files):
        n = min(per, docs - f * per)
        texts = []
        for _ in range(n):
            start = rng.randrange(len(words) - 600)
            texts.append(" ".join(words[start : start + rng.randrange(150, 450)]))
        ids = [f"doc-{f}-{i}" for i in range(n)]
        pq.write_table(
            pa.table({"id": ids, "text": texts}), directory / f"part-{f}.parquet", row_group_size=10_000
        )
        total += sum(len(t) for t in texts)
    return total


def run(checkout: Path, source: str, out: Path, cfg: Path) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(checkout), "PREFECT_API_URL": ""}
    cmd = [
        sys.executable,
        "-m",
        "selene.cli",
        "ingest",
        "-o",
        str(out),
        "--source",
        source,
        "-c",
        str(cfg),
        "--workers",
        "1",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=checkout)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "data").mkdir()
        chars = corpus(tmp / "data", args.docs, args.files)
        cfg = tmp / "ingest.yaml"
        cfg.write_text("ingest:\n  filters: []\n  langid: {enabled: false}\n")
        glob = f"{tmp}/data/*.parquet"
        cases = {
            "baseline, id_key": (args.baseline, f"fw[id_key=id]={glob}"),
            "checks, id_key": (ROOT, f"fw[id_key=id]={glob}"),
            "checks, no id_key": (ROOT, f"fw={glob}"),
        }
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeats):
            for name, (checkout, source) in cases.items():
                wall, cpu = run(checkout, source, tmp / "out", cfg)
                prev = best.get(name, (wall, cpu))
                best[name] = (min(prev[0], wall), min(prev[1], cpu))
        print(
            f"{args.docs:,} documents, {chars / 1e6:.0f} MB of text, {args.files} Parquet files; least of {args.repeats} runs each"
        )
        base_wall, base_cpu = best["baseline, id_key"]
        for name, (wall, cpu) in best.items():
            print(
                f"{name:<22}{wall:>8.2f} s{cpu:>8.2f} CPU s   {wall / base_wall:.3f}x wall  {cpu / base_cpu:.3f}x CPU"
            )


if __name__ == "__main__":
    main()
