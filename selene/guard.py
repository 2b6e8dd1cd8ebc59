"""Who may write where: no command writes into its own input, nor into what another one reads or writes.

`claim(command, inputs, outputs)` is held for a command's whole life (by the driver process: Dask
workers and pool processes never take it). It refuses, with a `UsageError` (exit 2) naming both
paths, before anything is touched:

- an output that is an input, lies inside one or contains one (``dedup -i D -o D``, ``-o D/sub``,
  ``-i D/sub -o D``; a source glob counts as its files, or as its directory when it is recursive);
- an output that another selene command running now on this machine reads or writes, or an input
  that one is writing (the running list: one small JSON file per running command under
  ``<selene home>/running/``, dead entries dropped on read);
- an output locked by another command: ``.<name>.selene-lock`` next to the output, held with
  ``flock`` and recording pid, host, boot and process start time. The kernel releases the flock
  when its holder dies, so a killed run never leaves it stuck: a lock of this host whose process is
  gone (or whose pid now belongs to another program: its start time differs) is taken over. One
  from another host (NFS) is honoured, with its host and pid and how to clear it.

Paths are compared normalised: ``~``, ``..``, symlinks and trailing slashes resolved, ``file://``
the same as a plain path; object-store URLs (s3://, gs://) are compared by bucket and key and get
no lock file (the running list still covers this machine). memory:// lives in one process: nothing to lock.
"""

from __future__ import annotations

import contextlib
import datetime
import fnmatch
import json
import os
import posixpath
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selene.errors import OutputError, UsageError
from selene.procs import FileLock, home, pid_alive, proc_stat

LOCAL_SCHEMES = ("file", "local")
GLOB_CHARS = "*?["
LOCK_SUFFIX = ".selene-lock"
PROCESS_LOCAL = "memory://"


# ------------------------------------------------------------------------------------ paths


@dataclass(frozen=True)
class Place:
    """A path as given (`raw`, for messages) and normalised (`key`: ``scheme://parts`` or an
    absolute local path). `pattern` is set for a non-recursive glob: it stands for its matches."""

    raw: str
    key: str
    pattern: str | None = None

    @property
    def local(self) -> bool:
        return "://" not in self.key


def normalise(path: str) -> str:
    """The canonical form of a local path or fsspec URL (see the module doc)."""
    p = os.path.expanduser(str(path).strip())
    scheme, sep, rest = p.partition("://")
    if sep and scheme.lower() not in LOCAL_SCHEMES:
        rest = posixpath.normpath("/" + rest.lstrip("/")).lstrip("/")
        return f"{scheme.lower()}://{rest}"
    if sep:
        p = rest if rest.startswith("/") else "/" + rest
    return os.path.realpath(os.path.abspath(p))


def place(path: str) -> Place:
    """`path` as a `Place`; a glob stands for its static directory when recursive (``**``), else for
    the paths its pattern matches."""
    parts = str(path).rstrip("/").split("/")
    first = next((i for i, part in enumerate(parts) if any(c in part for c in GLOB_CHARS)), None)
    if first is None:
        return Place(str(path), normalise(path))
    base = normalise("/".join(parts[:first]) or ("/" if str(path).startswith("/") else "."))
    if "**" in parts[first:]:
        return Place(str(path), base)
    return Place(str(path), base, pattern="/".join((base.rstrip("/"), *parts[first:])))


def _split(key: str) -> list[str]:
    scheme, sep, rest = key.partition("://")
    if not sep:
        return ["", *filter(None, key.split("/"))]
    return [scheme + sep, *filter(None, rest.split("/"))]


def relation(out: Place, other: Place) -> str | None:
    """How `out` (an output) stands to `other`: "is", "is inside", "contains", or None."""
    o = _split(out.key)
    if other.pattern is not None:
        pat = _split(other.pattern)
        if len(o) >= len(pat) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(o, pat, strict=False)):
            return "is" if len(o) == len(pat) else "is inside"  # a match of the glob, or inside one
        base = _split(other.key)
        return "contains" if len(o) <= len(base) and base[: len(o)] == o else None
    x = _split(other.key)
    if o == x:
        return "is"
    if len(o) > len(x) and o[: len(x)] == x:
        return "is inside"
    if len(o) < len(x) and x[: len(o)] == o:
        return "contains"
    return None


def check_overlap(
    command: str, inputs: Sequence[str], outputs: Sequence[str], inside_ok: bool = False
) -> None:
    """Refuse an output that is, lies inside or contains one of the command's own inputs (with
    `inside_ok`, an output inside an input is allowed: eval's results beside a finished checkpoint)."""
    ins = [place(p) for p in inputs if p]
    for raw in outputs:
        out = place(raw)
        for inp in ins:
            how = relation(out, inp)
            if how and not (inside_ok and how == "is inside"):
                raise UsageError(
                    f"{command}: the output {raw} {how} the input {inp.raw}"
                    + (f" ({out.key} and {_stored(inp)})" if {out.key, _stored(inp)} - {raw, inp.raw} else "")
                    + "; inputs are never modified: write to a directory outside the input"
                )


