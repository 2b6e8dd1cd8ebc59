"""What every reader yields (`RawRecord`), what it counts besides (`ReadStats`), and how a
record's fields become a document's text, id and meta (`Fields`, `meta_and_source`): one rule for
jsonl objects and Parquet/Arrow rows, so the same corpus in either format gives the same documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class RawRecord:
    """One input record: a document, or a quarantine entry when `reason` is set."""

    index: int  # line (jsonl), record ordinal (WARC/WET) or row ordinal (Parquet/Arrow), 1-based
    text: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    source: str | None = None  # from the record itself (Pile's meta.pile_set_name), if any
    reason: str | None = None
    detail: str = ""
    id: str | None = None  # the record's own id (a source's `id_key`); None: selene names it


@dataclass
class ReadStats:
    """What a reader saw that is not a document: blank lines, WARC records of other types."""

    blank_lines: int = 0
    other_records: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Fields:
    """Which fields of a jsonl object or Parquet/Arrow row are the document's text, id and meta."""

    text: str = "text"
    id: str | None = None
    meta: tuple[str, ...] | None = None  # None: every field but text and id


def meta_and_source(fields: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The meta made of a record's fields (text and id left out) and the source the record names.

    A `meta` object's keys come first and win over top-level fields of the same name (the Pile
    nests its own there); its `pile_set_name` is the document's source.
    """
    if "meta" in fields:
        raw = fields["meta"]
        meta: dict[str, Any] = dict(raw) if isinstance(raw, dict) else ({} if raw is None else {"meta": raw})
        for k, v in fields.items():
            if k != "meta":
                meta.setdefault(k, v)
    else:
        meta = fields
    pile = meta.get("pile_set_name")
    return meta, pile if isinstance(pile, str) and pile else None
