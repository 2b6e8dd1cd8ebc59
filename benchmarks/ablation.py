"""`selene ablate` as a user runs it: the demo's quality ablation (configs/ablation-demo.yaml), timed.

    python benchmarks/ablation.py [--config configs/ablation-demo.yaml] [--out DIR] [--seeds 1,2]

Runs the command in a fresh process from the repository root (the config's paths are relative to
it), without a Prefect server unless one is configured, and copies its table, plot and JSON to
``benchmarks/results/ablation.{md,svg,json}`` with the wall time, the time of a rerun (everything
reused), and the peak memory of the largest process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def run(cmd: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "SELENE_PREFECT": os.environ.get("SELENE_PREFECT", "off")})
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed with exit code {proc.returncode}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/ablation-demo.yaml")
    ap.add_argument("--out", default="runs/ablation-bench")
    ap.add_argument("--seeds", default=None, help="comma-separated training seeds (default: the config's)")
    ap.add_argument("--keep", action="store_true", help="reuse --out as it is (default: start afresh)")
    args = ap.parse_args()
    out = ROOT / args.out
    if out.exists() and not args.keep:
        shutil.rmtree(out)
    cmd = [str(Path(sys.executable).with_name("selene")), "ablate", args.config, "--out", args.out]
    if args.seeds:
        cmd += ["--seeds", args.seeds]
    first = run(cmd)
    again = run(cmd)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = json.loads((out / "ablation.json").read_text())
    timing = {
        "command": " ".join(["selene", *cmd[1:]]),
        "wall_s": round(first, 1),
        "rerun_s": round(again, 1),
        "peak_rss_mib_largest_process": round(peak_mib),
        "cpus": os.cpu_count(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ablation.json").write_text(json.dumps({"timing": timing, **result}, indent=1))
    shutil.copy(out / "ablation.svg", RESULTS / "ablation.svg")
    md = (out / "ablation.md").read_text()
    (RESULTS / "ablation.md").write_text(
        md + f"\n`{timing['command']}`: {first / 60:.1f} min on {timing['cpus']} CPU cores, a rerun {again:.0f} s "
        f"(everything reused); the largest process peaked at {peak_mib:.0f} MiB.\n"
    )
    print((RESULTS / "ablation.md").read_text())


if __name__ == "__main__":
    main()