# -------------------------------------------------------------------------------- processes


def host() -> str:
    return socket.gethostname()


def boot_id() -> str:
    """This boot of this machine (Linux): a pid recorded before a reboot names nothing now."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def start_time(pid: int) -> str | None:
    """When `pid` started (clock ticks since boot, from /proc): tells a reused pid from its first
    owner. None where there is no /proc or no such process."""
    fields = proc_stat(pid)
    return fields[19].decode() if fields is not None and len(fields) > 19 and fields[0] != b"Z" else None


def alive(pid: int, started: str | None = None) -> bool:
    """`pid` runs, and (where `started` and its start time are known) is the process that started
    then. A start time /proc does not show (no /proc, or hidepid hiding another user's process)
    cannot tell a reused pid: the process counts as the one recorded."""
    if not pid_alive(pid):
        return False
    now = start_time(pid)
    return not started or now is None or now == started


def _me() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": host(),
        "boot": boot_id(),
        "started": start_time(os.getpid()),
        "since": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _ours_and_dead(rec: dict[str, Any]) -> bool:
    """A record of a process of this machine that no longer runs (or of an earlier boot)."""
    if rec.get("host") != host():
        return False
    if rec.get("boot") and boot_id() and rec["boot"] != boot_id():
        return True
    return not alive(int(rec.get("pid") or 0), rec.get("started"))


def _holder(rec: dict[str, Any]) -> str:
    cmd = rec.get("command") or "a selene command"
    return f"`{cmd}` (pid {rec.get('pid')} on host {rec.get('host')}, since {rec.get('since')})"


# ---------------------------------------------------------------------------- the running list


def running_dir() -> Path:
    """The running list: one JSON file per selene command running on this machine."""
    return home() / "running"


@contextlib.contextmanager
def _running_locked() -> Iterator[Path | None]:
    """The running list's directory, locked against other commands; None where the selene home
    cannot be written (a read-only home must not stop every command: the output locks still hold)."""
    d = running_dir()
    lock = FileLock(d / ".lock")
    try:
        lock.open()
    except OSError:
        yield None
        return
    with lock:
        yield d


def running() -> list[dict[str, Any]]:
    """The selene commands running now on this machine (entries of dead ones are removed)."""
    with _running_locked() as d:
        return _read_running(d) if d is not None else []


def _read_running(d: Path) -> list[dict[str, Any]]:
    out = []
    for f in sorted(d.glob("*.json")):
        try:
            rec = json.loads(f.read_text())
        except (OSError, ValueError):
            rec = None
        if not isinstance(rec, dict) or _ours_and_dead(rec):
            with contextlib.suppress(OSError):
                f.unlink()  # a killed command's entry, or a torn one
            continue
        if rec.get("host") == host():
            out.append(rec)
    return out


def _stored(p: Place) -> str:
    """`p` as an absolute path or URL that `place` reads back as the same `Place`."""
    return p.pattern if p.pattern is not None else p.key


def _conflict(command: str, ins: list[Place], outs: list[Place], rec: dict[str, Any]) -> str | None:
    theirs_in = [place(p) for p in rec.get("inputs", [])]
    theirs_out = [place(p) for p in rec.get("outputs", [])]
    for out in outs:
        for other, what in [(p, "reads") for p in theirs_in] + [(p, "writes") for p in theirs_out]:
            how = relation(out, other)
            if how:
                return f"{command}: the output {out.raw} {how} {other.raw}, which {_holder(rec)} {what} right now"
    for inp in ins:
        for other in theirs_out:
            if relation(other, inp):
                return f"{command}: the input {inp.raw} is being written by {_holder(rec)} (its output {other.raw})"
    return None


# ------------------------------------------------------------------------------------- locks


def lock_path(out: str) -> str | None:
    """The lock file of a local output: ``.<name>.selene-lock`` next to it (not inside, where a stage
    cleaning its output would remove it); None for URLs of other filesystems."""
    p = place(out)
    if not p.local or p.key == "/":
        return None
    parent, name = os.path.split(p.key)
    return os.path.join(parent, f".{name}{LOCK_SUFFIX}")


def _read_lock(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 1 << 16)
        rec = json.loads(data) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def acquire(out: str, record: dict[str, Any], say: Callable[[str], None] | None = None) -> FileLock | None:
    """Lock local output `out` for this process (see the module doc); None where it takes no lock:
    a URL of another filesystem, or a place where no file can be created (then the output cannot be
    written either, and the stage's own check says so, naming the path; the running list still holds)."""
    path = lock_path(out)
    if path is None:
        return None
    # a filesystem without locks (some NFS mounts): the record in the file decides
    lock = FileLock(path, 0o644, unsupported_ok=True)
    try:
        lock.open()
    except OSError:
        return None
    try:
        got = lock.acquire(blocking=False)
    except OSError as e:
        raise OutputError(f"cannot lock {path} (output {out}): {e.strerror}") from None
    if not got:
        rec = _read_lock(lock.fd)
        lock.release()
        raise UsageError(
            f"the output {out} is being written by {_holder(rec)}; two commands cannot write one output: "
            "wait for it to finish, or write elsewhere"
        )
    rec = _read_lock(lock.fd)
    if rec and rec.get("pid") != os.getpid() and not _ours_and_dead(rec):
        lock.release()
        raise UsageError(
            f"the output {out} is locked by {_holder(rec)}; two commands cannot write one output. "
            f"If that command no longer runs, delete {path} and run this again"
        )
    if rec.get("pid") and rec.get("pid") != os.getpid() and say is not None:
        say(f"{out}: taking over the lock of {_holder(rec)}, which no longer runs")
    data = json.dumps({**record, "output": out}).encode()
    try:
        os.ftruncate(lock.fd, 0)
        os.pwrite(lock.fd, data, 0)
        os.fsync(lock.fd)
    except OSError as e:
        lock.release()
        raise OutputError(f"cannot write the lock file {path} of output {out}: {e.strerror}") from None
    return lock


def release(lock: FileLock) -> None:
    lock.release(unlink=True)  # the file goes before the lock, while still ours: see `FileLock`


# ------------------------------------------------------------------------------------- claims


@dataclass
class _Claim:
    outputs: list[Place]
    locks: list[FileLock] = field(default_factory=list)
    entry: Path | None = None


_held: list[_Claim] = []
_held_lock = threading.Lock()


def _covered(out: Place) -> bool:
    """This process already holds a claim on `out` or a directory above it (a pipeline's run dir)."""
    with _held_lock:
        return any(relation(out, mine) in ("is", "is inside") for c in _held for mine in c.outputs)


@contextlib.contextmanager
def claim(
    command: str, inputs: Sequence[str], outputs: Sequence[str], say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold `outputs` for `command` (see the module doc). Re-entrant: a claim inside one this process
    holds (a pipeline's stage in its run dir) checks its own paths and takes nothing more. `say`
    tells the user of a killed run's lock taken over."""
    inputs = [p for p in inputs if p]
    check_overlap(command, inputs, outputs)
    outs = [place(o) for o in outputs]
    if all(_covered(o) for o in outs):
        yield
        return
    ins = [place(p) for p in inputs]
    # the running list keeps normalised paths (other commands run from other directories), and none of
    # memory://, whose files exist in this process alone
    held = _Claim(outs)
    ins = [p for p in ins if not p.key.startswith(PROCESS_LOCAL)]
    outs = [o for o in outs if not o.key.startswith(PROCESS_LOCAL)]
    me = {**_me(), "command": command, "inputs": [_stored(p) for p in ins], "outputs": [o.key for o in outs]}
    try:
        with _running_locked() as d:
            for rec in _read_running(d) if d is not None else []:
                if rec.get("pid") == os.getpid():
                    continue
                problem = _conflict(command, ins, outs, rec)
                if problem:
                    raise UsageError(f"{problem}; wait for it to finish, or choose another output")
            for o in outputs:
                lock = acquire(o, me, say)
                if lock is not None:
                    held.locks.append(lock)
            if d is not None:
                entry = d / f"{host()}-{os.getpid()}-{len(_held)}-{id(held):x}.json"
                tmp = entry.with_suffix(".tmp")
                try:
                    tmp.write_text(json.dumps(me))
                    os.replace(tmp, entry)
                    held.entry = entry
                except OSError:  # a full home: this command runs, unregistered (its locks hold)
                    with contextlib.suppress(OSError):
                        tmp.unlink()
    except BaseException:
        _drop(held)
        raise
    with _held_lock:
        _held.append(held)
    try:
        yield
    finally:
        with _held_lock:
            _held.remove(held)
        _drop(held)


def _drop(held: _Claim) -> None:
    for lock in held.locks:
        release(lock)
    held.locks.clear()
    if held.entry is not None:
        with contextlib.suppress(OSError):
            held.entry.unlink()


def describe() -> str:
    """The running commands, one per line (for messages and debugging)."""
    return "\n".join(f"{_holder(r)}: in {r.get('inputs')} out {r.get('outputs')}" for r in running())


if __name__ == "__main__":  # python -m selene.guard: what runs now
    print(describe() or "no selene command is running", file=sys.stderr)
