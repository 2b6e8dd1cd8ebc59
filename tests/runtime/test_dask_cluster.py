"""A real Dask cluster: `dask scheduler` and `dask worker` processes on loopback, the data stages sent
there with --dask-address, a worker SIGKILLed in the middle of ingest's, dedup's, spans' and
substrings' tasks, and a scheduler that does not answer."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpus import write_dataset
from tests.dedup_corpus import planted_corpus
from tests.ingest.test_ingest import build_corpus
from tests.pipeline_runs import ROOT, subprocess_env
from tests.runtime.test_scaleout import free_port

DASK = str(Path(sys.executable).with_name("dask"))


def tree_hashes(out: Path) -> dict[str, bytes]:
    """Every file of a stage's output but its manifest (which records timings), by relative path."""
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A scheduler and two single-threaded, memory-limited workers whose first arrival at ingest's
    file step, dedup's band step, spans' find step and substrings' match step is SIGKILLed (the
    nanny then starts a new worker)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    markers = tmp_path / "killed"
    markers.mkdir()
    kill = ";".join(f"{point}:{markers / point.split(':')[0]}"
                    for point in ("ingest:file", "dedup:band", "spans:find", "substrings:match"))  # fmt: skip
    env = subprocess_env(tmp_path, SELENE_KILL_ONCE=kill, OMP_NUM_THREADS="1")
    log = open(tmp_path / "dask.log", "w")  # noqa: SIM115 - closed below, after the processes
    procs = [
        subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                         env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT),
    ]  # fmt: skip
    for _ in range(2):
        procs.append(subprocess.Popen(
            [DASK, "worker", address, "--nthreads", "1", "--memory-limit", "1GiB", "--no-dashboard"],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
        ))  # fmt: skip
    from distributed import Client

    try:
        with Client(address, timeout="120s") as client:  # waits as long as a busy machine needs
            client.wait_for_workers(2, timeout=300)
        yield address, markers
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()


def sentences(n: int = 400, seed: int = 3) -> list[tuple[str, str]]:
    """Documents of sentences, a third of them drawn from a small pool: repeated spans and substrings."""
    rng = random.Random(seed)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "omicron",
        "pi",
        "rho",
    ]

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(4, 12))).capitalize() + "."

    pool = [sentence() for _ in range(12)]
    return [
        (
            f"d{i}",
            " ".join(
                rng.choice(pool) if rng.random() < 0.35 else sentence() for _ in range(rng.randint(3, 9))
            ),
        )
        for i in range(n)
    ]


STAGES = ("ingest", "dedup", "spans", "substrings")


def selene(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "selene.cli", *args],
        env=subprocess_env(tmp_path, SELENE_PREFECT="off", **env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{args}: rc {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_worker_killed_mid_stage_changes_nothing(cluster: tuple[str, Path], tmp_path: Path) -> None:
    address, markers = cluster
    specs, _ = build_corpus(tmp_path / "corpus")
    sources = [f"--source={s.name}={s.glob}" for s in specs]
    (tmp_path / "ingest.yaml").write_text("shard_docs: 4\n")  # several shards, several tasks
    docs = write_dataset(str(tmp_path / "docs"), planted_corpus(n_base=12, seed=5).docs, shard_docs=20)
    text = write_dataset(str(tmp_path / "text"), sentences(), shard_docs=50)
    # budgets of a few kilobytes: many hash partitions and suffix-array parts, so repeats cross them
    (tmp_path / "spans.yaml").write_text(
        "executor: {memory_gb: 0.00001}\n"
        "spans: {unit: sentence, span: 1, min_span_chars: 0, min_doc_words: 0, min_sentences: 0}\n"
    )
    (tmp_path / "substrings.yaml").write_text("executor: {memory_gb: 0.0003}\nsubstrings: {min_length: 30}\n")
    outs: dict[str, dict[str, dict[str, bytes]]] = {}
    tasks: dict[tuple[str, str], str] = {}
    for how, flags in (
        ("threads", ["--executor", "threads", "--workers", "2"]),
        ("dask", ["--dask-address", address]),
    ):
        # every task to the workers (none run in this process first), so that a worker is lost
        extra = {"SELENE_INLINE_SECONDS": "0"}
        selene(
            tmp_path,
            "ingest",
            *sources,
            "-o",
            str(tmp_path / how / "ingest"),
            "-c",
            str(tmp_path / "ingest.yaml"),
            *flags,
            **extra,
        )
        selene(tmp_path, "dedup", "-i", docs, "-o", str(tmp_path / how / "dedup"), *flags, **extra)
        for stage in ("spans", "substrings"):
            cfg = str(tmp_path / f"{stage}.yaml")
            proc = selene(
                tmp_path, stage, "-i", text, "-o", str(tmp_path / how / stage), "-c", cfg, *flags, **extra
            )
            tasks[how, stage] = proc.stdout + proc.stderr  # progress lines go to stderr
        outs[how] = {stage: tree_hashes(tmp_path / how / stage) for stage in STAGES}
    # a worker was killed in each stage, and its task done again elsewhere
    assert sorted(p.name for p in markers.iterdir()) == sorted(STAGES)
    for stage in STAGES:
        assert outs["dask"][stage] == outs["threads"][stage], stage
        assert any(name.startswith("part-") for name in outs["dask"][stage])
    for stage in ("spans", "substrings"):  # something was cut, across partitions and parts
        manifest = json.loads((tmp_path / "dask" / stage / "manifest.json").read_text())
        assert manifest["stats"]["documents_edited"] > 50, stage
    # the budgets split the work on the cluster as well: several find partitions, suffix-array parts
    assert re.search(r"spans-find: ([2-9]|\d\d+)/", tasks["dask", "spans"]), tasks["dask", "spans"]
    assert re.search(r"in ([2-9]|\d\d+) part\(s\)", tasks["dask", "substrings"]), tasks["dask", "substrings"]


def test_a_scheduler_that_does_not_answer_is_an_error_before_any_work(tmp_path: Path) -> None:
    docs = write_dataset(str(tmp_path / "docs"), [("a", "some text here")])
    address = f"tcp://127.0.0.1:{free_port()}"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "selene.cli",
            "dedup",
            "-i",
            docs,
            "-o",
            str(tmp_path / "out"),
            "--dask-address",
            address,
        ],
        env=subprocess_env(tmp_path, SELENE_PREFECT="off", SELENE_DASK_CONNECT_SECONDS="2"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert f"no Dask scheduler answers at {address}" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not any((tmp_path / "out").rglob("*"))  # nothing written (the claim made the empty directory)
