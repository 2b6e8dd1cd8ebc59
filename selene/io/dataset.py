"""The document dataset on disk (docs/architecture.md, docs/topics/data-contracts.md).

A directory of ``part-NNNNN.parquet`` shards (``id``, ``text``, ``source``, ``meta``), a
``removed.parquet`` (``id``, ``source``, ``reason``, ``detail``) and a ``manifest.json`` written
last: the manifest is the completion marker, so a directory without one is unfinished.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import pyarrow as pa
import pyarrow.parquet as pq

from selene.errors import InputError, PathError, SeleneError
from selene.io import fs, integrity
from selene.io.manifests import parse_manifest
from selene.io.results import StageResult
from selene.manifest import DocumentManifest, ShardEntry, StageManifest
from selene.manifest import StageManifest as AnyManifest

DOC_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("meta", pa.string(), nullable=False),
    ]
)
REMOVED_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("detail", pa.string(), nullable=False),
        # the document's meta as JSON (URL and WARC record id of web pages), so a removed page can be
        # found again; null where a stage does not know it. Files written before it lack the column.
        pa.field("meta", pa.string(), nullable=True),
    ]
)
MANIFEST = "manifest.json"
REMOVED = "removed.parquet"
# zstd: ~30% smaller than snappy on web text at a similar decode speed. Statistics off for `text`
# because min/max of whole documents bloat the footer and help no query.
_WRITE_OPTS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "write_statistics": ["id", "source"],
    "use_dictionary": ["source"],
}


WORK = "_work"  # a stage's intermediate files, under <out>/_work/<fingerprint>/


M = TypeVar("M", bound=StageManifest)


def open_output(out: str, fingerprint: str, force: bool, kind: type[M]) -> StageResult[M] | None:
    """The result of a finished run when `out` is complete for `fingerprint` (the stage is skipped);
    otherwise `out` is made ready for a new run: writable, manifest removed (from here on the directory
    is unfinished), leftovers of killed writers deleted. Returns None then."""
    if not force and manifest_matches(out, fingerprint):
        fs.rm(fs.join(out, WORK), recursive=True)  # left behind when a run was killed right after its manifest
        return StageResult(out, skipped=True, manifest=read_manifest(out, kind))
    fs.check_writable(out)
    fs.makedirs(out)  # the run starts here: its output exists from now on, unfinished
    fs.rm(fs.join(out, MANIFEST))
    fs.remove_temporaries(out)
    return None


def shard_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


@dataclass
class WrittenFile:
    name: str
    rows: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "rows": self.rows, "bytes": self.bytes, "sha256": self.sha256}

    def entry(self) -> ShardEntry:
        """The file as a manifest lists it."""
        return ShardEntry(name=self.name, rows=self.rows, bytes=self.bytes, sha256=self.sha256)


ROW_GROUP_BYTES = 4 << 20
"""Default bytes of string data per Parquet row group: what a reader holds to get at one document."""
ROW_GROUP_ROWS = 100_000
"""Default cap on rows per row group (tiny rows: removal records, ids)."""


def row_bytes(table: pa.Table | pa.RecordBatch) -> Any:
    """Bytes of string and binary data in each row (numpy int64): what sizes row groups, batches, shards."""
    import numpy as np
    import pyarrow.compute as pc

    total = np.zeros(table.num_rows, dtype=np.int64)
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_binary(col.type) or pa.types.is_large_string(col.type):
            total += pc.fill_null(pc.binary_length(col), 0).to_numpy(zero_copy_only=False)
    return total


def byte_cuts(sizes: Any, max_bytes: int, max_rows: int | None = None) -> list[int]:
    """Start offsets of consecutive slices of rows with `sizes` bytes: each slice holds at most
    `max_bytes` (but at least one row) and at most `max_rows` rows. Returns [0, ..., n] boundaries."""
    import numpy as np

    sizes = np.asarray(sizes, dtype=np.int64)
    n = sizes.size
    cuts = [0]
    if n == 0:
        return cuts
    ends = np.cumsum(sizes)
    while cuts[-1] < n:
        start = cuts[-1]
        base = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, base + max_bytes, side="right"))  # rows fitting in max_bytes
        stop = max(stop, start + 1)
        if max_rows is not None:
            stop = min(stop, start + max_rows)
        cuts.append(min(stop, n))
    return cuts


class ParquetSink:
    """Streams rows into one Parquet file, atomically (temp name, renamed on close).

    Row groups are sized in bytes of string data (`row_group_bytes`, and at most `row_group` rows),
    so a reader's memory does not follow document length. Memory is one row group: rows are buffered
    until one is full.

    A context manager: leaving the block by an exception aborts the file (nothing is kept), leaving it
    normally closes it; `written` is then the file's entry::

        with ParquetSink(path, DOC_SCHEMA) as sink:
            sink.add(**doc)
        entry = sink.written
    """

    _written: WrittenFile | None = None

    def __init__(
        self, path: str, schema: pa.Schema, row_group: int | None = None, row_group_bytes: int = ROW_GROUP_BYTES
    ) -> None:
        self.path, self.schema = path, schema
        self.row_group = row_group or ROW_GROUP_ROWS
        self.row_group_bytes = row_group_bytes
        self.rows = 0
        self.groups = 0  # row groups written so far
        self._cols: dict[str, list[Any]] = {n: [] for n in schema.names}
        self._buffered = 0
        self._strings = [n for n in schema.names if pa.types.is_string(schema.field(n).type)]
        self._ctx = fs.atomic_open(path, "wb", digest=True)  # hashed as written: no second read
        self._file: Any = self._ctx.__enter__()  # fs._Guarded: has hexdigest()
        self._writer = pq.ParquetWriter(self._file, schema, **_opts(schema))

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    @property
    def written(self) -> WrittenFile:
        """The closed file's entry (name, rows, bytes, sha256)."""
        if self._written is None:
            raise RuntimeError(f"{self.path}: not closed yet")
        return self._written

    def add(self, **row: Any) -> None:
        for name, col in self._cols.items():
            col.append(row[name] if name in row or not self.schema.field(name).nullable else None)
        self._buffered += sum(len(row.get(n) or "") for n in self._strings)  # characters: bytes for ASCII
        if len(self._cols[self.schema.names[0]]) >= self.row_group or self._buffered >= self.row_group_bytes:
            self._flush()

    def add_table(self, table: pa.Table) -> None:
        """Write `table` (after the buffered rows) as row groups of its own: a reader can take it
        back with the row groups numbered from `groups` before the call to `groups` after."""
        self._flush()
        if not table.num_rows:
            return
        for col in self.schema:  # a nullable column the table lacks is all null
            if col.nullable and col.name not in table.column_names:
                table = table.append_column(col.name, pa.nulls(table.num_rows, col.type))
        table = table.select(self.schema.names).cast(self.schema)
        cuts = byte_cuts(row_bytes(table), self.row_group_bytes, self.row_group)
        for lo, hi in itertools.pairwise(cuts):
            self._writer.write_table(table.slice(lo, hi - lo), row_group_size=hi - lo)
            self.groups += 1
        self.rows += table.num_rows

    def _flush(self) -> None:
        n = len(self._cols[self.schema.names[0]])
        if n:
            self._writer.write_table(pa.table(self._cols, schema=self.schema), row_group_size=n)
            self.groups += 1
            self.rows += n
            self._cols = {k: [] for k in self._cols}
            self._buffered = 0

    def close(self) -> WrittenFile:
        if self._written is not None:
            return self._written
        try:
            self._flush()
            self._writer.close()
        except BaseException:  # a full disk fails the last row group or the footer: nothing is kept
            self.abort()
            raise
        digest = self._file.hexdigest()
        self._ctx.__exit__(None, None, None)
        name = self.path.rsplit("/", 1)[-1]
        self._written = WrittenFile(name, self.rows, fs.size(self.path), digest or fs.sha256_file(self.path))
        return self._written

    def abort(self) -> None:
        if self._written is not None:  # closed already: the file is whole and stays
            return
        with contextlib.suppress(Exception):
            self._writer.close()
        self._writer.is_open = False  # a close that failed must not be retried by its __del__ (a traceback)
        with contextlib.suppress(Exception):
            self._ctx.__exit__(RuntimeError, RuntimeError("aborted"), None)

    def __del__(self) -> None:
        # dropped unfinished (its caller failed on another file): remove the temporary, quietly
        if getattr(self, "_writer", None) is not None and self._writer.is_open:
            self.abort()


