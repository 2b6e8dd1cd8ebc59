"""float8 training through torchao (`parallel.float8: tensorwise | rowwise`), composed as torchtitan does.

On the meta model, before any layout is applied, `convert` swaps the blocks' `nn.Linear`s for torchao's
`Float8Linear`: each matmul casts its operands to float8 with a dynamic scale and runs on the float8
tensor cores, while the weights, the optimizer and the gradients stay in high precision. What stays
as it was, as in torchtitan: the output layer (the loss is sensitive to its precision, and with TP it
keeps vocabulary-sharded logits), the embeddings and the norms (not matmuls), and any linear whose
dimensions, or its shard's under tensor parallelism, are not multiples of 16 (`torch._scaled_mm`
needs them).

- tensorwise: one scale per tensor. Under FSDP2 the weights are all-gathered in float8
  (`enable_fsdp_float8_all_gather`: half the bytes of bf16), with their scales computed for all
  weights at once after each optimizer step (`precompute_scales`, one all-reduce). Under TP the blocks
  use torchao's float8 parallel styles (`float8_tp_plan`), so the sequence-parallel all-gather before
  the column-parallel projections moves float8 too.
- rowwise: a scale per row (more accurate; the matmul is slower). torchao has no float8 all-gather for
  it: FSDP gathers bf16 and TP uses DTensor's plain styles, and its `_scaled_mm` writes bf16 only, so
  it needs `parallel.mixed_precision: bf16`.

The names of the parameters do not change (`Float8Linear` keeps `weight`), so checkpoints of a float8
run load into a bf16 run and back. Float8 matmuls need CUDA compute capability 8.9 or later
(`check_device`, in the launcher before any rank starts and again in each rank on its own GPU).
torchao is imported only when float8 is on (`_torchao`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from selene.consoles import quiet_loggers
from selene.errors import ConfigError
from selene.model.transformer import Transformer
from selene.train.args import model_args
from selene.train.flops import matmul_params

if TYPE_CHECKING:
    from selene.train.config import ParallelConfig, TrainConfig

MIN_CAPABILITY = (8, 9)  # Ada and Hopper: the first float8 tensor cores
FLOAT8_GPUS = "H100, H200, B200, L40S, RTX 4090"
ALIGN = 16  # torch._scaled_mm: both dimensions of each operand a multiple of 16
SKIPPED = ("output",)  # torchtitan: the output layer stays in high precision
ROW_PARALLEL = ("wo", "w2")  # the projections apply_tp splits on their input dimension


def _torchao() -> Any:
    """`torchao.float8`, imported without its loader noise."""
    # torchao's import warns about each optional kernel library that a CPU or an older GPU cannot
    # load, and torch's pytree about an enum torchao registers: neither is the user's concern
    with quiet_loggers(("torchao", "torch.utils._pytree")):
        import torchao.float8 as float8

    return float8


def linear_config(recipe: str, fsdp: bool) -> Any:
    """torchao's `Float8LinearConfig` of `recipe`; float8 all-gather under FSDP for tensorwise."""
    ao = _torchao()
    if recipe == "tensorwise":
        return ao.Float8LinearConfig(enable_fsdp_float8_all_gather=fsdp)
    if recipe == "rowwise":
        return ao.Float8LinearConfig.from_recipe_name("rowwise")
    raise ConfigError(f"parallel.float8 {recipe!r} is not one of tensorwise, rowwise")


def convertible(module: nn.Module, fqn: str, tp: int = 1) -> bool:
    """Whether the linear at `fqn` runs in float8: not the output layer, and both dimensions of the
    piece this rank multiplies (its column or row shard under tensor parallelism) multiples of 16."""
    if not isinstance(module, nn.Linear) or fqn.split(".")[-1] in SKIPPED:
        return False
    out_f, in_f = module.out_features, module.in_features
    if tp > 1:
        if fqn.split(".")[-1] in ROW_PARALLEL:
            in_f = in_f // tp if in_f % tp == 0 else 1
        else:
            out_f = out_f // tp if out_f % tp == 0 else 1
    return out_f % ALIGN == 0 and in_f % ALIGN == 0


