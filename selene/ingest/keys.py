"""A source's fields checked against its records: a wrong `text_key` (or `id_key`) on a jsonl source
would otherwise quarantine every record as ``malformed:no_text`` and the command would end in success.

Before any work, the first records of each jsonl source (`SAMPLE_LINES` non-empty lines of its first
file that has JSON objects) must include one with the text field, and one with the id field when
`id_key` is set; Parquet and Arrow sources are checked on their footers (`columnar.check_columns`).
After the files are read, a source none of whose records had a text is an error too (`check_read`):
the sample cannot see a text field that is present but null everywhere, or files past the first.
With an `id_key`, ids that name different texts in the sample (a jsonl source's sampled records, a
Parquet source's first row group) are refused before any work too (`check_sample_ids`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from selene.errors import ConfigError, InputError
from selene.ingest.readers import _lines, decompressed_chunks
from selene.ingest.records import Fields
from selene.io import fs

SAMPLE_FILES = 10
"""Files of a source tried for a sample at most: past them (empty or damaged), reading decides."""
SAMPLE_LINES = 100
"""Non-empty lines of a jsonl file read before any work to check a source's fields: enough to tell a
missing field from one that only some records lack, a few KB to MB of reading per source."""

_FIX = "Set the source's text_key / id_key (YAML `text_key: FIELD`, CLI --source 'NAME[text_key=FIELD]=GLOB')"
_MAX_LINE = 64 << 20  # a longer first line is not parsed here: reading quarantines it as too large


def sample_objects(path: str, comp: str | None, lines: int = SAMPLE_LINES) -> list[dict[str, Any]]:
    """The JSON objects among the first `lines` non-empty lines of the jsonl file `path` (damaged,
    non-JSON and non-object lines are left out: reading the file quarantines them)."""
    out: list[dict[str, Any]] = []
    seen = 0
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        for _, _, line, damage in _lines(decompressed_chunks(fh, comp), _MAX_LINE):
            if damage is not None:
                break
            if line is not None and not line.strip():
                continue
            seen += 1
            if line is not None:
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError):
                    obj = None
                if isinstance(obj, dict):
                    out.append(obj)
            if seen >= lines:
                break
    return out


def check_jsonl_fields(source: str, files: Sequence[tuple[str, str | None]], fields: Fields) -> None:
    """A `ConfigError` when the sampled records of a jsonl source (its first file with JSON objects;
    `files` are (path, compression) in the source's order) lack its text field or its id field, naming
    the source, the file, the field and the fields the records do have."""
    for path, comp in files[:SAMPLE_FILES]:
        objs = sample_objects(path, comp)
        if not objs:
            continue
        for field, key in ((fields.text, "text_key"), (fields.id, "id_key")):
            if field is not None and not any(o.get(field) is not None for o in objs):
                raise ConfigError(
                    f"source {source!r}: none of the first {len(objs)} records of {path} has a {field!r} field "
                    f"(the source's {key}); their fields: {_field_counts(objs)}. {_FIX}"
                )
        if fields.id is not None:
            pairs = [(o.get(fields.id), o.get(fields.text)) for o in objs]
            check_sample_ids(source, f"the first {len(objs)} records of {path}", pairs, fields.id)
        return


def check_parquet_ids(source: str, path: str, fields: Fields) -> None:
    """`check_sample_ids` on the first row group of the Parquet file `path` (one row group per source,
    like the footer check; a file that does not read is left to the reader to quarantine)."""
    assert fields.id is not None
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        try:
            pf = pq.ParquetFile(fh)
            if not pf.metadata.num_row_groups:
                return
            t = pf.read_row_group(0, columns=[fields.id, fields.text])
            pairs = list(zip(t.column(0).to_pylist(), t.column(1).to_pylist(), strict=True))
        except (OSError, pa.ArrowException, UnicodeDecodeError):
            return
    check_sample_ids(source, f"the first row group ({len(pairs):,} rows) of {path}", pairs, fields.id)


def check_sample_ids(source: str, what: str, pairs: Sequence[tuple[Any, Any]], key: str) -> None:
    """A `ConfigError` when (id, text) `pairs` sampled from a source give one id to different texts
    (the same record twice is no repeat: exact dedup keeps one): refused before any work, where the
    corpus-wide check (`ids.check_unique`) would fail after reading everything."""
    texts: dict[str, set[str]] = {}
    for doc_id, text in pairs:  # a record without a text is quarantined, its id taken by no document
        if doc_id is not None and not isinstance(doc_id, bool) and isinstance(text, str):
            texts.setdefault(str(doc_id), set()).add(text)
    repeated = [i for i, t in texts.items() if len(t) > 1]
    if repeated:
        n = sum(len(texts[i]) - 1 for i in repeated)
        raise ConfigError(
            f"source {source!r}: {len(repeated):,} ids of the source's id_key {key!r} name more than one document in "
            f"{what} ({n:,} repeats), e.g. {repeated[0]!r}. Ids must be unique in a document dataset: dedup and "
            "decontamination name documents by them. Repair the data, or unset id_key so that selene names "
            f"documents <source>/<file>#<record> (the field goes to meta.{key} like any other)"
        )


def _field_counts(objs: Sequence[dict[str, Any]], most: int = 20) -> str:
    counts = Counter(k for o in objs for k, v in o.items() if v is not None)
    shown = [f"{k} ({n})" for k, n in counts.most_common(most)]
    more = len(counts) - len(shown)
    return (", ".join(shown) or "none") + (f" and {more} more" if more > 0 else "")


def check_read(
    sources: Sequence[tuple[str, Fields]], file_counts: Sequence[tuple[str, Mapping[str, Mapping[str, int]]]]
) -> None:
    """An `InputError` when every record of a source was ``malformed:no_text``: its text field is
    missing or null everywhere, so it would contribute nothing, silently. `file_counts` are (source,
    the records per source and reason that `files.process_file` counted) for every input file."""
    records: Counter[str] = Counter()
    no_text: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for source, per_source in file_counts:
        files[source] += 1
        for counts in per_source.values():
            records[source] += sum(counts.values())
            no_text[source] += counts.get("malformed:no_text", 0)
    for name, fields in sources:
        if records[name] and no_text[name] == records[name]:
            raise InputError(
                f"source {name!r}: none of its {records[name]:,} records in {files[name]} file(s) has a text in "
                f"the field {fields.text!r} (the source's text_key): every one would be quarantined as "
                f"malformed:no_text. {_FIX}"
            )
