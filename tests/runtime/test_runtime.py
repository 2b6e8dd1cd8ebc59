"""The stage runtime: mappers with and without Prefect behave alike (order, retries, user errors not
retried, task groups), and how a command decides whether it reports to Prefect."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from selene import runner
from selene.errors import InputError, UsageError
from selene.executor import events, mappers
from selene.executor.mappers import LocalMapper, chunks


def square(x: int) -> int:
    return x * x


def flaky(x: int, marker: str) -> int:
    """Fails the first time it sees `marker` missing (and creates it): one retry makes it pass."""
    path = Path(f"{marker}-{x}")
    if not path.exists():
        path.write_text("failed once")
        raise RuntimeError(f"transient failure of item {x}")
    return x


def bad_input(x: int, marker: str) -> int:
    with open(marker, "a") as f:
        f.write("call\n")
    raise InputError(f"item {x}: corrupt")


def test_chunks_cover_every_item_once_in_order() -> None:
    for n in (0, 1, 5, 16, 1000):
        for workers in (1, 2, 3, 64):
            groups = chunks(n, workers)
            assert [i for g in groups for i in g] == list(range(n))
            assert all(len(g) for g in groups)
            assert len(groups) == (min(n, 1) if workers == 1 else min(n, 2 * workers))


@pytest.mark.parametrize(
    ("kind", "workers", "inline"),
    [("processes", 1, 0.3), ("processes", 2, 0.0), ("threads", 2, 0.0), ("processes", 2, 60.0)],
)
def test_local_mapper_order_retries_and_user_errors(
    kind: str, workers: int, inline: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mappers, "INLINE_SECONDS", inline)  # 0: every item after the first goes to the pool
    progress: list[tuple[str, int, int]] = []
    events.set_progress_listener(lambda *a: progress.append(a))
    m = LocalMapper(kind, workers)
    try:
        assert m("sq", square, [(i,) for i in range(7)]) == [i * i for i in range(7)]
        assert progress[0] == ("sq", 0, 7) and progress[-1] == ("sq", 7, 7)
        assert m("flaky", flaky, [(i, str(tmp_path / "m")) for i in range(4)]) == [0, 1, 2, 3]
        calls = tmp_path / "calls"
        with pytest.raises(InputError, match="corrupt"):
            m("bad", bad_input, [(0, str(calls))])
        assert calls.read_text().count("call") == 1  # a user error is not retried
    finally:
        m.close()
        events.set_progress_listener(None)


def test_a_running_dask_cluster_gets_every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a scheduler address nothing runs in the command's own process, not even a lone item;
    a local pool still runs the first items here (no start-up for tiny maps)."""
    monkeypatch.setattr(mappers, "INLINE_SECONDS", 60.0)
    for address, here in (("tcp://127.0.0.1:1", 0), (None, 5)):
        m = LocalMapper("dask", 2, address)
        sent: list[int] = []

        def parallel(name: str, fn: Any, args: list, done: Any, total: int, sent: list = sent) -> list:
            sent.extend(a[0] for a in args)
            return [fn(*a) for a in args]

        monkeypatch.setattr(m, "_parallel", parallel)
        assert m("sq", square, [(i,) for i in range(5)]) == [i * i for i in range(5)]
        assert m("one", square, [(3,)]) == [9]
        assert len(sent) == 6 - here - (1 if address is None else 0)


def test_prefect_mapper_groups_tasks_and_retries_alike(tmp_path: Path, prefect_api: str) -> None:
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    from selene.flows.stage import PrefectMapper

    @flow(name="mapper-test")
    def run() -> tuple[list[int], list[int], str]:
        m = PrefectMapper("threads", 2)
        try:
            a = m("sq", square, [(i,) for i in range(9)])
            b = m("flaky", flaky, [(i, str(tmp_path / "m")) for i in range(3)])
            try:
                m("bad", bad_input, [(0, str(tmp_path / "calls"))])
            except InputError as e:
                err = str(e)
            return a, b, err
        finally:
            m.close()

    state = run(return_state=True)
    a, b, err = state.result()
    assert a == [i * i for i in range(9)] and b == [0, 1, 2] and "corrupt" in err
    assert (tmp_path / "calls").read_text().count("call") == 1
    with get_client(sync_client=True) as client:
        tasks = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
        )
    names = sorted(t.name for t in tasks)
    assert (
        names.count("sq-000") == 1 and len([n for n in names if n.startswith("sq-")]) == 4
    )  # 9 items, 2 workers
    assert len([n for n in names if n.startswith("flaky")]) == 3


# --------------------------------------------------------------------------- which API


def test_no_server_no_prefect(monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.prefect_api() is None
    monkeypatch.setenv("SELENE_PREFECT", "on")
    with pytest.raises(UsageError, match="selene server start"):
        runner.prefect_api()
    monkeypatch.setenv("SELENE_PREFECT", "sometimes")
    with pytest.raises(UsageError, match="auto, on or off"):
        runner.prefect_api()


def test_user_api_url_must_answer_and_off_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # discard port: nothing listens
    with pytest.raises(
        UsageError, match=re.escape("PREFECT_API_URL is http://127.0.0.1:9/api, which does not answer")
    ):
        runner.prefect_api()
    monkeypatch.setenv("SELENE_PREFECT", "off")
    assert runner.prefect_api() is None


def test_active_prefect_profile_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text('active = "work"\n[profiles.work]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n')
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(profiles))
    with pytest.raises(UsageError, match="active Prefect profile"):
        runner.prefect_api()
    profiles.write_text('active = "local"\n[profiles.local]\n')
    assert runner.prefect_api() is None


def test_without_server_the_note_is_said_once(tmp_path: Path) -> None:
    said: list[str] = []
    rt = runner.runtime(say=said.append)
    assert rt.api is None
    rt.note()
    rt.note()
    assert said == [runner.NO_SERVER_NOTE]
    assert "PREFECT_API_URL" not in os.environ
