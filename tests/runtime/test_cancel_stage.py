"""A data stage's flow run, as a command makes it: from the flow's own deployment (the dashboard
offers Cancel only there), and a Cancel of it (the run set to CANCELLING, what the button sends)
stops the stage at its next item with one line, the run Cancelled; the same command then resumes
and writes what an uninterrupted run writes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from selene.errors import Stopped
from selene.executor import events
from selene.ingest.config import IngestConfig
from tests.ingest.test_ingest import build_corpus
from tests.pipeline_runs import output_hashes


@pytest.fixture
def specs(tmp_path: Path):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path / "corpus")[0]


def _cancel_when_first_file_is_read(
    client: Any, flow_runs: list[Any], progress: list[tuple[str, int, int]]
) -> Any:
    """A progress hook: after the first input file, the run is cancelled as the dashboard does it,
    and the hook holds that file's task until the cancel watch has turned it into a stop request."""
    from prefect.runtime import flow_run
    from prefect.states import Cancelling

    def hook(step: str, done: int, total: int) -> None:
        progress.append((step, done, total))
        if step != "ingest-file" or done != 1:
            return
        run_id = flow_run.get_id()
        flow_runs.append(run_id)
        client.set_flow_run_state(run_id, Cancelling(), force=True)
        deadline = time.monotonic() + 60
        while events.stop_requested() is None and time.monotonic() < deadline:
            time.sleep(0.05)

    return hook


