"""Shared fixtures. Prefect runs against one session-wide test harness in a temporary home."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="selene-prefect-"))
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import pytest


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect API for the whole session (starting one costs seconds)."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(), temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield
