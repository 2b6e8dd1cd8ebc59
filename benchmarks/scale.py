"""Corpus-scale measurement of the data stages, run as users run them: one `selene <stage>` command each.

    python benchmarks/scale.py --gb 0.5 [--gb 5] [--stages ingest,dedup,decontaminate,blend,tokenize]
        [--workers 2] [--memory-gb N] [--work DIR] [--seed 0] [--vocab-size 32000]
        [--sample-docs 10000] [--keep] [--dask [--kill] [--dask-workers 3] [--worker-memory 2GiB]]

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

    python benchmarks/scale.py --gb 0.5 --dask [--kill] [--dask-workers 3] [--worker-memory 2GiB] ...

`--dask`: the same stages on a local Dask cluster that the script starts (`dask scheduler --host 127.0.0.1
--port P --no-dashboard`, --dask-workers × `dask worker ADDR --nthreads 1 --memory-limit M --no-dashboard`,
logs under the run folder; stopped at the end: terminate, then kill), each stage with `--dask-address ADDR`
instead of `--workers W` (executor.workers in the config is the cluster's workers), into
WORK/run-<gb>gb-dask/. The command's process tree is now the driver (measured as above); the workers are
not in it and are polled apart, every 0.2 s, each `dask worker` process and its children: the largest
worker process's peak RSS, the peak of the sum, and their CPU during the stage (added to the driver's for
MB/s per core; the workers outlive a stage, so their peaks include what they kept from earlier stages).
Every output file of each stage is compared, sha256, with the process-pool run's (WORK/run-<gb>gb/, run
first with --keep when it is not there or was run with other settings), but `COMPARE_EXCLUDED` (each
manifest's absolute input path). --stages must then be consecutive stages (each stage reads the one
before it, as in the process-pool run); the default is all five, since blend's output depends on
decontaminate's.
`--kill`: the workers get SELENE_KILL_ONCE for `ingest:file` and `dedup:band` (markers in
WORK/run-<gb>gb-dask-kill/killed/): the first worker to reach each SIGKILLs itself mid-task, its nanny
starts a new one and the scheduler reruns the task elsewhere; the stages run with SELENE_INLINE_SECONDS=0
so that every task is on a worker. Reported: the marker (a worker died), the stage finished, its output
against the process-pool run, and its wall time against the run without kills (WORK/scale-<gb>gb-dask.json).
Results: WORK/scale-<gb>gb-dask.json, WORK/scale-<gb>gb-dask-kill.json.

The heavily duplicated case (real documents each in N perturbed copies, N = 4 and 16, with and without
`--memory-gb`: dedup's process-tree, largest-process and driver peaks, and every output file's sha256
against another checkout's) is its own scenario, measured the same way (`TreeSampler`):
`python benchmarks/dedup_dups.py --base-mb 50 --copies 4,16 --memory-gb default,1`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import ClassVar

import psutil
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # when imported, too (a script has its folder)
import scale_corpus

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("ingest", "dedup", "decontaminate", "blend", "tokenize")
PY = sys.executable
DASK = str(Path(sys.executable).with_name("dask"))


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
    """Polls RSS of a process and its descendants every `interval` s, and disk use every `disk_every` s.

    With several `pid`s (the `dask worker` processes of a cluster), each one's tree; processes that
    existed when the sampler started count only the CPU they spend after it (`cpu_start`)."""

    def __init__(
        self, pid: int | list[int], disk_paths: list[Path], interval: float = 0.2, disk_every: float = 1.0
    ) -> None:
        super().__init__(daemon=True)
        self.single = isinstance(pid, int)  # one command: its end ends the sampling
        self.roots = [psutil.Process(p) for p in ([pid] if isinstance(pid, int) else pid)]
        self.disk_paths, self.interval, self.disk_every = disk_paths, interval, disk_every
        self.peak_largest = self.peak_tree = self.peak_disk = 0
        self.max_procs = 0
        self.cpu: dict[tuple[int, float], float] = {}  # (pid, start time) → last seen user+sys seconds
        self.cpu_start: dict[
            tuple[int, float], float
        ] = {}  # → user+sys seconds when first seen, if before start
        self.done = threading.Event()
        if not self.single:
            for p in self._procs() or []:
                with contextlib.suppress(psutil.Error):
                    t = p.cpu_times()
                    self.cpu_start[(p.pid, p.create_time())] = t.user + t.system

    def _procs(self) -> list[psutil.Process] | None:
        if self.single:
            try:
                return [self.roots[0], *self.roots[0].children(recursive=True)]
            except psutil.Error:
                return None
        procs = []
        for root in self.roots:
            with contextlib.suppress(psutil.Error):
                procs += [root, *root.children(recursive=True)]
        return procs

    def cpu_seconds(self) -> float:
        return sum(v - self.cpu_start.get(k, 0.0) for k, v in self.cpu.items())

    def run(self) -> None:
        last_disk = 0.0
        while not self.done.is_set():
            procs = self._procs()
            if procs is None:
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
            if self.disk_paths and now - last_disk >= self.disk_every:
                self.peak_disk = max(self.peak_disk, disk_usage(*self.disk_paths))
                last_disk = now
            self.done.wait(self.interval)


def run_stage(
    cmd: list[str],
    out: Path,
    tmp: Path,
    log: Path,
    env: dict[str, str] | None = None,
    workers: list[int] | None = None,
    worker_disk: list[Path] | None = None,
) -> dict:
    """Runs and measures one stage command; with `workers` (pids of `dask worker` processes), those
    processes' trees too, as a second sampler (they are not the command's descendants)."""
    tmp.mkdir(parents=True, exist_ok=True)
    wsampler = TreeSampler(workers, [], interval=0.2) if workers else None
    if wsampler:
        wsampler.start()
    t0 = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, env=_env(tmp) | (env or {}), cwd=ROOT
        )
        sampler = TreeSampler(proc.pid, [out, tmp, *(worker_disk or [])])
        sampler.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.done.set()
    sampler.join()
    m = {
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
        "disk_peak_mb": round(max(sampler.peak_disk, disk_usage(out, tmp, *(worker_disk or []))) / 1e6, 1),
    }
    if wsampler:
        wsampler.done.set()
        wsampler.join()
        # the command's tree is the driver; the workers' CPU (less what they had spent before the
        # stage) is added to it, so that MB/s per core counts the whole cluster
        m["driver_cpu_s"] = m["cpu_s"]
        m["workers_cpu_s"] = round(wsampler.cpu_seconds(), 2)
        m["cpu_s"] = round(m["driver_cpu_s"] + m["workers_cpu_s"], 2)
        # largest single worker process (nannies included, they are small) and the peak of the sum
        m["workers_peak_rss_largest_mib"] = round(wsampler.peak_largest / 2**20, 1)
        m["workers_peak_rss_sum_mib"] = round(wsampler.peak_tree / 2**20, 1)
        m["worker_processes_seen"] = len(wsampler.cpu)
    return m


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


COMPARE_EXCLUDED = {
    "manifest.json: inputs.dataset": "the input dataset's absolute path (the run folders differ)",
}
"""What the byte-for-byte comparison with the process-pool run leaves out, and why. Found by two
process-pool runs of every stage into different folders: their only difference is that key of each
manifest (no file records a timing). A manifest is compared as its JSON with that key emptied."""


def file_digest(p: Path) -> str:
    h = hashlib.sha256()
    if p.name == "manifest.json":
        man = json.loads(p.read_bytes())
        if isinstance(man.get("inputs"), dict) and "dataset" in man["inputs"]:
            man["inputs"]["dataset"] = None
        h.update(json.dumps(man, sort_keys=True).encode())
        return h.hexdigest()
    with p.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def compare_trees(ref: Path, out: Path) -> dict:
    """Every file of a stage's output against the process-pool run's (sha256), but `COMPARE_EXCLUDED`."""

    def digests(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): file_digest(p) for p in sorted(root.rglob("*")) if p.is_file()}

    a, b = digests(ref), digests(out)
    return {
        "files": len(b),
        "bytes": sum(os.path.getsize(out / f) for f in b),
        "identical": a == b,
        "differ": sorted(f for f in a.keys() & b.keys() if a[f] != b[f]),
        "only_process_pool": sorted(a.keys() - b.keys()),
        "only_dask": sorted(b.keys() - a.keys()),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """`dask scheduler` and `--dask-workers` `dask worker` processes on loopback (each with its nanny),
    logs and worker TMPDIR under the run's folder; with `kill`, each worker's env has SELENE_KILL_ONCE
    for ingest's file task and dedup's band task (the first worker to get there SIGKILLs itself, its
    nanny starts a new one, the scheduler gives the lost task to a worker) and the stage commands run
    with SELENE_INLINE_SECONDS=0 (every task on the workers, none in the command's process)."""

    KILL_POINTS: ClassVar[dict[str, str]] = {"ingest": "ingest:file", "dedup": "dedup:band"}

    def __init__(self, run: Path, n: int, memory: str, reference: Path, kill: bool) -> None:
        self.run, self.n, self.memory, self.reference = run, n, memory, reference
        self.suffix = "-dask-kill" if kill else "-dask"
        self.tmp = run / "tmp" / "workers"
        self.markers = {stage: run / "killed" / stage for stage in self.KILL_POINTS} if kill else {}
        self.kill_spec = ";".join(f"{self.KILL_POINTS[s]}:{m}" for s, m in self.markers.items()) or None
        self.stage_env = {"SELENE_INLINE_SECONDS": "0"} if kill else {}
        self.address = ""
        self.procs: list[subprocess.Popen] = []
        self._logs: list = []

    def _start(self, name: str, cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = (self.run / f"{name}.log").open("w")
        self._logs.append(log)
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> Cluster:
        shutil.rmtree(self.run / "killed", ignore_errors=True)  # a marker from before would spare the workers
        if self.markers:
            (self.run / "killed").mkdir(parents=True)
        self.tmp.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        env = _env(self.tmp) | ({"SELENE_KILL_ONCE": self.kill_spec} if self.kill_spec else {})
        try:
            self._start(
                "dask-scheduler",
                [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                env,
            )
            self.workers = [
                self._start(
                    f"dask-worker-{i}",
                    [DASK, "worker", self.address, "--nthreads", "1", "--memory-limit", self.memory, "--no-dashboard"],
                    env,
                )
                for i in range(self.n)
            ]  # fmt: skip
            from distributed import Client

            t = time.perf_counter()
            with Client(self.address, timeout="120s") as client:  # as long as a busy machine needs
                client.wait_for_workers(self.n, timeout=300)
            print(
                f"  cluster: scheduler {self.address}, {self.n} workers x 1 thread, {self.memory} "
                f"(up in {time.perf_counter() - t:.0f} s)"
                + (f"; SELENE_KILL_ONCE={self.kill_spec}" if self.kill_spec else ""),
                flush=True,
            )
        except BaseException:
            self.__exit__()
            raise
        return self

    def pids(self) -> list[int]:
        """The `dask worker` processes (nannies), whose children are the workers."""
        return [p.pid for p in self.workers if p.poll() is None]

    def __exit__(self, *exc: object) -> None:
        for p in reversed(self.procs):  # workers first, the scheduler last
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in self._logs:
            log.close()


def bench_size(args: argparse.Namespace, gb: float, cluster: Cluster | None = None) -> dict:
    """The stages on one corpus size: with `--workers W` (a process pool), or on `cluster`."""
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
    suffix = cluster.suffix if cluster else ""
    run = work / f"run-{gb:g}gb{suffix}"
    for stage in args.stages:  # the stages asked for run again; earlier stages' outputs are their input
        shutil.rmtree(run / stage, ignore_errors=True)
    run.mkdir(parents=True, exist_ok=True)
    cfg_path = run / "pipeline.yaml"
    # on a cluster executor.workers is the cluster's (it sizes a task's share of memory_gb, never the output)
    workers = cluster.n if cluster else args.workers
    cfg = pipeline_config(run, corpus_dir, workers, args.vocab_size, args.sample_docs)
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
            *(["--dask-address", cluster.address] if cluster else ["--workers", str(args.workers)]),
        ]
        if stage != "ingest":
            if prev is None:
                raise SystemExit(f"{stage} needs its input: run the stages before it (--stages ingest,...)")
            cmd += ["-i", str(prev)]
        if args.memory_gb is not None and args.memory_flag.get(stage):
            cmd += ["--memory-gb", str(args.memory_gb)]
        print(f"  {stage}: {' '.join(cmd[2:])}", flush=True)
        if cluster:
            m = run_stage(
                cmd,
                out,
                run / "tmp" / stage,
                run / f"{stage}.log",
                cluster.stage_env,
                cluster.pids(),
                [cluster.tmp],
            )
        else:
            m = run_stage(cmd, out, run / "tmp" / stage, run / f"{stage}.log")
        if cluster and stage in cluster.markers:  # a worker died in this stage's task: its marker
            m["worker_killed"] = cluster.markers[stage].exists()
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
        if cluster:
            m["vs_process_pool"] = compare_trees(cluster.reference / stage, out)
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
        "mode": f"dask{suffix.removeprefix('-dask')}" if cluster else "processes",
        "workers": workers,
        "cores": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "corpus": {k: v for k, v in summary.items() if k != "files"},
        "config": cfg,
        "stages": rows,
    }
    if cluster:
        result["cluster"] = {
            "workers": cluster.n,
            "worker_memory": cluster.memory,
            "kill_once": cluster.kill_spec,
        }
        result["stage_env"] = cluster.stage_env
        result["compared_against"] = str(cluster.reference)
        result["compare_excluded"] = COMPARE_EXCLUDED
    path = work / f"scale-{gb:g}gb{suffix}.json"
    if path.exists():  # keep the rows of stages not run this time
        done = {m["stage"] for m in rows}
        old = [m for m in json.loads(path.read_text())["stages"] if m["stage"] not in done]
        result["stages"] = sorted(old + rows, key=lambda m: STAGES.index(m["stage"]))
    if cluster and cluster.markers:  # the same stages' wall time in the run without kills, if there is one
        plain = work / f"scale-{gb:g}gb-dask.json"
        walls = (
            {m["stage"]: m["wall_s"] for m in json.loads(plain.read_text())["stages"]}
            if plain.exists()
            else {}
        )
        for m in result["stages"]:
            m["wall_s_without_kills"] = walls.get(m["stage"])
    path.write_text(json.dumps(result, indent=1))
    if not args.keep and not cluster:  # a cluster's run folder goes once the cluster has stopped
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


def same_cell(m: dict) -> str:
    c = m.get("vs_process_pool")
    if c is None:
        return "-"
    if c["identical"]:
        return f"identical ({c['files']} files, {c['bytes'] / 1e6:,.1f} MB)"
    bad = len(c["differ"]) + len(c["only_process_pool"]) + len(c["only_dask"])
    return f"**DIFFERS** ({bad} of {c['files']} files)"


def table_dask(res: dict) -> str:
    """The run on a cluster: the command's tree is the driver, the workers are measured apart."""
    kill = bool(res["cluster"]["kill_once"])
    head = (
        "| stage | in docs | in text MB | out docs | wall s |"
        + (" wall s without kills | worker killed |" if kill else "")
        + " CPU s driver / workers | MB/s per core | driver peak RSS largest / tree MiB "
        "| worker peak RSS largest / sum MiB | disk out MB | vs process pool |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for m in res["stages"]:
        killed = ""
        if kill:
            k = m.get("worker_killed")
            w = m.get("wall_s_without_kills")
            killed = f" {w if w is not None else '-'} | {'-' if k is None else 'yes' if k else '**no**'} |"
        lines.append(
            f"| {m['stage']}{' (FAILED)' if m['rc'] else ''} | {m['in_docs']:,} | {m['in_text_mb']:,.1f} "
            f"| {m.get('out_docs', 0) or 0:,} | {m['wall_s']:.1f} |{killed} {m.get('driver_cpu_s', 0):.1f} / "
            f"{m.get('workers_cpu_s', 0):.1f} | {m.get('mb_per_cpu_s') or 0:.2f} "
            f"| {m['maxrss_largest_mib']:,.0f} / {m['peak_rss_tree_mib']:,.0f} "
            f"| {m.get('workers_peak_rss_largest_mib', 0):,.0f} / {m.get('workers_peak_rss_sum_mib', 0):,.0f} "
            f"| {m['disk_out_mb']:,.1f} | {same_cell(m)} |"
        )
    c = res["cluster"]
    lines.append(
        f"\n{c['workers']} workers x 1 thread, --memory-limit {c['worker_memory']}"
        + (f"; SELENE_KILL_ONCE={c['kill_once']}" if kill else "")
        + (f"; stage env {res['stage_env']}" if res["stage_env"] else "")
        + f"; compared with {res['compared_against']} (sha256 of every file; left out: "
        + ", ".join(res["compare_excluded"])
        + ")"
    )
    for m in res["stages"]:
        cmp = m.get("vs_process_pool")
        if cmp and not cmp["identical"]:
            lines.append(
                f"{m['stage']}: differ {cmp['differ'][:10]}, only in the process-pool run "
                f"{cmp['only_process_pool'][:10]}, only on Dask {cmp['only_dask'][:10]}"
            )
    return "\n".join(lines)


def ratios_dask(small: dict, large: dict) -> str:
    r = f"{large['gb']:g}/{small['gb']:g} GB"
    lines = [
        f"| stage | driver RSS largest {r} | driver RSS tree {r} | worker RSS largest {r} | MB/s per core {r} |",
        "|---|---|---|---|---|",
    ]
    a = {m["stage"]: m for m in small["stages"]}
    for m in large["stages"]:
        s = a.get(m["stage"])
        if not s or m["rc"] or s["rc"]:
            continue
        tput = (
            m["mb_per_cpu_s"] / s["mb_per_cpu_s"]
            if s.get("mb_per_cpu_s") and m.get("mb_per_cpu_s")
            else float("nan")
        )
        lines.append(
            f"| {m['stage']} | {m['maxrss_largest_mib'] / s['maxrss_largest_mib']:.2f} "
            f"| {m['peak_rss_tree_mib'] / s['peak_rss_tree_mib']:.2f} "
            f"| {m['workers_peak_rss_largest_mib'] / s['workers_peak_rss_largest_mib']:.2f} | {tput:.2f} |"
        )
    return "\n".join(lines)


def reference_ready(args: argparse.Namespace, gb: float, ref: Path) -> str | None:
    """Why the process-pool run at `ref` cannot be compared with (None: it can)."""
    cfg_path = ref / "pipeline.yaml"
    if not cfg_path.exists():
        return "not run yet"
    corpus_dir = args.work / f"corpus-{gb:g}gb-s{args.seed}"
    want = pipeline_config(ref, corpus_dir, args.workers, args.vocab_size, args.sample_docs)
    have = yaml.safe_load(cfg_path.read_text())
    if {k: v for k, v in have.items() if k != "executor"} != {
        k: v for k, v in want.items() if k != "executor"
    }:
        return "run with other settings"
    missing = [s for s in args.stages if not (ref / s / "manifest.json").exists()]
    return f"no finished {', '.join(missing)} there" if missing else None


def bench_dask(args: argparse.Namespace, gb: float) -> dict:
    """The process-pool run of `bench_size` (kept; run first when it is not there), then the same
    stages on a local cluster started for them, every output compared with the process-pool run's."""
    ref = args.work / f"run-{gb:g}gb"
    why = reference_ready(args, gb, ref)
    if why:
        print(f"\n## {gb:g} GB, process pool (the reference; {ref}: {why})", flush=True)
        res = bench_size(argparse.Namespace(**{**vars(args), "keep": True}), gb)
        print(f"\n### {gb:g} GB, process pool\n\n{table(res)}", flush=True)
        if any(m["rc"] for m in res["stages"]):
            raise SystemExit("the process-pool run failed: nothing to compare with")
    else:
        print(f"\nprocess-pool run to compare with: {ref} (reused)", flush=True)
    run = args.work / f"run-{gb:g}gb{'-dask-kill' if args.kill else '-dask'}"
    run.mkdir(parents=True, exist_ok=True)
    with Cluster(run, args.dask_workers, args.worker_memory, ref, args.kill) as cluster:
        res = bench_size(args, gb, cluster)
    if not args.keep:
        shutil.rmtree(run, ignore_errors=True)
    return res


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
    ap.add_argument(
        "--dask",
        action="store_true",
        help="run on a local Dask cluster started here (--dask-address), against the process-pool run",
    )
    ap.add_argument("--dask-workers", type=int, default=3, help="with --dask: `dask worker` processes")
    ap.add_argument("--worker-memory", default="2GiB", help="with --dask: each worker's --memory-limit")
    ap.add_argument(
        "--kill",
        action="store_true",
        help="with --dask: a worker SIGKILLs itself in ingest's and dedup's tasks",
    )
    args = ap.parse_args()
    args.stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = sorted(set(args.stages) - set(STAGES))
    if unknown:
        ap.error(f"unknown stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    if args.kill and not args.dask:
        ap.error("--kill needs --dask")
    first = STAGES.index(args.stages[0])
    if args.dask and args.stages != list(STAGES[first : first + len(args.stages)]):
        # each stage reads the one before it in --stages; the process-pool run chains all of them
        ap.error(f"with --dask, --stages is a run of consecutive stages of {', '.join(STAGES)} (as compared)")
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
        res = bench_dask(args, gb) if args.dask else bench_size(args, gb)
        results.append(res)
        where = (
            (" on Dask" + (", a worker killed in ingest and dedup" if args.kill else "")) if args.dask else ""
        )
        print(
            f"\n### {gb:g} GB{where} ({res['corpus']['text_chars'] / 1e6:,.0f}M input text chars)\n\n"
            f"{table_dask(res) if args.dask else table(res)}",
            flush=True,
        )
    for small, large in itertools.pairwise(results):
        print(
            f"\n### ratios {large['gb']:g} GB / {small['gb']:g} GB\n\n"
            f"{ratios_dask(small, large) if args.dask else ratios(small, large)}"
        )
    suffix = ("-dask-kill" if args.kill else "-dask") if args.dask else ""
    files = [str(args.work / f"scale-{r['gb']:g}gb{suffix}.json") for r in results]
    print(f"\nresults: {', '.join(files)}")
    print(
        f"benchmark process peak RSS (not part of the measurement): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