def convert(model: nn.Module, recipe: str, *, fsdp: bool, tp: int = 1) -> list[str]:
    """Swap `model`'s convertible linears for `Float8Linear` in place (on the meta device, before TP,
    compile and FSDP); the names of those converted."""
    ao = _torchao()
    config = linear_config(recipe, fsdp)
    if recipe == "rowwise":
        # torchtitan: inductor must round the rowwise casts as eager does (pytorch/pytorch#150859)
        import torch._inductor.config as inductor

        inductor.emulate_precision_casts = True
    names = [n for n, m in model.named_modules() if convertible(m, n, tp)]
    if not names:
        return []
    chosen = set(names)
    ao.convert_to_float8_training(model, config=config, module_filter_fn=lambda m, fqn: fqn in chosen)
    return names


def is_float8(module: nn.Module) -> bool:
    return type(module).__name__ == "Float8Linear" and hasattr(module, "config")


def _tensorwise(module: nn.Module) -> bool:
    if not is_float8(module):
        return False
    granularity = getattr(module, "config").cast_config_input.scaling_granularity  # noqa: B009 (torchao is untyped)
    return bool(granularity == _torchao().ScalingGranularity.TENSORWISE)


def float8_tp_plan(block: nn.Module, plan: dict[str, Any]) -> dict[str, Any]:
    """A block's TP plan with torchao's float8 styles where they apply, as torchtitan's
    `apply_tp(enable_float8_tensorwise_tp=True)`: a tensorwise `Float8Linear` gets
    `Float8ColwiseParallel` / `Float8RowwiseParallel` (same layouts), and a `PrepareModuleInput` in
    front of a sub-module whose linears are all tensorwise float8 becomes `PrepareFloat8ModuleInput`,
    which casts before the all-gather, so the sequence is gathered once, in float8. Anything else
    (rowwise, a linear left in bf16, float8 off) keeps its style: the plan comes back unchanged."""
    modules = dict(block.named_modules())
    if not any(_tensorwise(m) for m in modules.values()):
        return plan
    from torch.distributed.tensor.parallel import ColwiseParallel, PrepareModuleInput, RowwiseParallel

    # torchao's import warns about each optional kernel library that a CPU or an older GPU cannot
    # load, and torch's pytree about an enum torchao registers: neither is the user's concern
    with quiet_loggers(("torchao", "torch.utils._pytree")):
        from torchao.float8.float8_tensor_parallel import (
            Float8ColwiseParallel,
            Float8RowwiseParallel,
            PrepareFloat8ModuleInput,
        )
    out: dict[str, Any] = {}
    for name, style in plan.items():
        target = modules.get(name)
        if (
            isinstance(style, (ColwiseParallel, RowwiseParallel))
            and target is not None
            and _tensorwise(target)
        ):
            cls = Float8ColwiseParallel if isinstance(style, ColwiseParallel) else Float8RowwiseParallel
            style = cls(
                input_layouts=style.input_layouts[0],
                output_layouts=style.output_layouts[0],
                use_local_output=style.use_local_output,
            )
        elif type(style) is PrepareModuleInput and target is not None:
            linears = [m for m in target.modules() if isinstance(m, nn.Linear)]
            if linears and all(_tensorwise(m) for m in linears):
                style = PrepareFloat8ModuleInput(
                    input_layouts=style.input_layouts,
                    desired_input_layouts=style.desired_input_layouts,
                    input_kwarg_layouts=style.input_kwarg_layouts if style.with_kwargs else None,
                    desired_input_kwarg_layouts=style.desired_input_kwarg_layouts
                    if style.with_kwargs
                    else None,
                    use_local_output=style.use_local_output,
                )
        out[name] = style
    return out