def test_a_cancelled_data_stage_stops_at_its_next_item_and_resumes(
    specs, tmp_path: Path, prefect_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType

    from selene.config import ExecutorConfig
    from selene.flows import live
    from selene.flows.stage import run_flow
    from selene.job import Job, run_direct

    monkeypatch.setattr(live.CancelWatch, "INTERVAL", 0.2)
    job = Job(
        "ingest",
        None,
        str(tmp_path / "ingest"),
        IngestConfig(sources=specs),
        ExecutorConfig(kind="threads", workers=1),
    )
    flow_runs: list[Any] = []
    progress: list[tuple[str, int, int]] = []
    with get_client(sync_client=True) as client:
        events.set_progress_listener(_cancel_when_first_file_is_read(client, flow_runs, progress))
        try:
            with pytest.raises(Stopped) as stopped:
                run_flow(job, False)
        finally:
            events.set_progress_listener(None)
        assert str(stopped.value) == (
            "cancelled (from the dashboard): the ingest stage stopped in step ingest-file with 1 of 4 items done; "
            "the same command resumes from them"
        )
        assert stopped.value.exit_code == 1
        assert (
            max(done for step, done, _ in progress if step == "ingest-file") == 1
        )  # as the progress bar says
        assert events.stop_requested() is None  # served: the next run in this process starts clean
        run = client.read_flow_run(flow_runs[0])
        assert run.state is not None and run.state.type == StateType.CANCELLED
        assert run.state.message == str(stopped.value)
        assert (
            run.deployment_id is not None
            and client.read_deployment(run.deployment_id).name == "selene-command"
        )
        tasks = client.read_task_runs()
        ours = [t for t in tasks if t.flow_run_id == run.id]
        assert ours and all(t.state is not None and t.state.type == StateType.COMPLETED for t in ours)

    # the same command resumes, and its output is an uninterrupted run's
    result = run_flow(job, False)
    assert not result.skipped and result.manifest.stats.documents_in == 25
    fresh = Job(
        "ingest",
        None,
        str(tmp_path / "fresh"),
        IngestConfig(sources=specs),
        ExecutorConfig(kind="threads", workers=1),
    )
    run_direct(fresh, False)
    assert output_hashes(tmp_path, ["ingest"]) == {
        k.replace("fresh", "ingest", 1): v for k, v in output_hashes(tmp_path, ["fresh"]).items()
    }


def test_the_cancel_watch_hears_the_deployment_run_that_started_the_process(
    prefect_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``selene deploy`` a stage runs as a sub-flow of the served deployment's run, the one
    whose page offers Cancel: the watch of the stage's run hears that run's Cancel too."""
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.states import Cancelling, Running

    from selene.flows import live

    @flow(name="cancel-watch-probe")
    def probe() -> None:
        pass

    monkeypatch.setattr(live.CancelWatch, "INTERVAL", 0.1)
    with get_client(sync_client=True) as client:
        stage_run, deployment_run = (client.create_flow_run(probe, state=Running()) for _ in range(2))
        monkeypatch.setenv("PREFECT__FLOW_RUN_ID", str(deployment_run.id))
        assert live.root_run() == deployment_run.id
        events.clear_stop_request()
        watch = live.CancelWatch(stage_run.id, live.root_run())
        try:
            time.sleep(0.5)
            assert events.stop_requested() is None  # both running
            client.set_flow_run_state(deployment_run.id, Cancelling(), force=True)
            deadline = time.monotonic() + 30
            while events.stop_requested() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert events.stop_requested() == "from the dashboard"
        finally:
            watch.close()
            events.clear_stop_request()


def test_a_deployment_run_whose_stage_stopped_ends_cancelled_with_its_line() -> None:
    from selene.flows.deploy import _cancelled_cleanly

    def stopped() -> None:
        raise Stopped("terminated (SIGTERM): stopped at step 57, checkpoint out/checkpoints/step-000057")

    state = _cancelled_cleanly(stopped)
    assert (
        state.is_cancelled()
        and state.message
        == "terminated (SIGTERM): stopped at step 57, checkpoint out/checkpoints/step-000057"
    )
    assert _cancelled_cleanly(lambda: 3) == 3


@pytest.mark.parametrize("cancelled", ["pipeline", "stage"])
def test_a_cancelled_pipeline_run_stops_its_stage_and_starts_no_other(
    specs, tmp_path: Path, prefect_api: str, monkeypatch: pytest.MonkeyPatch, cancelled: str
) -> None:  # type: ignore[no-untyped-def]
    """`selene run`: the pipeline's run and each stage's sub-flow run have Cancel (each its flow's
    deployment); a Cancel of either stops the stage running (ingest, at its next file), the next
    stage never starts, and both runs end Cancelled."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName, FlowRunFilterParentFlowRunId
    from prefect.client.schemas.objects import StateType
    from prefect.runtime import flow_run
    from prefect.states import Cancelling

    from selene.config.pipeline import load_pipeline_config
    from selene.flows import live
    from selene.flows.pipeline import pipeline_flow

    monkeypatch.setattr(live.CancelWatch, "INTERVAL", 0.2)
    sources = "".join(f"    - {{name: {s.name}, glob: '{s.glob}'}}\n" for s in specs)
    path = tmp_path / "pipeline.yaml"
    path.write_text(
        f"name: cancel-{tmp_path.name}\nrun_dir: {tmp_path / 'run'}\nexecutor: {{workers: 1}}\ningest:\n  sources:\n{sources}"
    )
    cfg = load_pipeline_config(str(path))
    named = FlowRunFilter(name=FlowRunFilterName(like_=f"pipeline {cfg.name}"))
    with get_client(sync_client=True) as client:

        def hook(step: str, done: int, total: int) -> None:
            if step == "ingest-file" and done == 1:
                pipeline_run = client.read_flow_runs(flow_run_filter=named)[0].id
                client.set_flow_run_state(
                    pipeline_run if cancelled == "pipeline" else flow_run.get_id(), Cancelling(), force=True
                )
                deadline = time.monotonic() + 60
                while events.stop_requested() is None and time.monotonic() < deadline:
                    time.sleep(0.05)

        events.set_progress_listener(hook)
        try:
            with pytest.raises(
                Stopped,
                match=r"^cancelled \(from the dashboard\): the ingest stage stopped in step ingest-file with 1 of 4",
            ):
                pipeline_flow(cfg, until_stage="dedup")
        finally:
            events.set_progress_listener(None)
        run = client.read_flow_runs(flow_run_filter=named)[0]
        assert run.state is not None and run.state.type == StateType.CANCELLED
        assert (
            run.deployment_id is not None
            and client.read_deployment(run.deployment_id).name == "selene-command"
        )
        # the stage's sub-flow run has its own Cancel too (its flow's deployment), and is the pipeline's
        children = FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run.id]))
        (stage_run,) = client.read_flow_runs(flow_run_filter=children)
        assert stage_run.name.startswith("ingest → ") and stage_run.deployment_id is not None
        assert stage_run.state is not None and stage_run.state.type == StateType.CANCELLED
    assert not (tmp_path / "run" / "dedup").exists()


