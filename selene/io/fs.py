"""One path type for local disks and object stores, through fsspec.

A path is a plain string: a local path (``data/x``), or an fsspec URL (``file://``, ``memory://``,
``s3://``, ``gs://`` ...). Everything that touches files goes through here, so a stage that works on a
laptop works on a bucket. Writes are atomic: data goes to a temporary sibling that is renamed into
place, so a reader never sees a half-written file under its final name.
"""

from __future__ import annotations

import contextlib
import errno
import glob as _glob
import hashlib
import os
import uuid
from collections.abc import Iterator
from typing import IO, Any

import fsspec
from fsspec.core import url_to_fs

from selene.errors import OutputError, SeleneError, UsageError

ACCEPTED_FORMS = "a local path or glob (data/*.jsonl.zst), or an fsspec URL (file://, memory://, s3://, gs://)"
_TMP_MARK = ".tmp-"


_LOCAL = fsspec.filesystem("file")


def get_fs(path: str) -> tuple[fsspec.AbstractFileSystem, str]:
    """The filesystem of `path` and the path in that filesystem's own form."""
    if "://" not in path and "::" not in path:
        # a plain local path, what url_to_fs would resolve (made absolute) at a tenth of its cost:
        # a dedup's steps resolve tens of thousands of small files
        return _LOCAL, _LOCAL._strip_protocol(path)
    try:
        fs, p = url_to_fs(path)
    except (ValueError, ImportError) as e:
        raise UsageError(f"cannot open {path!r}: {e}. Paths are {ACCEPTED_FORMS}.") from None
    return fs, p


def is_local(path: str) -> bool:
    fs, _ = get_fs(path)
    return "file" in _protocols(fs)


def process_local(path: str) -> bool:
    """True for filesystems that live inside one process (memory://): other workers cannot see them."""
    fs, _ = get_fs(path)
    return "memory" in _protocols(fs)


def _protocols(fs: fsspec.AbstractFileSystem) -> tuple[str, ...]:
    proto = fs.protocol
    return (proto,) if isinstance(proto, str) else tuple(proto)


def join(base: str, *parts: str) -> str:
    out = base.rstrip("/")
    for p in parts:
        out = f"{out}/{p.strip('/')}"
    return out


def unstrip(fs: fsspec.AbstractFileSystem, path: str) -> str:
    """A path of `fs` back in the URL form the user gave (keeps memory://, s3:// ...)."""
    if "file" in _protocols(fs):
        return path
    url = fs.unstrip_protocol(path)
    # memory:// keeps a leading "/" in its paths; give back the form users write
    return "memory://" + url[len("memory:///") :] if url.startswith("memory:///") else url


def expand(pattern: str) -> tuple[list[str], str]:
    """Files matching `pattern` (sorted, URL form) and the pattern's static root directory.

    The root (the part before the first wildcard) lets callers name files relative to it.
    """
    fs, p = get_fs(pattern)
    magic = _glob.has_magic(p)
    if magic:
        matches = [m for m in fs.glob(p) if fs.isfile(m)]
        static = p[: min(p.find(c) for c in "*?[" if c in p)]
        root = static if static.endswith("/") else os.path.dirname(static)
    elif fs.isdir(p):
        matches = [m for m in fs.find(p) if fs.isfile(m)]
        root = p
    elif fs.exists(p):
        matches, root = [p], os.path.dirname(p)
    else:
        matches, root = [], os.path.dirname(p)
    return sorted(unstrip(fs, m) for m in matches), unstrip(fs, root.rstrip("/")) if root else ""


def exists(path: str) -> bool:
    fs, p = get_fs(path)
    return bool(fs.exists(p))


def size(path: str) -> int:
    fs, p = get_fs(path)
    return int(fs.size(p))


