"""A test's own step runner as a `Mapper`: it sees or interrupts a stage's steps, and carries the
memory budget the stage sizes its tasks by (the default, or the one the test gives)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from selene.executor.mappers import Budget

Run = Callable[[str, Callable[..., Any], Sequence[tuple]], list[Any]]


@dataclass(frozen=True)
class FunctionMapper:
    run: Run
    budget: Budget = field(default_factory=Budget)

    def __call__(self, name: str, fn: Callable[..., Any], args: Sequence[tuple]) -> list[Any]:
        return self.run(name, fn, args)


def as_mapper(run: Run, budget: Budget | None = None) -> FunctionMapper:
    """`run` (called as a mapper is: step name, function, argument tuples) as a `Mapper`; usable as a
    decorator for the default budget."""
    return FunctionMapper(run, budget or Budget())
