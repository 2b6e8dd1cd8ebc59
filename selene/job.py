"""One stage run: a `Job` (a stage with its input, output, config and executor) and how it runs.

`execute` runs the stage's ``run`` function from the registry with a `Mapper`, nothing else;
`check` runs the stage's checks that need no reading; `run_direct` runs a job in this process. The
runtime above (`selene.runner`) decides only where the parallel steps go and what is recorded.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selene import guard, registry
from selene.config import ExecutorConfig
from selene.entry_points import SourcesRef
from selene.executor.mappers import LocalMapper, Mapper, check_scheduler, local_kind
from selene.io import fs

if TYPE_CHECKING:
    from selene.io.results import StageResult


@dataclass
class Job:
    """One stage to run: `inp` is None for a stage that reads the configured sources."""

    stage: str
    inp: str | None
    out: str
    cfg: Any
    executor: ExecutorConfig | None = field(default=None)  # None: its defaults

    def paths(self) -> list[str]:
        """Every location the job touches (memory:// ones keep the work in this process)."""
        return [*self.inputs(), self.out]

    def inputs(self) -> list[str]:
        """Everything the job reads: its input, and what its config names beyond it
        (`StageConfig.extra_inputs`: source globs, task files, a given tokenizer ...)."""
        return [p for p in (self.inp,) if p] + list(self.cfg.extra_inputs())

    def claim(self, say: Callable[[str], None] | None = None) -> Any:
        """`selene.guard.claim` of this job: its output, refused when it overlaps an input or what
        another running command reads or writes; held while the job runs."""
        what = f"selene {self.stage}"
        if registry.get(self.stage).output_inside_input:
            guard.check_overlap(what, self.inputs(), [self.out], inside_ok=True)
            return guard.claim(what, [], [self.out], say)
        return guard.claim(what, self.inputs(), [self.out], say)

    def undone_on_refusal(self) -> contextlib.AbstractContextManager[None]:
        """While the block runs, a refused run (exit 2) removes the output it made; one that existed
        before is left as it was. Inside `claim`: no other command writes the output meanwhile."""
        return fs.undone_on_refusal(self.out)

    def executor_config(self) -> ExecutorConfig:
        return ExecutorConfig() if self.executor is None else self.executor


def execute(job: Job, mapper: Mapper, force: bool) -> StageResult[Any]:
    """Run `job`'s stage function with `mapper` (made from the job's `ExecutorConfig`: its workers and
    its memory budget); returns its `StageResult`."""
    stage = registry.get(job.stage)
    with job.claim():  # a no-op where the command already holds it (`Runtime.run`, a pipeline's run dir)
        if isinstance(stage.run, SourcesRef):
            result = stage.run.load()(job.out, job.cfg, mapper=mapper, force=force)
        else:
            result = stage.run.load()(job.inp, job.out, job.cfg, mapper=mapper, force=force)
    if _finished is not None:
        _finished[(job.stage, job.out)] = result
    return result


# The stages `execute` finished in this process while a Prefect runtime runs them, by (stage,
# output): what stands when the server is lost after a stage's work is done (`selene.runner`).
_finished: dict[tuple[str, str], Any] | None = None


@contextlib.contextmanager
def collected(done: dict[tuple[str, str], Any]) -> Iterator[None]:
    """While the block runs, each job `execute` finishes is also recorded in `done`."""
    global _finished
    outer, _finished = _finished, done
    try:
        yield
    finally:
        _finished = outer


def check(job: Job) -> None:
    """The stage's checks that need no reading: bad inputs and settings fail before anything starts."""
    stage = registry.get(job.stage)
    if stage.preflight:
        stage.preflight.load()(job.inp, job.out, job.cfg)
    ex = job.executor_config()
    if ex.kind == "dask" and ex.address and local_kind(ex.kind, job.paths()) == "dask":
        workers = check_scheduler(ex.address)
        if workers == 0:
            print(f"warning: the Dask scheduler at {ex.address} has no workers yet; tasks wait for one", file=sys.stderr)


def run_direct(job: Job, force: bool) -> Any:
    """`job` in this process, its steps on a `LocalMapper` (no Prefect)."""
    ex = job.executor_config()
    mapper = LocalMapper(local_kind(ex.kind, job.paths()), ex.workers, ex.address, ex.memory_gb)
    try:
        return execute(job, mapper, force)
    finally:
        mapper.close()


def checked(run: Callable[[Job, bool], Any]) -> Callable[[Job, bool], Any]:
    """`run` after the job's `check`: in a pipeline, a stage's bad inputs fail before its work starts."""

    def run_checked(job: Job, force: bool) -> Any:
        with job.claim(), job.undone_on_refusal():
            check(job)
            return run(job, force)

    return run_checked
