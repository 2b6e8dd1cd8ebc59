"""Stopping `selene train` (CPU, gloo, the debug model): SIGTERM and Ctrl-C checkpoint and leave
nothing running, whether the command, its process group or a script's group is signalled; SIGKILL
of the command takes torchrun's agent and the ranks along within seconds."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from selene.train.checkpoint import complete_steps
from selene.train.metrics import read_metrics
from tests.pipeline_runs import subprocess_env, write_token_dataset

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; process groups and sessions"),
    pytest.mark.timeout(900),
]

START_SECONDS = 600.0  # a busy 2-core machine: imports of the command, the agent and two ranks
STOP_SECONDS = 300.0
RANKS = 2


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("tokens"))


def write_config(tokens: str, root: Path) -> Path:
    """A training config that would run for hours: it only ends when stopped."""
    cfg = {
        "model": {"preset": "debug"},
        "parallel": {"dp_shard": RANKS},
        "nproc_per_node": RANKS,
        "steps": 1_000_000,
        "batch": {"seq_len": 32, "global_batch": 8, "micro_batch": 4},
        "optim": {"lr": 3e-3, "warmup_steps": 2},
        "data": {"prefixes": [tokens]},
        "eval_every": 1_000_000,
        "eval_batches": 1,
        "log_every": 1,
        "checkpoint": {"every": 3, "keep": 2},
        "tensorboard": False,
        "out": str(root / "out"),
    }
    path = root / "train.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def selene_cmd(config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "selene.cli", "train", str(config), *extra]


def processes(marker: str) -> dict[int, str]:
    """pid → command line of the live processes whose command line holds `marker` (a zombie has none)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found[int(name)] = cmdline
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition: Callable[[], bool], timeout: float, what: str, check: Callable[[], None] = lambda: None) -> float:
    """Seconds until `condition` held; `check` may fail early (the command died)."""
    start = time.monotonic()
    while not condition():
        check()
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.1)
    return time.monotonic() - start


@pytest.fixture
def leftovers(tmp_path: Path) -> Iterator[None]:
    """Whatever a failed test leaves running (its command line names the test's directory) is killed."""
    yield
    for pid in processes(str(tmp_path)):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def train_processes(out: Path, log: Path, running: Callable[[], bool]) -> dict[int, str]:
    """Once the run has saved its first checkpoint: its agent and ranks (their command lines name `out`)."""

    def check() -> None:
        assert running(), f"the command ended before its first checkpoint:\n{log.read_text()[-3000:]}"

    wait_for(lambda: bool(complete_steps(str(out / "checkpoints"))), START_SECONDS, "the first checkpoint", check)
    found = processes(str(out))
    agents = [p for p, c in found.items() if "selene.train.agent" in c]
    ranks = [p for p, c in found.items() if "selene.train.worker" in c and "selene.train.agent" not in c]
    assert len(agents) == 1 and len(ranks) == RANKS, found
    return found


def stopped_with_a_checkpoint(out: Path, log: Path) -> int:
    """The run stopped at a step whose checkpoint it saved, without a traceback; that step."""
    text = log.read_text()
    assert "Traceback" not in text and "SignalException" not in text, text[-3000:]
    last = max(r["step"] for r in read_metrics(str(out / "metrics.jsonl")))
    assert last in complete_steps(str(out / "checkpoints")), (last, complete_steps(str(out / "checkpoints")))
    return last


def background_script(config: Path, root: Path) -> tuple[list[str], Path, Path]:
    """bash running `selene train` in the background (it does not lead its process group); the
    script records the command's pid and, ignoring SIGTERM itself, its exit status."""
    pid_file, rc_file, log = root / "pid", root / "rc", root / "log.txt"
    script = (
        f"{shlex.join(selene_cmd(config))} >{shlex.quote(str(log))} 2>&1 & pid=$!\n"
        f"echo $pid >{shlex.quote(str(pid_file))}\n"
        "trap '' TERM\n"
        f"wait $pid; echo $? >{shlex.quote(str(rc_file))}\n"
    )
    return ["bash", "-c", script], pid_file, rc_file


@contextlib.contextmanager
def in_background(
    config: Path, tmp_path: Path, out: Path, log: Path
) -> Iterator[tuple[subprocess.Popen[bytes], int, dict[int, str], Path]]:
    """`selene train` started by a script in its background, once its agent and ranks are up: the
    script, the command's pid, the run's processes and the file the script writes its exit code to.
    Whatever is left of the script's group is killed on the way out."""
    cmd, pid_file, rc_file = background_script(config, tmp_path)
    script = subprocess.Popen(cmd, env=subprocess_env(tmp_path), start_new_session=True)
    try:
        wait_for(pid_file.exists, START_SECONDS, "the script starting the command")
        pid = int(pid_file.read_text())
        yield script, pid, train_processes(out, log, lambda: alive(pid)), rc_file
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)