def _opts(schema: pa.Schema) -> dict[str, Any]:
    opts = dict(_WRITE_OPTS)
    names = set(schema.names)
    opts["write_statistics"] = [c for c in opts["write_statistics"] if c in names]
    opts["use_dictionary"] = [c for c in opts["use_dictionary"] if c in names]
    return opts


def write_table(path: str, table: pa.Table, row_group: int | None = None, row_group_bytes: int = ROW_GROUP_BYTES) -> WrittenFile:
    sink = ParquetSink(path, table.schema, row_group, row_group_bytes)
    try:
        sink.add_table(table)
    except BaseException:
        sink.abort()
        raise
    return sink.close()


# ------------------------------------------------------------------------------------- reading


def open_parquet(path: str) -> pq.ParquetFile:
    """`path` as a Parquet file. A shard listed in the manifest beside it is checked against the
    sha256 recorded there (once per process, as it is read: `integrity`); a read that fails to
    decode is an `InputError` naming the file and the row group."""
    return integrity.open_verified(path)


def list_shards(directory: str) -> list[str]:
    """The shard files of a finished dataset, in order; a clear error when it is not one."""
    manifest = read_manifest(directory)
    if manifest is None:
        raise not_a_dataset(directory)
    return [fs.join(directory, s.name) for s in manifest.shards]


