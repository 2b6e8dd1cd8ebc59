"""`selene substrings` throughput per core, beside pydivsufsort's raw `divsufsort` rate on the same
bytes, and the peak memory of the stage's processes against its budget.

    python benchmarks/substrings.py --gb 0.5 [--workers 2] [--memory-gb 2] [--keep first|none] [--dir /tmp/substr-bench]

Corpus: documents of words drawn (Zipf-like) from the vocabulary of real prose (Python's reference
documentation, `pydoc_data`), so most text is unique, plus planted repeats as a web crawl has them:
every document gets a site header and footer (one of 200 boilerplate lines), and one in five a
paragraph copied from an earlier document. Written as Parquet shards of ~64 MB.

- stage: `selene substrings --min-length 50` (bytes) as a command: wall time, CPU time of the command
  and its workers (polled every 0.1 s per process), and the peak of the summed RSS of its process tree
  (polled every 0.1 s);
- divsufsort: `pydivsufsort.divsufsort` on the first part-sized slice of the same encoded bytes, one
  core, CPU time.
Reports MB per CPU second (per core: robust to other work on the machine) of each, their ratio, the peak RSS against the budget, and the disk the work
files took at their peak (polled too).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def vocabulary() -> list[str]:
    from pydoc_data.topics import topics

    words = re.findall(r"[A-Za-z][a-z]+", " ".join(topics.values()))
    uniq, counts = np.unique(words, return_counts=True)
    order = np.argsort(-counts)
    return [str(w) for w in uniq[order][:20000]]


def generate(directory: Path, gb: float, seed: int = 0) -> int:
    import pyarrow as pa

    from selene.io import dataset
    from tests.corpus import document_manifest

    rng = np.random.default_rng(seed)
    vocab = np.array(vocabulary())
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    boiler = [" ".join(rng.choice(vocab, 25, p=p)) + "." for _ in range(200)]
    target, written, shards, docs = int(gb * 1e9), 0, [], 0
    directory.mkdir(parents=True, exist_ok=True)
    paragraphs: list[str] = []
    from collections import Counter

    sources: Counter[str] = Counter()
    while written < target:
        texts = []
        size = 0
        while size < 64_000_000 and written + size < target:
            n_par = int(rng.integers(2, 8))
            body = []
            for _ in range(n_par):
                words = rng.choice(vocab, int(rng.integers(40, 160)), p=p)
                body.append(" ".join(words) + ".")
            if paragraphs and rng.random() < 0.2:
                body.insert(
                    int(rng.integers(0, len(body))), paragraphs[int(rng.integers(0, len(paragraphs)))]
                )
            if len(paragraphs) < 5000:
                paragraphs.append(body[0])
            text = (
                boiler[int(rng.integers(0, 200))]
                + "\n"
                + "\n\n".join(body)
                + "\n"
                + boiler[int(rng.integers(0, 200))]
            )
            texts.append(text)
            size += len(text)
        ids = [f"d{docs + i}" for i in range(len(texts))]
        docs += len(texts)
        table = pa.table({"id": ids, "text": texts, "source": ["web"] * len(texts), "meta": ["{}"] * len(texts)},
                         schema=dataset.DOC_SCHEMA)  # fmt: skip
        shards.append(dataset.write_table(str(directory / dataset.shard_name(len(shards))), table))
        sources["web"] += len(texts)
        written += size
    removed = dataset.write_table(str(directory / dataset.REMOVED), dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(str(directory), document_manifest(shards, removed, sources))
    return written


def tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """The CPU seconds of `pid` and its descendants, the latest reading per process kept in `seen`:
    pool workers are not waited for by the command, so getrusage would miss them."""
    import psutil

    with contextlib.suppress(psutil.NoSuchProcess):
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                t = p.cpu_times()
                seen[p.pid] = t.user + t.system


def tree_rss(pid: int) -> tuple[int, int]:
    """(RSS, RSS less its file-backed and shared pages) summed over `pid` and its descendants. The
    second is what the budget governs: memory-mapped corpus files read for byte comparisons count in
    RSS as page cache the kernel can drop, not as memory the tasks hold."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0
    rss = anon = 0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            m = p.memory_info()
            rss += m.rss
            anon += m.rss - m.shared
    return rss, anon


STEPS = ("encode", "part", "match", "cut", "top", "edit")


def step_now(out: Path) -> str:
    """The latest step with a finished task (its marker folder exists)."""
    found = "start"
    for work in out.glob("_work/*"):
        for step in STEPS:
            if (work / step).exists() or any(work.glob(f"layout-*/{step}")):
                found = step
    return found


