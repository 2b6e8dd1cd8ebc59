"""The dashboard's own Cancel stops a `selene train` started from the command line, as a user does it:
`selene server start`, `selene train` (the debug model, CPU) in a subprocess, the run's page in
headless Chromium, Cancel clicked and confirmed (`tests/runtime/browser_cancel.py`, run by the
browser venv's python: ``make browser`` installs both). The command ends with one line and exit 1, a
checkpoint of the step it stopped at is written, and the run ends Cancelled.

``SELENE_SCREENSHOTS=DIR`` keeps the browser's screenshots there (the README's come from it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from selene.train.checkpoint import complete_steps
from tests.pipeline_runs import ROOT, subprocess_env, write_token_dataset
from tests.runtime.test_dashboard import _free_port, selene
from tests.train.test_train_live import START_SECONDS, STOP_SECONDS, wait_for, write_config

BROWSER_PYTHON = ROOT / ".venv-browser" / "bin" / "python"
CHROMIUM = next(
    (p for p in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if os.access(p, os.X_OK)), None
)


def _browser_missing() -> str | None:
    if CHROMIUM is None:
        return (
            "no Chromium (/usr/bin/chromium-headless-shell or /usr/bin/chromium): `make browser` installs it"
        )
    if not BROWSER_PYTHON.exists():
        return f"no browser venv ({BROWSER_PYTHON}): `make browser` makes it"
    probe = subprocess.run([str(BROWSER_PYTHON), "-c", "import playwright.sync_api"], capture_output=True)
    if probe.returncode != 0:
        return f"playwright is not installed in {BROWSER_PYTHON}: `make browser` installs it"
    return None


MISSING = _browser_missing()
pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups"),
    pytest.mark.skipif(MISSING is not None, reason=str(MISSING)),
    pytest.mark.timeout(1500),
    pytest.mark.slow,
]


def post(url: str, body: dict) -> list[dict]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return list(json.loads(r.read()))


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as r:
        return dict(json.loads(r.read()))


def test_cancel_clicked_in_the_dashboard_stops_selene_train(tmp_path: Path) -> None:
    env = subprocess_env(tmp_path, SELENE_HOME=str(tmp_path / "home"))
    env.pop("PREFECT_API_URL", None)
    port = _free_port()
    dashboard, api = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/api"
    shots = Path(os.environ.get("SELENE_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    selene(env, "server", "start", "--port", str(port), timeout=240)
    proc = None
    try:
        config = write_config(write_token_dataset(tmp_path / "tokens"), tmp_path)
        out = tmp_path / "out"
        proc = subprocess.Popen([sys.executable, "-m", "selene.cli", "train", str(config)], env=env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip

        def running() -> dict | None:
            runs = post(f"{api}/flow_runs/filter", {"flow_runs": {"name": {"like_": str(out)}}})
            return runs[0] if runs and runs[0]["state_type"] == "RUNNING" else None

        run = wait_for(running, START_SECONDS, "the train flow run", proc)
        wait_for(lambda: complete_steps(str(out / "checkpoints")), START_SECONDS, "a first checkpoint", proc)

        browser = subprocess.run([str(BROWSER_PYTHON), str(Path(__file__).with_name("browser_cancel.py")), str(CHROMIUM),
                                  str(shots), run["id"], dashboard],
                                 capture_output=True, text=True, timeout=STOP_SECONDS + 300)  # fmt: skip
        assert browser.returncode == 0, (
            f"the browser: exit {browser.returncode}\n{browser.stdout[-3000:]}\n{browser.stderr[-3000:]}"
        )
        assert '"Cancel"' in browser.stdout and '"v1 cancel button enabled": true' in browser.stdout
        assert get(f"{api}/deployments/{run['deployment_id']}")["name"] == "selene-command"
        rc = proc.wait(STOP_SECONDS)
        text = proc.stdout.read() if proc.stdout else ""
        final = get(f"{api}/flow_runs/{run['id']}")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        subprocess.run([sys.executable, "-m", "selene.cli", "server", "stop"], env=env, timeout=60, cwd=ROOT)
    print(f"browser: {browser.stdout.strip()}")
    assert rc == 1, text[-3000:]
    last_line = text.rstrip().splitlines()[-1]
    assert last_line.startswith("cancelled (from the dashboard): stopped at step "), text[-3000:]
    assert "Traceback" not in text
    step = int(last_line.split("stopped at step ")[1].split(",")[0])
    assert step in complete_steps(str(out / "checkpoints")) and f"step-{step:06d}" in last_line
    assert final["state_type"] == "CANCELLED" and f"step {step}" in final["state"]["message"], final["state"]
    for name in ("v2-menu.png", "before.png", "cancelling.png", "cancelled.png"):
        assert (shots / name).stat().st_size > 10_000, name
    if not os.environ.get("SELENE_SCREENSHOTS"):
        shutil.rmtree(shots)
