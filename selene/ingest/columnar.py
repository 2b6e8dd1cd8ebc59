"""Parquet files and `datasets` directories (Arrow files saved with `save_to_disk`) as ingest input.

Parquet is read one row group at a time and only the columns a source uses, so memory is bounded by
a row group whatever the file size; an Arrow file one record batch at a time. Which columns are the
text, the id and the meta is the source's `Fields`; a file whose schema does not have them is a
configuration mistake (`ConfigError` naming the file and its columns), found from the footer before
any row is read. Damage is quarantined as the other readers do: an unreadable footer as one record
for the file, an unreadable row group as one record per row (the footer knows how many), a null or
invalid text as one record for its row; each detail names the file, the row group (Arrow: record
batch) and the row, 0-based as pyarrow counts them.
"""

from __future__ import annotations

import datetime
import glob as _glob
import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from selene.errors import ConfigError, UsageError
from selene.ingest.records import Fields, RawRecord, meta_and_source
from selene.io import fs

DATASET_FILES = ("state.json", "dataset_info.json", "dataset_dict.json")
"""The files beside the data of a directory written by `datasets`' save_to_disk."""

_DAMAGE = (OSError, pa.ArrowException)  # what pyarrow raises on bytes that do not decode
_FIX = "Set the source's text_key / id_key / meta_keys (YAML `text_key: COLUMN`, CLI --source 'NAME[text_key=COLUMN]=GLOB')"


# ------------------------------------------------------------------------------------- files


def expand_source(pattern: str) -> tuple[list[str], str]:
    """The files of a source pattern and its root (`fs.expand`), where a `datasets` directory (one
    with a ``state.json``), named by the pattern or matched by it, stands for its Arrow files in the
    dataset's own order."""
    files, root = fs.expand(pattern)
    f, p = fs.get_fs(pattern)
    if _glob.has_magic(p):
        dirs = [m for m, info in f.glob(p, detail=True).items() if info.get("type") == "directory"]
    else:
        dirs = [p] if f.isdir(p) else []
    datasets = sorted(fs.unstrip(f, d.rstrip("/")) for d in dirs if f.exists(fs.join(d, "state.json")))
    if not datasets:
        return files, root
    groups = {x: [x] for x in files if not any(x.startswith(d + "/") for d in datasets)}
    for d in datasets:
        groups[d] = _dataset_files(d)
    return [x for key in sorted(groups) for x in groups[key]], root


def _dataset_files(directory: str) -> list[str]:
    state = fs.join(directory, "state.json")
    try:
        names = [entry["filename"] for entry in json.loads(fs.read_text(state))["_data_files"]]
    except (ValueError, KeyError, TypeError) as e:
        raise UsageError(
            f"{state}: not the state.json of a `datasets` save_to_disk directory ({e!r})"
        ) from None
    files = [fs.join(directory, n) for n in names]
    for path in files:
        if not fs.exists(path):
            raise UsageError(f"{path}: listed in {state} but missing")
    return files


def check_columns(path: str, kind: str, fields: Fields) -> bool:
    """Raise a `ConfigError` when the Parquet or Arrow file `path` lacks the columns of `fields` or
    its text column holds no strings; False when its schema cannot be read (reading it quarantines
    the file), True when it fits."""
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        try:
            schema = pq.ParquetFile(fh).schema_arrow if kind == "parquet" else _ipc_open(fh)[0]
        except _DAMAGE:
            return False
    _columns(schema, fields, path)
    return True


# ----------------------------------------------------------------------------------- readers


def read_parquet(path: str, max_record_bytes: int, fields: Fields) -> Iterator[RawRecord]:
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        try:
            pf = pq.ParquetFile(fh)
        except _DAMAGE as e:
            yield RawRecord(
                1, reason="malformed:parquet",
                detail=f"{path}: the Parquet footer cannot be read ({_message(e)}); no row of the file was read",
            )  # fmt: skip
            return
        cols = _columns(pf.schema_arrow, fields, path)
        first = 0
        for g in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(g).num_rows
            where = f"{path}: row group {g}"
            try:
                yield from _records(
                    pf.read_row_group(g, columns=cols.names), cols, first, where, max_record_bytes
                )
            except _Unreadable as e:
                yield from _lost(first, n, where, e.reason, e.why)
            except _DAMAGE as e:
                yield from _lost(
                    first, n, where, "malformed:row_group", f"the row group cannot be read ({_message(e)})"
                )
            first += n


