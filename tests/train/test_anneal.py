"""Decay branches of a WSD run (`selene train --anneal-from`): the same losses as the run's own decay,
the run untouched, exact resume of a killed branch, refusals in one line with nothing written."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from selene.train.config import TrainConfig
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from tests.pipeline_runs import subprocess_env, write_token_dataset

# whole training runs and their branches through the launcher: the full suite's, not the edit loop's
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Parent:
    """A finished 7-step WSD run (warmup 2, stable to step 4, 3 decay steps), its YAML and where it is."""

    root: Path
    config: Path
    out: Path


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(out: Path) -> dict[int, dict[str, float]]:
    return {int(r["step"]): r for r in read_metrics(str(out / "metrics.jsonl"))}


def _selene(parent: Parent, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "selene.cli", "train", str(parent.config), *args]
    return subprocess.run(cmd, cwd=parent.root, env=subprocess_env(parent.root), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Parent:
    root = tmp_path_factory.mktemp("anneal")
    prefix = write_token_dataset(root / "tokens")
    out = root / "run"
    settings = {
        "model": {"preset": "debug"}, "parallel": {"dp_shard": 1}, "steps": 7,
        "batch": {"seq_len": 32, "global_batch": 8, "micro_batch": 4},
        "optim": {"lr": 3e-3, "warmup_steps": 2, "schedule": "wsd", "decay_steps": 3, "min_lr_ratio": 0.0},
        "data": {"prefixes": [prefix]}, "eval_every": 100, "eval_batches": 1,
        "checkpoint": {"every": 2, "keep": 10}, "tensorboard": False, "out": str(out),
    }  # fmt: skip
    launch(TrainConfig.model_validate(settings), str(out), 1)
    config = root / "train.yaml"
    config.write_text(yaml.safe_dump(settings))
    return Parent(root, config, out)


@pytest.fixture(scope="module")
def branch(parent: Parent) -> tuple[Path, dict[str, str], dict[str, str]]:
    """The branch at step 4 with a 3-step decay, and the run's files (sha256) before and after it."""
    before = _tree(parent.out)
    proc = _selene(parent, "--anneal-from", "step-4", "--decay-steps", "3")
    assert proc.returncode == 0, proc.stderr
    return parent.root / "run.anneals" / "step-4-decay-3", before, _tree(parent.out)


def test_a_branch_from_the_stable_phase_trains_exactly_the_runs_own_decay(parent: Parent, branch: tuple[Path, dict[str, str], dict[str, str]]) -> None:
    out, before, after = branch
    run, got = _rows(parent.out), _rows(out)
    assert sorted(got) == [5, 6, 7]
    for step in (5, 6, 7):  # the same weights, optimizer state, data cursor and RNG at step 4: the same numbers
        assert got[step]["lr"] == run[step]["lr"] and got[step]["loss"] == run[step]["loss"], step
    assert got[5]["lr"] == 3e-3 > got[6]["lr"] > got[7]["lr"] > 0
    assert got[7]["val_loss"] == run[7]["val_loss"]
    record = json.loads((out / "run.json").read_text())
    source = str(parent.out / "checkpoints" / "step-000004")
    assert record["config"]["anneal"] == {"source": source, "step": 4, "decay_steps": 3, "data_steps": 7}
    assert record["resumed_from"] == source and record["config"]["steps"] == 7
    assert (out / "checkpoints" / "step-000007" / "meta.json").exists()
    assert after == before  # not one byte of the run changed, and nothing was added to it


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_a_finished_branch_is_skipped_and_a_killed_one_resumes_from_its_own_checkpoint(
    parent: Parent, branch: tuple[Path, dict[str, str], dict[str, str]]
) -> None:
    out, before, _ = branch
    again = _selene(parent, "--anneal-from", "step-4", "--decay-steps", "3")
    assert again.returncode == 0 and "complete already: reused" in again.stdout, again.stdout + again.stderr
    reference = _rows(out)
    shutil.rmtree(out / "checkpoints" / "step-000007")  # killed during step 7, after step 6's checkpoint
    source, aside = parent.out / "checkpoints" / "step-000004", parent.root / "step-000004.aside"
    source.rename(aside)  # pruned by the run meanwhile: the branch needs only its own checkpoint
    try:
        resumed = _selene(parent, "--anneal-from", "step-4", "--decay-steps", "3")
    finally:
        aside.rename(source)
    assert resumed.returncode == 0, resumed.stderr
    own = str(out / "checkpoints" / "step-000006")
    assert f"resuming from step 6 ({own})" in resumed.stdout
    assert json.loads((out / "run.json").read_text())["resumed_from"] == own
    got = _rows(out)
    assert sorted(got) == [5, 6, 7] and got[7]["loss"] == reference[7]["loss"] and got[7]["lr"] == reference[7]["lr"]
    assert _tree(parent.out) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--anneal-from", "step-5", "--decay-steps", "2"], "has no finished checkpoint at step 5; its finished checkpoints are steps 2, 4, 6, 7"),
        (["--anneal-from", "step-4", "--decay-steps", "0"], "--decay-steps 0: a decay needs at least 1 step"),
        (["--anneal-from", "step-4", "--decay-steps", "2", "--decay-shape", "sqrt"], "--decay-shape 'sqrt': expected one of linear"),
        (["--anneal-from", "step-6", "--decay-steps", "2"], "from step 4 on: step 6 is past its stable phase"),
        (["--anneal-from", "step-4", "--decay-steps", "2", "--set", "model.n_layers=3"],
         "the checkpoint is of another model (n_layers: checkpoint 4, now 3)"),
    ],
)  # fmt: skip
def test_refusals_say_one_line_exit_2_and_write_nothing(parent: Parent, args: list[str], message: str) -> None:
    before = _tree(parent.root)
    proc = _selene(parent, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert _tree(parent.root) == before
    assert not any((parent.root / "run.anneals").glob("step-*-decay-2"))
