"""The typer application and what the commands here share: progress bars (the consoles and `note`
are `selene.terminal`'s, option overrides `selene.config.with_overrides`).

Importing the CLI loads typer and selene's light modules only; a command imports pydantic, pyarrow,
Prefect or torch when it runs, and only what it needs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from selene.cli.help import PlainGroup
from selene.terminal import console, err_console

app = typer.Typer(
    name="selene",
    cls=PlainGroup,  # plain metavars and flowing help in every command (selene.cli.help)
    help="Raw corpora → a pretrained, evaluated language model. Each stage is a command and a Prefect flow.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
config_app = typer.Typer(help="Validate and show configuration files.", no_args_is_help=True)
server_app = typer.Typer(
    help="The Prefect server every selene command reports to: start, stop, status, logs.", no_args_is_help=True
)
app.add_typer(config_app, name="config")
app.add_typer(server_app, name="server")


def _print_version(given: bool) -> None:
    if given:
        from selene import __version__

        console.print(f"selene {__version__}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", is_eager=True, callback=_print_version, help="Print selene's version and exit."
        ),
    ] = False,
) -> None:
    """selene: ingest → quality → dedup → spans → substrings → decontaminate → blend → tokenize → train → eval."""


@app.command()
def version() -> None:
    """Print the selene version."""
    from selene import __version__

    console.print(__version__)


@contextlib.contextmanager
def progress_bars() -> Iterator[None]:
    """A bar per step of the running stage(s), fed by the mappers (`selene.executor.events.progress`);
    in a log (standard error not a terminal) a line per step as it finishes instead, in its place
    among the other lines, where bars would be drawn once, all together, when the command ends."""
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from selene.executor.events import set_progress_listener

    if not err_console.is_terminal:
        started: dict[str, float] = {}

        def line(name: str, done: int, total: int) -> None:
            start = started.setdefault(name, time.perf_counter())
            if done >= total:
                del started[name]
                err_console.print(
                    f"{name}: {done}/{total} in {time.perf_counter() - start:.1f} s", highlight=False
                )

        set_progress_listener(line)
        try:
            yield
        finally:
            set_progress_listener(None)
        return

    bars: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err_console, transient=False,
    ) as progress:  # fmt: skip

        def bar(name: str, done: int, total: int) -> None:
            if name not in bars:
                bars[name] = progress.add_task(name, total=total)
            progress.update(bars[name], completed=done, total=total)

        set_progress_listener(bar)
        try:
            yield
        finally:
            set_progress_listener(None)

