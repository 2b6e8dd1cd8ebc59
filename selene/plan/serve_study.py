"""Serving study: selene's batched generation measured on this machine, and the serving planner's
constants fitted to it, so that `selene plan serve --gpu cpu --calibration FILE` predicts what
`selene generate --batch` measures here.

Each point is a model preset (random weights: time does not depend on them), a batch of prompts of
one length and a number of new tokens, run by `selene.eval.generate.generate_batch` (one forward
for the prefill of the whole batch, one per decode step) with greedy sampling and no stop token.
TTFT is the best of `repeats` runs (prefill + first sample); ITL the best of the runs' median steps
(a shared machine's contention only slows a run down: the median within a run drops a slow step, the
best run drops a slow stretch).

The device is measured the way a serving process uses it, with torch's threads as configured: the
fp32 matmul rate (n = 1024) is its peak, a 256 MiB copy its memory bandwidth (read + write bytes),
and RAM its memory (`measure_device`).

`measure_overheads` measures the fixed costs of a forward first: per layer and per forward, from
models too small for their matmuls to matter. `fit` then finds the efficiencies by least squares
on log(predicted / measured) over the points, those costs given:
- the device's efficiency curve (`max_efficiency`, `half_work`): what prefill reaches as a function
  of a layer's work, the curve the training planner's scaling study fits;
- `decode_efficiency`: the fraction of the bandwidth a decode step's weight and cache reads reach
  at batch > 1;
- `decode_single_efficiency`: the same at batch 1, where matrix-vector kernels stream the weights
  at their own rate;
- `decode_kv_efficiency`: the fraction of the bandwidth the attention's read of the KV cache reaches
  (its own kernel, not a matmul's: it matters at large batch and context);
- `decode_compute_efficiency`: the fraction of peak of a decode step's matmuls (on a CPU, memory
  and compute time add up: `decode_overlap` false).
The calibration file carries `layer_overhead_s` and `step_overhead_s` too. The prediction is the
planner's own (its layout model pinned to TP 1, PP 1 and the batch), so the fit checks the
planner's formulas, not a copy of them.
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

from selene.manifest import versioned
from selene.plan.devices import DeviceSpec
from selene.plan.serve_cost import Efficiency, ServeModel, ServeRequest, _Layout, shape_from_preset

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


def best_device(*measured: DeviceSpec) -> DeviceSpec:
    """The best of several measurements of this machine (contention on a shared machine only lowers
    a figure): the highest matmul rate and copy bandwidth."""
    peak = max(d.peak_tflops for d in measured)
    bandwidth = max(d.hbm_gbps for d in measured)
    return dataclasses.replace(
        measured[0], peak_tflops=peak, hbm_gbps=bandwidth,
        calibrated_from=f"{measured[0].calibrated_from}, best of {len(measured)} measurements",
    )  # fmt: skip


def measure_device() -> DeviceSpec:
    """Peak fp32 matmul rate, copy bandwidth and memory of this machine, at torch's thread count."""
    import torch

    from selene.train.flops import measured_matmul_tflops  # lazy: torch only for a measured study

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
    repeats: int = 3, seed: int = 0,
) -> list[Point]:  # fmt: skip
    """Greedy batched generation of `preset` (random weights, fp32) at every batch × prompt length."""
    import torch

    from selene.eval.generate import generate_batch  # lazy: torch only for a measured study
    from selene.model.args import PRESETS  # lazy: with the torch imports of a measured study
    from selene.model.transformer import Transformer  # lazy: torch only for a measured study
    from selene.train.host import reuse_freed_memory  # lazy: torch only for a measured study

    reuse_freed_memory()  # as `selene generate` runs (selene.eval.checkpoint_io.load_model)
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
                ttft, itl = math.inf, math.inf
                for _ in range(repeats):
                    r = generate_batch(model, args, ids, output, temperature=0.0, stop_ids=())
                    ttft = min(ttft, r.ttft_s)
                    itl = min(itl, statistics.median(r.itl_s))
                out.append(Point(preset, batch, prompt, output, ttft, itl))
    return out


