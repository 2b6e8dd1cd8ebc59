"""One way to run a stage, with or without Prefect.

A `selene.job.Job` is a stage with its input, output, config and executor; `selene.job.execute`
runs it. The runtime decides only where the parallel steps go and what is recorded:

- `prefect_api()` finds a Prefect API: ``PREFECT_API_URL`` (the user's), the server `selene server
  start` runs, or the API URL of the active Prefect profile. With one, the job runs as a Prefect flow
  whose steps are task runs (`selene.flows.stage`), reported to that server with its artifacts; its
  flow run is made from the flow's own deployment (`selene.flows.command`), so that the dashboard's
  Cancel stops it.
- Without one, the job runs right here (`LocalMapper`) and the command says once how to get the
  dashboard. No command ever waits on a Prefect server started for it alone.

A command never waits more than a few seconds on a server: whether one answers is an HTTP health
check bounded by ``SELENE_DASHBOARD_TIMEOUT`` (`selene.server.answers`), never a TCP connect, which a
stopped or stuck server's listen backlog accepts. selene's server that does not answer in time is
said once and the command runs without it; the user's ``PREFECT_API_URL`` or profile's must answer
(the command says so and stops). A server lost mid-run costs the dashboard records, never the run
(`Runtime.run`).

``SELENE_PREFECT=off`` runs without Prefect even when a server is up; ``on`` fails when none is, or
none answers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selene import pipeline, server
from selene.errors import SeleneError, UsageError
from selene.job import Job, check, checked, collected, run_direct

if TYPE_CHECKING:
    import logging

MODE_ENV = "SELENE_PREFECT"


# ------------------------------------------------------------------------------- the runtime


def _profile_api_url() -> str | None:
    """PREFECT_API_URL of the active Prefect profile (``prefect config set``), read without Prefect."""
    home = os.path.expanduser(os.environ.get("PREFECT_HOME", "~/.prefect"))
    path = os.environ.get("PREFECT_PROFILES_PATH", os.path.join(home, "profiles.toml"))
    if not os.path.isfile(path):
        return None
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            return None
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError):
        return None
    name = os.environ.get("PREFECT_PROFILE") or data.get("active") or "ephemeral"
    url = data.get("profiles", {}).get(name, {}).get("PREFECT_API_URL")
    return str(url) if url else None


def _find_api() -> tuple[str | None, str | None]:
    """The Prefect API this command reports to, or None; and, with None, the line to say instead of
    `NO_SERVER_NOTE` (selene's server that does not answer)."""
    mode = os.environ.get(MODE_ENV, "auto").lower()
    if mode not in ("auto", "on", "off"):
        raise UsageError(f"{MODE_ENV}={mode!r}: expected auto, on or off")
    if mode == "off":  # asked for: not "no server", which may be up
        return None, f"{MODE_ENV}=off: this run is not recorded on a dashboard"
    timeout = server.dashboard_timeout()
    url = os.environ.get("PREFECT_API_URL")
    where = "PREFECT_API_URL"
    if not url:
        info = server.recorded()  # selene's server, when its process is alive
        if info is not None:
            if server.answers(info.url, timeout):
                return info.url, None
            why = f"the dashboard at {info.ui_url or info.url} does not answer (within {timeout:g} s)"
            if mode == "on":
                raise UsageError(
                    f"{MODE_ENV}=on but {why}: see `selene server status` and `selene server logs`"
                )
            return None, f"{why}; running without it (see `selene server status`)"
        url, where = _profile_api_url(), "the active Prefect profile's PREFECT_API_URL"
    if url and not server.answers(url, timeout, direct=False):
        raise UsageError(
            f"{where} is {url}, which does not answer (no health check answer in {timeout:g} s, "
            f"{server.TIMEOUT_ENV}): start that server, or unset it to run without Prefect "
            "(`selene server start` runs one for selene)"
        )
    if url is None and mode == "on":
        raise UsageError(
            f"{MODE_ENV}=on but no Prefect server is up: run `selene server start` (or set PREFECT_API_URL)"
        )
    return url, None


def prefect_api() -> str | None:
    """The Prefect API this command reports to, or None to run without Prefect (see module doc)."""
    return _find_api()[0]


def use_prefect(url: str) -> None:
    """Point this process's Prefect client at `url` before Prefect is imported: it never starts a
    temporary server of its own."""
    problem = server.auth_problem(url)
    if problem:
        raise UsageError(problem)
    server.ensure_client_env(url)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect's client waits 60 s for an answer and tries 6 times, backing off up to 32 s: minutes
    # on each call to a server that stops answering. Bounded here (a user's settings win): twice
    # the health check's wait, tried twice, about 22 s a call by default; a lost server fails the
    # flow at its next call or two and `Runtime.run` goes on without it.
    os.environ.setdefault("PREFECT_API_REQUEST_TIMEOUT", f"{2 * server.dashboard_timeout():g}")
    os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "1")


