"""Deployments: prefect.yaml entrypoints import, and a served stage deployment runs on a real Prefect server.

The end-to-end test starts its own `prefect server start` (a fresh PREFECT_HOME and SQLite database
in tmp) rather than the session harness, serves the ingest wrapper from a second process and
triggers it through the API from a third; every environment change lives in those subprocesses'
env dicts, and every process group is killed in `finally`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from selene.config.pipeline import PipelineConfig, load_pipeline_config
from selene.errors import ConfigError
from selene.pipeline import active_stages
from tests.corpus import PROSE, pile_line

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------- unit checks


def test_prefect_yaml_parses_and_every_entrypoint_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.flows import load_flow_from_entrypoint

    # loading an entrypoint puts its folder (selene/flows) on sys.path; keep that out of later tests
    monkeypatch.setattr(sys, "path", list(sys.path))

    data = yaml.safe_load((REPO / "prefect.yaml").read_text())
    deployments = data["deployments"]
    assert len(deployments) == 9
    flow_names = set()
    for d in deployments:
        assert d["work_pool"]["name"] == "selene"
        assert (REPO / d["parameters"]["config_path"]).is_file()
        path, _, func = d["entrypoint"].partition(":")
        fl = load_flow_from_entrypoint(str(REPO / path) + ":" + func)
        assert "config_path" in fl.parameters.properties
        flow_names.add(fl.name)
    assert flow_names == {
        "selene-pipeline",
        *(f"selene-{s}" for s in active_stages(load_pipeline_config(REPO / "configs" / "demo.yaml"))),
    }
    pull = data["pull"][0]["prefect.deployments.steps.set_working_directory"]
    assert "directory" in pull


def test_build_deployments_names_parameters_and_tags() -> None:
    from selene.flows.deploy import build_deployments

    deps = build_deployments(str(REPO / "configs" / "demo.yaml"))
    names = [f"{d.flow_name}/{d.name}" for d in deps]
    assert names[0] == "selene-pipeline/demo" and "selene-tokenize/demo" in names and len(names) == 9
    for d in deps:
        assert d.parameters == {"config_path": str(REPO / "configs" / "demo.yaml")}
        assert "selene" in d.tags and "config:demo" in d.tags and d.description
        json.dumps(d.parameters)  # serialisable
    assert [d.flow_name for d in build_deployments(str(REPO / "configs/demo.yaml"), only=["ingest"])] == [
        "selene-ingest"
    ]
    with pytest.raises(ConfigError, match="unknown deployment"):
        build_deployments(str(REPO / "configs/demo.yaml"), only=["nope"])


def test_a_config_named_as_the_commands_deployment_is_refused(tmp_path: Path) -> None:
    """`<flow>/selene-command` is the deployment commands' own runs come from (the dashboard's Cancel
    needs one): served deployments of that name would be the same deployments."""
    from selene.flows.deploy import build_deployments

    text = (REPO / "configs" / "demo.yaml").read_text()
    assert "\nname: demo\n" in "\n" + text
    path = tmp_path / "pipeline.yaml"
    path.write_text(("\n" + text).replace("\nname: demo\n", "\nname: selene-command\n", 1))
    with pytest.raises(
        ConfigError, match=r"name 'selene-command' is the deployment that selene commands' own runs"
    ):
        build_deployments(str(path))


def test_stage_input_follows_the_active_stages() -> None:
    from selene.pipeline import stage_input

    cfg = PipelineConfig(run_dir="/r")
    assert stage_input(cfg, "dedup") == "/r/ingest"
    assert stage_input(cfg, "tokenize") == "/r/dedup"  # no tasks, no blend: both skipped
    with pytest.raises(ConfigError):
        stage_input(cfg, "blend")
    cfg = PipelineConfig.model_validate(
        {"run_dir": "/r", "decontaminate": {"tasks": ["t.jsonl"]}, "blend": {"weights": {"a": 1.0}}}
    )
    assert stage_input(cfg, "blend") == "/r/decontaminate" and stage_input(cfg, "tokenize") == "/r/blend"


# ------------------------------------------------------------------------- real server e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"prefect server exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"prefect server not healthy after {timeout}s:\n{log.read_text()[-4000:]}")


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM the process group, then SIGKILL it if it lingers."""
    if proc is None or proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


