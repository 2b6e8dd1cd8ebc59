"""Entry point of each training process: ``torchrun ... -m selene.train.worker CONFIG.json OUT``.

`selene train` validates the configuration and writes it as JSON before launching, so every process
reads exactly the same resolved settings.
"""

from __future__ import annotations

import json
import sys

import torch.distributed as dist

from selene.config import TrainConfig
from selene.train.loop import run


def main(argv: list[str]) -> int:
    config_path, out = argv
    with open(config_path) as f:
        cfg = TrainConfig.model_validate(json.load(f))
    try:
        run(cfg, out)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
