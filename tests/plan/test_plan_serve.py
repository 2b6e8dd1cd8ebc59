"""`selene plan serve`: memory arithmetic by hand, what fits where, TP's effect on latency, targets,
and the command line."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from selene.errors import ConfigError
from selene.model.args import PRESETS
from selene.plan.cost import GB, Shape
from selene.plan.devices import DEVICES
from selene.plan.serve import make_serve_plan
from selene.plan.serve_calibration import load_calibration
from selene.plan.serve_cost import RESERVE_FRACTION, ServeModel, ServeRequest, _Layout, shape_from_preset
from selene.plan.serve_search import pareto

ROOT = Path(__file__).resolve().parents[2]
H100 = DEVICES["h100"]
SEVEN_B = ServeModel(shape_from_preset("7b"), 32)


def _req(**kw: Any) -> ServeRequest:
    base: dict[str, Any] = {"model": SEVEN_B, "gpus": 1, "device": H100}
    return ServeRequest(**{**base, **kw})


def test_presets_match_the_trainers() -> None:
    from selene.model.args import PRESETS as TRAIN

    assert set(PRESETS) == set(TRAIN)
    for name in PRESETS:
        assert shape_from_preset(name, 32000) == Shape.from_model_args(TRAIN[name], 32000), name


def test_kv_bytes_per_token_by_hand() -> None:
    # 2 (K, V) × 4 layers × 2 kv heads × head_dim 16 (64 / 4 heads) × 2 bytes = 512 bytes
    model = ServeModel(Shape(4, 64, 4, 256, 1000, 128, mlp="gelu"), kv_heads=2)
    assert model.head_dim == 16
    assert model.kv_bytes_per_token(2.0) == 512
    assert model.kv_bytes_per_token(1.0) == 256
    # Llama 2 7B: 2 × 32 × 32 × 128 × 2 = 524,288 bytes = 0.5 MiB per token
    assert SEVEN_B.kv_bytes_per_token(2.0) == 2 * 32 * 32 * 128 * 2 == 2**19
    # GQA narrows K and V: 2 layers' worth of 2·h·(h − kv·head_dim) fewer parameters per layer
    assert model.params == model.shape.params - 4 * 2 * 64 * (64 - 32)


def test_memory_parts_by_hand() -> None:
    model = ServeModel(Shape(4, 64, 4, 256, 1000, 128, mlp="gelu"), kv_heads=2)
    req = ServeRequest(model, 4, H100, prompt=100, output=28, kv_dtype="bf16")
    lay = _Layout(req, tp=2, pp=2)
    mem = lay.memory(3)
    assert mem["weights"] == pytest.approx(model.params * 2 / 4 / GB)
    # KV: 512 bytes per token × 128 tokens × 3 sequences, half the layers (PP 2), half the kv heads (TP 2)
    assert mem["kv"] == pytest.approx(512 * 128 * 3 / 2 / 2 / GB)
    assert mem["reserve"] == pytest.approx(RESERVE_FRACTION * 80)
    total = sum(v for k, v in mem.items() if k != "free")
    assert mem["free"] == pytest.approx(80 - total)
    # TP beyond the kv heads replicates them: TP 4 with 2 kv heads splits the cache 2 ways, not 4
    assert _Layout(req, tp=4, pp=1).memory(3)["kv"] == pytest.approx(512 * 128 * 3 / 2 / GB)


def test_7b_bf16_fits_an_80gb_h100_but_not_a_16gb_gpu() -> None:
    small = dataclasses.replace(H100, name="16g", memory_gb=16.0)
    none = make_serve_plan(_req(device=small, batch=1))
    assert none["layouts"] == [] and none["smallest_if_none_fits"] is not None
    assert none["smallest_if_none_fits"]["memory_gb"]["free"] < 0
    plan = make_serve_plan(_req(batch=1))
    (row,) = plan["layouts"]
    assert row["layout"] == {"tp": 1, "pp": 1, "replicas": 1, "batch": 1, "gpus_per_replica": 1}
    assert row["memory_gb"]["weights"] == pytest.approx(SEVEN_B.params * 2 / GB)
    assert row["memory_gb"]["free"] > 0 and row["max_batch_per_replica"] > 1
    # int8 weights fit the 16 GB GPU
    assert make_serve_plan(_req(device=small, batch=1, weights_dtype="int8"))["layouts"]


def test_more_tp_lowers_itl_at_small_batch_and_adds_communication() -> None:
    rows = {}
    for tp in (1, 2, 4, 8):
        plan = make_serve_plan(_req(gpus=tp, tp=tp, pp=1, batch=1))
        rows[tp] = plan["layouts"][0]
    itl = [rows[t]["itl_ms"] for t in (1, 2, 4, 8)]
    # less than 8x: the kernel launches of each layer do not shrink with TP (FasterTransformer's GPT-20B
    # at batch 1 went 2.7x faster from TP 1 to TP 8, benchmarks/data/serving_published.md)
    assert itl == sorted(itl, reverse=True) and itl[-1] < itl[0] / 2
    comm = [rows[t]["itl_parts_ms"]["tp communication"] for t in (1, 2, 4, 8)]
    assert comm[0] == 0 and comm == sorted(comm) and comm[-1] > comm[1]
    # per GPU, batch 1 at TP 8 yields less than TP 1: latency bought with GPUs
    assert rows[8]["tokens_per_s_per_gpu"] < rows[1]["tokens_per_s_per_gpu"]


def test_prefill_gemms_fill_the_sms_by_tiles() -> None:
    """A GEMM's output tiles (128 × 128) over the SMs: a short prompt at a wide TP split leaves SMs idle,
    a long prompt fills them, and the short prompt is bound by reading the weights."""
    a100 = DEVICES["a100-80g"]
    lay = _Layout(_req(device=a100, gpus=8), tp=8, pp=1)
    assert lay._waves(128, 4096) == pytest.approx(32 / 108)  # 32 tiles on 108 SMs: one partial wave
    assert lay._waves(2048, 4096) == pytest.approx(512 / 540)  # 5 waves, the last one partial
    _, _, eff_short = _Layout(_req(device=a100, gpus=8, prompt=128), tp=8, pp=1).prefill(1)
    _, _, eff_long = _Layout(_req(device=a100, gpus=1, prompt=2048), tp=1, pp=1).prefill(1)
    assert eff_short < 0.5 < 0.6 < eff_long  # 128 tokens at TP 8: a third of the SMs; 2048 at TP 1: most
    tiny = _Layout(_req(device=a100, gpus=8, prompt=16), tp=8, pp=1)
    _, tiny_parts, eff_tiny = tiny.prefill(1)
    assert eff_tiny < eff_short
    # 16 tokens: the rank's share of the weights, read once, takes longer than its GEMMs, and prices them
    read = SEVEN_B.matmul_params * 2.0 / 8 / (a100.hbm_gbps * GB * 0.8)
    assert tiny.gemm_s(16, tiny.stage_layers) < read < tiny_parts["compute"] < 1.1 * read


def test_decode_gemms_and_attention_each_take_their_own_bound() -> None:
    """A decode step's GEMMs (they read the weights) and attention (it reads the KV cache) are kernels
    run one after another: at a large batch the GEMMs are compute-bound, priced by the same tile model
    as prefill, and the KV cache's read adds to them instead of hiding under them."""
    a100 = DEVICES["a100-80g"]
    lay = _Layout(_req(device=a100, batch=384, prompt=128, output=128), tp=1, pp=1)
    st = lay._stage(384)
    assert st["compute gemm"] > st["hbm weights"] and st["hbm kv"] > st["compute attention"]
    assert st["compute gemm"] == pytest.approx(lay.gemm_s(384, lay.stage_layers) + lay.head_s(384))
    itl, parts, _ = lay.decode(384)
    assert itl >= st["compute gemm"] + st["hbm kv"] > 1.3 * max(st["hbm"], st["compute"])
    assert parts["compute"] == pytest.approx(st["compute gemm"]) and parts["hbm"] == pytest.approx(st["hbm kv"])
    # at batch 1 every kernel is bound by its reads: weights plus cache
    st1 = lay._stage(1)
    assert lay.decode(1)[1]["hbm"] == pytest.approx(st1["hbm"]) and lay.decode(1)[1]["compute"] == 0