def read_arrow(path: str, max_record_bytes: int, fields: Fields) -> Iterator[RawRecord]:
    """An Arrow IPC file: the stream format `datasets` writes, or the file format (Feather v2).
    Batch lengths live in the stream itself, so after a damaged batch the rest of the file is one
    quarantine record."""
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        try:
            schema, batches = _ipc_open(fh)
        except _DAMAGE as e:
            yield RawRecord(
                1, reason="malformed:arrow", detail=f"{path}: not a readable Arrow IPC file ({_message(e)})"
            )
            return
        cols = _columns(schema, fields, path)
        first, b = 0, 0
        while True:
            where = f"{path}: record batch {b}"
            try:
                batch = next(batches)
            except StopIteration:
                return
            except _DAMAGE as e:
                yield RawRecord(
                    first + 1, reason="malformed:arrow",
                    detail=f"{where} (from row {first} of the file) cannot be read ({_message(e)}); the rest of the file was not read",
                )  # fmt: skip
                return
            try:
                yield from _records(batch.select(cols.names), cols, first, where, max_record_bytes)
            except _Unreadable as e:
                yield from _lost(first, batch.num_rows, where, e.reason, e.why)
            first += batch.num_rows
            b += 1


def _ipc_open(fh: IO[bytes]) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    if fh.read(6) == b"ARROW1":  # the file format's magic; the stream format starts with a message
        fh.seek(0)
        reader = pa.ipc.open_file(fh)
        return reader.schema, (reader.get_batch(i) for i in range(reader.num_record_batches))
    fh.seek(0)
    stream = pa.ipc.open_stream(fh)
    return stream.schema, iter(stream)


# ------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class _Columns:
    """The columns a source reads from one file, checked against its schema."""

    text: str
    id: str | None
    id_is_int: bool
    meta: tuple[str, ...]
    convert: frozenset[str]  # meta columns whose values JSON cannot hold as they are (dates, bytes ...)

    @property
    def names(self) -> list[str]:
        return [self.text, *([self.id] if self.id else []), *self.meta]


def _columns(schema: pa.Schema, fields: Fields, path: str) -> _Columns:
    names = schema.names
    listing = ", ".join(f"{n} ({schema.field(i).type})" for i, n in enumerate(names))

    def need(column: str, key: str) -> pa.DataType:
        if column not in names:
            raise ConfigError(
                f"{path}: no column {column!r} (the source's {key}); its columns: {listing}. {_FIX}"
            )
        return schema.field(column).type

    text_type = need(fields.text, "text_key")
    if not (pa.types.is_string(text_type) or pa.types.is_large_string(text_type)):
        raise ConfigError(
            f"{path}: column {fields.text!r} (the source's text_key) is of type {text_type}, not string; "
            f"its columns: {listing}. {_FIX}"
        )
    id_is_int = False
    if fields.id is not None:
        id_type = need(fields.id, "id_key")
        id_is_int = pa.types.is_integer(id_type)
        if not (id_is_int or pa.types.is_string(id_type) or pa.types.is_large_string(id_type)):
            raise ConfigError(
                f"{path}: column {fields.id!r} (the source's id_key) is of type {id_type}, not string or integer"
            )
    if fields.meta is None:  # binary columns (images, raw bytes) are payload, not a description
        meta = tuple(
            n for n in names if n not in (fields.text, fields.id) and not _binary(schema.field(n).type)
        )
    else:
        for k in fields.meta:
            need(k, "meta_keys")
        meta = fields.meta
    return _Columns(
        fields.text,
        fields.id,
        id_is_int,
        meta,
        frozenset(m for m in meta if _needs_plain(schema.field(m).type)),
    )


class _Unreadable(Exception):
    """A column of a row group (Arrow: batch) that decodes but cannot become Python values."""

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(why)
        self.reason, self.why = reason, why


