"""How a stage's parallel steps are run: a `Mapper` runs a function over argument tuples.

Stages call ``mapper(step_name, fn, [args, ...])`` and get the results in input order; they never
know whether that was a loop (`SerialMapper`), a thread or process pool (`LocalMapper`), Prefect tasks
(`selene.flows.stage.PrefectMapper`) or a Dask cluster. Functions and arguments are picklable:
paths and small configs, never large data. Every step is a pure function of its arguments that
skips work it finished before (per-item markers), so a retried or rerun item costs little and the
output bytes never depend on where or how often an item ran.

A mapper carries the stage's memory `Budget`: a stage sizes its tasks (buckets, partitions, groups)
from the budget of the mapper it was given, and passes the sizes to the tasks.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from selene.errors import SeleneError, UsageError
from selene.executor import events
from selene.procs import die_with

T = TypeVar("T")

RETRIES = 1
"""Attempts after the first for a failed item, in every executor (Prefect tasks use the same)."""
INLINE_SECONDS = float(os.environ.get("SELENE_INLINE_SECONDS", "0.3"))
"""A map runs its items in this process until it has spent this long; only then does it start (or
use) the worker pool. Tiny inputs never pay for starting processes; large ones lose a fraction of a
second of parallelism at most."""
GIB = 1 << 30
DEFAULT_MEMORY_GB = 4.0  # `ExecutorConfig.memory_gb`'s default: a mapper made without a config


@dataclass(frozen=True)
class Budget:
    """The memory a stage may use, all its workers together, and how many tasks it runs at once
    (`ExecutorConfig.memory_gb` and `workers`). It sizes a stage's tasks, never its output."""

    memory: int = int(DEFAULT_MEMORY_GB * GIB)
    """Bytes, all workers together: for a step in the stage's own process."""
    workers: int = 1

    @classmethod
    def gb(cls, memory_gb: float, workers: int) -> Budget:
        """The budget of `memory_gb` GiB over `workers` tasks (at least one)."""
        return cls(int(float(memory_gb) * GIB), max(1, int(workers)))

    @property
    def task_memory(self) -> int:
        """Bytes one task may use while `workers` tasks run at once: for sizing per-task buckets and
        buffers. Read it where the stage plans its steps (the main process) and pass sizes to the tasks."""
        return self.memory // max(1, self.workers)


class Mapper(Protocol):
    """Runs ``fn(*a)`` for each argument tuple `a` of step `name`; the results in input order."""

    @property
    def budget(self) -> Budget: ...

    def __call__(self, name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]: ...