def test_pipeline_single_stream_pays_every_stage() -> None:
    one = make_serve_plan(_req(gpus=1, tp=1, pp=1, batch=1))["layouts"][0]
    four = make_serve_plan(_req(gpus=4, tp=1, pp=4, batch=1))["layouts"][0]
    # weights read once per token either way: PP does not lower ITL (hand-offs add a little)
    assert four["itl_ms"] >= one["itl_ms"]
    assert four["pp_mode"] == "single stream"


def test_a_full_pipeline_beats_a_single_stream_once_kv_reads_matter() -> None:
    req = _req(gpus=4, tp=1, pp=4, batch=64)
    lay = _Layout(req, 1, 4)
    itl, _, mode = lay.decode(64)
    st = lay._stage(64)
    single = 4 * max(st["hbm"], st["compute"]) + 3 * st["pp hand-offs"]
    assert mode == "pipelined (4 micro-batches)" and itl < single
    row = make_serve_plan(req)["layouts"][0]
    assert row["pp_mode"] == mode and row["itl_ms"] == pytest.approx(itl * 1e3)


def test_pareto_front_has_no_dominated_rows() -> None:
    plan = make_serve_plan(_req(gpus=8, top=100))
    rows = plan["layouts"]
    assert len(rows) >= 3
    assert pareto(rows) == rows
    assert [r["itl_ms"] for r in rows] == sorted(r["itl_ms"] for r in rows)


