"""How a stage's parallel steps are run: a `Mapper` runs a function over argument tuples.

Stages call ``mapper(step_name, fn, [args, ...])`` and get the results in input order; they never
know whether that was a loop, a thread or process pool (`LocalMapper`), Prefect tasks
(`selene.flows.stage.PrefectMapper`) or a Dask cluster. Functions and arguments are picklable:
paths and small configs, never large data. Every step is a pure function of its arguments that
skips work it finished before (per-item markers), so a retried or rerun item costs little and the
output bytes never depend on where or how often an item ran.

This module imports nothing heavy: every command loads it.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import itertools
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from selene.errors import SeleneError, UsageError
from selene.procs import pid_alive

T = TypeVar("T")
Mapper = Callable[[str, Callable[..., T], Sequence[tuple]], list[T]]
ProgressHook = Callable[[str, int, int], None]
_progress: list[ProgressHook] = []

RETRIES = 1
"""Attempts after the first for a failed item, in every executor (Prefect tasks use the same)."""
INLINE_SECONDS = float(os.environ.get("SELENE_INLINE_SECONDS", "0.3"))
GIB = 1 << 30
_budget: tuple[float, int] = (4.0, 1)  # (memory_gb, workers) of the running stage: `set_budget`


def set_budget(memory_gb: float, workers: int) -> None:
    """The memory budget of the stage about to run (`ExecutorConfig.memory_gb`, all workers together)."""
    global _budget
    _budget = (float(memory_gb), max(1, int(workers)))


def memory_budget() -> int:
    """Bytes the running stage may use, all workers together: for a step in the stage's own process."""
    return int(_budget[0] * GIB)


def workers() -> int:
    """Tasks the running stage runs at once (its `executor.workers`)."""
    return _budget[1]


def task_memory() -> int:
    """Bytes one task may use while `workers` tasks run at once: for sizing per-task buckets and buffers.
    Read it where the stage plans its steps (the main process) and pass sizes to the tasks."""
    return memory_budget() // _budget[1]


"""A map runs its items in this process until it has spent this long; only then does it start (or
use) the worker pool. Tiny inputs never pay for starting processes; large ones lose a fraction of a
second of parallelism at most."""


def serial_map(name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
    return [fn(*a) for a in args]


def set_progress_hook(hook: ProgressHook | None) -> None:
    """Called as (step name, items done, items total) whenever an item of a map finishes."""
    _progress.clear()
    if hook is not None:
        _progress.append(hook)


def report(name: str, done: int, total: int) -> None:
    for hook in _progress:
        hook(name, done, total)


# A running stage's live events, and requests to stop it, between the stage (which knows what it
# is doing) and the runtime (which knows where it is watched: a Prefect flow, a terminal). Neither
# side names the other: the stage calls `live` and registers with `on_stop_request`; the runtime
# sets the hook and calls `request_stop` (a Cancel in the dashboard).
LiveHook = Callable[[str, dict[str, Any]], None]
_live: list[LiveHook] = []
_stop_callbacks: list[Callable[[str], None]] = []
_stop_reason: list[str] = []


def set_live_hook(hook: LiveHook | None) -> None:
    """Called as (event kind, payload) for each of a stage's live events (`live`)."""
    _live.clear()
    if hook is not None:
        _live.append(hook)


def watched() -> bool:
    """Whether anything listens to live events (a stage can skip gathering them otherwise)."""
    return bool(_live)


def live(kind: str, **payload: Any) -> None:
    """A live event of the running stage (e.g. a training step's metrics). Never raises: a watcher's
    failure must not stop the work it watches."""
    for hook in _live:
        with contextlib.suppress(Exception):  # the hook reports its own failures
            hook(kind, payload)


def request_stop(reason: str) -> None:
    """Ask the running stage to stop cleanly (training: finish the step, checkpoint, exit)."""
    if not _stop_reason:
        _stop_reason.append(reason)
    for callback in list(_stop_callbacks):
        callback(reason)


def stop_requested() -> str | None:
    return _stop_reason[0] if _stop_reason else None


def clear_stop_request() -> None:
    _stop_reason.clear()


@contextlib.contextmanager
def on_stop_request(callback: Callable[[str], None]) -> Iterator[None]:
    """`callback(reason)` on a stop request while the block runs (at once if one came before)."""
    _stop_callbacks.append(callback)
    try:
        if _stop_reason:
            callback(_stop_reason[0])
        yield
    finally:
        _stop_callbacks.remove(callback)


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
    with the command (`die_with`), even when it is killed with SIGKILL."""
    import multiprocessing

    return cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=die_with,
        initargs=(os.getpid(),),
    )


_RUN_MODULE = """\
import sys
if sys.path[:1] == [""] and not getattr(sys.flags, "safe_path", False):
    del sys.path[0]
import runpy
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def python_module(module: str, *args: str, unbuffered: bool = False) -> list[str]:
    """The command that runs `module` as ``python -m module args`` would, with this interpreter, but
    imports the installed packages whatever the directory it is started in.

    ``python -m`` (and ``-c``) put the working directory first on sys.path, so a folder there named
    like a package shadows it: under an editable install, whose finder comes after the path, a
    ``selene/`` folder where the command starts (the directory holding the clone) fails every rank
    with "cannot import name '__version__' from 'selene' (unknown location)". ``-P`` drops that
    entry but needs Python 3.11; a script path would put its own directory first instead; changing
    the processes' directory would break the relative paths of a config. So the command is
    ``python -c`` with a few lines that drop the working directory (the ``''`` that ``-c`` puts
    first, before anything else is imported) and run the module with runpy. PYTHONPATH is kept:
    what a user put on the path on purpose still counts. The module's name stays on the command
    line, where ``ps`` and the tests look for it. (Pool and Dask workers need none of this:
    multiprocessing hands them this process's sys.path.)"""
    return [sys.executable, *(["-u"] if unbuffered else []), "-c", _RUN_MODULE, module, *args]


PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.5


def die_with(driver: int) -> None:
    """Worker initializer: end this process when the command's process `driver` ends, however it ends.

    A pool's workers are children of the forkserver, which exits when the command does (it reads EOF
    on its pipe from the command). On Linux the kernel then SIGKILLs each worker (PR_SET_PDEATHSIG,
    which fires when the thread that forked the worker ends: the forkserver has only one); a
    watchdog thread covers every platform and the time before the initializer ran: it polls the
    driver's pid and exits when the driver is gone or this process was re-parented away from it.
    (The parent-death signal is not inherited across fork: a step that starts processes of its own
    gives them `die_with` too, or a pool from `process_pool`.)
    """
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    parent = os.getppid()

    def gone() -> bool:
        return os.getppid() != parent or not pid_alive(driver)

    if gone():  # the driver died before we could ask to follow it
        os._exit(1)

    def watch() -> None:
        while not gone():
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="selene-die-with-driver", daemon=True).start()


