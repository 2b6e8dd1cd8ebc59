"""Parallel layouts against the single-process model: CPU, gloo, fp32, the debug model.

Each layout trains the same 5 AdamW steps (clipped by `clip_grad_norm`, below the gradient norm so
clipping acts) and must match the plain model's losses and pre-clip gradient norms within 1e-4, start
from bit-identical weights, and report the same loss and norm on every rank. Adam is nearly blind to a
uniformly scaled gradient, so the norms are what catches a wrong gradient scale.

One process group per world size runs all of that size's layouts in turn (tests/distributed.py);
the single-process references are computed here, in the parent, once per run.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import pytest
import torch

from selene.errors import ConfigError
from selene.model.init import canonical_fqn
from selene.model.layers import ScaledDotProductAttention
from selene.model.transformer import Transformer
from selene.train.args import model_args
from selene.train.config import ModelConfig, ParallelConfig
from selene.train.dims import ParallelDims
from selene.train.parallelize import apply_ac, apply_compile, check_layout, pipeline_split
from selene.train.pipeline_parallel import build_schedule, stage_layout
from tests.distributed import Run, reference, run_world, train_layouts

DEBUG = model_args(ModelConfig(preset="debug"), vocab_size=128)
BASE = Run(DEBUG)
GPT = dataclasses.replace(
    BASE, margs=dataclasses.replace(DEBUG, norm="layernorm", positions="learned", mlp="gelu", bias=True)
)
TIED = dataclasses.replace(BASE, margs=dataclasses.replace(DEBUG, tie_embeddings=True))
TOL = 1e-4


@dataclasses.dataclass(frozen=True)
class Layout:
    world: int
    run: Run
    pcfg: ParallelConfig
    ref_dp: int = 1  # data-parallel size the reference mimics (only matters with uneven `chunks`)
    tol: float = TOL


def P(**kw: Any) -> ParallelConfig:
    return ParallelConfig(**{"dp_shard": 1, **kw})


PP2 = {"pp": 2, "pp_microbatches": 2}
LAYOUTS = {
    # world 2
    "dp_shard2": Layout(2, BASE, P(dp_shard=2)),
    "dp_replicate2": Layout(2, BASE, P(dp_replicate=2)),
    "tp2_sp": Layout(2, BASE, P(tp=2)),
    "tp2_no_sp": Layout(2, BASE, P(tp=2, sequence_parallel=False)),
    # two forward_backward calls per step: gradient accumulation through the schedule
    "pp2_1f1b_accumulate": Layout(2, dataclasses.replace(BASE, chunks=(4, 4)), P(**PP2)),
    "pp2_interleaved": Layout(2, BASE, P(**PP2, pp_schedule="interleaved_1f1b", pp_stages_per_rank=2)),
    "pp2_gpipe": Layout(2, BASE, P(pp=2, pp_microbatches=4, pp_schedule="gpipe")),
    "gpt_tp2_sp": Layout(2, GPT, P(tp=2)),
    "gpt_pp2": Layout(2, GPT, P(**PP2)),
    "tied_tp2_sp": Layout(2, TIED, P(tp=2)),
    "tied_dp_shard2": Layout(2, TIED, P(dp_shard=2)),
    "full_recompute_dp_shard2": Layout(2, BASE, P(dp_shard=2, recompute="full")),
    "selective_recompute_tp2": Layout(2, BASE, P(tp=2, recompute="selective")),
    # bf16 compute (FSDP mixed precision, fp32 reduce): close, not equal
    "bf16_dp_shard2": Layout(2, BASE, P(dp_shard=2, mixed_precision="bf16"), tol=2e-2),
    # world 1: bf16 under autocast (no data parallelism, so no FSDP)
    "bf16_single": Layout(1, BASE, P(mixed_precision="bf16"), tol=2e-2),
    # world 4
    "dp_shard2_tp2": Layout(4, dataclasses.replace(BASE, chunks=(2, 2)), P(dp_shard=2, tp=2), ref_dp=2),
    "dp_shard2_tp2_no_sp": Layout(4, BASE, P(dp_shard=2, tp=2, sequence_parallel=False)),
    "dp_replicate2_dp_shard2": Layout(4, BASE, P(dp_replicate=2, dp_shard=2)),
    "pp2_tp2": Layout(4, BASE, P(**PP2, tp=2)),
    # FSDP + PP with calls of two batch shapes in one step: a fresh schedule's shape inference must
    # not wipe the gradients the first call accumulated
    "pp2_dp_shard2_uneven_calls": Layout(
        4, dataclasses.replace(BASE, batch=12, chunks=(2, 4)), P(**PP2, dp_shard=2), ref_dp=2
    ),
    # world 8
    "pp2_dp_shard2_tp2": Layout(8, BASE, P(**PP2, dp_shard=2, tp=2)),
}


@functools.cache
def _reference(run: Run, dp: int) -> dict[str, list[float]]:
    return reference(run, dp)


@functools.cache
def _world(world: int) -> list[dict[str, dict[str, list[float]]]] | BaseException:
    """All layouts of one world size in one process group; an exception is kept, not re-run per test."""
    jobs = [(name, lay.run, lay.pcfg) for name, lay in LAYOUTS.items() if lay.world == world]
    try:
        return run_world(world, train_layouts, jobs)
    except Exception as e:
        return e


def check_layout_matches(name: str) -> None:
    lay = LAYOUTS[name]
    results = _world(lay.world)
    if isinstance(results, BaseException):
        raise results
    ref = _reference(lay.run, lay.ref_dp)
    first = results[0][name]
    assert first["init"] == [0.0], (
        f"{name}: initial weights differ from the single process by {first['init']}"
    )
    for rank, res in enumerate(results):
        got = res[name]
        assert got["loss"] == first["loss"] and got["norm"] == first["norm"], f"{name}: rank {rank} disagrees"
        assert got["init"] == [0.0]
    for key in ("loss", "norm", "eval"):
        diff = max(abs(a - b) for a, b in zip(first[key], ref[key], strict=True))
        assert diff < lay.tol, f"{name}: max |{key} diff| {diff:.2e}; got {first[key]}, want {ref[key]}"
    assert min(ref["norm"]) > lay.run.max_norm  # clipping did act


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", [n for n, lay in LAYOUTS.items() if lay.world in (1, 2, 4)])
def test_layout_matches_single_process(name: str) -> None:
    check_layout_matches(name)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pp_dp_tp_on_8_ranks_matches_single_process() -> None:
    """The full 3-D layout: 8 processes on a small machine, so one layout, 5 steps, batch 8."""
    check_layout_matches("pp2_dp_shard2_tp2")


# ------------------------------------------------------------------------ single process


def _loss_and_grads(
    model: Transformer, x: torch.Tensor, y: torch.Tensor
) -> tuple[float, dict[str, torch.Tensor]]:
    loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten(0, 1))
    loss.backward()
    return loss.item(), {
        canonical_fqn(n): p.grad.clone() for n, p in model.named_parameters() if p.grad is not None
    }


def _built(recompute: str = "none", compile_backend: str | None = None) -> Transformer:
    with torch.device("meta"):
        model = Transformer(DEBUG)
    apply_ac(model, recompute)
    if compile_backend:
        apply_compile(model, compile_backend)
    model.to_empty(device="cpu")
    model.init_weights(seed=3)
    return model


@pytest.mark.parametrize(("mode", "sdpa_calls"), [("selective", 2), ("full", 2), ("none", 1)])
def test_recompute_equals_none_and_recomputes(mode: str, sdpa_calls: int) -> None:
    """Same loss and gradients as without recomputation; the attention core runs again in backward."""
    x = torch.randint(0, 128, (2, 32), generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 128, (2, 32), generator=torch.Generator().manual_seed(1))
    loss0, grads0 = _loss_and_grads(_built(), x, y)
    model = _built(mode)
    calls = []
    for module in model.modules():
        if isinstance(module, ScaledDotProductAttention):
            # a pre-hook: recomputation stops (raises) as soon as SDPA has re-saved its tensors, so a
            # post-forward hook would not see the selective recompute
            module.register_forward_pre_hook(lambda *_: calls.append(1))
    loss, grads = _loss_and_grads(model, x, y)
    assert loss == loss0 and grads.keys() == grads0.keys()
    for name, g in grads.items():
        torch.testing.assert_close(g, grads0[name], rtol=0, atol=0)
    assert len(calls) == sdpa_calls * DEBUG.n_layers


def test_full_recompute_keeps_canonical_names() -> None:
    names = [n for n, _ in _built("full").named_parameters()]
    assert "layers.0._checkpoint_wrapped_module.attention.wq.weight" in names
    assert {canonical_fqn(n) for n in names} == {n for n, _ in _built().named_parameters()}


@pytest.mark.timeout(120)
def test_compile_per_block_matches_eager() -> None:
    """torch.compile per block in place (names unchanged). aot_eager traces forward and backward like
    inductor but skips C++ codegen, which costs ~15 s per model on a small CPU."""
    x = torch.randint(0, 128, (2, 32), generator=torch.Generator().manual_seed(0))
    loss0, grads0 = _loss_and_grads(_built(), x, x)
    loss, grads = _loss_and_grads(_built(compile_backend="aot_eager"), x, x)
    assert loss == pytest.approx(loss0, abs=1e-5) and grads.keys() == grads0.keys()
    for name, g in grads.items():
        torch.testing.assert_close(g, grads0[name], rtol=1e-4, atol=1e-5)


@pytest.mark.timeout(300)
def test_inductor_compiled_training_matches_eager() -> None:
    """Compiled blocks (inductor: generated C++ kernels, as `parallel.compile` runs them) train like
    eager: five AdamW steps of the debug model, each loss within 1e-5 of the eager run's."""
    from selene.train.config import TrainConfig
    from selene.train.loop import build_optimizers

    gen = torch.Generator().manual_seed(0)
    data = [torch.randint(0, 128, (2, 33), generator=gen)] * 5  # one batch, learnt: the losses move
    losses: dict[str, list[float]] = {}
    for backend in (None, "inductor"):
        model = _built(compile_backend=backend)
        (opt,) = build_optimizers([model], TrainConfig())
        run = losses.setdefault(str(backend), [])
        for tokens in data:
            opt.zero_grad(set_to_none=True)
            loss = model(tokens[:, :-1], tokens[:, 1:])
            loss.backward()
            opt.step()
            run.append(loss.item())
    assert losses["inductor"] == pytest.approx(losses["None"], abs=1e-5)
    assert losses["None"][-1] < losses["None"][0] - 0.1  # it trains: the check compares moving losses