@dataclass(frozen=True)
class SerialMapper:
    """A `Mapper` that runs every item here, one after the other: a stage's default."""

    budget: Budget = Budget()

    def __call__(self, name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
        return [fn(*a) for a in args]


serial_map = SerialMapper()


def with_retries(fn: Callable[..., T], args: tuple, retries: int = RETRIES) -> T:
    """``fn(*args)``, tried again on failure; errors meant for the user (bad input, bad config) would
    fail the same way twice, so they are raised at once."""
    for attempt in range(retries + 1):
        try:
            return fn(*args)
        except SeleneError:
            raise
        except Exception:
            if attempt == retries:
                raise
    raise AssertionError("unreachable")


def release_memory() -> None:
    """Hand the memory this process has freed back to the system: glibc keeps freed heap pages, and
    Arrow's allocator its freed blocks, for reuse, so a process that once ran a large item would hold
    that item's peak while it idles or runs small ones (a pool's workers, the command's process after
    items it ran itself). Costs well under a millisecond when there is little to give back."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _released(fn: Callable[..., T], args: tuple) -> T:
    """`with_retries` in a pool worker, then `release_memory`."""
    try:
        return with_retries(fn, args)
    finally:
        release_memory()


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """Worker processes for CPU-bound steps. forkserver: forking a process that runs Prefect's or
    pyarrow's threads can deadlock, and spawn would re-import everything per worker. The workers die
    with the command (`selene.procs.die_with`), even when it is killed with SIGKILL."""
    import multiprocessing

    return cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=die_with,
        initargs=(os.getpid(),),
    )


class LocalMapper:
    """A `Mapper` on this machine or a Dask cluster: ``kind`` processes | threads | dask.

    One item, or one worker, runs in this process. Otherwise items run here until the map has taken
    `INLINE_SECONDS`, and the rest go to a pool started on first need and kept for the stage's later
    maps (processes: `process_pool`; dask: a LocalCluster of `workers` single-threaded processes).
    Once that pool is up, every item of a later map goes to it, as with the scheduler at `address`
    every item goes to the cluster: there is no start-up left to save, and the command's own process
    stays small whatever the corpus size (an item run here leaves its memory to this process, which
    outlives the step: a step's first item may be its largest, and a map's last one may take minutes).
    Its budget is `memory_gb` GiB over the `workers`.
    """

    def __init__(
        self,
        kind: str = "processes",
        workers: int = 1,
        address: str | None = None,
        memory_gb: float = DEFAULT_MEMORY_GB,
    ) -> None:
        self.kind, self.workers, self.address = kind, workers, address
        self.budget = Budget.gb(memory_gb, workers)
        self._pool: cf.Executor | None = None
        self._dask: Any = None

    def __call__(self, name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
        total = len(args)
        events.progress(name, 0, total)
        results: list[T] = []
        parallel = self.workers > 1 or self.kind == "dask"
        # a running cluster, or this stage's pool started by an earlier map: nothing runs here
        elsewhere = (self.kind == "dask" and self.address is not None) or (
            parallel and (self._pool is not None or self._dask is not None)
        )
        start = time.perf_counter()
        while (
            len(results) < total
            and not elsewhere
            and (not parallel or total - len(results) == 1 or time.perf_counter() - start < INLINE_SECONDS)
        ):
            results.append(with_retries(fn, args[len(results)]))
            events.progress(name, len(results), total)
        if results and not elsewhere:
            release_memory()
        rest = args[len(results) :]
        if rest:
            results += self._parallel(name, fn, rest, len(results), total)
        return results

    def _parallel(
        self, name: str, fn: Callable[..., T], args: Sequence[tuple], done: int, total: int
    ) -> list[T]:
        if self.kind == "dask":
            client = self._dask_client()
            futures = [client.submit(_released, fn, a, pure=False) for a in args]
            from distributed import as_completed as dask_completed

            for _ in dask_completed(futures):
                done += 1
                events.progress(name, done, total)
            return [f.result() for f in futures]
        pool = self._executor()
        futs = [pool.submit(_released, fn, a) for a in args]
        for _ in cf.as_completed(futs):
            done += 1
            events.progress(name, done, total)
        return [f.result() for f in futs]

    def _executor(self) -> cf.Executor:
        if self._pool is None:
            threads = self.kind == "threads"
            self._pool = (
                cf.ThreadPoolExecutor(max_workers=self.workers) if threads else process_pool(self.workers)
            )
        return self._pool

    def _dask_client(self) -> Any:
        if self._dask is None:
            from distributed import Client, LocalCluster

            if self.address:
                self._dask = Client(self.address)
            else:
                cluster = LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._dask = Client(cluster)
        return self._dask

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._dask is not None:
            cluster = self._dask.cluster if not self.address else None
            self._dask.close()
            if cluster is not None:
                cluster.close()
            self._dask = None


DASK_CONNECT_SECONDS = float(os.environ.get("SELENE_DASK_CONNECT_SECONDS", "10"))


def check_scheduler(address: str, timeout: float = DASK_CONNECT_SECONDS) -> int:
    """The number of workers of the Dask scheduler at `address`; a `UsageError` naming the address
    when none answers within `timeout` seconds. Run before a stage's work: a small stage runs its
    few tasks inline and would never notice a wrong address, a large one would fail halfway."""
    from distributed import Client

    try:
        with Client(address, timeout=f"{timeout}s") as client:
            return len(client.scheduler_info(n_workers=-1).get("workers", {}))
    except (OSError, TimeoutError, ValueError) as e:
        raise UsageError(
            f"no Dask scheduler answers at {address} ({type(e).__name__}: {e}); start one (`dask scheduler`, "
            "then `dask worker ADDRESS`) or run without --dask-address"
        ) from None


def local_kind(kind: str, paths: Sequence[str]) -> str:
    """memory:// paths live in this process only: threads then, whatever was asked (Dask cannot)."""
    from selene.io.fs import process_local  # fsspec: only when a stage runs

    if any(process_local(p) for p in paths):
        if kind == "dask":
            raise UsageError(
                "memory:// paths cannot be shared with Dask workers; use a local path or s3://, gs://"
            )
        return "threads"
    return kind


def chunks(n_items: int, workers: int, per_worker: int = 2) -> list[range]:
    """Contiguous groups of item indices: one for one worker, else about `per_worker` per worker
    (so a slow group does not hold the others back); never an empty one.

    A group is one task where tasks cost bookkeeping (Prefect task runs): a one-document input is
    one task per step, a thousand files on four workers are eight tasks, not a thousand.
    """
    groups = max(1, min(n_items, workers * per_worker if workers > 1 else 1))
    bounds = [round(i * n_items / groups) for i in range(groups + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds) if b > a]
