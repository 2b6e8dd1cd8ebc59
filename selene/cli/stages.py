"""The stage commands, made from the registry, plus `run` (the pipeline) and `config`.

A stage with a command of its own (`Stage.command`: training, evaluation) gets that one; every
other stage gets the same command: ``-i/--input`` (unless it reads the sources),
``-o/--output``, its own options (each sets one config field), ``-c/--config``, the executor
options and ``--force``. The options are built from `selene.registry` alone, so ``--help`` imports
no config model.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer
from rich.markup import escape  # help is rich markup: `NAME[text_key=K]` would read as a tag and vanish

from selene import registry
from selene.cli.app import app, config_app, progress_bars
from selene.terminal import console, note

EXECUTORS = "processes | threads | dask"


def _common() -> list[inspect.Parameter]:
    def opt(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)

    return [
        opt("config", Annotated[str | None, typer.Option("--config", "-c", help="YAML: this stage's settings, or a pipeline file.")]),
        opt("workers", Annotated[int | None, typer.Option("--workers", "-w", min=1, help="Parallel workers (default: executor.workers, else 1).")]),
        opt("executor", Annotated[str | None, typer.Option("--executor", help=f"Where the parallel steps run: {EXECUTORS} (default: executor.kind, else processes).")]),
        opt("memory_gb", Annotated[float | None, typer.Option("--memory-gb", min=0.1, help="Memory budget of the stage, all workers together, GiB (default: executor.memory_gb, else 4).")]),
        opt("dask_address", Annotated[str | None, typer.Option("--dask-address", help="tcp://host:8786 of a Dask scheduler (implies --executor dask).")]),
        opt("force", Annotated[bool, typer.Option("--force", help="Redo even if OUT is complete for these inputs.")], False),
    ]  # fmt: skip


def stage_command(stage: registry.Stage) -> Any:
    """The command of a registered stage (a function whose signature typer reads)."""
    params = []
    if stage.reads != "sources":
        params.append(inspect.Parameter(
            "input", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[str, typer.Option("--input", "-i", help=stage.input_help)]
        ))  # fmt: skip
    params.append(inspect.Parameter(
        "output", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[str, typer.Option("--output", "-o", help=stage.output_help)]
    ))  # fmt: skip
    for i, o in enumerate(stage.options):
        kind: Any = list[str] | None if o.multiple else o.type | None
        params.append(inspect.Parameter(
            f"opt_{i}", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind, typer.Option(*o.flags, help=escape(o.help))]
        ))  # fmt: skip
    params += _common()

    def command(**kw: Any) -> None:
        run_stage_command(stage, kw)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__name__ = stage.name
    command.__doc__ = escape(stage.help + (f"\n\n{stage.doc}" if stage.doc else ""))
    return command


def run_stage_command(stage: registry.Stage, kw: dict[str, Any]) -> None:
    from selene.config import ExecutorConfig, with_overrides
    from selene.config.pipeline import load_stage_files
    from selene.job import Job
    from selene.runner import runtime
    from selene.summary import show

    cfg, ex = load_stage_files(kw["config"], stage.config_model(), stage.name)
    overrides: dict[str, Any] = {}
    for i, o in enumerate(stage.options):
        value = kw[f"opt_{i}"]
        if value is None or value == []:
            continue
        value = parse(o.flags[0], value) if (parse := o.parser()) else value
        overrides[o.field] = overrides.get(o.field, []) + value if o.multiple and o.field in overrides else value
    cfg = with_overrides(cfg, **overrides)
    kind = kw["executor"] or ("dask" if kw["dask_address"] else None)
    ex = with_overrides(
        ex, "executor (--executor sets kind, --workers workers, --memory-gb memory_gb, --dask-address address)",
        kind=kind, workers=kw["workers"], address=kw["dask_address"], memory_gb=kw["memory_gb"],
    )  # fmt: skip
    assert isinstance(ex, ExecutorConfig)
    job = Job(stage.name, kw.get("input"), kw["output"], cfg, ex)
    rt = runtime(say=note)
    with progress_bars():
        result = rt.run(job, force=kw["force"])
    if stage.view:
        show(stage.view.load()(result), console)


def register(target: typer.Typer) -> None:
    """A command per registered stage on `target`: the stage's own (`Stage.command`), else the one
    made from its options."""
    for stage in registry.STAGES:
        fn = stage.command.load() if stage.command else stage_command(stage)
        target.command(name=stage.name, short_help=stage.help)(fn)  # its docstring is the full help
        for name, ref in stage.subcommand_names().items():  # `selene <stage> <name>`, said in the stage's help
            target.command(name=name, hidden=True)(ref.load())


register(app)


# ------------------------------------------------------------------------------------- config


@config_app.command("validate")
def config_validate(file: Annotated[str, typer.Argument(help="Pipeline YAML file.")]) -> None:
    """Validate a pipeline config and print it resolved (every default filled in)."""
    from selene.config import dump_config
    from selene.config.pipeline import load_pipeline_config
    from selene.terminal import err_console

    cfg = load_pipeline_config(file)
    console.print(dump_config(cfg), end="", markup=False, highlight=False)
    err_console.print(f"[green]{file}: valid[/green]")


@config_app.command("defaults")
def config_defaults(
    stage: Annotated[str, typer.Argument(help=f"{' | '.join(registry.NAMES)} | executor")] = registry.NAMES[0],
) -> None:
    """Print the default settings of a stage, as YAML to start a config from."""
    from selene.config import ExecutorConfig, dump_config

    if stage == "executor":
        model: Any = ExecutorConfig
    elif stage in registry.BY_NAME:
        model = registry.get(stage).config_model()
    else:
        from selene.errors import ConfigError

        raise ConfigError(f"unknown stage {stage!r}; known: {', '.join((*registry.NAMES, 'executor'))}")
    console.print(dump_config(model()), end="", markup=False, highlight=False)


# ---------------------------------------------------------------------------------------- run


@app.command()
def run(
    pipeline: Annotated[str, typer.Argument(help="Pipeline YAML file, e.g. configs/demo.yaml.")],
    from_stage: Annotated[str | None, typer.Option("--from", help="Start at this stage (earlier ones must be complete).")] = None,
    until_stage: Annotated[str | None, typer.Option("--until", help="Stop after this stage.")] = None,
    force: Annotated[list[str] | None, typer.Option("--force", help="Redo this stage even when complete (repeatable).")] = None,
) -> None:
    """Run the whole pipeline into the config's run_dir; complete stages are skipped."""
    from selene.config.pipeline import load_pipeline_config
    from selene.pipeline import set_stage_done_hook
    from selene.runner import runtime
    from selene.summary import show

    cfg = load_pipeline_config(pipeline)
    rt = runtime(say=note)

    said: set[str] = set()

    def summary(name: str, result: Any) -> None:
        stage = registry.get(name)
        # once: a run that lost its Prefect server goes on without it and passes the finished stages again
        if stage.view and name not in said:
            said.add(name)
            show(stage.view.load()(result), console)

    set_stage_done_hook(summary)  # each stage's summary as it finishes, before the next stage's lines
    try:
        with progress_bars():
            rt.pipeline(cfg, force or [], from_stage, until_stage)
    finally:
        set_stage_done_hook(None)
    console.print(f"run directory: [b]{cfg.run_dir}[/b]; report: [b]{cfg.run_dir}/report.md[/b]")
