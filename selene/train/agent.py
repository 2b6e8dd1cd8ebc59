"""torchrun for `selene train`: the same agent, but a failed rank is reported once, by the launcher.

``python -m selene.train.agent <torchrun arguments>`` runs `torch.distributed.run` in this process.
When a rank fails, torchrun's own entry point logs the failure, then prints a `ChildFailedError`
with a traceback of the agent and a report per rank; the rank has already printed its own traceback.
Here the ranks write their error to a file instead (`selene.train.worker`, in the directory named by
``SELENE_RANK_ERRORS``), the agent adds how each failed rank ended (exit code or signal) as
``agent-<node>.json`` next to them and exits with status 1 without printing anything, and
`selene.train.launch` turns all that into one `SeleneError` naming the rank.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys

ERRORS_ENV = "SELENE_RANK_ERRORS"


class _DropFailureLog(logging.Filter):
    """torchrun's lines about a failure ("failed (exitcode: 1) local_rank: 0 ...", "Sending process
    N closing signal SIGTERM" to the other ranks): the launcher says what happened, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(("failed (exitcode", "Sending process"))


def _signal_name(exitcode: int) -> str | None:
    if exitcode >= 0:
        return None
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def main(argv: list[str]) -> int:
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    logging.getLogger("torch.distributed.elastic.multiprocessing.api").addFilter(_DropFailureLog())
    args = parse_args(argv)
    try:
        run(args)
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
