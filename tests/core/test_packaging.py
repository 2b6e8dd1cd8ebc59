"""The package's metadata as the build backend reads it: `make install` builds it with no warning."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.pipeline_runs import ROOT


def test_metadata_builds_without_deprecation_warnings(tmp_path: Path) -> None:
    """The license is an SPDX expression (PEP 639), not the table setuptools deprecates, and the
    build requires a setuptools that reads it."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "selene").mkdir()
    (tmp_path / "selene" / "__init__.py").write_text("")
    (tmp_path / "meta").mkdir()
    code = "from setuptools import build_meta; print(build_meta.prepare_metadata_for_build_wheel('meta'))"
    run = subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "deprecated" not in run.stderr.lower(), run.stderr
    metadata = (tmp_path / "meta" / run.stdout.split()[-1] / "METADATA").read_text()
    assert "License-Expression: Apache-2.0" in metadata
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"setuptools>=77"' in pyproject  # the first release that takes `license = "<SPDX>"`
