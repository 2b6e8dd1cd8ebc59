"""`selene plan serve` against published GPU serving measurements, uncalibrated.

    python benchmarks/serve.py [--json]

The points are `benchmarks/data/serving_published.json` (sources, shapes and settings in
`serving_published.md`; every number was read from its source, nothing estimated). For each, the
planner is pinned to the published layout (TP, PP, batch, prompt and output lengths, weight and KV
dtype, device) and asked for its prediction of what the source measured:
- `ttft_ms`: the planner's TTFT (the batch's prompts arriving together);
- `itl_ms`: its ITL;
- `e2e_ms`: TTFT + (output − 1) × ITL (a static batch, as the benchmarks that publish end-to-end
  latency run it);
- `tokens_per_s_total` / `tokens_per_s_per_gpu`: output tokens over that end-to-end time, × batch
  (the published throughput tables count output tokens of a static batch at its largest size).
The ratio predicted / measured is printed per point, and how many points fall within 25% (the issue's
target: within 25%, uncalibrated). No fitting happens here: the planner's constants are the ones it
ships with.

Measured (`python benchmarks/serve.py`, planner as committed; benchmarks/results/serve.txt): 20 of 25
comparisons within 25%. GPU prefill is priced by its GEMMs (each at the device's best-shaped matmul
rate, 0.86 of the peak on A100 and 0.80 on H100, measured figures from outside this project, times
the share of the SMs its 128 × 128 output tiles fill), not by the training planner's efficiency
curve: every TensorRT-LLM A100 TTFT is now within (Llama-2-7B 128 and 2048 tokens 0.84 / 0.82,
Llama-2-70B TP 4 0.93 / 0.84; the curve had 0.86 / 1.27 / 0.83 / 1.25: too slow for long prompts,
the wave model gets the short and the long prompt right together). A decode step is its kernels one
after another, each at its own bound: the GEMMs (the same tile model, or the weights' read) then
attention (the KV cache's read); one roofline over the whole step hid the KV read under the GEMMs'
compute at a large batch, and priced that compute at the training calibration's 0.536. Every
large-batch throughput is now within: TensorRT-LLM Llama-2-7B batch 384 on A100 1.06 (was 1.32), H100
fp8 Llama-2-7B batch 768 0.89 (1.15), Llama-2-70B TP 2 batch 1024 0.92 (0.79), GPT-J batch 64 1.16,
FasterTransformer GPT-20B batch 64 0.94, GPT-175B TP 8 batch 16 0.77. Still outside: FasterTransformer
at TP 8 and batch 1 (GPT-175B 0.62 and 0.71, GPT-20B 0.69: about 70-150 µs per layer more than the
planner's launches and NVLink all-reduces give, which no figure of the hardware explains; the two
GPT-175B rows together imply a 128-token prefill of ~150 ms and 48 ms a token, the planner's 54 and
35), GPT-J's TTFT at
batch 64 (0.72), where the engine's prefill of thousands of tokens runs at about 0.65-0.7 of the peak
rather than the best-shaped 0.86, and H100 fp8 Llama-2-70B TP 4 TTFT at 128 tokens (0.71). A matmul
efficiency of 0.7 on both devices would put 22 of 25 within 25%; it is not taken, because it would
be fitted to these points. One point (Llama-2-7B, batch 52, 2048 + 128 tokens on one A100 80 GB) does
not fit the planner's memory model (its 10% reserve and fp16 KV cache); one gives no output length.

The CPU side (`python benchmarks/serve.py --cpu [--presets 125m,350m] [--calibration-out FILE]`):
`selene generate`'s batched generation (`selene.eval.generate.generate_batch`, greedy, random
weights, fp32) is measured here at batch 1, 4, 16 × prompt 64, 512 for each preset (TTFT: best of 3
runs; ITL: the best of the 3 runs' median steps, 7 steps each). The device is measured as a serving process uses it (fp32
matmul rate, copy bandwidth, torch's threads), and so are the fixed costs of a forward (decode steps
of width-64 models at 1, 4 and 16 layers: the slope per layer, the intercept per forward). Only the
efficiencies are fitted (`selene.plan.serve_study`: the prefill efficiency curve, decode bandwidth at
batch 1 and above and of the KV cache's read, decode compute), and the planner's predictions are printed beside the
measurements: fitted on all presets (the calibration file it writes) and, to show that the fit
predicts rather than describes, fitted on the other preset only ("held-out"). The target is 15%.

Measured (2 cores; benchmarks/results/serve-cpu.txt, calibration serve-cpu-calibration.json; fixed
costs 252 µs per layer and 343 µs per forward): 24 of 24 TTFT/ITL figures within 15% fitted on both
presets, 20 of 24 with the preset held out (a run before it: 24 and 22, the same command). With ITL
as the median step of all runs pooled, one slow stretch of a shared machine moved it: 23 of 24, the
miss 125m batch 16 prompt 64 ITL at 101 ms measured where other runs measured 70-80 ms; the best run's
median drops such a stretch, as the best TTFT and the best device measurement do. The largest prefill (350m, batch 16,
prompt 512: 8192 tokens) runs below this CPU's curve in every run (0.80-0.95; 0.95 here). The device
is measured at the start and at the end of the study and the better figure kept (a shared machine's
contention only lowers one: 188 GFLOP/s and 46.7 GB/s at the start of this run, 193 and 51.3 at its
end, 153 and 30.7 at the start of an earlier one; an earlier run that measured once got 117 GFLOP/s where others get 175-200, and its fit could
not recover: 11 of 24). The KV cache's read in a decode step has an efficiency of its own (0.42 of
the copy bandwidth, the weights' matmuls 0.18): with one for both, ITL at batch 16 and prompt 512 was
over-predicted by 19-28%, most of all once decode steps stopped building an attention mask for
unpadded rows (350m: 330 -> 259-296 ms per step). Repeated runs on this shared machine move a
measured figure by up to 25%, more than the target. An earlier version fitted the fixed cost per
layer with the efficiencies: 1.7 ms, which absorbed costs that scale with width, and predicted the
other preset worse (16 of 24).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.plan.cost import Shape  # noqa: E402
from selene.plan.devices import device  # noqa: E402
from selene.plan.serve import make_serve_plan  # noqa: E402
from selene.plan.serve_cost import ServeModel, ServeRequest  # noqa: E402

POINTS = ROOT / "benchmarks" / "data" / "serving_published.json"
WITHIN = 0.25


def device_name(gpu: str) -> str:
    g = gpu.lower()
    if "h100" in g:
        return "h100"
    if "a100" in g:
        return "a100-40g" if "40" in g else "a100-80g"  # the published A100 points are SXM4 80 GB
    raise SystemExit(f"no device entry for {gpu!r}")


def predict(point: dict[str, Any]) -> dict[str, float]:
    if point["output"] is None:
        raise ValueError("the source gives no output length")
    s = point["shape"]
    seq = max(2048, point["prompt"] + point["output"])
    shape = Shape(s["layers"], s["hidden"], s["heads"], s["ffn"], s["vocab"], seq, mlp="swiglu" if "llama" in point["model"].lower() else "gelu")
    dtype = {"fp16": "fp16", "bf16": "bf16", "fp8": "fp8"}.get(str(point.get("dtype", "fp16")).lower().split()[0], "fp16")
    req = ServeRequest(
        model=ServeModel(shape, s.get("kv_heads") or s["heads"]),
        gpus=point["gpus"],
        device=device(device_name(point["gpu"])),
        prompt=point["prompt"],
        output=point["output"],
        batch=point["batch"],
        weights_dtype=dtype,
        kv_dtype=dtype,
        tp=point["tp"],
        pp=point.get("pp") or 1,
        top=1,
    )
    plan = make_serve_plan(req)
    rows = [r for r in plan["layouts"] if r["layout"]["tp"] == point["tp"] and r["layout"]["pp"] == (point.get("pp") or 1)]
    if not rows:
        raise ValueError("the published layout does not fit the planner's memory model")
    r = rows[0]
    ttft, itl = r["ttft_ms"], r["itl_ms"]
    e2e = ttft + (point["output"] - 1) * itl
    total = point["batch"] * point["output"] / (e2e / 1e3)
    replicas = point["gpus"] // (point["tp"] * (point.get("pp") or 1))
    return {
        "ttft_ms": ttft,
        "itl_ms": itl,
        "e2e_ms": e2e,
        "tokens_per_s_total": total * replicas,
        "tokens_per_s_per_gpu": total * replicas / point["gpus"],
    }


CPU_WITHIN = 0.15


def cpu_study(presets: list[str], batches: list[int], prompts: list[int], output: int, repeats: int, out: Path | None) -> None:
    """Measure `selene generate`'s batched generation here, fit the serving constants, and print
    predicted vs measured: fitted on all presets (the calibration file) and, to show that the fit
    predicts and does not only describe, fitted on all presets but one and scored on that one."""
    import time

    from selene.plan.serve_study import (
        best_device,
        calibration_json,
        fit,
        measure,
        measure_device,
        measure_overheads,
        predict,
        write_calibration,
    )

    def say(d: Any) -> str:
        return f"{d.peak_tflops * 1e3:.0f} GFLOP/s fp32 matmul, {d.hbm_gbps:.1f} GB/s copy"

    t0 = time.perf_counter()
    first = measure_device()
    print(f"device at the start: {say(first)}")
    overheads = measure_overheads()
    print(f"fixed costs measured: {overheads[0] * 1e6:.0f} µs per layer, {overheads[1] * 1e6:.0f} µs per forward")
    points = []
    for preset in presets:
        t1 = time.perf_counter()
        points += measure(preset, batches, prompts, output, repeats=repeats)
        print(f"measured {preset}: {time.perf_counter() - t1:.0f} s")
    last = measure_device()
    dev = best_device(first, last)  # a shared machine: contention only lowers a measured figure
    print(f"device at the end: {say(last)}; taken: {say(dev)}, {dev.memory_gb:.0f} GB ({dev.calibrated_from})")
    result = fit(points, dev, overheads)
    eff = result.efficiency
    print(
        f"fitted on all: prefill curve max {result.device.max_efficiency:.3f} of peak, half at {result.device.half_work:.2g} FLOPs; "
        f"decode {eff.decode_hbm:.3f} of bandwidth (batch 1: {eff.decode_hbm_single:.3f}; KV cache: {eff.decode_kv:.3f}), "
        f"decode compute {eff.decode_compute:.3f} of peak"
    )
    held = {}
    for preset in presets:  # leave one preset out
        rest = [p for p in points if p.preset != preset]
        held[preset] = fit(rest, dev, overheads) if rest else result
    print(f"\n{'preset':<8}{'batch':>6}{'prompt':>7}  {'TTFT ms':>9}{'pred':>9}{'ratio':>7}{'held-out':>9}  {'ITL ms':>8}{'pred':>8}{'ratio':>7}{'held-out':>9}")
    within = {"all": 0, "held-out": 0}
    n = 0
    for p in points:
        q = predict(p, result.device, eff)
        h = predict(p, held[p.preset].device, held[p.preset].efficiency)
        rt, ri = q.ttft_s / p.ttft_s, q.itl_s / p.itl_s
        ht, hi = h.ttft_s / p.ttft_s, h.itl_s / p.itl_s
        within["all"] += (abs(rt - 1) <= CPU_WITHIN) + (abs(ri - 1) <= CPU_WITHIN)
        within["held-out"] += (abs(ht - 1) <= CPU_WITHIN) + (abs(hi - 1) <= CPU_WITHIN)
        n += 2
        print(
            f"{p.preset:<8}{p.batch:>6}{p.prompt:>7}  {p.ttft_s * 1e3:>9.1f}{q.ttft_s * 1e3:>9.1f}{rt:>7.2f}{ht:>9.2f}  "
            f"{p.itl_s * 1e3:>8.2f}{q.itl_s * 1e3:>8.2f}{ri:>7.2f}{hi:>9.2f}"
        )
    print(
        f"\nwithin {CPU_WITHIN:.0%}: {within['all']} of {n} fitted on all presets, {within['held-out']} of {n} with the "
        f"preset left out of the fit; ratio = predicted / measured; {time.perf_counter() - t0:.0f} s in all"
    )
    if out is not None:
        write_calibration(out, calibration_json(result, points, "benchmarks/serve.py --cpu"))
        print(f"calibration written to {out}: selene plan serve --gpu cpu --calibration {out} ...")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="measure batched generation here and check the calibrated planner against it")
    ap.add_argument("--presets", default="125m,350m")
    ap.add_argument("--batches", default="1,4,16")
    ap.add_argument("--prompts", default="64,512")
    ap.add_argument("--output", type=int, default=8, help="new tokens per sequence (ITL: the median step)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--calibration-out", type=Path, help="write the fitted calibration file here (with --cpu)")
    args = ap.parse_args()
    if args.cpu:
        cpu_study(args.presets.split(","), [int(b) for b in args.batches.split(",")], [int(p) for p in args.prompts.split(",")],
                  args.output, args.repeats, args.calibration_out)
        return
    points = json.loads(POINTS.read_text())
    rows = []
    for p in points:
        try:
            pred = predict(p)
        except Exception as e:  # a point the planner cannot place is reported, not hidden
            rows.append({"id": p["id"], "error": str(e)})
            continue
        for metric, measured in p["measured"].items():
            if metric not in pred or not isinstance(measured, (int, float)) or not measured:
                continue
            rows.append({
                "id": p["id"], "engine": p["engine"], "gpu": p["gpu"], "tp": p["tp"], "batch": p["batch"],
                "prompt": p["prompt"], "output": p["output"], "dtype": p.get("dtype"), "metric": metric,
                "measured": measured, "predicted": pred[metric], "ratio": pred[metric] / measured,
            })  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'point':<48}{'metric':<22}{'measured':>11}{'predicted':>11}{'ratio':>8}")
    ok = n = 0
    for r in rows:
        if "error" in r:
            print(f"{r['id']:<48}{'':<22}{'—':>11}{'—':>11}   {r['error']}")
            continue
        n += 1
        good = abs(r["ratio"] - 1) <= WITHIN
        ok += good
        print(
            f"{r['id'][:47]:<48}{r['metric']:<22}{r['measured']:>11.1f}{r['predicted']:>11.1f}"
            f"{r['ratio']:>8.2f}{'' if good else '  *'}"
        )
    print(f"\n{ok} of {n} comparisons within {WITHIN:.0%} (* outside); ratio = predicted / measured")


if __name__ == "__main__":
    main()
