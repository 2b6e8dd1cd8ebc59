"""Scaling studies ("miles per gallon"): short training runs on the hardware at hand, measured, and
the planner's efficiency curve fitted to them.

Each run is selene's own trainer (torchrun, the configured layout) for a few steps on synthetic
tokens; the steps after `warmup` are timed (median). From its metrics: achieved hardware TFLOP/s per
device (the planner's FLOP count, recomputation included, over the measured step time) and peak
memory (CUDA: the allocator's high-water mark; CPU: the growth of the peak resident set). The device
is described for the planner as in `devices.py`: a GPU by its table entry, this CPU by measurement
(single-thread fp32 matmul rate and copy bandwidth, as each torchrun worker runs one thread, and a
gloo all-reduce between two processes).

Calibration fits the efficiency factors (`max_efficiency`, `half_work`) and the per-collective
latency by least squares on log(predicted / measured) step time over all runs (a grid search: three
parameters, a handful of runs), and reports each run's prediction before (device defaults) and after
calibration. Plain functions; `selene.flows.study` runs them as a Prefect flow.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import statistics
import time
from typing import Any

import numpy as np
import torch

from selene import charts
from selene.errors import ConfigError, InternalError
from selene.manifest import versioned
from selene.plan.config import ScalingStudyConfig, StudyRun
from selene.plan.cost import Layout, Shape, estimate
from selene.plan.devices import DEVICES, DeviceSpec
from selene.plan.planner import layout_from_train_config
from selene.plan.study_budgets import artifacts as budget_artifacts
from selene.plan.study_budgets import run_budget_study
from selene.plan.study_runs import global_batch, seq_len, train_config
from selene.procs import python_module
from selene.tokenize.indexed import IndexedWriter, choose_dtype
from selene.train.args import model_args
from selene.train.config import TrainConfig
from selene.train.flops import measured_matmul_tflops
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from selene.view import Markdown, Table, View, columns, svg_image

DATA_PREFIX = "data/tokens"


# ------------------------------------------------------------------------------------------ device


def resolve_device(cfg: ScalingStudyConfig) -> str:
    if cfg.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("scaling study: device is cuda but no CUDA device is available")
    return cfg.device


def gpu_name(cfg: ScalingStudyConfig) -> str:
    """The planner's name for this GPU: configured, or recognised from the CUDA device name."""
    if cfg.gpu:
        if cfg.gpu not in DEVICES:
            raise ConfigError(f"scaling study: gpu {cfg.gpu!r} is not in the device table ({', '.join(DEVICES)})")
        return cfg.gpu
    found = cuda_table_name(0)
    if found is None:
        name = torch.cuda.get_device_name(0)
        raise ConfigError(f"scaling study: no device-table entry for {name!r}; set gpu: to the closest ({', '.join(DEVICES)})")
    return found


def cuda_table_name(index: int) -> str | None:
    """The device table's entry for CUDA device `index`, recognised from its name (and memory: A100
    40 or 80 GB), or None."""
    name = torch.cuda.get_device_name(index).upper()
    total_gb = torch.cuda.get_device_properties(index).total_memory / 1e9
    for key, found in (("H200", "h200"), ("H100", "h100")):
        if key in name:
            return found
    if "A100" in name:
        return "a100-80g" if total_gb > 50 else "a100-40g"
    return None


