"""Parquet read throughput of `selene ingest` against pyarrow's own reader and datatrove's
ParquetReader, and the whole command on Parquet against jsonl.zst of the same documents.

    python benchmarks/readers.py [--mb 200] [--files 5] [--row-group 10000] [--repeats 5]
                                 [--datatrove-python PATH] [--keep-dir DIR] [--results PREFIX]

Corpus: FineWeb's columns (text, id, dump, url, date, file_path, language, language_score,
token_count) in `--files` Parquet files of `--row-group` rows per row group, snappy-compressed (the
Hub's and datatrove's default); the text (`--mb` MB of UTF-8 in all) is made of the bundled sample's
Pile paragraphs, drawn with a fixed seed, about 2 KB a document. The same documents, every field, as
jsonl.zst (zstd level 3) for the command comparison.

Read throughput, one core, in this process (the corpus is made in a child), files in the page
cache; per file the fastest of `--repeats` passes, summed over the files (the readers take turns on
each file):
- pyarrow, text: ``pq.ParquetFile(path).iter_batches(columns=["text"])`` and each batch's strings
  as Python objects (``to_pylist``), the least any reader must do; the reference of the goal;
- pyarrow, every column: the same over every column (what keeping the other fields as meta needs);
- selene, text: `read_records` of each file with ``meta_keys: []`` (goal: >= 0.8x pyarrow, text);
- selene, default: every other column to `meta` (``meta_keys`` unset);
- datatrove's ParquetReader, in its own venv (`benchmarks/_datatrove_parquet.py`, skipped when that
  Python is missing): ``read_metadata=False`` (text and id) and its default ``True``.
Then the whole command, ``selene ingest --workers 1`` with the filters and language id off (cleaning
and exact dedup on, as always), on the Parquet files and on the jsonl.zst files, each in a fresh
process; wall and CPU seconds. Results: PREFIX.txt (what is printed) and PREFIX.json.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from selene.ingest.readers import read_records
from selene.ingest.records import Fields, ReadStats

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "pile"
DATATROVE_PYTHON = "/work/venvs/datatrove/bin/python"
DATATROVE_SCRIPT = ROOT / "benchmarks" / "_datatrove_parquet.py"
GOAL = 0.8
lines: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    lines.append(line)


# ------------------------------------------------------------------------------------- corpus


def paragraphs() -> list[str]:
    out = []
    for f in sorted(SAMPLE.glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            for line in io.TextIOWrapper(r, encoding="utf-8"):
                out += [p for p in json.loads(line)["text"].split("\n\n") if len(p) > 40]
    return out


def documents(rng: random.Random, material: list[str], n_bytes: int) -> list[str]:
    """Documents of about 2 KB (log-normal lengths), each its own mix of paragraphs."""
    docs, total = [], 0
    while total < n_bytes:
        want = min(int(rng.lognormvariate(7.3, 0.8)), 50_000)
        parts, size = [], 0
        while size < want:
            parts.append(rng.choice(material))
            size += len(parts[-1]) + 2
        docs.append("\n\n".join(parts))
        total += len(docs[-1].encode())
    return docs


def build(tmp: Path, mb: float, files: int, row_group: int) -> tuple[Path, Path, int, int]:
    """`files` Parquet files and as many jsonl.zst files of the same documents; (dirs, documents,
    text bytes). A corpus of the same parameters already in `tmp` (--keep-dir) is reused."""
    marker = tmp / "corpus.json"
    params = {"mb": mb, "files": files, "row_group": row_group}
    pq_dir, js_dir = tmp / "parquet", tmp / "jsonl"
    if marker.exists() and (done := json.loads(marker.read_text()))["params"] == params:
        return pq_dir, js_dir, done["documents"], done["bytes"]
    rng = random.Random(0)
    texts = documents(rng, paragraphs(), int(mb * 1e6))
    pq_dir.mkdir(parents=True, exist_ok=True)
    js_dir.mkdir(parents=True, exist_ok=True)
    per = -(-len(texts) // files)
    for k in range(files):
        chunk = texts[k * per : (k + 1) * per]
        first = k * per
        rows: dict[str, list[Any]] = {
            "text": chunk,
            "id": [f"<urn:uuid:{first + i:08d}-bench>" for i in range(len(chunk))],
            "dump": ["CC-MAIN-2024-10"] * len(chunk),
            "url": [
                f"https://site{(first + i) % 997}.example.org/page/{first + i}" for i in range(len(chunk))
            ],
            "date": [f"2024-03-{1 + (first + i) % 28:02d}T12:00:00Z" for i in range(len(chunk))],
            "file_path": [
                f"s3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/{k}/warc/{i // 1000:05d}.warc.gz"
                for i in range(len(chunk))
            ],
            "language": ["en"] * len(chunk),
            "language_score": [round(0.65 + rng.random() * 0.35, 4) for _ in chunk],
            "token_count": [len(t) // 4 for t in chunk],
        }
        pq.write_table(
            pa.table(rows), pq_dir / f"{k:03d}.parquet", row_group_size=row_group, compression="snappy"
        )
        with zstandard.ZstdCompressor(level=3).stream_writer((js_dir / f"{k:03d}.jsonl.zst").open("wb")) as w:
            for i in range(len(chunk)):
                w.write(
                    (json.dumps({name: rows[name][i] for name in rows}, ensure_ascii=False) + "\n").encode()
                )
    n_docs, n_bytes = len(texts), sum(len(t.encode()) for t in texts)
    marker.write_text(json.dumps({"params": params, "documents": n_docs, "bytes": n_bytes}))
    return pq_dir, js_dir, n_docs, n_bytes


# ---------------------------------------------------------------------------------- measuring


def best_of(
    repeats: int, paths: list[Path], readers: dict[str, Callable[[Path], int]]
) -> dict[str, tuple[float, float, int]]:
    """(wall s, CPU s, documents) of each reader over all files: per file its fastest of `repeats`
    passes, summed. The readers take turns on each file, so a neighbour's load on a shared machine
    falls on all of them alike, and a burst of it spoils one file's pass, not a whole run's."""
    best = {(name, path): (float("inf"), 0.0, 0) for name in readers for path in paths}
    for _ in range(repeats):
        for path in paths:
            for name, fn in readers.items():
                t, c = time.perf_counter(), time.process_time()
                n = fn(path)
                best[name, path] = min(
                    best[name, path], (time.perf_counter() - t, time.process_time() - c, n)
                )
    return {
        name: (
            sum(best[name, p][0] for p in paths),
            sum(best[name, p][1] for p in paths),
            sum(best[name, p][2] for p in paths),
        )
        for name in readers
    }


def pyarrow_read(path: Path, columns: list[str] | None) -> int:
    n = 0
    for batch in pq.ParquetFile(path).iter_batches(columns=columns):
        for col in batch.columns:
            col.to_pylist()
        n += batch.num_rows
    return n


def selene_read(path: Path, fields: Fields) -> int:
    return sum(rec.reason is None for rec in read_records(str(path), 1 << 28, ReadStats(), fields=fields))


def datatrove_read(python: str, directory: Path, text_only: bool, repeats: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    cmd = [
        python,
        str(DATATROVE_SCRIPT),
        str(directory),
        "--repeats",
        str(repeats),
        *(["--text-only"] if text_only else []),
    ]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def command(source: str, out: Path, cfg: Path) -> tuple[float, float]:
    """`selene ingest` in a fresh process: (wall s, CPU s of that process and its children)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SELENE_PREFECT": "off"}
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
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode() if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err[-3000:]}")
    return wall, ru.ru_utime + ru.ru_stime


