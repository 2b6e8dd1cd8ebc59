"""float8 training (selene.train.float8) on the CPU, as far as torchao runs there.

torchao's `Float8Linear` forward and backward run on the CPU (`torch._scaled_mm` has a CPU kernel),
so conversion, numerics against bf16, FSDP2 with float8 all-gather, TP and checkpoints are tested
here. What gloo cannot do: all-gather a float8 tensor (it has no float8 type: "Invalid scalar type";
NCCL moves float8 as bytes, and FSDP2 gathers through a byte buffer, so FSDP works). The one
collective that hits it is TP's sequence-parallel all-gather in float8 (`PrepareFloat8ModuleInput`),
so tensorwise TP runs here on two ranks without sequence parallelism, and with it on a TP mesh of one
rank (the float8 styles and selene's blocks end to end, no float8 collective). Speed and loss against bf16 on a GPU are not measured here.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
)

from selene.errors import ConfigError
from selene.model.transformer import Transformer
from selene.plan.cost import Layout, Shape, estimate
from selene.plan.devices import device
from selene.train import float8
from selene.train.args import model_args
from selene.train.config import ModelConfig, ParallelConfig, TrainConfig
from selene.train.peak import float8_peak, training_peak
from tests.distributed import Run, batches, reference, run_world

DEBUG = model_args(ModelConfig(preset="debug"), vocab_size=128)
LINEARS = ("attention.wq", "attention.wk", "attention.wv", "attention.wo", "feed_forward.w1", "feed_forward.w2",
           "feed_forward.w3")  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]


def _model(margs: Any = DEBUG, seed: int = 7) -> Transformer:
    with torch.device("meta"):
        model = Transformer(margs)
    model.to_empty(device="cpu")
    model.init_weights(seed=seed)
    return model


# ------------------------------------------------------------------------------ conversion


def test_conversion_swaps_the_block_linears_and_keeps_the_rest_in_high_precision() -> None:
    with torch.device("meta"):
        model = Transformer(DEBUG)
    names = list(model.state_dict())
    converted = float8.convert(model, "tensorwise", fsdp=False)
    expected = [f"layers.{i}.{n}" for i in range(DEBUG.n_layers) for n in LINEARS]
    assert sorted(converted) == sorted(expected)
    for name, module in model.named_modules():
        assert float8.is_float8(module) == (name in expected), name
    assert type(model.output) is nn.Linear  # the output layer, the embeddings and the norms stay as they were
    assert type(model.tok_embeddings) is nn.Embedding
    assert not any(float8.is_float8(m) for m in (model.norm, model.layers["0"].attention_norm))
    assert list(model.state_dict()) == names  # checkpoints keep their keys


def test_linears_whose_dims_or_shards_are_not_multiples_of_16_stay_in_bf16() -> None:
    odd = dataclasses.replace(DEBUG, ffn_dim=200)  # 200 = 12 × 16 + 8
    with torch.device("meta"):
        model = Transformer(odd)
    converted = float8.convert(model, "rowwise", fsdp=False)
    assert {n.split(".", 2)[2] for n in converted} == {
        "attention.wq",
        "attention.wk",
        "attention.wv",
        "attention.wo",
    }
    square = nn.Linear(64, 64)
    assert float8.convertible(square, "layers.0.attention.wq", tp=4)  # 64/4 = 16 output rows a rank
    assert not float8.convertible(square, "layers.0.attention.wq", tp=8)  # 8 rows a rank
    assert not float8.convertible(nn.Linear(64, 32), "layers.0.attention.wo", tp=8)  # its input is split: 8
    assert float8.convertible(nn.Linear(64, 32), "layers.0.attention.wo", tp=4)  # its 32 outputs are not
    assert not float8.convertible(square, "output")


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_forward_backward_of_the_converted_model_is_close_to_bf16(recipe: str) -> None:
    plain = _model()
    fp8 = copy.deepcopy(plain)
    float8.convert(fp8, recipe, fsdp=False)
    tokens, labels = batches(Run(DEBUG, batch=4, seq=64, steps=1))[0]
    losses, grads = [], []
    for model in (plain, fp8):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(tokens, labels)
        loss.backward()
        losses.append(float(loss.detach()))
        grads.append({n: p.grad.float() for n, p in model.named_parameters()})
    assert abs(losses[0] - losses[1]) < 1e-2
    assert losses[0] != losses[1]  # the float8 matmuls did run
    for name, g in grads[0].items():
        cosine = torch.nn.functional.cosine_similarity(g.flatten(), grads[1][name].flatten(), dim=0)
        assert cosine > 0.98, (name, float(cosine))


def test_tensorwise_tp_plan_uses_torchaos_float8_styles() -> None:
    """The block plan `apply_tp` builds with sequence parallelism, mapped as torchtitan does."""
    plan: dict[str, Any] = {
        "attention.wq": ColwiseParallel(),
        "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
        "feed_forward.w1": ColwiseParallel(),
        "attention_norm": SequenceParallel(),
        "attention": PrepareModuleInput(
            input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)
        ),
    }
    from torchao.float8.float8_tensor_parallel import (
        Float8ColwiseParallel,
        Float8RowwiseParallel,
        PrepareFloat8ModuleInput,
    )

    with torch.device("meta"):
        tensorwise, rowwise, plain = Transformer(DEBUG), Transformer(DEBUG), Transformer(DEBUG)
    float8.convert(tensorwise, "tensorwise", fsdp=True, tp=2)
    float8.convert(rowwise, "rowwise", fsdp=True, tp=2)
    mapped = float8.float8_tp_plan(tensorwise.layers["0"], plan)
    assert type(mapped["attention.wq"]) is Float8ColwiseParallel
    assert type(mapped["attention.wo"]) is Float8RowwiseParallel
    assert mapped["attention.wo"].output_layouts == (Shard(1),)
    assert type(mapped["attention"]) is PrepareFloat8ModuleInput
    assert mapped["attention"].input_layouts == (Shard(1), None)
    assert mapped["attention_norm"] is plan["attention_norm"]
    # rowwise has no float8 all-gather: DTensor's own styles, as torchtitan
    assert float8.float8_tp_plan(rowwise.layers["0"], plan) is plan
    assert float8.float8_tp_plan(plain.layers["0"], plan) is plan


def _sequence_parallel_float8(rank: int, world: int) -> dict[str, Any]:
    """The debug model, tensorwise float8, under `apply_tp` with sequence parallelism on a TP mesh of
    one rank: the float8 styles and selene's blocks run end to end without a float8 collective."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import loss_parallel

    from selene.train.parallelize import _fill_shard, apply_tp

    with torch.device("meta"):
        model = Transformer(DEBUG)
    float8.convert(model, "tensorwise", fsdp=False)
    apply_tp(model, init_device_mesh("cpu", (1,), mesh_dim_names=("tp",)), sequence_parallel=True)
    model.to_empty(device="cpu")
    model.init_weights(seed=7, fill=_fill_shard)
    seen: list[str] = []
    wq = model.layers["0"].attention.wq  # type: ignore[index,union-attr]
    wq.register_forward_pre_hook(lambda _, args: seen.append(type(args[0]._local_tensor).__name__))
    tokens, labels = batches(Run(DEBUG, batch=2, seq=64, steps=1))[0]
    with loss_parallel():
        loss = model(tokens, labels)
        loss.backward()
    loss = loss.full_tensor() if isinstance(loss, DTensor) else loss
    return {"loss": float(loss.detach()), "wq_input": seen, "plain": float(_model()(tokens, labels).detach())}


