"""Shards are checked as they are read: the sha256 their manifest records, and errors that name them.

A Parquet shard listed in the ``manifest.json`` next to it (`shards` or `removed`, with its bytes and
sha256) is verified the first time a process opens it: the file is read once, sequentially, while it
is hashed, and Parquet is parsed from those bytes, so verification costs no second pass over the file
(Parquet reads its footer first, so hashing "as pyarrow reads" would not be sequential). A local file is
memory-mapped (the hash faults its pages in once; Parquet decodes from them, no copy, no heap); a remote
one is read into one buffer, or, above `BUFFER_MAX`, hashed in a streaming pass of its own before it
is opened (bounded memory). A match is remembered for the process (keyed by path, size and
modification time), so later opens of the same file, such as readers of one column or of a row-group
range, go straight to the file.

A file that fails to decode (ZSTD, Thrift, ArrowInvalid, truncated) is an `InputError` naming the file
and the row group. Work files (no manifest beside them) are not verified, only named.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from selene.errors import InputError
from selene.io import fs

BUFFER_MAX = 256 << 20
"""Largest remote shard read into memory while it is hashed (shards default to 32 MiB); larger ones
are hashed in a pass of their own, then read from the file. Local files are memory-mapped instead."""
_CHUNK = 4 << 20
_MANIFEST = "manifest.json"
_DECODE_ERRORS = (OSError, pa.ArrowException)

T = TypeVar("T")


@dataclass(frozen=True)
class Expected:
    """What a manifest says of one file."""

    manifest: str
    bytes: int
    sha256: str


_listings: dict[str, tuple[Any, dict[str, Expected]]] = {}  # manifest path -> (its signature, entries)
_verified: dict[tuple[str, Any], str] = {}  # (path, signature) -> sha256 checked in this process


def _signature(path: str) -> Any:
    """What changes when a file is rewritten: (size, mtime) locally, the store's own fields elsewhere."""
    f, p = fs.get_fs(path)
    if fs.is_local(path):
        st = os.stat(p)
        return (st.st_size, st.st_mtime_ns, st.st_ino)
    info = f.info(p)
    return tuple(str(info.get(k)) for k in ("size", "mtime", "LastModified", "ETag", "etag", "created"))


def expected(path: str) -> Expected | None:
    """The size and sha256 that the manifest beside `path` records for it; None when there is no
    manifest (a work file, an unfinished output) or it does not list the file."""
    directory, _, name = path.rstrip("/").rpartition("/")
    manifest = fs.join(directory or ".", _MANIFEST)
    try:
        sig = _signature(manifest)
    except (FileNotFoundError, OSError):
        _listings.pop(manifest, None)
        return None
    cached = _listings.get(manifest)
    if cached is None or cached[0] != sig:
        cached = (sig, _entries(manifest))
        _listings[manifest] = cached
    return cached[1].get(name)


def _entries(manifest: str) -> dict[str, Expected]:
    """The Parquet files a manifest lists (plain JSON: the typed reader is for stages, not per open)."""
    try:
        data = json.loads(fs.read_bytes(manifest))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}  # an unreadable manifest is reported by the stage that reads it (read_manifest)
    if not isinstance(data, dict):
        return {}
    files = list(data.get("shards") or [])
    if isinstance(data.get("removed"), dict):
        files.append(data["removed"])
    out = {}
    for f in files:
        ok = isinstance(f, dict) and isinstance(f.get("sha256"), str) and isinstance(f.get("bytes"), int)
        if ok and str(f.get("name", "")).endswith(".parquet"):
            out[f["name"]] = Expected(manifest, f["bytes"], f["sha256"])
    return out


def forget() -> None:
    """Drop what this process has verified (tests; a long-lived process that wants to re-check)."""
    _listings.clear()
    _verified.clear()


def _rerun_hint(exp: Expected) -> str:
    return (
        f"The file changed after {exp.manifest} was written: restore it from a copy, or rerun the stage "
        "that wrote this dataset with --force to rewrite it"
    )


def _hint(path: str) -> str:
    exp = expected(path)
    if exp is not None:
        return _rerun_hint(exp)
    if "/_work/" in path:
        return "It is a work file of this command: rerun the command with --force"
    return "Rerun the stage that wrote it with --force, or restore the file"


def open_verified(path: str) -> pq.ParquetFile:
    """`path` as a Parquet file, checked against its manifest's sha256 first when it has one."""
    exp = expected(path)
    if exp is None:
        return _open(path, None)
    try:
        sig = _signature(path)
    except FileNotFoundError:
        raise InputError(f"{path}: not found, but {exp.manifest} lists it. {_rerun_hint(exp)}.") from None
    if _verified.get((path, sig)) == exp.sha256:
        return _open(path, None)
    size = sig[0] if fs.is_local(path) else fs.size(path)
    if size != exp.bytes:
        raise InputError(_mismatch(path, exp, size, "", None))
    buf: pa.Buffer | None = None
    if size <= BUFFER_MAX or fs.is_local(path):
        buf, digest = _read_hashed(path, size)
    else:
        digest = fs.sha256_file(path, _CHUNK)
    if digest != exp.sha256:
        raise InputError(_mismatch(path, exp, size, digest, buf))
    _verified[(path, sig)] = digest
    return _open(path, buf)


