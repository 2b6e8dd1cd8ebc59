"""Every registered stage as a Prefect flow: one factory, no per-stage code.

A stage flow runs the same `selene.job.execute` as a command without Prefect; only the mapper
differs. `PrefectMapper` groups a step's items into a few task runs (`selene.executor.mappers.chunks`), so a
one-document input is one task per step and a thousand files on four workers are eight, each with
Prefect's state, retry and timing; CPU-bound work goes to a process pool (forkserver) while the
tasks' threads do Prefect's bookkeeping. The stage's view is published as artifacts when it ends.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import copy
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any, TypeVar

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ThreadPoolTaskRunner

from selene import registry
from selene.errors import SeleneError, Stopped
from selene.executor.events import progress, stop_requested
from selene.executor.mappers import (
    DEFAULT_MEMORY_GB,
    INLINE_SECONDS,
    RETRIES,
    Budget,
    chunks,
    local_kind,
    process_pool,
    release_memory,
)
from selene.flows import command, live
from selene.job import Job, execute
from selene.view import Markdown, Table, View, value

T = TypeVar("T")


class PrefectMapper:
    """A `Mapper` whose items run as Prefect task runs, grouped; use inside a flow.

    As `LocalMapper`, a step's items run in the task threads until the step has taken
    `INLINE_SECONDS`; only then, with ``processes``, is the process pool started and used.

    A stop request (`selene.executor.events.request_stop`: a Cancel in the dashboard) ends the step
    at its items' boundaries: each task group finishes the item at hand and takes no more (it ends
    Completed: nothing failed), a step not started yet is not started, and the step raises `Stopped`
    in one line. What the finished items wrote stays, and the stage's completion markers make the
    same command resume from them. Dask groups, which run elsewhere, finish their items. Its budget is
    `memory_gb` GiB over the `workers`.
    """

    def __init__(
        self, kind: str, workers: int, stage: str = "", memory_gb: float = DEFAULT_MEMORY_GB
    ) -> None:
        self.kind, self.workers, self.stage = kind, workers, stage
        self.budget = Budget.gb(memory_gb, workers)
        self._pool: cf.Executor | None = None
        self._lock = threading.Lock()

    def _pool_for(self, started: float) -> cf.Executor | None:
        """The process pool for an item of a step begun at `started`, or None to run it here. Once
        the pool is up every item goes to it, as in `LocalMapper`: an item run here leaves its memory
        to the command's process for the rest of the run (dedup's cluster step held 1.4 GB so)."""
        if self.kind != "processes" or self.workers < 2:
            return None
        with self._lock:
            if self._pool is None and time.perf_counter() - started < INLINE_SECONDS:
                return None
            if self._pool is None:
                self._pool = process_pool(self.workers)
            return self._pool

    def __call__(self, name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
        total = len(args)
        done = [0]
        lock = threading.Lock()
        started = time.perf_counter()
        self._stop_if_requested(name, 0, total)

        def run_group(first: int, end: int) -> list[T]:
            out = []
            here = False
            for a in args[first:end]:
                if stop_requested() is not None:
                    break
                pool = self._pool_for(started)
                here = here or pool is None
                out.append(fn(*a) if pool is None else pool.submit(fn, *a).result())
                with lock:  # item by item where the task runs in this process (threads, processes)
                    done[0] += 1
                    progress(name, done[0], total)
            if here:
                release_memory()
            return out

        groups = chunks(total, self.workers)
        if self.kind == "dask":  # the task is pickled to a Dask worker: the items go with it, no locks
            t = task(_run_items, name=name, **TASK_OPTIONS)  # type: ignore[call-overload]
            calls: list[tuple[Any, ...]] = [(fn, list(args[g.start : g.stop])) for g in groups]
        else:
            t = task(run_group, name=name, **TASK_OPTIONS)  # type: ignore[call-overload]
            calls = [(g.start, g.stop) for g in groups]
        futures = [
            t.with_options(task_run_name=f"{name}-{k:03d}" if len(groups) > 1 else name).submit(*c)
            for k, c in enumerate(calls)
        ]
        size = {id(f): len(g) for f, g in zip(futures, groups, strict=True)}
        progress(name, 0, total)
        finished = 0
        for f in as_completed(futures):
            if stop_requested() is not None:  # a group that stopped early did not do its whole size
                continue
            finished += size[id(f)]
            with lock:  # group by group where it ran elsewhere (Dask)
                if finished > done[0]:
                    done[0] = finished
                    progress(name, done[0], total)
        results = [r for f in futures for r in f.result()]
        self._stop_if_requested(name, len(results), total)
        return results

    def _stop_if_requested(self, step: str, done: int, total: int) -> None:
        reason = stop_requested()
        if reason is not None:
            what = f"the {self.stage} stage" if self.stage else "the stage"
            raise Stopped(
                f"cancelled ({reason}): {what} stopped in step {step} with {done} of {total} items done; "
                "the same command resumes from them"
            )

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)


def _retry_unless_user_error(task: Any, task_run: Any, state: Any) -> bool:
    """Retry as `selene.executor.mappers.with_retries` does: not the errors meant for the user (bad input
    or config fails the same way twice)."""
    try:
        state.result()
    except SeleneError:
        return False
    except Exception:
        return True
    return True


TASK_OPTIONS: dict[str, Any] = {
    "cache_policy": NO_CACHE,
    "retries": RETRIES,
    "retry_delay_seconds": 1,
    "retry_condition_fn": _retry_unless_user_error,
}


def _run_items(fn: Callable[..., T], items: list[tuple]) -> list[T]:
    return [fn(*a) for a in items]


def task_runner(kind: str, workers: int, address: str | None) -> Any:
    """threads/processes: a thread per running task group; dask: prefect-dask's runner on the
    scheduler at `address` or a LocalCluster of `workers` single-threaded processes."""
    if kind == "dask":
        from prefect_dask import DaskTaskRunner

        if address:
            return DaskTaskRunner(address=address)
        return DaskTaskRunner(
            cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True}
        )
    return ThreadPoolTaskRunner(max_workers=max(1, workers))


def publish(view: View) -> None:
    """The dashboard's rendering of a view (`selene.view`): its tables and markdown with a key."""
    for a in view.to("prefect"):
        if isinstance(a, Table) and a.key:
            names = [c.name for c in a.columns]
            rows = [dict(zip(names, (value(v) for v in r), strict=True)) for r in a.rows]
            create_table_artifact(table=rows, key=a.key, description=a.description or None)
        elif isinstance(a, Markdown) and a.key:
            create_markdown_artifact(markdown=a.markdown, key=a.key, description=a.description or None)


