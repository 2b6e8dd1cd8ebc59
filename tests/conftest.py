"""Shared fixtures. Prefect runs against one session-wide test harness in a temporary home."""

from __future__ import annotations

import importlib.util
import os
import tempfile

os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="selene-prefect-"))
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
# Commands in tests run without Prefect unless a test asks for `prefect_api`: never report to the
# developer's own server or profile.
os.environ["SELENE_HOME"] = tempfile.mkdtemp(prefix="selene-home-")
os.environ.pop("PREFECT_API_URL", None)
os.environ.pop("SELENE_PREFECT", None)
os.environ["PREFECT_PROFILES_PATH"] = os.path.join(os.environ["PREFECT_HOME"], "profiles.toml")

import pytest

# `make test` runs modules on several pytest-xdist workers, each module whole on one worker and handed
# out in collection order. A long module started last keeps one worker busy while the others idle,
# so the longest ones (by `--durations` of a run on two cores) go first.
LONGEST_FIRST = (
    "tests/train/test_gpu_check.py",  # with tests/train/test_mfu.py
    "tests/train/test_train.py",
    "tests/train/test_parallel.py",
    "tests/train/test_train_signals.py",
    "tests/runtime/test_server_hung.py",
    "tests/runtime/test_crash.py",
    "tests/runtime/test_scaleout.py",
    "tests/dedup/test_dedup.py",
    "tests/ablate/test_ablate.py",
    "tests/eval/test_eval_registry.py",
    "tests/runtime/test_dashboard.py",
    "tests/runtime/test_dashboard_cancel.py",
    "tests/runtime/test_cancel_stage.py",
    "tests/runtime/test_logs.py",
    "tests/eval/test_export.py",
    "tests/plan/test_study.py",
    "tests/train/test_train_live.py",
    "tests/train/test_train_inputs.py",
)
# Modules that share a session fixture run on the worker of the module named: another worker would
# make the fixture again (the prepared GPU run on the CPU takes about 90 s).
SAME_WORKER = {"tests/train/test_mfu.py": "tests/train/test_gpu_check.py"}


def _module(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return SAME_WORKER.get(path, path)


def pytest_itemcollected(item: pytest.Item) -> None:
    """The end-to-end modules are what `make test-fast` (-m "not slow") leaves out; marked as they are
    collected, before `-m` deselects."""
    if _module(item.nodeid) in LONGEST_FIRST:
        item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first, the rest in their own order; a module's tests keep theirs."""
    rank = {m: i for i, m in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_module(item.nodeid), len(rank)))


if importlib.util.find_spec("xdist") is not None:

    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        """`--dist loadfile`, with the modules of `SAME_WORKER` on one worker."""
        if config.getoption("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadFileScheduling

        class SharedFixtures(LoadFileScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return _module(nodeid)

        return SharedFixtures(config, log)


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect API for the whole session (starting one costs seconds).

    The harness's server gets as long as it needs to come up: Prefect's default of 30 s failed six
    tests when the suite ran beside two busy processes (migrations and imports on starved cores); a
    server that never comes up still fails the tests that need it, after 10 minutes."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=600), temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


@pytest.fixture
def prefect_api(prefect_harness: None, monkeypatch: pytest.MonkeyPatch) -> str:
    """Commands in this test report to the session's Prefect API, as with `selene server start`."""
    from prefect.settings import PREFECT_API_URL

    url = str(PREFECT_API_URL.value())
    monkeypatch.setenv("PREFECT_API_URL", url)
    return url
