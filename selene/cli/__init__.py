"""The `selene` command: one sub-command per registered stage (`selene.cli.stages`; train and eval
bring their own), plus run, config, server, deploy, the checkpoint commands (export, generate) and
the planner's (plan, plan serve, scaling-study).

Exit codes (`selene.errors`): 0 success; 2 refused before any work because of what the user gave
(an option, a config value, a wrong path, an existing output); 1 a failure while working, or an
internal error (selene's bug, said so). Errors print one paragraph;
``--debug`` (anywhere on the line) adds the traceback. Importing this package loads typer and
selene's light modules only (``selene --help`` takes a small fraction of a second).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import shlex
import signal
import sys
import threading
import traceback

import click
import typer

from selene import registry
from selene.cli.app import app
from selene.cli.help import spoken_names
from selene.errors import InternalError, SeleneError, Stopped
from selene.terminal import err_console

for _commands in ("stages", "server", "deploy", "checkpoints", "plan", "ablate"):  # they register their commands, listed in this order
    importlib.import_module(f"selene.cli.{_commands}")

# Recent typer versions carry their own copy of click: catch the exceptions of both.
_CLICK_ERRORS: tuple[type[Exception], ...] = (
    click.ClickException,
    *(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"),
)
_EXITS = (click.exceptions.Exit, typer.Exit)
_ABORTS = (click.exceptions.Abort, typer.Abort)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that `finally` blocks run: temporaries are removed and
    the output lock and the registry entry (`selene.guard`) released, as on Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """The command, with SIGTERM turned into `Terminated` while it runs (where nobody else set a
    handler), and a watchdog that kills its process group if it is killed (`watch_group`)."""
    from selene.procs import watch_group

    catch = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if catch:
        signal.signal(signal.SIGTERM, _terminate)
    goodbye = watch_group()  # kill -9 of this command takes what it started along
    try:
        return _main(argv)
    except Terminated:
        err_console.print("terminated")
        return 128 + signal.SIGTERM
    finally:
        goodbye()
        if catch:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def in_order() -> None:
    """Output that reads in the order it happened when it goes to a file or a pipe. There Python
    buffers stdout in blocks, in this process and in every process it starts (torchrun's ranks, the
    data stages' workers), each flushing when its buffer fills or it exits: a log of `selene run`
    showed every training step first and every stage's summary at the end. This process's streams
    flush at each line, and the processes it starts write unbuffered (PYTHONUNBUFFERED, unless set)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not stream.isatty():
            with contextlib.suppress(ValueError, OSError):
                reconfigure(line_buffering=True)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")


def _main(argv: list[str] | None = None) -> int:
    from rich.markup import escape

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # no telemetry calls offline
    in_order()
    args = list(sys.argv[1:] if argv is None else argv)
    given = list(args)  # as the user typed it, for the line that says how to resume
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]  # accepted anywhere, not only before the command
    # `selene quality train`, `selene plan serve`: commands of their own in the tree (`plan` takes a
    # config path, a stage command its options)
    further = {spoken: name for name, spoken in spoken_names().items()}
    if " ".join(args[:2]) in further:
        args = [further[" ".join(args[:2])], *args[2:]]
    if debug:
        os.environ["SELENE_DEBUG"] = "1"  # Prefect's console logs keep their tracebacks too
    else:
        os.environ.pop("SELENE_DEBUG", None)
    try:
        code = app(args=args, prog_name="selene", standalone_mode=False)
        # typer returns, not raises, a command's `typer.Exit` code, and 130 for Ctrl-C (KeyboardInterrupt)
        if isinstance(code, int) and not isinstance(code, bool) and code:
            if code == 130:
                err_console.print(interrupted(args, given), highlight=False)
            return code
        return 0
    except _EXITS as e:
        return int(getattr(e, "exit_code", 0) or 0)
    except _ABORTS:
        err_console.print("aborted")
        return 130
    except _CLICK_ERRORS as e:
        e.show()  # type: ignore[attr-defined]
        return 2
    except Stopped as e:  # asked for: said as it is, not as an error
        err_console.print(escape(str(e)), markup=True, highlight=False, soft_wrap=True)
        return e.exit_code
    except SeleneError as e:
        if debug:
            traceback.print_exc()
        hint = "\n(rerun with --debug for the traceback)" if isinstance(e, InternalError) and not debug else ""
        err_console.print(f"[red]error:[/red] {escape(str(e))}{hint}", markup=True, highlight=False, soft_wrap=True)
        return e.exit_code
    except KeyboardInterrupt:
        err_console.print(interrupted(args, given), highlight=False)
        return 130
    except Exception as e:
        if debug:
            traceback.print_exc()
        err_console.print(
            f"[red]error:[/red] {type(e).__name__}: {escape(str(e))}\n(rerun with --debug for the traceback)",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
        return 1


def interrupted(args: list[str], given: list[str]) -> str:
    """What Ctrl-C of a command says. A data stage (a command made from the registry) and the
    pipeline keep what they finished (each shard is written whole, then renamed; a stage's
    manifest comes last): the same command takes up from there, and the line gives it."""
    name = args[0] if args else ""
    stage = registry.BY_NAME.get(name)
    if name == "run":
        kept = "the finished stages and the running stage's finished shards are kept"
    elif stage is not None and stage.command is None:
        kept = "the shards it finished are kept"
    else:
        return "interrupted"
    again = shlex.join(["selene", *given])
    return f"interrupted (Ctrl-C): {kept}; the same command resumes from them: {again}"


def entrypoint() -> None:
    """The `selene` console script: `main`, then a quick exit.

    Exiting normally, Python tears down every module the command loaded (Prefect, pyarrow, pydantic
    ...), which took 0.4 s on a quiet 2-core machine and 1.5 s on a busy one, after the work was
    done. Here the interpreter's own exit steps that matter run (thread-pool joins, atexit handlers:
    Prefect's log and event flushes, logging, multiprocessing), the standard streams are flushed, and
    the process ends without the teardown.
    """
    rc = main()
    try:
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        sys.exit(rc)  # anything unexpected: the ordinary exit
    os._exit(rc)


__all__ = ["app", "entrypoint", "main"]
