"""Corpus-scale measurement of the data stages, run as users run them: one `selene <stage>` command each.

    python benchmarks/scale.py --gb 0.5 [--gb 5] [--stages ingest,dedup,decontaminate,blend,tokenize]
        [--workers 2] [--memory-gb N] [--work DIR] [--seed 0] [--vocab-size 32000]
        [--sample-docs 10000] [--keep]

Run by hand, not in CI (`--gb 20` is the issue's end-to-end run on a 2-core, 24 GiB machine).
Corpus: `benchmarks/scale_corpus.py`, GB of UTF-8 document text as Pile-style jsonl.zst, made from the
bundled sample with exact (5%) and near (10%) duplicates planted; generated once per (size, seed)
under WORK/corpus-<gb>gb-s<seed> and reused.

Each stage runs as `SELENE_PREFECT=off python -m selene.cli <stage> -c WORK/pipeline.yaml -i IN -o OUT
--workers W` (ingest reads the corpus glob of the config), outputs chained stage to stage under
WORK/run-<gb>gb/. The config is configs/demo.yaml's data settings for the sources the sample has.
Measured per stage, from outside the process tree (psutil every 0.2 s on the command and all its
descendants; CPU from wait4, i.e. every waited-for descendant):
- wall seconds; user+sys CPU seconds of the tree;
- peak RSS of the largest process, and peak of the sum of RSS over the tree (shared pages of forked
  workers count once per process, as the issue's "whole process tree" does);
- disk: the output directory at the end and the output plus the stage's TMPDIR at their polled peak
  (every ~1 s);
- input and output documents (manifests) and text bytes (the `text` column of the Parquet shards);
- MB/s of input text per CPU second (per core) and per wall second.
With several --gb, the issue's ratios per stage: peak RSS large/small (largest process and tree) and
throughput per core large/small (goals: RSS within 1.25x, throughput within 15%).
After dedup, the planted near duplicates still present are counted per Jaccard level (meta.planted).
Results: a markdown table on stdout and WORK/scale-<gb>gb.json.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # when imported, too (a script has its folder)
import scale_corpus

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("ingest", "dedup", "decontaminate", "blend", "tokenize")
PY = sys.executable


def pipeline_config(work: Path, corpus: Path, workers: int, vocab_size: int, sample_docs: int) -> dict:
    """configs/demo.yaml's data settings, for the sources of the Pile sample (no CommonCrawl)."""
    return {
        "name": "scale-bench",
        "run_dir": str(work / "run"),
        "seed": 1234,
        "executor": {"kind": "processes", "workers": workers},
        "ingest": {
            "sources": [{"name": "pile", "glob": str(corpus / "corpus-*.jsonl.zst")}],
            "langid": {"keep": ["en"], "min_score": 0.5, "exclude_sources": ["Github"]},
            "filters": {
                "gopher_quality": {"exclude_sources": ["Github"]},
                "gopher_repetition": {"exclude_sources": ["Github"]},
            },
        },
        "dedup": {"threshold": 0.8},
        "decontaminate": {
            "tasks": [str(ROOT / "data/tasks/mini_piqa.jsonl"), str(ROOT / "data/tasks/mini_lambada")]
        },
        "blend": {
            "epochs": {"PythonReference": 2.0, "Docstrings": 1.5},
            "weights": {"Github": 0.3, "PyPI": 0.2, "Licenses": 0.25, "DebianCopyright": 0.25},
        },
        "tokenize": {"vocab_size": vocab_size, "sample_docs": sample_docs},
    }


def has_flag(stage: str, flag: str) -> bool:
    out = subprocess.run(
        [PY, "-m", "selene.cli", stage, "--help"], capture_output=True, text=True, env=_env(None)
    ).stdout
    return flag in out


def _env(tmp: Path | None) -> dict[str, str]:
    env = {**os.environ, "SELENE_PREFECT": "off", "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return env


def disk_usage(*paths: Path) -> int:
    """Bytes allocated on disk under `paths` (st_blocks, so sparse and partial files count as they are)."""
    total = 0
    for p in paths:
        for dirpath, _, names in os.walk(p):
            for n in names:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, n)).st_blocks * 512
    return total