def probe_cpu(need_allreduce: bool, threads: int = 1) -> DeviceSpec:
    """This CPU as the planner sees one worker of it: by default one thread (torchrun's
    OMP_NUM_THREADS=1); `threads` for a single process that uses several."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        peak = max(measured_matmul_tflops(torch.device("cpu"), torch.float32, n=512, repeat=10) for _ in range(3))
        src = torch.ones(16 * 2**20)  # 64 MiB
        dst = torch.empty_like(src)
        dst.copy_(src)
        t = time.perf_counter()
        for _ in range(5):
            dst.copy_(src)
        copy_gbps = 5 * 2 * src.nbytes / (time.perf_counter() - t) / 1e9  # read + write
    finally:
        torch.set_num_threads(before)
    link, latency = allreduce_gbps() if need_allreduce else (copy_gbps / 4, 1e-4)
    return DeviceSpec(
        name="cpu",
        peak_tflops=peak,
        memory_gb=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9,
        hbm_gbps=copy_gbps,
        intra_node_gbps=link,
        inter_node_gbps=link,
        gpus_per_node=os.cpu_count() or 1,
        max_efficiency=0.5,
        half_work=1e8,
        calibrated_from="uncalibrated CPU defaults",
        collective_latency_s=latency,
        overlap=False,
    )


def allreduce_gbps() -> tuple[float, float]:
    """Bus bandwidth (GB/s) and latency (s) of a gloo all-reduce between two local processes."""
    import subprocess
    import tempfile


    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "probe.json")
        probe = python_module("selene.plan.probe", out, unbuffered=True)  # not `-m`: see python_module
        cmd = python_module("torch.distributed.run", "--standalone", "--nproc-per-node=2", "--no-python", *probe)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
        if proc.returncode or not os.path.exists(out):
            raise RuntimeError(f"gloo all-reduce probe failed (exit code {proc.returncode}): {proc.stderr[-2000:]}")
        found = _read_json(out)
    return float(found["gbps"]), float(found["latency_s"])


def device_spec(cfg: ScalingStudyConfig) -> DeviceSpec:
    if resolve_device(cfg) == "cuda":
        return DEVICES[gpu_name(cfg)]
    return probe_cpu(need_allreduce=any(r.nproc > 1 for r in cfg.runs))


# -------------------------------------------------------------------------------------------- runs


def synthetic_tokens(out: str, cfg: ScalingStudyConfig) -> str:
    """Random documents (seeded) as an indexed dataset: enough tokens for the largest run."""

    prefix = os.path.join(out, DATA_PREFIX)
    if os.path.exists(prefix + ".idx"):
        return prefix
    need = max(global_batch(r) * (seq_len(r, cfg) + 1) for r in cfg.runs) * (cfg.steps + 1)
    if cfg.budgets:  # the largest budget, and the held-out part of the budget runs
        need = max(need, 2 * max(cfg.budgets))
    rng = np.random.default_rng(cfg.seed)
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    with IndexedWriter(prefix, choose_dtype(cfg.vocab_size)) as w:
        written = 0
        while written < 2 * need:
            lengths = rng.integers(64, 1024, size=256)
            w.add_documents(rng.integers(0, cfg.vocab_size - 1, size=int(lengths.sum())), lengths)
            written += int(lengths.sum())
        w.finalize()
    return prefix


def run_one(run: StudyRun, cfg: ScalingStudyConfig, prefix: str, device: str) -> dict[str, Any]:
    """Train `run` for cfg.steps (or reuse its finished metrics) and return what was measured."""

    tcfg = train_config(run, cfg, prefix, device)
    out = os.path.join(cfg.out, "runs", run.name)
    metrics_path = os.path.join(out, "metrics.jsonl")
    records = read_metrics(metrics_path) if os.path.exists(metrics_path) else []
    config_path = os.path.join(out, "study-run.json")
    same = os.path.exists(config_path) and _read_json(config_path) == tcfg.model_dump(mode="json")
    if not (same and records and records[-1].get("step") == cfg.steps):
        shutil.rmtree(out, ignore_errors=True)  # timings must come from one uninterrupted process
        os.makedirs(out)
        launch(tcfg, out, run.nproc)
        records = read_metrics(metrics_path)
        with open(config_path, "w") as f:
            json.dump(tcfg.model_dump(mode="json"), f)
    timed = [r["step_time_s"] for r in records if r.get("step", 0) > cfg.warmup and "step_time_s" in r]
    if not timed:
        raise InternalError(f"scaling study run {run.name}: no timed steps in {metrics_path}")
    return {
        "name": run.name,
        "out": out,
        "nproc": run.nproc,
        "step_time_s": statistics.median(timed),
        "step_times_s": timed,
        "peak_memory_gb": max(r.get("peak_memory_gib", 0.0) for r in records) * 2**30 / 1e9,
        "train_config": tcfg.model_dump(mode="json"),
    }


def _read_json(path: str) -> Any:
    with open(path) as f:
        return json.load(f)


# ----------------------------------------------------------------------------------- prediction


def shape_and_layout(tcfg: TrainConfig, nproc: int) -> tuple[Shape, Layout, int]:
    args = model_args(tcfg.model, tcfg.model.vocab_size or 0)
    seq = tcfg.batch.seq_len or args.max_seq_len
    # CPU SDPA keeps no s×s scores for backward either (fused kernel), like flash on GPU
    shape = Shape.from_model_args(args, args.vocab_size, seq, flash=True)
    lay, _ = layout_from_train_config(tcfg, nproc)
    return shape, lay, tcfg.batch.global_batch


def predict(measured: dict[str, Any], spec: DeviceSpec) -> dict[str, Any]:
    tcfg = TrainConfig.model_validate(measured["train_config"])
    shape, lay, batch = shape_and_layout(tcfg, measured["nproc"])
    est = estimate(shape, lay, batch, spec)
    hw = shape.hardware_flops_per_token(lay.recompute) * batch * shape.seq / lay.gpus
    return {
        "layout": lay.label(),
        "params": shape.params,
        "work_per_layer_flops": shape.train_flops_layer(lay.recompute) * shape.seq * lay.micro_batch / lay.tp,
        "predicted_step_s": est.iteration_s,
        "predicted_memory_gb": est.memory["total"],
        "predicted_memory": est.memory,
        "measured_tflops": hw / measured["step_time_s"] / 1e12,
        "predicted_tflops": est.hardware_tflops,
    }


def calibrate(measured: list[dict[str, Any]], spec: DeviceSpec) -> tuple[DeviceSpec, float]:
    """`spec` with the (max_efficiency, half_work, collective latency) minimising
    Σ log²(predicted / measured step time) on a grid, and the root-mean-square of that log error.
    The latency is fitted only when some run communicates; otherwise the probe's value stays."""
    cases = []
    for m in measured:
        shape, lay, batch = shape_and_layout(TrainConfig.model_validate(m["train_config"]), m["nproc"])
        cases.append((shape, lay, batch, math.log(m["step_time_s"])))
    communicates = any(lay.gpus > 1 for _, lay, _, _ in cases)
    latencies = np.geomspace(1e-6, 3e-2, 10) if communicates else [spec.collective_latency_s]
    best: tuple[float, DeviceSpec] | None = None
    for e in np.geomspace(0.02, 1.0, 41):
        for hw in np.geomspace(1e4, 1e13, 25):
            for alpha in latencies:
                trial = dataclasses.replace(
                    spec, max_efficiency=float(e), half_work=float(hw), collective_latency_s=float(alpha)
                )
                err = 0.0
                for shape, lay, batch, log_measured in cases:
                    err += (math.log(estimate(shape, lay, batch, trial).iteration_s) - log_measured) ** 2
                if best is None or err < best[0]:
                    best = (err, trial)
    assert best is not None
    return best[1], math.sqrt(best[0] / len(measured))


