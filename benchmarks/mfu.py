"""Model FLOPs utilisation of selene's training step on one device: one command on any CUDA machine.

    python benchmarks/mfu.py                                   # CUDA: 1.3b, 350m, 125m at seq 2048, bf16
    python benchmarks/mfu.py --presets debug --seq 64 --steps 2 --warmup 1     # CPU (what CI runs)

Each preset is trained by selene's own step (`benchmarks/_train_step.py`: the trainer's model builder,
AdamW and forward/backward) on random tokens: bf16 on CUDA (autocast over fp32 master weights, as
torchtitan on one GPU), fp32 on CPU unless --precision says otherwise; each block compiled
(inductor; --no-compile to skip); fused AdamW; SDPA attention (flash on CUDA); the output layer and
the loss fused in chunks. The micro-batch is the largest power of two up to --max-micro-batch that
the planner (`selene.plan.cost.memory`) fits in the device's memory without recomputation, else with
selective, else full recomputation (--micro-batch / --recompute pin them); a CUDA out-of-memory
halves it and says so. After --warmup untimed steps (compilation), --steps are timed (median). Each preset runs in a
process of its own (compiled code and the allocator's cache of one never time the next); the
results are written after each, so a run cut short keeps what finished.

Printed per preset: tokens/s, model TFLOP/s (`selene.train.flops.flops_per_token`: 6·N plus
attention, recomputation not counted), MFU against the peak training divides by (`selene.train.peak`:
a GPU's dense data-sheet figure for the run's math, a CPU's cores x clock x FLOPs per cycle) and
against the matmul rate measured here (square bf16 matmuls on CUDA, fp32 on CPU), peak memory (CUDA:
the allocator's high-water mark; CPU: the tensors alive before the step plus the high-water mark of
what the step allocates, from the profiler's allocation events) next to the planner's prediction.
Written to --out: `mfu.json` (everything printed) and `calibration.json`, the planner's efficiency
curve fitted to these runs, which `selene plan --gpu h100 --calibration <file>` takes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.distributed.tensor import DTensor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._train_step import SeleneStep, batch, device_here, release, sync, train_config  # noqa: E402
from selene.model.init import num_params  # noqa: E402
from selene.plan.cost import USABLE_MEMORY, Layout, Shape, memory  # noqa: E402
from selene.plan.devices import DEVICES, DeviceSpec  # noqa: E402
from selene.plan.study import calibrate, calibration_record, cuda_table_name, predict, probe_cpu  # noqa: E402
from selene.train.args import model_args  # noqa: E402
from selene.train.flops import flops_per_token, measured_matmul_tflops  # noqa: E402
from selene.train.host import reuse_freed_memory  # noqa: E402
from selene.train.peak import device_peak  # noqa: E402


def device_spec(device: torch.device) -> DeviceSpec:
    """The planner's figures for this device: its table entry (CUDA) or this CPU measured."""
    if device.type == "cuda":
        total_gb = torch.cuda.get_device_properties(device).total_memory / 1e9
        entry = cuda_table_name(device.index or 0)
        if entry is not None:
            return dataclasses.replace(DEVICES[entry], memory_gb=total_gb)
        # an unknown GPU: H100's links and efficiency defaults, its own memory and measured peak
        peak = measured_matmul_tflops(device, torch.bfloat16, n=8192)
        name = torch.cuda.get_device_name(device).lower()
        return dataclasses.replace(DEVICES["h100"], name=name, memory_gb=total_gb, peak_tflops=peak)
    return probe_cpu(need_allreduce=False, threads=torch.get_num_threads())


def bound_peak(device: torch.device, precision: str, matmul: float) -> tuple[float, str]:
    """The peak MFU divides by, as training's (`selene.train.peak`: a GPU's data sheet for the math
    the run does, a CPU's cores x clock x FLOPs per cycle); a GPU with no data sheet: the matmul rate
    measured here, said as such (no bound: its MFU can exceed 1)."""
    math = "bf16" if precision == "bf16" else "tf32" if device.type == "cuda" else "fp32"
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = device_peak(device.type, name, math, None)  # type: ignore[arg-type]
    if peak.tflops is None:
        return matmul, f"{peak.origin}; the matmul rate measured here instead (not a bound)"
    return peak.tflops, peak.origin


def layout(mb: int, recompute: str, precision: str, compiled: bool) -> Layout:
    return Layout(tp=1, pp=1, dp=1, micro_batch=mb, recompute=recompute, sharding="replicate",  # type: ignore[arg-type]
                  sequence_parallel=False, precision=precision, compiled=compiled)  # type: ignore[arg-type]