NO_SERVER_NOTE = (
    "no Prefect server: this run is not recorded on a dashboard "
    "(`selene server start` runs one that keeps every run)"
)


@dataclass
class Runtime:
    """How this command runs its jobs: on Prefect (`api` set) or directly; made by `runtime()`.
    `why`: the line said, once, when running without Prefect (default `NO_SERVER_NOTE`)."""

    api: str | None
    say: Callable[[str], None] = field(default=lambda msg: print(msg, file=sys.stderr))
    why: str | None = None
    _noted: bool = False

    def note(self) -> None:
        if self.api is None and not self._noted:
            self._noted = True
            self.say(self.why or NO_SERVER_NOTE)

    def run(self, job: Job, force: bool = False) -> Any:
        """One stage: its flow on Prefect, or `run_direct`; its output claimed (`Job.claim`) before
        anything, the stage's own checks included, touches it, and removed again when the run is
        refused and made it (`Job.undone_on_refusal`). A server lost mid-run: see
        `on_prefect`."""
        with job.claim(self.say), job.undone_on_refusal():
            check(job)
            self.note()
            if self.api is None:
                return run_direct(job, force)
            from selene.flows.stage import run_flow  # lazy: Prefect (~1 s) only when a server is up

            return self.on_prefect(lambda: run_flow(job, force), lambda run: run(job, force), job.stage)

    def pipeline(
        self, cfg: Any, force: list[str], from_stage: str | None, until_stage: str | None
    ) -> dict[str, Any]:
        """The pipeline slice: one parent flow with a sub-flow per stage on Prefect, else a loop here."""
        pipeline.selected(cfg, from_stage, until_stage, force)  # bad stage names fail before anything runs
        with pipeline.claim(cfg, self.say):
            self.note()
            if self.api is None:
                return pipeline.run_pipeline(
                    cfg, checked(run_direct), force, from_stage, until_stage, say=self.say
                )
            from selene.flows.pipeline import pipeline_flow  # lazy: Prefect (~1 s) only when a server is up

            return self.on_prefect(
                lambda: pipeline_flow(cfg, force=force, from_stage=from_stage, until_stage=until_stage),
                lambda run: pipeline.run_pipeline(
                    cfg, checked(run), force, from_stage, until_stage, say=self.say
                ),
                "the pipeline",
            )

    def on_prefect(
        self, flow: Callable[[], Any], direct: Callable[[Callable[[Job, bool], Any]], Any], what: str
    ) -> Any:
        """`flow()`, the work on Prefect; when the Prefect client loses the server on the way
        (`lost_server`: it stopped answering or went away; not an error of the stage), one line
        says so and `direct(run)` does the work here, as without a server: `run` returns the
        result of a stage that finished before the server was lost (the engine failed only to
        report it), and runs the others with `run_direct`, which takes up a stage where its
        completed shards left it. The simplest correct choice: Prefect's engine raises when it
        cannot report a state, at the start, between stages or at the end, and a half-reported
        flow has nothing more worth waiting for; `use_prefect` bounds each client call so this
        comes within a minute, and `abandon_prefect_services` keeps the exit from waiting on the
        lost server. ``SELENE_PREFECT=on`` fails there instead of running unrecorded."""
        api = self.api or ""
        done: dict[tuple[str, str], Any] = {}
        quiet = _QuietLoss(api)
        try:
            with quiet, collected(done):
                return flow()
        except Exception as e:
            reason = lost_server(e, api)
            if reason is None:
                raise
            abandon_prefect_services()
            if os.environ.get(MODE_ENV, "auto").lower() == "on":
                raise SeleneError(
                    f"{MODE_ENV}=on and the Prefect server at {api} stopped answering ({reason})"
                ) from None
            self.say(
                f"the dashboard at {api} stopped answering ({reason}); {what} goes on without it "
                "(this run's records there stay incomplete)"
            )
        self.api, self._noted = None, True  # the rest of this command runs here, and said so

        def run(job: Job, force: bool) -> Any:
            key = (job.stage, job.out)
            return done[key] if key in done else run_direct(job, force)

        return direct(run)


