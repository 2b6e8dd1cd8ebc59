"""How flows run the stages' parallel maps: Prefect tasks on a task runner, compute in processes.

A stage exposes its parallel steps through a `Mapper` (see `selene.ingest.stage`). Here each item
becomes a Prefect task run, so the dashboard shows every file and shard with its state. Tasks run on
a thread pool; with ``executor="processes"`` each task hands its work to a process pool, so
CPU-bound Python runs on every core while Prefect's bookkeeping stays in the flow's process.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import logging
import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from selene.errors import UsageError
from selene.io import fs

T = TypeVar("T")
R = TypeVar("R")
ProgressHook = Callable[[str, int, int], None]
_progress: list[ProgressHook] = []


def set_progress_hook(hook: ProgressHook | None) -> None:
    """Called as (step name, items done, items total) whenever an item of a map finishes."""
    _progress.clear()
    if hook is not None:
        _progress.append(hook)


def report(name: str, done: int, total: int) -> None:
    for hook in _progress:
        hook(name, done, total)


def task_runner(workers: int, executor: str = "threads", dask_address: str | None = None) -> Any:
    """The Prefect task runner of a stage flow.

    threads/processes: a thread per running task (with processes, `PrefectMapper` sends the compute
    to its process pool). dask: prefect-dask's DaskTaskRunner on the scheduler at `dask_address`, or
    on a LocalCluster of `workers` single-threaded processes; tasks then run on the Dask workers.
    """
    if executor == "dask":
        from prefect_dask import DaskTaskRunner

        if dask_address:
            return DaskTaskRunner(address=dask_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True})
    return ThreadPoolTaskRunner(max_workers=max(1, workers))


def runner_for(cfg: Any) -> Any:
    """`task_runner` from a stage config (workers, executor, dask_address)."""
    return task_runner(cfg.workers, cfg.executor, getattr(cfg, "dask_address", None))


class PrefectMapper:
    """A `Mapper` that runs each item as a Prefect task; use inside a flow."""

    def __init__(self, executor: str, workers: int) -> None:
        # threads and dask: the task runner runs the work itself; processes: our pool does
        self.pool: cf.Executor | None = None
        if executor == "processes" and workers > 1:
            # forkserver: forking a process that runs Prefect's threads can deadlock; spawn would
            # re-import everything per worker.
            ctx = multiprocessing.get_context("forkserver")
            self.pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)

    def __call__(self, name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
        pool = self.pool

        def run(*a: Any) -> T:
            return fn(*a) if pool is None else pool.submit(fn, *a).result()

        t = task(run, name=name, cache_policy=NO_CACHE, retries=1, retry_delay_seconds=1)  # type: ignore[call-overload]
        futures = [t.with_options(task_run_name=f"{name}-{i:05d}").submit(*a) for i, a in enumerate(args)]
        report(name, 0, len(futures))
        for done, _ in enumerate(as_completed(futures), 1):
            report(name, done, len(futures))
        return [f.result() for f in futures]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def mapper_for(executor: str, workers: int, paths: Sequence[str]) -> PrefectMapper:
    """The mapper of a stage run; memory:// paths force threads (worker processes cannot see them)."""
    if any(fs.process_local(p) for p in paths):
        if executor == "dask":
            raise UsageError("memory:// paths cannot be shared with Dask workers; use a local path or s3://, gs://")
        executor = "threads"
    return PrefectMapper(executor, workers)


def run_with_mapper(run: Callable[..., R], cfg: Any, paths: Sequence[str], *args: Any, force: bool) -> R:
    """``run(*args, cfg, mapper=..., force=force)`` with the mapper of `cfg` (see `mapper_for`), closed after."""
    mapper = mapper_for(cfg.executor, cfg.workers, paths)
    try:
        return run(*args, cfg, mapper=mapper, force=force)
    finally:
        mapper.close()


class _NoTraceback(logging.Formatter):
    """Console formatter that leaves tracebacks to the Prefect API/dashboard (and --debug)."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        r = copy.copy(record)
        r.exc_info, r.exc_text, r.stack_info = None, None, None
        return self.inner.format(r)


def quiet_console_tracebacks() -> None:
    """Keep Prefect's console logs to one line per event; the dashboard keeps the full traceback."""
    for name in ("", "prefect", "prefect.flow_runs", "prefect.task_runs"):
        for h in logging.getLogger(name).handlers:
            if type(h).__name__ == "PrefectConsoleHandler" and not isinstance(h.formatter, _NoTraceback):
                h.setFormatter(_NoTraceback(h.formatter))