def du(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(os.path.join(dirpath, f)).st_size
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=0.5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-gb", type=float, default=2.0)
    ap.add_argument("--min-length", type=int, default=50)
    ap.add_argument("--keep", choices=("first", "none"), default="first", help="the stage's --keep")
    ap.add_argument("--dir", default="/tmp/substr-bench")
    ap.add_argument(
        "--out", default=None, help="results JSON (default benchmarks/results/substrings-<gb>gb.json)"
    )
    args = ap.parse_args()
    work = Path(args.dir)
    inp, out = work / f"in-{args.gb}", work / f"out-{args.gb}-{args.keep}"
    t0 = time.time()
    if not (inp / "manifest.json").exists():
        generate(inp, args.gb)
    gen_s = time.time() - t0
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "selene.cli",
        "substrings",
        "-i",
        str(inp),
        "-o",
        str(out),
        "--min-length",
        str(args.min_length),
        "--workers",
        str(args.workers),
        "--memory-gb",
        str(args.memory_gb),
        "--keep",
        args.keep,
    ]
    env = {**os.environ, "SELENE_PREFECT": "off", "PYTHONPATH": str(ROOT)}
    peak = {"rss": 0, "anon": 0, "disk": 0}
    cpu_seen: dict[int, float] = {}
    by_step: dict[str, list[int]] = {}
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    done = threading.Event()

    def poll() -> None:
        n = 0
        while not done.is_set():
            rss, anon = tree_rss(proc.pid)
            tree_cpu(proc.pid, cpu_seen)
            peak["rss"], peak["anon"] = max(peak["rss"], rss), max(peak["anon"], anon)
            if n % 5 == 0:
                step = by_step.setdefault(step_now(out), [0, 0])
                step[0], step[1] = max(step[0], rss), max(step[1], anon)
            if n % 20 == 0:
                peak["disk"] = max(peak["disk"], du(out))
            n += 1
            time.sleep(0.1)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    log, _ = proc.communicate()
    wall = time.time() - t0
    cpu = sum(cpu_seen.values())  # polled: the last 0.1 s of each process is missed
    done.set()
    th.join()
    if proc.returncode:
        sys.exit(f"stage failed ({proc.returncode}):\n{log}")
    m = json.loads((out / "manifest.json").read_text())
    corpus = m["work"]["corpus_bytes"]

    # divsufsort alone, one core, on a part-sized slice of the same bytes
    from pydivsufsort import divsufsort

    from selene.executor.mappers import Budget
    from selene.substrings.layout import part_capacity

    part = min(part_capacity(Budget.gb(args.memory_gb, args.workers).task_memory, args.min_length), corpus)
    from selene.io import dataset

    buf = bytearray()
    for d in dataset.iter_documents(str(inp)):
        buf += d["text"].encode() + b"\xff"
        if len(buf) >= part:
            break
    text = np.frombuffer(buf[:part], dtype=np.uint8).copy()
    t1 = time.process_time()
    divsufsort(text)
    sa_s = time.process_time() - t1
    sa_rate = len(text) / sa_s / 1e6
    stage_rate = corpus / cpu / 1e6  # per core: per CPU second, whatever else the machine runs
    budget = int(args.memory_gb * (1 << 30))
    said = re.search(r"in (\d+) part\(s\), ([\d,]+) fingerprint bucket.*?([\d,]+) of them (?:found|held)", log, re.S)
    numbers = [int(x.replace(",", "")) for x in said.groups()] if said else []
    split = dict(
        zip(("parts", "buckets", "cross_part"), numbers, strict=False)
    )  # how the budget cut the work
    res = {
        "command": " ".join(
            [
                "python",
                "benchmarks/substrings.py",
                "--gb",
                str(args.gb),
                "--workers",
                str(args.workers),
                "--memory-gb",
                str(args.memory_gb),
                *(["--keep", args.keep] if args.keep != "first" else []),
            ]
        ),
        "keep": args.keep,
        "cores": os.cpu_count(),
        "corpus_bytes": corpus,
        "generate_s": round(gen_s, 1),
        "stage_wall_s": round(wall, 1),
        "stage_cpu_s": round(cpu, 1),
        "stage_mb_s_per_core": round(stage_rate, 2),
        "divsufsort_slice_bytes": len(text),
        "divsufsort_mb_s": round(sa_rate, 2),
        "stage_over_divsufsort": round(stage_rate / sa_rate, 3),
        "peak_rss_bytes": peak["rss"],
        "budget_bytes": budget,
        "peak_rss_over_budget": round(peak["rss"] / budget, 3),
        "peak_anon_bytes": peak["anon"],
        "peak_anon_over_budget": round(peak["anon"] / budget, 3),
        "peak_rss_anon_after_step": by_step,
        "work_disk_peak_bytes": peak["disk"],
        "disk_per_corpus_byte": round(peak["disk"] / corpus, 2),
        "work": m["work"],
        "split": split,
        "chars_removed_share": round(m["stats"]["chars_removed"] / m["stats"]["chars_in"], 4),
        "documents_dropped": m["stats"]["documents_removed"],
    }
    print(json.dumps(res, indent=1))
    dest = Path(args.out or ROOT / "benchmarks" / "results" / f"substrings-{args.gb}gb.json")
    dest.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
