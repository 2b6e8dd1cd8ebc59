"""Training throughput (tokens/s, TFLOP/s, MFU) and activation memory against Korthikanti et al. 2022.

    python benchmarks/train.py [--preset debug] [--layers L --dim H --heads A --seq S --batch B] [--steps N]

One process, the model as built by selene (no parallelism: per-device figures), in fp32. MFU is against
training's peak (`selene.train.peak`: a GPU's data-sheet fp32 figure, a CPU's cores x clock x FLOPs per
cycle), and the step is also set against the fp32 matmul rate this device measures in the same run.

Activation memory: the bytes of the tensors autograd saves for backward during one forward pass,
counted with `saved_tensors_hooks` (unique storages), for recompute none / selective / full, next to
Korthikanti et al.'s per-layer formula (16-bit activations, no TP/SP): s·b·h·(34 + 5·a·s/h) bytes
without recomputation, 34·s·b·h selective, 2·s·b·h full (only the layer input). The formula assumes
the GPT block (LayerNorm, GELU MLP of 4h, dropout after attention and MLP): the benchmark builds that
shape, in fp32, so the measured bytes are compared with 2× the formula.

    python benchmarks/train.py --vs-hf [--shapes debug:512x8,125m:256x4,350m:256x2] [--precision fp32,bf16] [--compile]

selene's training step against Hugging Face's on the same hardware, in one process, the same threads:
each shape (preset:seq×batch, vocabulary --vocab) is built by selene's trainer (`SeleneStep`:
forward, backward, clipping, the trainer's AdamW) and as `LlamaForCausalLM` with the same weights,
trained the way `transformers.Trainer` trains it by default (`HFStep`: its own loss, torch's fused
AdamW, clipping, autocast for bf16). Their steps alternate, the first of each (allocation) is not
timed, and the medians are compared; both losses of the first step are printed (the same math).
`--compile` adds selene with each block compiled (`parallel.compile`, inductor), timed against the
same eager HF step after its own warm-up steps (compilation). `--compiled-only` times selene's compiled
step against HF's model under `torch.compile` instead (what each program's users run on a GPU; the
eager rows and the floor are skipped).

`--allocator reuse` sets glibc's malloc thresholds for the whole process, both programs (what
`selene train` does in its CPU ranks, `selene.train.host`: freed activations are reused rather than
page-faulted in anew each step); the default leaves glibc's own, what a plain `python` script gets.

`floor` is the share of HF's step spent in the kernels that fusion cannot shorten (matmuls, SDPA
attention, the fused AdamW: the same library calls in both programs), from --steps profiled HF steps
(self time, so a kernel's first touch of fresh pages counts in it); `bound` = 1 / floor is what a
step gains over HF's by removing everything else and running those kernels at HF's speed (Amdahl).
Above it a step must run fewer or faster matmuls, not fewer elementwise passes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._train_step import HFStep, SeleneStep, batch, device_here, sync, train_config  # noqa: E402
from selene.model.init import num_params  # noqa: E402
from selene.model.transformer import Transformer  # noqa: E402
from selene.train.args import model_args  # noqa: E402
from selene.train.config import ModelConfig  # noqa: E402
from selene.train.flops import flops_per_token, measured_matmul_tflops  # noqa: E402
from selene.train.host import reuse_freed_memory  # noqa: E402
from selene.train.parallelize import apply_ac  # noqa: E402
from selene.train.peak import device_peak  # noqa: E402


def build(cfg: ModelConfig, vocab: int, recompute: str, device: torch.device) -> tuple[Transformer, object]:
    args = model_args(cfg, vocab)
    with torch.device("meta"):
        model = Transformer(args)
    apply_ac(model, recompute)
    model.to_empty(device=device)
    model.init_weights(seed=0)
    return model, args


def saved_bytes(model: Transformer, tokens: torch.Tensor) -> int:
    """Bytes of activations autograd keeps for backward over one forward pass (each storage once, weights left out)."""
    seen: dict[int, int] = {}
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.device.type != "meta":
            st = t.untyped_storage()
            if st.data_ptr() not in weights:  # a matmul saves its weight: a parameter, not an activation
                seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = model(tokens)
    del logits
    return sum(seen.values())


Step = Callable[[torch.Tensor, torch.Tensor], float]

# The kernels a compiler leaves as they are: matmuls, attention, the optimizer's fused update.
FLOOR_OPS = frozenset({
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_fused_adamw_",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
    "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_flash_attention_backward",
    "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_efficient_attention_backward",
    "aten::_scaled_dot_product_cudnn_attention", "aten::_scaled_dot_product_cudnn_attention_backward",
})


def floor_share(step: Step, x: torch.Tensor, y: torch.Tensor, device: torch.device, steps: int) -> float:
    """The share of `steps` profiled steps spent in FLOOR_OPS (self time: CPU, or the device's on CUDA).
    On this CPU one step's share moves by ±5 points between runs; the steps are pooled."""
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    with profile(activities=[ProfilerActivity.CUDA if cuda else ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step(x, y)
        sync(device)
    events = prof.key_averages()

    def self_time(e: object) -> float:
        return float(getattr(e, "self_device_time_total" if cuda else "self_cpu_time_total"))

    total = sum(self_time(e) for e in events)
    return sum(self_time(e) for e in events if e.key in FLOOR_OPS) / total if total else float("nan")


def timed_pair(a: Step, b: Step, x: torch.Tensor, y: torch.Tensor, steps: int, warmup: int,
               device: torch.device) -> tuple[list[float], list[float], list[float], list[float]]:
    """Steps of `a` and `b` in alternation (which goes first alternates too): times and losses."""
    ta: list[float] = []
    tb: list[float] = []
    la: list[float] = []
    lb: list[float] = []
    for i in range(warmup + steps):
        order = ((a, ta, la), (b, tb, lb)) if i % 2 == 0 else ((b, tb, lb), (a, ta, la))
        for fn, times, losses in order:
            sync(device)
            t = time.perf_counter()
            losses.append(fn(x, y))
            times.append(time.perf_counter() - t)
    return ta[warmup:], tb[warmup:], la, lb


def vs_hf(args: argparse.Namespace) -> None:
    device = device_here()
    if args.allocator == "reuse" and not reuse_freed_memory():
        raise SystemExit("--allocator reuse: this C library takes no malloc thresholds (glibc only)")
    print(f"device: {device}, {torch.get_num_threads()} threads, allocator {args.allocator}; vocabulary {args.vocab}; "
          f"median of {args.steps} alternating steps after {args.warmup} untimed")
    head = (f"{'model':<8}{'params':>8}{'seq×b':>9}{'prec':>6}{'selene s':>10}{'HF s':>9}{'speed':>7}"
            f"{'tokens/s':>10}{'loss selene':>13}{'loss HF':>10}{'floor':>7}{'bound':>7}")
    if args.compile:
        head += f"{'compiled s':>12}{'speed':>7}"
    print(head)
    for spec in args.shapes.split(","):
        preset, _, size = spec.partition(":")
        seq, b = (int(v) for v in size.split("x"))
        x, y = batch(args.vocab, b, seq, device)
        for precision in args.precision.split(","):
            if args.compiled_only:
                compiled_pair(preset, seq, b, precision, x, y, args, device)
                continue
            sel = SeleneStep(train_config(preset, seq, args.vocab, precision, compile=False), device)
            hf = HFStep(sel)
            params = num_params(sel.model)
            ts, th, ls, lh = timed_pair(sel, hf, x, y, args.steps, args.warmup, device)
            sel.close()
            share = floor_share(hf, x, y, device, args.steps)
            s_med, h_med = statistics.median(ts), statistics.median(th)
            row = (f"{preset:<8}{params / 1e6:>7.0f}M{f'{seq}×{b}':>9}{precision:>6}{s_med:>10.3f}{h_med:>9.3f}"
                   f"{h_med / s_med:>6.2f}×{b * seq / s_med:>10,.0f}{ls[0]:>13.6f}{lh[0]:>10.6f}{share:>7.0%}"
                   f"{1 / share:>6.2f}×")
            if args.compile:
                comp = SeleneStep(train_config(preset, seq, args.vocab, precision, compile=True), device)
                tc, th2, _, _ = timed_pair(comp, hf, x, y, args.steps, args.warmup + 1, device)
                comp.close()
                c_med, h2_med = statistics.median(tc), statistics.median(th2)
                row += f"{c_med:>12.3f}{h2_med / c_med:>6.2f}×"
            hf.close()
            print(row, flush=True)
    print("speed: HF's step time over selene's (above 1: selene faster); compiled: against the HF steps "
          "timed beside it; floor: HF's time in matmuls, attention and AdamW; bound: 1 / floor")


def compiled_pair(preset: str, seq: int, b: int, precision: str, x: torch.Tensor, y: torch.Tensor,
                  args: argparse.Namespace, device: torch.device) -> None:
    """`--compiled-only`: selene's step with compiled blocks against HF's model under torch.compile,
    each as its users would run it fastest (on a GPU: bf16, SDPA flash attention, fused AdamW)."""
    sel = SeleneStep(train_config(preset, seq, args.vocab, precision, compile=True), device)
    hf = HFStep(sel, compile=True)
    params = num_params(sel.model)
    ts, th, ls, lh = timed_pair(sel, hf, x, y, args.steps, args.warmup + 1, device)
    sel.close()
    hf.close()
    s_med, h_med = statistics.median(ts), statistics.median(th)
    print(f"{preset:<8}{params / 1e6:>7.0f}M{f'{seq}×{b}':>9}{precision:>6}{s_med:>10.3f}{h_med:>9.3f}"
          f"{h_med / s_med:>6.2f}×{b * seq / s_med:>10,.0f}{ls[0]:>13.6f}{lh[0]:>10.6f}  (both compiled; "
          f"HF {b * seq / h_med:,.0f} tokens/s)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vs-hf", action="store_true", help="selene's training step against LlamaForCausalLM's")
    ap.add_argument("--shapes", default="debug:512x8,125m:256x4,350m:256x2", help="preset:seq×batch, comma-separated")
    ap.add_argument("--precision", default="fp32,bf16")
    ap.add_argument("--compile", action="store_true", help="--vs-hf: also selene with compiled blocks")
    ap.add_argument("--compiled-only", action="store_true",
                    help="--vs-hf: only selene with compiled blocks against HF's model under torch.compile")
    ap.add_argument("--allocator", choices=("glibc", "reuse"), default="glibc",
                    help="--vs-hf: glibc's default malloc thresholds, or selene train's (both programs)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--preset", default="debug")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=None, help="default: 32000 with --vs-hf, else 8192")
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    if args.vs_hf:
        args.vocab = args.vocab or 32000
        vs_hf(args)
        return
    args.vocab = args.vocab or 8192
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    matmul = measured_matmul_tflops(device, torch.float32, n=2048)  # the step's math: fp32, TF32 not enabled here
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = device_peak(device.type, name, "fp32", None)  # the bound training's MFU divides by

    # throughput: the preset's architecture at the benchmark's shape
    cfg = ModelConfig(preset=args.preset, n_layers=args.layers, dim=args.dim, n_heads=args.heads, ffn_dim=4 * args.dim, max_seq_len=args.seq)  # type: ignore[arg-type]
    model, margs = build(cfg, args.vocab, "none", device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device)
    x, y = tokens[:, :-1], tokens[:, 1:]
    times = []
    for _ in range(args.steps + 1):
        t = time.perf_counter()
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    step = sorted(times[1:])[len(times[1:]) // 2]  # median, first step (allocation) excluded
    tps = args.batch * args.seq / step
    tflops = flops_per_token(margs, args.seq) * tps / 1e12
    mfu = f"{tflops / peak.tflops:.1%}" if peak.tflops else "n/a"
    print(f"device: {device}; peak {peak.tflops or float('nan'):.3f} TFLOP/s ({peak.origin}); fp32 matmul measured here: {matmul:.3f} TFLOP/s")
    print(f"model: {args.preset} architecture, {args.layers} layers × dim {args.dim}, {num_params(model) / 1e6:.1f}M params")
    print(f"throughput: {tps:,.0f} tokens/s, {tflops:.3f} TFLOP/s, MFU {mfu}, {tflops / matmul:.1%} of the measured matmul (batch {args.batch} × seq {args.seq})")

    # activation memory: the GPT block Korthikanti's formula describes
    gpt = ModelConfig(preset="mt-nlg-530b", n_layers=args.layers, dim=args.dim, n_heads=args.heads, ffn_dim=4 * args.dim, max_seq_len=args.seq, dropout=0.1)
    s, b, h, a, L = args.seq, args.batch, args.dim, args.heads, args.layers
    formula = {"none": s * b * h * (34 + 5 * a * s / h), "selective": 34 * s * b * h, "full": 2 * s * b * h}
    print(f"\nactivation memory per layer (fp32 = 2 × the 16-bit formula), s={s} b={b} h={h} a={a}, {L} layers")
    print(f"{'recompute':<12}{'measured MiB':>14}{'formula MiB':>14}{'ratio':>8}")
    for mode in ("none", "selective", "full"):
        m, _ = build(gpt, args.vocab, mode, device)
        m.train()
        # the embedding/output layers are outside the per-layer formula: subtract a 0-layer model's bytes
        base, _ = build(gpt.model_copy(update={"n_layers": 1}), args.vocab, mode, device)
        toks = torch.randint(0, args.vocab, (b, s), device=device)
        per_layer = (saved_bytes(m, toks) - saved_bytes(base, toks)) / (L - 1)
        want = 2 * formula[mode]
        print(f"{mode:<12}{per_layer / 2**20:>14.2f}{want / 2**20:>14.2f}{per_layer / want:>8.2f}")


if __name__ == "__main__":
    main()
