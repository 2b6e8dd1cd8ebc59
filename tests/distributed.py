"""Multi-process tests on CPU: one gloo process group per world size, many layouts inside it.

Starting processes and a process group costs seconds on a small machine, so a test spawns one group
of `world_size` ranks (`run_world`) and runs every layout of that size in it, one after another,
each with its own DeviceMesh. Results come back through one file per rank.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.tensor import DTensor

from selene.model.args import ModelArgs
from selene.model.init import canonical_fqn
from selene.model.transformer import Transformer
from selene.train.config import ParallelConfig
from selene.train.dims import ParallelDims
from selene.train.parallelize import build_parallel_model


def _entry(
    rank: int, world_size: int, init_file: str, out_dir: str, fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    torch.set_num_threads(1)  # many ranks share few cores; oversubscription costs more than it gives
    # gloo binds to the interface of the host name, which a CI box may not resolve
    if sys.platform == "linux":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        result = fn(rank, world_size, *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    with open(os.path.join(out_dir, f"{rank}.pkl"), "wb") as f:
        pickle.dump(result, f)


def run_world(world_size: int, fn: Callable[..., Any], *args: Any) -> list[Any]:
    """fn(rank, world_size, *args) on `world_size` spawned gloo ranks; the results, by rank.

    `fn` must be importable (module level); an exception in any rank fails the call with its traceback."""
    with tempfile.TemporaryDirectory(prefix="selene-dist-") as tmp:
        init_file = os.path.join(tmp, "pg")
        mp.start_processes(
            _entry,
            args=(world_size, init_file, tmp, fn, args),
            nprocs=world_size,
            join=True,
            start_method="spawn",
        )
        out = []
        for rank in range(world_size):
            with open(os.path.join(tmp, f"{rank}.pkl"), "rb") as f:
                out.append(pickle.load(f))
        return out


# ------------------------------------------------------------------ a tiny training run, any layout


@dataclasses.dataclass(frozen=True)
class Run:
    """What every layout trains: the same model, data and optimizer."""

    margs: ModelArgs
    batch: int = 8
    seq: int = 32
    steps: int = 5
    lr: float = 3e-3
    max_norm: float = 0.5  # below the early gradient norms, so clipping is exercised
    seed: int = 7
    # forward_backward calls per step: sizes of the pieces of each data-parallel rank's share
    # (None: one call on the whole share). Gradients are divided by the number of calls.
    chunks: tuple[int, ...] | None = None


def batches(run: Run) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(run.seed)
    out = []
    for _ in range(run.steps):
        data = torch.randint(0, run.margs.vocab_size, (run.batch, run.seq + 1), generator=gen)
        out.append((data[:, :-1].contiguous(), data[:, 1:].contiguous()))
    return out


def _adamw(params: list[torch.nn.Parameter], run: Run) -> torch.optim.AdamW:
    return torch.optim.AdamW(params, lr=run.lr, betas=(0.9, 0.95), weight_decay=0.1)


def _pieces(run: Run, dp: int) -> list[slice]:
    """Rows of each forward_backward call: per data-parallel rank, per chunk."""
    share = run.batch // dp
    sizes = run.chunks or (share,)
    assert sum(sizes) == share, (sizes, share)
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [
        slice(r * share + a, r * share + a + n) for r in range(dp) for a, n in zip(starts, sizes, strict=True)
    ]


def reference(run: Run, dp: int = 1) -> dict[str, list[float]]:
    """Losses and pre-clip gradient norms of the plain single-process model.

    The loss is the mean over the pieces that the layout's forward_backward calls see (`_pieces`);
    without `chunks` that is the plain mean over the batch whatever `dp` is."""
    with torch.device("meta"):
        model = Transformer(run.margs)
    model.to_empty(device="cpu")
    model.init_weights(seed=run.seed)
    opt = _adamw(list(model.parameters()), run)
    ce = torch.nn.functional.cross_entropy
    losses, norms = [], []
    for tokens, labels in batches(run):
        opt.zero_grad(set_to_none=True)
        if run.chunks is None:
            loss = ce(model(tokens).flatten(0, 1), labels.flatten(0, 1))
        else:
            loss = torch.stack(
                [ce(model(tokens[s]).flatten(0, 1), labels[s].flatten(0, 1)) for s in _pieces(run, dp)]
            ).mean()
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), run.max_norm)))
        losses.append(loss.item())
        opt.step()
    tokens, labels = batches(run)[-1]
    with torch.no_grad():
        final = ce(model(tokens).flatten(0, 1), labels.flatten(0, 1))
    return {"loss": losses, "norm": norms, "eval": [float(final)]}


def train_layout(rank: int, world_size: int, run: Run, pcfg: ParallelConfig) -> dict[str, list[float]]:
    """The same run under `pcfg` on the current process group: losses and norms as rank `rank` sees them."""
    dims = ParallelDims(pcfg.dp_replicate, pcfg.dp_shard, pcfg.tp, pcfg.pp, world_size)
    mesh = dims.build_mesh("cpu")
    pm = build_parallel_model(run.margs, pcfg, dims, mesh, torch.device("cpu"), run.seed)
    init_diff = _init_difference(pm.parts, run)
    opts = [_adamw(list(part.parameters()), run) for part in pm.parts]
    dp_rank = dims.get_mesh("dp").get_local_rank()
    pieces = _pieces(run, dims.dp)
    mine = pieces[dp_rank * len(pieces) // dims.dp : (dp_rank + 1) * len(pieces) // dims.dp]
    losses, norms = [], []
    for tokens, labels in batches(run):
        for o in opts:
            o.zero_grad(set_to_none=True)
        step_losses = [float(pm.forward_backward(tokens[rows], labels[rows])) for rows in mine]
        if len(mine) > 1:
            for p in (p for part in pm.parts for p in part.parameters() if p.grad is not None):
                p.grad.div_(len(mine))  # type: ignore[union-attr]
        losses.append(sum(step_losses) / len(mine))
        norms.append(float(pm.clip_grad_norm(run.max_norm)))
        for o in opts:
            o.step()
    tokens, labels = batches(run)[-1]
    share = run.batch // dims.dp
    rows = slice(dp_rank * share, (dp_rank + 1) * share)
    return {
        "loss": losses,
        "norm": norms,
        "eval": [pm.evaluate(tokens[rows], labels[rows])],
        "init": [init_diff],
    }


def _init_difference(parts: list[torch.nn.Module], run: Run) -> float:
    """Largest |parallel − single-process| initial weight over this rank's parameters (made whole)."""
    with torch.device("meta"):
        plain = Transformer(run.margs)
    plain.to_empty(device="cpu")
    plain.init_weights(seed=run.seed)
    expected = dict(plain.named_parameters())
    worst = 0.0
    for part in parts:
        for name, p in part.named_parameters():
            full = p.detach().full_tensor() if isinstance(p, DTensor) else p.detach()
            worst = max(worst, float((full - expected[canonical_fqn(name)]).abs().max()))
    return worst


def train_layouts(
    rank: int, world_size: int, jobs: list[tuple[str, Run, ParallelConfig]]
) -> dict[str, dict[str, list[float]]]:
    """Each named layout in turn, in one process group (a fresh mesh each)."""
    return {name: train_layout(rank, world_size, run, pcfg) for name, run, pcfg in jobs}
