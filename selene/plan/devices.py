"""The one table of device figures the planner uses: compute, memory, links, and calibrated efficiency.

Hardware figures are the vendors' data sheets (dense bf16 tensor-core peak, HBM capacity and
bandwidth) and what NCCL reaches on them in practice (bus bandwidth of an all-reduce inside an
8-GPU NVLink/NVSwitch node, and per GPU across nodes over one InfiniBand NIC per GPU: HDR 200 Gb/s on
A100 systems, NDR 400 Gb/s on H100/H200 systems).

Each collective or point-to-point send also costs a fixed latency (α in the α-β model; NCCL ~20 µs).

Two figures are not hardware but calibration, the efficiency curve of the transformer's kernels:
the fraction of peak that one micro-batch of one layer achieves, as a function of its work w (FLOPs
per GPU):  efficiency(w) = max_efficiency · w / (w + half_work).  Large layers run near
`max_efficiency`; small ones are dominated by launches and memory-bound kernels.

- A100: `max_efficiency` 0.536 is calibrated on one published figure, MT-NLG 530B on 2240 A100-80GB at
  60.1 s per iteration (Smith et al. 2022, TP 8 × PP 35, full recomputation); the 2800 and 3360 GPU
  runs, GPT-3 175B and everything else are predictions from it (see tests/plan/test_plan.py).
- H100/H200: no published run of ours calibrates them; they carry A100's figure until
  `selene scaling-study` measures them (``--calibration``), which is what the planner says in its output.
- `half_work` (1e10 FLOPs on A100, 3e10 on H100/H200: a faster chip needs more work per kernel to
  hide its fixed costs) is a rough default that scaling studies refit.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from selene.errors import ConfigError


@dataclass(frozen=True)
class DeviceSpec:
    name: str
    peak_tflops: float  # dense bf16 (on CPU: the measured matmul rate)
    memory_gb: float  # per device, GB (1e9 bytes)
    hbm_gbps: float  # memory bandwidth, GB/s
    intra_node_gbps: float  # all-reduce bus bandwidth inside a node, per GPU, GB/s
    inter_node_gbps: float  # network bandwidth per GPU across nodes, GB/s
    gpus_per_node: int
    max_efficiency: float  # calibrated: fraction of peak large layers reach
    half_work: float  # calibrated: FLOPs per micro-batch-layer at which efficiency is half of max
    calibrated_from: str = "defaults (see selene/plan/devices.py)"
    collective_latency_s: float = 2e-5  # fixed cost of one collective or send (NCCL: ~10-30 µs)
    overlap: bool = True  # communication overlaps compute (GPUs: yes; CPU cores shared with gloo: no)
    # NVLink, for the serving planner's small per-token all-reduces (0: none, use intra_node_gbps and
    # collective_latency_s). Bandwidth per GPU per direction from NVIDIA's data sheets: A100 SXM
    # "NVLink 600 GB/s" and H100/H200 SXM "NVLink 900 GB/s" (bidirectional, 12 and 18 links). The
    # data sheets give no latency; ~1 µs per hop (one ring step through NVSwitch) is the order that
    # NCCL's small-message all-reduce reaches inside an 8-GPU node (about 2(t-1) µs for t GPUs).
    nvlink_gbps: float = 0.0
    nvlink_latency_s: float = 0.0
    # Latency of one kernel launch (the serving planner's fixed costs per layer and per forward): about
    # 4-6 µs from the host's call to the kernel's start on recent NVIDIA GPUs and drivers (the driver
    # and runtime calls of a launch; CUDA graphs remove most of it). 0: none (a CPU's come from a study).
    kernel_launch_s: float = 0.0
    # Streaming multiprocessors (data sheets: A100 108, H100/H200 SXM 132), which the serving planner's
    # GEMM model fills with output tiles; 0: no GEMM model (a CPU, priced by its measured curve)
    sms: int = 0
    # the fraction of the dense peak the best-shaped bf16 matmul reaches: the "maximum achievable matmul
    # FLOPS" measured in Stas Bekman's ML Engineering book (A100 SXM 267.9 of 312 TFLOPS, H100 SXM 792
    # of 989); the serving planner prices GPU GEMMs with it (1.0: unused, a CPU's curve is measured)
    matmul_efficiency: float = 1.0
    # dense fp8 tensor-core peak (H100/H200 data sheets: 3,958 TFLOPS with sparsity, twice bf16) that
    # float8 training's linears run at (selene.plan.cost, float8_compute_s); 0: no float8 tensor cores (A100, CPU)
    fp8_peak_tflops: float = 0.0
    # calibration: the fraction of the bf16 efficiency curve that float8 linears reach (smaller GEMM
    # efficiency at the fp8 rate, scaling kernels the cast model does not see)
    fp8_efficiency: float = 1.0

    def efficiency(self, work_flops: float) -> float:
        return self.max_efficiency * work_flops / (work_flops + self.half_work)


_A100 = dict(
    peak_tflops=312.0,
    intra_node_gbps=230.0,
    inter_node_gbps=23.0,
    gpus_per_node=8,
    max_efficiency=0.536,
    half_work=1e10,
    nvlink_gbps=300.0,
    nvlink_latency_s=1e-6,
    kernel_launch_s=5e-6,
    sms=108,
    matmul_efficiency=0.86,
    calibrated_from="MT-NLG 530B on 2240 A100-80GB, 60.1 s/iteration (Smith et al. 2022)",
)
_HOPPER = dict(
    peak_tflops=989.0,
    fp8_peak_tflops=1979.0,
    # torchtitan's Llama-3 8B on 8 H100s (FSDP, seq 8192, local batch 1, selective recomputation,
    # compiled): 6,667 tokens/s/GPU in bf16, 8,532 with float8 tensorwise (+28%); the planner gives
    # that ratio for that run with this factor (tests/train/test_float8.py)
    fp8_efficiency=0.824,
    intra_node_gbps=370.0,
    inter_node_gbps=45.0,
    gpus_per_node=8,
    max_efficiency=0.536,
    half_work=3e10,
    nvlink_gbps=450.0,
    nvlink_latency_s=1e-6,
    kernel_launch_s=5e-6,
    sms=132,
    matmul_efficiency=0.80,
    calibrated_from="uncalibrated: A100's efficiency; run `selene scaling-study` on this device",
)

DEVICES: dict[str, DeviceSpec] = {
    "a100-40g": DeviceSpec("a100-40g", memory_gb=40.0, hbm_gbps=1555.0, **_A100),  # type: ignore[arg-type]
    "a100-80g": DeviceSpec("a100-80g", memory_gb=80.0, hbm_gbps=2039.0, **_A100),  # type: ignore[arg-type]
    "h100": DeviceSpec("h100", memory_gb=80.0, hbm_gbps=3350.0, **_HOPPER),  # type: ignore[arg-type]
    "h200": DeviceSpec("h200", memory_gb=141.0, hbm_gbps=4800.0, **_HOPPER),  # type: ignore[arg-type]
}


def device(name: str, calibration: str | Path | None = None) -> DeviceSpec:
    """The spec of `name`, with efficiency figures from a scaling study's calibration file if given."""
    if name not in DEVICES:
        raise ConfigError(f"unknown device {name!r}; known: {', '.join(DEVICES)}")
    spec = DEVICES[name]
    return apply_calibration(spec, load_calibration(calibration)) if calibration else spec


