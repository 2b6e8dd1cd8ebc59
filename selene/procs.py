"""What selene's processes share on this machine: the selene home, file locks, process liveness.

The bottom layer: it imports the standard library only (every command imports it, through
`selene.server` and `selene.guard`, so `fcntl` waits inside the function that needs it). POSIX only.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

HOME_ENV = "SELENE_HOME"
DEFAULT_HOME = "~/.selene"
# flock's answers for "another holder has it" (EACCES: where flock is emulated with fcntl locks)
_BUSY = {errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK}
# flock's answers for "this filesystem has no locks" (some NFS mounts)
NO_LOCKING = {errno.ENOLCK, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}


def home() -> Path:
    """selene's home: ``$SELENE_HOME``, default ``~/.selene``."""
    return Path(os.environ.get(HOME_ENV) or DEFAULT_HOME).expanduser()


# ------------------------------------------------------------------------------------- locks


class FileLock:
    """An exclusive ``flock`` on the file `path` (created, with its directory, when missing), held
    from `acquire` to `release`. The kernel releases it when its holder dies, so a killed command
    never leaves it stuck. ``with FileLock(path):`` waits until it holds the lock.

    A holder may remove the file when it releases the lock (`release(unlink=True)`, so that no lock
    file outlives its use): `acquire` then locks the file that `path` names now, not a removed one it
    opened just before, which would lock nothing anyone else sees."""

    def __init__(self, path: str | os.PathLike[str], mode: int = 0o600, unsupported_ok: bool = False) -> None:
        self.path = os.fspath(path)
        self.mode = mode  # of the file, when this creates it
        # where the filesystem has no locks: hold the open file unlocked (`locked` False) rather than
        # fail, for a caller whose record in the file decides who owns it
        self.unsupported_ok = unsupported_ok
        self.fd = -1  # the open lock file; -1 when closed
        self.locked = False  # the kernel lock is held

    def open(self) -> int:
        """The lock file, open and not locked yet; OSError when it cannot be created."""
        if self.fd < 0:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, self.mode)
        return self.fd

    def acquire(self, blocking: bool = True) -> bool:
        """Lock the file: True once this holds it (see `unsupported_ok`). False when not `blocking` and
        another holder has it; the file stays open then (`fd`, to read what its holder wrote in it)
        until `release`. OSError (the file closed) when it cannot be created or locked."""
        import fcntl

        for _ in range(100):  # only a lock file removed between our open and flock makes us go round
            fd = self.open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
                self.locked = True
            except OSError as e:
                if e.errno in _BUSY and not blocking:
                    return False
                if not (self.unsupported_ok and e.errno in NO_LOCKING):
                    self.release()
                    raise
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except OSError:
                same = False
            if same:
                return True
            self.release()  # its holder removed it between our open and our flock: lock the new one
        raise OSError(errno.EBUSY, "it keeps being replaced", self.path)

    def release(self, unlink: bool = False) -> None:
        """Release the lock and close the file; with `unlink`, remove the file first, while still
        holding it (see `acquire`). Does nothing when the file is not open."""
        if self.fd < 0:
            return
        if unlink:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.close(self.fd)  # releases the lock
        self.fd, self.locked = -1, False

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# ------------------------------------------------------------------------------- processes


def proc_stat(pid: int | str) -> list[bytes] | None:
    """/proc/PID/stat's fields after the command name (state, ppid, pgrp, ...); None without it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def pid_alive(pid: int) -> bool:
    """`pid` names a running process, of any user (a zombie does not count)."""
    if pid <= 0:  # kill() reads 0 and negative pids as process groups
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # The kernel looks the process up before it checks the permission to signal it: it exists,
        # it belongs to another user. Counting it dead would let a command take over the lock or
        # drop the running-list entry of another user's command that still runs.
        pass
    # /proc/PID/stat unreadable: no /proc (macOS), a process that just ended, or one that
    # hidepid hides; the kill above found it, so it counts as alive
    stat = proc_stat(pid)
    return stat is None or stat[0] != b"Z"
