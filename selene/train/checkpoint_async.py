"""Checkpoints written in the background (``train.checkpoint.async: true``), as torchtitan and
OLMo-core write them: the step waits only while the state is copied off the device, then trains on
while another thread writes the copy.

A save here is `selene.train.checkpoint.save` cut in two at the device copy:

- in the training thread (the stall): wait for the save before (one save in flight at a time, so
  at most one staged copy and no two saves racing for the directory), empty the step's directory,
  take the state dicts and the RNG state, copy the tensors to host memory
  (`torch.distributed.checkpoint.async_save` with a `DefaultStager`: pinned buffers on a GPU,
  allocated on the first save and reused by every later one, so a save costs one device-to-host
  copy and no allocation);
- in the background: DCP writes the copy (`async_save`'s writer thread), then the same
  `finish_save` as a synchronous save: RNG files, every file's sha256, meta.json, pruning to `keep`.

meta.json stays the one completion marker and is written only after every rank's files are on disk
and hashed: a process killed during the background write leaves a step directory without it, which
no load takes for a checkpoint, and pruning happens only after it, so the checkpoint before is kept.
The next run names and removes such directories (`clear_unfinished`).

Thread, not process (`AsyncCheckpointerType.PROCESS`): the writer's work is file I/O and sha256,
which release the GIL, so a thread does not hold the step back; a process would start its own
interpreter and process group per rank, need the staged copy in shared memory, and could outlive a
killed trainer while still writing into the step's directory. Its collectives (DCP's plan exchange,
the digests' gather, barriers) run on a gloo group of their own, created once: a thread sharing the
training's group would interleave its collectives with the step's (and NCCL offers no CPU tensors).
"""

from __future__ import annotations

import shutil
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
from torch.distributed.checkpoint.state_dict_saver import AsyncSaveResponse

from selene.train import checkpoint


class AsyncCheckpointer:
    """Background checkpoints of one training run; every rank makes one and calls it in step.

    `save` returns after the device copy; `wait` blocks until the save in flight is complete (or
    raises its failure as an `OutputError`); `close` waits and frees the staging buffers. The run
    waits before each save, before it reports success and before it exits on SIGTERM."""

    def __init__(self, device: torch.device) -> None:
        # gloo (CPU) even when training on NCCL: async_save requires a CPU backend, and a group of
        # its own keeps the writer's collectives out of the training's order
        self.group = dist.new_group(backend="gloo") if dist.is_initialized() else None
        gpu = device.type == "cuda"
        # synchronous staging: the step's stall is the copy itself (pinned, non-blocking, then one
        # synchronize); shared memory only serves a writer process
        self.stager = DefaultStager(StagingOptions(use_pinned_memory=gpu, use_shared_memory=False,
                                                   use_async_staging=False, use_non_blocking_copy=gpu))  # fmt: skip
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="selene-checkpoint")
        self.pending: Future[None] | None = None
        self.pending_path = ""
        self.stall_s = 0.0  # the training thread's time in the last `save`, waiting included
        self.waited_s = 0.0  # of which waiting for the save before it

    def save(
        self, root: str, step: int, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer],
        meta: dict[str, Any], keep: int,
    ) -> str:
        """Start saving step `step` (the files of `checkpoint.save`); returns once the state is copied."""
        t0 = time.perf_counter()
        self.wait()
        self.waited_s = time.perf_counter() - t0
        path = checkpoint.begin_save(root, step)
        rng = checkpoint.rng_state()
        with checkpoint.write_errors(path):
            started = dcp.async_save(checkpoint.train_state(parts, optims), checkpoint_id=path,
                                     process_group=self.group, async_stager=self.stager)  # fmt: skip
        upload = started.upload_completion if isinstance(started, AsyncSaveResponse) else started
        self.pending = self.pool.submit(self._finish, upload, root, path, step, meta, keep, rng)
        self.pending_path = path
        self.stall_s = time.perf_counter() - t0
        if not dist.is_initialized() or dist.get_rank() == 0:
            waited = f" ({self.waited_s:.2f} s of it waiting for the save before)" if self.waited_s >= 0.01 else ""
            print(f"checkpoint {path}: training stalled {self.stall_s:.2f} s{waited}; writing in the background", flush=True)
        return path

    def _finish(
        self, upload: Future[Any], root: str, path: str, step: int, meta: dict[str, Any], keep: int,
        rng: dict[str, torch.Tensor],
    ) -> None:
        upload.result()
        checkpoint.finish_save(root, path, step, meta, keep, rng, self.group)

    def wait(self) -> None:
        """Block until the save in flight, if any, is complete; its failure as one `OutputError`."""
        if self.pending is None:
            return
        pending, path, self.pending = self.pending, self.pending_path, None
        with checkpoint.write_errors(path):
            pending.result()

    def close(self) -> None:
        """Wait for the save in flight, then free the writer thread and the staging buffers."""
        try:
            self.wait()
        finally:
            self.pool.shutdown(wait=True)
            self.stager.close()


def clear_unfinished(root: str) -> list[str]:
    """Remove the step directories under `root` that an interrupted save left (no meta.json);
    returns them. Rank 0 calls it before the run's first save, when no save of this run is in flight."""
    gone = checkpoint.unfinished_steps(root)
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone
