"""The peak that MFU divides by: an upper bound of one device's matmul rate, and where it comes from.

MFU is a fraction of what the hardware can do at most, so the peak must be a figure no step can
beat, fixed by the hardware rather than by how busy the machine was when the run started:

- a known GPU: the vendor's data sheet, dense (no 2:4 sparsity), for the math the run does: bf16
  tensor cores under ``mixed_precision: bf16``; TF32 tensor cores for fp32 (training allows TF32
  for fp32 matmuls, `selene.train.loop.resolve_device`).
- a CPU: cores × clock × FLOPs per cycle of its widest vector or matrix unit, read from
  /proc/cpuinfo's flags. The clock is the kernel's maximum (boost included) where a cpufreq driver
  reports one; a guest that sees none gets `CLOCK_CEILING_GHZ`, the fastest boost clock shipped,
  because the nominal "cpu MHz" of a VM is exceeded under boost: on this project's 2-core EPYC
  guest (2.6 GHz shown), bf16 matmuls reached 962 GFLOP/s, above the 666 that 2.6 GHz allows.
  Ranks on one machine share its cores, so each rank's bound is the machine's over the local ranks.
- float8 training (``parallel.float8``): the block linears run on the float8 tensor cores (twice the
  bf16 rate on Hopper), the attention core and the output layer in bf16, so the bound is the time of
  each share of the step's FLOPs at its own peak: 1 / (s/fp8 + (1 − s)/bf16) for a float8 share s
  (`selene.train.float8.matmul_share`). The origin says so, with both figures.
- anything else (an unknown GPU, a CPU with no vector ISA recognised): no bound, no MFU; a
  configured ``train.peak_tflops`` is used as given.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal

import torch

Math = Literal["bf16", "tf32", "fp32", "fp8"]


@dataclass(frozen=True)
class Peak:
    """A device's peak TFLOP/s for MFU and its origin, said as a reader can check it; `tflops` None:
    no honest bound is known, and MFU is not reported."""

    tflops: float | None
    origin: str


# Dense tensor-core TFLOP/s from NVIDIA's data sheets (their TF32/BF16 figures "with sparsity",
# halved). bf16 989 and 312 are the planner's figures too (selene.plan.devices). FP8 on Hopper is
# twice bf16 (3,958 / 3,026 / 3,341 TFLOPS with sparsity); A100 has no float8 tensor cores.
GPU_PEAKS: dict[str, dict[Math, float]] = {
    "A100": {"bf16": 312.0, "tf32": 156.0, "fp32": 19.5},
    "H100 SXM": {"bf16": 989.0, "tf32": 494.5, "fp32": 67.0, "fp8": 1979.0},
    "H100 PCIe": {"bf16": 756.5, "tf32": 378.0, "fp32": 51.0, "fp8": 1513.0},
    "H100 NVL": {"bf16": 835.5, "tf32": 417.5, "fp32": 60.0, "fp8": 1670.5},
    "H200 SXM": {"bf16": 989.0, "tf32": 494.5, "fp32": 67.0, "fp8": 1979.0},
    "H200 NVL": {"bf16": 835.5, "tf32": 417.5, "fp32": 60.0, "fp8": 1670.5},
}

# The fastest boost clock of a shipping CPU (Intel Core i9-14900KS, 6.2 GHz): the clock a bound
# uses when the machine does not say its own maximum.
CLOCK_CEILING_GHZ = 6.2

# cpufreq drivers whose cpuinfo_max_freq is below the boost clock (acpi-cpufreq reports the highest
# nominal P-state; boost runs above it): their maximum is no bound.
_BELOW_BOOST = ("acpi-cpufreq",)


def gpu_table_entry(name: str) -> str | None:
    """The data-sheet entry of a CUDA device name (``torch.cuda.get_device_name``), or None."""
    n = name.upper()
    form = "NVL" if "NVL" in n else "PCIe" if "PCIE" in n else "SXM"
    if "GH200" in n or "H100" in n:  # GH200's GPU is an H100 SXM's
        return f"H100 {form}"
    if "H200" in n:
        return "H200 NVL" if form == "NVL" else "H200 SXM"
    if "A100" in n:
        return "A100"
    return None


def gpu_peak(name: str, math: Math) -> Peak:
    entry = gpu_table_entry(name)
    if entry is None:
        return Peak(None, f"no data sheet for {name!r}: MFU not reported (set train.peak_tflops)")
    if math not in GPU_PEAKS[entry]:
        return Peak(None, f"{entry} has no {math} tensor cores: MFU not reported (set train.peak_tflops)")
    return Peak(GPU_PEAKS[entry][math], f"datasheet {entry} {math} dense")


def float8_peak(name: str, share: float, rest: Math = "bf16") -> Peak:
    """The bound of a float8 run on GPU `name`: `share` of the FLOPs at the fp8 peak, the rest at the
    peak of the math they run in (`rest`: bf16, or TF32 under fp32 mixed precision)."""
    fp8, other = gpu_peak(name, "fp8"), gpu_peak(name, rest)
    if fp8.tflops is None or other.tflops is None:
        return fp8 if fp8.tflops is None else other
    tflops = 1.0 / (share / fp8.tflops + (1.0 - share) / other.tflops)
    return Peak(
        tflops,
        f"{fp8.origin} for the float8 linears ({share:.0%} of the FLOPs), {other.origin} for the rest",
    )


def flops_per_cycle(flags: set[str], math: Math) -> tuple[int, str] | None:
    """FLOPs one core can issue per cycle for `math` (fp32 with its widest FMA units; bf16 with
    AMX or AVX-512 BF16 when it has them), and the reason, from its /proc/cpuinfo flags; None
    when no unit is recognised. Each figure assumes two FMA pipes: a part with one has half, so
    the figure stays a bound."""
    if "avx512f" in flags:
        fp32 = (64, "avx512f: 2 FMA units x 16 lanes x 2")
    elif "avx2" in flags and "fma" in flags:
        fp32 = (32, "avx2+fma: 2 FMA units x 8 lanes x 2")
    elif "avx" in flags:
        fp32 = (16, "avx: 8-lane add and multiply, no FMA")
    elif "sse2" in flags:
        fp32 = (8, "sse2: 4-lane add and multiply")
    elif "sme" in flags:  # a matrix unit whose rate the flags do not tell
        return None
    elif "sve" in flags:
        fp32 = (64, "sve: up to 2 x 512-bit FMA units")
    elif "asimd" in flags:
        fp32 = (32, "asimd: up to 4 x 128-bit FMA units")
    else:
        return None
    if math == "bf16":
        if "amx_bf16" in flags:  # TDPBF16PS: 16x16x32 multiply-adds per 16 cycles
            return 1024, "amx_bf16: 512 bf16 multiply-adds per cycle"
        if "avx512_bf16" in flags:
            return 128, "avx512_bf16: 2 units x 16 lanes x 2 products x 2"
        if "bf16" in flags and "asimd" in flags:
            return 4 * fp32[0], "arm bf16 (BFMMLA): 4x the fp32 FMA rate"
    return fp32


def max_clock_ghz(cpus: list[int], root: str = "/sys/devices/system/cpu") -> tuple[float, str]:
    """The highest clock these cpus can run at, GHz, and how it is known."""
    best = 0.0
    for cpu in cpus:
        freq = os.path.join(root, f"cpu{cpu}", "cpufreq")
        try:
            with open(os.path.join(freq, "scaling_driver")) as f:
                driver = f.read().strip()
            with open(os.path.join(freq, "cpuinfo_max_freq")) as f:
                khz = int(f.read().strip())
        except (OSError, ValueError):
            return CLOCK_CEILING_GHZ, "no max clock exposed: the fastest boost clock shipped"
        if driver in _BELOW_BOOST:
            return CLOCK_CEILING_GHZ, f"{driver} hides the boost clock: the fastest boost clock shipped"
        best = max(best, khz / 1e6)
    return best, "cpufreq max"


def physical_cores(cpus: list[int], root: str = "/sys/devices/system/cpu") -> int:
    """Cores behind these logical cpus (SMT siblings share one core's FMA units)."""
    cores = set()
    for cpu in cpus:
        topo = os.path.join(root, f"cpu{cpu}", "topology")
        try:
            with open(os.path.join(topo, "physical_package_id")) as f:
                package = f.read().strip()
            with open(os.path.join(topo, "core_id")) as f:
                core = f.read().strip()
        except OSError:
            return len(cpus)
        cores.add((package, core))
    return len(cores)


def cpu_flags(cpuinfo: str) -> set[str]:
    """The feature flags of the first processor in /proc/cpuinfo's text (x86 ``flags``, Arm ``Features``)."""
    m = re.search(r"^(?:flags|Features)\s*:(.*)$", cpuinfo, re.MULTILINE)
    return set(m.group(1).split()) if m else set()


def cpu_peak(
    math: Math, ranks_here: int = 1, cpuinfo: str | None = None, root: str = "/sys/devices/system/cpu"
) -> Peak:
    """The bound of one rank of the ranks on this machine (they share its cores)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    per_cycle = flops_per_cycle(cpu_flags(cpuinfo), "bf16" if math == "bf16" else "fp32")
    if per_cycle is None:
        return Peak(
            None, "cpu: no vector unit recognised in /proc/cpuinfo: MFU not reported (set train.peak_tflops)"
        )
    cpus = (
        sorted(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else list(range(os.cpu_count() or 1))
    )
    cores = physical_cores(cpus, root)
    ghz, clock_origin = max_clock_ghz(cpus, root)
    flops, unit = per_cycle
    tflops = cores * ghz * 1e9 * flops / ranks_here / 1e12
    shared = f" / {ranks_here} ranks on this machine" if ranks_here > 1 else ""
    kind = "bf16" if math == "bf16" else "fp32"
    return Peak(
        tflops,
        f"cpu: {cores} cores x {ghz:.2f} GHz ({clock_origin}) x {flops} {kind} FLOP/cycle ({unit}){shared}",
    )


def device_peak(
    device_type: str, device_name: str, math: Math, configured: float | None, ranks_here: int = 1
) -> Peak:
    """The peak one device's MFU divides by: `configured` (``train.peak_tflops``) when given, else
    the data sheet (GPU) or the ISA bound (CPU)."""
    if configured:
        return Peak(configured, "configured (train.peak_tflops)")
    if device_type == "cuda":
        return gpu_peak(device_name, math)
    if device_type == "cpu":
        return cpu_peak(math, ranks_here)
    return Peak(None, f"no peak known for {device_type} devices: MFU not reported (set train.peak_tflops)")


def training_peak(
    device: torch.device, mixed_precision: str, configured: float | None, float8_share: float = 0.0
) -> Peak:
    """`device_peak` of a training rank: the math its precision runs (fp32 matmuls run as TF32 on
    CUDA; `float8_share` of the FLOPs in float8, `float8_peak`), its ranks on this machine from
    torchrun's LOCAL_WORLD_SIZE."""
    math: Math = "bf16" if mixed_precision == "bf16" else "tf32" if device.type == "cuda" else "fp32"
    if float8_share and not configured and device.type == "cuda":
        return float8_peak(torch.cuda.get_device_name(device), float8_share, math)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    return device_peak(device.type, name, math, configured, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
