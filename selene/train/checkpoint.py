"""Checkpoints with `torch.distributed.checkpoint` (DCP): resharded on load, any layout to any layout.

A checkpoint is ``<dir>/step-NNNNNN/``: the DCP files of the model and optimizer state (keyed by the
unsharded parameter names, so a checkpoint saved at dp_shard=2 loads at tp=2 × pp=2), one RNG file per
rank, and ``meta.json`` (step, data cursor, config, layout) written last by rank 0 — the completion
marker: a directory without it is an interrupted save and is never loaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.checkpoint.stateful import Stateful

from selene.errors import InputError

META = "meta.json"
_STEP = re.compile(r"^step-(\d{6,})$")
_OPTS = StateDictOptions(flatten_optimizer_state_dict=True, strict=False)


class ModelState(Stateful):
    """All model parts of this rank as one state dict (pipeline stages keep the full model's names)."""

    def __init__(self, parts: list[torch.nn.Module]) -> None:
        self.parts = parts

    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in self.parts:
            out.update(get_model_state_dict(p))
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for p in self.parts:
            set_model_state_dict(p, state_dict, options=StateDictOptions(strict=False))


class OptimizerState(Stateful):
    """The optimizers of the model parts, flattened to parameter names (layout independent)."""

    def __init__(self, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer]) -> None:
        self.parts, self.optims = parts, optims

    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, o in zip(self.parts, self.optims, strict=True):
            out.update(get_optimizer_state_dict(p, o, options=_OPTS))
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for p, o in zip(self.parts, self.optims, strict=True):
            set_optimizer_state_dict(p, o, state_dict, options=_OPTS)


def step_dir(root: str, step: int) -> str:
    return os.path.join(root, f"step-{step:06d}")


def complete_steps(root: str) -> list[int]:
    """Steps with a finished checkpoint under `root`, ascending."""
    if not os.path.isdir(root):
        return []
    steps = []
    for name in os.listdir(root):
        m = _STEP.match(name)
        if m and os.path.exists(os.path.join(root, name, META)):
            steps.append(int(m.group(1)))
    return sorted(steps)


def save(
    root: str, step: int, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer],
    meta: dict[str, Any], keep: int,
) -> str:
    """Save step `step` on every rank; rank 0 writes meta.json last, then prunes to the last `keep`."""
    path = step_dir(root, step)
    rank = dist.get_rank() if dist.is_initialized() else 0
    if rank == 0 and os.path.exists(path):
        shutil.rmtree(path)  # an interrupted save of the same step
    _barrier()
    dcp.save({"model": ModelState(parts), "optim": OptimizerState(parts, optims)}, checkpoint_id=path)
    os.makedirs(os.path.join(path, "rng"), exist_ok=True)
    torch.save(torch.get_rng_state(), os.path.join(path, "rng", f"rank-{rank:05d}.pt"))
    _barrier()
    if rank == 0:
        tmp = os.path.join(path, META + ".tmp")
        with open(tmp, "w") as f:
            json.dump({"step": step, **meta}, f, indent=1)
        os.replace(tmp, os.path.join(path, META))
        for old in complete_steps(root)[:-keep]:
            shutil.rmtree(step_dir(root, old), ignore_errors=True)
    _barrier()
    return path


def load(path: str, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer]) -> dict[str, Any]:
    """Load a finished checkpoint into this rank's parts and optimizers; returns its meta."""
    meta_path = os.path.join(path, META)
    if not os.path.exists(meta_path):
        raise InputError(f"{path} is not a finished checkpoint (no {META}); pass a step-NNNNNN directory")
    with open(meta_path) as f:
        meta = json.load(f)
    dcp.load({"model": ModelState(parts), "optim": OptimizerState(parts, optims)}, checkpoint_id=path)
    rank = dist.get_rank() if dist.is_initialized() else 0
    rng = os.path.join(path, "rng", f"rank-{rank:05d}.pt")
    if os.path.exists(rng):  # same rank count: restore exactly; another layout: keep the fresh seed
        torch.set_rng_state(torch.load(rng, weights_only=True))
    return meta


def _barrier() -> None:
    if dist.is_initialized():
        dist.barrier()
