"""`selene server start|stop|status|logs`: the one Prefect server every selene command reports to.

While it is up, stage commands, `selene run` and deployments record their flow runs, task runs and
artifacts on it; its SQLite database lives under the selene home (``SELENE_HOME``, default
``~/.selene``), so the history survives restarts. With no server up, commands run without Prefect.
"""

from __future__ import annotations

from typing import Annotated

import typer

from selene.cli.app import server_app
from selene.terminal import console, err_console


@server_app.command("start")
def start(
    host: Annotated[str, typer.Option(help="Address to listen on; beyond loopback needs PREFECT_SERVER_API_AUTH_STRING.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the API and dashboard.")] = 4200,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds to wait for it to answer.")] = 120.0,
) -> None:
    """Start the server in its own session (logging to a file) and wait until it answers."""
    from selene import server

    before = server.running()
    with err_console.status("starting the Prefect server (its first start sets up the database) ..."):
        info = server.start(host=host, port=port, timeout=timeout)
    what = "already running" if before is not None and before.pid == info.pid else "started"
    console.print(f"Prefect server {what}: API [b]{info.url}[/b], dashboard [b]{info.ui_url}[/b] (pid {info.pid})")
    console.print(f"every selene command now reports to it; logs: `selene server logs` ({info.log})")


@server_app.command("stop")
def stop() -> None:
    """Stop the server; its database (the run history) stays for the next start."""
    from selene import server

    console.print("stopped" if server.stop() else "no selene server was running")


@server_app.command("status")
def status() -> None:
    """Where the server listens, whether it answers, whether auth is on; exit 1 when it is not up."""
    from selene import server

    st = server.status()
    if st is None:
        console.print(f"no selene server (state would be in {server.state_path()}); `selene server start` runs one")
        raise typer.Exit(1)
    state = "up" if st["healthy"] else ("not answering" if st["pid_alive"] else "not running (stale state)")
    console.print(f"Prefect server: {state}")
    for label, key in (("API URL", "url"), ("dashboard", "ui_url"), ("listening on", "listening"), ("pid", "pid"),
                       ("started", "started"), ("database", "prefect_home"), ("log", "log")):  # fmt: skip
        console.print(f"  {label:<13} {st[key]}", highlight=False)
    console.print(f"  {'auth':<13} {'on (HTTP basic)' if st['auth'] else 'off (loopback only)'}")
    if not st["healthy"]:
        raise typer.Exit(1)


@server_app.command("logs")
def logs(
    lines: Annotated[int, typer.Option("--lines", "-n", min=0, help="Lines from the end.")] = 50,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new lines (Ctrl-C stops).")] = False,
) -> None:
    """The server's log (server.log under the selene home)."""
    from selene import server

    text = server.tail(lines)
    if text:
        print(text)
    if follow:
        try:
            for line in server.follow():
                print(line, flush=True)
        except KeyboardInterrupt:
            pass