def test_tensorwise_float8_with_sequence_parallelism_runs_selenes_blocks() -> None:
    result = run_world(1, _sequence_parallel_float8)[0]
    assert result["wq_input"] == ["Float8TrainingTensor"]  # cast before the (here trivial) all-gather
    assert abs(result["loss"] - result["plain"]) < 5e-3


def test_torchao_is_imported_only_when_float8_is_on_and_quietly() -> None:
    code = (
        "import sys\n"
        "import selene.train.loop, selene.train.parallelize\n"
        "assert 'torchao' not in sys.modules, 'torchao imported without float8'\n"
        "from selene.train import float8\n"
        "float8.linear_config('tensorwise', True)\n"
        "assert 'torchao' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Failed to load" not in proc.stderr and "_pytree" not in proc.stderr, proc.stderr


# ------------------------------------------------------------------------------ layouts on gloo


def _train(rank: int, world: int, run: Run, pcfg: ParallelConfig) -> dict[str, Any]:
    """`run` under `pcfg` as the loop trains it (`after_optimizer_step` included)."""
    from selene.train.dims import ParallelDims
    from selene.train.parallelize import build_parallel_model

    dims = ParallelDims(pcfg.dp_replicate, pcfg.dp_shard, pcfg.tp, pcfg.pp, world)
    pm = build_parallel_model(run.margs, pcfg, dims, dims.build_mesh("cpu"), torch.device("cpu"), run.seed)
    opts = [
        torch.optim.AdamW(part.parameters(), lr=run.lr, betas=(0.9, 0.95), weight_decay=0.1)
        for part in pm.parts
    ]
    share = run.batch // dims.dp
    rows = slice(
        dims.get_mesh("dp").get_local_rank() * share, (dims.get_mesh("dp").get_local_rank() + 1) * share
    )
    wq = next(iter(pm.parts[0].layers.values())).attention.wq  # type: ignore[union-attr,operator]
    losses, norms = [], []
    for tokens, labels in batches(run):
        for o in opts:
            o.zero_grad(set_to_none=True)
        losses.append(float(pm.forward_backward(tokens[rows], labels[rows])))
        norms.append(float(pm.clip_grad_norm(run.max_norm)))
        for o in opts:
            o.step()
        pm.after_optimizer_step()
    local = wq.weight._local_tensor if isinstance(wq.weight, DTensor) else wq.weight
    return {
        "loss": losses,
        "norm": norms,
        "float8_linear": float8.is_float8(wq),
        "weight_type": type(local).__name__,
        "precomputed_scale": getattr(local, "_precomputed_scale", None) is not None,
        "gathers_float8": pm.float8_scales,
    }


def _checkpoint_round_trip(rank: int, world: int, path: str) -> dict[str, Any]:
    """A float8 FSDP model's DCP checkpoint into a bf16 model (float8 off) of another seed, and back."""
    import torch.distributed.checkpoint as dcp

    from selene.train.checkpoint import ModelState
    from selene.train.dims import ParallelDims
    from selene.train.parallelize import build_parallel_model

    dims = ParallelDims(1, 2, 1, 1, world)
    mesh = dims.build_mesh("cpu")

    def build(recipe: str | None, seed: int) -> list[nn.Module]:
        pcfg = ParallelConfig(dp_shard=2, mixed_precision="bf16", float8=recipe)  # type: ignore[arg-type]
        return build_parallel_model(DEBUG, pcfg, dims, mesh, torch.device("cpu"), seed).parts

    def full(parts: list[nn.Module]) -> dict[str, torch.Tensor]:
        return {k: (v.full_tensor() if isinstance(v, DTensor) else v).detach().clone()
                for k, v in ModelState(parts).state_dict().items()}  # fmt: skip

    fp8 = build("tensorwise", 1)
    dcp.save({"model": ModelState(fp8)}, checkpoint_id=os.path.join(path, "float8"))
    plain = build(None, 2)
    dcp.load({"model": ModelState(plain)}, checkpoint_id=os.path.join(path, "float8"))
    dcp.save({"model": ModelState(plain)}, checkpoint_id=os.path.join(path, "bf16"))
    back = build("tensorwise", 3)
    dcp.load({"model": ModelState(back)}, checkpoint_id=os.path.join(path, "bf16"))
    a, b, c = full(fp8), full(plain), full(back)
    return {
        "keys_equal": list(a) == list(b) == list(c),
        "into_bf16": max(float((a[k] - b[k]).abs().max()) for k in a),
        "back": max(float((a[k] - c[k]).abs().max()) for k in a),
        "other_seed_differs": float(
            (full(build(None, 2))["layers.0.attention.wq.weight"] - a["layers.0.attention.wq.weight"])
            .abs()
            .max()
        ),
    }


def _world(rank: int, world: int, jobs: list[tuple[str, Run, ParallelConfig]], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {name: _train(rank, world, run, pcfg) for name, run, pcfg in jobs}
    out["checkpoint"] = _checkpoint_round_trip(rank, world, path)
    return out


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_float8_under_fsdp2_and_tp2_on_gloo_trains_like_the_plain_model(tmp_path: Path) -> None:
    """Two ranks: FSDP2 tensorwise (float8 all-gather, scales precomputed), FSDP2 rowwise, TP 2
    tensorwise (torchao's float8 styles; without SP, see the module's docstring), TP 2 + SP rowwise,
    PP 2 tensorwise;
    each within float8's error of the single-process fp32 model, the same on both ranks; then a
    float8 checkpoint into a bf16 model and back."""
    run = Run(DEBUG, steps=3)
    ref = reference(run)
    layouts = {
        "fsdp2_tensorwise": ParallelConfig(dp_shard=2, float8="tensorwise"),
        "fsdp2_rowwise": ParallelConfig(dp_shard=2, float8="rowwise", mixed_precision="bf16"),
        "tp2_tensorwise": ParallelConfig(dp_shard=1, tp=2, sequence_parallel=False, float8="tensorwise"),
        "tp2_sp_rowwise": ParallelConfig(dp_shard=1, tp=2, float8="rowwise", mixed_precision="bf16"),
        "pp2_tensorwise": ParallelConfig(dp_shard=1, pp=2, pp_microbatches=2, float8="tensorwise"),
    }
    results = run_world(2, _world, [(n, run, p) for n, p in layouts.items()], str(tmp_path))
    for name in layouts:
        mine, other = results[0][name], results[1][name]
        assert mine["loss"] == other["loss"] and mine["norm"] == other["norm"], name
        assert mine["float8_linear"], name
        # bf16 layouts round more than fp32 ones; float8 more still
        tol = 3e-2 if layouts[name].mixed_precision == "bf16" else 5e-3
        for got, want in zip(mine["loss"], ref["loss"], strict=True):
            assert abs(got - want) < tol, (name, mine["loss"], ref["loss"])
        for got, want in zip(mine["norm"], ref["norm"], strict=True):
            assert abs(got - want) < 0.05 * want, (name, mine["norm"], ref["norm"])
    fsdp = results[0]["fsdp2_tensorwise"]
    assert fsdp["gathers_float8"] and fsdp["weight_type"] == "WeightWithDynamicFloat8CastTensor"
    assert fsdp["precomputed_scale"]  # after_optimizer_step computed the next all-gather's scales
    assert not results[0]["fsdp2_rowwise"]["gathers_float8"]
    assert results[0]["fsdp2_rowwise"]["weight_type"] == "Tensor"
    ckpt = results[0]["checkpoint"]
    assert ckpt["keys_equal"] and ckpt["into_bf16"] == 0.0 and ckpt["back"] == 0.0
    assert ckpt["other_seed_differs"] > 0


# ------------------------------------------------------------------------------ refusals


def test_float8_is_refused_on_a_cpu_and_on_gpus_before_compute_capability_8_9(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tw = ParallelConfig(float8="tensorwise")
    with pytest.raises(
        ConfigError, match=r"^parallel\.float8 tensorwise needs an NVIDIA GPU .* trains on the CPU"
    ):
        float8.check_device(tw, torch.device("cpu"))
    float8.check_device(ParallelConfig(), torch.device("cpu"))  # off: nothing to check
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *_: "NVIDIA A100-SXM4-80GB")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_: (8, 0))
    with pytest.raises(ConfigError, match=r"NVIDIA A100-SXM4-80GB has 8\.0: remove parallel\.float8"):
        float8.check_device(tw, torch.device("cuda", 0))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_: (9, 0))
    float8.check_device(tw, torch.device("cuda", 0))
    with pytest.raises(ConfigError, match=r"parallel\.float8 rowwise needs parallel\.mixed_precision bf16"):
        float8.check_device(ParallelConfig(float8="rowwise"), torch.device("cuda", 0))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    float8.preflight(TrainConfig(device="cuda", parallel=tw))  # the debug model: every block linear converts
    odd = ModelConfig(preset="debug", dim=72, n_heads=4, ffn_dim=200)
    with pytest.raises(ConfigError, match=r"no linear of the model has both dimensions multiples of 16"):
        float8.preflight(TrainConfig(device="cuda", model=odd, parallel=tw))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=r"train\.device cuda: no CUDA device is visible"):
        float8.preflight(TrainConfig(device="cuda", parallel=tw))