def abandon_prefect_services(wait: float = 2.0) -> None:
    """After a lost server: Prefect's background services that ship events and logs to it drop
    what they still hold and are not waited for at exit. Each is otherwise drained at exit item by
    item, each item tried again and again: about 7 s an event for a killed server, over a minute for
    a stopped one, minutes in all. The item at hand is left to its daemon thread. Best effort on
    Prefect's internals (3.4-3.8, `QueueService`): where they differ, the exit waits as before."""
    import asyncio
    import contextlib
    import queue

    try:
        from prefect._internal.concurrency.services import QueueService
    except ImportError:
        return

    async def finished(event: asyncio.Event) -> None:
        event.set()

    for service in list(getattr(QueueService, "_instances", {}).values()):
        with contextlib.suppress(Exception):
            items = service._queue
            with contextlib.suppress(queue.Empty):
                while True:
                    items.get_nowait()
                    items.task_done()
            service._stop()  # no more items; its loop ends after the one at hand
            loop, done = service._loop, service._done_event
            if loop is not None and done is not None:  # what the exit's drain waits for
                asyncio.run_coroutine_threadsafe(finished(done), loop).result(wait)


class _QuietLoss:
    """While a flow runs, the console says nothing of a lost server but `Runtime.on_prefect`'s
    line: Prefect's flow-run logger's "Encountered exception during execution: ReadTimeout(...)"
    is dropped when the error is the API's (`lost_server`), and its log shipper's "--- Error
    logging to API ---" (printed only while ``logging.raiseExceptions``, which is also the flag of
    the standard library's own handler errors) is off for the run, and stays off once the server
    is lost: the shipper tries again at exit. ``--debug`` (SELENE_DEBUG) keeps them all."""

    LOGGERS = ("prefect.flow_runs", "prefect.task_runs")

    def __init__(self, api: str) -> None:
        self.api = api
        self.debug = bool(os.environ.get("SELENE_DEBUG"))

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return error is None or lost_server(error, self.api) is None

    def __enter__(self) -> _QuietLoss:
        import logging

        if not self.debug:
            self.raise_exceptions, logging.raiseExceptions = logging.raiseExceptions, False
            for name in self.LOGGERS:
                logging.getLogger(name).addFilter(self)
        return self

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> None:
        import logging

        if not self.debug:
            for name in self.LOGGERS:
                logging.getLogger(name).removeFilter(self)
            if error is None or lost_server(error, self.api) is None:
                logging.raiseExceptions = self.raise_exceptions


def lost_server(error: BaseException, api: str) -> str | None:
    """Why `error` is the Prefect client losing the API at `api` (the error's name), or None when it
    is not: a transport error (timeout, refused or dropped connection) or a 5xx answer of a request
    to `api`, or Prefect's "Failed to reach API", raised or found among the errors it was raised
    from or while handling."""
    try:
        import httpx
    except ImportError:  # no Prefect client, no Prefect error
        return None
    stack: list[BaseException] = [error]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, httpx.TransportError | httpx.HTTPStatusError):
            try:
                to_api = str(e.request.url).startswith(api.rstrip("/"))
            except RuntimeError:  # no request attached
                to_api = False
            if not to_api:
                pass
            elif not isinstance(e, httpx.HTTPStatusError):
                return type(e).__name__  # ReadTimeout, ConnectError, RemoteProtocolError ...
            elif e.response.status_code >= 500:
                return f"HTTP {e.response.status_code}"
        elif isinstance(e, RuntimeError) and "Failed to reach API" in str(e):
            return "failed to reach it"
        stack += [x for x in (e.__cause__, e.__context__) if x is not None]
    return None


def runtime(say: Callable[[str], None] | None = None) -> Runtime:
    api, why = _find_api()
    if api is not None:
        use_prefect(api)
    rt = Runtime(api, why=why)
    if say is not None:
        rt.say = say
    return rt