def predict(point: Point, dev: DeviceSpec, eff: Efficiency, vocab: int = 32000) -> Point:
    """The serving planner's TTFT and ITL for `point` (TP 1, PP 1, its batch, fp32 weights and KV),
    from the planner's own layout model (`selene.plan.serve_cost._Layout`, what `make_serve_plan` ranks)."""
    shape = shape_from_preset(point.preset, vocab)
    req = ServeRequest(
        ServeModel(shape, shape.kv_heads), 1, dev, point.prompt, point.output, point.batch, "fp32", "fp32",
        tp=1, pp=1, top=1, efficiency=eff,
    )  # fmt: skip
    lay = _Layout(req, 1, 1)
    return dataclasses.replace(point, ttft_s=lay.prefill(point.batch)[0], itl_s=lay.decode(point.batch)[0])


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


@dataclass(frozen=True)
class Fit:
    """The fitted constants: the device's efficiency curve (prefill) and the serving ones (decode, fixed)."""

    device: DeviceSpec  # with max_efficiency and half_work fitted
    efficiency: Efficiency  # decode_hbm, decode_compute, layer_overhead_s fitted; prefill None: the curve


def measure_overheads(vocab: int = 32000, layers: Sequence[int] = (1, 4, 16), steps: int = 16, repeats: int = 3) -> tuple[float, float]:
    """The fixed costs of a forward on this machine, measured: decode steps (batch 1, a 64-token
    prompt) of models too small for their matmuls to matter (width 64) at several depths; the median
    step time's least-squares line over the depth gives the cost per layer (its slope: the
    framework's dispatch of a layer's operators) and per forward (its intercept: embedding, output
    layer, sampling, the loop). Returns (seconds per layer, seconds per forward)."""
    import torch

    from selene.eval.generate import generate_batch  # lazy: torch only for a measured study
    from selene.model.args import PRESETS  # lazy: with the torch imports of a measured study
    from selene.model.transformer import Transformer  # lazy: torch only for a measured study

    xs, ys = [], []
    for n in layers:
        args = dataclasses.replace(PRESETS["debug"], n_layers=n, vocab_size=vocab, max_seq_len=64 + steps + 1)
        torch.manual_seed(0)
        model = Transformer(args).eval()
        times: list[float] = []
        with torch.inference_mode():
            generate_batch(model, args, [[1] * 8], 2, temperature=0.0, stop_ids=())  # warm-up
            for _ in range(repeats):
                times += generate_batch(model, args, [[5] * 64], steps, temperature=0.0, stop_ids=()).itl_s
        xs.append(float(n))
        ys.append(statistics.median(times))
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return max(slope, 0.0), max(my - slope * mx, 0.0)


