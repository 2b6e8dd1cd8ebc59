"""Parallelism applied from outside the plain model, in torchtitan's order.

    split into pipeline stages (meta) → TP/SP → activation checkpointing → compile → FSDP2
    → to_empty(device) → init_weights (same seed everywhere; each rank keeps its shard)

Only PyTorch's own engine is used: DeviceMesh, DTensor tensor/sequence parallel, FSDP2 `fully_shard`,
`torch.distributed.pipelining`; the only hand-written collectives are the scalar all-reduces that
make the reported loss and gradient norm identical on every rank.

Initialisation equality: every parameter's full initial value is a pure function of (seed, FQN,
shape) (`selene.model.init.initial_value`). After parallelisation each rank computes that full tensor and keeps
`distribute_tensor(full, param.device_mesh, param.placements, src_data_rank=None)` — DTensor's own
definition of the local piece, with no communication — so a model sharded any way starts from exactly
the single-process weights. The price is one parameter materialised in full at a time on each rank.
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn
from torch.distributed._functional_collectives import AsyncCollectiveTensor
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_module, distribute_tensor
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
    parallelize_module,
)
from torch.distributed.tensor.placement_types import Placement

from selene.errors import ConfigError
from selene.model.args import ModelArgs
from selene.model.transformer import Transformer
from selene.train.config import ParallelConfig
from selene.train.dims import ParallelDims, check_tp_heads
from selene.train.float8 import convert as convert_to_float8
from selene.train.float8 import float8_tp_plan, gathers_float8
from selene.train.parallel_model import ParallelModel
from selene.train.pipeline_parallel import PipelineRunner, build_schedule, pipeline_split

__all__ = [
    "ParallelModel",
    "apply_ac",
    "apply_compile",
    "apply_fsdp",
    "apply_tp",
    "build_parallel_model",
    "build_schedule",
    "pipeline_split",
]


def apply_tp(model: Transformer, tp_mesh: DeviceMesh, sequence_parallel: bool) -> None:
    """Megatron tensor parallelism (+ sequence parallelism) with DTensor parallel styles.

    Attention and MLP: column-parallel in (wq/wk/wv, w1/w3), row-parallel out (wo, w2), so each block
    needs one all-reduce (or, with SP, one all-gather + one reduce-scatter) per sub-layer. Under
    grouped-query attention wk and wv split over the key/value heads: a rank's contiguous query heads
    are exactly the groups of its contiguous key/value heads (`check_layout` makes tp divide both).
    With SP the residual stream between them is sharded on the sequence dimension (Shard(1)) and the
    norms run on that shard (Korthikanti et al. 2022). The output layer keeps its logits sharded on the vocabulary
    (Shard(-1), a DTensor) for `loss_parallel()`, so the full logits are never gathered.
    """
    seq: Placement = Shard(1) if sequence_parallel else Replicate()
    plan: dict[str, object] = {}
    if model.tok_embeddings is not None:
        plan["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=seq)
    if model.norm is not None and sequence_parallel:
        plan["norm"] = SequenceParallel()
    if model.output is not None:
        plan["output"] = ColwiseParallel(input_layouts=seq, output_layouts=Shard(-1), use_local_output=False)
    parallelize_module(model, tp_mesh, plan)  # type: ignore[arg-type]
    if model.pos_embeddings is not None:
        _replicate_positions(model.pos_embeddings, tp_mesh, sequence_parallel)
    if model.args.tie_embeddings and model.output is not None and model.tok_embeddings is not None:
        # Both were distributed as Shard(0) over the vocabulary; make them one parameter again.
        model.output.weight = model.tok_embeddings.weight
    for block in model.layers.values():
        layer_plan: dict[str, object] = {
            "attention.wq": ColwiseParallel(),
            "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=seq),
            "feed_forward.w1": ColwiseParallel(),
            "feed_forward.w2": RowwiseParallel(output_layouts=seq),
        }
        if block.feed_forward.w3 is not None:  # type: ignore[union-attr]
            layer_plan["feed_forward.w3"] = ColwiseParallel()
        if sequence_parallel:
            layer_plan |= {
                "attention_norm": SequenceParallel(),
                "ffn_norm": SequenceParallel(),
                # all-gather the sequence before the column-parallel projections (rope passes through)
                "attention": PrepareModuleInput(
                    input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)
                ),
                "feed_forward": PrepareModuleInput(
                    input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)
                ),
            }
        layer_plan = float8_tp_plan(block, layer_plan)  # torchao's float8 styles for tensorwise float8 linears
        parallelize_module(block, tp_mesh, layer_plan)  # type: ignore[arg-type]


def _replicate_positions(module: nn.Module, tp_mesh: DeviceMesh, sequence_parallel: bool) -> None:
    """Learned positions under TP: the table is replicated (a DTensor, so its gradient is complete on
    every rank), and its output, (seq, dim) or with per-row positions (batch, seq, dim), is cut like
    the hidden state it is added to: on its sequence dimension under sequence parallelism."""

    def to_replicate(_: nn.Module, inputs: tuple[torch.Tensor, ...], mesh: DeviceMesh) -> tuple[DTensor, ...]:
        return tuple(DTensor.from_local(x, mesh, [Replicate()], run_check=False) for x in inputs)

    def to_local(_: nn.Module, output: DTensor, mesh: DeviceMesh) -> torch.Tensor:
        out: Placement = Shard(output.ndim - 2) if sequence_parallel else Replicate()
        return output.redistribute(mesh, [out]).to_local()

    # (torch's stub types input_fn/output_fn as returning None, though their results are used)
    distribute_module(module, tp_mesh, input_fn=to_replicate, output_fn=to_local)  # type: ignore[arg-type]


def apply_ac(model: Transformer, mode: str) -> None:
    """Activation checkpointing: 'none', 'full' (each block recomputed in backward) or 'selective'.

    Selective follows Korthikanti et al. 2022: only the attention core — softmax(QKᵀ)·V, the
    `attention.sdpa` module — is recomputed; its inputs q, k, v are saved, its output is not. That part
    holds the O(seq²) activations of unfused attention and costs little to redo. Both modes wrap with
    `checkpoint_wrapper` (non-reentrant); 'full' inserts `_checkpoint_wrapped_module` into the block's
    parameter names (DCP's state dict strips it; `selene.model.init.canonical_fqn` does too), 'selective' wraps a
    parameterless module and changes no name.
    """
    if mode == "none":
        return
    if mode not in ("selective", "full"):
        raise ConfigError(f"parallel.recompute {mode!r} is not one of none, selective, full")
    for name, block in list(model.layers.items()):
        if mode == "full":
            model.layers[name] = checkpoint_wrapper(block)
        else:
            attention = cast(nn.Module, block.attention)
            attention.sdpa = checkpoint_wrapper(cast(nn.Module, attention.sdpa))


def apply_compile(model: Transformer, backend: str = "inductor") -> None:
    """torch.compile each block in place (`Module.compile`), so parameter names are unchanged and
    the repeated block structure compiles once.

    Under TP the embedding's output is an `AsyncCollectiveTensor` (its all-reduce not yet waited on);
    fed straight into a compiled block, the backward hands DTensor's redistribute a plain gradient
    (torch 2.13: "AttributeError: 'Tensor' object has no attribute '_local_tensor'"). A hook outside
    the compiled region waits for it and copies it into a plain tensor first (one activation copy).
    """
    for block in model.layers.values():
        block.compile(backend=backend)
    if model.tok_embeddings is not None:
        model.tok_embeddings.register_forward_hook(_materialise_async)


def _materialise_async(_: nn.Module, __: object, output: torch.Tensor) -> torch.Tensor:
    return output.clone() if isinstance(output, AsyncCollectiveTensor) else output


def apply_fsdp(
    model: Transformer,
    dp_mesh: DeviceMesh,
    param_dtype: torch.dtype,
    reduce_dtype: torch.dtype = torch.float32,
    reshard_after_forward: bool = True,
) -> None:
    """FSDP2 per block, then the root (embeddings, final norm, output) — one all-gather per block.

    A 2-D `dp_mesh` (dp_replicate, dp_shard) gives HSDP: sharded within dp_shard, replicated across
    dp_replicate. Gradients are reduced in `reduce_dtype` (fp32) even when computing in bf16. The last
    block is not resharded after forward: backward needs it first.
    """
    mp = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype)
    blocks = list(model.layers.values())
    for i, block in enumerate(blocks):
        fully_shard(
            block,
            mesh=dp_mesh,
            mp_policy=mp,
            reshard_after_forward=reshard_after_forward and i < len(blocks) - 1,
        )
    fully_shard(model, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=reshard_after_forward)


def _fill_shard(param: torch.Tensor, full: torch.Tensor) -> None:
    """Keep this rank's piece of a parameter's full initial value, as DTensor defines it (no communication)."""
    if isinstance(param, DTensor):
        param.copy_(distribute_tensor(full, param.device_mesh, param.placements, src_data_rank=None))
    else:
        param.copy_(full)


def check_layout(margs: ModelArgs, pcfg: ParallelConfig, dims: ParallelDims) -> None:
    """Model/layout combinations that cannot work, with the fix in the message."""
    if dims.tp_enabled:
        check_tp_heads(dims.tp, margs.n_heads, margs.kv_heads)
        for name, size in (
            ("ffn_dim", margs.ffn_dim),
            ("vocab_size", margs.vocab_size),
        ):
            if size % dims.tp:
                raise ConfigError(f"model.{name} {size} is not divisible by parallel.tp {dims.tp}")
    if dims.pp_enabled:
        if pcfg.pp_schedule != "interleaved_1f1b" and pcfg.pp_stages_per_rank != 1:
            raise ConfigError(
                f"parallel.pp_schedule {pcfg.pp_schedule} needs pp_stages_per_rank 1; use interleaved_1f1b"
            )
        if pcfg.pp_schedule == "interleaved_1f1b" and pcfg.pp_microbatches % dims.pp:
            raise ConfigError(
                f"parallel.pp_microbatches {pcfg.pp_microbatches} must be a multiple of pp {dims.pp} "
                "for interleaved_1f1b"
            )


def build_parallel_model(
    margs: ModelArgs,
    pcfg: ParallelConfig,
    dims: ParallelDims,
    mesh: DeviceMesh,
    device: torch.device,
    seed: int,
) -> ParallelModel:
    """The model parts of this rank, parallelised per `pcfg` on `mesh` and initialised from `seed`.

    Every rank must call it with the same arguments (the mesh is collective). The result's weights
    equal those of `Transformer(margs)` after `init_weights(seed=seed)` in one process.
    """
    check_layout(margs, pcfg, dims)
    with torch.device("meta"):
        model = Transformer(margs)
    if pcfg.float8:  # before any layout, as torchtitan converts (selene.train.float8)
        convert_to_float8(model, pcfg.float8, fsdp=dims.fsdp_enabled, tp=dims.tp)
    pp_mesh = dims.submesh(mesh, "pp")
    n_stages = dims.pp * pcfg.pp_stages_per_rank if dims.pp_enabled else 1
    parts: list[tuple[int, Transformer]] = (
        pipeline_split(model, pp_mesh, pcfg.pp_stages_per_rank, pcfg.pp_layout)
        if dims.pp_enabled
        else [(0, model)]
    )
    param_dtype = torch.bfloat16 if pcfg.mixed_precision == "bf16" else torch.float32
    # HSDP over (dp_replicate, dp_shard) when replicating, else plain FSDP over dp_shard.
    dp_mesh = (
        mesh["dp_replicate", "dp_shard"] if dims.dp_replicate_enabled else dims.submesh(mesh, "dp_shard")
    )
    for _, part in parts:
        if dims.tp_enabled:
            apply_tp(part, dims.submesh(mesh, "tp"), pcfg.sequence_parallel)
        apply_ac(part, pcfg.recompute)
        if pcfg.compile:
            apply_compile(part)
        if dims.fsdp_enabled:
            apply_fsdp(part, dp_mesh, param_dtype, torch.float32, pcfg.reshard_after_forward)
    for _, part in parts:
        part.to_empty(device=device)
        part.init_weights(buffer_device=device, seed=seed, fill=_fill_shard)
        part.train()
    pipeline = None
    if dims.pp_enabled:
        pipeline = PipelineRunner(
            cast(list[tuple[int, nn.Module]], parts),
            n_stages,
            pp_mesh,
            device,
            pcfg.pp_microbatches,
            pcfg.pp_schedule,
        )
    return ParallelModel(
        [p for _, p in parts],
        dims,
        device,
        pipeline=pipeline,
        pp_group=pp_mesh.get_group() if dims.pp_enabled else None,
        dp_group=dims.submesh(mesh, "dp").get_group() if dims.dp_enabled else None,
        # Without FSDP (one rank, or TP/PP only) nothing casts to bf16 for us; autocast does, as
        # torchtitan on one GPU (parameters stay fp32). FSDP2 on a single rank would keep activations
        # bf16 end to end but re-casts and copies every weight and gradient through its collectives:
        # on a 2-core CPU a 125m step took 3.35 s against autocast's 2.81 s.
        autocast_dtype=param_dtype if param_dtype != torch.float32 and not dims.fsdp_enabled else None,
        float8_scales=gathers_float8(pcfg.float8, dims.fsdp_enabled),
    )