def finish(cfg: ScalingStudyConfig, spec: DeviceSpec, measured: list[dict[str, Any]]) -> dict[str, Any]:
    """Calibrate, compare, and write study.json, calibration.json, study.md and the plot into cfg.out."""
    before = [predict(m, spec) for m in measured]
    fitted, rms = calibrate(measured, spec)
    fitted = dataclasses.replace(fitted, calibrated_from=f"scaling study {os.path.join(cfg.out, 'calibration.json')}")
    after = [predict(m, fitted) for m in measured]
    rows = []
    for m, b, a in zip(measured, before, after, strict=True):
        rows.append({
            "run": m["name"], "layout": a["layout"], "params": a["params"], "nproc": m["nproc"],
            "measured_step_s": m["step_time_s"], "predicted_step_s_default": b["predicted_step_s"],
            "predicted_step_s": a["predicted_step_s"], "step_error": a["predicted_step_s"] / m["step_time_s"] - 1,
            "measured_tflops": a["measured_tflops"], "predicted_tflops": a["predicted_tflops"],
            "measured_memory_gb": m["peak_memory_gb"], "predicted_memory_gb": a["predicted_memory_gb"],
            "memory_error": a["predicted_memory_gb"] / m["peak_memory_gb"] - 1 if m["peak_memory_gb"] > 0 else None,
            "work_per_layer_flops": a["work_per_layer_flops"],
        })  # fmt: skip
    calibration = calibration_record(spec, fitted, rms, len(rows))
    study = {"device": dataclasses.asdict(spec), "calibration": calibration, "runs": rows}
    os.makedirs(cfg.out, exist_ok=True)
    for name, text in (
        ("study.json", json.dumps(versioned(study), indent=1)),
        ("calibration.json", json.dumps(versioned(calibration), indent=1)),
        ("study.md", markdown(study)),
        ("predicted_vs_measured.svg", charts.scatter(rows)),
    ):
        with open(os.path.join(cfg.out, name), "w") as f:
            f.write(text)
    return study


