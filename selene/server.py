"""The one persistent Prefect server that selene commands report to (`selene server start|stop|status|logs`).

`start` spawns ``prefect server start`` in its own session, with its own Prefect home and a SQLite
database under the selene home, so the dashboard keeps every run across restarts. Its state (pid, URL,
log) is in ``<home>/server/server.json``; its output goes to ``<home>/server/server.log``.

Every other command finds its server here (`selene.runner` decides from it whether to report to
Prefect; `api_url` sums it up): the user's ``PREFECT_API_URL``, else this server's URL when its
process is alive (`recorded`) and it answers its health check (`answers`), else none. That costs a
file read and, only when the recorded process is alive, one HTTP ``GET /api/health`` of at most
`dashboard_timeout` seconds (``SELENE_DASHBOARD_TIMEOUT``, default 5): a TCP connect is no test, the
kernel accepts connections into the listen backlog of a server that is stopped, swapping or stuck,
and the Prefect client then waits on it for ever.

Every command imports this module, so it imports the standard library only, and the heavier parts of
it (socket, subprocess, urllib.request) inside the functions that need them. POSIX only.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from selene import __version__
from selene.errors import SeleneError, UsageError
from selene.procs import FileLock, home, pid_alive, proc_stat

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Generator

# Prefect 3.8.8's names (prefect/settings/models/server/api.py and models/api.py): the server checks
# HTTP basic auth against the first; every client sends the second.
SERVER_AUTH_ENV = "PREFECT_SERVER_API_AUTH_STRING"
CLIENT_AUTH_ENV = "PREFECT_API_AUTH_STRING"
HEALTH_PATH = "/health"  # under the API URL; answered without auth even when auth is on
LOG_ROTATE_BYTES = 20 << 20  # `start` moves a larger server.log to server.log.1
TIMEOUT_ENV = "SELENE_DASHBOARD_TIMEOUT"  # seconds a command waits for a server's health check
DEFAULT_TIMEOUT = 5.0  # a healthy server answers in milliseconds, a busy machine's within a second or two

_spawned: dict[int, subprocess.Popen[bytes]] = {}  # servers this process started, to reap them on stop


class ServerInfo(NamedTuple):
    """What `start` records in server.json. Immutable (a NamedTuple, not a dataclass: `dataclasses`
    imports `inspect`, which alone would cost every command more than this whole module)."""

    pid: int  # the server process, leader of its own process group
    host: str  # the address it binds
    port: int
    url: str  # the API URL clients on this machine use: http://HOST:PORT/api
    # defaults: a state file that lacks a field (another selene version's) still gives the pid to stop
    ui_url: str = ""  # the dashboard
    started: str = ""  # ISO 8601, local time with offset
    log: str = ""  # server.log
    prefect_home: str = ""  # the server's PREFECT_HOME (its SQLite database is prefect.db there)
    auth: bool = False  # HTTP basic auth on (PREFECT_SERVER_API_AUTH_STRING was set at start)
    version: str = ""  # selene's version that started it

    def to_json(self) -> str:
        import json

        return json.dumps(self._asdict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ServerInfo:
        return cls(**{k: data[k] for k in cls._fields if k in data})


# ------------------------------------------------------------------------------------- files


def server_dir() -> Path:
    return home() / "server"


def state_path() -> Path:
    return server_dir() / "server.json"


def log_path() -> Path:
    """The server's stdout and stderr, appended across starts."""
    return server_dir() / "server.log"


def prefect_home() -> Path:
    """The server process's PREFECT_HOME; its database is ``prefect.db`` there."""
    return home() / "prefect"


def database_url() -> str:
    # aiosqlite: Prefect's server needs an async driver; an absolute path gives four slashes
    return f"sqlite+aiosqlite:///{(prefect_home() / 'prefect.db').absolute()}"


