"""The peak MFU divides by (`selene.train.peak`): an upper bound of what this machine's matmuls reach,
the data sheet for a known GPU, and a tiny training run whose every step's MFU is at most 1."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

import selene
from selene.train import peak
from selene.train.peak import cpu_peak, device_peak, flops_per_cycle, gpu_peak, max_clock_ghz, physical_cores


def best_matmul_tflops(dtype: torch.dtype, n: int = 1024, runs: int = 5) -> float:
    """The best of several timed square matmuls on all of this process's threads."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    best = 0.0
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(3):
            a @ b
        best = max(best, 3 * 2 * n**3 / (time.perf_counter() - t) / 1e12)
    return best


@pytest.mark.parametrize(("math", "dtype"), [("fp32", torch.float32), ("bf16", torch.bfloat16)])
def test_the_cpu_peak_bounds_a_matmul_measured_here(math: str, dtype: torch.dtype) -> None:
    # the peak is made before the measurement and from the hardware only: a busy start cannot lower it
    bound = cpu_peak(math)  # type: ignore[arg-type]
    assert bound.tflops is not None, bound.origin
    measured = best_matmul_tflops(dtype)
    assert 0 < measured < bound.tflops, (measured, bound)
    assert bound.origin.startswith("cpu: ") and "cores x" in bound.origin and "FLOP/cycle" in bound.origin


def test_ranks_on_one_machine_share_its_bound() -> None:
    one, two = cpu_peak("fp32"), cpu_peak("fp32", ranks_here=2)
    assert one.tflops and two.tflops
    assert two.tflops == pytest.approx(one.tflops / 2) and "/ 2 ranks on this machine" in two.origin


def test_flops_per_cycle_from_the_flags() -> None:
    assert flops_per_cycle({"sse2", "avx", "avx2", "fma", "avx512f"}, "fp32") == (
        64,
        "avx512f: 2 FMA units x 16 lanes x 2",
    )
    assert flops_per_cycle({"sse2", "avx", "avx2", "fma"}, "fp32")[0] == 32  # type: ignore[index]
    assert flops_per_cycle({"sse2", "avx"}, "fp32")[0] == 16  # type: ignore[index]
    assert flops_per_cycle({"avx2", "fma", "avx512f", "avx512_bf16"}, "bf16")[0] == 128  # type: ignore[index]
    assert flops_per_cycle({"avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16"}, "bf16")[0] == 1024  # type: ignore[index]
    # no native bf16: it runs at the fp32 rate at most
    assert flops_per_cycle({"avx2", "fma"}, "bf16")[0] == 32  # type: ignore[index]
    assert flops_per_cycle({"asimd"}, "fp32")[0] == 32  # type: ignore[index]
    assert flops_per_cycle({"asimd", "sme"}, "fp32") is None  # a matrix unit of unknown rate: no bound
    assert flops_per_cycle(set(), "fp32") is None
    assert cpu_peak("fp32", cpuinfo="processor\t: 0\n").tflops is None  # no flags: no bound, no MFU


def _sysfs(root: Path, cpus: dict[int, tuple[str, str]], driver: str | None, khz: int = 3_500_000) -> str:
    for cpu, (package, core) in cpus.items():
        topo = root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text(package + "\n")
        (topo / "core_id").write_text(core + "\n")
        if driver is not None:
            freq = root / f"cpu{cpu}" / "cpufreq"
            freq.mkdir()
            (freq / "scaling_driver").write_text(driver + "\n")
            (freq / "cpuinfo_max_freq").write_text(f"{khz}\n")
    return str(root)


def test_the_clock_is_the_kernels_maximum_else_the_ceiling(tmp_path: Path) -> None:
    smt = {0: ("0", "0"), 1: ("0", "0"), 2: ("0", "1"), 3: ("0", "1")}  # two cores, two threads each
    pstate = _sysfs(tmp_path / "pstate", smt, "intel_pstate", khz=4_200_000)
    assert physical_cores([0, 1, 2, 3], pstate) == 2
    assert max_clock_ghz([0, 1, 2, 3], pstate) == (4.2, "cpufreq max")
    # acpi-cpufreq reports the nominal clock, boost runs above it; a guest sees no cpufreq at all
    acpi = _sysfs(tmp_path / "acpi", smt, "acpi-cpufreq")
    assert max_clock_ghz([0, 1], acpi)[0] == peak.CLOCK_CEILING_GHZ
    guest = _sysfs(tmp_path / "guest", {0: ("0", "0")}, None)
    assert max_clock_ghz([0], guest)[0] == peak.CLOCK_CEILING_GHZ