@pytest.mark.parametrize("target", ["command", "group"])
def test_sigterm_from_a_script_checkpoints_and_leaves_nothing(
    target: str, tokens: str, tmp_path: Path, leftovers: None
) -> None:
    """SIGTERM to `selene train` run in a script's background (or to the script's whole process
    group): the ranks finish their step and save it, the command says in one line "terminated", the
    step and its checkpoint, and exits 143,
    nothing of the run is left; a rerun resumes from that checkpoint."""
    config = write_config(tokens, tmp_path)
    out, log = tmp_path / "out", tmp_path / "log.txt"
    with in_background(config, tmp_path, out, log) as (script, pid, started, rc_file):
        if target == "command":
            os.kill(pid, signal.SIGTERM)
        else:
            os.killpg(script.pid, signal.SIGTERM)
        assert script.wait(STOP_SECONDS) == 0
    assert rc_file.read_text().strip() == str(128 + signal.SIGTERM), log.read_text()[-3000:]
    last = stopped_with_a_checkpoint(out, log)
    assert log.read_text().rstrip().splitlines()[-1] == (
        f"terminated (SIGTERM): stopped at step {last}, checkpoint {out / 'checkpoints' / f'step-{last:06d}'}; "
        "the same command resumes from it"
    )
    wait_for(lambda: not any(map(alive, started)), 10, f"the agent and ranks ending ({started})")
    assert processes(str(tmp_path)) == {}
    if target == "group":
        return
    rerun = subprocess.run(
        selene_cmd(config, "--set", f"steps={last + 2}"), env=subprocess_env(tmp_path), capture_output=True, text=True,
        timeout=START_SECONDS,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    steps = [r["step"] for r in read_metrics(str(out / "metrics.jsonl"))]
    assert steps == list(range(1, last + 3))
    assert (out / "run.json").read_text().count(f"step-{last:06d}") >= 1  # resumed_from: the stop's checkpoint


def test_ctrl_c_in_a_terminal_checkpoints_and_leaves_nothing(tokens: str, tmp_path: Path, leftovers: None) -> None:
    """Ctrl-C: SIGINT to the terminal's foreground process group, which `selene train` leads. The
    agent runs in a session of its own: the command forwards the stop; one line "interrupted", the
    step and its checkpoint; exit 130."""
    config = write_config(tokens, tmp_path)
    out, log = tmp_path / "out", tmp_path / "log.txt"
    with open(log, "wb") as f:
        # a terminal's foreground command has SIGINT at its default; a suite run as a background job
        # (nohup ... &) hands its children SIGINT ignored, which a command rightly keeps ignoring
        proc = subprocess.Popen(selene_cmd(config), env=subprocess_env(tmp_path), stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_sigint_default)  # fmt: skip
    try:
        started = train_processes(out, log, lambda: proc.poll() is None)
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(STOP_SECONDS) == 130, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    last = stopped_with_a_checkpoint(out, log)
    assert log.read_text().rstrip().splitlines()[-1] == (
        f"interrupted (Ctrl-C): stopped at step {last}, checkpoint {out / 'checkpoints' / f'step-{last:06d}'}; "
        "the same command resumes from it"
    )
    wait_for(lambda: not any(map(alive, started)), 10, f"the agent and ranks ending ({started})")
    assert processes(str(tmp_path)) == {}


def test_sigkill_of_the_command_takes_the_agent_and_ranks_along(tokens: str, tmp_path: Path, leftovers: None) -> None:
    """`selene train` in a script's background, killed with SIGKILL (it cannot act): torchrun's
    agent and its ranks are gone within seconds."""
    config = write_config(tokens, tmp_path)
    out, log = tmp_path / "out", tmp_path / "log.txt"
    with in_background(config, tmp_path, out, log) as (script, pid, started, rc_file):
        os.kill(pid, signal.SIGKILL)
        assert script.wait(STOP_SECONDS) == 0
        assert rc_file.read_text().strip() == str(128 + signal.SIGKILL)
        wait_for(lambda: not any(map(alive, started)), 10, f"the agent and ranks ending after SIGKILL ({started})")
        assert processes(str(tmp_path)) == {}


def test_a_second_signal_kills_the_agent_at_once(tmp_path: Path) -> None:
    """The launcher's side, with a stand-in agent that would never stop on SIGTERM: the first signal
    reaches it as SIGTERM, the second kills it; the handler that was there is back in place, and the
    run's one line says it stopped at once."""
    from selene.train.launch import _Stop, run_agent, stopped

    class Stopped(BaseException):
        pass

    def handler(signum: int, frame: object) -> None:
        raise Stopped(signum)

    agent = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: print('SIGTERM', flush=True))\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    out = tmp_path / "agent.txt"

    main = threading.main_thread().ident
    assert main is not None

    def signal_twice() -> None:  # to the main thread, blocked in waiting for the agent, as a kill would
        wait_for(lambda: out.exists() and "ready" in out.read_text(), START_SECONDS, "the stand-in agent starting")
        signal.pthread_kill(main, signal.SIGTERM)
        wait_for(lambda: "SIGTERM" in out.read_text(), 60, "the stand-in agent getting SIGTERM")
        signal.pthread_kill(main, signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, handler)
    stop = _Stop()
    try:
        thread = threading.Thread(target=signal_twice, daemon=True)
        thread.start()
        code = run_agent(["sh", "-c", f"exec {shlex.quote(sys.executable)} -c {shlex.quote(agent)} >{shlex.quote(str(out))}"],
                         dict(os.environ), stop)  # fmt: skip
        thread.join(60)
        assert code == -signal.SIGKILL and stop.received == [signal.SIGTERM, signal.SIGTERM]
        assert signal.getsignal(signal.SIGTERM) is handler
        said = stopped(stop, str(tmp_path))
        assert said.exit_code == 128 + signal.SIGTERM
        assert str(said) == "terminated (SIGTERM): stopped at once (a second stop), before any checkpoint"
    finally:
        signal.signal(signal.SIGTERM, previous)
