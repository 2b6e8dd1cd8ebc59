"""Who may write where (`selene.guard`), orphans after kill -9, garbage config files.

- a stage command whose output is its input, inside it or around it refuses (exit 2, both paths
  named) and leaves the input byte-identical: every command of the registry, and `selene run`;
- a second command writing the output (or the input) of a running one refuses; a lock left by a
  killed run is taken over; one of another host is honoured;
- `kill -9` of a command with a worker pool leaves no process behind;
- config files of random bytes, directories, empty or non-mapping YAML: a `ConfigError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from selene import guard, registry
from selene.cli import main
from selene.errors import UsageError
from tests.corpus import write_dataset
from tests.pipeline_runs import ROOT, subprocess_env

TASKS = str(ROOT / "data" / "tasks" / "mini_piqa.jsonl")
STAGE_ARGS = {"decontaminate": ["-t", TASKS], "blend": ["--weights", "s=1"]}
"""What a stage needs besides -i/-o to get as far as running (the refusal must come first)."""
DOC_STAGES = [s.name for s in registry.STAGES if not s.command and s.reads == "documents"]


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (hidden ones too) → sha256 of its bytes, and every directory."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        else:
            out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def docs(n: int, seed: int = 0, words: int = 40) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    return [(f"d{i}", " ".join(rng.choice(vocab) for _ in range(words))) for i in range(n)]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/D: a dataset with another dataset D/inner inside it, and tmp/L → D."""
    write_dataset(str(tmp_path / "D"), docs(20))
    write_dataset(str(tmp_path / "D" / "inner"), docs(10, seed=1))
    (tmp_path / "L").symlink_to(tmp_path / "D")
    return tmp_path


# (input, output, paths the message must name), relative to the tree
OVERLAPS = {
    "same": ("D", "D", ["D"]),
    "trailing-slash": ("D", "D/", ["D/"]),
    "dotdot": ("D", "D/inner/../../D", ["D/inner/../../D"]),
    "file-url": ("D", "file://{root}/D", ["file://"]),
    "symlink": ("L", "D", ["L", "D"]),
    "inside": ("D", "D/out", ["D/out", "D"]),
    "contains": ("D/inner", "D", ["D/inner", "D"]),
}


