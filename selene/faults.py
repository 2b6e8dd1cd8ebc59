"""Named fail points, for crash-safety tests.

``SELENE_FAILPOINT=<name>`` makes the run SIGKILL its whole process group when it reaches the point
of that name: the same as a power cut at that instant, but at a chosen, reproducible place rather
than wherever a polling test happens to notice a file. Unset (always, outside tests) a fail point
costs one environment lookup.

``SELENE_KILL_ONCE=<name>:<marker file>`` (several joined by ``;``) SIGKILLs only the process that
first reaches point `name` (the marker file, created atomically, says it happened; later arrivals
pass): a Dask worker
lost in the middle of a task, as ``kill -9`` of that worker would. Points: ``ingest:file`` (a file
being read), ``dedup:band`` (a band task verifying its candidates), ``spans:find`` (a hash
partition's duplicates being found) and ``substrings:match`` (a fingerprint bucket's cross-part
repeats being verified).

Points of ``SELENE_FAILPOINT``: ``quality:scored`` (every shard scored, nothing written), ``quality:shards-written``,
``dedup:shards-written``, ``spans:shards-written``, ``substrings:shards-written``, ``decontaminate:shards-written``,
``tokenize:parts-written``, ``tokenize:merged`` (each after the stage's outputs or parts exist and before its manifest), and
``blend:bucket-published`` (after each shuffle bucket's parts are renamed into the output).
"""

from __future__ import annotations

import os
import signal

ENV = "SELENE_FAILPOINT"


def failpoint(name: str) -> None:
    """SIGKILL this process group if ``SELENE_FAILPOINT`` names this point."""
    if os.environ.get(ENV) == name:
        os.killpg(os.getpgrp(), signal.SIGKILL)


KILL_ONCE_ENV = "SELENE_KILL_ONCE"


def kill_once(name: str) -> None:
    """SIGKILL this process alone, the first time any process reaches point `name` under
    ``SELENE_KILL_ONCE=<name>:<marker file>``."""
    specs = [s for s in os.environ.get(KILL_ONCE_ENV, "").split(";") if s.startswith(name + ":")]
    if not specs:
        return
    marker = specs[0][len(name) + 1 :]
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)
