"""Typed, versioned manifests: what a finished stage wrote, as pydantic models.

Every data stage ends by writing ``manifest.json`` from its own model, a `StageManifest` subclass in
the stage's package (``selene.dedup.manifest.DedupManifest`` ...), named by the stage's registry
entry and told apart by `stage`; every reader gets it back validated, through
`selene.io.manifests.parse_manifest`, so a manifest this selene cannot read is an `InputError` that
names the file and the fields, never a KeyError deep inside a stage.

Versions. `MANIFEST_VERSION` is the layout written now. It goes up when a field is removed, renamed or
changes type or meaning, i.e. whenever an older selene would misread the file; a new optional field
does not need a bump, since readers ignore keys they do not know. A manifest with a higher version
is refused with a message that says which selene wrote it. A manifest without `manifest_version`
has the layout of version 1 and is read as such.

Some JSON keys are not Python names: `stats.per_source.<source>.in` is read and written as ``in``
and is `documents_in` in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from selene import __version__

MANIFEST_VERSION = 1
"""The manifest layout this selene writes, and the highest one it reads."""

UNVERSIONED = 1
"""The layout of a manifest without `manifest_version`."""


class Record(BaseModel):
    """A part of a manifest. Unknown keys are ignored (a newer selene may add optional ones);
    `_omit_if_none` fields are left out of the JSON when unset (stage-specific counts); `_last` keys
    are written last (the long stats after the stage's own sections, as the stages always wrote them)."""

    # populate_by_name: Python code says `documents_in=`, files say "in" (pydantic >= 2.7, see pyproject)
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    _omit_if_none: ClassVar[tuple[str, ...]] = ()
    _last: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._omit_if_none:
                if getattr(self, name) is None:
                    data.pop(name, None)
            for key in self._last:
                if key in data:
                    data[key] = data.pop(key)
        return data

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data with the file's key names."""
        return self.model_dump(mode="json", by_alias=True)


class FileEntry(Record):
    """One file a stage wrote, as its manifest lists it."""

    _omit_if_none = ("rows",)

    name: str = Field(description="File name, relative to the stage's output directory.")
    rows: int | None = Field(default=None, description="Documents in it; absent for tokenize's .bin/.idx.")
    bytes: int = Field(description="Size in bytes.")
    sha256: str = Field(description="sha256 of the file's bytes (hex).")


class ShardEntry(FileEntry):
    """A Parquet file of documents (a ``part-NNNNN.parquet`` shard or ``removed.parquet``)."""

    rows: int = Field(description="Documents (rows) in the file.")


class SourceStats(Record):
    """What became of one source's documents in one stage."""

    _omit_if_none = ("split", "pieces", "tokens", "edits")

    documents_in: int = Field(
        validation_alias="in", serialization_alias="in", description="Documents entering."
    )
    kept: int = Field(
        description="Documents kept (decontaminate: whole or in pieces; blend: sampled at least once)."
    )
    split: int | None = Field(default=None, description="decontaminate: documents cut into pieces.")
    pieces: int | None = Field(
        default=None, description="decontaminate: pieces written for the split documents."
    )
    removed: dict[str, int] = Field(
        description="Documents removed, by reason (the reasons of removed.parquet)."
    )
    tokens: int | None = Field(default=None, description="tokenize: tokens, EOD included.")
    edits: dict[str, int] | None = Field(
        default=None,
        description="ingest: changes the editing filters made to kept documents, by <filter>.<kind> "
        "(pii.email: addresses redacted, c4.lines_removed: lines dropped); spans, substrings: "
        "documents_edited, chars_in, chars_removed and spans_removed (`EditStats`, per source).",
    )


class Stats(Record):
    """Documents in, out and removed, per source and reason, plus the counts only some stages have."""

    _omit_if_none = ("documents_split", "pieces_out", "sequences", "tokens")

    documents_in: int = Field(description="Documents read (ingest: input records).")
    documents_out: int = Field(description="Documents (rows) in the output shards.")
    documents_removed: int = Field(
        description="Documents removed (rows of removed.parquet; decontaminate: dropped)."
    )
    documents_split: int | None = Field(default=None, description="decontaminate: documents cut into pieces.")
    pieces_out: int | None = Field(default=None, description="decontaminate: pieces written.")
    sequences: int | None = Field(
        default=None, description="tokenize: sequences in the .idx (one per document)."
    )
    tokens: int | None = Field(default=None, description="tokenize: tokens in the .bin, EOD included.")
    per_source: dict[str, SourceStats] = Field(description="The same per source.")


class EditStats(Stats):
    """The stats of a stage that cuts text out of documents (spans, substrings): with what it cut.
    A cut document stays (edited) unless too little is left, when it goes whole to removed.parquet."""

    documents_edited: int = Field(description="Documents kept with text cut out of them.")
    chars_in: int = Field(description="Characters of the documents read.")
    chars_removed: int = Field(
        description="Characters cut out of kept documents (a dropped document's are not counted here)."
    )
    spans_removed: int = Field(description="Spans (units or substrings) cut out of kept documents.")


class Repeat(Record):
    """One of the most repeated spans of a corpus: what a user reads to see what was boilerplate."""

    text: str = Field(description="The span, shortened for display (`…` marks a cut).")
    count: int = Field(description="Occurrences in the corpus; all but the first were cut.")
    chars: int = Field(description="Its length in characters (the whole span, not the shown text).")


class DatasetInputs(Record):
    """The document dataset a stage read."""

    dataset: str = Field(description="Its directory.")
    fingerprint: str | None = Field(description="The fingerprint in its manifest.")


class StageManifest(Record):
    """What every stage's manifest has. Written last: its presence marks the output complete."""

    _last = ("stats",)
    _omit_if_none = ("selene_version",)  # a manifest written before it was recorded reads back as it was

    manifest_version: int = Field(
        default=MANIFEST_VERSION,
        description="Layout of this file (absent: written before versions, read as 1).",
    )
    selene_version: str | None = Field(
        default=None,
        description="The selene that wrote it (absent: written before manifests recorded it). Not part of "
        "`fingerprint`: a new selene alone never reruns a finished stage.",
    )
    stage: str = Field(description="The stage that wrote it; decides the model.")
    fingerprint: str = Field(
        description="Inputs + every setting that changes the output; a match skips a rerun."
    )
    config: dict[str, Any] = Field(description="The stage's configuration (its config model, dumped).")
    inputs: Any = Field(description="What the stage read (each stage's manifest says in what form).")
    shards: Sequence[FileEntry] = Field(description="The output files, in order.")
    removed: ShardEntry | None = Field(
        default=None, description="removed.parquet (None: tokenize removes nothing)."
    )
    stats: Stats = Field(description="Documents per source and reason.")


def versioned(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with ``selene_version`` first: what every JSON record a command writes outside the stage
    manifests carries (a run's ``run.json``, a checkpoint's ``meta.json``, eval's ``summary.json``, an
    ablation's or a study's results), so any output says which selene made it. Readers treat the key as
    information only: no skip or resume check compares it."""
    return {"selene_version": __version__, **{k: v for k, v in record.items() if k != "selene_version"}}


class DocumentManifest(StageManifest):
    """The manifest of a document dataset (Parquet shards + removed.parquet)."""

    shards: list[ShardEntry] = Field(description="The ``part-NNNNN.parquet`` shards, in order.")
    removed: ShardEntry = Field(
        description="removed.parquet: every document that did not make it, with its reason."
    )


__all__ = [
    "MANIFEST_VERSION",
    "DatasetInputs",
    "DocumentManifest",
    "FileEntry",
    "Record",
    "ShardEntry",
    "SourceStats",
    "StageManifest",
    "Stats",
    "versioned",
]
