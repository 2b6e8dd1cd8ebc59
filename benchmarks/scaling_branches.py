"""A loss scaling study over token budgets, two ways on the same grid: WSD branches against separate runs.

    python benchmarks/scaling_branches.py [--budgets 10,20,40,80] [--dims 16,32] [--first separate] [--out DIR]

`selene scaling-study` with `budgets` (`selene.plan.study_budgets`) on this CPU, twice:

  branches  one WSD run per model to the largest budget; each smaller budget a decay branch from
            its stable-phase checkpoint (`selene train --anneal-from`)
  separate  one WSD run per budget from step 0

Budgets are given in optimizer steps here (tokens = steps × 4 sequences × 32 tokens); each decay is
20% of its budget. Printed: optimizer steps trained and wall seconds of each way (every launch,
model build and checkpoint included) and their ratios, and whether every (model, budget) loss is
the same both ways (a branch reproduces its separate run step for step). `--first` picks which way
runs first: on a shared machine, run both orders.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.plan.config import ScalingStudyConfig  # noqa: E402
from selene.plan.study import run_study  # noqa: E402

SEQ, BATCH = 32, 4


def study(mode: str, out: Path, budgets: list[int], dims: list[int]) -> ScalingStudyConfig:
    runs = [
        {"name": f"d{d}", "micro_batch": BATCH,
         "model": {"preset": "debug", "n_layers": 2, "dim": d, "n_heads": max(1, d // 16), "ffn_dim": 3 * d, "max_seq_len": SEQ}}
        for d in dims
    ]  # fmt: skip
    return ScalingStudyConfig.model_validate({
        "out": str(out / mode), "device": "cpu", "vocab_size": 128, "runs": runs, "budget_mode": mode,
        "budgets": [b * SEQ * BATCH for b in budgets], "decay_fraction": 0.2, "lr": 3e-3,
    })  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", default="10,20,40,80", help="Budgets in optimizer steps, comma-separated.")
    ap.add_argument("--dims", default="16,32", help="Model widths (2 layers each), comma-separated.")
    ap.add_argument("--first", choices=("separate", "branches"), default="separate", help="Which way runs first.")
    ap.add_argument("--out", default=None, help="Folder for the runs (default: a temporary one).")
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    dims = [int(d) for d in args.dims.split(",")]
    out = Path(args.out or tempfile.mkdtemp(prefix="scaling-branches-"))
    os.environ.setdefault("SELENE_PREFECT", "off")
    results = {}
    for mode in (args.first, "branches" if args.first == "separate" else "separate"):
        t = time.perf_counter()
        results[mode] = run_study(study(mode, out, budgets, dims))
        results[mode]["wall_s"] = time.perf_counter() - t
    losses = {
        mode: {(r["name"], p["steps"]): (p["loss"], p["val_loss"]) for r in res["runs"] for p in r["points"]}
        for mode, res in results.items()
    }
    same = losses["branches"] == losses["separate"]
    sep, br = results["separate"], results["branches"]
    summary = {
        "grid": {"dims": dims, "budget_steps": budgets, "decay_fraction": 0.2, "tokens_per_step": SEQ * BATCH},
        "separate": {"steps_trained": sep["steps_trained"], "wall_s": round(sep["wall_s"], 1)},
        "branches": {"steps_trained": br["steps_trained"], "wall_s": round(br["wall_s"], 1)},
        "steps_ratio": round(br["steps_trained"] / sep["steps_trained"], 3),
        "wall_ratio": round(br["wall_s"] / sep["wall_s"], 3),
        "same_losses": same,
    }
    print(json.dumps(summary, indent=1))
    if not same:
        sys.exit("the branches' losses differ from the separate runs'")


if __name__ == "__main__":
    main()