def choose(shape: Shape, spec: DeviceSpec, precision: str, compiled: bool, max_mb: int, mb: int | None,
           recompute: str | None) -> tuple[int, str]:
    """Micro-batch and recomputation: the largest power-of-two micro-batch the planner fits, trying
    no recomputation, then selective, then full; pinned values are kept."""
    modes = [recompute] if recompute else ["none", "selective", "full"]
    sizes = [mb] if mb else [1 << i for i in range(max_mb.bit_length() - 1, -1, -1)]
    for mode in modes:
        for size in sizes:
            parts, _ = memory(shape, layout(size, mode, precision, compiled), size, "cpu" if spec.name == "cpu" else "cuda")
            if parts["total"] <= USABLE_MEMORY * spec.memory_gb:
                return size, mode
    return sizes[-1], modes[-1]  # nothing fits by the model: try the smallest and let the device say


def resident_bytes(step: SeleneStep) -> int:
    """Bytes of the tensors that live across steps: parameters, buffers and optimizer state."""
    seen: dict[int, int] = {}
    tensors = [*step.model.parameters(), *step.model.buffers()]
    for o in step.optims:
        for state in o.state.values():
            tensors += [v for v in state.values() if isinstance(v, torch.Tensor)]
    for t in tensors:
        st = (t.to_local() if isinstance(t, DTensor) else t).untyped_storage()  # FSDP: this rank's shard
        seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def cpu_peak_bytes(step: SeleneStep, x: torch.Tensor, y: torch.Tensor) -> int:
    """Peak bytes of one CPU step: what lives before it plus the high-water mark of its allocations."""
    from torch.profiler import ProfilerActivity, profile

    for o in step.optims:  # the step's first act, done here so that no block from before the profile is freed in it
        o.zero_grad(set_to_none=True)
    before = resident_bytes(step)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step(x, y)
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]  # type: ignore[union-attr]
    running = high = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        running += e.nbytes()
        high = max(high, running)
    return before + high


def run_preset(preset: str, args: argparse.Namespace, device: torch.device, spec: DeviceSpec) -> dict[str, Any]:
    cfg = train_config(preset, args.seq, args.vocab, args.precision, compile=not args.no_compile)
    margs = model_args(cfg.model, args.vocab)
    shape = Shape.from_model_args(margs, args.vocab, args.seq)
    mb, recompute = choose(shape, spec, args.precision, not args.no_compile, args.max_micro_batch, args.micro_batch,
                           args.recompute)
    notes: list[str] = []
    while True:
        cfg = train_config(preset, args.seq, args.vocab, args.precision, compile=not args.no_compile,
                           recompute=recompute)
        step = None
        try:
            step = SeleneStep(cfg, device)
            x, y = batch(args.vocab, mb, args.seq, device)
            for _ in range(args.warmup):
                step(x, y)
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            times = []
            for _ in range(args.steps):
                sync(device)
                t = time.perf_counter()
                step(x, y)  # ends in a sync: the loss is read
                times.append(time.perf_counter() - t)
            peak = (torch.cuda.max_memory_allocated(device) if device.type == "cuda"
                    else cpu_peak_bytes(step, x, y))
            params = num_params(step.model)
            break
        except torch.OutOfMemoryError:
            if mb == 1:
                raise
            notes.append(f"micro-batch {mb} ran out of memory")
            mb //= 2
        finally:
            if step is not None:
                step.close()
            release(device)
    step_s = statistics.median(times)
    tokens_s = mb * args.seq / step_s
    tflops = flops_per_token(margs, args.seq) * tokens_s / 1e12
    tcfg = cfg.model_copy(update={"batch": cfg.batch.model_copy(update={
        "seq_len": args.seq, "global_batch": mb, "micro_batch": mb})})
    measured = {"name": preset, "nproc": 1, "step_time_s": step_s, "step_times_s": times,
                "peak_memory_gb": peak / 1e9, "train_config": tcfg.model_dump(mode="json")}
    return {**measured, "params": params, "micro_batch": mb, "recompute": recompute, "tokens_per_s": tokens_s,
            "model_tflops": tflops, "notes": notes}


