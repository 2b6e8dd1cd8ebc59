"""selene.server: one real Prefect server, started once for the module, and the cases that start none.

Each test has its own SELENE_HOME; nothing here reads the session's PREFECT_HOME from conftest.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from selene import server
from selene.errors import SeleneError, UsageError

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str, body: dict | None = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with NO_PROXY.open(req, timeout=10) as r:
        return json.loads(r.read())


def group_gone(pgid: int, wait: float = 5.0) -> bool:
    """No live process is left in group `pgid` (killed members may stay zombies a moment, until
    init reaps them)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            ps = subprocess.run(["ps", "-eo", "pgid=,stat="], capture_output=True, text=True, check=True)
            return all(
                stat.startswith("Z")
                for g, stat in (r.split() for r in ps.stdout.splitlines())
                if int(g) == pgid
            )
        time.sleep(0.05)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SELENE_HOME", str(tmp_path / "selene"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv(server.SERVER_AUTH_ENV, raising=False)
    return tmp_path / "selene"


@pytest.fixture
def popen_calls(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every process `start` spawns during the test."""
    calls: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def record(*args, **kwargs):
        proc = real(*args, **kwargs)
        calls.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", record)
    return calls


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    """A real server under a temporary SELENE_HOME (starting one takes 5-20 s here: once per module)."""
    home = tmp_path_factory.mktemp("selene-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SELENE_HOME", str(home))
        mp.delenv("PREFECT_API_URL", raising=False)
        mp.delenv(server.SERVER_AUTH_ENV, raising=False)
        info = server.start(port=free_port())
        try:
            yield info
        finally:
            server.stop()
            with contextlib.suppress(ProcessLookupError):  # never leave a server behind
                os.killpg(info.pid, signal.SIGKILL)


# ----------------------------------------------------------------------------- a real server


def test_start_records_a_healthy_server(live: server.ServerInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    assert live.url == f"http://127.0.0.1:{live.port}/api"
    st = server.status()
    assert st is not None
    assert st["healthy"] and st["pid_alive"]
    assert (st["pid"], st["url"], st["auth"]) == (live.pid, live.url, False)
    assert st["listening"] == f"127.0.0.1:{live.port}"
    assert server.read_state() == live
    assert get_json(f"{live.url}/admin/version")  # the API itself, not only /health

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    assert server.api_url() == live.url
    monkeypatch.setenv("PREFECT_API_URL", "http://elsewhere.invalid:4200/api")  # the user's: as is
    assert server.api_url() == "http://elsewhere.invalid:4200/api"


def test_second_start_returns_the_running_server(live: server.ServerInfo) -> None:
    again = server.start(port=free_port())
    assert again == live


def test_the_server_keeps_history_in_selene_home(live: server.ServerInfo) -> None:
    db = Path(live.prefect_home) / "prefect.db"
    assert db.parent == Path(os.environ["SELENE_HOME"]) / "prefect"
    get_json(f"{live.url}/flows/", {"name": "selene-server-test"})
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        names = [r[0] for r in con.execute("SELECT name FROM flow")]
    assert "selene-server-test" in names


def test_the_dashboard_calls_this_server(live: server.ServerInfo) -> None:
    # --port alone would leave the UI calling Prefect's default port (the UI's API URL is a setting)
    settings = get_json(f"{live.ui_url}/ui-settings")
    assert isinstance(settings, dict)
    assert settings["api_url"] == live.url


def test_logs(live: server.ServerInfo) -> None:
    assert f"selene server start 127.0.0.1:{live.port}" in server.tail(100)
    assert len(server.tail(3).splitlines()) <= 3
    lines = server.follow(poll=0.05)
    with open(server.log_path(), "a") as f:
        f.write("a line written after follow()\n")
    assert next(lines) == "a line written after follow()"
    lines.close()


def test_stop_ends_the_whole_process_group(live: server.ServerInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    # the last test on `live` (file order)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    assert server.stop() is True
    assert group_gone(live.pid)
    assert server.api_url() is None
    assert server.status() is None
    assert not server.state_path().exists()
    assert server.stop() is False


# ------------------------------------------------------------------------- no server started


def test_stale_state_file_is_no_server(home: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    port = free_port()
    stale = server.ServerInfo(
        pid=dead.pid, host="127.0.0.1", port=port, url=f"http://127.0.0.1:{port}/api", ui_url="", started="",
        log="", prefect_home="", auth=False, version="0",
    )  # fmt: skip
    server.server_dir().mkdir(parents=True)
    server.state_path().write_text(stale.to_json())

    assert server.api_url() is None
    assert server.running() is None
    st = server.status()
    assert st is not None
    assert not st["pid_alive"] and not st["healthy"]
    assert server.stop() is False  # nothing to stop, and the stale file goes
    assert not server.state_path().exists()


def test_unreadable_state_file_is_no_server(home: Path) -> None:
    server.server_dir().mkdir(parents=True)
    server.state_path().write_text("{not json")
    assert server.api_url() is None
    assert server.status() is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "example.org"])
def test_non_loopback_host_needs_auth(home: Path, popen_calls: list, host: str) -> None:
    with pytest.raises(UsageError, match="PREFECT_SERVER_API_AUTH_STRING=user:password") as e:
        server.start(host=host, port=free_port())
    assert server.CLIENT_AUTH_ENV in str(e.value)
    assert popen_calls == []
    assert not server.state_path().exists()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost", "LOCALHOST"])
def test_loopback_hosts(host: str) -> None:
    assert server._is_loopback(host)


def test_port_in_use(home: Path, popen_calls: list) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(UsageError, match=rf"port {port} .*in use.*--port"):
            server.start(port=port)
    assert popen_calls == []
    assert not server.state_path().exists()


def test_server_that_exits_while_starting(
    home: Path, popen_calls: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        server,
        "_command",
        lambda host, port: [sys.executable, "-c", "print('boom: no database'); raise SystemExit(3)"],
    )
    with pytest.raises(SeleneError, match=r"exited with code 3(.|\n)*boom: no database"):
        server.start(port=free_port())
    assert not server.state_path().exists()
    assert "boom: no database" in server.tail(5)  # the log keeps it for `selene server logs`


def test_server_that_never_answers_is_killed(
    home: Path, popen_calls: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a child of its own: the whole group must go, not only the process `start` spawned
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    monkeypatch.setattr(server, "_command", lambda host, port: [sys.executable, "-c", script])
    with pytest.raises(SeleneError, match="did not answer"):
        server.start(port=free_port(), timeout=1.5)
    (proc,) = popen_calls
    assert proc.poll() is not None
    assert group_gone(proc.pid)
    assert not server.state_path().exists()


def test_server_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    env = server._server_env("127.0.0.1", 4300, "http://127.0.0.1:4300/api")
    assert "PREFECT_API_URL" not in env  # the server must not call itself at a user's URL
    assert env["PREFECT_HOME"] == str(home / "prefect")
    assert (
        env["PREFECT_SERVER_DATABASE_CONNECTION_URL"]
        == f"sqlite+aiosqlite:///{home / 'prefect' / 'prefect.db'}"
    )
    assert env["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert env["PREFECT_SERVER_UI_API_URL"] == "http://127.0.0.1:4300/api"