# --------------------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200, help="MB of text in all (default 200)")
    ap.add_argument("--files", type=int, default=5)
    ap.add_argument(
        "--row-group", type=int, default=10_000, help="rows per Parquet row group (default 10000)"
    )
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--datatrove-python", default=DATATROVE_PYTHON)
    ap.add_argument("--keep-dir", default=None)
    ap.add_argument(
        "--results", default=str(ROOT / "benchmarks" / "results" / "readers"), help="PREFIX of .txt and .json"
    )
    args = ap.parse_args()
    tmp = Path(args.keep_dir or tempfile.mkdtemp(prefix="selene-readers-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        results = run(tmp, args)
    finally:
        if not args.keep_dir:
            shutil.rmtree(tmp, ignore_errors=True)
    Path(f"{args.results}.txt").write_text("\n".join(lines) + "\n")
    Path(f"{args.results}.json").write_text(json.dumps(results, indent=2) + "\n")


def run(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    t = time.perf_counter()
    # in a child process: the 200 MB of strings made and freed there would leave this process's heap
    # unlike a reader's, and its timings with it
    child = multiprocessing.get_context("fork").Process(
        target=build, args=(tmp, args.mb, args.files, args.row_group)
    )
    child.start()
    child.join()
    if child.exitcode:
        sys.exit(f"building the corpus failed ({child.exitcode})")
    made = f"made in {time.perf_counter() - t:.1f} s"
    pq_dir, js_dir, n_docs, n_bytes = build(tmp, args.mb, args.files, args.row_group)
    paths = sorted(pq_dir.glob("*.parquet"))
    mb = n_bytes / 1e6
    groups = sum(pq.ParquetFile(p).metadata.num_row_groups for p in paths)
    say(
        f"corpus: {n_docs:,} documents, {mb:.1f} MB of text, {len(paths)} Parquet files ({groups} row groups of "
        f"<= {args.row_group:,} rows, snappy, {sum(p.stat().st_size for p in paths) / 1e6:.1f} MB), "
        f"jsonl.zst {sum(p.stat().st_size for p in js_dir.glob('*')) / 1e6:.1f} MB; {made}"
    )
    for path in paths:  # into the page cache
        pyarrow_read(path, None)
    rows = best_of(
        args.repeats,
        paths,
        {
            "pyarrow iter_batches, text": lambda p: pyarrow_read(p, ["text"]),
            "pyarrow iter_batches, every column": lambda p: pyarrow_read(p, None),
            "selene reader, text (meta_keys: [])": lambda p: selene_read(p, Fields(meta=())),
            "selene reader, default (all to meta)": lambda p: selene_read(p, Fields()),
        },
    )
    if Path(args.datatrove_python).exists():
        for name, text_only in (
            ("datatrove ParquetReader, text+id", True),
            ("datatrove ParquetReader, default", False),
        ):
            d = datatrove_read(args.datatrove_python, pq_dir, text_only, args.repeats)
            rows[name] = (d["seconds"], d["cpu_s"], d["documents"])
    else:
        say(f"(datatrove skipped: no {args.datatrove_python})")
    for name, (_, _, n) in rows.items():
        if n != n_docs:
            sys.exit(f"{name}: {n} documents, expected {n_docs}")
    ref = rows["pyarrow iter_batches, text"][0]
    say(
        f"\n{'read, one core, best of ' + str(args.repeats) + ' per file':<40}{'seconds':>9}{'CPU s':>8}{'docs/s':>10}{'MB/s':>8}{'vs pyarrow text':>17}"
    )
    for name, (wall, cpu, n) in rows.items():
        say(f"{name:<40}{wall:>9.2f}{cpu:>8.2f}{n / wall:>10,.0f}{mb / wall:>8.0f}{ref / wall:>16.2f}x")
    sel_text = ref / rows["selene reader, text (meta_keys: [])"][0]
    sel_all = rows["pyarrow iter_batches, every column"][0] / rows["selene reader, default (all to meta)"][0]
    sel_text_cpu = rows["pyarrow iter_batches, text"][1] / rows["selene reader, text (meta_keys: [])"][1]
    say(f"selene text / pyarrow text: {sel_text:.2f}x (goal >= {GOAL}x: {'met' if sel_text >= GOAL else 'NOT met'}; "
        f"by CPU seconds {sel_text_cpu:.2f}x); selene default / pyarrow every column: {sel_all:.2f}x")  # fmt: skip
    versus: dict[str, float] = {}
    for sel, dt in (
        ("selene reader, text (meta_keys: [])", "datatrove ParquetReader, text+id"),
        ("selene reader, default (all to meta)", "datatrove ParquetReader, default"),
    ):
        if dt in rows:
            versus[f"{sel} / {dt}"] = rows[dt][0] / rows[sel][0]
            say(f"{sel} vs {dt}: {versus[f'{sel} / {dt}']:.2f}x the speed")

    cfg = tmp / "ingest.yaml"
    cfg.write_text("ingest:\n  filters: []\n  langid: {enabled: false}\n")
    commands = {
        "Parquet": command(f"fw={pq_dir}/*.parquet", tmp / "out-parquet", cfg),
        "jsonl.zst": command(f"fw={js_dir}/*.jsonl.zst", tmp / "out-jsonl", cfg),
    }
    say(
        f"\n{'selene ingest --workers 1, filters + langid off':<48}{'seconds':>9}{'CPU s':>8}{'docs/s':>10}{'MB/s':>8}"
    )
    for name, (wall, cpu) in commands.items():
        say(f"{name:<48}{wall:>9.2f}{cpu:>8.2f}{n_docs / wall:>10,.0f}{mb / wall:>8.1f}")
    same = _same_output(tmp / "out-parquet", tmp / "out-jsonl")
    say(
        f"Parquet / jsonl.zst: {commands['jsonl.zst'][0] / commands['Parquet'][0]:.2f}x the speed; same documents, text and meta: {same}"
    )
    return {
        "corpus": {
            "documents": n_docs,
            "text_mb": mb,
            "files": len(paths),
            "row_groups": groups,
            "row_group_rows": args.row_group,
        },
        "read": {
            name: {
                "seconds": w,
                "cpu_s": c,
                "docs_per_s": n / w,
                "mb_per_s": mb / w,
                "vs_pyarrow_text": ref / w,
            }
            for name, (w, c, n) in rows.items()
        },
        "selene_text_vs_pyarrow_text": sel_text,
        "selene_text_vs_pyarrow_text_cpu": sel_text_cpu,
        "goal": GOAL,
        "selene_default_vs_pyarrow_every_column": sel_all,
        "versus_datatrove": versus,
        "command": {
            name: {"seconds": w, "cpu_s": c, "docs_per_s": n_docs / w} for name, (w, c) in commands.items()
        },
        "command_same_output": same,
    }


def _same_output(a: Path, b: Path) -> bool:
    """The two commands' documents: the same ids aside (each names its own file), text and meta."""

    def docs(d: Path) -> list[tuple[str, str]]:
        t = pa.concat_tables(
            pq.read_table(p, columns=["text", "meta"]) for p in sorted(d.glob("part-*.parquet"))
        )
        return list(zip(t.column("text").to_pylist(), t.column("meta").to_pylist(), strict=True))

    return docs(a) == docs(b)


if __name__ == "__main__":
    main()
