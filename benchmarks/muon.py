"""Muon against AdamW on the CPU proxy: the steps Muon needs to reach AdamW's final loss, and the step time.

    python benchmarks/muon.py [--shapes debug,125m-narrow] [--steps 400,150] [--lrs "1e-3,3e-3,1e-2;3e-3,1e-2"]
    python benchmarks/muon.py --lrs "3e-2;3e-2" --extend     # widen the sweep of the last run

Every run trains on the same token stream: byte-level tokens (vocabulary 256, one id per byte, 0 ends
a document) of the real text in ``benchmarks/data/langid_set.jsonl.zst`` (10 MB, mostly English),
the same batches in the same order; the first 2% of the stream is held out, and the validation loss
on 4 batches of 16 sequences from it is taken every `--eval-every` steps. Each optimizer gets a small
learning-rate sweep (`--lrs`; Muon with Moonlight's `match_rms_adamw` scaling, so one rate serves its
matrices and its AdamW part) and is judged at its best rate. What it reports, per shape: each run's
final validation loss, the first evaluation at which Muon's best run reaches AdamW's best final loss
(or AdamW reaches Muon's, when Muon ends worse), and the median time of a training step and of the
optimizer step alone, Muon over AdamW (each pair run one after the other).

Shapes (RoPE, RMSNorm, SwiGLU, untied): ``debug`` is the preset (4 layers × dim 64, 4 heads, ffn
192); ``125m-narrow`` is the 125m preset's depth and head size (12 layers, heads of 64, ffn 8/3·dim)
at a quarter of its width (dim 192, 3 heads, ffn 512: 5.3M parameters in the blocks against 85M),
so a sweep fits a shared 2-core CPU in minutes. The trainer's own code builds the optimizers and the
schedule (`selene.train.optim`, `selene.train.schedule.lr_at`); the model is the plain
`Transformer`, one process, fp32. Results: ``benchmarks/results/muon.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.model.args import ModelArgs  # noqa: E402
from selene.model.transformer import Transformer  # noqa: E402
from selene.train.args import model_args  # noqa: E402
from selene.train.config import ModelConfig, TrainConfig  # noqa: E402
from selene.train.optim import build_optimizers, set_lr  # noqa: E402
from selene.train.schedule import lr_at  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SHAPES: dict[str, dict[str, Any]] = {
    "debug": {"preset": "debug"},
    "125m-narrow": {"preset": "125m", "dim": 192, "n_heads": 3, "ffn_dim": 512},
}


def token_stream() -> np.ndarray:
    """The bytes of every document of the text set, each followed by 0 (no text holds a NUL byte)."""
    with open(ROOT / "benchmarks" / "data" / "langid_set.jsonl.zst", "rb") as f:
        raw = zstandard.ZstdDecompressor().stream_reader(f).read()
    docs = [json.loads(line)["text"].encode() + b"\0" for line in raw.decode().splitlines()]
    return np.frombuffer(b"".join(docs), dtype=np.uint8).astype(np.int64)


def batches(tokens: np.ndarray, n: int, batch: int, seq: int, seed: int) -> list[torch.Tensor]:
    """`n` batches of `batch` windows of seq+1 tokens at seeded random offsets."""
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(tokens) - seq - 1, size=(n, batch))
    return [torch.from_numpy(np.stack([tokens[s : s + seq + 1] for s in row])) for row in starts]


def train(margs: ModelArgs, optim: dict[str, Any], steps: int, train_b: list[torch.Tensor],
          valid_b: list[torch.Tensor], eval_every: int) -> dict[str, Any]:  # fmt: skip
    cfg = TrainConfig.model_validate({"optim": {"warmup_steps": steps // 10, "min_lr_ratio": 0.1, **optim}})
    with torch.device("meta"):
        model = Transformer(margs)
    model.to_empty(device="cpu")
    model.init_weights(seed=0)
    optims = build_optimizers([model], cfg)
    curve: list[tuple[int, float]] = []
    step_s: list[float] = []
    opt_s: list[float] = []
    for step in range(steps):
        t0 = time.perf_counter()
        set_lr(optims, lr_at(step, cfg.optim, steps), cfg.optim)
        for o in optims:
            o.zero_grad(set_to_none=True)
        b = train_b[step]
        loss = model(b[:, :-1], b[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.grad_clip)
        t1 = time.perf_counter()
        for o in optims:
            o.step()
        t2 = time.perf_counter()
        step_s.append(t2 - t0)
        opt_s.append(t2 - t1)
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            with torch.no_grad():
                val = statistics.fmean(float(model(v[:, :-1], v[:, 1:])) for v in valid_b)
            curve.append((step + 1, val))
            if not np.isfinite(val):
                break
    return {"curve": curve, "final": curve[-1][1], "step_s": statistics.median(step_s),
            "opt_s": statistics.median(opt_s)}  # fmt: skip


def first_reaching(curve: list[tuple[int, float]], target: float) -> int | None:
    return next((s for s, v in curve if v <= target), None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="debug,125m-narrow")
    ap.add_argument("--steps", default="400,150", help="steps per shape, in --shapes order")
    ap.add_argument(
        "--lrs", default="1e-3,3e-3,1e-2;3e-3,1e-2", help="learning rates per shape (';' between shapes)"
    )
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--eval-every", type=int, default=25)
    ap.add_argument("--out", default=str(RESULTS / "muon"))
    ap.add_argument(
        "--extend", action="store_true",
        help="add these learning rates to the runs already in OUT.json (same shapes, steps, batch, seq)",
    )  # fmt: skip
    args = ap.parse_args()
    # one thread: the CPU this was measured on is shared, and threads waiting on busy cores turned
    # a 64×64 matmul from microseconds into milliseconds; the ratios are per core
    torch.set_num_threads(1)
    tokens = token_stream()
    valid_tokens, train_tokens = tokens[: len(tokens) // 50], tokens[len(tokens) // 50 :]
    valid_b = batches(valid_tokens, 4, 16, args.seq, seed=1)
    report: dict[str, Any] = {"command": shlex.join(["python", "benchmarks/muon.py", *sys.argv[1:]]),
                              "batch": args.batch, "seq": args.seq, "tokens": len(tokens), "shapes": {}}  # fmt: skip
    if args.extend:
        report["command"] = (
            json.loads(Path(args.out + ".json").read_text())["command"] + " && " + report["command"]
        )
    shapes = args.shapes.split(",")
    for shape, steps_s, lrs_s in zip(shapes, args.steps.split(","), args.lrs.split(";"), strict=True):
        steps = int(steps_s)
        margs = model_args(ModelConfig(**SHAPES[shape], max_seq_len=args.seq), 256)
        train_b = batches(train_tokens, steps, args.batch, args.seq, seed=0)
        runs: dict[str, dict[str, Any]] = {}
        if args.extend:  # a sweep widened where a best rate sat at its edge
            before = json.loads(Path(args.out + ".json").read_text())
            assert (before["batch"], before["seq"], before["shapes"][shape]["steps"]) == (
                args.batch,
                args.seq,
                steps,
            )
            runs.update(before["shapes"][shape]["runs"])
        for lr in (float(x) for x in lrs_s.split(",")):
            for name in ("adamw", "muon"):  # interleaved: the machine's load falls on both alike
                r = train(margs, {"name": name, "lr": lr}, steps, train_b, valid_b, args.eval_every)
                runs[f"{name} lr {lr:g}"] = r
                print(f"{shape} {name} lr {lr:g}: val {r['final']:.4f}  step {r['step_s'] * 1e3:.0f} ms "
                      f"(optimizer {r['opt_s'] * 1e3:.1f} ms)", flush=True)  # fmt: skip
        best = {
            n: min((k for k in runs if k.startswith(n)), key=lambda k: runs[k]["final"])
            for n in ("adamw", "muon")
        }
        a, m = runs[best["adamw"]], runs[best["muon"]]
        ratio_step = statistics.median(
            runs[f"muon{k[5:]}"]["step_s"] / runs[k]["step_s"] for k in runs if k.startswith("adamw")
        )
        ratio_opt = statistics.median(
            runs[f"muon{k[5:]}"]["opt_s"] / runs[k]["opt_s"] for k in runs if k.startswith("adamw")
        )
        report["shapes"][shape] = {
            "model": {k: getattr(margs, k) for k in ("n_layers", "dim", "n_heads", "ffn_dim", "mlp", "vocab_size")},
            "steps": steps, "best": best, "runs": runs,
            "muon_steps_to_adamw_final": first_reaching(m["curve"], a["final"]),
            "adamw_steps_to_muon_final": first_reaching(a["curve"], m["final"]),
            "step_time_ratio": ratio_step, "optimizer_time_ratio": ratio_opt,
        }  # fmt: skip
    Path(args.out + ".json").write_text(json.dumps(report, indent=1))
    Path(args.out + ".md").write_text(table(report))
    print(table(report))


def table(report: dict[str, Any]) -> str:
    lines = [f"`{report['command']}` — batch {report['batch']} × seq {report['seq']}, byte tokens, fp32, one CPU process", "",
             "| shape | steps | AdamW best (lr → val) | Muon best (lr → val) | Muon steps to AdamW's final | AdamW steps to Muon's final | step time Muon/AdamW | optimizer step Muon/AdamW |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for shape, s in report["shapes"].items():
        a, m = s["best"]["adamw"], s["best"]["muon"]
        lines.append(
            f"| {shape} | {s['steps']} | {a[9:]} → {s['runs'][a]['final']:.3f} | {m[8:]} → {s['runs'][m]['final']:.3f} | "
            f"{s['muon_steps_to_adamw_final'] or 'not reached'} | {s['adamw_steps_to_muon_final'] or 'not reached'} | "
            f"{s['step_time_ratio']:.2f} | {s['optimizer_time_ratio']:.2f} |"
        )  # fmt: skip
    lines += ["", "All runs (final validation loss):", ""]
    for shape, s in report["shapes"].items():
        lines.append(f"- {shape}: " + ", ".join(f"{k} {r['final']:.3f}" for k, r in s["runs"].items()))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