def test_targets_filter_and_rank() -> None:
    plan = make_serve_plan(_req(gpus=8, itl_ms=5.0))
    assert plan["meets_target"] is True and plan["layouts"]
    assert all(r["itl_ms"] <= 5.0 for r in plan["layouts"])
    per_gpu = [r["tokens_per_s_per_gpu"] for r in plan["layouts"]]
    assert per_gpu == sorted(per_gpu, reverse=True)


def test_target_nothing_meets_names_the_closest() -> None:
    plan = make_serve_plan(_req(gpus=8, itl_ms=0.01))
    assert plan["meets_target"] is False and plan["layouts"] == []
    assert 1 <= len(plan["closest"]) <= 3
    assert plan["closest"][0]["itl_ms"] == min(r["itl_ms"] for r in plan["closest"])


def test_calibration_file_with_serving_fields(tmp_path: Path) -> None:
    f = tmp_path / "cal.json"
    f.write_text(json.dumps({"max_efficiency": 0.4, "half_work": 1e9, "prefill_efficiency": 0.5, "decode_efficiency": 0.6,
                             "decode_kv_efficiency": 0.3}))
    dev, eff = load_calibration(f, H100)
    assert dev.max_efficiency == 0.4 and eff.prefill == 0.5 and eff.decode_hbm == 0.6 and eff.decode_kv == 0.3
    row = make_serve_plan(_req(device=dev, efficiency=eff, batch=1))["layouts"][0]
    assert row["efficiency"]["prefill"]["fraction_of_peak"] == 0.5
    assert str(f) in row["efficiency"]["decode_hbm"]["source"]
    f.write_text(json.dumps({"decode_efficiency": 2}))
    with pytest.raises(ConfigError, match="decode_efficiency"):
        load_calibration(f, H100)