def top_kernels(step: SeleneStep, x: torch.Tensor, y: torch.Tensor, device: torch.device, n: int = 15) -> list[dict[str, Any]]:
    """The `n` kernels (CUDA: device self time; CPU: operators' self time) that took longest in one
    profiled step, with their share of the step: where a step below the goal spends its time."""
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    with profile(activities=[ProfilerActivity.CUDA if cuda else ProfilerActivity.CPU]) as prof:
        step(x, y)
        sync(device)
    attr = "self_device_time_total" if cuda else "self_cpu_time_total"
    events = [(e.key, float(getattr(e, attr)), e.count) for e in prof.key_averages()]
    total = sum(t for _, t, _ in events) or 1.0
    events.sort(key=lambda e: -e[1])
    return [{"kernel": k[:120], "ms": t / 1e3, "share": t / total, "calls": c} for k, t, c in events[:n]]


def one_preset(args: argparse.Namespace) -> None:
    """`--one`: a single preset in this process, its row written as JSON to --row-out."""
    device = device_here()
    if device.type == "cpu":
        reuse_freed_memory()  # as selene train's CPU ranks run (selene.train.host)
    else:  # as selene train runs on a GPU (selene.train.loop.resolve_device)
        torch.backends.cuda.matmul.allow_tf32 = True
    spec = dataclasses.replace(device_spec(device), **json.loads(args.spec)) if args.spec else device_spec(device)
    r = run_preset(args.presets, args, device, spec)
    if args.profile_below is not None and device.type == "cuda":
        mfu = r["model_tflops"] / spec.peak_tflops
        if mfu < args.profile_below:  # where the time goes, for a step below the goal
            cfg = train_config(args.presets, args.seq, args.vocab, args.precision, compile=not args.no_compile,
                               recompute=r["recompute"])
            step = SeleneStep(cfg, device)
            x, y = batch(args.vocab, r["micro_batch"], args.seq, device)
            for _ in range(max(1, args.warmup)):
                step(x, y)
            r["top_kernels"] = top_kernels(step, x, y, device)
            step.close()
    Path(args.row_out).write_text(json.dumps(r))


