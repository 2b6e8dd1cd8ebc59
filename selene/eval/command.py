"""`selene eval`: the eval stage's own command (it takes a checkpoint, and writes beside it)."""

from __future__ import annotations

from typing import Annotated

import typer

from selene.terminal import console, note


def eval_(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir: its latest.")],
    tasks: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated: bundled selene_* tasks (the default), any lm-eval task (piqa, hellaswag, "
            "lambada_openai, ...), or mt-nlg (the MT-NLG 530B paper's table, its figures beside the run's)."
        ),
    ] = None,
    task_data: Annotated[
        list[str] | None,
        typer.Option(
            "--task-data",
            metavar="TASK=DIR",
            help="Repeatable: local files for an lm-eval task's dataset, one <split>.jsonl or "
            "<split>.parquet per split the task's YAML names (e.g. piqa: validation.jsonl, train.jsonl).",
        ),
    ] = None,
    num_fewshot: Annotated[int | None, typer.Option("--num-fewshot", min=0, help="Few-shot examples (default 0; a suite has its own).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Documents per task, at most.")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1, help="Requests per forward (default 8).")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", help="Results directory (default: <checkpoint>/eval).")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: eval settings or a pipeline file.")] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="Where it runs (default: eval.device; auto: cuda when there is a GPU).")
    ] = None,
) -> None:
    """Evaluate a checkpoint on lm-evaluation-harness tasks (offline), plus held-out perplexity
    (the pipeline's eval stage: a Prefect flow when a server is up)."""
    from selene.config import with_overrides
    from selene.config.pipeline import load_stage_config
    from selene.errors import ConfigError
    from selene.eval.config import EvalConfig

    cfg: EvalConfig = load_stage_config(config, EvalConfig, "eval")
    data = dict(cfg.task_data)
    for item in task_data or []:
        task, sep, directory = item.partition("=")
        if not sep or not task.strip() or not directory.strip():
            raise ConfigError(f"--task-data {item!r}: expected TASK=DIR, e.g. --task-data piqa=data/piqa")
        data[task.strip()] = directory.strip()
    cfg = with_overrides(
        cfg, tasks=[t.strip() for t in tasks.split(",") if t.strip()] if tasks else None,
        num_fewshot=num_fewshot, limit=limit, batch_size=batch_size, checkpoint=checkpoint, device=device,
        task_data=data or None,
    )
    import os
    from pathlib import Path

    from selene.eval import harness
    from selene.eval.tasks import data as task_data_files
    from selene.eval.tasks.precheck import precheck

    # the tasks and their data first: before torch (the checkpoint's module) and lm-eval load
    include = [harness.TASKS_DIR] + ([Path(cfg.include_path).resolve()] if cfg.include_path else [])
    precheck(list(cfg.tasks), cfg.num_fewshot, dict(cfg.task_data), include, task_data_files.user_datasets_cache())

    from selene.eval.checkpoint_io import resolve
    from selene.eval.view import view
    from selene.job import Job
    from selene.runner import runtime
    from selene.summary import show

    ckpt = resolve(checkpoint)
    job = Job("eval", ckpt, output or os.path.join(ckpt, "eval"), cfg)
    show(view(runtime(say=note).run(job, force=True)), console)