def test_selene_train_refuses_float8_on_the_cpu_in_one_line_and_writes_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from selene.cli import main
    from tests.tiny_checkpoint import make_token_data

    prefix = make_token_data(tmp_path / "tokens")
    out = tmp_path / "train"
    cfg = {"out": str(out), "model": {"preset": "debug"}, "data": {"prefixes": [prefix]},
           "parallel": {"dp_shard": 1, "float8": "tensorwise"}, "batch": {"global_batch": 4, "micro_batch": 4},
           "steps": 2, "device": "auto"}  # fmt: skip
    (tmp_path / "train.yaml").write_text(json.dumps(cfg))
    assert main(["train", str(tmp_path / "train.yaml")]) == 2
    err = capfd.readouterr().err
    assert err.count("parallel.float8 tensorwise needs an NVIDIA GPU of compute capability 8.9+") == 1, err
    assert "trains on the CPU: remove parallel.float8" in err
    assert "Traceback" not in err
    assert not out.exists()


# ------------------------------------------------------------------------------ the fp8 peak


def test_mfu_peak_of_a_float8_run_mixes_the_fp8_and_bf16_peaks(monkeypatch: pytest.MonkeyPatch) -> None:
    share = float8.matmul_share(DEBUG, 64)
    assert 0.5 < share < 1.0
    peak = float8_peak("NVIDIA H100 80GB HBM3", share)
    assert peak.tflops == pytest.approx(1.0 / (share / 1979.0 + (1 - share) / 989.0))
    assert (
        "H100 SXM fp8 dense for the float8 linears" in peak.origin
        and "bf16 dense for the rest" in peak.origin
    )
    assert float8_peak("NVIDIA A100-SXM4-80GB", share).tflops is None  # no float8 tensor cores
    tf32 = float8_peak("NVIDIA H100 80GB HBM3", share, "tf32")  # mixed_precision fp32: the rest runs TF32
    assert tf32.tflops == pytest.approx(1.0 / (share / 1979.0 + (1 - share) / 494.5))
    # what the training loop asks for on a GPU (selene.train.loop: training_peak with the float8 share)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *_: "NVIDIA H100 80GB HBM3")
    assert training_peak(torch.device("cuda", 0), "bf16", None, share) == peak
    assert training_peak(torch.device("cuda", 0), "bf16", None, 0.0).tflops == 989.0
    assert training_peak(torch.device("cuda", 0), "bf16", 700.0, share).tflops == 700.0  # configured wins