@cache
def stage_flow(name: str) -> Any:
    """The Prefect flow of registered stage `name` (made once per process)."""
    stage = registry.get(name)

    def body(inp: str | None, out: str, cfg: Any, executor: Any = None, force: bool = False) -> Any:
        job = Job(name, inp, out, cfg, executor)
        ex = job.executor_config()
        mapper = PrefectMapper(local_kind(ex.kind, job.paths()), ex.workers, name, ex.memory_gb)
        try:
            with live.watched():
                result = execute(job, mapper, force)
                late = stop_requested()  # (the outermost watch clears it as it ends)
        except Stopped as e:  # Ctrl-C, SIGTERM or Cancel, and the stage stopped cleanly
            return live.cancelled(e)
        finally:
            mapper.close()
        if stage.view:
            publish(stage.view.load()(result))
        # A Cancel after the last item: Prefect refuses Completed once the run is Cancelling (it would
        # stay so), and the run ends Cancelled saying the output is complete.
        if late is not None:
            return live.cancelled(
                Stopped(f"cancelled ({late}) as the {name} stage finished: its output is complete")
            )
        return result

    body.__name__ = body.__qualname__ = f"{name.replace('-', '_')}_flow"
    body.__doc__ = stage.help
    return flow(name=name, log_prints=True, validate_parameters=False, flow_run_name=f"{name} → {{out}}")(
        body
    )


def run_flow(job: Job, force: bool) -> Any:
    """`job` as its stage's flow (a sub-flow when called inside another flow)."""
    ex = job.executor_config()
    fl = stage_flow(job.stage).with_options(
        task_runner=task_runner(local_kind(ex.kind, job.paths()), ex.workers, ex.address)
    )
    with engine_settings(), live.reraise_stopped():
        return command.call(
            fl, {"inp": job.inp, "out": job.out, "cfg": job.cfg, "executor": job.executor, "force": force}
        )


@contextlib.contextmanager
def engine_settings() -> Iterator[None]:
    """How selene's flows run: console logs without tracebacks (the dashboard keeps them; ``--debug``
    shows them), and no flow-run heartbeats unless the user set their frequency: they only serve
    zombie detection (an automation the user would have made) and their thread costs about a second
    at every flow's end."""
    if not os.environ.get("SELENE_DEBUG"):
        quiet_console_tracebacks()
    if os.environ.get("PREFECT_FLOWS_HEARTBEAT_FREQUENCY"):
        yield
        return
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    with temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


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
    """Keep Prefect's console logs to one line per event; the dashboard keeps the full traceback.
    Applied now and again whenever Prefect sets its logging up (when a flow starts)."""
    import prefect.logging.configuration as lc

    def apply() -> None:
        for name in ("", "prefect", "prefect.flow_runs", "prefect.task_runs"):
            for h in logging.getLogger(name).handlers:
                if type(h).__name__ == "PrefectConsoleHandler" and not isinstance(h.formatter, _NoTraceback):
                    h.setFormatter(_NoTraceback(h.formatter))

    if not getattr(lc.setup_logging, "_selene_quiet", False):
        original = lc.setup_logging

        def setup(*a: Any, **k: Any) -> Any:
            out = original(*a, **k)
            apply()
            return out

        setup._selene_quiet = True  # type: ignore[attr-defined]
        lc.setup_logging = setup
    apply()
