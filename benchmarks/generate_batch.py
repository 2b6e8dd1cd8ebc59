"""Batched KV-cache generation on CPU: tokens/s at batch 1, 4, 16 and prompts of 64 and 512 tokens.

    python benchmarks/generate_batch.py [--preset small|debug|125m] [--batches 1,4,16] [--prompts 64,512]
        [--new 32] [--repeats 3] [--threads N] [--json FILE]

For each (prompt length, batch) the model (random weights, eval mode) greedily generates `--new` tokens
after `batch` prompts of random ids (no stop id, so every row runs to the end) through
`selene.eval.generate.generate_batch`, `--repeats` times after one untimed warm-up. Reported: tokens/s
(generated tokens / wall time of the call, prefill included; the median over repeats), its ratio to
batch 1 at the same prompt length (what batching buys), decode-only tokens/s (tokens after the first /
the decode steps' time), TTFT p50/p99 (prefill + first sample, one per
call) and ITL p50/p99 (one per decode step of the batch) from `timing_summary`. The `small` preset is
the `debug` Llama with dim 256, 4 heads, ffn 768, vocab 8192, max_seq_len 1024 (7.6M parameters).

Measured 2026-11-24 on 2 shared cores (load average ~3.1: another job running), CPU, torch 2 threads:
    python benchmarks/generate_batch.py
    preset small: 7.6M parameters, 2 threads, 32 new tokens
    prompt   64 batch   1:   280.7 tokens/s  x 1.00 vs batch 1  (decode only   296.6 tokens/s)  TTFT p50      9.1 ms p99      9.9 ms  ITL p50    3.4 ms p99    4.0 ms
    prompt   64 batch   4:   699.0 tokens/s  x 2.49 vs batch 1  (decode only   779.1 tokens/s)  TTFT p50     23.1 ms p99     24.1 ms  ITL p50    5.1 ms p99    6.3 ms
    prompt   64 batch  16:  1752.1 tokens/s  x 6.24 vs batch 1  (decode only  2357.0 tokens/s)  TTFT p50     80.8 ms p99     83.3 ms  ITL p50    6.5 ms p99    9.6 ms
    prompt  512 batch   1:   188.5 tokens/s  x 1.00 vs batch 1  (decode only   254.7 tokens/s)  TTFT p50     46.9 ms p99     47.3 ms  ITL p50    3.9 ms p99   92.3 ms
    prompt  512 batch   4:   301.1 tokens/s  x 1.60 vs batch 1  (decode only   541.3 tokens/s)  TTFT p50    194.6 ms p99    197.8 ms  ITL p50    7.0 ms p99   13.7 ms
    prompt  512 batch  16:   391.6 tokens/s  x 2.08 vs batch 1  (decode only  1066.6 tokens/s)  TTFT p50    863.2 ms p99   2200.5 ms  ITL p50   13.8 ms p99  588.2 ms
    python benchmarks/generate_batch.py --threads 1
    preset small: 7.6M parameters, 1 threads, 32 new tokens
    prompt   64 batch   1:   252.6 tokens/s  x 1.00 vs batch 1  (decode only   276.2 tokens/s)  TTFT p50     13.3 ms p99     13.7 ms  ITL p50    3.6 ms p99    4.1 ms
    prompt   64 batch   4:   601.3 tokens/s  x 2.38 vs batch 1  (decode only   726.7 tokens/s)  TTFT p50     40.1 ms p99     41.2 ms  ITL p50    5.6 ms p99    6.6 ms
    prompt   64 batch  16:  1199.5 tokens/s  x 4.75 vs batch 1  (decode only  1818.7 tokens/s)  TTFT p50    152.9 ms p99    153.8 ms  ITL p50    8.8 ms p99   11.6 ms
    prompt  512 batch   1:   155.7 tokens/s  x 1.00 vs batch 1  (decode only   255.8 tokens/s)  TTFT p50     85.9 ms p99     85.9 ms  ITL p50    3.9 ms p99    4.9 ms
    prompt  512 batch   4:   191.9 tokens/s  x 1.23 vs batch 1  (decode only   473.4 tokens/s)  TTFT p50    404.3 ms p99    412.3 ms  ITL p50    8.1 ms p99   15.0 ms
    prompt  512 batch  16:   228.4 tokens/s  x 1.47 vs batch 1  (decode only   744.0 tokens/s)  TTFT p50   1573.1 ms p99   1733.6 ms  ITL p50   19.5 ms p99   37.9 ms
Under a heavier load (load average 3.7-4.2 on the 2 cores, 2 threads) the same run gave x0.93 / x4.75 at
prompt 64 and x1.71 / x3.08 at prompt 512 with ITL p99 up to 0.9 s: read the medians on a busy machine.
With 512-token prompts and 32 new tokens the prefill (TTFT) dominates the wall time, so batching buys
less end to end than in decode alone (the decode-only column).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from selene.eval.checkpoint_io import cast
from selene.eval.generate import generate_batch, timing_summary
from selene.model.args import PRESETS, ModelArgs
from selene.model.transformer import Transformer


def model_args(preset: str) -> ModelArgs:
    if preset == "small":
        return dataclasses.replace(
            PRESETS["debug"], dim=256, n_heads=4, ffn_dim=768, vocab_size=8192, max_seq_len=1024
        )
    args = PRESETS[preset]
    if preset == "debug":
        args = dataclasses.replace(args, max_seq_len=1024)
    # Presets leave the vocabulary to the tokenizer (0): take 8192, and at most 32000.
    return dataclasses.replace(args, vocab_size=min(args.vocab_size or 8192, 32000))


def timed(model: Transformer, args: ModelArgs, prompts: list[list[int]], new: int, repeats: int) -> list:
    generate_batch(model, args, prompts, 2, temperature=0, stop_ids=())  # warm-up (and a graph's capture)
    return [generate_batch(model, args, prompts, new, temperature=0, stop_ids=()) for _ in range(repeats)]


@contextlib.contextmanager
def graphs(mode: str):  # type: ignore[no-untyped-def]
    old = os.environ.get("SELENE_CUDA_GRAPHS")
    os.environ["SELENE_CUDA_GRAPHS"] = mode
    try:
        yield
    finally:
        if old is None:
            del os.environ["SELENE_CUDA_GRAPHS"]
        else:
            os.environ["SELENE_CUDA_GRAPHS"] = old


def hf_peer(model: Transformer, args: ModelArgs, dtype: torch.dtype, device: torch.device):  # type: ignore[no-untyped-def]
    """`LlamaForCausalLM` holding the same weights (selene's export mapping), as lm-eval's `hf` model loads it."""
    from transformers import LlamaForCausalLM

    from selene.eval.export import check_exportable, hf_config, hf_state_dict

    check_exportable(args)
    config = hf_config(args)
    config._attn_implementation = "sdpa"
    with torch.device(device):
        hf = LlamaForCausalLM(config)
    missing, unexpected = hf.load_state_dict(hf_state_dict(model, args), strict=False)
    if unexpected or [k for k in missing if "rotary" not in k]:
        raise RuntimeError(f"HF model does not take selene's weights: missing {missing}, unexpected {unexpected}")
    inv_freq = hf.model.rotary_emb.inv_freq.clone()
    hf.to(dtype)
    hf.model.rotary_emb.inv_freq = inv_freq  # the rotary frequencies stay fp32, as selene's tables do
    return hf.eval()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def hf_timing(hf, prompts: list[list[int]], new: int, repeats: int, device: torch.device) -> dict:  # type: ignore[no-untyped-def]
    """TTFT: `generate` of one token; ITL: the rest of a `new`-token generate over its further steps
    (medians over repeats, after a warm-up), greedy, every row to the end."""
    ids = torch.tensor(prompts, device=device)
    mask = torch.ones_like(ids)

    def run(n: int) -> float:
        _sync(device)
        t0 = time.perf_counter()
        hf.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                    pad_token_id=0, eos_token_id=None)
        _sync(device)
        return time.perf_counter() - t0

    run(2)
    first = statistics.median(run(1) for _ in range(repeats))
    whole = statistics.median(run(new) for _ in range(repeats))
    return {"ttft_ms": first * 1e3, "itl_ms": (whole - first) / (new - 1) * 1e3, "tokens_per_s": len(prompts) * new / whole}


@torch.no_grad()
def same_tokens(hf, model: Transformer, args: ModelArgs, prompts: list[list[int]], new: int,  # type: ignore[no-untyped-def]
                device: torch.device) -> float:
    """The share of greedy tokens that HF and selene agree on (up to each row's first difference: bf16
    kernels round differently, and a near tie then sends the two down different continuations)."""
    ids = torch.tensor(prompts, device=device)
    theirs = hf.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                         do_sample=False, pad_token_id=0, eos_token_id=None)[:, ids.shape[1]:].tolist()
    ours = generate_batch(model, args, prompts, new, temperature=0, stop_ids=()).tokens
    agree = 0
    for a, b in zip(theirs, ours, strict=True):
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            agree += 1
    return agree / (len(prompts) * new)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="small")
    ap.add_argument("--batches", default="1,4,16")
    ap.add_argument("--prompts", default="64,512")
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", default=None)
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="auto: cuda when there is one")
    ap.add_argument("--dtype", choices=("fp32", "bf16"), default=None, help="weights: default bf16 on cuda, fp32 on cpu")
    ap.add_argument("--vs-eager", action="store_true",
                    help="on CUDA, each shape again with eager decode steps (SELENE_CUDA_GRAPHS=off): ITL ratio")
    ap.add_argument("--vs-hf", action="store_true",
                    help="each shape again through Hugging Face LlamaForCausalLM.generate with the same weights "
                         "(greedy, its default dynamic cache, SDPA): ITL and TTFT ratios")
    opts = ap.parse_args()
    torch.set_num_threads(opts.threads)
    device = torch.device("cuda" if opts.device == "cuda" or (opts.device == "auto" and torch.cuda.is_available()) else "cpu")
    dtype = torch.bfloat16 if (opts.dtype or ("bf16" if device.type == "cuda" else "fp32")) == "bf16" else torch.float32
    args = model_args(opts.preset)
    with torch.device("meta"):
        model = Transformer(args)
    model.to_empty(device=device)
    model.init_weights(device, seed=0)  # made where it runs: a 1.3b model's init on the host takes long
    cast(model, dtype)  # as `selene generate` loads it: the rotary tables stay fp32
    model.eval()
    params = sum(p.numel() for p in model.parameters())
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"preset {opts.preset}: {params / 1e6:.1f}M parameters, {where}, {dtype}, {opts.new} new tokens")
    hf_model = hf_peer(model, args, dtype, device) if opts.vs_hf else None
    gen = torch.Generator().manual_seed(0)
    rows = []
    for plen in [int(x) for x in opts.prompts.split(",")]:
        base = None
        for batch in [int(x) for x in opts.batches.split(",")]:
            prompts = torch.randint(2, args.vocab_size, (batch, plen), generator=gen).tolist()
            runs = timed(model, args, prompts, opts.new, opts.repeats)
            summary = timing_summary(runs)
            rate = statistics.median(r.generated / r.total_s for r in runs)
            decode = statistics.median((r.generated - batch) / sum(r.itl_s) for r in runs)
            base = rate if base is None else base
            row = {"prompt": plen, "batch": batch, "tokens_per_s": rate, "vs_batch1": rate / base,
                   "decode_tokens_per_s": decode, **{
                k: summary[k] for k in ("ttft_ms_p50", "ttft_ms_p99", "itl_ms_p50", "itl_ms_p99")}}
            line = ""
            if opts.vs_eager and device.type == "cuda":
                with graphs("off"):
                    eager = timing_summary(timed(model, args, prompts, opts.new, opts.repeats))
                row["eager"] = {k: eager[k] for k in ("ttft_ms_p50", "itl_ms_p50", "tokens_per_s")}
                row["graph_setup_s"] = summary["graph_setup_s"]
                line += f"  eager ITL p50 {eager['itl_ms_p50']:.2f} ms (graphs x{eager['itl_ms_p50'] / row['itl_ms_p50']:.2f})"
            if opts.vs_hf:
                hf = hf_timing(hf_model, prompts, opts.new, opts.repeats, device)
                hf["same_tokens"] = same_tokens(hf_model, model, args, prompts, opts.new, device)
                row["hf"] = hf
                line += (f"  HF TTFT {hf['ttft_ms']:.1f} ms ITL {hf['itl_ms']:.2f} ms (selene x{hf['itl_ms'] / row['itl_ms_p50']:.2f} "
                         f"ITL, x{hf['ttft_ms'] / row['ttft_ms_p50']:.2f} TTFT; greedy tokens equal: {hf['same_tokens']:.0%})")
            rows.append(row)
            print(
                f"prompt {plen:4d} batch {batch:3d}: {rate:7.1f} tokens/s  x{rate / base:5.2f} vs batch 1  "
                f"(decode only {decode:7.1f} tokens/s)  "
                f"TTFT p50 {row['ttft_ms_p50']:8.1f} ms p99 {row['ttft_ms_p99']:8.1f} ms  "
                f"ITL p50 {row['itl_ms_p50']:6.2f} ms p99 {row['itl_ms_p99']:6.2f} ms" + line,
                flush=True,
            )
    if opts.json:
        Path(opts.json).write_text(json.dumps({"preset": opts.preset, "params": params, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