def test_a_cancel_after_the_last_item_ends_the_run_cancelled_with_the_output_complete(
    specs, tmp_path: Path, prefect_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A Cancel while the stage finishes (its manifest, after every item): the output is complete and
    the run ends Cancelled saying so (Prefect refuses a Completed run once it is Cancelling: it would
    stay Cancelling)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.runtime import flow_run
    from prefect.states import Cancelling

    from selene.config import ExecutorConfig
    from selene.flows import live, stage
    from selene.job import Job

    monkeypatch.setattr(live.CancelWatch, "INTERVAL", 0.2)
    real_execute = stage.execute
    runs: list[Any] = []

    def execute_then_cancel(*args: Any) -> Any:
        result = real_execute(*args)
        runs.append(flow_run.get_id())
        with get_client(sync_client=True) as client:
            client.set_flow_run_state(runs[0], Cancelling(), force=True)
        deadline = time.monotonic() + 60
        while events.stop_requested() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return result

    monkeypatch.setattr(stage, "execute", execute_then_cancel)
    job = Job(
        "ingest",
        None,
        str(tmp_path / "ingest"),
        IngestConfig(sources=specs),
        ExecutorConfig(kind="threads", workers=1),
    )
    with pytest.raises(
        Stopped,
        match=r"^cancelled \(from the dashboard\) as the ingest stage finished: its output is complete$",
    ):
        stage.run_flow(job, False)
    assert (tmp_path / "ingest" / "manifest.json").exists()
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(runs[0]).state
    assert (
        state is not None
        and state.type == StateType.CANCELLED
        and "its output is complete" in str(state.message)
    )


def _cancel_and_wait(client: Any, run_id: Any) -> None:
    """The run cancelled as the dashboard does it, and the cancel watch has heard it."""
    from prefect.states import Cancelling

    client.set_flow_run_state(run_id, Cancelling(), force=True)
    deadline = time.monotonic() + 60
    while events.stop_requested() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_cancelled_ablation_or_study_run_starts_no_further_step(
    prefect_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`selene ablate` and `selene scaling-study` runs (their own deployments, like every command's):
    a Cancel of the run stops it before its next stage or step, and the run ends Cancelled."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.runtime import flow_run

    from selene.flows import ablate, live, study
    from selene.job import Job

    monkeypatch.setattr(live.CancelWatch, "INTERVAL", 0.1)
    runs: list[Any] = []
    ran: list[str] = []

    def ablation(cfg: Any, where: str, run_job: Any, step: Any) -> dict[str, Any]:
        run_job(Job("ingest", None, "variant-a", None), False)
        runs.append(flow_run.get_id())
        with get_client(sync_client=True) as client:
            _cancel_and_wait(client, runs[-1])
        run_job(Job("dedup", None, "variant-a", None), False)
        raise AssertionError("a stage started after the Cancel")

    monkeypatch.setattr(ablate, "run_ablation", ablation)
    monkeypatch.setattr(ablate, "run_flow", lambda job, force: ran.append(job.stage))
    monkeypatch.setattr(ablate, "checked", lambda run: run)  # no outputs to claim here
    with pytest.raises(Stopped, match=r"^cancelled \(from the dashboard\) before the dedup stage$"):
        ablate.ablation_flow(type("Cfg", (), {"name": "probe"})(), "ablation.yaml")  # type: ignore[arg-type]
    assert ran == ["ingest"]

    def scaling_study(cfg: Any, call: Any) -> dict[str, Any]:
        call("probe-device", lambda: ran.append("probe-device"))
        runs.append(flow_run.get_id())
        with get_client(sync_client=True) as client:
            _cancel_and_wait(client, runs[-1])
        call("run-small", lambda: ran.append("run-small"))
        raise AssertionError("a step started after the Cancel")

    monkeypatch.setattr(study.study, "run_study", scaling_study)
    with pytest.raises(
        Stopped, match=r"^cancelled \(from the dashboard\) before the study's run-small step$"
    ):
        study.scaling_study_flow(type("Cfg", (), {})())  # type: ignore[arg-type]
    assert ran == ["ingest", "probe-device"]
    with get_client(sync_client=True) as client:
        for run_id in runs:
            run = client.read_flow_run(run_id)
            assert run.state is not None and run.state.type == StateType.CANCELLED, run.state
            assert run.deployment_id is not None
