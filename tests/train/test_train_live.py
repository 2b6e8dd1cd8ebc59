"""`selene train` watched and stopped from the dashboard (a real Prefect API, the CPU, gloo, the
debug model): while it runs, the flow run has a progress artifact, a metrics table, a log line per
logged step, the loss curve and its checkpoints; Cancel (the run set to CANCELLING, what the
dashboard's button sends) finishes the step, checkpoints, ends the run Cancelled and the command with
one line; the rerun says where it resumes from."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from selene.train.checkpoint import complete_steps
from selene.train.metrics import read_metrics
from tests.pipeline_runs import subprocess_env, write_token_dataset

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups"), pytest.mark.timeout(1200)]

START_SECONDS = 600.0  # a busy 2-core machine: the command's imports, Prefect's flow start, torchrun
STOP_SECONDS = 300.0


def wait_for(condition: Callable[[], Any], timeout: float, what: str, proc: subprocess.Popen[str] | None = None) -> Any:
    start = time.monotonic()
    while True:
        got = condition()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the command ended first (exit {proc.returncode}):\n{proc.stdout.read()[-3000:] if proc.stdout else ''}")
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.5)


def write_config(tokens: str, root: Path) -> Path:
    cfg = {
        "model": {"preset": "debug"},
        "nproc_per_node": 1,
        "steps": 1_000_000,  # runs until stopped
        "batch": {"seq_len": 32, "global_batch": 4, "micro_batch": 4},
        "optim": {"lr": 3e-3, "warmup_steps": 2},
        "data": {"prefixes": [tokens]},
        "eval_every": 4,
        "eval_batches": 1,
        "log_every": 1,
        "checkpoint": {"every": 4, "keep": 2},
        "tensorboard": False,
        "out": str(root / "out"),
    }
    path = root / "train.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def flow_run_of(out: Path) -> Any:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(like_=str(out))))
    return runs[0] if runs else None


def artifacts_of(run_id: Any) -> dict[str, list[Any]]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run_id])))
    by_key: dict[str, list[Any]] = {}
    for a in sorted(arts, key=lambda a: a.created or 0):
        by_key.setdefault(a.key or "", []).append(a)
    return by_key


def logs_of(run_id: Any) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    with get_client(sync_client=True) as client:
        return [log.message for log in client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))]


def test_train_is_live_on_the_dashboard_and_cancel_stops_it_cleanly(tmp_path: Path, prefect_api: str) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.states import Cancelling

    tokens = write_token_dataset(tmp_path / "tokens")
    config = write_config(tokens, tmp_path)
    out = tmp_path / "out"
    env = subprocess_env(tmp_path, PREFECT_API_URL=prefect_api)
    cmd = [sys.executable, "-c", "from selene.cli import entrypoint; entrypoint()", "train", str(config)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        run = wait_for(lambda: flow_run_of(out), START_SECONDS, "the train flow run", proc)
        # live while it runs: progress, the metrics table, the loss curve and a checkpoint, and a log
        # line per logged step
        keys = {"train-progress", "train-metrics", "train-loss", "train-checkpoints"}
        arts = wait_for(lambda: (a if keys <= set(a := artifacts_of(run.id)) else None), START_SECONDS,
                        "the live artifacts", proc)  # fmt: skip
        with get_client(sync_client=True) as client:
            assert client.read_flow_run(run.id).state.type == StateType.RUNNING
        progress = arts["train-progress"][-1]
        assert progress.type == "progress" and 0 < float(progress.data) < 1  # a million steps asked for
        assert "step" in str(progress.description) and "ETA" in str(progress.description)
        table = arts["train-metrics"][-1]
        assert "loss" in str(table.data) and "tokens/s" in str(table.data)
        assert "step-0000" in str(arts["train-checkpoints"][-1].data)
        assert "<svg" in str(arts["train-loss"][-1].data) or "data:image/svg" in str(arts["train-loss"][-1].data)
        lines = wait_for(lambda: [m for m in logs_of(run.id) if m.startswith("step ")], 60, "step lines in the logs")
        assert "/1000000" in lines[0] and "loss" in lines[0] and "ETA" in lines[0]

        # Cancel, as the dashboard's button: the run's state set to CANCELLING
        with get_client(sync_client=True) as client:
            client.set_flow_run_state(run.id, Cancelling(), force=True)
        asked = time.monotonic()
        rc = proc.wait(STOP_SECONDS)
        took = time.monotonic() - asked
        text = proc.stdout.read() if proc.stdout else ""
    finally:
        if proc.poll() is None:
            proc.kill()
    print(f"cancel to exit: {took:.1f} s")
    assert rc == 1, text[-3000:]
    last_line = text.rstrip().splitlines()[-1]
    assert last_line.startswith("cancelled (from the dashboard): stopped at step "), text[-3000:]
    assert "Traceback" not in text
    step = int(last_line.split("stopped at step ")[1].split(",")[0])
    assert step in complete_steps(str(out / "checkpoints")) and f"step-{step:06d}" in last_line
    assert max(r["step"] for r in read_metrics(str(out / "metrics.jsonl"))) == step
    with get_client(sync_client=True) as client:
        final = wait_for(lambda: (s if (s := client.read_flow_run(run.id).state).type == StateType.CANCELLED else None),
                         60, "the run's Cancelled state")  # fmt: skip
    assert f"step {step}" in str(final.message)

    # the same command resumes from that checkpoint, and says so
    rerun = subprocess.run([*cmd, "--set", f"steps={step + 1}"], env={**env, "SELENE_PREFECT": "off"},
                           capture_output=True, text=True, timeout=START_SECONDS)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"resuming from step {step} (" in rerun.stdout + rerun.stderr
    assert [r["step"] for r in read_metrics(str(out / "metrics.jsonl"))] == list(range(1, step + 2))
