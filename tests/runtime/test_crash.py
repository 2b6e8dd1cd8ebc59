"""Crash safety of `selene run`: SIGKILL the whole pipeline at chosen points, rerun, same bytes.

One uninterrupted run is the reference. For each kill point a fresh run directory gets the same
command, killed (process group, SIGKILL) mid-stage (see KILL_POINTS), then
rerun to completion: every output shard must be byte-identical to the reference, the training losses
identical, no ``*.tmp-*`` leftovers, and no manifest without the shards it lists. A kill point in a
data stage runs the pipeline `--until tokenize`: training on identical token data is the
reference's training, and the kill in training runs the whole pipeline.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selene.faults import ENV as FAILPOINT_ENV
from selene.train.metrics import read_metrics
from tests.ingest.test_ingest import build_corpus
from tests.pipeline_runs import ROOT, output_hashes, subprocess_env

DATA_STAGES = ("ingest", "dedup", "decontaminate", "tokenize")

# (name, how to kill): "glob:<pattern>" kills when the pattern first matches under the run directory,
# at whatever moment the poll notices (used where the file lives long enough to be seen);
# "failpoint:<name>" makes the run kill itself exactly there (selene/faults.py), where a file
# would exist only for milliseconds and a poll could miss it.
KILL_POINTS = [
    ("ingest-work", "glob:ingest/_work/**/*"),
    ("dedup-shards", "failpoint:dedup:shards-written"),
    ("decontaminate-shards", "failpoint:decontaminate:shards-written"),
    ("tokenize-parts", "failpoint:tokenize:parts-written"),
    ("tokenize-merged", "failpoint:tokenize:merged"),
    ("train-checkpoint", "glob:train/checkpoints/step-000002/meta.json"),
]


def write_config(path: Path, run_dir: Path, specs: list) -> Path:
    sources = "\n".join(f"    - {{name: {s.name}, glob: '{s.glob}'}}" for s in specs)
    tasks = ROOT / "data" / "tasks" / "mini_piqa.jsonl"
    path.write_text(
        f"name: crash\nrun_dir: {run_dir}\ningest:\n  sources:\n{sources}\n"
        f"decontaminate:\n  tasks: ['{tasks}']\n"
        "tokenize: {vocab_size: 600}\n"
        "train: {steps: 4, batch: {global_batch: 4, micro_batch: 2}, eval_every: 4, eval_batches: 1,"
        " checkpoint: {every: 2, keep: 5}, tensorboard: false}\n"
        "eval: {limit: 2, tasks: [selene_piqa]}\n"
    )
    return path


def command(cfg: Path, until: str | None) -> list[str]:
    return [sys.executable, "-m", "selene.cli", "run", str(cfg), *(["--until", until] if until else [])]


def run_to_completion(cfg: Path, env: dict[str, str], log: Path, until: str | None = None) -> None:
    with open(log, "ab") as f:
        proc = subprocess.run(
            command(cfg, until),
            env=env,
            cwd=ROOT,
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=300,
        )
    assert proc.returncode == 0, f"selene run failed ({proc.returncode}); log:\n{log.read_text()[-4000:]}"


def run_and_kill(
    cfg: Path, run_dir: Path, how: str, env: dict[str, str], log: Path, until: str | None = None
) -> None:
    """Start `selene run` and SIGKILL its whole process group at the kill point `how`."""
    kind, _, what = how.partition(":")
    if kind == "failpoint":
        env = {**env, FAILPOINT_ENV: what}
    with open(log, "ab") as f:
        proc = subprocess.Popen(
            command(cfg, until),
            env=env,
            cwd=ROOT,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.time() + 240
        while kind == "failpoint" or not any(run_dir.glob(what)):
            if proc.poll() is not None:
                break
            assert time.time() < deadline, f"{how} never reached"
            time.sleep(0.005)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, (
        f"run ended (rc {proc.returncode}) before {how}; log:\n{log.read_text()[-4000:]}"
    )


def outputs(run_dir: Path) -> dict[str, str]:
    return output_hashes(run_dir, DATA_STAGES)


def losses(run_dir: Path) -> dict[int, float]:
    return {
        r["step"]: r["loss"] for r in read_metrics(str(run_dir / "train" / "metrics.jsonl")) if "loss" in r
    }


def check_consistent(run_dir: Path, finished: bool = True) -> None:
    """No manifest without its shards (always); no ``*.tmp-*`` leftovers (once a run finished)."""
    if finished:
        leftovers = [str(p) for p in run_dir.rglob("*.tmp-*")]
        assert not leftovers, f"temporary files left behind: {leftovers}"
    for stage in DATA_STAGES:
        manifest = run_dir / stage / "manifest.json"
        if manifest.exists():
            m = json.loads(manifest.read_text())
            for shard in m.get("shards", []):
                p = run_dir / stage / shard["name"]
                assert p.exists(), f"{manifest} lists {shard['name']}, which is missing"
                assert hashlib.sha256(p.read_bytes()).hexdigest() == shard["sha256"], (
                    f"{p} differs from its manifest"
                )


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, dict[str, str], dict[int, float]]:
    tmp = tmp_path_factory.mktemp("crash-ref")
    specs, _ = build_corpus(tmp / "corpus")
    run_dir = tmp / "run"
    cfg = write_config(tmp / "p.yaml", run_dir, specs)
    run_to_completion(cfg, subprocess_env(tmp), tmp / "log.txt")
    check_consistent(run_dir)
    outs = outputs(run_dir)
    for stage in DATA_STAGES:
        assert any(k.startswith(f"{stage}/") for k in outs), (
            f"no outputs recorded for {stage}: {sorted(outs)}"
        )
    assert "tokenize/tokenizer.model" in outs
    ref_losses = losses(run_dir)
    assert sorted(ref_losses) == [1, 2, 3, 4]
    return specs, outs, ref_losses


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("name", "how"), KILL_POINTS, ids=[k[0] for k in KILL_POINTS])
def test_killed_pipeline_resumes_to_identical_outputs(
    reference: tuple[list, dict[str, str], dict[int, float]], tmp_path: Path, name: str, how: str
) -> None:
    specs, ref_outputs, ref_losses = reference
    run_dir = tmp_path / "run"
    cfg = write_config(tmp_path / "p.yaml", run_dir, specs)
    env, log = subprocess_env(tmp_path), tmp_path / "log.txt"
    until = None if name.startswith("train") else "tokenize"
    run_and_kill(cfg, run_dir, how, env, log, until)
    check_consistent(run_dir, finished=False)  # right after the kill: no manifest without its shards
    run_to_completion(cfg, env, log, until)
    check_consistent(run_dir)
    assert outputs(run_dir) == ref_outputs
    if until is None:
        assert losses(run_dir) == ref_losses
    else:
        assert not (run_dir / "train").exists()