def calibration_record(spec: DeviceSpec, fitted: DeviceSpec, rms: float, runs: int) -> dict[str, Any]:
    """What a calibration file holds (`selene plan --calibration` reads it: `devices.load_calibration`)."""
    return {
        "device": spec.name,
        "max_efficiency": fitted.max_efficiency,
        "half_work": fitted.half_work,
        "collective_latency_s": fitted.collective_latency_s,
        "peak_tflops": spec.peak_tflops,
        "rms_log_error": rms,
        "runs": runs,
        "use": f"selene plan ... --gpu {spec.name if spec.name in DEVICES else 'NAME'} --calibration <this file>",
    }


# ---------------------------------------------------------------------------------------- output


def markdown(study: dict[str, Any]) -> str:
    cal, dev = study["calibration"], study["device"]
    lines = [
        f"### Scaling study on {dev['name']} (peak {dev['peak_tflops']:.3g} TFLOP/s per device)",
        "",
        f"Calibrated efficiency: max {cal['max_efficiency']:.3f} of peak, half at {cal['half_work']:.3g} FLOPs per "
        f"micro-batch-layer, {cal['collective_latency_s'] * 1e6:.0f} µs per collective; RMS error of log step time "
        f"{cal['rms_log_error']:.3f} over {cal['runs']} runs.",
        "",
        "| run | layout | params | measured s/step | predicted (defaults) | predicted (calibrated) | error "
        "| TFLOP/s measured | predicted | memory GB measured | predicted | error |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in study["runs"]:
        mem_err = f"{r['memory_error']:+.0%}" if r["memory_error"] is not None else "n/a"
        lines.append(
            f"| {r['run']} | {r['layout']} | {r['params'] / 1e6:.2f}M | {r['measured_step_s']:.4f} | "
            f"{r['predicted_step_s_default']:.4f} | {r['predicted_step_s']:.4f} | {r['step_error']:+.0%} | "
            f"{r['measured_tflops']:.4f} | {r['predicted_tflops']:.4f} | {r['measured_memory_gb']:.3f} | "
            f"{r['predicted_memory_gb']:.3f} | {mem_err} |"
        )
    return "\n".join(lines) + "\n"


def run_study(cfg: ScalingStudyConfig, call: Any = None) -> dict[str, Any]:
    """The study: probe, synthetic tokens, the runs one after another (each uses the whole device),
    calibration. `call(name, fn, *args)` runs each step (a Prefect task in `selene.flows.study`)."""
    step = call or (lambda name, fn, *a: fn(*a))
    if cfg.budgets:  # the loss study over token budgets: no timing, no calibration
        prefix = cfg.data or step("synthetic-tokens", lambda c: synthetic_tokens(c.out, c), cfg)
        return run_budget_study(cfg, prefix, resolve_device(cfg), call)
    spec = DeviceSpec(**step("probe-device", lambda c: dataclasses.asdict(device_spec(c)), cfg))
    prefix = step("synthetic-tokens", lambda c: synthetic_tokens(c.out, c), cfg)
    device = resolve_device(cfg)
    measured = [step(f"run-{run.name}", run_one, run, cfg, prefix, device) for run in cfg.runs]
    return finish(cfg, spec, measured)


def artifacts(cfg: ScalingStudyConfig, result: dict[str, Any]) -> View:
    """The dashboard's view of a study: its runs' numbers and the predicted-vs-measured plot."""
    if cfg.budgets:
        return budget_artifacts(result)
    names = [k for k in result["runs"][0] if k != "work_per_layer_flops"] if result["runs"] else []
    rows = [[round(r[k], 4) if isinstance(r[k], float) else r[k] for k in names] for r in result["runs"]]
    with open(f"{cfg.out}/predicted_vs_measured.svg") as f:
        svg = f.read()
    return View(blocks=(
        Table(columns(*names), rows, key="scaling-study",
              description=f"Scaling study on {result['device']['name']}: measured vs predicted step time, TFLOP/s and memory"),
        Markdown(markdown(result) + "\n" + svg_image(svg, "predicted vs measured") + "\n", key="scaling-study-plot"),
    ))  # fmt: skip
