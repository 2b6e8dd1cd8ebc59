"""Pipeline parallelism with `torch.distributed.pipelining`: split the model into stages, build a schedule.

Split on the meta device before anything else (torchtitan's order): each stage is a deep copy of the
whole model with the layers and the embeddings/head it does not own deleted, so every surviving
parameter keeps its FQN and a checkpoint loads under any number of stages.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B
from torch.distributed.pipelining.schedules import _PipelineSchedule

from selene.errors import ConfigError
from selene.model.loss import cross_entropy
from selene.model.transformer import Transformer
from selene.train.dims import whole

SCHEDULES = ("1f1b", "interleaved_1f1b", "gpipe")


def stage_layout(n_layers: int, n_stages: int, layout: list[int] | None) -> list[int]:
    """Layers per stage: `layout` when given (checked), else an even split with the remainder on the
    first stages (the last stage also carries the output layer, the heaviest single matmul)."""
    if layout is not None:
        if len(layout) != n_stages or sum(layout) != n_layers or min(layout) < 0:
            raise ConfigError(
                f"parallel.pp_layout {layout} must list {n_stages} stages (pp × pp_stages_per_rank) of >= 0 "
                f"layers summing to the model's {n_layers} layers"
            )
        return list(layout)
    if n_stages > n_layers:
        raise ConfigError(
            f"{n_stages} pipeline stages (pp × pp_stages_per_rank) but the model has only {n_layers} layers"
        )
    base, extra = divmod(n_layers, n_stages)
    return [base + (1 if s < extra else 0) for s in range(n_stages)]


def stage_indices(pp_rank: int, pp: int, n_stages_per_rank: int) -> list[int]:
    """Stages of rank `pp_rank` in "loop" order (rank r holds r, r + pp, ...), as interleaved 1F1B expects."""
    return [pp_rank + v * pp for v in range(n_stages_per_rank)]


def pipeline_split(
    model: Transformer, pp_mesh: DeviceMesh, n_stages_per_rank: int, layout: list[int] | None
) -> list[tuple[int, Transformer]]:
    """(stage index, stage module) for each stage of this rank, cut from `model` (normally on meta).

    The first stage keeps the embeddings, the last the final norm and the output layer; a stage that
    does not own them has them set to None, which `Transformer.forward` skips.
    """
    if model.args.tie_embeddings:
        raise ConfigError(
            "model.tie_embeddings is not supported with pipeline parallelism (the input embedding and the "
            "output layer live on different stages); set model.tie_embeddings: false"
        )
    pp = pp_mesh.size()
    n_stages = pp * n_stages_per_rank
    sizes = stage_layout(model.args.n_layers, n_stages, layout)
    starts = [sum(sizes[:s]) for s in range(n_stages)]
    parts = []
    for s in stage_indices(pp_mesh.get_local_rank(), pp, n_stages_per_rank):
        part = copy.deepcopy(model)
        keep = {str(i) for i in range(starts[s], starts[s] + sizes[s])}
        for name in list(part.layers.keys()):
            if name not in keep:
                del part.layers[name]
        if s > 0:
            part.tok_embeddings = None
            part.pos_embeddings = None
        if s < n_stages - 1:
            part.norm = None
            part.output = None
        parts.append((s, part))
    return parts


def build_stages(
    parts: list[tuple[int, torch.nn.Module]], n_stages: int, pp_mesh: DeviceMesh, device: torch.device
) -> list[PipelineStage]:
    """One `PipelineStage` per part; shapes are inferred at the first step (no example inputs needed)."""
    group = pp_mesh.get_group()
    return [PipelineStage(module, index, n_stages, device, group=group) for index, module in parts]


def build_schedule(
    stages: list[PipelineStage],
    n_microbatches: int,
    schedule: str,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> _PipelineSchedule:
    """The schedule by name. It does not scale gradients (`scale_grads=False`): `loss_fn` must return
    the micro-batch loss already divided by `n_microbatches` (see `parallel_model.MicrobatchLoss`),
    which keeps gradients accumulated by earlier calls intact."""
    if schedule not in SCHEDULES:
        raise ConfigError(f"parallel.pp_schedule {schedule!r} is not one of {', '.join(SCHEDULES)}")
    if schedule == "interleaved_1f1b":
        return ScheduleInterleaved1F1B(stages, n_microbatches, loss_fn=loss_fn, scale_grads=False)  # type: ignore[arg-type]
    if len(stages) != 1:
        raise ConfigError(
            f"parallel.pp_schedule {schedule!r} runs one stage per rank, but pp_stages_per_rank is "
            f"{len(stages)}; use interleaved_1f1b or set pp_stages_per_rank: 1"
        )
    cls = Schedule1F1B if schedule == "1f1b" else ScheduleGPipe
    return cls(stages[0], n_microbatches, loss_fn=loss_fn, scale_grads=False)


class MicrobatchLoss:
    """The schedule's loss: the micro-batch mean divided by the number of micro-batches, so summed
    micro-batch gradients are the batch-mean gradient.

    Scaling the loss rather than letting the schedule divide the gradients (`scale_grads`) keeps
    gradient accumulation right: the schedule would also divide what earlier calls accumulated.
    """

    def __init__(self, n_microbatches: int) -> None:
        self.n_microbatches = n_microbatches

    def __call__(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return cross_entropy(logits, labels) / self.n_microbatches


class PipelineRunner:
    """Runs this rank's stages through a schedule, one schedule per (batch shape, train/eval).

    A `PipelineStage` infers its activation shapes on its first step, by a real forward/backward, and
    keeps them; a batch of another shape (batch ramp-up, a validation batch) or a switch between train
    and eval would make it re-infer or fail (gloo: "Received data size doesn't match expected size").
    So each shape and mode gets its own stages and schedule (the modules are shared), the last few
    kept. Inference under FSDP clears the parameters' gradients; the runner sets them aside across
    a fresh schedule's first step, so accumulating over calls stays exact.
    """

    MAX_SCHEDULES = 4

    def __init__(
        self,
        parts: list[tuple[int, torch.nn.Module]],
        n_stages: int,
        pp_mesh: DeviceMesh,
        device: torch.device,
        n_microbatches: int,
        schedule: str,
    ) -> None:
        self.parts, self.n_stages, self.pp_mesh, self.device = parts, n_stages, pp_mesh, device
        self.n_microbatches, self.schedule_name = n_microbatches, schedule
        self.is_first = any(index == 0 for index, _ in parts)
        self.is_last = any(index == n_stages - 1 for index, _ in parts)
        self._schedules: OrderedDict[tuple[object, ...], _PipelineSchedule] = OrderedDict()
        self._fresh: set[tuple[object, ...]] = set()

    def schedule(self, shape: torch.Size, train: bool) -> _PipelineSchedule:
        key = (tuple(shape), train)
        if key not in self._schedules:
            stages = build_stages(self.parts, self.n_stages, self.pp_mesh, self.device)
            self._schedules[key] = build_schedule(
                stages, self.n_microbatches, self.schedule_name, MicrobatchLoss(self.n_microbatches)
            )
            self._fresh.add(key)
            while len(self._schedules) > self.MAX_SCHEDULES:
                self._fresh.discard(self._schedules.popitem(last=False)[0])
        self._schedules.move_to_end(key)
        return self._schedules[key]

    def run(
        self, tokens: torch.Tensor, labels: torch.Tensor, train: bool, inputs: dict[str, torch.Tensor] | None = None
    ) -> torch.Tensor | None:
        """Forward (and backward when `train`) over the micro-batches; the mean micro-batch loss on
        the rank holding the last stage, None elsewhere.

        `inputs`: keyword inputs of every stage's forward, (batch, ...) tensors such as the document
        ids of a document mask. Stages after the first never see the tokens, so every rank passes
        them (each rank holds its data-parallel share of the tokens and derives them): the schedule
        splits keyword tensors into micro-batches along the batch, like the tokens, and hands each
        stage its micro-batch's (`PipelineStage.forward_one_chunk`), shape inference included."""
        if tokens.shape[0] % self.n_microbatches:
            raise ConfigError(
                f"the per-rank batch of {tokens.shape[0]} sequences does not split into "
                f"parallel.pp_microbatches {self.n_microbatches} equal micro-batches"
            )
        schedule = self.schedule(tokens.shape, train)
        key = (tuple(tokens.shape), train)
        saved = self._set_aside_grads() if key in self._fresh else {}
        losses: list[torch.Tensor] = []
        args = (tokens,) if self.is_first else ()
        target = labels if self.is_last else None
        kwargs: dict[str, Any] = dict(inputs or {})
        if train:
            schedule.step(*args, target=target, losses=losses, return_outputs=False, **kwargs)
        else:
            schedule.eval(*args, target=target, losses=losses, **kwargs)
        self._fresh.discard(key)
        self._restore_grads(saved)
        if not self.is_last:
            return None
        return torch.stack([whole(x).detach().float() for x in losses]).mean() * self.n_microbatches

    def _set_aside_grads(self) -> dict[torch.nn.Parameter, torch.Tensor]:
        saved = {}
        for _, part in self.parts:
            for p in part.parameters():
                if p.grad is not None:
                    saved[p] = p.grad
                    p.grad = None
        return saved

    @staticmethod
    def _restore_grads(saved: dict[torch.nn.Parameter, torch.Tensor]) -> None:
        for p, g in saved.items():
            if p.grad is None:
                p.grad = g
            else:
                p.grad.add_(g)
