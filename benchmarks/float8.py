"""float8 training against bf16: the same steps, the same batches, one process; speed ratio and loss gap.

    python benchmarks/float8.py                                     # CUDA (8.9+): 125m at seq 2048, compiled
    python benchmarks/float8.py --preset debug --seq 64 --batch 8 --steps 40 --warmup 2 --no-compile   # CPU

Each leg is selene's own training step (`benchmarks/_train_step.py`: the trainer's model builder,
AdamW, `forward_backward`, clipping) with `parallel.mixed_precision: bf16` and `parallel.float8` off,
`tensorwise` or `rowwise`, from the same initial weights on the same batches: --distinct batches of
random tokens, repeated, so the model has something to learn (memorise) and the losses fall. Printed
per leg: median step time after --warmup steps, tokens/s and its ratio to bf16, the loss of the last
step and the largest |loss − bf16's loss| over the steps. --out writes the table as JSON.

On a CPU the float8 matmuls run through `torch._scaled_mm`'s CPU kernel (the launcher refuses float8
there; this benchmark builds the model directly): the losses say how close float8's numerics stay to
bf16's, the speed says nothing about a GPU. On an H100/H200 the same command measures the speed-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._train_step import SeleneStep, batch, device_here, sync, train_config


def leg(recipe: str | None, args: argparse.Namespace, device: torch.device) -> dict[str, Any]:
    cfg = train_config(args.preset, args.seq, args.vocab, "bf16", args.compile)
    cfg.parallel.float8 = recipe  # type: ignore[assignment]
    step = SeleneStep(cfg, device, seed=args.seed)
    losses, times = [], []
    for i in range(args.warmup + args.steps):
        x, y = batch(args.vocab, args.batch, args.seq, device, seed=i % args.distinct)
        sync(device)
        t = time.perf_counter()
        losses.append(step(x, y))
        sync(device)
        if i >= args.warmup:
            times.append(time.perf_counter() - t)
    converted = sum(1 for m in step.model.modules() if type(m).__name__ == "Float8Linear")
    step.close()
    median = statistics.median(times)
    return {"float8": recipe or "off (bf16)", "float8_linears": converted, "step_s": median,
            "tokens_per_s": args.batch * args.seq / median, "losses": losses}  # fmt: skip


def main() -> None:
    cuda = torch.cuda.is_available()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="125m" if cuda else "debug")
    ap.add_argument("--seq", type=int, default=2048 if cuda else 64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=32000 if cuda else 512)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5 if cuda else 2)
    ap.add_argument("--recipes", default="tensorwise,rowwise")
    ap.add_argument("--no-compile", dest="compile", action="store_false", default=cuda)
    ap.add_argument("--distinct", type=int, default=4, help="distinct batches, repeated in turn")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    device = device_here()
    if cuda and torch.cuda.get_device_capability(device) < (8, 9):
        raise SystemExit(f"{torch.cuda.get_device_name(device)}: float8 needs compute capability 8.9+")
    legs = [leg(None, args, device)]
    legs += [leg(r.strip(), args, device) for r in args.recipes.split(",") if r.strip()]
    base = legs[0]
    name = torch.cuda.get_device_name(device) if cuda else "CPU (torch._scaled_mm's CPU kernel)"
    print(f"{args.preset}, seq {args.seq}, batch {args.batch} ({args.distinct} distinct, repeated), "
          f"{args.steps} timed steps after {args.warmup}, "
          f"compile {args.compile}, on {name}")  # fmt: skip
    print(
        f"{'float8':<12} {'linears':>7} {'step s':>8} {'tokens/s':>10} {'vs bf16':>8} {'last loss':>10} {'max |dloss|':>12} {'first loss':>10}"
    )
    for r in legs:
        r["speedup"] = r["tokens_per_s"] / base["tokens_per_s"]
        r["max_abs_loss_diff"] = max(abs(a - b) for a, b in zip(r["losses"], base["losses"], strict=True))
        print(f"{r['float8']:<12} {r['float8_linears']:>7} {r['step_s']:>8.4f} {r['tokens_per_s']:>10,.0f} "
              f"{r['speedup']:>7.2f}x {r['losses'][-1]:>10.4f} {r['max_abs_loss_diff']:>12.4f} {r['losses'][0]:>10.4f}")  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"device": name, "args": vars(args) | {"out": str(args.out)}, "legs": legs},
                                       indent=1, default=str))  # fmt: skip


if __name__ == "__main__":
    main()
