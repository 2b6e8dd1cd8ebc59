"""The training loop through torchrun (gloo, CPU): loss goes down, exact resume, cross-layout resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from selene.train.config import TrainConfig
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from tests.pipeline_runs import write_token_dataset


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("tokens"))


def config(prefix: str, out: Path, steps: int, **parallel: int) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "model": {"preset": "debug"},
            "parallel": {"dp_shard": 1, **parallel},
            "steps": steps,
            "batch": {"seq_len": 32, "global_batch": 8, "micro_batch": 4},
            "optim": {"lr": 3e-3, "warmup_steps": 2},
            "data": {"prefixes": [prefix]},
            "eval_every": 4,
            "eval_batches": 1,
            "checkpoint": {"every": 3, "keep": 5},
            "tensorboard": False,
            "out": str(out),
        }
    )


def losses(out: Path) -> dict[int, float]:
    return {r["step"]: r["loss"] for r in read_metrics(str(out / "metrics.jsonl"))}


def test_loss_goes_down_and_resume_is_exact(tokens: str, tmp_path: Path) -> None:
    straight = tmp_path / "straight"
    launch(config(tokens, straight, 8), str(straight), 1)
    ref = losses(straight)
    assert sorted(ref) == list(range(1, 9)) and ref[8] < ref[1]
    assert (straight / "checkpoints" / "step-000008" / "meta.json").exists()
    resumed = tmp_path / "resumed"
    launch(config(tokens, resumed, 3), str(resumed), 1)
    launch(config(tokens, resumed, 8), str(resumed), 1)  # continues from step 3
    got = losses(resumed)
    assert sorted(got) == list(range(1, 9))
    for step in range(1, 9):
        assert got[step] == pytest.approx(ref[step], abs=1e-6), step


def test_killed_run_resumes_with_the_same_losses(tokens: str, tmp_path: Path) -> None:
    ref_out = tmp_path / "ref"
    launch(config(tokens, ref_out, 9), str(ref_out), 1)
    out = tmp_path / "killed"
    cfg = config(tokens, out, 9)
    os.makedirs(out, exist_ok=True)
    (out / "cfg.json").write_text(json.dumps(cfg.model_dump(mode="json")))
    env = {**os.environ, "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29731"}
    proc = subprocess.Popen([sys.executable, "-m", "selene.train.worker", str(out / "cfg.json"), str(out)], env=env,
                            start_new_session=True)
    deadline = time.time() + 120
    while not (out / "checkpoints" / "step-000003" / "meta.json").exists():
        assert proc.poll() is None and time.time() < deadline, "training ended or hung before its first checkpoint"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    launch(cfg, str(out), 1)
    ref, got = losses(ref_out), losses(out)
    assert sorted(got) == list(range(1, 10))
    assert all(got[s] == pytest.approx(ref[s], abs=1e-6) for s in ref)


@pytest.mark.timeout(600)
def test_checkpoint_loads_under_another_layout(tokens: str, tmp_path: Path) -> None:
    """Saved at dp_shard=2, resumed at tp=2 × pp=2: the losses continue (up to float reduction order).
    The run resumed is a copy of the reference run's folder without its last checkpoint (step 3 is the
    latest left), as a run stopped there would have left it."""
    ref_out = tmp_path / "ref"
    launch(config(tokens, ref_out, 6, dp_shard=2), str(ref_out), 2)
    out = tmp_path / "cross"
    shutil.copytree(ref_out, out)
    shutil.rmtree(out / "checkpoints" / "step-000006")
    metrics = out / "metrics.jsonl"  # steps 4-6 are the resumed run's own, not the copy's
    metrics.write_text("".join(x for x in metrics.read_text().splitlines(True) if json.loads(x)["step"] <= 3))
    cross = config(tokens, out, 6, tp=2, pp=2)
    cross.parallel.pp_microbatches = 2
    launch(cross, str(out), 4)
    ref, got = losses(ref_out), losses(out)
    assert sorted(got) == list(range(1, 7)) and (out / "checkpoints" / "step-000006" / "meta.json").exists()
    for step in range(4, 7):
        assert got[step] == pytest.approx(ref[step], abs=2e-4), step


def test_sigterm_saves_a_checkpoint_and_exits_cleanly(tokens: str, tmp_path: Path) -> None:
    out = tmp_path / "term"
    cfg = config(tokens, out, 500)
    cfg.checkpoint.every = 2
    os.makedirs(out, exist_ok=True)
    (out / "cfg.json").write_text(json.dumps(cfg.model_dump(mode="json")))
    env = {**os.environ, "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29733"}
    proc = subprocess.Popen([sys.executable, "-m", "selene.train.worker", str(out / "cfg.json"), str(out)], env=env)
    deadline = time.time() + 120
    while not (out / "checkpoints" / "step-000002" / "meta.json").exists():
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 0
    last = max(losses(out))
    assert last < 500 and (out / "checkpoints" / f"step-{last:06d}" / "meta.json").exists()


def test_blended_prefixes_follow_their_weights(tokens: str, tmp_path: Path) -> None:
    from selene.train.config import TrainDataConfig
    from selene.train.data import build_data

    other = str(tmp_path / "other")
    from selene.tokenize.indexed import IndexedWriter

    with IndexedWriter(other, np.uint16) as w:
        for _ in range(100):
            w.add_document(np.full(50, 7, dtype=np.uint16))
    data = build_data(TrainDataConfig(prefixes=[tokens, other], weights=[3, 1]), 32, 400, 8, cache_dir=str(tmp_path / "cache"))
    from_other = sum(bool((data.train[i] == 7).all()) for i in range(400))
    assert from_other == 100  # Megatron's greedy blend: exactly a quarter of the samples