def makedirs(path: str) -> None:
    fs, p = get_fs(path)
    try:
        fs.makedirs(p, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create directory {path!r}: {e.strerror or e}") from None


def rm(path: str, recursive: bool = False) -> None:
    fs, p = get_fs(path)
    if fs.exists(p):
        fs.rm(p, recursive=recursive)


def ls(path: str) -> list[str]:
    fs, p = get_fs(path)
    if not fs.exists(p):
        return []
    return sorted(unstrip(fs, x) for x in fs.ls(p, detail=False))


def read_bytes(path: str) -> bytes:
    fs, p = get_fs(path)
    with fs.open(p, "rb") as f:
        return f.read()


def read_text(path: str) -> str:
    return read_bytes(path).decode("utf-8")


_CAUSES = {
    errno.ENOSPC: ("no space left on the device", "free space (or choose another -o)"),
    errno.EDQUOT: ("disk quota exceeded", "free space within the quota (or choose another -o)"),
    errno.EFBIG: ("file too large for a size limit (ulimit -f or the filesystem's)", "raise the limit"),
    errno.EROFS: ("read-only file system", "choose a writable -o"),
    errno.EACCES: ("permission denied", "fix its permissions or choose another -o"),
    errno.EPERM: ("operation not permitted", "fix its permissions or choose another -o"),
    errno.EIO: ("I/O error", "check the disk"),
}


def write_error(path: str, e: OSError) -> OutputError:
    """The `OutputError` for an OS error while writing `path`: the path, the cause, what to do."""
    cause, fix = _CAUSES.get(e.errno or 0, (e.strerror or str(e), "fix the cause"))
    code = f" [{errno.errorcode[e.errno]}]" if e.errno is not None and e.errno in errno.errorcode else ""
    return OutputError(
        f"cannot write {path!r}: {cause}{code}. Nothing partial was kept under that name; {fix} and rerun "
        "the same command: the work already finished is reused"
    )


class _Guarded:
    """A file being written whose OS errors (writes, flushes, close) become `write_error`s naming the
    final path. Everything else is the file's own."""

    def __init__(self, f: IO[Any], path: str, digest: bool = False) -> None:
        self._f, self._path = f, path
        self._hash = hashlib.sha256() if digest else None

    def write(self, data: Any) -> int:
        try:
            n = int(self._f.write(data))
        except OSError as e:
            raise write_error(self._path, e) from None
        if self._hash is not None:
            self._hash.update(data)
        return n

    def seek(self, *args: Any) -> int:
        self._hash = None  # no longer one sequential stream: hexdigest() says it does not know
        return int(self._f.seek(*args))

    def hexdigest(self) -> str | None:
        """sha256 of the bytes written, when opened with `digest` and written sequentially; else None."""
        return self._hash.hexdigest() if self._hash is not None else None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._f.flush()
        except OSError as e:
            raise write_error(self._path, e) from None

    def close(self) -> None:
        try:
            self._f.close()
        except OSError as e:
            raise write_error(self._path, e) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> _Guarded:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "wb", digest: bool = False) -> Iterator[IO[Any]]:
    """Open `path` for writing through a temporary sibling renamed into place on success.

    The one write path of the data stages: an OS error while opening, writing, closing or renaming
    (no space, quota, read-only, permission) is an `OutputError` naming `path` and the cause. On any
    error the temporary file is removed and the final name is untouched, so a killed or failed writer
    never leaves something a later run could take for a complete file. `digest`: the file object's
    ``hexdigest()`` gives the sha256 of what was written (no second read to hash it).
    """
    fs, p = get_fs(path)
    tmp = f"{p}{_TMP_MARK}{uuid.uuid4().hex[:12]}"
    parent = os.path.dirname(p)
    try:
        if parent:
            fs.makedirs(parent, exist_ok=True)
        f = fs.open(tmp, mode)
    except OSError as e:
        raise write_error(path, e) from None
    guarded = _Guarded(f, path, digest)
    try:
        yield guarded  # type: ignore[misc]
        guarded.close()
        try:
            if "file" in _protocols(fs):
                os.replace(tmp, p)  # atomic on POSIX, also over an existing file
            else:
                fs.mv(tmp, p)
        except OSError as e:
            raise write_error(path, e) from None
    except BaseException:
        with contextlib.suppress(Exception):
            f.close()
        with contextlib.suppress(Exception):
            fs.rm(tmp)
        raise


def atomic_write(path: str, data: bytes | str) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def save_npy(path: str, array: Any) -> None:
    """One numpy array as a .npy file, atomically."""
    import numpy as np

    with atomic_open(path) as f:
        np.save(f, array)


def load_npy(path: str, mmap: bool = False) -> Any:
    """A .npy file as an array; `mmap`: memory-mapped when the file is local (else read whole)."""
    import numpy as np

    fs, p = get_fs(path)
    if "file" in _protocols(fs):
        return np.load(p, mmap_mode="r" if mmap else None)
    with fs.open(p, "rb") as f:
        return np.load(f)


def sha256_file(path: str, chunk: int = 1 << 22) -> str:
    fs, p = get_fs(path)
    h = hashlib.sha256()
    with fs.open(p, "rb") as f:
        while b := f.read(chunk):
            h.update(b)
    return h.hexdigest()


def remove_temporaries(path: str) -> None:
    """Delete leftovers of killed writers (``*.tmp-*``) below `path`."""
    fs, p = get_fs(path)
    if not fs.exists(p):
        return
    for f in fs.find(p):
        if _TMP_MARK in os.path.basename(f):
            fs.rm(f)


def check_writable(path: str) -> None:
    """Fail early, naming the path, when the output location cannot be written. It leaves nothing
    behind: the folders made to try are removed again (a run makes them when it starts writing), so a
    run refused by a later check leaves no empty output folder."""
    fs, p = get_fs(path)
    made = _missing(fs, p)
    probe = os.path.join(p, f".selene-write-probe-{uuid.uuid4().hex[:8]}")
    try:
        fs.makedirs(p, exist_ok=True)
        try:
            with fs.open(probe, "wb") as f:
                f.write(b"ok")
        finally:
            with contextlib.suppress(OSError):
                fs.rm(probe)
    except OSError as e:
        raise OutputError(
            f"output {path!r} is not writable ({e.strerror or e}); choose another -o or fix its permissions"
        ) from None
    finally:
        for d in made:  # deepest first; only empty ones, and only those this check made
            with contextlib.suppress(OSError, NotImplementedError):
                fs.rmdir(d)


def _missing(fs: fsspec.AbstractFileSystem, p: str) -> list[str]:
    """`p` and the folders above it that do not exist, deepest first."""
    made: list[str] = []
    while p and not fs.exists(p):
        made.append(p)
        parent = os.path.dirname(p.rstrip("/"))
        if parent == p:
            break
        p = parent
    return made


@contextlib.contextmanager
def undone_on_refusal(path: str) -> Iterator[None]:
    """While the block runs, a refusal (an error of exit status 2: the user's option, config or path
    is wrong) removes `path` when the block made it; a `path` that existed before is never touched."""
    existed = exists(path)
    try:
        yield
    except SeleneError as e:
        if e.exit_code == 2 and not existed:
            with contextlib.suppress(Exception):
                rm(path, recursive=True)
        raise
