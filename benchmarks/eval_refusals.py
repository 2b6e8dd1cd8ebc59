"""How long `selene eval` takes to refuse task data it cannot use, with and without the checks that
run before torch and lm-eval load (`selene.eval.tasks.precheck`).

    python benchmarks/eval_refusals.py [--repeats 3] [--out benchmarks/results/eval_refusals.txt]

Three refusals, each run as the command (a fresh process) against a checkpoint folder (its refusal
comes before any model is loaded either way): the split piqa scores missing from its --task-data
folder, a mistyped --task-data name, and boolq with nothing of its Hub dataset in the datasets cache.
The baseline is the same command with the precheck replaced by a no-op, which refuses the same way
after lm-eval's registry is indexed (what `selene eval` did before); both run here, one after the
other, so the ratio is of one machine under one load. The fastest of `--repeats` runs is reported.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = (
    "import sys\n"
    "if sys.argv[1] == 'without':\n"
    "    import selene.eval.tasks.precheck as p\n"
    "    p.precheck = lambda *a, **k: None\n"
    "from selene.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="Also write the table here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eval-refusals-") as d:
        root = Path(d)
        (root / "ckpt" / "step-000001").mkdir(parents=True)
        (root / "ckpt" / "step-000001" / "meta.json").write_text("{}")
        (root / "piqa").mkdir()
        (root / "piqa" / "train.jsonl").write_text('{"goal": "a", "sol1": "b", "sol2": "c", "label": 0}\n')
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SELENE_PREFECT": "off",
            "SELENE_HOME": str(root / "home"),
            "HF_DATASETS_CACHE": str(root / "no-datasets"),
        }
        cases = {
            "missing split": ["--tasks", "piqa", "--task-data", f"piqa={root / 'piqa'}"],
            "mistyped --task-data": ["--tasks", "piqa", "--task-data", f"pqia={root / 'piqa'}"],
            "dataset not cached": ["--tasks", "boolq"],
        }
        lines = [f"{'refusal':<22} {'before lm-eval':>15} {'after lm-eval':>14} {'ratio':>7}"]
        for name, extra in cases.items():
            best: dict[str, float] = {}
            for mode in ("with", "without"):
                for _ in range(args.repeats):
                    cmd = [
                        sys.executable,
                        "-c",
                        COMMAND,
                        mode,
                        "eval",
                        "--checkpoint",
                        str(root / "ckpt"),
                        *extra,
                    ]
                    cmd += ["-o", str(root / "out")]
                    start = time.perf_counter()
                    got = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
                    took = time.perf_counter() - start
                    if got.returncode != 2:
                        raise SystemExit(f"{name} ({mode}): exit {got.returncode}, expected 2\n{got.stderr}")
                    best[mode] = min(best.get(mode, took), took)
            lines.append(
                f"{name:<22} {best['with']:>13.2f} s {best['without']:>12.2f} s {best['without'] / best['with']:>6.1f}x"
            )
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    main()
