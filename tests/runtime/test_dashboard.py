"""The dashboard remembers: with `selene server start` up, separate commands and `selene run` report to
it, their flow runs and artifacts are found through the Prefect API, and they survive a restart.

Everything runs as a user would: `selene` in subprocesses with their own SELENE_HOME; the API is read
over plain HTTP (the REST filters the dashboard itself uses).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.corpus import PROSE, pile_line
from tests.pipeline_runs import ROOT, subprocess_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def selene(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "selene.cli", *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    assert proc.returncode == 0, f"selene {' '.join(args)}: rc {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def post(url: str, body: dict) -> list[dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return list(json.loads(r.read()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("dashboard")
    env = subprocess_env(tmp, SELENE_HOME=str(tmp / "home"))
    env.pop("PREFECT_API_URL", None)
    port = str(_free_port())
    try:
        selene(env, "server", "start", "--port", port, timeout=240)
        yield tmp, env, f"http://127.0.0.1:{port}/api"
    finally:
        subprocess.run([sys.executable, "-m", "selene.cli", "server", "stop"], env=env, timeout=60, cwd=ROOT)


def test_commands_and_run_report_to_one_server_and_survive_a_restart(server) -> None:  # type: ignore[no-untyped-def]
    tmp, env, api = server
    data = tmp / "data"
    data.mkdir()
    (data / "docs.jsonl").write_bytes(b"".join([pile_line(PROSE[i], "Prose") for i in range(4)] + [pile_line(PROSE[0], "Prose")]))
    status = selene(env, "server", "status").stdout
    assert api in status and "auth" in status
    boiler = (
        "Subscribe to our newsletter for the latest news and offers from our team. "
        "We use cookies to improve your experience on this site and to count visits. "
        "All rights reserved by the publisher of these pages and their authors."
    )
    (data / "pages.jsonl").write_bytes(b"".join(pile_line(f"{PROSE[i]} {boiler}", "Web") for i in range(4)))

    ing = selene(env, "ingest", "-o", str(tmp / "ing"), "--source", f"prose={data}/*.jsonl")
    assert "no Prefect server" not in ing.stderr  # it reported: nothing to say about a dashboard
    selene(env, "dedup", "-i", str(tmp / "ing"), "-o", str(tmp / "dd"))
    cfg = tmp / "pipeline.yaml"
    cfg.write_text(f"name: dash\nrun_dir: {tmp / 'run'}\ningest:\n  sources:\n    - {{name: prose, glob: '{data}/*.jsonl'}}\n")
    selene(env, "run", str(cfg), "--until", "dedup")
    # the cutting stages' tables: what was cut per source, and the most repeated spans with their counts
    selene(env, "ingest", "-o", str(tmp / "pages"), "--source", f"web={data}/pages.jsonl")
    selene(env, "spans", "-i", str(tmp / "pages"), "-o", str(tmp / "spans"), "--unit", "sentence", "--min-doc-words", "0")
    selene(env, "substrings", "-i", str(tmp / "pages"), "-o", str(tmp / "substrings"), "--min-length", "100")

    def runs() -> dict[str, list[dict]]:
        by_flow: dict[str, list[dict]] = {}
        flows = {f["id"]: f["name"] for f in post(f"{api}/flows/filter", {})}
        for r in post(f"{api}/flow_runs/filter", {"sort": "EXPECTED_START_TIME_ASC"}):
            by_flow.setdefault(flows[r["flow_id"]], []).append(r)
        return by_flow

    before = runs()
    # two commands, and the pipeline with its two stages as sub-flows: all completed
    assert len(before["selene-pipeline"]) == 1
    assert len(before["ingest"]) == 3 and len(before["dedup"]) == 2
    assert all(r["state_type"] == "COMPLETED" for rs in before.values() for r in rs)
    pipeline_id = before["selene-pipeline"][0]["id"]
    subflows = post(f"{api}/flow_runs/filter", {"flow_runs": {"parent_flow_run_id": {"any_": [pipeline_id]}}})
    assert sorted(r["name"].split(" ")[0] for r in subflows) == ["dedup", "ingest"]
    arts = post(f"{api}/artifacts/filter", {})
    keys = {a["key"] for a in arts if a.get("key")}
    assert {"ingest-stats", "ingest-reasons", "dedup-stats", "dedup-s-curve", "pipeline-progress", "run-report"} <= keys
    for stage in ("spans", "substrings"):
        assert {f"{stage}-edits", f"{stage}-repeats"} <= keys
        (top,) = [a for a in arts if a.get("key") == f"{stage}-repeats"]
        rows = json.loads(top["data"]) if isinstance(top["data"], str) else top["data"]
        # the boilerplate, once in each of the four pages: cut from three, kept in the first
        assert any(r["occurrences"] == 4 and "cookies" in r["text"] for r in rows), rows
    by_run: dict[str, set[str]] = {}
    for a in arts:
        by_run.setdefault(a.get("flow_run_id") or "", set()).add(a.get("key") or a["type"])
    assert {"ingest-stats", "ingest-reasons"} <= by_run[before["ingest"][0]["id"]]  # the first command's own
    tasks = post(f"{api}/task_runs/filter", {"flow_runs": {"id": {"any_": [before["ingest"][0]["id"]]}}})
    # one worker: one task run per step, not one per document or hash bucket
    assert sorted(t["name"] for t in tasks) == ["exact-dedup-bucket", "ingest-file", "write-shard"]

    # the history is in the selene home's database: a restart keeps it
    selene(env, "server", "stop")
    assert selene(env, "ingest", "-o", str(tmp / "ing2"), "--source", f"prose={data}/*.jsonl").stderr.count("no Prefect server") == 1
    port = api.rsplit(":", 1)[1].split("/")[0]
    selene(env, "server", "start", "--port", port, timeout=240)
    after = runs()
    assert {r["id"] for rs in before.values() for r in rs} <= {r["id"] for rs in after.values() for r in rs}
    assert os.path.exists(tmp / "home" / "prefect" / "prefect.db")


def test_run_of_data_stages_imports_no_torch(tmp_path: Path) -> None:
    """`selene run --until tokenize` (no server) never loads torch; training would, when it runs."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "docs.jsonl").write_bytes(b"".join(pile_line(PROSE[i], "Prose") for i in range(4)))
    cfg = tmp_path / "p.yaml"
    cfg.write_text(
        f"name: t\nrun_dir: {tmp_path / 'run'}\ningest:\n  sources:\n    - {{name: prose, glob: '{data}/*.jsonl'}}\n"
        "tokenize: {vocab_size: 500}\n"
    )
    code = (
        "import sys\nfrom selene.cli import main\nrc = main(sys.argv[1:])\n"
        "heavy = [m for m in ('torch', 'lm_eval', 'transformers', 'prefect') if m in sys.modules]\n"
        "print('HEAVY', heavy)\nsys.exit(rc)\n"
    )
    env = subprocess_env(tmp_path, SELENE_HOME=str(tmp_path / "home"))
    env.pop("PREFECT_API_URL", None)
    proc = subprocess.run([sys.executable, "-c", code, "run", str(cfg), "--until", "tokenize"], env=env,
                          capture_output=True, text=True, timeout=300, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "HEAVY []" in proc.stdout
    assert (tmp_path / "run" / "tokenize" / "manifest.json").exists()


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom selene.cli import main\nrc = main(['--help'])\n"
        "heavy = [m for m in ('prefect', 'torch', 'pydantic', 'pyarrow', 'numpy', 'yaml', 'fsspec', 'lm_eval') if m in sys.modules]\n"
        "print('HEAVY', heavy)\nsys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0 and "HEAVY []" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
