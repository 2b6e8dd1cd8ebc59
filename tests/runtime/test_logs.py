"""What selene's output reads like where users keep it: one file for stdout and stderr together
(`make demo > log 2>&1`), a narrow terminal, and the line a Ctrl-C leaves (`selene.consoles`,
`selene.cli.interrupted`)."""

from __future__ import annotations

import io
import os
import pty
import random
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.table import Table

from tests.corpus import pile_line, write_zst
from tests.dedup_corpus import base_documents
from tests.pipeline_runs import subprocess_env

pytestmark = pytest.mark.timeout(600)

# a source name longer than a narrow table's column: rich cut it to `ALongSourceNameT…`
LONG = "ALongSourceNameThatIsNotCut"
SOURCES = (LONG, "Books3")


def write_corpus(root: Path, files: int = 1, per_file: int = 20) -> Path:
    rng = random.Random(0)
    docs = base_documents(per_file * files, min_words=80, max_words=200)
    # past the distinct prose there is, the documents come again, each numbered (still distinct)
    docs += [f"{docs[i % len(docs)]} ({i})" for i in range(per_file * files - len(docs))]
    root.mkdir(parents=True)
    for f in range(files):
        lines = [pile_line(d, SOURCES[rng.randrange(2)]) for d in docs[f * per_file : (f + 1) * per_file]]
        write_zst(root / f"{f:02d}.jsonl.zst", b"".join(lines))
    return root


def env(tmp: Path, **extra: str) -> dict[str, str]:
    return subprocess_env(tmp, SELENE_HOME=str(tmp / "selene-home"), **extra)


def test_a_log_console_neither_wraps_nor_narrows() -> None:
    from selene.consoles import LOG_WIDTH, LogConsole

    out = io.StringIO()
    console = LogConsole(file=out)
    assert not console.is_terminal and console.width == LOG_WIDTH
    path = "/a/" + "long-directory-name/" * 10 + "manifest.json"
    console.print(f"1 shard(s) and removed.parquet in {path}; counts in {path}")
    table = Table(title="t")
    for col in ("source", *(f"a wide column {i}" for i in range(8))):
        table.add_column(col)
    table.add_row(LONG, *["1"] * 8)
    console.print(table)
    lines = out.getvalue().splitlines()
    assert f"1 shard(s) and removed.parquet in {path}; counts in {path}" in lines
    assert any(LONG in line for line in lines) and "…" not in out.getvalue()


