"""Serving study: selene's batched generation measured on this machine, and the serving planner's
constants fitted to it, so that `selene plan serve --gpu cpu --calibration FILE` predicts what
`selene generate --batch` measures here.

Each point is a model preset (random weights: time does not depend on them), a batch of prompts of
one length and a number of new tokens, run by `selene.eval.generate.generate_batch` (one forward
for the prefill of the whole batch, one per decode step) with greedy sampling and no stop token.
TTFT is the best of `repeats` runs (prefill + first sample); ITL the median step over all runs.

The device is measured the way a serving process uses it, with torch's threads as configured: the
fp32 matmul rate (n = 1024) is its peak, a 256 MiB copy its memory bandwidth (read + write bytes),
and RAM its memory (`measure_device`).

`fit` finds the four serving constants of `selene.plan.serve.Efficiency` by least squares on
log(predicted / measured) over the points: `prefill_efficiency` (fraction of peak prefill reaches),
`decode_efficiency` (fraction of the bandwidth a memory-bound decode step reaches),
`decode_compute_efficiency` (fraction of peak of a compute-bound one) and `layer_overhead_s` (fixed
seconds per layer per forward: on a CPU, PyTorch's dispatch of a layer's dozen operators). The
prediction is the planner's own (`make_serve_plan` pinned to TP 1, PP 1 and the batch), so the fit
checks the planner's formulas, not a copy of them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selene.plan.devices import DeviceSpec
from selene.plan.serve import Efficiency, ServeModel, ServeRequest, make_serve_plan, shape_from_preset

CPU_NAME = "cpu"


@dataclass(frozen=True)
class Point:
    """One measured (or predicted) serving point."""

    preset: str
    batch: int
    prompt: int
    output: int
    ttft_s: float
    itl_s: float


def cpu_spec(peak_tflops: float, bandwidth_gbps: float, memory_gb: float, source: str) -> DeviceSpec:
    """This CPU as the serving planner's device: one "GPU" (one process, all its threads)."""
    return DeviceSpec(
        CPU_NAME, peak_tflops=peak_tflops, memory_gb=memory_gb, hbm_gbps=bandwidth_gbps, intra_node_gbps=1.0,
        inter_node_gbps=1.0, gpus_per_node=1, max_efficiency=1.0, half_work=1.0, calibrated_from=source,
    )  # fmt: skip


def measure_device() -> DeviceSpec:
    """Peak fp32 matmul rate, copy bandwidth and memory of this machine, at torch's thread count."""
    import torch

    from selene.train.flops import measured_matmul_tflops

    peak = max(measured_matmul_tflops(torch.device("cpu"), torch.float32, n=1024, repeat=5) for _ in range(3))
    src = torch.ones(64 * 2**20)  # 256 MiB
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t0)
    bandwidth = 2 * src.numel() * 4 / best / 1e9
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    return cpu_spec(peak, bandwidth, memory, f"measured: fp32 matmul, copy, {torch.get_num_threads()} threads")


def measure(
    preset: str, batches: Sequence[int], prompts: Sequence[int], output: int, vocab: int = 32000,
    repeats: int = 2, seed: int = 0,
) -> list[Point]:  # fmt: skip
    """Greedy batched generation of `preset` (random weights, fp32) at every batch × prompt length."""
    import torch

    from selene.eval.generate import generate_batch
    from selene.train.args import PRESETS
    from selene.train.model import Transformer

    args = dataclasses.replace(PRESETS[preset], vocab_size=vocab, max_seq_len=max(prompts) + output + 1)
    torch.manual_seed(seed)
    model = Transformer(args).eval()
    gen = torch.Generator().manual_seed(seed)
    out = []
    with torch.inference_mode():
        generate_batch(model, args, [[1] * 8], 2, temperature=0.0, stop_ids=())  # warm-up
        for prompt in prompts:
            for batch in batches:
                ids = torch.randint(2, vocab, (batch, prompt), generator=gen).tolist()
                ttft, steps = math.inf, []
                for _ in range(repeats):
                    r = generate_batch(model, args, ids, output, temperature=0.0, stop_ids=())
                    ttft = min(ttft, r.ttft_s)
                    steps += r.itl_s
                out.append(Point(preset, batch, prompt, output, ttft, statistics.median(steps)))
    return out


