"""Initialisation rules (Megatron/GPT-3) and parameter bookkeeping, by fully-qualified name (FQN).

Each parameter's initial value is a pure function of (seed, FQN, shape) — see `initial_value` — so a
pipeline stage that owns only layers 2–3, or a sharded copy, gets exactly the values the whole
single-process model gets.
"""

from __future__ import annotations

import hashlib
import math

import torch
from torch import nn

from selene.model.args import ModelArgs

# Wrappers that activation checkpointing and torch.compile put into parameter names.
_WRAPPER_PARTS = ("_checkpoint_wrapped_module.", "_orig_mod.", "_fsdp_wrapped_module.")


def canonical_fqn(name: str) -> str:
    """The parameter's name in the plain model: wrapper prefixes removed (as DCP's state_dict does)."""
    for part in _WRAPPER_PARTS:
        name = name.replace(part, "")
    return name


def init_rule(args: ModelArgs, fqn: str) -> tuple[str, float]:
    """('normal', std) | ('zeros', 0) | ('ones', 0) for the parameter named `fqn` (canonical)."""
    owner, _, leaf = fqn.rpartition(".")
    last = owner.rpartition(".")[2]
    if last in ("attention_norm", "ffn_norm", "norm"):
        return ("ones", 0.0) if leaf == "weight" else ("zeros", 0.0)
    if leaf == "bias":
        return ("zeros", 0.0)
    if fqn.endswith(("attention.wo.weight", "feed_forward.w2.weight")):
        # Residual-branch outputs: the sum of 2·n_layers of them keeps unit scale (GPT-2/Megatron).
        return ("normal", args.init_std / math.sqrt(2 * args.n_layers))
    return ("normal", args.init_std)


def param_seed(seed: int, fqn: str) -> int:
    """A 63-bit generator seed per (seed, FQN): independent of module order and of which layers exist."""
    digest = hashlib.sha256(f"{seed}:{fqn}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def initial_value(
    rule: tuple[str, float], shape: torch.Size, dtype: torch.dtype, device: torch.device, seed: int, fqn: str
) -> torch.Tensor:
    """The full initial tensor of one parameter. Normal draws are in float32, then cast, so a bf16
    parameter starts from the rounded float32 value; the stream depends on the device type (CPU and CUDA
    generators differ), so parity is per device type."""
    kind, std = rule
    if kind == "ones":
        return torch.ones(shape, dtype=dtype, device=device)
    if kind == "zeros":
        return torch.zeros(shape, dtype=dtype, device=device)
    gen = torch.Generator(device=device).manual_seed(param_seed(seed, fqn))
    return torch.empty(shape, dtype=torch.float32, device=device).normal_(0.0, std, generator=gen).to(dtype)


def copy_into(param: torch.Tensor, full: torch.Tensor) -> None:
    param.copy_(full)


def local_device(param: torch.Tensor) -> torch.device:
    # A DTensor reports its mesh's device type; the local tensor is what the generator must match.
    local = getattr(param, "_local_tensor", param)
    return local.device


def num_params(model: nn.Module, exclude_embeddings: bool = False) -> int:
    """Parameters of `model` (a whole model or one pipeline stage), counted once when tied.

    Counts global sizes: a DTensor parameter counts its full shape, not this rank's shard.
    `exclude_embeddings` leaves out the input token and position embeddings (the usual "non-embedding
    parameters" of scaling-law papers); a tied output layer then disappears with them.
    """
    skip: set[int] = set()
    if exclude_embeddings:
        for name in ("tok_embeddings", "pos_embeddings"):
            module = getattr(model, name, None)
            if module is not None:
                skip.update(id(p) for p in module.parameters())
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)