def gathers_float8(recipe: str | None, fsdp: bool) -> bool:
    """Whether FSDP all-gathers float8 weights, whose scales `precompute_scales` must refresh."""
    return recipe == "tensorwise" and fsdp


def precompute_scales(parts: list[nn.Module]) -> None:
    """After an optimizer step: the float8 scales of every FSDP-sharded float8 weight, computed
    together (one all-reduce of their maxima) instead of one per weight in the next all-gather."""
    ao = _torchao()
    for part in parts:
        ao.precompute_float8_dynamic_scale_for_fsdp(part)


def check_config(pcfg: ParallelConfig) -> None:
    """Layouts float8 cannot run, whatever the device."""
    if pcfg.float8 == "rowwise" and pcfg.mixed_precision != "bf16":
        raise ConfigError(
            "parallel.float8 rowwise needs parallel.mixed_precision bf16 (its float8 matmul writes bf16 only); "
            "set mixed_precision: bf16 or use float8: tensorwise"
        )


def check_device(pcfg: ParallelConfig, device: torch.device) -> None:
    """Refuse float8 where its matmuls cannot run: a CPU, or a GPU before compute capability 8.9."""
    if pcfg.float8 is None:
        return
    check_config(pcfg)
    what = f"parallel.float8 {pcfg.float8}"
    if device.type != "cuda":
        raise ConfigError(
            f"{what} needs an NVIDIA GPU of compute capability {MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]}+ "
            f"({FLOAT8_GPUS}); this run trains on the {device.type.upper()}: remove parallel.float8"
        )
    capability = torch.cuda.get_device_capability(device)
    if capability < MIN_CAPABILITY:
        name = torch.cuda.get_device_name(device)
        raise ConfigError(
            f"{what} needs CUDA compute capability {MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]}+ ({FLOAT8_GPUS}); "
            f"{name} has {capability[0]}.{capability[1]}: remove parallel.float8"
        )


def preflight(cfg: TrainConfig) -> None:
    """`check_device` in the launcher, before any rank starts, on the device the ranks will get."""
    if cfg.parallel.float8 is None:
        return
    cuda = cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available())
    if cuda and not torch.cuda.is_available():
        raise ConfigError(
            f"parallel.float8 {cfg.parallel.float8} with train.device cuda: no CUDA device is visible"
        )
    check_device(cfg.parallel, torch.device("cuda", 0) if cuda else torch.device("cpu"))
    check_model(cfg)


def check_model(cfg: TrainConfig) -> None:
    """Refuse float8 that would convert nothing: no linear of the blocks has dimensions (or, under TP,
    shards) that are multiples of 16."""
    margs = model_args(cfg.model, cfg.model.vocab_size or 256)  # the blocks' linears do not depend on it
    with torch.device("meta"):
        model = Transformer(margs)
    if not any(convertible(m, n, cfg.parallel.tp) for n, m in model.named_modules()):
        tp = f" (under parallel.tp {cfg.parallel.tp}: of each shard)" if cfg.parallel.tp > 1 else ""
        raise ConfigError(
            f"parallel.float8 {cfg.parallel.float8}: no linear of the model has both dimensions multiples of "
            f"{ALIGN}{tp} (model.dim {margs.dim}, ffn_dim {margs.ffn_dim}), so nothing would train in float8"
        )


def matmul_share(args: Any, seq_len: int) -> float:
    """Fraction of a training step's model FLOPs (`selene.train.flops`) in the float8 linears: the
    blocks' projections; the attention scores, the weighted sum and the output layer stay bf16. (A
    linear skipped for its shape is counted as float8: the bound stays an upper bound.)"""
    block = 2 * (matmul_params(args) - args.dim * args.vocab_size)
    forward = 2 * matmul_params(args) + 4 * args.n_layers * seq_len * args.dim
    return block / forward
