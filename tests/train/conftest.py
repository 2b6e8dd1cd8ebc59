"""Fixtures of the training tests."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pipeline_runs import subprocess_env
from tests.tiny_checkpoint import make_token_data

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class GpuCheckRun:
    """`benchmarks/gpu_check.py --cpu-smoke` once: its process, results folder and work folder
    (each command's log: `<work>/<part>.log`)."""

    proc: subprocess.CompletedProcess[str]
    out: Path
    work: Path


@pytest.fixture(scope="session")
def gpu_check_smoke(tmp_path_factory: pytest.TempPathFactory) -> GpuCheckRun:
    """The prepared GPU run on the CPU, as CI runs it (about a minute: eight commands, two of them
    compiling): run once for the session. Its `mfu` part is `benchmarks/mfu.py` at the debug preset,
    the same run `tests/train/test_mfu.py` checks, which reads it from here instead of a second run."""
    tmp = tmp_path_factory.mktemp("gpu-check")
    prefix = make_token_data(tmp / "tokens")
    out, work = tmp / "out", tmp / "work"
    cmd = [sys.executable, str(ROOT / "benchmarks/gpu_check.py"), "--cpu-smoke", "--out", str(out),
           "--work", str(work), "--data", str(Path(prefix).parent)]  # fmt: skip
    # from another folder, as a user runs it
    proc = subprocess.run(cmd, cwd=tmp, env=subprocess_env(tmp), capture_output=True, text=True, timeout=1500)
    return GpuCheckRun(proc, out, work)