def test_a_narrow_terminal_folds_cells_instead_of_cutting_them() -> None:
    from selene.consoles import LogConsole

    out = io.StringIO()
    console = LogConsole(file=out, force_terminal=True, width=40, color_system=None)
    table = Table()
    for col in ("source", "in", "kept", "removed", "kept %", "tokens counted"):
        table.add_column(col)
    table.add_row(LONG, "1", "1", "0", "100%", "estimated")
    console.print(table)
    text = out.getvalue()
    assert "…" not in text
    cells = "".join(line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│"))
    assert cells == LONG  # the name folded over lines, every letter of it there


@pytest.mark.slow
def test_a_piped_run_reads_in_order_and_whole(tmp_path: Path) -> None:
    """`selene run` with stdout and stderr in one file: each stage's summary before the next stage's
    lines and all of them before the first training step, a step on one line, names and paths whole."""
    corpus = write_corpus(tmp_path / "corpus")
    run = tmp_path / ("a-run-directory-with-a-long-name-" + "x" * 40)
    cfg = tmp_path / "p.yaml"
    cfg.write_text(
        f"name: logs\nrun_dir: {run}\nseed: 7\nexecutor: {{kind: processes, workers: 2}}\n"
        f"ingest:\n  sources: [{{name: pile, glob: '{corpus}/*.jsonl.zst'}}]\n"
        "tokenize: {vocab_size: 400, allow_smaller_vocab: true}\n"
        "train: {steps: 3, log_every: 1, batch: {seq_len: 32, global_batch: 4, micro_batch: 2}, eval_every: 3, "
        "eval_batches: 1, tensorboard: false}\n"
    )
    log = tmp_path / "log"
    with open(log, "w") as f:
        proc = subprocess.run([sys.executable, "-m", "selene.cli", "run", str(cfg), "--until", "train"],
                              stdout=f, stderr=subprocess.STDOUT, env=env(tmp_path), cwd=tmp_path, timeout=540)  # fmt: skip
    lines = log.read_text().splitlines()
    assert proc.returncode == 0, "\n".join(lines[-40:])

    def first(pattern: str) -> int:
        return next(i for i, line in enumerate(lines) if re.search(pattern, line))

    summaries = [
        first(rf"^\s*{stage} → {re.escape(str(run))}/{stage}\s*$")
        for stage in ("ingest", "dedup", "tokenize")
    ]
    steps = [i for i, line in enumerate(lines) if line.startswith("step ")]
    assert summaries == sorted(summaries) and len(steps) == 3 and summaries[-1] < steps[0], lines
    # each stage's last line (its files) comes before the next stage's first line
    for stage, following in (("ingest", "dedup"), ("dedup", "tokenize")):
        assert (
            first(rf"in {re.escape(str(run))}/{stage}; counts in")
            < summaries[["ingest", "dedup", "tokenize"].index(following)]
        )
    for i in steps:  # a step whole: what the console shows, on one line
        assert re.fullmatch(r"step \d .*tokens_per_s \S+ tflops_per_device \S+ mfu \S+.*", lines[i]), lines[i]
    assert lines[steps[0] + 1].startswith("step ")
    assert any(re.match(rf"│ {LONG}\s+│", line) for line in lines)  # the source's name whole in the tables
    assert "…" not in log.read_text()
    # paths whole, each on the line that names it
    assert any(f"in {run}/ingest; counts in {run}/ingest/manifest.json" in line for line in lines)
    assert any(f"model (last checkpoint): {run}/train/checkpoints/step-000003" in line for line in lines)
    assert any(line.startswith("ingest-file: ") for line in lines)  # steps' progress as lines, not bars
    assert not any("━━" in line and "/" in line and "ingest-file" in line for line in lines)


def _pty_run(cmd: list[str], env: dict[str, str], cwd: Path, columns: int) -> tuple[int, str]:
    """`cmd` on a pseudo-terminal of `columns` columns: its exit status and everything it wrote."""
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode(errors="replace")


def test_a_60_column_terminal_shows_every_name_and_path(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "ingested"
    rc, text = _pty_run(
        [
            sys.executable,
            "-m",
            "selene.cli",
            "ingest",
            "-o",
            str(out),
            "--source",
            f"pile={corpus}/*.jsonl.zst",
        ],
        env(tmp_path, COLUMNS="60", TERM="dumb-but-a-tty", NO_COLOR="1"),
        tmp_path,
        60,
    )
    assert rc == 0, text[-3000:]
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")
    assert "…" not in plain, plain
    rows = [line for line in plain.splitlines() if line.startswith("│")]
    assert all(len(line) <= 60 for line in rows), rows  # laid out for the terminal
    first_cells = "".join(line.split("│")[1].strip() for line in rows)
    assert LONG in first_cells  # folded over lines where it does not fit, never cut
    # the last line's paths as selene wrote them: no newline of ours inside (the terminal wraps)
    assert f"in {out}; counts in {out}/manifest.json" in plain


def test_ctrl_c_on_ingest_says_the_command_that_resumes_it(tmp_path: Path) -> None:
    # a few seconds of work on a quiet machine: the interrupt must land while it reads, not as it ends
    corpus = write_corpus(tmp_path / "corpus", files=8, per_file=1500)
    out = tmp_path / "ingested"
    cmd = [sys.executable, "-m", "selene.cli", "ingest", "-o", str(out), "--source", f"pile={corpus}/*.jsonl.zst",
           "--workers", "1"]  # fmt: skip

    def default_sigint() -> None:  # a background job of a non-interactive shell starts with SIGINT ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(tmp_path),
                            cwd=tmp_path, preexec_fn=default_sigint)  # fmt: skip
    assert proc.stderr is not None
    # at work: its first line (no dashboard) comes as the stage starts
    first_line = proc.stderr.readline()
    assert "no Prefect server" in first_line, first_line
    time.sleep(0.3)
    assert proc.poll() is None, "ingest finished before it could be interrupted: make the corpus larger"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    line = err.strip().splitlines()[-1]
    again = shlex.join(["selene", *cmd[3:]])
    assert (
        line
        == f"interrupted (Ctrl-C): the shards it finished are kept; the same command resumes from them: {again}"
    ), err
    # and it does
    done = subprocess.run(cmd, capture_output=True, text=True, env=env(tmp_path), cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and (out / "manifest.json").exists(), done.stderr[-3000:]