def read_calibration_json(p: Path) -> dict[str, Any]:
    """The JSON object of a calibration file, or a ConfigError naming the file and the problem."""
    from selene.config import read_config_text  # lazy: pydantic, yaml: calibration files only

    text = read_config_text(p, "calibration file", " (write one with `selene scaling-study`)")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise ConfigError(f"calibration file {p} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"calibration file {p}: expected a JSON object (from `selene scaling-study`), got {type(data).__name__}")
    return data


def load_calibration(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    data = read_calibration_json(p)
    for key in ("max_efficiency", "half_work"):
        if not isinstance(data.get(key), (int, float)):
            raise ConfigError(f"calibration file {p}: field {key!r} missing or not a number")
    data["source"] = str(p)
    return data


def apply_calibration(spec: DeviceSpec, cal: dict[str, Any]) -> DeviceSpec:
    return replace(
        spec,
        max_efficiency=float(cal["max_efficiency"]),
        half_work=float(cal["half_work"]),
        collective_latency_s=float(cal.get("collective_latency_s", spec.collective_latency_s)),
        calibrated_from=f"scaling study {cal.get('source', '')} ({cal.get('device', '?')})".strip(),
    )


def as_dict(spec: DeviceSpec) -> dict[str, Any]:
    return asdict(spec)
