"""What selene's processes share on this machine: the selene home, file locks, process liveness,
how a command starts selene's own modules as processes, and how the processes it starts end with it.

The bottom layer: it imports the standard library only (every command imports it, through
`selene.server` and `selene.guard`, so `fcntl` waits inside the function that needs it). POSIX only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import time
from collections.abc import Callable
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
        # the folders `open` created for the file, deepest first: a release that removes the file
        # removes them too when nothing else was put in them (a refused command leaves nothing behind)
        self.made: list[str] = []

    def open(self) -> int:
        """The lock file, open and not locked yet; OSError when it cannot be created."""
        if self.fd < 0:
            folder = os.path.dirname(self.path) or "."
            missing = []
            while folder and not os.path.exists(folder):
                missing.append(folder)
                folder = os.path.dirname(folder)
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            self.made = missing or self.made  # a reopen after a replaced file keeps the first record
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
            for folder in self.made:  # os.rmdir removes a folder only when it is empty
                try:
                    os.rmdir(folder)
                except OSError:
                    break
            self.made = []
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


# ------------------------------------------------------------------------------- launching


_RUN_MODULE = """\
import sys
if sys.path[:1] == [""] and not getattr(sys.flags, "safe_path", False):
    del sys.path[0]
import runpy
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def python_module(module: str, *args: str, unbuffered: bool = False) -> list[str]:
    """The command that runs `module` as ``python -m module args`` would, with this interpreter, but
    imports the installed packages whatever the directory it is started in.

    ``python -m`` (and ``-c``) put the working directory first on sys.path, so a folder there named
    like a package shadows it: under an editable install, whose finder comes after the path, a
    ``selene/`` folder where the command starts (the directory holding the clone) fails every rank
    with "cannot import name '__version__' from 'selene' (unknown location)". ``-P`` drops that
    entry but needs Python 3.11; a script path would put its own directory first instead; changing
    the processes' directory would break the relative paths of a config. So the command is
    ``python -c`` with a few lines that drop the working directory (the ``''`` that ``-c`` puts
    first, before anything else is imported) and run the module with runpy. PYTHONPATH is kept:
    what a user put on the path on purpose still counts. The module's name stays on the command
    line, where ``ps`` and the tests look for it. (Pool and Dask workers need none of this:
    multiprocessing hands them this process's sys.path.)"""
    return [sys.executable, *(["-u"] if unbuffered else []), "-c", _RUN_MODULE, module, *args]


# ---------------------------------------------------------------------------- parent death


PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.5


def die_with(driver: int) -> None:
    """Worker initializer: end this process when the command's process `driver` ends, however it ends.

    A pool's workers are children of the forkserver, which exits when the command does (it reads EOF
    on its pipe from the command). On Linux the kernel then SIGKILLs each worker (PR_SET_PDEATHSIG,
    which fires when the thread that forked the worker ends: the forkserver has only one); a
    watchdog thread covers every platform and the time before the initializer ran: it polls the
    driver's pid and exits when the driver is gone or this process was re-parented away from it.
    (The parent-death signal is not inherited across fork: a step that starts processes of its own
    gives them `die_with` too, or a pool from `selene.executor.mappers.process_pool`.)
    """
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    parent = os.getppid()

    def gone() -> bool:
        return os.getppid() != parent or not pid_alive(driver)

    if gone():  # the driver died before we could ask to follow it
        os._exit(1)

    def watch() -> None:
        while not gone():
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="selene-die-with-driver", daemon=True).start()


def watch_group(poll: float = 0.2) -> Callable[[], None]:
    """When this process leads its process group (a command started from a shell), fork a small
    watchdog that SIGKILLs the group if this process dies without saying goodbye (kill -9, OOM
    killer): what the command started that `die_with` does not reach (torchrun and its ranks, a
    step's subprocesses) dies with it. Returns the goodbye: call it when the command ends normally.
    Elsewhere (a test runner, a script that owns the group) it does nothing: the group is not ours."""
    if not hasattr(os, "fork") or os.getpgrp() != os.getpid():
        return lambda: None
    driver = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return lambda: None
    if pid == 0:  # the watchdog: only os calls, whatever threads the parent had
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the command to handle
            while os.getppid() == driver:
                time.sleep(poll)
            os.killpg(driver, signal.SIGKILL)
        finally:
            os._exit(0)

    def goodbye() -> None:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass

    return goodbye