def watch_group(poll: float = 0.2) -> Callable[[], None]:
    """When this process leads its process group (a command started from a shell), fork a small
    watchdog that SIGKILLs the group if this process dies without saying goodbye (kill -9, OOM
    killer): what the command started that `die_with` does not reach (torchrun and its ranks, a
    step's subprocesses) dies with it. Returns the goodbye: call it when the command ends normally.
    Elsewhere (a test runner, a script that owns the group) it does nothing: the group is not ours."""
    if not hasattr(os, "fork") or os.getpgrp() != os.getpid():
        return lambda: None
    driver = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return lambda: None
    if pid == 0:  # the watchdog: only os calls, whatever threads the parent had
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the command to handle
            while os.getppid() == driver:
                time.sleep(poll)
            os.killpg(driver, signal.SIGKILL)
        finally:
            os._exit(0)

    def goodbye() -> None:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass

    return goodbye


class LocalMapper:
    """A `Mapper` on this machine or a Dask cluster: ``kind`` processes | threads | dask.

    One item, or one worker, runs in this process. Otherwise items run here until the map has taken
    `INLINE_SECONDS`, and the rest go to a pool started on first need and kept for the stage's later
    maps (processes: `process_pool`; dask: a LocalCluster of `workers` single-threaded processes).
    Once that pool is up, every item of a later map goes to it, as with the scheduler at `address`
    every item goes to the cluster: there is no start-up left to save, and the command's own process
    stays small whatever the corpus size (an item run here leaves its memory to this process, which
    outlives the step: a step's first item may be its largest, and a map's last one may take minutes).
    """

    def __init__(self, kind: str = "processes", workers: int = 1, address: str | None = None) -> None:
        self.kind, self.workers, self.address = kind, workers, address
        self._pool: cf.Executor | None = None
        self._dask: Any = None

    def __call__(self, name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
        total = len(args)
        report(name, 0, total)
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
            report(name, len(results), total)
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
                report(name, done, total)
            return [f.result() for f in futures]
        pool = self._executor()
        futs = [pool.submit(_released, fn, a) for a in args]
        for _ in cf.as_completed(futs):
            done += 1
            report(name, done, total)
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


def settings(cfg: Any, *exclude: str) -> dict[str, Any]:
    """A stage config's settings that change its output (how it runs lives in `ExecutorConfig`)."""
    return dict(cfg.model_dump(mode="json", exclude=set(exclude)))


def fingerprint(*parts: Any) -> str:
    """A short, stable identity of JSON-serialisable inputs and settings (work dirs, skip checks)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]