def not_a_dataset(directory: str) -> SeleneError:
    """Why `directory`, which has no manifest, is not a dataset to read, pointing the right way: a
    wrong path (missing, a file, some other folder) or a stage's output it began and did not finish
    (empty, or shards without the manifest that completes them: the message says to rerun it). Each
    is a `PathError` (exit 2): the path given is not a finished dataset, found before any work."""
    filesystem, path = fs.get_fs(directory)
    if not filesystem.exists(path):
        return PathError(f"{directory!r} does not exist: give the output folder of a selene stage "
                          "(did you run the stage that writes it?)")
    if not filesystem.isdir(path):
        parent = os.path.dirname(directory.rstrip("/")) or "."
        hint = (f"give the folder that holds it: {parent!r}" if read_manifest(parent) is not None
                else f"a dataset is a folder of part-NNNNN.parquet shards with a {MANIFEST}")
        return PathError(f"{directory!r} is a file, not a dataset: {hint}")
    names = sorted(os.path.basename(n.rstrip("/")) for n in fs.ls(directory))
    if not names or any(n.startswith("part-") or n == REMOVED or ".tmp-" in n for n in names):
        return PathError(f"{directory!r} has no {MANIFEST}: the stage that writes it did not finish. Rerun it; "
                          "finished shards are reused.")
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    what = ("a training run (checkpoints), not documents or tokens" if "checkpoints" in names or "metrics.jsonl" in names
            else f"no {MANIFEST} and no shards")
    return PathError(f"{directory!r} is not a selene dataset: it holds {shown}: {what}. Give the output folder "
                      "of a stage (ingest, quality, dedup, spans, substrings, decontaminate, blend or tokenize)")


def require_documents(directory: str, stage: str) -> DocumentManifest:
    """The manifest of a finished, non-empty document dataset that `stage` reads; a clear error otherwise."""
    m = read_manifest(directory)
    if m is None:
        list_shards(directory)  # raises the message that says what to run
    assert m is not None
    if not isinstance(m, DocumentManifest):
        raise PathError(
            f"{directory!r} holds the output of `{m.stage}`, not documents: nothing to {stage} "
            "(give a document dataset: the output of ingest, quality, dedup, spans, substrings, decontaminate or blend)"
        )
    if not sum(s.rows for s in m.shards):
        raise PathError(f"{directory!r} is an empty dataset (0 documents): nothing to {stage}")
    return m


def earlier_output(prev: str, inp: str, out: str, stage: str, kind: type[M]) -> M:
    """The manifest of `prev`, an earlier finished output of `stage` given with ``--against``: not
    this run's input or output, there, finished, readable, of that stage. Each refusal is the user's
    to fix (a `PathError`, exit 2) and names the option and the folder."""
    where = f"{stage} --against {prev}"
    if fs.join(prev, "") in (fs.join(inp, ""), fs.join(out, "")):
        raise PathError(f"{where}: an earlier output must not be this run's input or output")
    if not fs.exists(prev):
        raise PathError(f"{where}: no such directory")
    try:
        m = read_manifest(prev)
    except InputError as e:  # a damaged manifest: the earlier output's fault, refused before any work
        raise PathError(f"{where}: {e}") from None
    if m is None:
        raise PathError(f"{where}: no manifest.json: not a finished output (an unfinished run?)")
    if not isinstance(m, kind):
        raise PathError(f"{where}: the output of `{m.stage}`, not of `{stage}`; give an earlier {stage} output")
    return m


def iter_batches(directory: str, columns: Sequence[str] | None = None, batch_size: int = 1024) -> Iterator[pa.RecordBatch]:
    for path in list_shards(directory):
        yield from open_parquet(path).iter_batches(batch_size=batch_size, columns=list(columns) if columns else None)


