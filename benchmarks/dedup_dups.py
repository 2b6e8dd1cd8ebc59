"""Dedup on heavily duplicated input: real documents each present in N perturbed copies.

    python benchmarks/dedup_dups.py --base-mb 12 --copies 4,16 [--memory-gb default,1] [--workers 2]
        [--work DIR] [--seed 0] [--keep] [--selene CHECKOUT] [--compare DIR]

Corpus: `scale_corpus`'s originals (paragraphs of the bundled Pile sample in a new mix and order), about
`--base-mb` million characters of them; each written N times: the original and N - 1 copies with words
replaced (`scale_corpus.near_copy`, Jaccard to the original cycling through `LEVELS`, so most copies
are near the threshold: the exact checks of `verify: signature` decide them). All copies in a seeded
random order, in shards of ~32 MB of text (ingest's default), so every cluster spans many shards.
The same bases for every N, so 4 → 16 copies is 4x the characters and the number of linked documents.

Each (copies, memory) runs `SELENE_PREFECT=off python -m selene.cli dedup -i IN -o OUT --workers W
[--memory-gb M]`, measured from outside (`scale.TreeSampler`, every 0.2 s): wall, CPU, the peak of the
sum of RSS over the command's process tree (children included), the largest process, and the
command's own process (the driver) apart; the peak disk use of OUT with its work files (every ~1 s).
Every output file's sha256 (removed.parquet, part-*.parquet, clusters.md, minhash/*, the manifest
without its absolute paths) is compared across the memory
settings of one N, and with `--compare DIR` with an earlier run's digests (DIR/digests-x<N>-<base>m.json,
as this script writes them into WORK; run the earlier checkout with `--selene`, e.g. a `git archive` of
main). Results: a table on stdout and WORK/dedup-dups.json (with each run's 0.5 s timeline of driver
and tree RSS). Measured: benchmarks/results/dedup-dups-memory.txt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale
import scale_corpus

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LEVELS = (0.97, 0.94, 0.91, 0.88, 0.85, 0.82)
SHARD_CHARS = 32 << 20


def bases(m: scale_corpus.Material, chars: int, rng: np.random.Generator) -> list[tuple[int, list[int]]]:
    """(source, paragraph indices) of originals, as `scale_corpus.generate` draws them, until `chars`."""
    out, total = [], 0
    while total < chars:
        s = int(rng.choice(len(m.pools), p=m.weights))
        k = int(m.counts[m.count_offset[s] + int(rng.random() * m.count_size[s])])
        idx = (m.offset[s] + (rng.random(k) * m.size[s]).astype(np.int64)).tolist()
        out.append((s, idx))
        total += int(m.nchars[idx].sum()) + 2 * (k - 1)
    return out


def make_corpus(out: Path, base_chars: int, copies: int, seed: int) -> dict:
    """The dataset in `out` (reused when its summary matches)."""
    summary_path = out / "summary.json"
    want = {"base_chars": base_chars, "copies": copies, "seed": seed, "version": 1}
    if summary_path.exists() and json.loads(summary_path.read_text())["params"] == want:
        return json.loads(summary_path.read_text())
    import pyarrow as pa

    from selene.io import dataset
    from tests.corpus import document_manifest

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    m = scale_corpus.Material(scale_corpus.load_pools())
    rng = np.random.default_rng(seed)
    docs = bases(m, base_chars, rng)
    order = np.random.default_rng(seed + 1000 * copies).permutation(len(docs) * copies)
    shards, rows, chars = [], [], 0
    sources: dict[str, int] = {}

    def flush() -> None:
        table = pa.table(
            {n: [r[i] for r in rows] for i, n in enumerate(["id", "text", "source", "meta"])},
            schema=dataset.DOC_SCHEMA,
        )
        shards.append(dataset.write_table(str(out / dataset.shard_name(len(shards))), table))
        rows.clear()

    shard_chars = 0
    for pos in order.tolist():
        b, c = divmod(pos, copies)
        s, idx = docs[b]
        if c == 0:
            text = "\n\n".join(m.raw[i] for i in idx)
        else:
            crng = np.random.default_rng([seed, b, c])
            text = scale_corpus.near_copy(m, idx, LEVELS[(b + c) % len(LEVELS)], crng)
        name = m.pools[s].name
        rows.append((f"b{b}c{c}", text, name, m.pools[s].meta))
        sources[name] = sources.get(name, 0) + 1
        chars += len(text)
        shard_chars += len(text)
        if shard_chars >= SHARD_CHARS:
            flush()
            shard_chars = 0
    if rows:
        flush()
    removed = dataset.write_table(str(out / dataset.REMOVED), dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(str(out), document_manifest(shards, removed, sources))
    summary = {
        "params": want,
        "documents": len(order),
        "bases": len(docs),
        "chars": chars,
        "shards": len(shards),
    }
    summary_path.write_text(json.dumps(summary))
    return summary


class DriverSampler(scale.TreeSampler):
    """`scale.TreeSampler`, plus the command's own process's peak RSS."""

    def __init__(self, pid: int, *a, **k) -> None:
        super().__init__(pid, *a, **k)
        self.peak_driver = 0
        self._driver = psutil.Process(pid)
        self._t0 = time.monotonic()
        self.timeline: list[tuple[float, int, int]] = []  # (s, driver MiB, tree MiB) every 0.5 s

    def _procs(self) -> list[psutil.Process] | None:
        procs = super()._procs()
        try:
            rss = self._driver.memory_info().rss
            self.peak_driver = max(self.peak_driver, rss)
            now = time.monotonic() - self._t0
            if procs and (not self.timeline or now - self.timeline[-1][0] >= 0.5):
                tree = sum(p.memory_info().rss for p in procs if p.is_running())
                self.timeline.append((round(now, 1), rss >> 20, tree >> 20))
        except psutil.Error:
            pass
        return procs


def digests(out: Path) -> dict[str, str]:
    """sha256 of every output file; the manifest without its absolute input path."""
    res = {}
    for p in sorted(out.rglob("*")):
        if not p.is_file():
            continue
        rel = str(p.relative_to(out))
        data = p.read_bytes()
        if rel == "manifest.json":
            man = json.loads(data)
            man["inputs"]["dataset"] = None
            data = json.dumps(man, sort_keys=True).encode()
        res[rel] = hashlib.sha256(data).hexdigest()
    return res


def run_dedup(inp: Path, out: Path, work: Path, workers: int, memory: str, selene: Path = ROOT) -> dict:
    import os
    import subprocess

    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "selene.cli",
        "dedup",
        "-i",
        str(inp),
        "-o",
        str(out),
        "--workers",
        str(workers),
    ]
    if memory != "default":
        cmd += ["--memory-gb", memory]
    tmp = work / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    log = work / f"{out.name}.log"
    t0 = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=scale._env(tmp) | {"PYTHONPATH": str(selene)},
            cwd=selene,
        )
        sampler = DriverSampler(proc.pid, [out], interval=0.2)
        sampler.start()
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    sampler.done.set()
    sampler.join()
    rc = os.waitstatus_to_exitcode(status)
    if rc:
        raise SystemExit(f"dedup failed ({rc}); see {log}")
    man = json.loads((out / "manifest.json").read_text())
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(max(ru.ru_utime + ru.ru_stime, sum(sampler.cpu.values())), 1),
        "peak_tree_mib": round(sampler.peak_tree / 2**20),
        "peak_largest_mib": round(sampler.peak_largest / 2**20),
        "peak_driver_mib": round(sampler.peak_driver / 2**20),
        "peak_disk_mb": round(sampler.peak_disk / 1e6),  # OUT with its _work files, polled every ~1 s
        "removed": man["stats"]["documents_removed"],
        "exact_checks": man["stats"]["clusters"]["exact_checks"],
        "linked": man["stats"]["clusters"]["documents_linked"],
        "timeline": sampler.timeline,
        "digests": digests(out),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-mb", type=float, default=12.0, help="million characters of distinct documents")
    ap.add_argument("--copies", default="4,16")
    ap.add_argument("--memory-gb", default="default,1", help="'default' or GiB, comma-separated")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "dedup-dups")
    ap.add_argument("--keep", action="store_true", help="keep the outputs")
    ap.add_argument(
        "--selene", type=Path, default=ROOT, help="the checkout whose selene runs (e.g. a copy of main)"
    )
    ap.add_argument("--compare", type=Path, help="an earlier WORK: compare output digests with its")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for copies in [int(c) for c in args.copies.split(",")]:
        inp = args.work / f"corpus-{args.base_mb:g}m-x{copies}-s{args.seed}"
        summary = make_corpus(inp, int(args.base_mb * 1e6), copies, args.seed)
        first = None
        for memory in args.memory_gb.split(","):
            out = args.work / f"out-x{copies}-m{memory}"
            r = run_dedup(inp, out, args.work, args.workers, memory, args.selene)
            same = first is None or r["digests"] == first
            first = first or r["digests"]
            if args.compare is not None:
                old = json.loads((args.compare / f"digests-x{copies}-{args.base_mb:g}m.json").read_text())
                r["same_as_compare"] = r["digests"] == old
            (args.work / f"digests-x{copies}-{args.base_mb:g}m.json").write_text(json.dumps(first, indent=1))
            r.update(
                copies=copies, memory=memory, chars=summary["chars"], docs=summary["documents"], same=same
            )
            results.append(r)
            print(
                f"x{copies:<3} mem {memory:<8} {summary['chars'] / 1e6:7.1f} M chars {summary['documents']:>8} docs"
                f"  wall {r['wall_s']:7.1f} s  cpu {r['cpu_s']:7.1f} s  tree {r['peak_tree_mib']:5d} MiB"
                f"  largest {r['peak_largest_mib']:5d}  driver {r['peak_driver_mib']:5d}  disk {r['peak_disk_mb']:5d} MB"
                f"  removed {r['removed']}"
                f"  exact {r['exact_checks']}  same {same}"
                + (f"  as-before {r.get('same_as_compare')}" if args.compare else ""),
                flush=True,
            )
            if not args.keep:
                shutil.rmtree(out, ignore_errors=True)
    (args.work / "dedup-dups.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