def read_state() -> ServerInfo | None:
    """server.json, or None when it is missing or unreadable."""
    import json  # here, not at the top: most imports of this module never read the state

    try:
        return ServerInfo.from_dict(json.loads(state_path().read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_state(info: ServerInfo) -> None:
    path = state_path()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(info.to_json() + "\n")
    os.replace(tmp, path)  # readers see the old file or the new one, never half of one


def _remove_state() -> None:
    state_path().unlink(missing_ok=True)


def _lock() -> FileLock:
    """An exclusive lock on ``<home>/server/lock`` around start and stop: two `selene server start`s
    at once give one server, not two processes racing for the port and the state file."""
    return FileLock(server_dir() / "lock")


# ------------------------------------------------------------------------------- processes


def _pid_alive(pid: int) -> bool:
    """`pid` runs (a zombie does not count)."""
    proc = _spawned.get(pid)
    if proc is not None:  # our own child: poll() reaps it, or its zombie would stay until we exit
        return proc.poll() is None
    return pid_alive(pid)


def _is_server(pid: int) -> bool:
    """`pid` is alive and still the server `start` spawned, not an unrelated process that reused
    the pid after a reboot: it leads its own process group and, where /proc exists, runs prefect."""
    try:
        if not _pid_alive(pid) or os.getpgid(pid) != pid:
            return False
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"prefect" in f.read()
    except FileNotFoundError:
        return not os.path.isdir("/proc")  # macOS: the group check is all there is
    except OSError:
        return False


def _group_alive(pgid: int) -> bool:
    """A process of group `pgid` runs. Killed members stay zombies until init reaps them (in some
    containers, never): they do not count."""
    if pgid in _spawned:
        _spawned[pgid].poll()  # reap the leader
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc"):
        return True
    stats = (proc_stat(p) for p in os.listdir("/proc") if p.isdigit())
    return any(st is not None and len(st) > 2 and int(st[2]) == pgid and st[0] != b"Z" for st in stats)


def _kill_group(pgid: int, timeout: float) -> None:
    """SIGTERM the group (uvicorn shuts down cleanly and SQLite is left consistent), SIGKILL what
    lingers after `timeout` s."""
    import signal

    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _group_alive(pgid):
            break
    proc = _spawned.pop(pgid, None)
    if proc is not None:
        proc.poll()


# --------------------------------------------------------------------------------- network


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host.lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def _connect_host(host: str) -> str:
    """Where a client on this machine reaches a server bound to `host`."""
    if host in ("", "0.0.0.0", "localhost"):  # localhost: skip the ::1 attempt, uvicorn binds IPv4
        return "127.0.0.1"
    if host.strip("[]") == "::":
        return "::1"
    return host


def _url_host(host: str) -> str:
    host = host.strip("[]")
    return f"[{host}]" if ":" in host else host


def _healthy(url: str, timeout: float = 1.0) -> bool:
    """``GET {url}/health`` answers 200 within `timeout` seconds (see `health_status`)."""
    return health_status(url, timeout) == 200


def answers(url: str, timeout: float, direct: bool = True) -> bool:
    """The API at `url` answers its health check with an HTTP status below 500 within `timeout`
    seconds. Any such answer counts (a user's server or Prefect Cloud may answer 401 or 404 there):
    the question is only whether a client would be kept waiting or refused. `direct`: see
    `health_status`."""
    status = health_status(url, timeout, direct)
    return status is not None and status < 500


def health_status(url: str, timeout: float, direct: bool = True) -> int | None:
    """The HTTP status of ``GET {url}/health``, or None when none comes within `timeout` seconds,
    all of it (name lookup, connect, TLS, the answer) together: the request runs in a daemon thread
    that is left behind when it takes longer. The health check carries no credentials, so TLS is
    not verified (Prefect's own client verifies its requests). Proxies from the environment are
    ignored when `direct` (selene's server, on this machine) or the host is a loopback one (a proxy
    would get the request for 127.0.0.1 otherwise), and used as Prefect's client uses them for a
    user's server elsewhere."""
    import threading
    import urllib.error
    import urllib.request
    from urllib.parse import urlparse

    handlers: list[urllib.request.BaseHandler] = []
    if direct or _is_loopback(urlparse(url).hostname or ""):
        handlers.append(urllib.request.ProxyHandler({}))
    if url.startswith("https:"):
        import ssl

        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        handlers.append(urllib.request.HTTPSHandler(context=ctx))
    opener = urllib.request.build_opener(*handlers)
    got: list[int] = []

    def get() -> None:
        try:
            with opener.open(url.rstrip("/") + HEALTH_PATH, timeout=timeout) as r:
                got.append(int(r.status))
        except urllib.error.HTTPError as e:
            got.append(int(e.code))
        except (OSError, ValueError):
            pass

    t = threading.Thread(target=get, name="selene-health-check", daemon=True)
    t.start()
    t.join(timeout)
    return got[0] if got else None


def dashboard_timeout() -> float:
    """How long a command waits for a server's health check: ``SELENE_DASHBOARD_TIMEOUT`` seconds,
    default 5."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise UsageError(f"{TIMEOUT_ENV}={raw!r}: expected a number of seconds greater than 0")
    return value


def _port_free(host: str, port: int) -> bool:
    """`port` can be bound on `host` as uvicorn binds it (IPv6 when the host has a colon, and
    SO_REUSEADDR: a just-stopped server's TIME_WAIT connections do not count as taken)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host.strip("[]"), port))
        except socket.gaierror as e:
            raise UsageError(
                f"host {host!r} does not resolve ({e}): give an address such as 127.0.0.1"
            ) from None
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return False
            raise UsageError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return True


# ---------------------------------------------------------------------------------- clients


def recorded() -> ServerInfo | None:
    """The server `start` recorded, when its process is alive; no network (see `api_url`)."""
    info = read_state()
    if info is None or not _is_server(info.pid):
        return None
    return info


def api_url() -> str | None:
    """The Prefect API this command reports to, or None to run without Prefect: ``PREFECT_API_URL``
    when set (the user's choice, taken as is); else the URL of the server `start` recorded, if its
    process is alive and it answers its health check within `dashboard_timeout` seconds. A stale
    server.json is left for `start`, `stop` and `status` to clean up."""
    user = os.environ.get("PREFECT_API_URL")
    if user:
        return user
    info = recorded()
    if info is None:
        return None
    return info.url if answers(info.url, dashboard_timeout()) else None


def ensure_client_env(url: str) -> None:
    """Point this process's Prefect client at `url` (before Prefect reads its settings), so it never
    starts a temporary server of its own. Sets ``PREFECT_API_URL`` and nothing else; a server with auth
    on also needs ``PREFECT_API_AUTH_STRING`` in the client's environment (see `auth_problem`)."""
    os.environ["PREFECT_API_URL"] = url


def auth_problem(url: str | None = None) -> str | None:
    """Why a client of selene's server would get HTTP 401, or None: the server has auth on and
    ``PREFECT_API_AUTH_STRING`` is not set here. Only for `url` None or selene's server's URL."""
    info = read_state()
    if info is None or not info.auth or (url is not None and url != info.url):
        return None
    if os.environ.get(CLIENT_AUTH_ENV):
        return None
    return (
        f"the selene server at {info.url} requires basic auth: set {CLIENT_AUTH_ENV}=user:password "
        f"(the value of {SERVER_AUTH_ENV} it was started with)"
    )


# ---------------------------------------------------------------------------------- server


def running() -> ServerInfo | None:
    """The recorded server when its process is alive and ``/api/health`` answers, else None."""
    info = read_state()
    if info is None or not _is_server(info.pid) or not _healthy(info.url):
        return None
    return info


def _command(host: str, port: int) -> list[str]:
    # services stay on (no --no-services): the scheduler, late-run marking and event persistence
    # are what keep the dashboard's run states and history right
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]
    return [*cmd, "--analytics-off"]


def _server_env(host: str, port: int, ui_api_url: str) -> dict[str, str]:
    """os.environ for the server: its own home and database, no telemetry, and no PREFECT_API_URL
    (a client setting: the user's would point the server's own clients and its UI elsewhere)."""
    env = dict(os.environ)
    for key in ("PREFECT_API_URL", "PREFECT_PROFILES_PATH", "PREFECT_PROFILE"):
        env.pop(key, None)  # the server reads its settings from this environment, not a user profile
    db = database_url()
    env.update(
        PREFECT_HOME=str(prefect_home().absolute()),
        # both names Prefect accepts; the SERVER_ one wins when both are set, so a user's cannot win
        PREFECT_SERVER_DATABASE_CONNECTION_URL=db,
        PREFECT_API_DATABASE_CONNECTION_URL=db,
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PYTHONUNBUFFERED="1",  # `selene server logs -f` shows what it prints as it prints it
        # --host/--port reach uvicorn only; Prefect derives its UI's API URL from these settings
        PREFECT_SERVER_API_HOST=host,
        PREFECT_SERVER_API_PORT=str(port),
    )
    if not (env.get("PREFECT_SERVER_UI_API_URL") or env.get("PREFECT_UI_API_URL")):
        env["PREFECT_SERVER_UI_API_URL"] = ui_api_url  # what the browser calls
    return env


def _log_since(offset: int, lines: int = 20) -> str:
    try:
        with open(log_path(), "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def start(host: str = "127.0.0.1", port: int = 4200, timeout: float = 120.0) -> ServerInfo:
    """Start the server and wait until it answers; the one that runs already when there is one
    (whatever `host` and `port` say: compare them to tell "already running")."""
    auth = bool(os.environ.get(SERVER_AUTH_ENV))
    if not _is_loopback(host) and not auth:
        raise UsageError(
            f"refusing to serve the Prefect API on {host} without authentication: anyone who reaches it "
            f"could read and run your flows. Set {SERVER_AUTH_ENV}=user:password (Prefect's HTTP basic "
            f"auth) and clients then need {CLIENT_AUTH_ENV}=user:password; or bind 127.0.0.1 (the default)"
        )
    with _lock():
        info = read_state()
        if info is not None and _is_server(info.pid):
            if _healthy(info.url):
                return info
            raise SeleneError(
                f"a selene server (pid {info.pid}) runs but does not answer at {info.url}{HEALTH_PATH}: "
                f"see `selene server logs` ({info.log}), then `selene server stop` and start again"
            )
        _remove_state()  # stale: its process is gone
        if not _port_free(host, port):
            where = f"http://{_url_host(_connect_host(host))}:{port}/api"
            hint = (
                f"; a Prefect server answers there (not the one of {home()}): set PREFECT_API_URL={where} to use it"
                if _healthy(where)
                else ""
            )
            raise UsageError(
                f"port {port} on {host} is in use by another program{hint}; choose another with --port"
            )
        return _spawn(host, port, auth, timeout)


def _spawn(host: str, port: int, auth: bool, timeout: float) -> ServerInfo:
    import subprocess


    url_host = _url_host(_connect_host(host))
    ui_host = url_host if host not in ("0.0.0.0", "::", "[::]") else _url_host(_hostname())
    url = f"http://{url_host}:{port}/api"
    ui_url = f"http://{ui_host}:{port}"
    prefect_home().mkdir(parents=True, exist_ok=True)
    log = log_path()
    if log.exists() and log.stat().st_size > LOG_ROTATE_BYTES:
        os.replace(log, log.with_name(log.name + ".1"))
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    with open(log, "ab") as out:
        out.write(f"--- selene server start {host}:{port} at {started}\n".encode())
        out.flush()
        offset = out.tell()
        proc = subprocess.Popen(
            _command(host, port),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_server_env(host, port, f"{ui_url}/api"),
            cwd=prefect_home(),  # not the caller's directory, which the server would keep busy
            start_new_session=True,  # its own group: stop() signals it all; the terminal's ^C does not
        )
    _spawned[proc.pid] = proc
    info = ServerInfo(
        pid=proc.pid, host=host, port=port, url=url, ui_url=ui_url, started=started, log=str(log),
        prefect_home=str(prefect_home()), auth=auth, version=__version__,
    )  # fmt: skip
    _write_state(info)
    deadline = time.monotonic() + timeout
    try:
        while not _healthy(url, timeout=1.0):
            code = proc.poll()
            if code is not None:
                raise SeleneError(
                    f"the Prefect server exited with code {code} while starting; the end of {log}:\n"
                    + _log_since(offset)
                )
            if time.monotonic() > deadline:
                raise SeleneError(
                    f"the Prefect server did not answer at {url}{HEALTH_PATH} within {timeout:.0f} s "
                    f"(stopped it); the end of {log}:\n" + _log_since(offset)
                )
            time.sleep(0.25)
    except BaseException:  # also ^C: leave no half-started server behind
        _kill_group(proc.pid, timeout=5.0)
        _remove_state()
        raise
    return info


def _hostname() -> str:
    import socket

    return socket.gethostname()


def stop(timeout: float = 20.0) -> bool:
    """Stop the server (its whole process group) and remove server.json; whether one was running."""
    with _lock():
        info = read_state()
        was = info is not None and _is_server(info.pid)
        if info is not None and was:
            _kill_group(info.pid, timeout)
        _remove_state()  # also a stale or unreadable one
        return was


def status() -> dict[str, Any] | None:
    """The recorded state plus ``pid_alive``, ``healthy`` (``/api/health`` within 1 s) and
    ``listening`` (HOST:PORT); None when there is no server.json."""
    info = read_state()
    if info is None:
        return None
    alive = _is_server(info.pid)
    return {
        **info._asdict(),
        "pid_alive": alive,
        "healthy": alive and _healthy(info.url),
        "listening": f"{_url_host(info.host)}:{info.port}",
        "state_file": str(state_path()),
    }


# -------------------------------------------------------------------------------------- logs


def _log_or_fail() -> Path:
    path = log_path()
    if not path.exists():
        raise UsageError(f"no server log at {path}: `selene server start` writes it")
    return path


def tail(lines: int = 50) -> str:
    """The last `lines` lines of server.log."""
    with open(_log_or_fail(), "rb") as f:
        pos = f.seek(0, os.SEEK_END)
        data = b""
        while pos > 0 and data.count(b"\n") <= lines:  # read back from the end in 64 KiB blocks
            step = min(pos, 1 << 16)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:]) if lines > 0 else ""


def follow(poll: float = 0.5) -> Generator[str, None, None]:
    """The lines appended to server.log from this call on (without their newline), forever; it goes
    on in the new log when `start` rotates it. Stop with ^C or by closing the generator."""
    path = _log_or_fail()
    return _follow(path, path.stat().st_size, poll)  # the end now, not at the first next()


def _follow(path: Path, offset: int, poll: float) -> Generator[str, None, None]:
    while True:
        with open(path, "rb") as f:
            f.seek(offset)
            inode, partial = os.fstat(f.fileno()).st_ino, b""
            while True:
                partial += f.readline()
                if partial.endswith(b"\n"):
                    yield partial.rstrip(b"\r\n").decode(errors="replace")
                    partial = b""
                    continue
                try:
                    if os.stat(path).st_ino != inode:
                        break  # rotated: go on at the start of the new file
                except FileNotFoundError:
                    pass
                time.sleep(poll)
        offset = 0
