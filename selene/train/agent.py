"""torchrun for `selene train`: the same agent, but a failed rank is reported once, by the launcher.

``python -m selene.train.agent <torchrun arguments>`` runs `torch.distributed.run` in this process.
When a rank fails, torchrun's own entry point logs the failure, then prints a `ChildFailedError`
with a traceback of the agent and a report per rank; the rank has already printed its own traceback.
Here the ranks write their error to a file instead (`selene.train.worker`, in the directory named by
``SELENE_RANK_ERRORS``), the agent adds how each failed rank ended (exit code or signal) as
``agent-<node>.json`` next to them and exits with status 1 without printing anything, and
`selene.train.launch` turns all that into one `SeleneError` naming the rank.

Stopping. `selene train` starts the agent in a session of its own and names itself in
``SELENE_TRAIN_LAUNCHER``: the agent dies with it however it ends, SIGKILL included (`die_with`), and
its ranks die with the agent (they follow it the same way). The launcher forwards SIGTERM and Ctrl-C
as one SIGTERM. On the first SIGTERM, SIGINT, SIGHUP or SIGQUIT the agent sends SIGTERM to its ranks
(whatever the signal: SIGTERM is what makes a rank finish its step and save a checkpoint), ignores
the signals that follow (a job scheduler that signals every process, and the launcher, may both
send one), waits for the ranks (``TORCH_ELASTIC_SHUTDOWN_TIMEOUT`` seconds, then SIGKILL) and exits
with 128 + SIGTERM, without a traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import sys

from selene.procs import die_with

ERRORS_ENV = "SELENE_RANK_ERRORS"
LAUNCHER_ENV = "SELENE_TRAIN_LAUNCHER"
"""The pid of the `selene train` process that started this agent: the agent ends when it ends."""
HANDLED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")
"""torchrun's default signals to handle (``TORCHELASTIC_SIGNALS_TO_HANDLE``)."""


class _DropFailureLog(logging.Filter):
    """torchrun's lines about a failure ("failed (exitcode: 1) local_rank: 0 ...", "Sending process
    N closing signal SIGTERM" to the other ranks): the launcher says what happened, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(("failed (exitcode", "Sending process"))


class _DropStopLog(logging.Filter):
    """The agent's lines about a stop ("Received SIGTERM death signal, shutting down workers", "Got
    termination signal"): a stop asked for is no news; the launcher says it ended, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(("Received %s death signal", "Got termination signal"))


def _ignore(signum: int, frame: object) -> None:
    """A stop is under way: later signals change nothing (a handler, not SIG_IGN, which ranks would
    inherit)."""


def _stop_once(signum: int, frame: object) -> None:
    """torchrun's handler for its signals (`_terminate_process_handler`), except that the ranks
    always get SIGTERM and a stop is started once: the agent's shutdown, which a second signal would
    cut short, waits for the ranks' checkpoint."""
    from torch.distributed.elastic.multiprocessing.api import SignalException

    for name in {*HANDLED, *os.environ.get("TORCHELASTIC_SIGNALS_TO_HANDLE", "").split(",")}:
        with contextlib.suppress(AttributeError, ValueError, OSError, RuntimeError):
            signal.signal(getattr(signal, name.strip()), _ignore)
    raise SignalException(f"Process {os.getpid()} got signal {signal.Signals(signum).name}", sigval=signal.SIGTERM)


def follow_launcher() -> None:
    """End with the `selene train` process named in ``SELENE_TRAIN_LAUNCHER`` (`die_with`): a
    SIGKILL of the command leaves no agent, hence no rank, training on."""
    launcher = os.environ.get(LAUNCHER_ENV, "")
    if launcher.isdigit():
        die_with(int(launcher))


def _signal_name(exitcode: int) -> str | None:
    if exitcode >= 0:
        return None
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def main(argv: list[str]) -> int:
    follow_launcher()
    import torch.distributed.elastic.multiprocessing.api as mp_api
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    logging.getLogger("torch.distributed.elastic.multiprocessing.api").addFilter(_DropFailureLog())
    logging.getLogger("torch.distributed.elastic.agent.server.api").addFilter(_DropStopLog())
    if hasattr(mp_api, "_terminate_process_handler"):  # torch installs it when it starts the ranks
        mp_api._terminate_process_handler = _stop_once
    args = parse_args(argv)
    try:
        run(args)
    except mp_api.SignalException as e:  # stopped: the ranks have saved their checkpoint, or were killed
        return 128 + int(e.sigval)
    except ChildFailedError as e:
        errors = os.environ.get(ERRORS_ENV)
        if not errors:
            raise
        failures = {
            str(rank): {"local_rank": f.local_rank, "pid": f.pid, "exitcode": f.exitcode,
                        "signal": _signal_name(f.exitcode), "time": f.timestamp}
            for rank, f in e.failures.items()
        }  # fmt: skip
        path = os.path.join(errors, f"agent-{socket.gethostname()}-{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:
            json.dump({"host": socket.gethostname(), "failures": failures}, f)
        os.replace(path + ".tmp", path)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