# -------------------------------------------------------------------------------------------- CLI


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "selene.cli", "plan", "serve", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_cli_json_has_the_fields() -> None:
    proc = _serve("--model", "mt-nlg-530b", "--gpu", "h100", "--gpus", "16", "--prompt", "2048", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    row = plan["layouts"][0]
    for key in ("ttft_ms", "itl_ms", "tokens_per_s_per_gpu", "tokens_per_s_total", "max_concurrent_sequences", "binding", "efficiency"):
        assert key in row
    assert set(row["layout"]) >= {"tp", "pp", "replicas", "batch"}
    assert set(row["memory_gb"]) == {"weights", "kv", "activations", "reserve", "free"}
    human = _serve("--model", "7b", "--gpus", "8", "--itl-ms", "0.01")
    assert human.returncode == 0, human.stderr
    assert "no layout meets the target" in human.stdout and "closest" in human.stdout


def test_cli_bad_input_exits_2() -> None:
    proc = _serve("--model", "nope", "--gpus", "8")
    assert proc.returncode == 2 and "unknown model preset 'nope'" in proc.stderr
    proc = _serve("--model", "7b", "--gpus", "8", "--kv-dtype", "fp4")
    assert proc.returncode == 2 and "--kv-dtype 'fp4'" in proc.stderr


def test_fixed_layer_cost_and_cpu_decode_options_by_hand() -> None:
    """A fixed cost per layer adds layers × cost to a decode step and to each prefill chunk; without
    overlap a step's memory and compute times add up; batch 1 may stream at its own rate."""
    from selene.plan.serve_cost import Efficiency

    none = Efficiency(layer_overhead_s=0.0, step_overhead_s=0.0)
    base = _req(batch=4, prompt=128, output=16, tp=1, pp=1, efficiency=none)
    lay = _Layout(base, 1, 1)
    step, _, _ = lay.decode(4)
    fixed = dataclasses.replace(base, efficiency=Efficiency(layer_overhead_s=1e-4, step_overhead_s=1e-3))
    step2, parts2, _ = _Layout(fixed, 1, 1).decode(4)
    assert step2 == pytest.approx(step + 32 * 1e-4 + 1e-3) and parts2["fixed per layer"] == pytest.approx(32 * 1e-4)
    ttft, _, _ = lay.prefill(4)
    ttft2, pparts, _ = _Layout(fixed, 1, 1).prefill(4)
    assert ttft2 == pytest.approx(ttft + 32 * 1e-4 + 1e-3) and pparts["fixed per layer"] == pytest.approx(32 * 1e-4)
    # by default a GPU pays its kernel launches: 12 per layer and 4 per forward at 5 µs each
    launches = _Layout(_req(batch=4, prompt=128, output=16, tp=1, pp=1), 1, 1).decode(4)[0]
    assert launches == pytest.approx(step + (32 * 12 + 4) * H100.kernel_launch_s)
    st = lay._stage(4)
    added = dataclasses.replace(base, efficiency=Efficiency(decode_overlap=False, layer_overhead_s=0.0, step_overhead_s=0.0))
    assert _Layout(added, 1, 1).decode(4)[0] == pytest.approx(st["hbm"] + st["compute"])
    single = dataclasses.replace(base, efficiency=Efficiency(decode_hbm_single=0.4, layer_overhead_s=0.0, step_overhead_s=0.0))
    one = _Layout(single, 1, 1)
    assert one._stage(1)["hbm"] == pytest.approx(lay._stage(1)["hbm"] * 0.8 / 0.4)
    assert one._stage(4)["hbm"] == pytest.approx(lay._stage(4)["hbm"])
    # the KV cache's read at its own rate: weights at 0.8, the cache (4 sequences at 128 + 16/2 tokens) at 0.4
    kv_eff = dataclasses.replace(base, efficiency=Efficiency(decode_kv=0.4, layer_overhead_s=0.0, step_overhead_s=0.0))
    weights = SEVEN_B.matmul_params * 2.0
    kv = SEVEN_B.kv_bytes_per_token(2.0) * (128 + 16 / 2) * 4
    bw = H100.hbm_gbps * GB
    assert lay._stage(4)["hbm"] == pytest.approx((weights + kv) / (0.8 * bw))
    assert _Layout(kv_eff, 1, 1)._stage(4)["hbm"] == pytest.approx(weights / (0.8 * bw) + kv / (0.4 * bw))


def test_cpu_needs_a_serving_study_calibration(tmp_path: Path) -> None:
    from selene.plan.serve_study import Point, calibration_json, cpu_spec, fit, predict

    dev = cpu_spec(0.2, 40.0, 16.0, "test")
    truth = dataclasses.replace(dev, max_efficiency=0.7, half_work=3e8)
    from selene.plan.serve_cost import Efficiency

    eff = Efficiency(decode_hbm=0.3, decode_compute=0.5, decode_hbm_single=0.6, decode_overlap=False,
                     layer_overhead_s=5e-4, step_overhead_s=1e-3)  # fmt: skip
    grid = [Point("125m", b, p, 8, 0.0, 0.0) for b in (1, 4, 16) for p in (64, 512)]
    points = [predict(p, truth, eff) for p in grid]  # what a machine with these constants would measure
    result = fit(points, dev, (5e-4, 1e-3))
    for p in points:  # the fit recovers them: its predictions match within 5%
        q = predict(p, result.device, result.efficiency)
        assert q.ttft_s == pytest.approx(p.ttft_s, rel=0.05) and q.itl_s == pytest.approx(p.itl_s, rel=0.05)
    f = tmp_path / "cpu.json"
    f.write_text(json.dumps(calibration_json(result, points, "test")))
    placeholder = cpu_spec(1.0, 1.0, 1.0, "placeholder")
    loaded, leff = load_calibration(f, placeholder)
    assert loaded.peak_tflops == 0.2 and loaded.hbm_gbps == 40.0 and leff.decode_overlap is False
    assert predict(points[0], loaded, leff).itl_s == pytest.approx(predict(points[0], result.device, result.efficiency).itl_s)
    proc = _serve("--model", "125m", "--vocab", "32000", "--gpu", "cpu", "--gpus", "1", "--batch", "4", "--prompt", "64", "--output", "8",
                  "--weights-dtype", "fp32", "--kv-dtype", "fp32", "--calibration", str(f), "--json")
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)["layouts"][0]
    assert row["itl_ms"] == pytest.approx(predict(Point("125m", 4, 64, 8, 0, 0), loaded, leff).itl_s * 1e3, rel=1e-6)
    bad = _serve("--model", "125m", "--gpu", "cpu", "--gpus", "1")
    assert bad.returncode == 2 and "--gpu cpu needs --calibration" in bad.stderr
    f.write_text(json.dumps({"decode_efficiency": 0.5}))
    with pytest.raises(ConfigError, match="measured_device"):
        load_calibration(f, placeholder)


