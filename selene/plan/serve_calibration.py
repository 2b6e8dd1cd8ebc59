"""Calibration files of `selene plan serve`: a scaling study's device curve and a serving study's
fitted constants (`selene.plan.serve_study`), read into a device and an `Efficiency`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from selene.errors import ConfigError
from selene.plan.devices import DeviceSpec, apply_calibration, read_calibration_json
from selene.plan.serve_cost import Efficiency

SERVING_FIELDS = (
    "prefill_efficiency", "decode_efficiency", "decode_single_efficiency", "decode_kv_efficiency", "decode_compute_efficiency",
    "layer_overhead_s",
    "step_overhead_s",
)  # fmt: skip
DEVICE_FIELDS = ("peak_tflops", "hbm_gbps", "memory_gb")  # a measured device (the CPU of a serving study)


def load_calibration(path: str | Path, dev: DeviceSpec) -> tuple[DeviceSpec, Efficiency]:
    """A scaling study's calibration.json (max_efficiency, half_work: the device curve prefill uses),
    and/or serving fields (`selene.plan.serve_study`): `prefill_efficiency` (fraction of peak prefill
    reaches), `decode_efficiency` (fraction of memory bandwidth a decode step reaches),
    `decode_compute_efficiency` (fraction of peak a compute-bound decode step reaches),
    `decode_single_efficiency` (the bandwidth fraction at batch 1, matrix-vector kernels),
    `decode_kv_efficiency` (the bandwidth fraction of the KV cache's read by attention),
    `decode_overlap` (false: a decode step's memory and compute times add up, as CPU GEMMs of a few
    rows do), `layer_overhead_s` (fixed seconds per layer per forward), and a `measured_device` object
    (name, peak_tflops, hbm_gbps, memory_gb) that replaces the table's figures of that device (the
    CPU, which the table cannot know)."""
    p = Path(path)
    data = read_calibration_json(p)
    curve = [k for k in ("max_efficiency", "half_work") if k in data]
    serving = [k for k in SERVING_FIELDS if k in data]
    if not curve and not serving:
        raise ConfigError(
            f"calibration file {p}: no max_efficiency/half_work (from `selene scaling-study`) and no serving fields "
            f"({', '.join(SERVING_FIELDS)})"
        )
    for key in curve + serving:
        v = data[key]
        bounded = key not in ("half_work", "layer_overhead_s", "step_overhead_s")
        if (
            not isinstance(v, (int, float))
            or isinstance(v, bool)
            or v < 0
            or (v == 0 and bounded)
            or (bounded and v > 1)
        ):
            raise ConfigError(
                f"calibration file {p}: field {key!r} must be a number"
                + (" in (0, 1]" if bounded else " >= 0")
            )
    if curve:
        if len(curve) < 2:
            raise ConfigError(f"calibration file {p}: give both max_efficiency and half_work")
        dev = apply_calibration(dev, {**data, "source": str(p)})
    measured = data.get("measured_device")
    if dev.name == "cpu" and not isinstance(measured, dict):
        raise ConfigError(
            f"calibration file {p}: no measured_device; the CPU's figures come from a serving study (benchmarks/serve.py --cpu)"
        )
    if isinstance(measured, dict) and measured.get("name") == dev.name:
        for key in DEVICE_FIELDS:
            v = measured.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                raise ConfigError(f"calibration file {p}: device.{key} must be a positive number")
        dev = replace(
            dev, peak_tflops=float(measured["peak_tflops"]), hbm_gbps=float(measured["hbm_gbps"]),
            memory_gb=float(measured["memory_gb"]), calibrated_from=f"serving study {p}",
        )  # fmt: skip
    eff = Efficiency()
    if "prefill_efficiency" in data:
        eff = replace(
            eff, prefill=float(data["prefill_efficiency"]), prefill_source=f"prefill_efficiency in {p}"
        )
    if "decode_efficiency" in data:
        eff = replace(
            eff, decode_hbm=float(data["decode_efficiency"]), decode_source=f"decode_efficiency in {p}"
        )
    if "decode_compute_efficiency" in data:
        eff = replace(eff, decode_compute=float(data["decode_compute_efficiency"]))
    if "decode_single_efficiency" in data:
        eff = replace(eff, decode_hbm_single=float(data["decode_single_efficiency"]))
    if "decode_kv_efficiency" in data:
        eff = replace(eff, decode_kv=float(data["decode_kv_efficiency"]))
    if "decode_overlap" in data:
        if not isinstance(data["decode_overlap"], bool):
            raise ConfigError(f"calibration file {p}: field 'decode_overlap' must be true or false")
        eff = replace(eff, decode_overlap=data["decode_overlap"])
    if "layer_overhead_s" in data:
        eff = replace(
            eff, layer_overhead_s=float(data["layer_overhead_s"]), overhead_source=f"layer_overhead_s in {p}"
        )
    if "step_overhead_s" in data:
        eff = replace(
            eff, step_overhead_s=float(data["step_overhead_s"]), overhead_source=f"overheads in {p}"
        )
    return dev, eff
