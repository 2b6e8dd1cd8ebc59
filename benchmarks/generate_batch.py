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
import dataclasses
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from selene.eval.checkpoint_io import cast
from selene.eval.generate import generate_batch, timing_summary
from selene.train.model import PRESETS, ModelArgs, Transformer


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
    gen = torch.Generator().manual_seed(0)
    rows = []
    for plen in [int(x) for x in opts.prompts.split(",")]:
        base = None
        for batch in [int(x) for x in opts.batches.split(",")]:
            prompts = torch.randint(2, args.vocab_size, (batch, plen), generator=gen).tolist()
            generate_batch(model, args, prompts, 2, temperature=0, stop_ids=())  # warm-up
            runs = [generate_batch(model, args, prompts, opts.new, temperature=0, stop_ids=()) for _ in range(opts.repeats)]
            summary = timing_summary(runs)
            rate = statistics.median(r.generated / r.total_s for r in runs)
            decode = statistics.median((r.generated - batch) / sum(r.itl_s) for r in runs)
            base = rate if base is None else base
            row = {"prompt": plen, "batch": batch, "tokens_per_s": rate, "vs_batch1": rate / base,
                   "decode_tokens_per_s": decode, **{
                k: summary[k] for k in ("ttft_ms_p50", "ttft_ms_p99", "itl_ms_p50", "itl_ms_p99")}}
            rows.append(row)
            print(
                f"prompt {plen:4d} batch {batch:3d}: {rate:7.1f} tokens/s  x{rate / base:5.2f} vs batch 1  "
                f"(decode only {decode:7.1f} tokens/s)  "
                f"TTFT p50 {row['ttft_ms_p50']:8.1f} ms p99 {row['ttft_ms_p99']:8.1f} ms  "
                f"ITL p50 {row['itl_ms_p50']:6.1f} ms p99 {row['itl_ms_p99']:6.1f} ms",
                flush=True,
            )
    if opts.json:
        Path(opts.json).write_text(json.dumps({"preset": opts.preset, "params": params, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
