"""Start-up cost of the `selene` command as a new user meets it: whole commands, wall time, min/median/max.

    python benchmarks/startup.py [--repo PATH] [--runs N] [--hog-runs N] [--timeout S] [--json FILE]
        [--only help,version,ingest,dedup,import] [--modes quiet,hogs] [--servers none,server]

Each run is a fresh process running what the console script runs (`selene.cli.entrypoint`, or `main` in
checkouts without it) with PYTHONPATH=the checkout
(this one, or `--repo`'s: the same interpreter and packages measure the old and the new code):
- `selene --help` and `selene version`;
- `selene ingest` of one jsonl document (English prose that passes the default filters), a fresh OUT each run;
- `selene dedup` of a five-document ingest output (prepared once, before timing), a fresh OUT each run.
Each in a matrix of blocks, server × load:
- server `none`: no PREFECT_API_URL (every other PREFECT_* and SELENE_* variable is dropped too); SELENE_HOME
  and PREFECT_HOME are temp dirs made for the block and kept across its runs (warm);
  `server`: one Prefect server for the block, `selene server start --port P` where the checkout has
  that command (the commands find it through SELENE_HOME), else `prefect server start` with
  PREFECT_API_URL given to the commands;
- load `quiet`, or `hogs`: two busy-looping Python processes for the whole block.
A block starts with one untimed ingest (or its first command), so that disk caches and PREFECT_HOME are
warm. A run fails on a non-zero exit, a timeout, or an ingest/dedup OUT without manifest.json (or an
ingest that kept no document); failures are counted, not timed. Processes a command leaves behind in
its process group are killed and reported.
First (quiet, no server), `import selene.cli`: wall time of `python -c "import selene.cli"` (next to a
bare `python -c pass`), `-X importtime`'s self and cumulative µs of `selene.cli` and the total of the
statement, and which of prefect, torch, pydantic, pyarrow it loads.
The machine may be shared: read the medians, and the min as a floor.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("help", "version", "ingest", "dedup")
HEAVY = ("prefect", "torch", "pydantic", "pyarrow")
TAIL = 3000  # characters of a failed command's output kept for the report

# Five short English texts of our own: ~100 words each, common stop words, no repeated lines, distinct
# enough that dedup keeps them all. The first is the one-document ingest.
PARAGRAPHS = [
    "The harbour town woke slowly on winter mornings, and the fishermen who had been out since before dawn "
    "came back with their boats low in the water. Children walked along the sea wall to school, stopping to "
    "watch the gulls argue over scraps that the market traders threw from their stalls. In the bakery near "
    "the church, the smell of fresh bread drifted into the street, and people who had no reason to buy "
    "anything would still stop at the window for a moment. The old lighthouse keeper liked to sit on a bench "
    "by the water and tell visitors about the storms he had seen over the years.",
    "When the library reopened after the long renovation, the first thing that visitors noticed was the light. "
    "The architects had replaced the narrow windows of the reading room with tall panes of glass, so that "
    "the afternoon sun fell across the tables and the rows of shelves. Students who had been studying in "
    "crowded cafes for a year came back with their laptops and their notebooks, and the librarians had to "
    "remind them that the quiet rooms were meant to be quiet. On the top floor, a small exhibition showed "
    "photographs of the building as it was a hundred years ago.",
    "Growing tomatoes on a balcony is easier than most people think, provided that the plants get enough sun "
    "and the pots are large enough to hold water through a hot afternoon. It is best to start with young "
    "plants from a nursery rather than seeds, and to choose a variety that stays compact. The soil should be "
    "rich and loose, and a little compost mixed in at the start will feed the roots for several weeks. Water "
    "in the morning, not at night, and tie the stems to a stick as they grow so that the fruit does not pull "
    "them down.",
    "The committee met on a Tuesday evening to discuss the plan for the new bicycle lanes, and the hall was "
    "fuller than anyone had expected. Some residents argued that the lanes would make the main road safer for "
    "children riding to school, while shop owners worried that removing parking spaces would keep their "
    "customers away. The engineer from the council explained the drawings with patience and answered every "
    "question, even the ones that had nothing to do with bicycles. In the end the members agreed to test the "
    "design for six months before making a final decision.",
    "My grandmother kept every letter she had ever received in a wooden box under her bed, tied in bundles "
    "with faded ribbon and sorted by the year in which they had arrived. After she died, we spent a whole "
    "weekend reading them aloud in the kitchen, laughing at the gossip of cousins we had never met and "
    "falling silent at the letters that came during the war. Her brother had written to her every month from "
    "a ship in the Pacific, and his careful handwriting never changed, even when the news he had to share "
    "was hard to bear.",
]


@dataclass
class Row:
    command: str
    server: str
    load: str
    times: list[float] = field(default_factory=list)  # seconds, successful runs only
    failures: int = 0
    runs: int = 0
    first_failure: str | None = None
    leftovers: int = 0  # runs that left processes behind in their process group


@dataclass
class Result:
    seconds: float
    rc: int | None  # None: timed out
    out: str
    err: str
    leftover: bool


class ServerError(Exception):
    """The block's Prefect server did not come up."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_group(p: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM the process group of `p` (started with start_new_session), SIGKILL what is left after `grace`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and (p.poll() is None or _group_alive(p.pid)):
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Result:
    """One command in its own process group, output to files (a leftover child holding a pipe open
    would otherwise stall the read), killed with its group on timeout or interrupt."""
    with tempfile.TemporaryFile(dir=cwd) as fo, tempfile.TemporaryFile(dir=cwd) as fe:
        t = time.perf_counter()
        p = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, start_new_session=True
        )
        try:
            rc: int | None = p.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
        except BaseException:
            kill_group(p, 0)
            raise
        dt = time.perf_counter() - t
        leftover = _group_alive(p.pid)
        if rc is None or leftover:
            kill_group(p, 0 if rc is None else 2)
        fo.seek(0)
        fe.seek(0)
        return Result(
            dt, rc, fo.read().decode(errors="replace"), fe.read().decode(errors="replace"), leftover
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stats(xs: list[float]) -> tuple[float, float, float] | None:
    return (min(xs), statistics.median(xs), max(xs)) if xs else None


class Bench:
    def __init__(self, repo: Path, tmp: Path, timeout: float) -> None:
        self.repo, self.tmp, self.timeout = repo, tmp, timeout
        # what the `selene` console script runs: its entry point where the checkout has one, else main()
        self.selene = [
            sys.executable, "-c",
            "import sys, selene.cli as c; c.entrypoint() if hasattr(c, 'entrypoint') else sys.exit(c.main())",
        ]  # fmt: skip
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SELENE_"))}
        self.env |= {"PYTHONPATH": str(repo), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        self.inputs = tmp / "inputs"
        self.inputs.mkdir()
        self.one = self.inputs / "one.jsonl"
        self.one.write_text(json.dumps({"text": PARAGRAPHS[0]}) + "\n")
        (self.inputs / "five.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in PARAGRAPHS))
        self.dedup_input: Path | None = None
        self.dedup_error = ""
        self.n = 0

    def homes(self, where: Path) -> dict[str, str]:
        """The environment of commands whose SELENE_HOME and PREFECT_HOME are under `where`."""
        return self.env | {
            "SELENE_HOME": str(where / "selene-home"),
            "PREFECT_HOME": str(where / "prefect-home"),
        }

    def fresh(self, name: str) -> Path:
        self.n += 1
        return self.tmp / f"{name}-{self.n:04d}"

    def check_checkout(self) -> None:
        r = run(
            [sys.executable, "-c", "import selene; print(selene.__file__)"], self.env, self.tmp, self.timeout
        )
        where = Path(r.out.strip() or "?").resolve()
        if r.rc != 0 or self.repo not in where.parents:
            sys.exit(
                f"`import selene` with PYTHONPATH={self.repo} loads {where}, not the checkout's:\n{r.err[-TAIL:]}"
            )

    def has_selene_server(self) -> bool:
        r = run([*self.selene, "server", "--help"], self.homes(self.fresh("probe")), self.tmp, self.timeout)
        return r.rc == 0

    def argv(self, command: str) -> tuple[list[str], Path | None]:
        """The command line of one run and its OUT (None: writes nothing)."""
        if command == "help":
            return [*self.selene, "--help"], None
        if command == "version":
            return [*self.selene, "version"], None
        out = self.fresh(command)
        if command == "ingest":
            return [*self.selene, "ingest", "-o", str(out), "--source", f"web={self.one}"], out
        return [*self.selene, "dedup", "-i", str(self.dedup_input), "-o", str(out)], out

    def failure(self, command: str, r: Result, out: Path | None) -> str | None:
        """Why a finished run counts as failed (None: it did not)."""
        if r.rc is None:
            return f"timeout after {self.timeout:.0f} s"
        if r.rc != 0:
            return f"exit code {r.rc}"
        if out is not None:
            manifest = out / "manifest.json"
            if not manifest.exists():
                return f"exit code 0 but no {manifest}"
            kept = json.loads(manifest.read_text()).get("stats", {}).get("documents_out")
            if command == "ingest" and kept == 0:
                return "exit code 0 but the document was not kept"
        return None

    def prepare_dedup_input(self) -> None:
        """The input of the dedup runs: an ingest of the five paragraphs, by the same selene, untimed."""
        home = self.fresh("prep")
        out = home / "five"
        argv = [*self.selene, "ingest", "-o", str(out), "--source", f"web={self.inputs / 'five.jsonl'}"]
        r = run(argv, self.homes(home), self.tmp, self.timeout)
        why = self.failure("ingest", r, out)
        kept = (
            json.loads((out / "manifest.json").read_text())["stats"]["documents_out"] if why is None else None
        )
        if why is None and kept != len(PARAGRAPHS):
            why = f"kept {kept} of {len(PARAGRAPHS)} documents"
        log(f"dedup input: ingest of {len(PARAGRAPHS)} documents, {r.seconds:.1f} s, {why or 'ok'}")
        if why is None:
            self.dedup_input = out
        else:
            self.dedup_error = f"preparing the dedup input failed ({why}):\n{(r.err or r.out)[-TAIL:]}"

    @contextlib.contextmanager
    def server(self, block: Path, env: dict[str, str], info: dict) -> Iterator[dict[str, str]]:
        """One Prefect server for a block; yields the environment its commands need to report to it."""
        port = free_port()
        url = f"http://127.0.0.1:{port}/api"
        selene_server = self.has_selene_server()
        if selene_server:
            argv, senv, extra = [*self.selene, "server", "start", "--port", str(port)], env, {}
        else:
            argv = [
                sys.executable,
                "-m",
                "prefect",
                "server",
                "start",
                "--host",
                "127.0.0.1",
                "--port",
                f"{port}",
            ]
            senv, extra = env | {"PREFECT_HOME": str(block / "server-prefect-home")}, {"PREFECT_API_URL": url}
        info["server"] = "selene server start" if selene_server else "prefect server start"
        log_path = block / "server.log"
        t = time.perf_counter()
        with log_path.open("wb") as logf:
            # `selene server start` may stay in the foreground or hand over to a daemon: the health check decides
            p = subprocess.Popen(
                argv,
                env=senv,
                cwd=self.tmp,
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            while True:
                with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
                rc = p.poll()
                if (rc is not None and rc != 0) or time.perf_counter() - t > 180:
                    why = f"exit code {rc}" if rc is not None else "no answer in 180 s"
                    raise ServerError(
                        f"{info['server']} ({why}):\n{log_path.read_text(errors='replace')[-TAIL:]}"
                    )
                time.sleep(0.5)
            info["server_start_s"] = time.perf_counter() - t
            log(f"  {info['server']} up on port {port} in {info['server_start_s']:.1f} s")
            yield extra
        finally:
            if selene_server:
                r = run([*self.selene, "server", "stop"], senv, self.tmp, self.timeout)
                if r.rc != 0:
                    log(f"  `selene server stop` failed (exit {r.rc}): {r.err[-500:]}")
            kill_group(p)
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/health", timeout=2):
                log(f"  warning: the server on port {port} still answers after stop")

    def block(self, rows: list[Row], info: dict, runs: dict[str, int]) -> None:
        """Time `rows` (one server × load block); `info` gets the server's start-up time."""
        commands, server, load = [r.command for r in rows], rows[0].server, rows[0].load
        block = self.fresh(f"block-{server}-{load}")
        block.mkdir()
        env = self.homes(block)
        try:
            with contextlib.ExitStack() as stack:
                if server == "server":
                    env |= stack.enter_context(self.server(block, env, info))
                if load == "hogs":
                    stack.enter_context(hogs(2))
                warm = "ingest" if "ingest" in commands or "dedup" in commands else commands[0]
                r = run(self.argv(warm)[0], env, self.tmp, self.timeout)
                log(f"  warm-up {warm}: {r.seconds:.1f} s, exit {r.rc}")
                for row in rows:
                    self.measure(row, env, runs[row.command])
        except ServerError as e:  # the server did not start: the block's rows fail, the others go on
            log(f"  block failed: {e}")
            for row in rows:
                row.runs = row.failures = runs[row.command]
                row.first_failure = f"server did not start: {e}"

    def measure(self, row: Row, env: dict[str, str], n: int) -> None:
        if row.command == "dedup" and self.dedup_input is None:
            row.first_failure, row.failures, row.runs = self.dedup_error, n, n
            return
        for i in range(n):
            argv, out = self.argv(row.command)
            r = run(argv, env, self.tmp, self.timeout)
            why = self.failure(row.command, r, out)
            row.runs += 1
            row.leftovers += r.leftover
            if why is None:
                row.times.append(r.seconds)
            else:
                row.failures += 1
                if row.first_failure is None:
                    row.first_failure = f"{why}; output tail:\n{(r.err.strip() or r.out)[-TAIL:]}"
            extra = (f" — FAILED: {why}" if why else "") + (" (left processes behind)" if r.leftover else "")
            log(f"  {row.command:<8} {row.server}/{row.load} run {i + 1}/{n}: {r.seconds:6.2f} s{extra}")
            if out is not None:
                shutil.rmtree(out, ignore_errors=True)

    def imports(self, n: int) -> dict:
        """Wall time of `import selene.cli` as a process, -X importtime's figures, and the heavy modules it loads."""
        env = self.homes(self.fresh("import"))
        py = [sys.executable, "-c"]
        res: dict = {k: [] for k in ("wall_s", "bare_python_s", "self_us", "cumulative_us", "statement_us")}
        for i in range(n):
            res["bare_python_s"].append(run([*py, "pass"], env, self.tmp, self.timeout).seconds)
            r = run([*py, "import selene.cli"], env, self.tmp, self.timeout)
            if r.rc != 0:
                res["error"] = f"exit code {r.rc}:\n{r.err[-TAIL:]}"
                return res
            res["wall_s"].append(r.seconds)
            r = run(
                [sys.executable, "-X", "importtime", *py[1:], "import selene.cli"],
                env,
                self.tmp,
                self.timeout,
            )
            top = {}  # top-level entries of the import tree: name -> (self µs, cumulative µs)
            for line in r.err.splitlines():
                if line.startswith("import time:") and line.count("|") == 2:
                    _, s, c, name = line.replace("|", ":", 2).split(":", 3)
                    if s.strip().isdigit() and not name.startswith("  "):
                        top[name.strip()] = (int(s), int(c))
            if "selene.cli" not in top:
                res["error"] = f"no selene.cli line in -X importtime's output:\n{r.err[-TAIL:]}"
                return res
            res["self_us"].append(top["selene.cli"][0])
            res["cumulative_us"].append(top["selene.cli"][1])
            # selene.cli's entry holds its parent package's; a sum in case the package comes first on its own
            res["statement_us"].append(
                sum(c for name, (_, c) in top.items() if name.split(".")[0] == "selene")
            )
            ms = res["statement_us"][-1] / 1e3
            log(
                f"  import selene.cli run {i + 1}/{n}: {res['wall_s'][-1]:.2f} s wall, {ms:.0f} ms importtime"
            )
        code = f"import json, sys, selene.cli; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
        r = run([*py, code], env, self.tmp, self.timeout)
        res["heavy_loaded"] = json.loads(r.out) if r.rc == 0 else None
        return res


@contextlib.contextmanager
def hogs(n: int) -> Iterator[None]:
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(n):
            argv = [sys.executable, "-c", "while True: pass"]
            procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True))
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def fmt(x: float) -> str:
    return f"{x:.2f}"


def report(meta: dict, rows: list[Row], blocks: list[dict], imp: dict | None) -> str:
    lines = [
        f"selene start-up, checkout {meta['repo']} ({meta['commit']}), python {meta['python']}, "
        f"{meta['cpus']} CPUs, load average {meta['load_start']} at start and {meta.get('load_end', '?')} at end.",
        f"Wall seconds of successful runs (failure: non-zero exit, timeout after {meta['timeout']:.0f} s, or no output); "
        "a shared machine: timings are noisy.",
        "",
        "| command | server | load | min | median | max | failures |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    names = {
        "help": "`selene --help`",
        "version": "`selene version`",
        "ingest": "`selene ingest` (1 doc)",
        "dedup": "`selene dedup` (5 docs)",
    }
    for r in rows:
        s = stats(r.times)
        cells = [fmt(x) for x in s] if s else ["—"] * 3
        lines.append(
            f"| {names[r.command]} | {r.server} | {r.load} | {' | '.join(cells)} | {r.failures}/{r.runs} |"
        )
    lines.append("")
    for b in blocks:
        if "server_start_s" in b:
            lines.append(f"{b['server']} ({b['load']}): up in {b['server_start_s']:.1f} s.")
    left = [r for r in rows if r.leftovers]
    for r in left:
        lines.append(
            f"{names[r.command]} {r.server}/{r.load}: {r.leftovers} run(s) left processes behind (killed)."
        )
    if imp is not None:
        if imp.get("error"):
            lines.append(f"`import selene.cli` failed: {imp['error']}")
        else:
            heavy = imp["heavy_loaded"]
            heavy_s = "?" if heavy is None else (", ".join(heavy) or "none")
            w, bare = stats(imp["wall_s"]), statistics.median(imp["bare_python_s"])
            assert w is not None
            lines.append(
                f'`python -c "import selene.cli"`: {fmt(w[1])} s median wall ({fmt(w[0])}–{fmt(w[2])}; bare `python -c pass` '
                f"{fmt(bare)} s); `-X importtime` (medians of {len(imp['wall_s'])}): selene.cli self "
                f"{statistics.median(imp['self_us']) / 1e3:.1f} ms, cumulative {statistics.median(imp['cumulative_us']) / 1e3:.0f} ms, "
                f"whole statement (selene + selene.cli) {statistics.median(imp['statement_us']) / 1e3:.0f} ms; "
                f"of {', '.join(HEAVY)} it loads: {heavy_s}."
            )
    failed = [r for r in rows if r.first_failure]
    if failed:
        lines += ["", "First failure of each row that had one:"]
        for r in failed:
            lines += [
                "",
                f"- {names[r.command]} {r.server}/{r.load}:",
                "```",
                str(r.first_failure).rstrip(),
                "```",
            ]
    return "\n".join(lines)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--repo", type=Path, default=ROOT, help="checkout whose selene is run (default: this one)"
    )
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command and block")
    ap.add_argument(
        "--hog-runs", type=int, default=None, help="runs of ingest and dedup under hogs (default: --runs)"
    )
    ap.add_argument(
        "--only",
        default=",".join([*COMMANDS, "import"]),
        help="comma-separated: help,version,ingest,dedup,import",
    )
    ap.add_argument("--modes", default="quiet,hogs", help="comma-separated: quiet,hogs")
    ap.add_argument("--servers", default="none,server", help="comma-separated: none,server")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a command counts as failed")
    ap.add_argument("--json", type=Path, default=None, help="write every raw timing here")
    args = ap.parse_args()
    only, modes, servers = (a.split(",") for a in (args.only, args.modes, args.servers))
    choices = ((only, [*COMMANDS, "import"]), (modes, ["quiet", "hogs"]), (servers, ["none", "server"]))
    for got, allowed in choices:
        if bad := [x for x in got if x not in allowed]:
            ap.error(f"unknown {bad}; accepted: {','.join(allowed)}")
    repo = args.repo.resolve()
    commands = [c for c in COMMANDS if c in only]
    # SIGTERM as Ctrl-C: the finally blocks stop servers and hogs, and the runs so far are reported
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    git = ["git", "-C", str(repo), "describe", "--always", "--dirty"]
    commit = subprocess.run(git, capture_output=True, text=True, timeout=30)
    meta = {
        "repo": str(repo),
        "commit": commit.stdout.strip() or "?",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_start": loadavg(),
        "timeout": args.timeout,
        "runs": args.runs,
        "hog_runs": args.hog_runs or args.runs,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "complete": False,
    }
    rows: list[Row] = []
    blocks: list[dict] = []
    imp: dict | None = None
    tmp = Path(tempfile.mkdtemp(prefix="selene-bench-startup-"))
    try:
        bench = Bench(repo, tmp, args.timeout)
        bench.check_checkout()
        log(f"selene from {repo} ({meta['commit']}); scratch {tmp}")
        if "dedup" in commands:
            bench.prepare_dedup_input()
        if "import" in only:
            log("import selene.cli")
            imp = bench.imports(args.runs)
        for server in servers:
            for load in modes:
                if not commands:
                    continue
                log(f"block: server={server} load={load} (load average {loadavg()})")
                slow = load == "hogs"
                n = {
                    c: meta["hog_runs"] if slow and c in ("ingest", "dedup") else args.runs for c in commands
                }
                block_rows = [Row(c, server, load) for c in commands]
                rows += block_rows  # before the block runs: an interrupted block still reports its runs
                blocks.append({"server": "none", "load": load})
                bench.block(block_rows, blocks[-1], n)
        meta["complete"] = True
    except KeyboardInterrupt:
        log("interrupted: the results so far")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        meta["load_end"] = loadavg()
        meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        if args.json:
            data = {"meta": meta, "rows": [asdict(r) for r in rows], "blocks": blocks, "import": imp}
            args.json.write_text(json.dumps(data, indent=1) + "\n")
    print(report(meta, rows, blocks, imp))
    if not meta["complete"]:
        sys.exit(130)


if __name__ == "__main__":
    main()