@pytest.mark.parametrize("case", list(OVERLAPS))
@pytest.mark.parametrize("stage", DOC_STAGES)
def test_output_overlapping_input_refused(
    stage: str, case: str, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, out, named = OVERLAPS[case]
    before = snapshot(tree)
    arg = lambda p: p.format(root=tree) if "{root}" in p else str(tree / p)  # noqa: E731
    rc = main([stage, "-i", arg(inp), "-o", arg(out), *STAGE_ARGS.get(stage, [])])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "inputs are never modified" in err and "Traceback" not in err
    for name in named:
        assert name.rstrip("/") in err.replace("\n", "")
    assert snapshot(tree) == before  # not a byte changed, nothing created, no lock left
    assert guard.running() == []


@pytest.mark.parametrize(
    "glob,out",
    [
        ("src/*.jsonl", "src"),
        ("src/*", "src/out"),
        ("src/**/*.jsonl", "src/deep/out"),
        ("src/a.jsonl", "src/a.jsonl"),
    ],
)
def test_ingest_output_over_its_sources_refused(
    glob: str, out: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "src" / "out").mkdir(parents=True)
    (tmp_path / "src" / "a.jsonl").write_text('{"text": "hello world"}\n')
    before = snapshot(tmp_path)
    assert main(["ingest", "-s", f"a={tmp_path}/{glob}", "-o", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert str(tmp_path / out) in err and glob in err
    assert snapshot(tmp_path) == before


def test_ingest_output_beside_its_sources_runs(tmp_path: Path) -> None:
    """Not over-strict: a directory next to the files a non-recursive glob reads is fine."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.jsonl").write_text('{"text": "hello world, this is a document"}\n')
    assert main(["ingest", "-s", f"a={tmp_path}/src/*.jsonl", "-o", str(tmp_path / "src" / "out")]) == 0
    assert (tmp_path / "src" / "out" / "manifest.json").is_file()
    assert not list(tmp_path.rglob(f"*{guard.LOCK_SUFFIX}"))


@pytest.mark.parametrize("run_dir,glob", [("data", "data/*.jsonl"), ("data/runs/x", "data/**/*.jsonl")])
def test_run_dir_over_sources_refused(
    run_dir: str, glob: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.jsonl").write_text('{"text": "hello"}\n')
    cfg = tmp_path / "p.yaml"
    cfg.write_text(
        f"run_dir: {tmp_path / run_dir}\ningest:\n  sources:\n    - {{name: a, glob: '{tmp_path / glob}'}}\n"
    )
    before = snapshot(tmp_path)
    assert main(["run", str(cfg)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert str(tmp_path / run_dir) in err and glob in err and "inputs are never modified" in err
    assert snapshot(tmp_path) == before


def test_relation_normalises_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    P = guard.place
    assert guard.relation(P("real/"), P(f"file://{tmp_path}/link")) == "is"
    assert guard.relation(P("link/x/../y"), P("real")) == "is inside"
    assert guard.relation(P("~"), P("~/corpus")) == "contains"
    assert guard.relation(P("s3://b/x/"), P("s3://b/x/y/..")) == "is"
    assert guard.relation(P("s3://b/x/y"), P("gs://b/x")) is None
    assert guard.relation(P("s3://b/xy"), P("s3://b/x")) is None  # a prefix of the name is not a parent
    assert guard.relation(P("data/out"), P("data/*.jsonl")) is None
    assert guard.relation(P("data/a.jsonl/x"), P("data/*.jsonl")) == "is inside"
    assert guard.relation(P("memory://a"), P("memory://a/b")) == "contains"


# ------------------------------------------------------------------------------- concurrency


def start(args: list[str], tmp: Path, home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "selene.cli", *args],
        env=subprocess_env(tmp, SELENE_HOME=str(home), SELENE_PREFECT="off"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip


def wait_registered(proc: subprocess.Popen[bytes], home: Path, timeout: float = 60) -> None:
    """Until `proc` has claimed its output (its running-list entry exists), then stop it right there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if list((home / "running").glob(f"*-{proc.pid}-*.json")):
            os.kill(proc.pid, signal.SIGSTOP)
            return
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        time.sleep(0.01)
    raise AssertionError("the command never registered")


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """A dataset whose dedup takes a few seconds: the first command is still running when stopped."""
    return Path(write_dataset(str(tmp_path / "big"), docs(3000, words=60), shard_docs=500))


def test_second_writer_refused(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("SELENE_HOME", str(home))
    out = tmp_path / "out"
    first = start(["dedup", "-i", str(big), "-o", str(out)], tmp_path, home)
    try:
        wait_registered(first, home)
        lock = tmp_path / f".out{guard.LOCK_SUFFIX}"
        rec = json.loads(lock.read_text())
        assert (rec["pid"], rec["host"]) == (first.pid, socket.gethostname())
        held = f"pid {first.pid} on host {socket.gethostname()}"
        other = write_dataset(str(tmp_path / "other"), docs(5, seed=3))
        for args in (
            ["dedup", "-i", other, "-o", str(out) + "/"],  # the same output
            ["blend", "-i", other, "-o", str(out / "sub"), "--weights", "s=1"],  # inside it
            ["tokenize", "-i", str(out), "-o", str(tmp_path / "tok")],  # reading what it writes
            ["dedup", "-i", other, "-o", str(big)],  # writing into what it reads
        ):
            assert main(args) == 2, args
            err = capsys.readouterr().err.replace("\n", "")
            assert held in err and "`selene dedup`" in err, err
        assert not (tmp_path / "tok").exists()
        # without the running list (another selene home: another user, another host on NFS) the lock holds
        monkeypatch.setenv("SELENE_HOME", str(tmp_path / "home2"))
        assert main(["dedup", "-i", other, "-o", str(out)]) == 2
        assert held in capsys.readouterr().err.replace("\n", "")
    finally:
        os.kill(first.pid, signal.SIGCONT)
        assert first.wait(120) == 0
    assert (out / "manifest.json").is_file() and not lock.exists()
    monkeypatch.setenv("SELENE_HOME", str(home))
    assert guard.running() == []


def test_killed_run_lock_taken_over(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("SELENE_HOME", str(home))
    out = tmp_path / "out"
    first = start(["dedup", "-i", str(big), "-o", str(out)], tmp_path, home)
    wait_registered(first, home)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    lock = tmp_path / f".out{guard.LOCK_SUFFIX}"
    assert json.loads(lock.read_text())["pid"] == first.pid  # left behind, as after a power cut
    assert list((home / "running").glob("*.json"))
    assert main(["dedup", "-i", str(big), "-o", str(out)]) == 0
    assert f"taking over the lock of `selene dedup` (pid {first.pid}" in capsys.readouterr().err.replace(
        "\n", ""
    )
    assert not lock.exists() and guard.running() == [] and not list((home / "running").glob("*.json"))


def lock_record(**fields: object) -> str:
    return json.dumps({"host": socket.gethostname(), "boot": guard.boot_id(), "since": "then", **fields})


def test_stale_and_foreign_locks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "o")
    lock = Path(guard.lock_path(out) or "")
    # a pid that now belongs to another program (this test: its start time differs) is stale
    lock.write_text(lock_record(pid=os.getpid(), started="1"))
    held = guard.acquire(out, {"pid": os.getpid()})
    assert held is not None
    guard.release(held)
    assert not lock.exists()
    # a dead pid of this host, a record of an earlier boot: stale
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for rec in (lock_record(pid=dead.pid), lock_record(pid=1, boot="an-earlier-boot")):
        lock.write_text(rec)
        held = guard.acquire(out, {"pid": os.getpid()})
        assert held is not None
        guard.release(held)
    # another host's lock is honoured, and the message says how to clear it
    lock.write_text(lock_record(pid=4242, host="node-17", command="selene dedup -o x"))
    write_dataset(str(tmp_path / "in"), docs(5))
    assert main(["dedup", "-i", str(tmp_path / "in"), "-o", out]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert "pid 4242 on host node-17" in err and f"delete {lock}" in err
    assert not Path(out).exists()


# ----------------------------------------------------------------------------------- orphans


def test_kill9_leaves_no_process_behind(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    rng = random.Random(0)
    vocab = ["the", "a", "of", "and", "to", "in", "is", "was", "for", "on", "it", "with", "as", "by", "at"]
    for f in range(8):
        lines = (json.dumps({"text": " ".join(rng.choice(vocab) for _ in range(300))}) for _ in range(400))
        (src / f"f{f}.jsonl").write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    proc = start(
        ["ingest", "-s", f"a={src}/*.jsonl", "-o", str(tmp_path / "out"), "--workers", "2"], tmp_path, home
    )
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    kids: list[psutil.Process] = []
    while time.monotonic() < deadline and proc.poll() is None:
        kids = me.children(recursive=True)
        if sum("forkserver" in " ".join(k.cmdline()) for k in kids) >= 3:  # the forkserver and 2 workers
            break
        time.sleep(0.02)
    assert proc.poll() is None and len(kids) >= 3, "the worker pool never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    alive = kids
    while alive and time.monotonic() < deadline:
        alive = [k for k in alive if k.is_running() and k.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.05)
    for k in alive:  # do not leak them into the rest of the suite
        k.kill()
    assert not alive, [" ".join(k.cmdline())[:120] for k in alive]


# ------------------------------------------------------------------------------ config files


def garbage(tmp_path: Path, kind: str, suffix: str = ".yaml") -> Path:
    p = tmp_path / f"cfg{suffix}"
    if kind == "random-bytes":
        p.write_bytes(bytes(random.Random(7).randrange(256) for _ in range(512)))
    elif kind == "nul":
        p.write_bytes(b"dedup:\n  threshold: 0.8\x00\n")
    elif kind == "directory":
        p.mkdir()
    elif kind == "empty":
        p.write_text("# nothing but a comment\n")
    elif kind == "list":
        p.write_text("- dedup\n- blend\n")
    elif kind == "scalar":
        p.write_text("just words\n")
    elif kind == "broken":
        p.write_text("dedup:\n  threshold: [0.8,\n  keep: first\n")
    return p


KINDS = ["random-bytes", "nul", "directory", "empty", "list", "scalar", "broken", "missing"]
COMMANDS = {
    "stage -c": lambda cfg, tmp: ["dedup", "-i", str(tmp / "in"), "-o", str(tmp / "out"), "-c", cfg],
    "run": lambda cfg, tmp: ["run", cfg],
    "config validate": lambda cfg, tmp: ["config", "validate", cfg],
    "plan": lambda cfg, tmp: ["plan", cfg],
    "train": lambda cfg, tmp: ["train", cfg],
    "eval -c": lambda cfg, tmp: ["eval", "--checkpoint", str(tmp / "ckpt"), "-c", cfg],
    "scaling-study": lambda cfg, tmp: ["scaling-study", cfg],
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_garbage_config_names_the_file(
    command: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = garbage(tmp_path, kind)
    assert main(COMMANDS[command](str(cfg), tmp_path)) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert str(cfg.name) in err and "Traceback" not in err and "UnicodeDecodeError" not in err, err
    if kind in ("broken", "nul"):
        assert "line " in err and "column " in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["random-bytes", "directory", "list", "missing"])
def test_garbage_calibration_file(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cal = garbage(tmp_path, kind, ".json")
    if kind == "list":
        cal.write_text("[1, 2]")
    args = [
        "plan",
        "--layers",
        "2",
        "--hidden",
        "64",
        "--heads",
        "2",
        "--vocab",
        "256",
        "--gpus",
        "1",
        "--tokens",
        "1e9",
        "--calibration",
    ]
    assert main([*args, str(cal)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert "calibration file" in err and cal.name in err and "Traceback" not in err, err


def test_sigterm_releases_lock_and_entry(big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("SELENE_HOME", str(home))
    first = start(["dedup", "-i", str(big), "-o", str(tmp_path / "out")], tmp_path, home)
    wait_registered(first, home)
    os.kill(first.pid, signal.SIGTERM)
    os.kill(first.pid, signal.SIGCONT)
    assert first.wait(60) == 128 + signal.SIGTERM
    assert not (tmp_path / f".out{guard.LOCK_SUFFIX}").exists()
    assert not list((home / "running").glob("*.json"))


def test_unwritable_home_does_not_stop_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "home").write_text("a file, not a directory")
    monkeypatch.setenv("SELENE_HOME", str(tmp_path / "home"))
    write_dataset(str(tmp_path / "in"), docs(5))
    assert main(["dedup", "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    assert guard.running() == []


def test_kill9_takes_what_the_command_started_along(tmp_path: Path) -> None:
    """A process a command starts outside any pool (torchrun, a step's subprocess) dies with it."""
    script = (
        "import subprocess, sys, time\n"
        "from selene.procs import watch_group\n"
        "watch_group()\n"
        "child = subprocess.Popen(['sleep', '120'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env=subprocess_env(tmp_path),
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    child = psutil.Process(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    try:
        child.wait(5)
    except psutil.TimeoutExpired:
        child.kill()
        raise AssertionError("the command's child outlived it") from None


def test_watchdog_leaves_a_finished_command_alone(tmp_path: Path) -> None:
    """Ending normally, the command sends its watchdog away: nothing of the group is killed."""
    script = (
        "import subprocess, sys\n"
        "from selene.procs import watch_group\n"
        "goodbye = watch_group()\n"
        "child = subprocess.Popen(['sleep', '120'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(child.pid, flush=True)\n"
        "goodbye()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=subprocess_env(tmp_path),
        capture_output=True,
        start_new_session=True,
        timeout=60,
    )
    child = psutil.Process(int(out.stdout))
    time.sleep(0.5)
    try:
        assert child.is_running() and child.status() != psutil.STATUS_ZOMBIE
    finally:
        child.kill()


def test_claim_registers_normalised_shared_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SELENE_HOME", str(tmp_path / "home"))
    with guard.claim("selene dedup", ["in", "memory://a", "src/*.jsonl"], ["out/", "memory://b"]):
        (entry,) = guard.running()
        assert entry["pid"] == os.getpid() and entry["command"] == "selene dedup"
        assert entry["inputs"] == [str(tmp_path / "in"), str(tmp_path / "src" / "*.jsonl")]
        assert entry["outputs"] == [str(tmp_path / "out")]  # memory:// lives in this process only
        with guard.claim("selene dedup", ["in"], ["out/part"]):  # re-entrant: nothing more taken
            assert len(guard.running()) == 1
        assert (tmp_path / f".out{guard.LOCK_SUFFIX}").is_file()
    assert guard.running() == [] and not (tmp_path / f".out{guard.LOCK_SUFFIX}").exists()


def test_eval_writes_beside_its_checkpoint_but_never_over_it(tmp_path: Path) -> None:
    from selene.eval.config import EvalConfig
    from selene.job import Job

    ckpt = tmp_path / "train" / "checkpoints" / "step-000004"
    ckpt.mkdir(parents=True)
    with Job("eval", str(ckpt), str(ckpt / "eval"), EvalConfig()).claim():  # the default output
        pass
    for out in (ckpt, tmp_path / "train"):
        with pytest.raises(UsageError, match=r"selene eval: the output .* the input"), Job(
            "eval", str(ckpt), str(out), EvalConfig()
        ).claim():
            pass


def test_a_released_lock_takes_away_the_folders_it_made_when_they_stay_empty(tmp_path: Path) -> None:
    """A refused command whose output's parent did not exist leaves no empty folder behind; a folder
    something else was written into meanwhile stays, and so does one that was there before."""
    from selene.procs import FileLock

    lock = FileLock(tmp_path / "runs" / "x" / ".train.selene-lock")
    assert lock.acquire()
    lock.release(unlink=True)
    assert list(tmp_path.iterdir()) == []

    lock = FileLock(tmp_path / "runs" / "x" / ".train.selene-lock")
    assert lock.acquire()
    (tmp_path / "runs" / "x" / "train").mkdir()  # the command's output, written meanwhile
    lock.release(unlink=True)
    assert [p.name for p in (tmp_path / "runs" / "x").iterdir()] == ["train"]
