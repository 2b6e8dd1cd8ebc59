"""What a running stage tells the runtime, and hears from it: progress ticks, live events, stop
requests.

Between the stage (which knows what it is doing) and the runtime (which knows where it is watched: a
Prefect flow, a terminal). Neither side names the other: the mappers call `progress`, the stage
calls `live` and registers with `on_stop_request`; the runtime sets the listeners and calls
`request_stop` (Ctrl-C, SIGTERM, a Cancel in the dashboard). One listener of each kind per process:
the command that runs the stage.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

ProgressListener = Callable[[str, int, int], None]
LiveListener = Callable[[str, dict[str, Any]], None]
_progress: list[ProgressListener] = []
_live: list[LiveListener] = []
_stop_callbacks: list[Callable[[str], None]] = []
_stop_reason: list[str] = []


def set_progress_listener(listener: ProgressListener | None) -> None:
    """Called as (step name, items done, items total) whenever an item of a map finishes."""
    _progress.clear()
    if listener is not None:
        _progress.append(listener)


def progress(step: str, done: int, total: int) -> None:
    """A mapper's tick: `done` of step `step`'s `total` items are finished."""
    for listener in _progress:
        listener(step, done, total)


def set_live_listener(listener: LiveListener | None) -> None:
    """Called as (event kind, payload) for each of a stage's live events (`live`)."""
    _live.clear()
    if listener is not None:
        _live.append(listener)


def watched() -> bool:
    """Whether anything listens to live events (a stage can skip gathering them otherwise)."""
    return bool(_live)


def live(kind: str, **payload: Any) -> None:
    """A live event of the running stage (e.g. a training step's metrics). Never raises: a watcher's
    failure must not stop the work it watches."""
    for listener in _live:
        with contextlib.suppress(Exception):  # the listener reports its own failures
            listener(kind, payload)


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