def preset_in_child(preset: str, args: argparse.Namespace, spec: DeviceSpec) -> dict[str, Any]:
    """One preset in a process of its own: compiled code, the allocator's cache and dynamo's
    recompiles of one preset never reach the next one's timing or memory."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        row = Path(tmp) / "row.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", "--presets", preset, "--row-out", str(row),
               "--spec", json.dumps({"memory_gb": spec.memory_gb, "peak_tflops": spec.peak_tflops})]
        for flag in ("seq", "vocab", "precision", "micro_batch", "max_micro_batch", "recompute", "steps", "warmup",
                     "profile_below"):
            if (value := getattr(args, flag)) is not None:
                cmd += [f"--{flag.replace('_', '-')}", str(value)]
        if args.no_compile:
            cmd.append("--no-compile")
        try:
            proc = subprocess.run(cmd, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {"name": preset, "error": f"no result within --timeout {args.timeout} s"}
        if proc.returncode or not row.exists():
            return {"name": preset, "error": f"its process exited with status {proc.returncode} (output above)"}
        return dict(json.loads(row.read_text()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--presets", default=None, help="default: 1.3b,350m,125m on CUDA, debug on CPU")
    ap.add_argument("--seq", type=int, default=None, help="default: 2048 on CUDA, 64 on CPU")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--precision", choices=("bf16", "fp32"), default=None, help="default: bf16 on CUDA, fp32 on CPU")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--micro-batch", type=int, default=None)
    ap.add_argument("--max-micro-batch", type=int, default=16)
    ap.add_argument("--recompute", choices=("none", "selective", "full"), default=None)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=None, help="seconds per preset (its own process)")
    ap.add_argument("--profile-below", type=float, default=None,
                    help="CUDA: profile one more step of a preset whose MFU is below this (e.g. 0.5): top kernels")
    ap.add_argument("--out", default="runs/mfu")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--row-out", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    args = ap.parse_args()
    device = device_here()
    cuda = device.type == "cuda"
    args.seq = args.seq or (2048 if cuda else 64)
    args.precision = args.precision or ("bf16" if cuda else "fp32")
    if args.one:
        return one_preset(args)
    if not cuda:
        reuse_freed_memory()
    args.presets = args.presets or ("1.3b,350m,125m" if cuda else "debug")
    spec = device_spec(device)
    rate_dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32
    matmul = max(measured_matmul_tflops(device, rate_dtype, n=8192 if cuda else 1024) for _ in range(3))
    peak, peak_source = bound_peak(device, args.precision, matmul)
    if not cuda:  # the planner's CPU runs at the matmul rate measured in the run's precision
        spec = dataclasses.replace(spec, peak_tflops=matmul)
    release(device)
    name = torch.cuda.get_device_name(device) if cuda else f"CPU, {torch.get_num_threads()} threads"
    print(f"device: {name}; peak {peak:.1f} TFLOP/s ({peak_source}); measured {rate_dtype} matmul "
          f"{matmul:.1f} TFLOP/s; {spec.memory_gb:.0f} GB")
    print(f"torch {torch.__version__}; seq {args.seq}, vocabulary {args.vocab}, {args.precision}, "
          f"{'eager' if args.no_compile else 'compiled blocks'}; median of {args.steps} steps after {args.warmup}; "
          "each preset in its own process", flush=True)
    head = (f"{'model':<7}{'params':>8}{'mb':>4}{'recompute':>11}{'s/step':>9}{'tokens/s':>11}{'TFLOP/s':>9}"
            f"{'MFU':>7}{'of matmul':>10}{'memory GB':>11}{'planner':>9}")
    rows: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    os.makedirs(args.out, exist_ok=True)
    for preset in args.presets.split(","):
        r = preset_in_child(preset, args, spec)
        if "error" in r:
            failed.append(r)
            print(f"{preset:<7} failed: {r['error']}", flush=True)
            continue
        pred = predict(r, spec)
        r |= {"mfu": r["model_tflops"] / peak, "mfu_of_matmul": r["model_tflops"] / matmul,
              "predicted_memory_gb": pred["predicted_memory_gb"], "predicted_memory": pred["predicted_memory"],
              "predicted_step_s_default": pred["predicted_step_s"]}
        rows.append(r)
        print(head)
        print(f"{preset:<7}{r['params'] / 1e6:>7.0f}M{r['micro_batch']:>4}{r['recompute']:>11}"
              f"{r['step_time_s']:>9.3f}{r['tokens_per_s']:>11,.0f}{r['model_tflops']:>9.2f}{r['mfu']:>7.1%}"
              f"{r['mfu_of_matmul']:>10.1%}{r['peak_memory_gb']:>11.2f}{r['predicted_memory_gb']:>9.2f}"
              + (f"  ({'; '.join(r['notes'])})" if r["notes"] else ""), flush=True)
        for k in r.get("top_kernels", []):
            print(f"    {k['share']:>6.1%} {k['ms']:>9.2f} ms {k['calls']:>5}x  {k['kernel']}")
        # written after every preset: a run cut short keeps what finished
        write_results(args, name, peak, peak_source, matmul, spec, rows, failed, None)
    if not rows:
        raise SystemExit("no preset finished")
    fitted, rms = calibrate(rows, spec)
    calibration = calibration_record(spec, fitted, rms, len(rows)) | {"source": "benchmarks/mfu.py"}
    for r in rows:
        r["predicted_step_s"] = predict(r, fitted)["predicted_step_s"]
    write_results(args, name, peak, peak_source, matmul, spec, rows, failed, calibration)
    print(f"calibration: max_efficiency {fitted.max_efficiency:.3f}, half_work {fitted.half_work:.3g} FLOPs "
          f"(RMS log error {rms:.3f}) -> {os.path.join(args.out, 'calibration.json')}")
    print(f"use: selene plan --model 1.3b --gpus 8 --gpu {spec.name if spec.name in DEVICES else 'h100'} "
          f"--tokens 26B --calibration {os.path.join(args.out, 'calibration.json')}")
    if failed:
        raise SystemExit(f"{len(failed)} preset(s) failed: {', '.join(r['name'] for r in failed)}")


def write_results(args: argparse.Namespace, name: str, peak: float, peak_source: str, matmul: float,
                  spec: DeviceSpec, rows: list[dict[str, Any]], failed: list[dict[str, Any]],
                  calibration: dict[str, Any] | None) -> None:
    with open(os.path.join(args.out, "mfu.json"), "w") as f:
        json.dump({"device": name, "peak_tflops": peak, "peak_source": peak_source, "matmul_tflops": matmul,
                   "spec": dataclasses.asdict(spec), "args": vars(args), "runs": rows, "failed": failed,
                   "calibration": calibration}, f, indent=1)
    if calibration is not None:
        with open(os.path.join(args.out, "calibration.json"), "w") as f:
            json.dump(calibration, f, indent=1)


if __name__ == "__main__":
    main()