def fit(points: Sequence[Point], dev: DeviceSpec, overheads: tuple[float, float], vocab: int = 32000) -> Fit:
    """The efficiencies that minimise the squared log error of TTFT and ITL over `points`, the fixed
    costs (`overheads`: seconds per layer and per forward, from `measure_overheads`) given: the
    efficiency curve (max_efficiency, half_work: the planner's prefill model, as the training
    planner's scaling study fits it) from TTFT; the decode bandwidth and compute efficiencies from
    ITL at batch > 1, and the batch-1 bandwidth from ITL at batch 1; on log grids, then refined."""

    def curve(d: DeviceSpec, m: float, h: float) -> DeviceSpec:
        return dataclasses.replace(d, max_efficiency=m, half_work=h)

    base = Efficiency(layer_overhead_s=overheads[0], step_overhead_s=overheads[1], decode_overlap=False)
    cands = [(m, h) for m in _grid(0.1, 1.0, 20) for h in _grid(1e6, 1e11, 20)]
    m, h = min(cands, key=lambda mh: _log_error(points, curve(dev, *mh), base, vocab, "ttft"))
    d = curve(dev, m, h)
    pairs = [(b, c) for b in _grid(0.05, 1.0, 20) for c in _grid(0.02, 1.0, 20)]
    batched = [p for p in points if p.batch > 1] or list(points)
    b, c = min(pairs, key=lambda bc: _log_error(batched, d, dataclasses.replace(base, decode_hbm=bc[0], decode_compute=bc[1]), vocab, "itl"))
    eff = dataclasses.replace(base, decode_hbm=b, decode_compute=c)
    single = [p for p in points if p.batch == 1]
    if single:
        s1 = min(_grid(0.05, 1.0, 40), key=lambda x: _log_error(single, d, dataclasses.replace(eff, decode_hbm_single=x), vocab, "itl"))
        eff = dataclasses.replace(eff, decode_hbm_single=s1)
    kv = min(_grid(0.05, 1.0, 40), key=lambda x: _log_error(batched, d, dataclasses.replace(eff, decode_kv=x), vocab, "itl"))
    eff = dataclasses.replace(eff, decode_kv=kv)
    for _ in range(2):  # refine each efficiency around its value, the others fixed
        for field in ("max_efficiency", "half_work", "decode_hbm", "decode_compute", "decode_hbm_single", "decode_kv"):
            d, eff = min(
                (_with(d, eff, field, f) for f in _grid(0.85, 1.15, 11)),
                key=lambda de: _log_error(points, de[0], de[1], vocab, "both"),
            )
    return Fit(d, eff)


def _with(d: DeviceSpec, eff: Efficiency, field: str, factor: float) -> tuple[DeviceSpec, Efficiency]:
    """`field` (of the device or the efficiency) scaled by `factor`; fractions stay within 1."""
    if field == "max_efficiency":
        return dataclasses.replace(d, max_efficiency=min(1.0, d.max_efficiency * factor)), eff
    if field == "half_work":
        return dataclasses.replace(d, half_work=d.half_work * factor), eff
    if field == "decode_hbm":
        return d, dataclasses.replace(eff, decode_hbm=min(1.0, eff.decode_hbm * factor))
    if field == "decode_kv":
        return d, dataclasses.replace(eff, decode_kv=min(1.0, (eff.decode_kv or eff.decode_hbm) * factor))
    if field == "decode_hbm_single":
        return d, dataclasses.replace(eff, decode_hbm_single=min(1.0, (eff.decode_hbm_single or eff.decode_hbm) * factor))
    return d, dataclasses.replace(eff, decode_compute=min(1.0, (eff.decode_compute or 1.0) * factor))


def calibration_json(result: Fit, points: Sequence[Point], source: str) -> dict[str, Any]:
    """The calibration file `selene plan serve --gpu cpu --calibration` reads (see `load_calibration`)."""
    dev, eff = result.device, result.efficiency
    return {
        "max_efficiency": dev.max_efficiency,
        "half_work": dev.half_work,
        "decode_efficiency": eff.decode_hbm,
        "decode_compute_efficiency": eff.decode_compute,
        "decode_single_efficiency": eff.decode_hbm_single,
        "decode_kv_efficiency": eff.decode_kv,
        "decode_overlap": eff.decode_overlap,
        "layer_overhead_s": eff.layer_overhead_s,
        "step_overhead_s": eff.step_overhead_s,
        "measured_device": {"name": dev.name, "peak_tflops": dev.peak_tflops, "hbm_gbps": dev.hbm_gbps, "memory_gb": dev.memory_gb,
                            "source": dev.calibrated_from},
        "device": dev.name,
        "points": [dataclasses.asdict(p) for p in points],
        "source": source,
    }  # fmt: skip


def write_calibration(path: str | Path, data: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(versioned(data), indent=2) + "\n", encoding="utf-8")
