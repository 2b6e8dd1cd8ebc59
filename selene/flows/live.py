"""A running stage on the dashboard: its live events as Prefect artifacts and logs, and the
dashboard's Cancel as a clean stop.

`LiveBoard` receives a stage's live events (`selene.executor.events.live`; training sends one per logged
step, one per checkpoint and the loss curve) and publishes them from a thread of its own: the
stage never waits on the server. Training's steps become a progress artifact (``train-progress``),
a table of the latest logged steps (``train-metrics``: a new version at most every
`TABLE_SECONDS`, and the last one at the end; the progress at most every `PROGRESS_SECONDS`), a log line per step in the run's logs (rank 0's
console line), the loss curve (``train-loss``) at each validation and checkpoint, and the list of
checkpoints as they land (``train-checkpoints``). When the server fails a call, one warning says
so and the rest of the run's updates are dropped: training goes on.

`CancelWatch` reads the flow run's state (and that of the deployment run that started the process,
under ``selene deploy``) every `CancelWatch.INTERVAL` seconds. A Cancel sets it to CANCELLING, which
Prefect itself acts on only for runs a worker started; here it becomes `selene.executor.events.request_stop`,
which training takes as a SIGTERM (finish the step, checkpoint, exit) and a data stage's task groups
as the end of their items (`selene.flows.stage.PrefectMapper`). The stage then raises
`selene.errors.Stopped`, and the flow ends Cancelled with its message (`cancelled`). The dashboard
offers Cancel only because a command's run is made from a deployment (`selene.flows.command`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from selene.errors import Stopped
from selene.executor import events
from selene.view import svg_image

# The server shares the machine with training more often than not (one node, or the first node of a
# cluster): each call costs its CPU something, so the artifacts are redrawn at a bounded rate and a
# burst of steps is one call (log lines go in Prefect's own batches)
PROGRESS_SECONDS = 3.0
TABLE_SECONDS = 10.0
TABLE_ROWS = 20

_COLUMNS = (
    ("step", "step", "{:d}"), ("tokens", "tokens", "{:,d}"), ("loss", "loss", "{:.4f}"),
    ("val_loss", "val loss", "{:.4f}"), ("lr", "lr", "{:.3g}"), ("grad_norm", "grad norm", "{:.3g}"),
    ("tokens_per_s", "tokens/s", "{:,.0f}"), ("mfu", "MFU", "{:.1%}"), ("peak_memory_gib", "memory GiB", "{:.2f}"),
)  # fmt: skip


def _fmt(value: Any, spec: str) -> str:
    try:
        return spec.format(value)
    except (ValueError, TypeError):
        return str(value)


def eta_text(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def step_line(row: dict[str, Any], steps: int, eta: float | None) -> str:
    """A logged step as one line: what the console shows, with the steps asked for and the ETA."""
    parts = [f"step {row.get('step')}/{steps}"]
    parts += [f"{label} {_fmt(row[key], spec)}" for key, label, spec in _COLUMNS[1:] if key in row]
    # a step that evaluated (train.eval_tasks): its scores on the same line, as the console shows them
    scores = [f"{key[len('eval/') :]} {row[key]:.4g}" for key in row if key.startswith("eval/")]
    return ", ".join(parts) + f", ETA {eta_text(eta)}" + (f"; eval: {', '.join(scores)}" if scores else "")


class LiveBoard:
    """Publishes a stage's live events to the flow run they belong to (see module doc). Made in the
    flow's thread: its context (the flow run) goes with the publishing thread."""

    def __init__(self, logger: Any) -> None:
        self.logger = logger
        self.events: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        self.failed = False
        self.progress_id: Any = None
        self.rows: list[dict[str, Any]] = []
        self.table_at = self.progress_at = -1e9
        self.table_stale = self.progress_stale = False
        self.last: tuple[int, int, float | None] | None = None
        self.checkpoints: list[tuple[int, str]] = []
        context = contextvars.copy_context()
        self.thread = threading.Thread(
            target=context.run, args=(self._loop,), name="selene-live-board", daemon=True
        )
        self.thread.start()

    def event(self, kind: str, payload: dict[str, Any]) -> None:
        if not self.failed:
            self.events.put((kind, payload))

    def close(self, timeout: float = 15.0) -> None:
        """Publish what is queued (the final table) within `timeout`, then leave the rest."""
        self.events.put(None)
        self.thread.join(timeout)

    def _loop(self) -> None:
        ending = False
        while not ending:
            batch = [self.events.get()]
            with contextlib.suppress(queue.Empty):
                while True:  # what came while the last calls ran: one progress update for all of it
                    batch.append(self.events.get_nowait())
            ending = None in batch
            if self.failed:
                continue
            try:
                self._handle([item for item in batch if item is not None])
            except Exception as e:  # a failed update is said once and costs the rest, not the run
                self._fail(e)
        if not self.failed and self.progress_stale:
            with contextlib.suppress(Exception):  # the last step's progress and table, whatever the rate
                self._progress()
                self._table()

    def _fail(self, e: Exception) -> None:
        self.failed = True
        print(
            f"dashboard updates stopped ({type(e).__name__}: {str(e)[:200]}); the run goes on, its console and "
            "metrics files have everything",
            file=sys.stderr,
            flush=True,
        )

    def _handle(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        """A batch of events: a log line per step (Prefect ships logs in batches of its own), then
        the progress and the table once for the batch's last step, the curve and checkpoints."""
        from prefect.artifacts import create_markdown_artifact

        steps = [p for kind, p in events if kind == "train-step"]
        for p in steps:
            row, total, eta = p["row"], int(p["steps"]), p.get("eta_s")
            self.logger.info(step_line(row, total, eta))
            self.rows = [*self.rows, row][-TABLE_ROWS:]
            self.last = (int(row.get("step", 0)), total, eta)
            self.table_stale = True
        if steps:
            self.progress_stale = True
        if self.progress_stale and time.monotonic() - self.progress_at >= PROGRESS_SECONDS:
            self._progress()
        if self.table_stale and time.monotonic() - self.table_at >= TABLE_SECONDS:
            self._table()
        plots = [p for kind, p in events if kind == "train-plot"]
        if plots:  # the newest curve only
            create_markdown_artifact(
                markdown=f"### Training loss at step {plots[-1].get('step')}\n\n" + svg_image(plots[-1]["svg"], "loss") + "\n",
                key="train-loss", description="training (blue) and validation (red) loss",
            )  # fmt: skip
        evals = [p for kind, p in events if kind == "train-evals"]
        if evals:  # train.eval_tasks: the newest curves only
            create_markdown_artifact(
                markdown=f"### Evaluation during training, step {evals[-1].get('step')}\n\n{evals[-1].get('table') or ''}\n"
                + svg_image(evals[-1]["svg"], "evaluation") + "\n",
                key="train-evals", description="harness tasks and reference bits/byte scored during the run",
            )  # fmt: skip
        saved = [p for kind, p in events if kind == "train-checkpoint"]
        for p in saved:
            self.logger.info(f"checkpoint of step {p['step']}: {p['path']}")
            self.checkpoints.append((int(p["step"]), str(p["path"])))
        if saved:
            lines = "\n".join(f"| {s} | `{path}` |" for s, path in self.checkpoints)
            create_markdown_artifact(
                markdown=f"### Checkpoints\n\n| step | directory |\n|---:|---|\n{lines}\n",
                key="train-checkpoints", description=f"{len(self.checkpoints)} checkpoints saved in this run",
            )  # fmt: skip

    def _progress(self) -> None:
        from prefect.artifacts import create_progress_artifact, update_progress_artifact

        if self.last is None:
            return
        step, total, eta = self.last
        done = 100.0 * min(step, total) / max(total, 1)
        what = f"training: step {step} of {total}, ETA {eta_text(eta)}"
        if self.progress_id is None:
            self.progress_id = create_progress_artifact(progress=done, key="train-progress", description=what)
        else:
            update_progress_artifact(artifact_id=self.progress_id, progress=done, description=what)
        self.progress_at = time.monotonic()
        self.progress_stale = False

    def _table(self) -> None:
        from prefect.artifacts import create_table_artifact

        table = [
            {label: _fmt(r[key], spec) if key in r else "" for key, label, spec in _COLUMNS}
            for r in reversed(self.rows)
        ]
        step, steps, eta = self.last or (0, 0, None)
        create_table_artifact(
            table=table, key="train-metrics",
            description=f"the latest logged steps, newest first: step {step} of {steps}, ETA {eta_text(eta)}",
        )  # fmt: skip
        self.table_at = time.monotonic()
        self.table_stale = False


class CancelWatch:
    """Turns a Cancel in the dashboard (the run's state CANCELLING) into `events.request_stop`:
    of the flow run itself, or of the deployment run that started this process (`root_run`: a
    flow of ``selene deploy``, whose stages run as its sub-flows), one call for both."""

    INTERVAL = 3.0

    def __init__(self, flow_run_id: Any, *also: Any) -> None:
        self.flow_run_ids = list(dict.fromkeys([flow_run_id, *also]))
        self.done = threading.Event()
        # held while a stop is requested: after `close` returns no late request can land (a poll
        # that was in flight would otherwise stop the process's next run)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._loop, name="selene-cancel-watch", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
        from prefect.client.schemas.objects import StateType

        runs = FlowRunFilter(id=FlowRunFilterId(any_=self.flow_run_ids))
        while not self.done.wait(self.INTERVAL):
            try:
                with get_client(sync_client=True) as client:
                    states = [r.state for r in client.read_flow_runs(flow_run_filter=runs)]
            except Exception:
                continue
            if any(s is not None and s.type in (StateType.CANCELLING, StateType.CANCELLED) for s in states):
                with self.lock:
                    if not self.done.is_set():
                        events.request_stop("from the dashboard")
                return

    def close(self) -> None:
        with self.lock:
            self.done.set()


def root_run() -> UUID | None:
    """The flow run a Prefect runner started this process for (``selene deploy``'s deployments, a
    work pool's worker), from the variable the runner sets; None in a command."""
    value = os.environ.get("PREFECT__FLOW_RUN_ID")
    try:
        return UUID(value) if value else None
    except ValueError:
        return None


def api_logger() -> logging.Logger:
    """A logger whose records go to the run's logs on the server only, at INFO whatever Prefect's
    console level: the console has the ranks' own lines already (each step once, not twice)."""
    from prefect.logging.handlers import APILogHandler

    logger = logging.getLogger("selene.live")
    if not any(isinstance(h, APILogHandler) for h in logger.handlers):
        logger.addHandler(APILogHandler())
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


_stopped: list[Stopped] = []


@contextlib.contextmanager
def watched(with_board: bool = True) -> Iterator[None]:
    """The flow body's live board and Cancel watch while it runs (inside a flow run)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    board = LiveBoard(api_logger()) if with_board else None
    here = context.flow_run.id if context is not None and context.flow_run is not None else None
    root = root_run()
    watch = CancelWatch(here, *([root] if root else [])) if here is not None else None
    if board is not None:
        events.set_live_listener(board.event)
    _depth.append(None)
    try:
        yield
    finally:
        if watch is not None:  # first: no request of this run can come after the clear below
            watch.close()
        _depth.pop()
        if not _depth:  # the outermost flow ended: its Cancel is served, the process's next run starts clean
            events.clear_stop_request()
        if board is not None:
            events.set_live_listener(None)
            board.close()


_depth: list[None] = []  # watched flows running (a pipeline's, then its stage's)


def cancelled(e: Stopped) -> Any:
    """The flow's final state for a clean stop: Cancelled with its message; the error is kept for
    `reraise_stopped` (the command's one line and exit status)."""
    from prefect.states import Cancelled

    _stopped.append(e)
    return Cancelled(message=str(e))


@contextlib.contextmanager
def reraise_stopped() -> Iterator[None]:
    """Around a flow call: a flow that ended Cancelled by `cancelled` raises its `Stopped` here."""
    _stopped.clear()
    try:
        yield
    except BaseException:
        if _stopped:
            raise _stopped.pop() from None
        raise
    if _stopped:
        raise _stopped.pop()