def test_length_distributions_give_p99_and_plan_kv_for_the_mean(tmp_path: Path) -> None:
    from selene.plan.serve import read_lengths

    f = tmp_path / "prompts.txt"
    f.write_text("# prompt lengths of a day's requests\n" + "\n".join(["512"] * 98 + ["4096", "8192"]) + "\n")
    median, lengths = read_lengths(str(f), "--prompt")
    assert median == 512 and lengths is not None and len(lengths) == 100
    j = tmp_path / "outputs.json"
    j.write_text(json.dumps([100] * 99 + [1000]))
    out_median, out_lengths = read_lengths(str(j), "--output")
    assert out_median == 100
    req = _req(prompt=median, output=out_median, prompt_lengths=lengths, output_lengths=out_lengths, batch=8, tp=1, pp=1)
    row = make_serve_plan(req)["layouts"][0]
    assert req.kv_tokens == pytest.approx((98 * 512 + 4096 + 8192) / 100 + (99 * 100 + 1000) / 100)
    p99 = _Layout(dataclasses.replace(req, prompt=4096, output=100, prompt_lengths=None, output_lengths=None), 1, 1)
    assert row["ttft_p99_ms"] == pytest.approx(p99.prefill(8)[0] * 1e3) and row["ttft_p99_ms"] > row["ttft_ms"]
    single = _Layout(dataclasses.replace(req, prompt_lengths=None, output_lengths=None), 1, 1)
    assert row["memory_gb"]["kv"] > single.memory(8)["kv"]  # the mean is above the median
    strict = dataclasses.replace(req, itl_ms=row["itl_ms"] * 1.01, target_percentile=99, batch=None, tp=None, pp=None)
    assert all(r["itl_p99_ms"] <= strict.itl_ms for r in make_serve_plan(strict)["layouts"])
    (tmp_path / "bad.txt").write_text("12\nlots\n")
    with pytest.raises(ConfigError, match=r"bad\.txt, line 2"):
        read_lengths(str(tmp_path / "bad.txt"), "--prompt")


def test_cli_serves_the_model_a_checkpoint_holds(tmp_path: Path) -> None:
    from selene.model.args import PRESETS

    step = tmp_path / "checkpoints" / "step-000010"
    step.mkdir(parents=True)
    args = dataclasses.asdict(dataclasses.replace(PRESETS["350m"], vocab_size=32000))
    (step / "meta.json").write_text(json.dumps({"step": 10, "model_args": args}))
    proc = _serve("--checkpoint", str(tmp_path), "--gpus", "1", "--gpu", "a100-80g", "--json")
    assert proc.returncode == 0, proc.stderr
    model = json.loads(proc.stdout)["model"]
    assert (model["layers"], model["hidden"], model["heads"], model["vocab"]) == (24, 1024, 16, 32000)
    both = _serve("--checkpoint", str(tmp_path), "--model", "7b", "--gpus", "1")
    assert both.returncode == 2 and "give one of --model, --checkpoint" in both.stderr