class _FakePPMesh:
    """What pipeline_split asks of the pp mesh: its size and this rank's place in it."""

    def __init__(self, size: int, rank: int) -> None:
        self._size, self._rank = size, rank

    def size(self) -> int:
        return self._size

    def get_local_rank(self) -> int:
        return self._rank


def test_pipeline_split_keeps_names() -> None:
    with torch.device("meta"):
        model = Transformer(DEBUG)
    full = {n for n, _ in model.named_parameters()}
    seen: dict[int, set[str]] = {}
    for rank in (0, 1):
        for index, part in pipeline_split(model, _FakePPMesh(2, rank), 2, None):  # type: ignore[arg-type]
            seen[index] = {n for n, _ in part.named_parameters()}
    assert sorted(seen) == [0, 1, 2, 3]  # rank 0 holds stages 0 and 2 (interleaved "loop" order)
    assert "tok_embeddings.weight" in seen[0] and "layers.0.attention.wq.weight" in seen[0]
    assert "layers.2.attention.wq.weight" in seen[2] and "output.weight" in seen[3]
    assert set().union(*seen.values()) == full and sum(map(len, seen.values())) == len(full)


def test_pipeline_layouts_and_schedules_are_checked() -> None:
    assert stage_layout(4, 2, None) == [2, 2] and stage_layout(5, 2, None) == [3, 2]
    assert stage_layout(4, 2, [1, 3]) == [1, 3]
    with pytest.raises(ConfigError, match="summing to the model's 4 layers"):
        stage_layout(4, 2, [1, 1])
    with pytest.raises(ConfigError, match="only 4 layers"):
        stage_layout(4, 8, None)
    with torch.device("meta"):
        tied = Transformer(dataclasses.replace(DEBUG, tie_embeddings=True))
    with pytest.raises(ConfigError, match="tie_embeddings"):
        pipeline_split(tied, _FakePPMesh(2, 0), 1, None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not one of"):
        build_schedule([], 2, "zb", lambda a, b: a)
    dims = ParallelDims(1, 1, 3, 1, 3)
    with pytest.raises(ConfigError, match=r"n_heads 4 is not divisible by parallel\.tp 3"):
        check_layout(DEBUG, P(tp=3), dims)
    with pytest.raises(ConfigError, match="needs pp_stages_per_rank 1"):
        check_layout(DEBUG, P(pp=2, pp_stages_per_rank=2), ParallelDims(1, 1, 1, 2, 2))


def test_parallel_dims_says_the_whole_product() -> None:
    with pytest.raises(ConfigError) as e:
        ParallelDims(dp_replicate=1, dp_shard=2, tp=3, pp=2, world_size=8)
    assert "pp 2 × dp_replicate 1 × dp_shard 2 × tp 3 = 12, but the world size is 8" in str(e.value)
    with pytest.raises(ConfigError, match="does not divide the world size 8"):
        ParallelDims(dp_replicate=1, dp_shard=-1, tp=3, pp=1, world_size=8)


def test_parallel_dims_resolves_dp_shard() -> None:
    dims = ParallelDims(dp_replicate=2, dp_shard=-1, tp=2, pp=2, world_size=16)
    assert dims.dp_shard == 2 and dims.dp == 4
    assert dims.dp_enabled and dims.fsdp_enabled and dims.tp_enabled and dims.pp_enabled
    assert dims.describe() == "pp 2 × dp_replicate 2 × dp_shard 2 × tp 2"
    single = ParallelDims(1, -1, 1, 1, 1)
    assert not (single.dp_enabled or single.fsdp_enabled or single.tp_enabled or single.pp_enabled)