TRIGGER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter, ArtifactFilterFlowRunId, FlowRunFilter, FlowRunFilterParentFlowRunId)
    from prefect.deployments import run_deployment

    name, config_path = sys.argv[1], sys.argv[2]

    async def wait_for_deployment() -> None:
        async with get_client() as client:
            deadline = time.monotonic() + 120
            while True:
                try:
                    await client.read_deployment_by_name(name)
                    return
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.5)

    async def artifacts_of(run_id):
        async with get_client() as client:
            children = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run_id])))
            ids = [run_id, *(c.id for c in children)]
            arts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=ids)))
            return [a.key for a in arts], [str(a.data) for a in arts if a.key == "ingest-stats"]

    asyncio.run(wait_for_deployment())
    run = run_deployment(name, parameters={"config_path": config_path}, timeout=200, poll_interval=1)
    keys, stats = asyncio.run(artifacts_of(run.id))
    print("RESULT " + json.dumps({"state": run.state.type.value if run.state else None,
                                  "keys": keys, "stats": stats}))
    """
)


def _write_config(tmp: Path) -> Path:
    data = tmp / "data"
    data.mkdir()
    lines = [pile_line(PROSE[i], "Prose") for i in range(5)] + [pile_line(PROSE[0], "Prose")]
    (data / "docs.jsonl").write_bytes(b"".join(lines))
    cfg = {
        "name": "deploytest",
        "run_dir": str(tmp / "run"),
        "executor": {"kind": "threads", "workers": 1},
        "ingest": {
            "sources": [{"name": "prose", "glob": str(data / "*.jsonl")}],
            "exact_dedup": {"buckets": 2},
        },
    }
    path = tmp / "pipeline.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_served_ingest_deployment_runs_on_a_real_server(tmp_path: Path) -> None:
    config_path = _write_config(tmp_path)
    home = tmp_path / "prefect-home"
    home.mkdir()
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    base = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    base.update(
        PREFECT_HOME=str(home),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_API_DATABASE_CONNECTION_URL=f"sqlite+aiosqlite:///{home / 'prefect.db'}",
        PREFECT_LOGGING_LEVEL="WARNING",
        PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
    )
    client_env = {**base, "PREFECT_API_URL": api}
    prefect_bin = str(Path(sys.executable).with_name("prefect"))
    server_log, serve_log = tmp_path / "server.log", tmp_path / "serve.log"
    server: subprocess.Popen[bytes] | None = None
    serve: subprocess.Popen[bytes] | None = None
    try:
        with server_log.open("wb") as out:
            server = subprocess.Popen(
                [prefect_bin, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                env=base,
                cwd=tmp_path,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _wait_healthy(f"{api}/health", server, server_log, timeout=120)

        serve_code = (
            "from selene.flows.deploy import serve_pipeline; "
            f"serve_pipeline({str(config_path)!r}, limit=1, only=['ingest'])"
        )
        with serve_log.open("wb") as out:
            serve = subprocess.Popen(
                [sys.executable, "-c", serve_code],
                env=client_env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        trigger = subprocess.run(
            [sys.executable, "-c", TRIGGER, "selene-ingest/deploytest", str(config_path)],
            env=client_env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=240,
        )
        line = next((x for x in trigger.stdout.splitlines() if x.startswith("RESULT ")), None)
        assert trigger.returncode == 0 and line, (
            f"trigger failed ({trigger.returncode}):\n{trigger.stdout[-3000:]}\n{trigger.stderr[-3000:]}\n"
            f"serve log:\n{serve_log.read_text()[-4000:]}"
        )
        result = json.loads(line.removeprefix("RESULT "))
        assert result["state"] == "COMPLETED", (result, serve_log.read_text()[-4000:])
        assert {"ingest-stats", "ingest-reasons"} <= set(result["keys"])
        assert '"source": "Prose", "in": 6, "kept": 5' in result["stats"][0]  # one exact copy removed
        manifest = json.loads((tmp_path / "run" / "ingest" / "manifest.json").read_text())
        assert manifest["stats"]["documents_in"] == 6
    finally:
        _stop(serve)
        _stop(server)
