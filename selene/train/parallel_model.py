"""`ParallelModel`: what the training loop sees of a parallelised model, whatever the layout.

Built by `selene.train.parallelize.build_parallel_model`. It hides the three ways a step runs —
a plain forward/backward, the same under `loss_parallel()` with tensor parallelism, or a pipeline
schedule over micro-batches — behind `forward_backward`, `evaluate` and `clip_grad_norm`, each of
which returns a value identical on every rank.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed import ProcessGroup
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import loss_parallel

from selene.model.masks import DocumentMasking
from selene.train.dims import ParallelDims, whole
from selene.train.float8 import precompute_scales
from selene.train.pipeline_parallel import PipelineRunner


class ParallelModel:
    """The model parts of this rank and how to run a step on them.

    `parts`: one module without pipelining, else one per pipeline stage of this rank (the optimizer
    and the checkpoint take them all). `forward_backward` accumulates gradients (never zeroes them),
    so gradient accumulation is the caller calling it several times and dividing the gradients.

    `masking` (set by the training loop for `train.data.document_mask`): every forward, training and
    evaluation, then attends within documents; the mask inputs are derived here from the tokens.
    """

    masking: DocumentMasking | None = None

    def __init__(
        self,
        parts: list[nn.Module],
        dims: ParallelDims,
        device: torch.device,
        *,
        pipeline: PipelineRunner | None = None,
        pp_group: ProcessGroup | None = None,
        dp_group: ProcessGroup | None = None,
        autocast_dtype: torch.dtype | None = None,
        float8_scales: bool = False,
    ) -> None:
        self.parts = parts
        self.dims = dims
        self.device = device
        self.pipeline = pipeline
        self.pp_group, self.dp_group = pp_group, dp_group
        self.autocast_dtype = autocast_dtype
        self.float8_scales = float8_scales  # FSDP all-gathers float8 weights (selene.train.float8)

    @contextlib.contextmanager
    def _context(self) -> Iterator[None]:
        """loss_parallel (vocabulary-parallel cross-entropy) with TP; autocast when bf16 without FSDP.

        It must cover the backward too: loss_parallel also swaps the cross-entropy's backward."""
        with contextlib.ExitStack() as stack:
            if self.dims.tp_enabled:
                stack.enter_context(loss_parallel())
            if self.autocast_dtype is not None:
                stack.enter_context(torch.autocast(self.device.type, dtype=self.autocast_dtype))
            yield

    def forward_backward(self, tokens: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Forward and backward on this rank's share of the batch; returns the loss averaged over the
        global batch (all data-parallel ranks), detached, identical on every rank. Gradients accumulate.

        With pipelining the schedule splits `tokens` into `pp_microbatches` equal micro-batches;
        every rank passes its data-parallel share (the first stage reads tokens, the last labels).
        """
        extra = self._masks(tokens)
        with self._context():
            if self.pipeline is not None:
                local = self.pipeline.run(tokens, labels, train=True, inputs=extra)
            else:
                loss = self.parts[0](tokens, labels, **extra)
                loss.backward()
                local = whole(loss.detach())
        return self._global_mean(local)

    @torch.no_grad()
    def evaluate(self, tokens: torch.Tensor, labels: torch.Tensor) -> float:
        """Mean loss over the global batch without gradients (dropout off), the same on every rank."""
        for part in self.parts:
            part.eval()
        try:
            extra = self._masks(tokens)
            with self._context():
                if self.pipeline is not None:
                    local = self.pipeline.run(tokens, labels, train=False, inputs=extra)
                else:
                    local = whole(self.parts[0](tokens, labels, **extra))
            return float(self._global_mean(local))
        finally:
            for part in self.parts:
                part.train()

    def _masks(self, tokens: torch.Tensor) -> dict[str, torch.Tensor]:
        """The forward's document-mask inputs (`DocumentMasking.inputs`), none without masking."""
        return self.masking.inputs(tokens) if self.masking is not None else {}

    def _global_mean(self, local: torch.Tensor | None) -> torch.Tensor:
        """Broadcast the last stage's loss over pp (a sum with zeros elsewhere), then average over dp.

        Every data-parallel rank holds the same number of tokens, so the mean of their means is the
        global mean. Tensor-parallel ranks already agree (the loss is a replicated DTensor)."""
        value = (local if local is not None else torch.zeros((), device=self.device)).float().clone()
        if self.pp_group is not None:
            dist.all_reduce(value, group=self.pp_group)
        if self.dp_group is not None:
            dist.all_reduce(value, group=self.dp_group)
            value /= self.dims.dp
        return value

    @torch.no_grad()
    def clip_grad_norm(self, max_norm: float) -> torch.Tensor:
        """Scale all gradients so their global L2 norm is at most `max_norm`; returns the norm before
        (a 0-dim tensor on the device: nothing here waits for the device).

        torchtitan's approach: the norm of the DTensor gradients is computed with DTensor ops and
        made whole with `full_tensor()` (an all-reduce over whichever mesh dims shard it — dp for FSDP,
        tp for TP; replicated pieces count once), then the squares are summed over the pipeline
        stages. Gradients are grouped by (mesh, placements) so mixed layouts (e.g. replicated norms
        beside sharded matmuls) each reduce correctly, with one collective per group.
        """
        groups: dict[Any, list[torch.Tensor]] = {}
        for g in _grads(self.parts):
            key = (g.device_mesh, tuple(g.placements)) if isinstance(g, DTensor) else ("local", g.device)
            groups.setdefault(key, []).append(g)
        total_sq = torch.zeros((), device=self.device, dtype=torch.float32)
        for grads in groups.values():
            norm = torch.nn.utils.get_total_norm(grads, norm_type=2.0)
            total_sq += whole(norm).float() ** 2
        if self.pp_group is not None:
            dist.all_reduce(total_sq, group=self.pp_group)
        total = total_sq.sqrt()
        # torch's clip_grads_with_norm_: always multiply by the clamped coefficient, a device tensor,
        # so no branch reads the norm on the host. foreach ops refuse a plain tensor among DTensors,
        # so a DTensor gradient is scaled through its local shard (the same storage).
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for grads in groups.values():
            torch._foreach_mul_([g.to_local() if isinstance(g, DTensor) else g for g in grads], coef)
        return total

    def after_optimizer_step(self) -> None:
        """What the updated weights need before the next forward: with float8 all-gather, their
        float8 scales, computed for all weights at once (`selene.train.float8.precompute_scales`)."""
        if self.float8_scales:
            precompute_scales(self.parts)


def _grads(parts: list[nn.Module]) -> list[torch.Tensor]:
    """Each parameter's gradient once (a tied parameter appears under two names)."""
    seen: set[int] = set()
    out: list[torch.Tensor] = []
    for part in parts:
        for p in part.parameters():
            if p.grad is not None and id(p) not in seen:
                seen.add(id(p))
                out.append(p.grad)
    return out