class TreeSampler(threading.Thread):
    """Polls RSS of a process and its descendants every `interval` s, and disk use every `disk_every` s."""

    def __init__(
        self, pid: int, disk_paths: list[Path], interval: float = 0.2, disk_every: float = 1.0
    ) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.disk_paths, self.interval, self.disk_every = disk_paths, interval, disk_every
        self.peak_largest = self.peak_tree = self.peak_disk = 0
        self.max_procs = 0
        self.cpu: dict[tuple[int, float], float] = {}  # (pid, start time) → last seen user+sys seconds
        self.done = threading.Event()

    def run(self) -> None:
        last_disk = 0.0
        while not self.done.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            rss = []
            for p in procs:
                try:
                    with p.oneshot():
                        rss.append(p.memory_info().rss)
                        t = p.cpu_times()
                        self.cpu[(p.pid, p.create_time())] = t.user + t.system
                except psutil.Error:
                    pass
            if rss:
                self.peak_largest = max(self.peak_largest, max(rss))
                self.peak_tree = max(self.peak_tree, sum(rss))
                self.max_procs = max(self.max_procs, len(rss))
            now = time.monotonic()
            if now - last_disk >= self.disk_every:
                self.peak_disk = max(self.peak_disk, disk_usage(*self.disk_paths))
                last_disk = now
            self.done.wait(self.interval)


def run_stage(cmd: list[str], out: Path, tmp: Path, log: Path) -> dict:
    tmp.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=_env(tmp), cwd=ROOT)
        sampler = TreeSampler(proc.pid, [out, tmp])
        sampler.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.done.set()
    sampler.join()
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 2),
        # workers of a pool are not always waited for by their parent (then wait4 misses them): the
        # polled CPU of every process seen (less its last <= 0.2 s) is the other estimate; the larger wins
        "cpu_s": round(max(ru.ru_utime + ru.ru_stime, sum(sampler.cpu.values())), 2),
        "cpu_wait4_s": round(ru.ru_utime + ru.ru_stime, 2),
        "cpu_polled_s": round(sum(sampler.cpu.values()), 2),
        # wait4's ru_maxrss: the largest RSS of the command or any waited-for descendant (KiB)
        "maxrss_largest_mib": round(max(ru.ru_maxrss / 1024, sampler.peak_largest / 2**20), 1),
        "peak_rss_tree_mib": round(sampler.peak_tree / 2**20, 1),
        "max_processes": sampler.max_procs,
        "disk_out_mb": round(disk_usage(out) / 1e6, 1),
        "disk_peak_mb": round(max(sampler.peak_disk, disk_usage(out, tmp)) / 1e6, 1),
    }


def dataset_text(path: Path) -> tuple[int, int]:
    """(documents, UTF-8 bytes of `text`) over the Parquet shards of a document dataset."""
    docs = nbytes = 0
    for f in sorted(path.glob("part-*.parquet")):
        pf = pq.ParquetFile(f)
        for i in range(pf.num_row_groups):
            col = pf.read_row_group(i, columns=["text"]).column("text")
            docs += len(col)
            nbytes += pc.sum(pc.binary_length(col)).as_py() or 0
    return docs, nbytes


def planted_left(path: Path) -> dict[str, int]:
    """Documents per `meta.planted` kind in a document dataset."""
    out: dict[str, int] = {}
    for f in sorted(path.glob("part-*.parquet")):
        col = pq.read_table(f, columns=["meta"]).column("meta")
        hits = pc.filter(col, pc.match_substring(col, '"planted"'))
        for m in hits.to_pylist():
            kind = json.loads(m).get("planted", "?")
            out[kind] = out.get(kind, 0) + 1
    return dict(sorted(out.items()))