def _read_hashed(path: str, size: int) -> tuple[pa.Buffer, str]:
    """The whole file in one buffer, hashed as it is read (one sequential pass). A local file is
    memory-mapped: its pages are read once, by the hash, and Parquet decodes from them (no copy)."""
    f, p = fs.get_fs(path)
    if fs.is_local(path):
        with pa.memory_map(p, "r") as mm:
            buf = mm.read_buffer()
        return buf, hashlib.sha256(memoryview(buf)).hexdigest()
    h = hashlib.sha256()
    data = bytearray(size)
    n = 0
    with f.open(p, "rb") as fh, memoryview(data) as view:
        while n < size:
            got = fh.readinto(view[n : n + _CHUNK])
            if not got:
                break
            h.update(view[n : n + got])
            n += got
    if n < size:  # the file shrank since its size was taken: the digest says so
        del data[n:]
    return pa.py_buffer(data), h.hexdigest()


def _mismatch(path: str, exp: Expected, size: int, digest: str, buf: pa.Buffer | None) -> str:
    if size != exp.bytes:
        what = f"{size} bytes where {exp.manifest} records {exp.bytes}" + (
            " (truncated)" if size < exp.bytes else ""
        )
    else:
        what = f"sha256 {digest} where {exp.manifest} records {exp.sha256}"
    found = diagnose(path, buf)
    return f"{path}: corrupt shard: {what}{'; ' + found if found else ''}. {_rerun_hint(exp)}."


def diagnose(path: str, buf: pa.Buffer | None = None) -> str:
    """Where a Parquet file fails to decode ('' when every row group decodes): for messages."""
    try:
        pf = pq.ParquetFile(pa.BufferReader(buf) if buf is not None else _raw(path))
    except _DECODE_ERRORS as e:
        return f"its Parquet footer cannot be read ({_short(e)})"
    for g in range(pf.metadata.num_row_groups):
        try:
            pf.read_row_group(g)
        except _DECODE_ERRORS as e:
            return f"row group {g} of {pf.metadata.num_row_groups} fails to decode ({_short(e)})"
    return ""


def _short(e: BaseException, limit: int = 200) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _raw(path: str) -> Any:
    f, p = fs.get_fs(path)
    return f.open(p, "rb")


def _open(path: str, buf: pa.Buffer | None) -> Shard:
    try:
        return Shard(pa.BufferReader(buf) if buf is not None else _raw(path), path)
    except FileNotFoundError:
        raise InputError(f"{path}: not found; did the stage that writes it finish?") from None
    except _DECODE_ERRORS as e:
        raise InputError(
            f"{path}: not a readable Parquet file: its footer cannot be read ({_short(e)}). {_hint(path)}."
        ) from None


class Shard(pq.ParquetFile):
    """A ParquetFile whose reads name the file and the row group when the data does not decode."""

    def __init__(self, source: Any, path: str) -> None:
        super().__init__(source)
        self.path = path

    def _fail(self, e: BaseException, group: int | None) -> InputError:
        n = self.metadata.num_row_groups
        if group is None:
            found = diagnose(self.path)
            where = found or f"it fails to decode ({_short(e)})"
        else:
            where = f"row group {group} of {n} fails to decode ({_short(e)})"
        return InputError(f"{self.path}: corrupt Parquet file: {where}. {_hint(self.path)}.")

    def _guard(self, fn: Callable[[], T], group: int | None) -> T:
        try:
            return fn()
        except _DECODE_ERRORS as e:
            raise self._fail(e, group) from None

    def read_row_group(self, i: int, *args: Any, **kwargs: Any) -> pa.Table:
        return self._guard(lambda: super(Shard, self).read_row_group(i, *args, **kwargs), i)

    def read_row_groups(self, row_groups: Sequence[int], *args: Any, **kwargs: Any) -> pa.Table:
        groups = list(row_groups)
        group = groups[0] if len(groups) == 1 else None
        return self._guard(lambda: super(Shard, self).read_row_groups(groups, *args, **kwargs), group)

    def read(self, *args: Any, **kwargs: Any) -> pa.Table:
        return self._guard(lambda: super(Shard, self).read(*args, **kwargs), None)

    def iter_batches(self, *args: Any, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        it = super().iter_batches(*args, **kwargs)
        while True:
            try:
                batch = next(it)
            except StopIteration:
                return
            except _DECODE_ERRORS as e:
                raise self._fail(e, None) from None
            yield batch
