"""The campaign's context: its work directory and environment, one command run in a subprocess, and
the processes a command left behind."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the repository
PY = sys.executable
TRACEBACK = "Traceback (most recent call last)"
TIMEOUT = 180


@dataclass
class Run:
    rc: int | None
    text: str
    seconds: float
    timed_out: bool = False

    @property
    def first_line(self) -> str:
        """The line a reader judges by: the `error:` line, else a traceback's last line, else the last line."""
        lines = [ln.strip() for ln in self.text.splitlines() if ln.strip()]
        for ln in lines:
            if ln.startswith("error:"):
                return ln[:300]
        if TRACEBACK in self.text:
            return ("traceback: " + lines[-1])[:300]
        return (lines[-1] if lines else "")[:300]


def _fsize_limit(limit: int) -> Callable[[], None]:
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited across exec: EFBIG, not a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


class Ctx:
    """The campaign's work directory, environment and inputs built once."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.tag = f"selene-faults-{uuid.uuid4().hex[:8]}"
        home = work / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])),
            "SELENE_PREFECT": "off",
            "SELENE_HOME": str(home / "selene"),
            "PREFECT_HOME": str(home / "prefect"),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_LOGGING_LEVEL": "WARNING",
            "COLUMNS": "2000",  # rich wraps at the terminal width: keep paths on one line
            "SELENE_FAULT_TAG": self.tag,  # every process of the campaign carries it (orphan search)
        }
        self.env.pop("PREFECT_API_URL", None)
        self.n = 0
        self.refs: dict[str, Any] = {}
        self.mounts: list[Path] = []
        self.tmpfs: bool | None = None

    def can_tmpfs(self, d: Path) -> bool:
        """Whether a tmpfs can be mounted here (root, and a kernel that lets this container)."""
        if self.tmpfs is None:
            probe = d / "probe"
            probe.mkdir()
            cmd = ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)]
            self.tmpfs = subprocess.run(cmd, capture_output=True).returncode == 0
            if self.tmpfs:
                subprocess.run(["umount", str(probe)], check=False)
            probe.rmdir()
        return self.tmpfs

    def mount(self, where: Path, size: int) -> None:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
        self.mounts.append(where)

    def case_dir(self, name: str) -> Path:
        self.n += 1
        d = self.work / "cases" / f"{self.n:03d}-{name.replace('/', '_')}"
        d.mkdir(parents=True)
        return d

    def popen(
        self, args: Sequence[str], log: Path, fsize: int | None = None, tag: str | None = None
    ) -> subprocess.Popen[bytes]:
        env = {**self.env, "SELENE_FAULT_TAG": tag or self.tag}
        f = open(log, "wb")  # noqa: SIM115 (closed by `finish`)
        p = subprocess.Popen(
            [PY, "-m", "selene.cli", *args], env=env, cwd=self.work, stdout=f, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_fsize_limit(fsize) if fsize else None,
        )  # fmt: skip
        p._log = (f, log)  # type: ignore[attr-defined]
        return p

    def finish(self, p: subprocess.Popen[bytes], t0: float, timeout: float = TIMEOUT) -> Run:
        timed_out = False
        try:
            p.wait(timeout=max(1.0, timeout - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        f, log = p._log  # type: ignore[attr-defined]
        f.close()
        return Run(
            None if timed_out else p.returncode, log.read_text(errors="replace"), time.time() - t0, timed_out
        )

    def cli(
        self, args: Sequence[str], log: Path | None = None, fsize: int | None = None, timeout: float = TIMEOUT
    ) -> Run:
        log = log or Path(tempfile.mktemp(dir=self.work, suffix=".log"))
        t0 = time.time()
        return self.finish(self.popen(args, log, fsize), t0, timeout)


def tagged_processes(tag: str) -> list[Any]:
    import psutil

    found = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if p.environ().get("SELENE_FAULT_TAG") == tag:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return found


def unmount_all(ctx: Ctx) -> None:
    for m in reversed(ctx.mounts):
        subprocess.run(["umount", "-l", str(m)], check=False, capture_output=True)
    ctx.mounts.clear()
