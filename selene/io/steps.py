"""The skeleton every data stage shares, written once: a stage keeps only its algorithm.

A data stage is fingerprint → `dataset.open_output` → steps → `finish_documents`:

- a **step** is a function whose stored result is a typed model (`StepResult`); `resumable(marker,
  Model, step)` returns a finished step's stored result, or runs the step and writes its result to
  the marker atomically. A rerun after a kill redoes only the steps without a marker, and what the
  next step reads is a named type a type checker follows (datatrove's executor owns completion the
  same way; here the marker's contents are its typed result).
- **writers** are context managers (`dataset.ParquetSink`): leaving the block by an exception aborts
  the file (its temporary is removed), leaving it normally closes it.
- **finishing** is one call: removed rows merged into ``removed.parquet``, the accounting checked
  (every input document in exactly one place, else an `InternalError`: selene's bug, not the
  user's), the manifest written last, the work directory removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from typing_extensions import TypedDict  # generic TypedDicts: typing's only from Python 3.11

from selene import __version__
from selene.errors import InternalError
from selene.io import dataset, fs
from selene.io.results import StageResult
from selene.manifest import FileEntry, ShardEntry, StageManifest


class StepResult(BaseModel):
    """What a step stores for the steps after it: one model per step, stored as its marker's JSON."""

    model_config = ConfigDict(extra="forbid")


R = TypeVar("R", bound=BaseModel)
M = TypeVar("M", bound=StageManifest)


def marker(root: str, step: str, index: int | None = None) -> str:
    """Where a step's result is stored: ``<root>/<step>/<index:05d>.json`` for a step run per item
    (shard, band, group), ``<root>/<step>.json`` for a step run once. `root` is the run's work
    directory (``<out>/_work/<fingerprint>``): a changed setting never finds another run's markers."""
    return fs.join(root, step, f"{index:05d}.json") if index is not None else fs.join(root, f"{step}.json")


def resumable(marker: str, model: type[R], step: Callable[[], R], *, outputs: Iterable[str] = ()) -> R:
    """The stored result of a finished step, else `step()`'s, stored at `marker` (atomically) first.

    A step is finished when its marker exists and so does every file in `outputs` (what it wrote
    besides its result). A marker that does not parse as `model` (written by another selene) is
    treated as absent: the step runs again and replaces it.
    """
    if fs.exists(marker) and all(fs.exists(p) for p in outputs):
        try:
            return model.model_validate_json(fs.read_text(marker))
        except ValidationError:
            pass
    result = step()
    fs.atomic_write(marker, result.model_dump_json())
    return result


def check_accounting(stage: str, equal: Mapping[str, tuple[int, int]]) -> None:
    """Every pair in `equal` ({what: (counted, expected)}) must agree: a document counted twice or
    lost is selene's bug, reported as such with every pair that disagrees."""
    wrong = [f"{what}: {a:,} != {b:,}" for what, (a, b) in equal.items() if a != b]
    if wrong:
        raise InternalError(f"{stage} accounting: " + "; ".join(wrong))


S = TypeVar("S", bound=Sequence[FileEntry])
D = TypeVar("D", bound=ShardEntry | None)


class Header(TypedDict, Generic[S, D]):
    """The fields every stage's manifest starts with (its `inputs` and `stats` are its own). Generic
    in the shards' and removed file's types, so a document manifest (``list[ShardEntry]``, a
    removed file) and a token manifest (other files, none removed) both take it as it is."""

    selene_version: str
    fingerprint: str
    config: dict[str, Any]
    shards: S
    removed: D


def header(fingerprint: str, config: BaseModel, shards: S, removed: D) -> Header[S, D]:
    return Header(
        selene_version=__version__,
        fingerprint=fingerprint,
        config=config.model_dump(mode="json"),
        shards=shards,
        removed=removed,
    )


def finish(out: str, manifest: M) -> StageResult[M]:
    """The manifest written last (it is the completion marker), then the work directory removed."""
    dataset.write_manifest(out, manifest)
    fs.rm(fs.join(out, dataset.WORK), recursive=True)
    return StageResult(out, skipped=False, manifest=manifest)


def finish_documents(
    out: str,
    stage: str,
    removed_parts: Iterable[str],
    balance: Callable[[dataset.WrittenFile], Mapping[str, tuple[int, int]]],
    manifest: Callable[[dataset.WrittenFile], M],
) -> StageResult[M]:
    """A document stage's end: the per-shard removed files merged into ``removed.parquet`` (in the
    given order), the accounting checked (`balance(removed)`: see `check_accounting`), the manifest
    built from the merged file's entry and written last, the work directory removed."""
    removed = dataset.merge_removed(out, removed_parts)
    check_accounting(stage, balance(removed))
    return finish(out, manifest(removed))
