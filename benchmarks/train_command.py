"""`selene train` as a user runs it on a CPU, against the same command with the settings it had before.

    python benchmarks/train_command.py [--preset 125m] [--seq 256] [--micro-batch 4] [--steps 6] [--rounds 2]

The whole command (config check, torchrun agent, a rank, model build, the steps) on a token dataset
of random tokens (vocabulary 32000), one rank, fp32, eager. Two ways, in alternating rounds:

  now     what `selene train` does: the rank gets every core the process may use
          (`launch.threads_per_rank`), and its glibc malloc keeps freed memory for the next step
          (`selene.train.host`);
  before  OMP_NUM_THREADS=1 (what the launcher used to set for every rank) and
          SELENE_HOST_ALLOCATOR=glibc (glibc's default thresholds);
  threads the cores shared out, glibc's default thresholds (each change's share of the gain).

Printed: the median step time of the steps after the first (from the run's metrics.jsonl), the
command's wall time, and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.tokenize.indexed import IndexedWriter  # noqa: E402
from tests.pipeline_runs import write_token_manifest  # noqa: E402

VOCAB = 32000
MODES = {
    "before": {"OMP_NUM_THREADS": "1", "SELENE_HOST_ALLOCATOR": "glibc"},
    "threads": {"SELENE_HOST_ALLOCATOR": "glibc"},
    "now": {},
}


def token_dataset(root: Path, tokens: int) -> str:
    rng = np.random.default_rng(0)
    prefix = str(root / "random_text_document")
    with IndexedWriter(prefix, np.uint16) as w:
        for _ in range(tokens // 1000 + 1):
            w.add_document(np.append(rng.integers(2, VOCAB, size=999), 1))
    write_token_manifest(prefix, VOCAB, eod_id=1)
    return prefix


def run(mode: str, prefix: str, out: Path, args: argparse.Namespace) -> tuple[float, float]:
    cfg = {
        "model": {"preset": args.preset, "max_seq_len": args.seq},
        "parallel": {"dp_shard": 1, "mixed_precision": "fp32"},
        "steps": args.steps,
        "batch": {"seq_len": args.seq, "global_batch": args.micro_batch, "micro_batch": args.micro_batch},
        "data": {"prefixes": [prefix]},
        "eval_every": 10**6,
        "checkpoint": {"every": 10**6},
        "tensorboard": False,
        "out": str(out),
    }
    path = out.with_suffix(".json")
    path.write_text(json.dumps(cfg))
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "SELENE_HOST_ALLOCATOR")}
    env.update(MODES[mode])
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "selene.cli", "train", str(path), "--nproc-per-node", "1"],
                          env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"selene train ({mode}) failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    times = [r["step_time_s"] for r in records if "step_time_s" in r][1:]
    return statistics.median(times), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="125m")
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--micro-batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="selene-train-command-") as tmp:
        root = Path(tmp)
        prefix = token_dataset(root, args.seq * args.micro_batch * (args.steps + 2))
        results: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
        for r in range(args.rounds):
            for mode in (MODES if r % 2 == 0 else reversed(list(MODES))):
                results[mode].append(run(mode, prefix, root / f"{mode}{r}", args))
    print(f"selene train, {args.preset}, {args.micro_batch} × {args.seq} tokens, fp32, one rank on "
          f"{len(os.sched_getaffinity(0))} cores; {args.steps} steps, {args.rounds} rounds")
    print(f"{'':<8}{'step s':>9}{'command s':>11}")
    med = {m: (statistics.median(s for s, _ in v), statistics.median(w for _, w in v)) for m, v in results.items()}
    for mode, (step, wall) in med.items():
        print(f"{mode:<8}{step:>9.3f}{wall:>11.1f}")
    (bs, bw), (ns, nw), ts = med["before"], med["now"], med["threads"][0]
    print(f"now is {bs / ns:.2f}× faster a step than before, {bw / nw:.2f}× the whole command; "
          f"of that the threads {bs / ts:.2f}× a step, the allocator {ts / ns:.2f}×")


if __name__ == "__main__":
    main()
