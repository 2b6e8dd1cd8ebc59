"""Named fail points, for crash-safety tests.

``SELENE_FAILPOINT=<name>`` makes the run SIGKILL its whole process group when it reaches the point
of that name: the same as a power cut at that instant, but at a chosen, reproducible place rather
than wherever a polling test happens to notice a file. Unset (always, outside tests) a fail point
costs one environment lookup.

Points: ``quality:scored`` (every shard scored, nothing written), ``quality:shards-written``,
``dedup:shards-written``, ``decontaminate:shards-written``, ``tokenize:parts-written``,
``tokenize:merged`` (each after the stage's outputs or parts exist and before its manifest), and
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
