"""Gloo all-reduce between local processes, for the CPU's entry in a scaling study.

    python -m torch.distributed.run --standalone --nproc-per-node 2 -m selene.plan.probe OUT.json

Rank 0 writes {"gbps": bus bandwidth of a 16 MiB all-reduce, "latency_s": time of a 1 KiB one}.
"""

from __future__ import annotations

import json
import sys
import time

import torch
import torch.distributed as dist


def main(out: str, nbytes: int = 16 * 2**20) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    n = dist.get_world_size()
    big, small = torch.ones(nbytes // 4), torch.ones(256)
    dist.all_reduce(big)
    timings = []
    for x, repeat in ((big, 5), (small, 50)):
        dist.barrier()
        t = time.perf_counter()
        for _ in range(repeat):
            dist.all_reduce(x)
        timings.append((time.perf_counter() - t) / repeat)
    if dist.get_rank() == 0:
        bus = 2 * (n - 1) / n * nbytes / max(timings[0] - timings[1], 1e-9) / 1e9
        with open(out, "w") as f:
            json.dump({"gbps": bus, "latency_s": timings[1], "world_size": n}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
