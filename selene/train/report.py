"""The training stage's part of the run report (`selene.report`)."""

from __future__ import annotations

import json
import os

from selene.train.metrics import read_metrics


def report_section(stage_dir: str, run_dir: str) -> tuple[str, list[str]]:
    """The run report's training section: loss, throughput, memory and layout, from metrics.jsonl."""
    path = os.path.join(stage_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return "Training", ["(not trained yet)"]
    records = read_metrics(path)
    if not records:
        return "Training", ["(no steps logged)"]
    last = records[-1]
    val = [r for r in records if "val_loss" in r]
    speed = records[len(records) // 2 :]  # steady state: the second half of the run
    tps = sum(r["tokens_per_s"] for r in speed) / len(speed)
    mfu = sum(r["mfu"] for r in speed) / len(speed)
    tflops = sum(r["tflops_per_device"] for r in speed) / len(speed)
    out = [
        f"![training loss]({os.path.relpath(os.path.join(stage_dir, 'loss.svg'), run_dir)})",
        "",
        f"- steps: {last['step']}, tokens: {last['tokens']:,}",
        f"- loss: {records[0]['loss']:.4f} → {last['loss']:.4f}"
        + (f"; validation loss {val[0]['val_loss']:.4f} → {val[-1]['val_loss']:.4f}" if val else ""),
        f"- throughput (second half of the run): {tps:,.0f} tokens/s, {tflops:.4f} TFLOP/s per device, MFU {mfu:.1%}",
        f"- peak memory: {max(r.get('peak_memory_gib', 0.0) for r in records):.2f} GiB",
    ]
    run_info = os.path.join(stage_dir, "run.json")
    if os.path.exists(run_info):
        with open(run_info) as f:
            info = json.load(f)
        out.append(
            f"- layout: {info.get('layout')}; peak {info.get('peak_tflops', 0):.3f} TFLOP/s ({info.get('peak_source')})"
        )
    return "Training", out
