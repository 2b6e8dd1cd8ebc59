"""What `selene ingest` records in its manifest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.manifest import DocumentManifest, Record, Stats


class FileStats(Record):
    """ingest: what reading one input file found besides its documents."""

    file: str = Field(description="The input file.")
    bytes: int = Field(description="Its size in bytes.")
    blank_lines: int = Field(description="Blank lines skipped (jsonl).")
    other_records: dict[str, int] = Field(
        description="Records that hold no document, by kind (WARC request ...)."
    )


class IngestInput(Record):
    """One raw input file."""

    path: str = Field(description="Path or URL.")
    key: str = Field(
        description="``<source>/<path under the glob root>``; document ids are ``<key>#<index>`` unless the "
        "source names an id_key."
    )
    source: str = Field(description="The --source name it matched.")
    format: str = Field(
        description="Detected format, e.g. ``jsonl.zst``, ``warc.gz``, ``parquet``, ``arrow``."
    )
    bytes: int = Field(description="Its size in bytes (part of the fingerprint).")


class IngestStats(Stats):
    """ingest's stats: with what reading each input file found."""

    files: list[FileStats] = Field(
        description="Per input file: blank lines and records that hold no document."
    )


class IngestManifest(DocumentManifest):
    """ingest: raw files → cleaned, filtered, exactly deduplicated documents."""

    stage: Literal["ingest"] = "ingest"
    inputs: list[IngestInput] = Field(description="The input files, in document order.")
    stats: IngestStats = Field(description="Documents per source and reason, and per input file.")