def bench_size(args: argparse.Namespace, gb: float) -> dict:
    work = args.work
    corpus_dir = work / f"corpus-{gb:g}gb-s{args.seed}"
    t = time.perf_counter()
    summary, reused = scale_corpus.ensure(corpus_dir, gb, args.seed, args.exact, args.near)
    print(
        f"\n## {gb:g} GB: corpus {'reused' if reused else 'generated'} in {corpus_dir} "
        f"({summary['documents']:,} documents, {summary['text_bytes'] / 1e6:,.0f} MB text, "
        f"{summary['compressed_bytes'] / 1e6:,.0f} MB zstd; generation {summary['generate_mb_per_s']} MB/s"
        f"{'' if reused else f', {time.perf_counter() - t:.0f} s'})",
        flush=True,
    )
    run = work / f"run-{gb:g}gb"
    for stage in args.stages:  # the stages asked for run again; earlier stages' outputs are their input
        shutil.rmtree(run / stage, ignore_errors=True)
    run.mkdir(parents=True, exist_ok=True)
    cfg_path = run / "pipeline.yaml"
    cfg = pipeline_config(run, corpus_dir, args.workers, args.vocab_size, args.sample_docs)
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    rows = []
    prev: Path | None = None
    prev_docs, prev_bytes = summary["documents"], summary["text_bytes"]
    first = STAGES.index(args.stages[0])
    if first:  # start from the kept output of the stage before (a run with --keep)
        prev = run / STAGES[first - 1]
        if not (prev / "manifest.json").exists():
            raise SystemExit(f"{args.stages[0]} needs {prev}: run the stages before it with --keep")
        prev_docs, prev_bytes = dataset_text(prev)
    for stage in args.stages:
        out = run / stage
        cmd = [
            PY,
            "-m",
            "selene.cli",
            stage,
            "-c",
            str(cfg_path),
            "-o",
            str(out),
            "--workers",
            str(args.workers),
        ]
        if stage != "ingest":
            if prev is None:
                raise SystemExit(f"{stage} needs its input: run the stages before it (--stages ingest,...)")
            cmd += ["-i", str(prev)]
        if args.memory_gb is not None and args.memory_flag.get(stage):
            cmd += ["--memory-gb", str(args.memory_gb)]
        print(f"  {stage}: {' '.join(cmd[2:])}", flush=True)
        m = run_stage(cmd, out, run / "tmp" / stage, run / f"{stage}.log")
        m |= {"stage": stage, "in_docs": prev_docs, "in_text_mb": round(prev_bytes / 1e6, 1)}
        if m["rc"] != 0:
            tail = (run / f"{stage}.log").read_text()[-3000:]
            print(f"  {stage} FAILED (exit {m['rc']}); end of {run / f'{stage}.log'}:\n{tail}", flush=True)
            m["error"] = tail
            rows.append(m)
            break
        if stage == "tokenize":
            man = json.loads((out / "manifest.json").read_text())
            m["out_tokens"] = man.get("stats", {}).get("tokens") or man.get("tokens")
            m["out_docs"] = man.get("stats", {}).get("documents_out") or prev_docs
            m["out_text_mb"] = None
        else:
            m["out_docs"], nbytes = dataset_text(out)
            m["out_text_mb"] = round(nbytes / 1e6, 1)
            prev_docs, prev_bytes = m["out_docs"], nbytes
        if stage in ("ingest", "dedup"):
            m["planted_left"] = planted_left(out)
        mb = m["in_text_mb"]
        m["mb_per_cpu_s"] = round(mb / m["cpu_s"], 2) if m["cpu_s"] else None
        m["mb_per_wall_s"] = round(mb / m["wall_s"], 2)
        rows.append(m)
        prev = out
        print(
            f"    {m['wall_s']} s wall, {m['cpu_s']} s CPU, largest {m['maxrss_largest_mib']} MiB, "
            f"tree {m['peak_rss_tree_mib']} MiB, out {m['out_docs']:,} docs",
            flush=True,
        )
    result = {
        "gb": gb,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "corpus": {k: v for k, v in summary.items() if k != "files"},
        "config": cfg,
        "stages": rows,
    }
    path = work / f"scale-{gb:g}gb.json"
    if path.exists():  # keep the rows of stages not run this time
        done = {m["stage"] for m in rows}
        old = [m for m in json.loads(path.read_text())["stages"] if m["stage"] not in done]
        result["stages"] = sorted(old + rows, key=lambda m: STAGES.index(m["stage"]))
    path.write_text(json.dumps(result, indent=1))
    if not args.keep:
        shutil.rmtree(run, ignore_errors=True)
    return result


