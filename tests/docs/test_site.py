"""The documentation site builds strictly (`make docs`): a broken link, a missing anchor or page,
a warning of any kind fails the build, and with it this test. It builds the real mkdocs.yml with
the venv's mkdocs, reference pages generated from this checkout's code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")
    command = [str(mkdocs)] if mkdocs.exists() else [sys.executable, "-m", "mkdocs"]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NO_MKDOCS_2_WARNING": "1",  # the theme's notice about MkDocs 2, not a problem of the site
        "SELENE_PREFECT": "off",
    }
    out = subprocess.run(
        [*command, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    log = out.stdout + out.stderr
    warnings = [line for line in log.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert out.returncode == 0 and not warnings, log
    for page in ("reference/cli", "reference/config", "reference/filters", "reference/removal-reasons"):
        assert (tmp_path / "site" / page / "index.html").is_file(), page
    assert 'id="selene-ingest"' in (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
