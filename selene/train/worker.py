"""Entry point of each training process: ``torchrun ... -m selene.train.worker CONFIG.json OUT``
(`selene train` starts it through `selene.procs.python_module`, which `-m` would be without the
working directory on sys.path).

`selene train` validates the configuration and writes it as JSON before launching, so every process
reads exactly the same resolved settings.

Under `selene train` (``SELENE_RANK_ERRORS`` set by the launcher) a rank that fails prints nothing:
it writes its error — a `SeleneError`'s message, or any other exception with its traceback — to
``rank-NNNNN.json`` in that directory and exits, and the launcher reports the failure once
(`selene.train.launch.rank_failure`). Run on its own, the worker raises as any program does.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback

import torch.distributed as dist

from selene.errors import InputError, SeleneError
from selene.procs import die_with
from selene.train.agent import ERRORS_ENV
from selene.train.config import TrainConfig


def read_config(config_path: str) -> TrainConfig:
    try:
        with open(config_path) as f:
            return TrainConfig.model_validate(json.load(f))
    except (OSError, ValueError) as e:  # ValueError: JSON and pydantic validation errors
        raise InputError(f"{config_path}: cannot read the resolved training config ({e})") from None


def report(errors_dir: str, e: BaseException) -> int:
    """Write this rank's error for the launcher; returns the exit status to end with."""
    rank = int(os.environ.get("RANK", "0"))
    selene = isinstance(e, SeleneError)
    code = e.exit_code if isinstance(e, SeleneError) else 1
    record = {
        "rank": rank, "local_rank": int(os.environ.get("LOCAL_RANK", "0")), "host": socket.gethostname(),
        "pid": os.getpid(), "time": time.time(), "type": type(e).__name__, "selene": selene,
        "exit_code": code, "message": str(e),
        "traceback": None if selene else "".join(traceback.format_exception(e)),
    }  # fmt: skip
    path = os.path.join(errors_dir, f"rank-{rank:05d}.json")
    try:
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.replace(path + ".tmp", path)
    except OSError:  # the launcher cannot hear it: say it here
        print(f"rank {rank}: {record['traceback'] or record['message']}", file=sys.stderr)
    return code


def main(argv: list[str]) -> int:
    config_path, out = argv
    errors_dir = os.environ.get(ERRORS_ENV)
    if errors_dir:  # under `selene train`: a rank dies with the torchrun agent that started it
        die_with(os.getppid())
    try:
        from selene.train.loop import run  # lazy: after die_with, and a failed import is this rank's report

        run(read_config(config_path), out)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # torch's CheckpointException derives from BaseException
        if not errors_dir:
            raise
        return report(errors_dir, e)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