def _records(
    data: pa.Table | pa.RecordBatch, cols: _Columns, first: int, where: str, max_bytes: int
) -> Iterator[RawRecord]:
    """The records of one row group or batch whose first row is row `first` of the file. Every
    conversion happens before the first record is yielded, so a failure quarantines the group whole."""
    n = data.num_rows
    bad: dict[int, tuple[str, str]] = {}  # row → (reason, detail) of the rows that are no document
    text = data.column(cols.text)
    texts = _texts(text, cols.text, bad)
    for r in _nulls(text):
        bad[r] = ("malformed:no_text", f"{cols.text!r} is null")
    lengths = pc.binary_length(text)
    if n and (pc.max(lengths).as_py() or 0) > max_bytes:
        for r in np.flatnonzero(pc.greater(lengths, max_bytes).to_numpy(zero_copy_only=False)).tolist():
            bad.setdefault(r, ("malformed:too_large", f"text longer than max_record_bytes={max_bytes}"))
    ids: list[Any] | None = None
    if cols.id is not None:
        column = data.column(cols.id)
        ids = _pylist(pc.cast(column, pa.string()) if cols.id_is_int else column, cols.id)
        for r in _nulls(column):
            bad.setdefault(r, ("malformed:no_id", f"{cols.id!r} (the source's id_key) is null"))
    metas, sources = _metas(data, cols, n)
    for i in range(n):
        doc_id = ids[i] if ids else None  # a quarantined row keeps its id too, where it has one
        if i in bad:
            reason, detail = bad[i]
            yield RawRecord(
                first + i + 1, meta=metas[i], reason=reason, detail=f"{where}, row {i}: {detail}", id=doc_id
            )
        else:
            yield RawRecord(first + i + 1, text=texts[i], meta=metas[i], source=sources[i], id=doc_id)


def _lost(first: int, n: int, where: str, reason: str, why: str) -> Iterator[RawRecord]:
    for i in range(n):
        yield RawRecord(
            first + i + 1, reason=reason, detail=f"{where}, row {i}: {why}; its {n} rows are quarantined"
        )


def _texts(
    column: pa.ChunkedArray | pa.Array, name: str, bad: dict[int, tuple[str, str]]
) -> list[str | None]:
    """The column as Python strings; a value that is not UTF-8 (Parquet does not check) is marked bad
    with the offset of its first invalid byte, as the jsonl reader does."""
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        pass
    out: list[str | None] = []
    for r, raw in enumerate(pc.cast(column, pa.large_binary()).to_pylist()):
        try:
            out.append(None if raw is None else raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            out.append(None)
            bad[r] = ("malformed:utf8", f"{name!r} has invalid UTF-8 at byte {e.start}")
    return out


def _pylist(column: pa.ChunkedArray | pa.Array, name: str) -> list[Any]:
    try:
        return column.to_pylist()
    except UnicodeDecodeError as e:
        raise _Unreadable("malformed:utf8", f"column {name!r} holds invalid UTF-8 ({e.reason})") from None


def _metas(
    data: pa.Table | pa.RecordBatch, cols: _Columns, n: int
) -> tuple[list[dict[str, Any]], list[str | None]]:
    names = cols.meta
    lists = []
    for m in names:
        values = _pylist(data.column(m), m)
        lists.append([_plain(v) for v in values] if m in cols.convert else values)
    rows: list[dict[str, Any]] = (
        [dict(zip(names, vals, strict=True)) for vals in zip(*lists, strict=True)]
        if names
        else [{} for _ in range(n)]
    )
    for m in names:  # a null is a missing value: the key is left out, as a jsonl object would
        for r in _nulls(data.column(m)):
            del rows[r][m]
    if "meta" not in names and "pile_set_name" not in names:
        return rows, [None] * n
    pairs = [meta_and_source(row) for row in rows]
    return [m for m, _ in pairs], [s for _, s in pairs]


def _nulls(column: pa.ChunkedArray | pa.Array) -> list[int]:
    if not column.null_count:
        return []
    return np.flatnonzero(pc.is_null(column).to_numpy(zero_copy_only=False)).tolist()


def _binary(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)


def _needs_plain(t: pa.DataType) -> bool:
    if pa.types.is_temporal(t) or pa.types.is_decimal(t) or _binary(t):
        return True
    if pa.types.is_dictionary(t):
        return _needs_plain(t.value_type)
    return any(_needs_plain(t.field(i).type) for i in range(t.num_fields))


def _plain(v: Any) -> Any:
    """`v` as a value JSON holds: dates and times in ISO 8601, decimals and durations as strings,
    bytes as UTF-8 (invalid bytes replaced)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, datetime.date | datetime.time):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, Decimal | datetime.timedelta):
        return str(v)
    return v


def _message(e: BaseException) -> str:
    """pyarrow's message on one line (its thrift errors span several)."""
    return " ".join(str(e).split()) or type(e).__name__