def predict(point: Point, dev: DeviceSpec, eff: Efficiency, vocab: int = 32000) -> Point:
    """The serving planner's TTFT and ITL for `point` (TP 1, PP 1, its batch, fp32 weights and KV)."""
    shape = shape_from_preset(point.preset, vocab)
    req = ServeRequest(
        ServeModel(shape, shape.heads), 1, dev, point.prompt, point.output, point.batch, "fp32", "fp32",
        tp=1, pp=1, top=1, efficiency=eff,
    )  # fmt: skip
    row = make_serve_plan(req)["layouts"][0]
    return dataclasses.replace(point, ttft_s=row["ttft_ms"] / 1e3, itl_s=row["itl_ms"] / 1e3)


def _log_error(points: Sequence[Point], dev: DeviceSpec, eff: Efficiency, vocab: int, which: str) -> float:
    total = 0.0
    for p in points:
        q = predict(p, dev, eff, vocab)
        if which in ("ttft", "both"):
            total += math.log(q.ttft_s / p.ttft_s) ** 2
        if which in ("itl", "both"):
            total += math.log(q.itl_s / p.itl_s) ** 2
    return total


def _grid(lo: float, hi: float, n: int) -> list[float]:
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


def fit(points: Sequence[Point], dev: DeviceSpec, vocab: int = 32000) -> Efficiency:
    """The Efficiency that minimises the squared log error of TTFT and ITL over `points`: for each
    per-layer overhead on a log grid, the prefill efficiency (TTFT) and the two decode efficiencies
    (ITL) on log grids, refined once around the best."""
    best: tuple[float, Efficiency] | None = None
    for overhead in [0.0, *_grid(1e-6, 1e-2, 25)]:
        base = Efficiency(layer_overhead_s=overhead)
        pf = min(_grid(0.02, 1.0, 30), key=lambda e: _log_error(points, dev, dataclasses.replace(base, prefill=e), vocab, "ttft"))
        eff = dataclasses.replace(base, prefill=pf)
        pairs = [(h, c) for h in _grid(0.05, 1.0, 12) for c in _grid(0.02, 1.0, 12)]
        h, c = min(pairs, key=lambda hc: _log_error(points, dev, dataclasses.replace(eff, decode_hbm=hc[0], decode_compute=hc[1]), vocab, "itl"))
        eff = dataclasses.replace(eff, decode_hbm=h, decode_compute=c)
        err = _log_error(points, dev, eff, vocab, "both")
        if best is None or err < best[0]:
            best = (err, eff)
    assert best is not None
    err, eff = best
    # refine each constant on a finer grid around its value, the others fixed
    for field, lo, hi in (("layer_overhead_s", 0.5, 2.0), ("prefill", 0.8, 1.25), ("decode_hbm", 0.8, 1.25), ("decode_compute", 0.8, 1.25)):
        v = getattr(eff, field) or 0.0
        if v == 0:
            continue
        cands = [v * f for f in _grid(lo, hi, 15)]
        if field != "layer_overhead_s":
            cands = [min(1.0, x) for x in cands]
        eff = min((dataclasses.replace(eff, **{field: x}) for x in cands), key=lambda e: _log_error(points, dev, e, vocab, "both"))
    return eff


def calibration_json(dev: DeviceSpec, eff: Efficiency, points: Sequence[Point], source: str) -> dict[str, Any]:
    """The calibration file `selene plan serve --gpu cpu --calibration` reads (see `load_calibration`)."""
    return {
        "prefill_efficiency": eff.prefill,
        "decode_efficiency": eff.decode_hbm,
        "decode_compute_efficiency": eff.decode_compute,
        "layer_overhead_s": eff.layer_overhead_s,
        "measured_device": {"name": dev.name, "peak_tflops": dev.peak_tflops, "hbm_gbps": dev.hbm_gbps, "memory_gb": dev.memory_gb,
                            "source": dev.calibrated_from},
        "points": [dataclasses.asdict(p) for p in points],
        "source": source,
    }  # fmt: skip


def write_calibration(path: str | Path, data: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
