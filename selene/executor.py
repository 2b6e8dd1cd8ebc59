"""How a stage's parallel steps are run: a `Mapper` runs a function over argument tuples.

Stages call ``mapper(step_name, fn, [args, ...])`` and get the results in input order; they never
know whether that was a loop (`serial_map`), a Prefect task per item on threads or processes
(`selene.flows.runtime.PrefectMapper`), or a Dask cluster. Functions and arguments are picklable:
paths and small configs, never large data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Mapper = Callable[[str, Callable[..., T], Sequence[tuple]], list[T]]


def serial_map(name: str, fn: Callable[..., T], args: Sequence[tuple]) -> list[T]:
    return [fn(*a) for a in args]


EXECUTION_FIELDS = {"workers", "executor", "dask_address"}


def settings(cfg: Any, *exclude: str) -> dict[str, Any]:
    """A stage config's settings that change its output: how it runs (workers, executor) does not."""
    return dict(cfg.model_dump(mode="json", exclude=EXECUTION_FIELDS | set(exclude)))


def fingerprint(*parts: Any) -> str:
    """A short, stable identity of JSON-serialisable inputs and settings (work dirs, skip checks)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]
