"""Shared fixtures. Prefect runs against one session-wide test harness in a temporary home."""

from __future__ import annotations

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
