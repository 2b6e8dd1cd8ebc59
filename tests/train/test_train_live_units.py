"""The parts of live training without a server: the watcher that reads what rank 0 writes, the board's
handling of a server that fails, the one-line step and the stop request's plumbing."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from selene.executor import events
from selene.flows import live
from selene.train.stage import _Watch


def test_watch_passes_on_logged_steps_checkpoints_and_the_curve(tmp_path: Path) -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    events.set_live_listener(lambda kind, p: received.append((kind, p)))
    try:
        watch = _Watch(str(tmp_path), steps=10)
        watch.done.set()  # polled by hand below
        metrics = tmp_path / "metrics.jsonl"
        rows = [{"step": s, "loss": 5.0 - s / 10, "step_time_s": 0.5} for s in (1, 2, 3)]
        metrics.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"step": 4, "lo')  # a line half written
        watch.poll()
        assert [p["row"]["step"] for k, p in received if k == "train-step"] == [1, 2, 3]
        assert received[-1][1]["eta_s"] == pytest.approx((10 - 3) * 0.5)
        with open(metrics, "a") as f:
            f.write('ss": 4.6, "val_loss": 4.7, "step_time_s": 0.5}\n')
        (tmp_path / "checkpoints" / "step-000004").mkdir(parents=True)
        (tmp_path / "checkpoints" / "step-000004" / "meta.json").write_text("{}")
        (tmp_path / "checkpoints" / "step-000004" / ".metadata").write_text("")
        received.clear()
        watch.poll()
        kinds = [k for k, _ in received]
        assert kinds[0] == "train-step" and received[0][1]["row"]["step"] == 4
        assert "train-plot" in kinds  # a validation loss: the curve again
        # a resume rewrites the file shorter: read again, the steps already shown not repeated
        metrics.write_text("".join(json.dumps(r) + "\n" for r in rows[:2]) + json.dumps({"step": 5, "loss": 4.0}) + "\n")
        received.clear()
        watch.poll()
        assert [p["row"]["step"] for k, p in received if k == "train-step"] == [5]
    finally:
        events.set_live_listener(None)
        watch.finish()


def test_a_failing_server_costs_the_updates_once_and_never_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import prefect.artifacts

    calls = []

    def down(**kwargs: Any) -> Any:
        calls.append(kwargs)
        raise ConnectionError("the server went away")

    monkeypatch.setattr(prefect.artifacts, "create_progress_artifact", down)
    board = live.LiveBoard(logging.getLogger("test-live"))
    for step in range(1, 50):
        board.event("train-step", {"row": {"step": step, "loss": 1.0}, "steps": 100, "eta_s": 10.0})
    start = time.monotonic()
    board.close()
    assert time.monotonic() - start < 5
    assert board.failed and len(calls) == 1  # one try, then the rest dropped
    err = capsys.readouterr().err
    assert err.count("dashboard updates stopped") == 1 and "the server went away" in err


def test_step_line_and_eta() -> None:
    row = {"step": 120, "tokens": 245760, "loss": 3.21, "lr": 3e-4, "tokens_per_s": 10500.4, "mfu": 0.412}
    line = live.step_line(row, 5000, 3.2 * 3600)
    assert line.startswith("step 120/5000, tokens 245,760, loss 3.2100, lr 0.0003") and line.endswith("ETA 3.2 h")
    assert "MFU 41.2%" in line and "tokens/s 10,500" in line
    assert live.eta_text(None) == "n/a" and live.eta_text(45) == "45 s" and live.eta_text(600) == "10 min"


def test_a_step_that_evaluated_says_its_scores_on_its_line() -> None:
    row = {"step": 30, "loss": 5.25, "eval/selene_piqa/acc": 0.5, "eval/reference/bits_per_byte": 2.93512}
    line = live.step_line(row, 60, 4.0)
    assert line == "step 30/60, loss 5.2500, ETA 4 s; eval: selene_piqa/acc 0.5, reference/bits_per_byte 2.935"
    assert "eval" not in live.step_line({"step": 31, "loss": 5.2}, 60, 3.9)


def test_stop_requests_reach_what_registered() -> None:
    got: list[str] = []
    events.clear_stop_request()
    with events.on_stop_request(got.append):
        events.request_stop("from the dashboard")
    assert got == ["from the dashboard"] and events.stop_requested() == "from the dashboard"
    late: list[str] = []
    with events.on_stop_request(late.append):  # one that registers after the request still hears it
        pass
    assert late == ["from the dashboard"]
    events.clear_stop_request()
    assert events.stop_requested() is None


def test_a_cancel_is_served_once_and_a_pipeline_starts_no_further_stage() -> None:
    """A stop request lasts until the outermost watched flow ends (the process's next run starts
    clean), and a pipeline asked to stop starts no further stage."""
    from selene.errors import Stopped
    from selene.flows.pipeline import _unless_cancelled
    from selene.job import Job

    events.clear_stop_request()
    ran: list[str] = []
    run = _unless_cancelled(lambda job, force: ran.append(job.stage))
    run(Job("ingest", None, "out", None), False)
    events.request_stop("from the dashboard")
    with pytest.raises(Stopped, match=r"cancelled \(from the dashboard\) before the dedup stage"):
        run(Job("dedup", None, "out", None), False)
    assert ran == ["ingest"]
    live._depth.append(None)  # inside a pipeline's watched flow: a stage's flow ends, the request stays
    with live.watched(with_board=False):
        pass
    assert events.stop_requested() == "from the dashboard"
    live._depth.pop()
    with live.watched(with_board=False):  # the outermost ends: served
        pass
    assert events.stop_requested() is None
