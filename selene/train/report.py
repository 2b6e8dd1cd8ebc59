"""The training stage's part of the run report (`selene.report`)."""

from __future__ import annotations

import json
import os
from typing import Any

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
    mfus = [r["mfu"] for r in speed if "mfu" in r]  # none where the device has no known peak
    tflops = sum(r["tflops_per_device"] for r in speed) / len(speed)
    out = [
        f"![training loss]({os.path.relpath(os.path.join(stage_dir, 'loss.svg'), run_dir)})",
        "",
        f"- steps: {last['step']}, tokens: {last['tokens']:,}",
        f"- loss: {records[0]['loss']:.4f} → {last['loss']:.4f}"
        + (f"; validation loss {val[0]['val_loss']:.4f} → {val[-1]['val_loss']:.4f}" if val else ""),
        f"- throughput (second half of the run): {tps:,.0f} tokens/s, {tflops:.4f} TFLOP/s per device"
        + (f", MFU {sum(mfus) / len(mfus):.1%}" if mfus else ", MFU not reported (no known peak)"),
        f"- peak memory: {max(r.get('peak_memory_gib', 0.0) for r in records):.2f} GiB",
    ]
    run_info = os.path.join(stage_dir, "run.json")
    if os.path.exists(run_info):
        with open(run_info) as f:
            info = json.load(f)
        out.append(f"- layout: {info.get('layout')}; {peak_text(info)}")
    return "Training", out


def peak_text(info: dict[str, Any]) -> str:
    """The peak MFU divides by and its origin, from run.json (`selene.train.peak`)."""
    peak = info.get("peak_tflops")
    if not peak:
        return f"MFU peak: none ({info.get('peak_source')})"
    return f"MFU peak {peak:.4g} TFLOP/s per device ({info.get('peak_source')})"
