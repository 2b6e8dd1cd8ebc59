"""`selene train`: the train stage's own command (it launches torchrun agents, one per node)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from selene.terminal import console, note

if TYPE_CHECKING:
    from selene.train.config import TrainConfig


def train(
    config: Annotated[str, typer.Argument(help="Pipeline YAML (its train: section) or a training YAML with out:.")],
    nproc_per_node: Annotated[
        int | None, typer.Option("--nproc-per-node", min=1, help="Processes on this node (default: train.nproc_per_node).")
    ] = None,
    nnodes: Annotated[int, typer.Option("--nnodes", min=1, help="Nodes.")] = 1,
    node_rank: Annotated[int, typer.Option("--node-rank", min=0, help="This node's rank.")] = 0,
    rdzv_endpoint: Annotated[str | None, typer.Option("--rdzv-endpoint", help="HOST:PORT of the rendezvous.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="key=value override, e.g. parallel.tp=2.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Train from step 0 even when the last step's checkpoint exists.")] = False,
    anneal_from: Annotated[
        str | None,
        typer.Option(
            "--anneal-from",
            help="step-N of this WSD run (or a step-NNNNNN directory): train a decay branch from it into "
            "<out>.anneals/step-N-decay-K/, the run itself untouched.",
        ),
    ] = None,
    decay_steps: Annotated[int | None, typer.Option("--decay-steps", help="Steps of the branch's decay (--anneal-from).")] = None,
    decay_shape: Annotated[
        str | None, typer.Option("--decay-shape", help="linear, cosine or 1-sqrt; default: the run's train.optim.decay_shape.")
    ] = None,
) -> None:
    """Pretrain with torchrun: data × tensor × pipeline parallel, DCP checkpoints, exact resume.

    This is the pipeline's train stage (a Prefect flow when a server is up, live on the dashboard;
    skipped when the last step's checkpoint exists). Each node of a multi-node run launches its own
    torchrun agent; the first node's command (--node-rank 0) is the one the dashboard shows.

    With --anneal-from step-N --decay-steps K: a decay branch of this WSD run (train.optim.schedule:
    wsd) from its stable-phase checkpoint at step N, K steps long, into <out>.anneals/step-N-decay-K/;
    the run itself is not written.
    """
    from selene.train.launch import launch, load_train_config

    cfg, out = load_train_config(config, set_ or [])
    if anneal_from is not None or decay_steps is not None or decay_shape is not None:
        cfg, out = _branch(cfg, out, anneal_from, decay_steps, decay_shape, force)
    if nproc_per_node:
        cfg = cfg.model_copy(update={"nproc_per_node": nproc_per_node})
    if (nnodes > 1 or rdzv_endpoint) and node_rank > 0:  # the first node's command is the one the dashboard shows
        launch(cfg, out, cfg.nproc_per_node, nnodes, node_rank, rdzv_endpoint)
        console.print(f"checkpoints in [b]{out}/checkpoints[/b]; metrics in {out}/metrics.jsonl")
        return
    if nnodes > 1 or rdzv_endpoint:
        cfg = cfg.model_copy(update={"nnodes": nnodes, "node_rank": node_rank, "rdzv_endpoint": rdzv_endpoint})
    from selene.job import Job
    from selene.runner import runtime
    from selene.summary import show
    from selene.train.view import view

    show(view(runtime(say=note).run(Job("train", None, out, cfg), force=force)), console)


def _branch(
    cfg: TrainConfig, out: str, anneal_from: str | None, decay_steps: int | None, shape: str | None, force: bool
) -> tuple[TrainConfig, str]:
    """(config, folder) of the decay branch the options ask for (`selene.train.anneal`)."""
    from selene.errors import ConfigError
    from selene.train.anneal import prepare

    if anneal_from is None:
        raise ConfigError("--decay-steps and --decay-shape set a decay branch: give --anneal-from step-N too")
    if decay_steps is None:
        raise ConfigError(f"--anneal-from {anneal_from}: give the length of the decay with --decay-steps K")
    if force:
        raise ConfigError("--force with --anneal-from: a branch resumes from its own checkpoints; delete its folder to redo it")
    return prepare(cfg, out, anneal_from, decay_steps, shape)
