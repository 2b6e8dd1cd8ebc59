"""What float8 training (`train.parallel.float8`, `selene.train.float8`) changes in an iteration's cost.

- Compute: the blocks' linears (their matmul FLOPs, forward, backward and a full recomputation's
  forward) run at the device's dense fp8 peak, twice bf16's on H100/H200, at `fp8_efficiency` of the
  device's efficiency curve (fit to torchtitan's published float8 speed-up, `selene.plan.devices`);
  the attention core (QKᵀ, AV) and the output layer stay at the bf16 peak.
- Casts: each float8 linear scales and casts its input and, in backward, its output gradient (an
  absolute-max pass, then a read and a 1-byte write: 5 bytes per 16-bit element), memory-bound at HBM
  bandwidth, added to the compute (a compiled block fuses some of it: an upper bound).
- FSDP: tensorwise float8 all-gathers the linears' weights in 1 byte instead of the working
  precision's 2 (or 4); rowwise gathers them as before.
- MFU is against the same mixed bound the training run reports (`selene.train.peak.float8_peak`):
  the float8 share of the model FLOPs at the fp8 peak, the rest at bf16's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from selene.errors import ConfigError

if TYPE_CHECKING:
    from selene.plan.cost import Layout, Recompute, Shape
    from selene.plan.devices import DeviceSpec

CAST_BYTES = 5.0  # per 16-bit element cast: read for the absolute max, read again, write 1 byte


def check_device(dev: DeviceSpec, recipe: str) -> None:
    if not dev.fp8_peak_tflops:
        raise ConfigError(
            f"float8 {recipe}: {dev.name} has no float8 tensor cores (compute capability < 8.9); "
            "plan it on h100 or h200, or without float8"
        )


def linear_train_flops(shape: Shape, recompute: Recompute) -> float:
    """FLOPs per token of one layer's linears in a training step (forward, backward, recomputation)."""
    forward = 2.0 * shape.layer_matmul_params
    return forward * (4.0 if recompute == "full" else 3.0)


def compute_s(
    shape: Shape, lay: Layout, dev: DeviceSpec, w_layer: float, eff: float, tokens_mb: int
) -> float:
    """Seconds of one layer's micro-batch work `w_layer` (FLOPs per GPU) under float8: the linears'
    share at the fp8 peak, the rest at bf16's, at efficiency `eff`; plus the casts' HBM traffic."""
    share = linear_train_flops(shape, lay.recompute) / shape.train_flops_layer(lay.recompute)
    fp8_rate = dev.fp8_peak_tflops * 1e12 * dev.fp8_efficiency
    matmul = w_layer / eff * (share / fp8_rate + (1.0 - share) / (dev.peak_tflops * 1e12))
    return matmul + cast_bytes(shape, lay, tokens_mb) / (dev.hbm_gbps * 1e9)


def cast_bytes(shape: Shape, lay: Layout, tokens_mb: int) -> float:
    """HBM bytes one layer's float8 casts move per micro-batch on one GPU: each linear's input (in
    forward) and output gradient (in backward), and its weight once."""
    h, f = shape.hidden, shape.ffn
    kv = shape.kv_heads * shape.head_dim
    mlp_in = 3 if shape.mlp == "swiglu" else 2  # w1, (w3): h → F; w2: F → h
    edges = (h + h) + 2 * (h + kv) + (h + h) + (mlp_in - 1) * (h + f) + (f + h)
    per_pass = 2 if lay.recompute == "full" else 1  # a recomputed forward casts its inputs again
    acts = tokens_mb * edges * per_pass
    return CAST_BYTES * (acts + shape.layer_matmul_params) / lay.tp


def gather_bytes(shape: Shape, lay: Layout, local: float, per_stage: int, word: float) -> float:
    """Bytes of one FSDP all-gather of the stage's `local` parameters: tensorwise float8 gathers the
    blocks' linears in 1 byte, everything else in the working precision's `word`."""
    if lay.float8 != "tensorwise":
        return word * local
    linears = per_stage * shape.layer_matmul_params / lay.tp
    return word * (local - linears) + 1.0 * linears


def mfu_peak(shape: Shape, dev: DeviceSpec) -> float:
    """TFLOP/s that MFU divides by under float8: 1 / (s/fp8 + (1 − s)/bf16), s the float8 share."""
    share = shape.layers * 3.0 * 2.0 * shape.layer_matmul_params / shape.model_flops_per_token()
    return 1.0 / (share / dev.fp8_peak_tflops + (1.0 - share) / dev.peak_tflops)