def test_a_known_gpu_gets_its_data_sheet_figure_for_the_math_it_runs() -> None:
    h100 = gpu_peak("NVIDIA H100 80GB HBM3", "bf16")
    assert (h100.tflops, h100.origin) == (989.0, "datasheet H100 SXM bf16 dense")
    assert gpu_peak("NVIDIA H100 80GB HBM3", "tf32").tflops == 494.5
    assert gpu_peak("NVIDIA H100 PCIe", "bf16").tflops == 756.5
    assert gpu_peak("NVIDIA H200", "bf16").origin == "datasheet H200 SXM bf16 dense"
    assert gpu_peak("NVIDIA GH200 480GB", "bf16").tflops == 989.0
    assert gpu_peak("NVIDIA A100-SXM4-80GB", "bf16").tflops == 312.0
    assert gpu_peak("NVIDIA A100-PCIE-40GB", "tf32").tflops == 156.0
    # the planner prices the same chips at the same bf16 figures
    from selene.plan.devices import DEVICES

    for name, entry in (
        ("NVIDIA A100-SXM4-80GB", "a100-80g"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA H200", "h200"),
    ):
        assert gpu_peak(name, "bf16").tflops == DEVICES[entry].peak_tflops
    unknown = gpu_peak("Tesla V100-SXM2-16GB", "bf16")
    assert unknown.tflops is None and "train.peak_tflops" in unknown.origin


def test_a_configured_peak_is_used_as_given() -> None:
    assert device_peak("cpu", "cpu", "fp32", 2.5) == peak.Peak(2.5, "configured (train.peak_tflops)")
    assert device_peak("cuda", "Tesla V100", "bf16", 125.0).tflops == 125.0


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four steps of the debug model on two CPU ranks (they share the machine's bound), as
    `selene train` launches them."""
    from selene.train.config import TrainConfig
    from selene.train.launch import launch
    from tests.pipeline_runs import write_token_dataset

    tmp = tmp_path_factory.mktemp("peak-train")
    prefix = write_token_dataset(tmp)
    out = tmp / "train"
    cfg = TrainConfig.model_validate({
        "model": {"preset": "debug"}, "parallel": {"dp_shard": 2}, "data": {"prefixes": [prefix]}, "steps": 4,
        "log_every": 1, "batch": {"seq_len": 32, "global_batch": 8, "micro_batch": 4}, "eval_every": 100,
        "eval_batches": 1, "tensorboard": False, "checkpoint": {"every": 100}, "out": str(out),
    })  # fmt: skip
    launch(cfg, str(out), 2)
    return out


def test_every_step_of_a_tiny_run_has_mfu_at_most_1(tiny_run: Path) -> None:
    records = [json.loads(line) for line in (tiny_run / "metrics.jsonl").read_text().splitlines()]
    assert len(records) == 4
    info = json.loads((tiny_run / "run.json").read_text())
    assert info["peak_source"].startswith("cpu: ") and "/ 2 ranks on this machine" in info["peak_source"]
    assert info["selene_version"] == selene.__version__
    for r in records:
        assert 0 < r["mfu"] <= 1 and r["peak_tflops"] == info["peak_tflops"]
        assert r["mfu"] == pytest.approx(r["tflops_per_device"] / info["peak_tflops"])


def test_the_report_says_the_peak_and_its_origin(tiny_run: Path) -> None:
    from selene.io.results import StageResult
    from selene.report import section
    from selene.train.view import view

    lines = section(view(StageResult(str(tiny_run), skipped=False)))
    text = "\n".join(lines)
    assert "MFU peak" in text and "cpu: " in text and "FLOP/cycle" in text and "MFU " in text
