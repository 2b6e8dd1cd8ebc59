"""One way to run a stage, with or without Prefect.

A `Job` is a stage with its input, output, config and executor. `execute` runs it: the stage's
``run`` function from the registry with a `Mapper`, nothing else. The runtime decides only where the
parallel steps go and what is recorded:

- `prefect_api()` finds a Prefect API: ``PREFECT_API_URL`` (the user's), the server `selene server
  start` runs, or the API URL of the active Prefect profile. With one, the job runs as a Prefect flow
  whose steps are task runs (`selene.flows.stage`), reported to that server with its artifacts.
- Without one, the job runs right here (`LocalMapper`) and the command says once how to get the
  dashboard. No command ever waits on a Prefect server started for it alone.

``SELENE_PREFECT=off`` runs without Prefect even when a server is up; ``on`` fails when none is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from selene import registry, server
from selene.errors import UsageError

MODE_ENV = "SELENE_PREFECT"


@dataclass
class Job:
    """One stage to run: `inp` is None for a stage that reads the configured sources."""

    stage: str
    inp: str | None
    out: str
    cfg: Any
    executor: Any = field(default=None)  # selene.config.ExecutorConfig; None: its defaults

    def paths(self) -> list[str]:
        """Every location the job touches (memory:// ones keep the work in this process)."""
        return [*self.inputs(), self.out]

    def inputs(self) -> list[str]:
        """Everything the job reads: its input, the source globs, decontamination tasks, a given tokenizer."""
        paths = [p for p in (self.inp,) if p]
        paths += [s.glob for s in getattr(self.cfg, "sources", [])]
        paths += list(getattr(self.cfg, "tasks", []) if self.stage == "decontaminate" else [])
        if self.stage == "train":  # its token data (prefixes of .bin/.idx)
            paths += list(getattr(getattr(self.cfg, "data", None), "prefixes", None) or [])
        tokenizer = getattr(self.cfg, "tokenizer", None)
        return paths + ([tokenizer] if isinstance(tokenizer, str) and tokenizer else [])

    def claim(self, say: Callable[[str], None] | None = None) -> Any:
        """`selene.guard.claim` of this job: its output, refused when it overlaps an input or what
        another running command reads or writes; held while the job runs."""
        from selene import guard

        if self.stage == "eval":
            # results go to <checkpoint>/eval by default, and a finished checkpoint (never rewritten)
            # may be evaluated while its training run goes on: the output must only not be the
            # checkpoint nor contain it, and the checkpoint stays out of the running-command registry
            guard.check_overlap("selene eval", self.inputs(), [self.out], inside_ok=True)
            return guard.claim("selene eval", [], [self.out], say)
        return guard.claim(f"selene {self.stage}", self.inputs(), [self.out], say)

    def executor_config(self) -> Any:
        if self.executor is None:
            from selene.config import ExecutorConfig

            return ExecutorConfig()
        return self.executor


def execute(job: Job, mapper: Any, force: bool) -> Any:
    """Run `job`'s stage function with `mapper`; returns its `StageResult`."""
    from selene.executor import set_budget

    ex = job.executor_config()
    set_budget(ex.memory_gb, ex.workers)
    stage = registry.get(job.stage)
    fn = stage.run_fn()
    with job.claim():  # a no-op where the command already holds it (`Runtime.run`, a pipeline's run dir)
        if stage.reads == "sources":
            return fn(job.out, job.cfg, mapper=mapper, force=force)
        return fn(job.inp, job.out, job.cfg, mapper=mapper, force=force)


def check(job: Job) -> None:
    """The stage's checks that need no reading: bad inputs and settings fail before anything starts."""
    stage = registry.get(job.stage)
    if stage.preflight:
        registry.load(stage.preflight)(job.inp, job.out, job.cfg)


def run_direct(job: Job, force: bool) -> Any:
    """`job` in this process, its steps on a `LocalMapper` (no Prefect)."""
    from selene.executor import LocalMapper, local_kind

    ex = job.executor_config()
    mapper = LocalMapper(local_kind(ex.kind, job.paths()), ex.workers, ex.address)
    try:
        return execute(job, mapper, force)
    finally:
        mapper.close()


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


def _answers(url: str, timeout: float = 1.0) -> bool:
    u = urlparse(url)
    return server.tcp_open(u.hostname or "127.0.0.1", u.port or (443 if u.scheme == "https" else 80), timeout)


def prefect_api() -> str | None:
    """The Prefect API this command reports to, or None to run without Prefect (see module doc)."""
    mode = os.environ.get(MODE_ENV, "auto").lower()
    if mode not in ("auto", "on", "off"):
        raise UsageError(f"{MODE_ENV}={mode!r}: expected auto, on or off")
    if mode == "off":
        return None
    user = os.environ.get("PREFECT_API_URL")
    url = server.api_url()  # the user's PREFECT_API_URL, else selene's server when it is up
    where = "PREFECT_API_URL"
    if url is None:
        url, where = _profile_api_url(), "the active Prefect profile's PREFECT_API_URL"
    if url and (user or where != "PREFECT_API_URL") and not _answers(url):
        raise UsageError(
            f"{where} is {url}, which does not answer: start that server, or unset it to run without Prefect "
            "(`selene server start` runs one for selene)"
        )
    if url is None and mode == "on":
        raise UsageError(f"{MODE_ENV}=on but no Prefect server is up: run `selene server start` (or set PREFECT_API_URL)")
    return url


def use_prefect(url: str) -> None:
    """Point this process's Prefect client at `url` before Prefect is imported: it never starts a
    temporary server of its own."""
    problem = server.auth_problem(url)
    if problem:
        raise UsageError(problem)
    server.ensure_client_env(url)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


NO_SERVER_NOTE = (
    "no Prefect server: this run is not recorded on a dashboard "
    "(`selene server start` runs one that keeps every run)"
)


@dataclass
class Runtime:
    """How this command runs its jobs: on Prefect (`api` set) or directly; made by `runtime()`."""

    api: str | None
    say: Callable[[str], None] = field(default=lambda msg: print(msg, file=sys.stderr))
    _noted: bool = False

    def note(self) -> None:
        if self.api is None and not self._noted:
            self._noted = True
            self.say(NO_SERVER_NOTE)

    def run(self, job: Job, force: bool = False) -> Any:
        """One stage: its flow on Prefect, or `run_direct`; its output claimed (`Job.claim`) before
        anything, the stage's own checks included, touches it."""
        with job.claim(self.say):
            check(job)
            self.note()
            if self.api is None:
                return run_direct(job, force)
            from selene.flows.stage import run_flow

            return run_flow(job, force)

    def pipeline(self, cfg: Any, force: list[str], from_stage: str | None, until_stage: str | None) -> dict[str, Any]:
        """The pipeline slice: one parent flow with a sub-flow per stage on Prefect, else a loop here."""
        from selene import pipeline

        pipeline.selected(cfg, from_stage, until_stage, force)  # bad stage names fail before anything runs
        with pipeline.claim(cfg, self.say):
            self.note()
            if self.api is None:
                return pipeline.run_pipeline(cfg, checked(run_direct), force, from_stage, until_stage)
            from selene.flows.pipeline import pipeline_flow

            return pipeline_flow(cfg, force=force, from_stage=from_stage, until_stage=until_stage)


def checked(run: Callable[[Job, bool], Any]) -> Callable[[Job, bool], Any]:
    """`run` after the job's `check`: in a pipeline, a stage's bad inputs fail before its work starts."""

    def run_checked(job: Job, force: bool) -> Any:
        with job.claim():
            check(job)
            return run(job, force)

    return run_checked


def runtime(say: Callable[[str], None] | None = None) -> Runtime:
    api = prefect_api()
    if api is not None:
        use_prefect(api)
    rt = Runtime(api)
    if say is not None:
        rt.say = say
    return rt
