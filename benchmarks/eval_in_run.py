"""The cost of evaluation inside the run (`train.eval_tasks`) at the demo's setting, as a fraction of
the run's time.

    python benchmarks/eval_in_run.py [--repeat 2] [--every N --tasks a,b --limit L] [--data PREFIX]

Trains the demo's `train:` section of configs/demo.yaml (debug model, 2 CPU ranks FSDP, 60 steps of
16 × 64 tokens) twice per repeat, one after the other: without in-run evaluation and with the
demo's `eval_tasks*` settings (or the ones given), each a whole `selene train` launch (preflight,
torchrun, ranks, checkpoints). Reported per pair: both wall times, the difference, the evaluations'
own time (`eval_time_s` summed from metrics.jsonl: the steps that evaluate, rank 0's harness and
every rank's forwards; plus `eval_setup_cpu_s`, rank 0's set-up thread) and both as a fraction of the baseline run; then the medians.

The token data: `--data` (e.g. runs/demo/tokenize/data_text_document after `make demo`), else a
small real one (a sentencepiece tokenizer trained on Python's help topics, `tests.tiny_checkpoint`)
with the model's vocabulary set to the demo's 4096, so the forwards cost what the demo's cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.train.config import TrainConfig  # noqa: E402
from selene.train.launch import launch  # noqa: E402
from selene.train.metrics import read_metrics  # noqa: E402


def demo_train() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())["train"])


def run(section: dict[str, Any], prefix: str, out: Path) -> tuple[float, float, float, int]:
    """(wall seconds of the whole launch, seconds of the evaluated steps, CPU seconds of rank 0's
    set-up thread, evaluations) of one training run. The set-up (lm-eval's import and the tasks'
    datasets) runs beside the first steps: on a machine whose cores the ranks fill, its CPU time is
    taken from them (an upper bound of its wall-clock cost); on idle cores it costs nothing."""
    cfg = TrainConfig.model_validate(
        {**section, "data": {"prefixes": [prefix]}, "out": str(out), "device": "cpu"}
    )
    t0 = time.perf_counter()
    launch(cfg, str(out), cfg.nproc_per_node)
    wall = time.perf_counter() - t0
    rows = read_metrics(str(out / "metrics.jsonl"))
    evals = [r["eval_time_s"] for r in rows if "eval_time_s" in r]
    setup = sum(r.get("eval_setup_cpu_s", 0.0) for r in rows)
    return wall, sum(evals), setup, len(evals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--every", type=int, default=None, help="train.eval_tasks_every (default: the demo's)")
    ap.add_argument("--tasks", default=None, help="comma-separated train.eval_tasks (default: the demo's)")
    ap.add_argument("--limit", type=int, default=None, help="train.eval_limit (default: the demo's)")
    ap.add_argument("--data", default=None, help="token data prefix (default: a small one made here)")
    args = ap.parse_args()
    demo = demo_train()
    evals = {
        k: v for k, v in demo.items() if k.startswith("eval_") and k not in ("eval_every", "eval_batches")
    }
    if args.every:
        evals["eval_tasks_every"] = args.every
    if args.tasks:
        evals["eval_tasks"] = args.tasks.split(",")
    if args.limit:
        evals["eval_limit"] = args.limit
    if not evals.get("eval_tasks"):
        sys.exit("configs/demo.yaml's train section has no eval_tasks: give --tasks")
    base = {k: v for k, v in demo.items() if k not in evals}
    with tempfile.TemporaryDirectory(prefix="selene-bench-eval-") as tmp:
        prefix = args.data
        if prefix is None:
            from tests.tiny_checkpoint import make_token_data

            prefix = make_token_data(Path(tmp) / "tokens")
            base["model"] = {**base.get("model", {}), "vocab_size": 4096}  # the demo's tokenizer size
        print(f"demo train setting: {json.dumps(base)}\nin-run evaluation: {json.dumps(evals)}", flush=True)
        pairs = []
        for i in range(args.repeat):
            off = run(base, prefix, Path(tmp) / f"off-{i}")
            on = run({**base, **evals}, prefix, Path(tmp) / f"on-{i}")
            pairs.append((off, on))
            print(
                f"repeat {i + 1}: without {off[0]:.1f} s, with {on[0]:.1f} s ({(on[0] - off[0]) / off[0]:+.1%}); "
                f"{on[3]} evaluated steps {on[1]:.2f} s ({on[1] / off[0]:.1%} of the run), set-up {on[2]:.2f} s CPU "
                f"({on[2] / off[0]:.1%}); together {(on[1] + on[2]) / off[0]:.1%}",
                flush=True,
            )

    def median(f: Any) -> float:
        return statistics.median(f(off, on) for off, on in pairs)

    print(
        f"median over {len(pairs)}: evaluated steps {median(lambda off, on: on[1] / off[0]):.1%}, set-up "
        f"{median(lambda off, on: on[2] / off[0]):.1%}, together {median(lambda off, on: (on[1] + on[2]) / off[0]):.1%} "
        f"of the run's time; wall clock of the whole launch {median(lambda off, on: (on[0] - off[0]) / off[0]):+.1%}"
    )


if __name__ == "__main__":
    main()
