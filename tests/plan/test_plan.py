"""The planner: FLOP and memory formulas against the papers, published run times, the layout search,
and `selene plan` on the command line."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from selene.errors import ConfigError
from selene.plan.cost import Layout, Shape, estimate, memory
from selene.plan.devices import DEVICES, device
from selene.plan.planner import days_at, parse_count, shape_from_preset
from selene.plan.search import Pins, layouts, rank_of, search
from selene.train.args import model_args
from selene.train.config import ModelConfig
from selene.train.flops import flops_per_token

ROOT = Path(__file__).resolve().parents[2]
A100 = DEVICES["a100-80g"]
# MT-NLG 530B as trained (Smith et al. 2022): GPT block with dropout, no fused attention in 2021.
MTNLG = Shape(105, 20480, 128, 81920, 51200, 2048, dropout=True, flash=False, learned_positions=True)
GPT3 = Shape(96, 12288, 96, 49152, 51200, 2048, dropout=True, flash=False, learned_positions=True)


# ------------------------------------------------------------------------------------------ FLOPs


@pytest.mark.parametrize("shape", [MTNLG, GPT3], ids=["mt-nlg", "gpt3"])
def test_full_recompute_flops_equal_narayanan_formula(shape: Shape) -> None:
    """96·B·s·l·h²·(1 + s/6h + V/16lh) per iteration (Narayanan et al. 2021, eq. 3)."""
    B, s, L, h, V = 1920, shape.seq, shape.layers, shape.hidden, shape.vocab
    paper = 96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    ours = shape.hardware_flops_per_token("full") * B * s
    assert ours == pytest.approx(paper, rel=1e-12)
    # without recomputation: 72·B·s·l·h²·(1 + s/6h + V/12lh)
    assert shape.model_flops_per_token() * B * s == pytest.approx(
        72 * B * s * L * h**2 * (1 + s / (6 * h) + V / (12 * L * h)), rel=1e-12
    )


@pytest.mark.parametrize("preset", ["debug", "125m", "7b", "gpt3-175b", "mt-nlg-530b"])
def test_planner_flops_match_the_trainers_mfu_formula(preset: str) -> None:
    args = model_args(ModelConfig(preset=preset), 32000)  # type: ignore[arg-type]
    shape = Shape.from_model_args(args, 32000)
    assert shape.model_flops_per_token() == pytest.approx(flops_per_token(args, args.max_seq_len), rel=1e-12)


def test_parameter_count_matches_the_model() -> None:
    import torch

    from selene.model.init import num_params
    from selene.model.transformer import Transformer
    for preset in ("125m", "gpt3-175b"):
        args = model_args(ModelConfig(preset=preset), 51200)  # type: ignore[arg-type]
        with torch.device("meta"):
            n = num_params(Transformer(args))
        shape = Shape.from_model_args(args, 51200)
        # the planner counts norms as weight + bias; RMSNorm has no bias, Linear biases are left out
        assert shape.params == pytest.approx(n, rel=2e-3), preset


# ------------------------------------------------------------------------------------- activations


def test_activation_bytes_reproduce_korthikanti_table_2() -> None:
    s, b, h, a, t = 2048, 1, 20480, 128, 8
    sbh = s * b * h
    sh = MTNLG
    assert sh.act_bytes_layer(b, 1, False, "none") == pytest.approx(sbh * (34 + 5 * a * s / h))
    assert sh.act_bytes_layer(b, t, False, "none") == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert sh.act_bytes_layer(b, t, True, "none") == pytest.approx(sbh / t * (34 + 5 * a * s / h))
    assert sh.act_bytes_layer(b, t, False, "selective") == pytest.approx(sbh * (10 + 24 / t))
    assert sh.act_bytes_layer(b, t, True, "selective") == pytest.approx(sbh * 34 / t)
    assert sh.act_bytes_layer(b, t, True, "full") == pytest.approx(2 * sbh / t)
    assert sh.act_bytes_layer(b, 1, False, "full") == pytest.approx(2 * sbh)
    # fused attention keeps no s×s scores: no recomputation stores what selective stores
    flash = dataclasses.replace(sh, flash=True)
    assert flash.act_bytes_layer(b, t, True, "none") == pytest.approx(sh.act_bytes_layer(b, t, True, "selective"))


def test_measured_saved_activations_match_the_formula() -> None:
    """Bytes autograd saves per layer in selene's GPT block (fp32 on CPU) vs the planner's count, ×2.

    Weights that matmuls save are parameters, not activations, and are left out. Eager PyTorch keeps a
    little more than Korthikanti's count (the LayerNorm statistics, the dropout masks as bytes of a
    float tensor): measured ratios 1.11 without recomputation, 1.06 selective, 1.00 full.
    """
    import torch

    from selene.model.transformer import Transformer
    from selene.train.parallelize import apply_ac

    s, b, h, a, layers, vocab = 64, 2, 64, 4, 3, 256
    cfg = ModelConfig(preset="mt-nlg-530b", n_layers=layers, dim=h, n_heads=a, ffn_dim=4 * h, max_seq_len=s, dropout=0.1)

    def saved(n_layers: int, mode: str) -> int:
        args = model_args(cfg.model_copy(update={"n_layers": n_layers}), vocab)
        with torch.device("meta"):
            model = Transformer(args)
        apply_ac(model, mode)
        model.to_empty(device="cpu")
        model.init_weights(seed=0)
        model.train()
        seen: dict[int, int] = {}
        weights = {p.untyped_storage().data_ptr() for p in model.parameters()}

        def pack(x: torch.Tensor) -> torch.Tensor:
            st = x.untyped_storage()
            if st.data_ptr() not in weights:  # matmuls save their weight too: a parameter, not an activation
                seen[st.data_ptr()] = st.nbytes()
            return x

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            model(torch.randint(0, vocab, (b, s)))
        return sum(seen.values())

    shape = Shape(layers, h, a, 4 * h, vocab, s, dropout=True, flash=False)
    for mode in ("none", "selective", "full"):
        per_layer = (saved(layers, mode) - saved(1, mode)) / (layers - 1)
        predicted = 2 * shape.act_bytes_layer(b, 1, False, mode)  # type: ignore[arg-type]
        assert 0.98 <= per_layer / predicted <= 1.15, (mode, per_layer, predicted)


def test_memory_parts_follow_sharding_and_recomputation() -> None:
    base = Layout(8, 35, 8, 1, "none", "replicate", 1, True)
    parts = {sh: memory(MTNLG, dataclasses.replace(base, sharding=sh), 1920)[0] for sh in ("replicate", "zero2", "zero3")}
    params_per_gpu = memory(MTNLG, base, 1920)[1]
    assert parts["replicate"]["weights+optimizer"] == pytest.approx(12 * params_per_gpu / 1e9)
    fp32 = memory(MTNLG, dataclasses.replace(base, precision="fp32"), 1920)[0]
    assert fp32["gradients"] == pytest.approx(4 * params_per_gpu / 1e9)
    # bf16 (FSDP): while a unit's gradient is reduced, its bf16 gradient and fp32 copy exist too
    unit = max(MTNLG.embedding_params, MTNLG.output_params, MTNLG.layer_params) / 8
    assert parts["replicate"]["gradients"] == pytest.approx((4 * params_per_gpu + 6 * unit) / 1e9)
    # a pipeline accumulates gradients over micro-batches: they and the activations add up
    for p in parts.values():
        assert p["total"] == pytest.approx(sum(v for k, v in p.items() if k != "total"))
    # one device, one micro-batch: gradients appear in backward as activations go, the peak holds the larger
    one = memory(MTNLG, Layout(1, 1, 1, 1, "full", "replicate", 1, False), 1)[0]
    big = max(one["gradients"], one["activations"])
    assert one["total"] == pytest.approx(one["weights+optimizer"] + one["working weights"] + big)
    accumulating = memory(MTNLG, Layout(1, 1, 1, 1, "full", "replicate", 1, False), 2)[0]
    assert accumulating["total"] == pytest.approx(one["total"] + min(one["gradients"], one["activations"]))
    assert parts["zero2"]["working weights"] > parts["zero3"]["working weights"]
    acts = {rc: memory(MTNLG, dataclasses.replace(base, recompute=rc), 1920)[0]["activations"] for rc in ("none", "selective", "full")}
    assert acts["none"] > acts["selective"] > acts["full"]
    # 1F1B: the first stage holds pp micro-batches of its 3 layers = all 105 layers' activations
    sp_layer = MTNLG.act_bytes_layer(1, 8, True, "selective")
    assert acts["selective"] == pytest.approx((105 * sp_layer + 35 * MTNLG.act_bytes_extra_first(1, 8, True)) / 1e9)


# --------------------------------------------------------------------------- published validation


@pytest.mark.parametrize(("gpus", "published_s", "published_tflops"), [(2240, 60.1, 126), (2800, 50.2, 121), (3360, 44.4, 113)])
def test_mt_nlg_iteration_time_within_15_percent(gpus: int, published_s: float, published_tflops: float) -> None:
    """Smith et al. 2022, table 1: TP 8 × PP 35, global batch 1920, A100-80GB, full recomputation.
    The A100 efficiency is calibrated on the 2240-GPU row; the other two are predictions."""
    lay = Layout(8, 35, gpus // 280, 1, "full", "replicate", 1, False)
    est = estimate(MTNLG, lay, 1920, A100)
    assert est.fits
    assert abs(est.iteration_s / published_s - 1) < 0.15, est.time
    assert abs(est.hardware_tflops / published_tflops - 1) < 0.15


def test_zero3_layouts_count_their_gathers_and_reduce_scatters() -> None:
    """GPT-3 175B at TP 8 × ZeRO-3 × DP 128 (what the search once picked at 153 TFLOP/s with no data-
    parallel term in its breakdown): every micro-batch all-gathers the bf16 weights twice and reduce-
    scatters the fp32 gradients once over DP 128 across nodes; overlapped with compute, 10% of the
    hidden time still paid."""
    from selene.plan.cost import OVERLAP_COST

    lay = Layout(8, 1, 128, 4, "none", "zero3")
    est = estimate(GPT3, lay, 2048, A100)
    m = 2048 // (128 * 4)
    local = est.params_per_gpu
    bw = A100.inter_node_gbps * 1e9
    blocks = GPT3.layers + 1
    gather = 2 * (127 / 128 * 2 * local / bw + blocks * A100.collective_latency_s)
    reduce = 127 / 128 * 4 * local / bw + blocks * A100.collective_latency_s
    assert est.time["fsdp gathers (all)"] == pytest.approx(m * gather)
    assert est.time["dp gradient reduction (all)"] == pytest.approx(m * reduce)
    compute_mb = est.time["compute"] / m
    assert gather < compute_mb and reduce < compute_mb * 2 / 3  # hidden: only the overlap's cost shows
    assert est.time["fsdp gathers (exposed)"] == pytest.approx(m * OVERLAP_COST * gather)
    assert est.time["dp gradient reduction (exposed)"] == pytest.approx(m * OVERLAP_COST * reduce)
    parts = ("compute", "tp communication", "pp communication", "fsdp gathers (exposed)", "pipeline bubble",
             "dp gradient reduction (exposed)", "optimizer step")
    assert est.time["iteration"] == pytest.approx(sum(est.time[k] for k in parts))
    # Megatron's own layout for it (Narayanan et al. 2021: TP 8 × PP 8 × DP 16, full recomputation,
    # batch 1536): 140 TFLOP/s published
    megatron = estimate(GPT3, Layout(8, 8, 16, 1, "full", "replicate"), 1536, A100)
    assert abs(megatron.hardware_tflops / 140 - 1) < 0.10, megatron.time


def test_mt_nlg_layout_is_among_the_top_for_2240_gpus() -> None:
    result = search(MTNLG, 2240, 1920, A100)
    rank = rank_of(result, {"tp": 8, "pp": 35})
    assert rank is not None and rank <= 5, [e.layout.label() for e in result.ranked[:10]]
    # and with MT-NLG's own choices pinned (full recomputation, no sharding) too
    pinned = search(MTNLG, 2240, 1920, A100, Pins(recompute="full", sharding="replicate", sequence_parallel=False))
    assert (rank := rank_of(pinned, {"tp": 8, "pp": 35})) is not None and rank <= 5
    # the search's predictions keep MT-NLG's ordering: more GPUs, less time per iteration
    times = [search(MTNLG, n, 1920, A100).ranked[0].iteration_s for n in (2240, 2800, 3360)]
    assert times == sorted(times, reverse=True)


def test_gpt3_days_to_train_reproduce_34_and_24_days() -> None:
    """GPT-3 175B, 300B tokens, 1024 A100s. Narayanan et al. 2021: 140 TFLOP/s per GPU → 34 days
    (with full recomputation). NeMo Megatron 2022: 24 days after sequence parallelism and selective
    recomputation; at the throughput that implies (154 TFLOP/s, selective) the planner gives 24."""
    assert days_at(GPT3, 300e9, 1024, 140, "full") == pytest.approx(34, rel=0.03)
    assert days_at(GPT3, 300e9, 1024, 154, "selective") == pytest.approx(24, rel=0.03)
    # the same through a layout estimate with a given throughput
    est = estimate(GPT3, Layout(8, 16, 8, 1, "full", "replicate"), 1536, A100, tflops=140)
    assert est.days(300e9, 1536, 2048) == pytest.approx(34, rel=0.03)
    # and what the planner's own search predicts (reported in the closing note; sanity-bounded here)
    best = search(GPT3, 1024, 1536, A100).ranked[0]
    assert 0.25 < best.mfu < 0.7
    assert 10 < best.days(300e9, 1536, 2048) < 60


# -------------------------------------------------------------------------------------- search


def test_search_yields_only_legal_layouts_and_respects_pins() -> None:
    shape = shape_from_preset("1.3b", 32000, 2048)
    seen = list(layouts(shape, 64, 512, A100))
    assert seen
    for lay in seen:
        assert lay.tp * lay.pp * lay.dp == 64
        assert shape.heads % lay.tp == 0 and lay.tp <= 8 and lay.pp <= shape.layers
        assert 512 % (lay.dp * lay.micro_batch) == 0
        if lay.virtual > 1:
            assert shape.layers % (lay.pp * lay.virtual) == 0
    pinned = list(layouts(shape, 64, 512, A100, Pins(tp=2, recompute="full")))
    assert pinned and all(lay.tp == 2 and lay.recompute == "full" for lay in pinned)
    result = search(shape, 64, 512, A100)
    times = [e.iteration_s for e in result.ranked]
    assert times == sorted(times) and all(e.fits for e in result.ranked)


def test_nothing_fits_reports_the_smallest_and_no_legal_layout_is_an_error() -> None:
    result = search(MTNLG, 8, 64, A100)
    assert result.ranked == [] and result.smallest is not None
    assert result.smallest.memory["total"] > 0.9 * 80
    with pytest.raises(ConfigError, match="no legal layout"):
        search(MTNLG, 16, 3, A100, Pins(tp=8, pp=1))  # DP 2 cannot split a batch of 3
    with pytest.raises(ConfigError, match="unknown device"):
        device("a100-81g")


def test_calibration_file_changes_efficiency(tmp_path: Path) -> None:
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps({"max_efficiency": 0.25, "half_work": 1e9, "device": "h100"}))
    dev = device("h100", cal)
    assert dev.max_efficiency == 0.25 and "scaling study" in dev.calibrated_from
    slow = estimate(MTNLG, Layout(8, 35, 8, 1, "full", "replicate"), 1920, dev)
    fast = estimate(MTNLG, Layout(8, 35, 8, 1, "full", "replicate"), 1920, DEVICES["h100"])
    assert slow.iteration_s > 1.8 * fast.time["compute"]
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match="max_efficiency"):
        device("h100", tmp_path / "bad.json")


def test_parse_count() -> None:
    assert parse_count("300B") == 300e9
    assert parse_count("1.5T") == 1.5e12
    assert parse_count("3e11") == 3e11
    with pytest.raises(ConfigError, match="--tokens"):
        parse_count("lots")


# -------------------------------------------------------------------------------------------- CLI


def _plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "selene.cli", "plan", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_cli_plans_the_mt_nlg_config_without_running(tmp_path: Path) -> None:
    proc = _plan("configs/mt-nlg.yaml", "--no-flash", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["gpus"] == 2240 and plan["global_batch"] == 1920
    assert plan["model"]["params"] == pytest.approx(530e9, rel=0.01)
    conf = plan["configured"]
    assert conf["layout"]["tp"] == 8 and conf["layout"]["pp"] == 35 and conf["layout"]["recompute"] == "full"
    assert conf["fits"] and math.isfinite(conf["days"])
    assert plan["layouts"][0]["layout"]["tp"] == 8 and plan["layouts"][0]["layout"]["pp"] == 35
    assert not (ROOT / "runs" / "mt-nlg").exists() or not any((ROOT / "runs" / "mt-nlg").glob("train/checkpoints/*"))
    human = _plan("--model", "gpt3-175b", "--gpus", "1024", "--tokens", "300B", "--global-batch", "1536", "--top", "3")
    assert human.returncode == 0, human.stderr
    assert "top 3 layouts" in human.stdout and "days" in human.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "gpt3-175b", "--gpus", "64", "--tokens", "1B", "--gpu", "v100"], "unknown device 'v100'"),
        (["--model", "gpt3-175b", "--gpus", "64", "--tokens", "1B", "--recompute", "some"], "--recompute 'some'"),
        (["--model", "gpt3-175b", "--tokens", "1B"], "--gpus is required"),
        (["--model", "nope", "--gpus", "8", "--tokens", "1B"], "unknown model preset 'nope'"),
        (["--layers", "4", "--hidden", "100", "--heads", "3", "--gpus", "8", "--tokens", "1B"], "not divisible"),
        (["--model", "125m", "--gpus", "8", "--tokens", "1B", "--calibration", "/nonexistent.json"], "does not exist"),
    ],
)
def test_cli_bad_input_exits_2_with_a_message(args: list[str], message: str) -> None:
    proc = _plan(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