def table(res: dict) -> str:
    head = (
        "| stage | in docs | in text MB | out docs | out text MB | wall s | CPU s | MB/s per core | MB/s wall "
        "| peak RSS largest MiB | peak RSS tree MiB | procs | disk out MB | disk peak MB |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for m in res["stages"]:
        out_mb = m.get("out_text_mb")
        out_mb = f"{out_mb:,.1f}" if out_mb is not None else f"{m.get('out_tokens') or 0:,} tok"
        lines.append(
            f"| {m['stage']}{' (FAILED)' if m['rc'] else ''} | {m['in_docs']:,} | {m['in_text_mb']:,.1f} "
            f"| {m.get('out_docs', 0) or 0:,} | {out_mb} | {m['wall_s']:.1f} | {m['cpu_s']:.1f} "
            f"| {m.get('mb_per_cpu_s') or 0:.2f} | {m.get('mb_per_wall_s') or 0:.2f} | {m['maxrss_largest_mib']:,.0f} "
            f"| {m['peak_rss_tree_mib']:,.0f} | {m['max_processes']} | {m['disk_out_mb']:,.1f} | {m['disk_peak_mb']:,.1f} |"
        )
    left = {m["stage"]: m.get("planted_left") for m in res["stages"] if m.get("planted_left") is not None}
    kinds = res["corpus"]["kinds"]
    planted = [k for k in kinds if k != "original"]
    lines.append(
        "\nplanted duplicates left (generated → "
        + " → ".join(left)
        + "): "
        + "; ".join(
            f"{k}: {kinds[k]} → " + " → ".join(str(v.get(k, 0)) for v in left.values()) for k in planted
        )
    )
    return "\n".join(lines)


def ratios(small: dict, large: dict) -> str:
    lines = [
        f"| stage | RSS largest {large['gb']:g}/{small['gb']:g} GB | RSS tree {large['gb']:g}/{small['gb']:g} GB "
        f"| MB/s per core {large['gb']:g}/{small['gb']:g} GB |",
        "|---|---|---|---|",
    ]
    a = {m["stage"]: m for m in small["stages"]}
    for m in large["stages"]:
        s = a.get(m["stage"])
        if not s or m["rc"] or s["rc"]:
            continue
        tput = (
            (m["mb_per_cpu_s"] / s["mb_per_cpu_s"])
            if s.get("mb_per_cpu_s") and m.get("mb_per_cpu_s")
            else float("nan")
        )
        lines.append(
            f"| {m['stage']} | {m['maxrss_largest_mib'] / s['maxrss_largest_mib']:.2f} "
            f"| {m['peak_rss_tree_mib'] / s['peak_rss_tree_mib']:.2f} | {tput:.2f} |"
        )
    return "\n".join(lines) + "\n\ngoals: peak RSS tree ratio <= 1.25; throughput per core ratio >= 0.85"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, action="append", required=True, help="GB of input text (repeatable)")
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--memory-gb", type=float, default=None, help="passed to the stages whose --help has --memory-gb"
    )
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "scale")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact", type=float, default=0.05)
    ap.add_argument("--near", type=float, default=0.10)
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--sample-docs", type=int, default=10000, help="documents the tokenizer is trained on")
    ap.add_argument("--keep", action="store_true", help="keep the stage outputs (the corpus is always kept)")
    args = ap.parse_args()
    args.stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(args.stages) - set(STAGES))
    if unknown:
        ap.error(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    args.memory_flag = (
        {s: has_flag(s, "--memory-gb") for s in args.stages} if args.memory_gb is not None else {}
    )
    if args.memory_gb is not None:
        print(
            f"--memory-gb passed to: {', '.join(s for s, ok in args.memory_flag.items() if ok) or 'no stage (none has it)'}"
        )
    print(
        f"machine: {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.1f} GiB; workers {args.workers}"
    )
    results = []
    for gb in sorted(args.gb):
        res = bench_size(args, gb)
        results.append(res)
        print(
            f"\n### {gb:g} GB ({res['corpus']['text_chars'] / 1e6:,.0f}M input text chars)\n\n{table(res)}",
            flush=True,
        )
    for small, large in itertools.pairwise(results):
        print(f"\n### ratios {large['gb']:g} GB / {small['gb']:g} GB\n\n{ratios(small, large)}")
    files = [str(args.work / f"scale-{r['gb']:g}gb.json") for r in results]
    print(f"\nresults: {', '.join(files)}")
    print(
        f"benchmark process peak RSS (not part of the measurement): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