def test_planner_prices_float8_linears_at_the_fp8_peak_and_halves_the_weight_gathers() -> None:
    """torchtitan's Llama-3 8B run on 8 H100s (FSDP, seq 8192, local batch 1): +28% with float8
    tensorwise, which `fp8_efficiency` is fit to; the planner must give that ratio."""
    shape = Shape(
        layers=32, hidden=4096, heads=32, ffn=14336, vocab=128256, seq=8192, mlp="swiglu", n_kv_heads=8
    )
    h100 = device("h100")
    base = Layout(tp=1, pp=1, dp=8, micro_batch=1, recompute="selective", sharding="zero3")
    bf16 = estimate(shape, base, 8, h100)
    tw = estimate(shape, dataclasses.replace(base, float8="tensorwise"), 8, h100)
    rw = estimate(shape, dataclasses.replace(base, float8="rowwise"), 8, h100)
    assert bf16.iteration_s / tw.iteration_s == pytest.approx(8532 / 6667, abs=0.01)
    assert tw.time["fsdp gathers (all)"] < 0.6 * bf16.time["fsdp gathers (all)"]  # most weights in 1 byte
    assert rw.time["fsdp gathers (all)"] == bf16.time["fsdp gathers (all)"]  # rowwise gathers bf16
    assert rw.time["compute"] == tw.time["compute"] < bf16.time["compute"]
    assert tw.mfu < bf16.mfu  # against the higher fp8/bf16 bound
    assert tw.layout.config()["parallel"]["float8"] == "tensorwise"
    assert "float8" not in bf16.layout.config()["parallel"]
    assert any(n.startswith("float8:") for n in tw.notes)
    with pytest.raises(ConfigError, match=r"a100-80g has no float8 tensor cores"):
        estimate(shape, dataclasses.replace(base, float8="tensorwise"), 8, device("a100-80g"))


