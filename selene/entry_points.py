"""What the registry's import paths name, as types: a `Ref` (a typed reference, loaded when first
used) and the protocols of a stage's parts, so that mypy sees a stage's ``run`` through the registry
and a caller gets a typed function, not ``Any``.

A registry entry says which protocol each part satisfies (``run=Ref[DatasetRun]("...")``);
`selene.entry_points_check` holds each stage's real functions as those protocols, with the stage's own
config and manifest types, so a part whose signature does not fit fails ``mypy``. This module imports
nothing at run time but the standard library: the registry, and so ``selene --help``, reads it.

The protocols are generic in what they take, so that the check can say it per stage: `I` the input
(``str`` for a stage that reads a dataset, ``str | None`` for one that may go without, training
reading ``train.data.prefixes``), `C` the config model, `M` the manifest model. The registry itself
uses them unparameterised (``Any``): its callers hold a `selene.job.Job`, whose config is any stage's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from selene.executor.mappers import Mapper
    from selene.io.results import StageResult
    from selene.manifest import StageManifest
    from selene.view import View

T_co = TypeVar("T_co", covariant=True)
I_contra = TypeVar("I_contra", contravariant=True)
C_contra = TypeVar("C_contra", contravariant=True)
M = TypeVar("M", bound="StageManifest")


def load(path: str) -> Any:
    """The object at ``"package.module:attribute"``."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class Ref(Generic[T_co]):
    """The object at ``"package.module:attribute"``, of type `T_co`; imported by `load`, not before."""

    path: str

    def load(self) -> T_co:
        obj: T_co = load(self.path)  # what the path names is checked by selene.entry_points_check (mypy)
        return obj


class SourcesRun(Protocol[C_contra, M]):
    """The run of a stage that reads the configured sources, not a dataset (ingest)."""

    def __call__(self, out: str, cfg: C_contra, *, mapper: Mapper, force: bool) -> StageResult[M]: ...


class DatasetRun(Protocol[I_contra, C_contra, M]):
    """The run of a stage that reads its input (the previous stage's output): documents, tokens, a
    checkpoint."""

    def __call__(self, inp: I_contra, out: str, cfg: C_contra, *, mapper: Mapper, force: bool) -> StageResult[M]: ...


class SourcesRef(Ref[SourcesRun[Any, Any]]):
    """The run of a stage that reads the configured sources (``reads="sources"``): told apart from a
    `DatasetRun`'s at run time, since the two are called differently."""


class Preflight(Protocol[I_contra, C_contra]):
    """``check(inp, out, cfg)``: what needs no reading fails here, before any work (`I_contra` is
    None for a stage that reads the sources)."""

    def __call__(self, inp: I_contra, out: str, cfg: C_contra) -> None: ...


class Renew(Protocol[I_contra, C_contra]):
    """``renew(inp, out, cfg, say)``: what `out` holds that was made from other inputs is moved
    aside; returns where it went (None: nothing moved)."""

    def __call__(self, inp: I_contra, out: str, cfg: C_contra, say: Callable[[str], None]) -> str | None: ...


class StageView(Protocol[M]):
    """``view(result) -> View``: what a stage shows, built once from its result (for the run report,
    from its output directory's manifest alone) and rendered to the terminal, Prefect and report.md."""

    def __call__(self, result: StageResult[M]) -> View: ...


Command = Callable[..., None]
"""A typer command function: typer reads its signature, so any parameters."""
