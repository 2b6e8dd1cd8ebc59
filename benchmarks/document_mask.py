"""What a document mask costs a training step: masked vs causal, the same model and data, one run.

    python benchmarks/document_mask.py                               # debug @ 64 and 125m @ 256 tokens
    python benchmarks/document_mask.py --shape 125m:512:1 --repeat 5  # preset:seq:batch, any number

Each shape builds selene's one-process training step (`benchmarks/_train_step.SeleneStep`: the
trainer's model, AdamW, forward_backward and clipping) and times steps on packed samples whose
documents have geometric lengths (mean `--doc-tokens`, default seq/4: a 2048-token sample of web
text holds a few documents), with `ParallelModel.masking` off (causal) and on (document mask),
alternating so that a change in the machine's load hits both. It prints the median step times and
their ratio, the same for the process's CPU time (on a shared machine the wall clock also counts
other programs' work; `--threads 1`, the default, keeps the CPU time one core's), and the share of causal attention blocks that FlexAttention executes on these samples
(what a GPU run skips). On CPU the mask is the dense SDPA reference; on CUDA, FlexAttention.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._train_step import SeleneStep, device_here, sync, train_config
from selene.model.masks import DocumentMasking, document_ids, executed_attention_fraction

VOCAB = 32000
EOD = 2


def packed(batch: int, seq: int, doc_tokens: float, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Samples cut from a stream of documents of geometric lengths (mean `doc_tokens`), EOD-terminated."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(EOD + 1, VOCAB, size=(batch, seq + 1))
    for row in rows:
        end = int(rng.integers(0, doc_tokens))  # the sample starts inside a document
        while end <= seq:
            row[end] = EOD
            end += int(rng.geometric(1.0 / doc_tokens))
    t = torch.from_numpy(rows)
    return t[:, :-1].contiguous(), t[:, 1:].contiguous()


def measure(preset: str, seq: int, batch: int, repeat: int, doc_tokens: float, device: torch.device) -> dict:
    cfg = train_config(preset, seq, VOCAB, "bf16" if device.type == "cuda" else "fp32", compile=False)
    step = SeleneStep(cfg, device)
    x, y = (t.to(device) for t in packed(batch, seq, doc_tokens))
    masking = DocumentMasking(EOD)
    times: dict[str, list[float]] = {"causal": [], "masked": []}
    cpu: dict[str, list[float]] = {"causal": [], "masked": []}
    for i in range(repeat + 1):
        for name in ("causal", "masked"):
            step.pm.masking = masking if name == "masked" else None
            sync(device)
            t, c = time.perf_counter(), time.process_time()
            step(x, y)
            sync(device)
            if i:  # the first round warms up (allocator, kernels, compilation)
                times[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
    step.close()
    causal, masked = statistics.median(times["causal"]), statistics.median(times["masked"])
    cpu_causal, cpu_masked = statistics.median(cpu["causal"]), statistics.median(cpu["masked"])
    return {
        "preset": preset, "seq": seq, "batch": batch, "device": str(device), "doc_tokens": doc_tokens,
        "causal_ms": 1e3 * causal, "masked_ms": 1e3 * masked, "ratio": masked / causal,
        "cpu_causal_ms": 1e3 * cpu_causal, "cpu_masked_ms": 1e3 * cpu_masked, "cpu_ratio": cpu_masked / cpu_causal,
        "flex_block_share": executed_attention_fraction(document_ids(x.cpu(), EOD)),
        "documents_per_sample": float((x == EOD).sum(1).float().mean()) + 1,
    }  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", action="append", help="preset:seq:batch (default debug:64:8 and 125m:256:2)")
    p.add_argument("--repeat", type=int, default=5, help="timed steps per mode (after one warm-up each)")
    p.add_argument("--doc-tokens", type=float, default=None, help="mean document length (default seq/4)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (CPU)")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    device = device_here()
    rows = []
    for shape in a.shape or ["debug:64:8", "125m:256:2"]:
        preset, seq, batch = shape.split(":")
        rows.append(measure(preset, int(seq), int(batch), a.repeat, a.doc_tokens or int(seq) / 4, device))
        r = rows[-1]
        print(f"{r['preset']:>6} seq {r['seq']:>5} batch {r['batch']:>2} on {r['device']}: causal "
              f"{r['causal_ms']:8.1f} ms  masked {r['masked_ms']:8.1f} ms  ratio {r['ratio']:.3f}; CPU time "
              f"{r['cpu_causal_ms']:8.1f} / {r['cpu_masked_ms']:8.1f} ms  ratio {r['cpu_ratio']:.3f}  "
              f"({r['documents_per_sample']:.1f} documents a sample; FlexAttention would run "
              f"{100 * r['flex_block_share']:.0f}% of causal attention's blocks)", flush=True)  # fmt: skip
    # what a GPU run at full length would skip: samples of 2048 and 8192 tokens, documents of mean 512
    for seq in (2048, 8192):
        share = executed_attention_fraction(document_ids(packed(64, seq, 512)[0], EOD))
        print(
            f"seq {seq}, documents of mean 512 tokens: FlexAttention runs {100 * share:.0f}% of causal attention's blocks"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