def test_selene_plan_float8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from selene.cli import main
    from selene.plan.planner import layout_from_train_config

    cfg = TrainConfig(parallel=ParallelConfig(dp_shard=8, float8="rowwise", mixed_precision="bf16"))
    assert layout_from_train_config(cfg, None)[0].float8 == "rowwise"
    common = ["plan", "--model", "llama3-1b", "--gpus", "8", "--tokens", "1B", "--top", "1", "--json"]
    assert main([*common, "--gpu", "h100", "--float8", "tensorwise"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["layouts"][0]["config"]["parallel"]["float8"] == "tensorwise"
    assert main([*common, "--gpu", "a100-80g", "--float8", "tensorwise"]) == 2
    assert "a100-80g has no float8 tensor cores" in capsys.readouterr().err


def test_gpu_check_float8_leg_reaches_selene_train(tmp_path: Path) -> None:
    """`benchmarks/gpu_check.py --float8 tensorwise` trains with parallel.float8; on the CPU smoke the
    command refuses it in one line, which the part records, and nothing is trained."""
    from tests.pipeline_runs import subprocess_env
    from tests.tiny_checkpoint import make_token_data

    prefix = make_token_data(tmp_path / "tokens")
    out, work = tmp_path / "out", tmp_path / "work"
    cmd = [sys.executable, str(ROOT / "benchmarks/gpu_check.py"), "--cpu-smoke", "--parts", "train", "--train-once",
           "--float8", "tensorwise", "--out", str(out), "--work", str(work), "--data", str(Path(prefix).parent)]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=tmp_path, env=subprocess_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    part = json.loads((out / "results.json").read_text())["parts"]["train"]
    assert part["float8"] == "tensorwise" and part["rc"] == 2 and part["status"] == "failed"
    assert (
        "parallel.float8 tensorwise needs an NVIDIA GPU" in part["error"] and "Traceback" not in part["error"]
    )
    assert json.loads((work / "train.yaml").read_text())["parallel"]["float8"] == "tensorwise"
    assert not (work / "train").exists()