def take_rows(path: str, rows: Any, columns: Sequence[str]) -> pa.Table:
    """Rows `rows` (sorted indices) of a Parquet file, reading one row group at a time and keeping
    only the wanted rows of each: memory is one row group plus the result."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.int64)
    pf = open_parquet(path)
    parts, start = [], 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        lo, hi = np.searchsorted(rows, [start, start + n])
        if hi > lo:
            parts.append(pf.read_row_group(g, columns=list(columns)).take(pa.array(rows[lo:hi] - start)))
        start += n
    if not parts:
        return pf.schema_arrow.empty_table().select(list(columns))
    return pa.concat_tables(parts)


def value_counts(column: pa.ChunkedArray | pa.Array) -> dict[str, int]:
    """Occurrences of each value of a string column, counted in Arrow."""
    import pyarrow.compute as pc

    return {str(v["values"]): int(v["counts"]) for v in pc.value_counts(column).to_pylist()}


def iter_row_groups(path: str, columns: Sequence[str] | None = None) -> Iterator[pa.Table]:
    """A shard one row group at a time: memory is bounded by the writer's row-group size in bytes,
    whatever the documents' length (`iter_batches` counts rows)."""
    pf = open_parquet(path)
    for g in range(pf.metadata.num_row_groups):
        yield pf.read_row_group(g, columns=list(columns) if columns else None)


def iter_documents(directory: str) -> Iterator[dict[str, Any]]:
    for batch in iter_batches(directory):
        yield from batch.to_pylist()


def read_removed(directory: str) -> pa.Table:
    return open_parquet(fs.join(directory, REMOVED)).read()


# ------------------------------------------------------------------------------------ manifest


@overload
def read_manifest(directory: str) -> AnyManifest | None: ...
@overload
def read_manifest(directory: str, kind: type[M]) -> M | None: ...
def read_manifest(directory: str, kind: type[StageManifest] | None = None) -> StageManifest | None:
    """The validated manifest of `directory` (of the model `kind` when given); None when there is none.
    A manifest this selene cannot read is an `InputError` that names the file and the fields at fault."""
    path = fs.join(directory, MANIFEST)
    if not fs.exists(path):
        return None
    try:
        data = json.loads(fs.read_text(path))
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: corrupt manifest ({e}); delete it to rerun the stage") from None
    m = parse_manifest(data, path)
    if kind is not None and not isinstance(m, kind):
        expected = kind.model_fields["stage"].default
        raise InputError(f"{path}: the manifest of a `{m.stage}` output, where a `{expected}` output was expected")
    return m


def write_manifest(directory: str, manifest: StageManifest) -> None:
    """Write `manifest` as ``<directory>/manifest.json``, atomically: call it last (the completion marker)."""
    body = manifest.model_dump(mode="json", by_alias=True)
    fs.atomic_write(fs.join(directory, MANIFEST), json.dumps(body, indent=2, sort_keys=False) + "\n")


def manifest_matches(directory: str, fingerprint: str) -> bool:
    """True when `directory` holds a finished output made from the same inputs and config, every file
    of it as its manifest lists it (`damaged_files`)."""
    m = read_manifest(directory)
    if m is None or m.fingerprint != fingerprint:
        return False
    damaged = damaged_files(directory, m)
    if damaged:
        print(
            f"{directory}: {', '.join(damaged)} differ(s) from what its manifest records (size or "
            "sha256); running the stage again to rewrite the output",
            file=sys.stderr,
        )
    return not damaged


def damaged_files(directory: str, m: Any) -> list[str]:
    """The files manifest `m` lists in `directory` that are missing or differ from it in size or
    sha256. A finished output is checked before a rerun reuses it: one pass over its bytes (a rerun
    that skips reads nothing else), so a damaged output is rewritten, never passed on as complete."""
    bad = []
    for entry in [*m.shards, *([m.removed] if getattr(m, "removed", None) is not None else [])]:
        path = fs.join(directory, entry.name)
        if not fs.exists(path) or fs.size(path) != entry.bytes or fs.sha256_file(path) != entry.sha256:
            bad.append(entry.name)
    return bad


def to_meta_json(meta: dict[str, Any]) -> str:
    return json.dumps(meta, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def merge_removed(out: str, parts: Iterable[str]) -> WrittenFile:
    """``<out>/removed.parquet`` from per-shard removed files, in the given order (streamed, atomic)."""
    with ParquetSink(fs.join(out, REMOVED), REMOVED_SCHEMA, 10_000) as sink:
        for p in parts:
            sink.add_table(open_parquet(p).read())
    return sink.written
