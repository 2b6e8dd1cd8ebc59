"""Background checkpoints (``train.checkpoint.async``): the same files as a synchronous save, exact
resume (also under another layout), a process killed inside the background write leaves nothing that
looks complete, SIGTERM waits for the save in flight, a failed write is one error."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from selene.train.checkpoint import complete_steps, unfinished_steps
from selene.train.config import TrainConfig
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from tests.distributed import run_world
from tests.pipeline_runs import write_token_dataset


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("tokens"))


def config(prefix: str, out: Path, steps: int, **checkpoint: Any) -> TrainConfig:
    return TrainConfig.model_validate({
        "model": {"preset": "debug"}, "parallel": {"dp_shard": 1}, "steps": steps,
        "batch": {"seq_len": 32, "global_batch": 8, "micro_batch": 4}, "optim": {"lr": 3e-3, "warmup_steps": 2},
        "data": {"prefixes": [prefix]}, "eval_every": 100, "eval_batches": 1, "tensorboard": False,
        "checkpoint": {"every": 3, "keep": 1, **checkpoint}, "out": str(out),
    })  # fmt: skip


def losses(out: Path) -> dict[int, float]:
    return {r["step"]: r["loss"] for r in read_metrics(str(out / "metrics.jsonl"))}


def test_async_is_the_yaml_key_and_what_the_defaults_show(tmp_path: Path) -> None:
    from selene.config import dump_config

    cfg = TrainConfig.model_validate(yaml.safe_load("checkpoint:\n  async: true\n  every: 5\n"))
    assert cfg.checkpoint.async_ is True
    assert yaml.safe_load(dump_config(TrainConfig()))["checkpoint"]["async"] is False
    # the resolved config every rank reads back (JSON) keeps it
    assert TrainConfig.model_validate(json.loads(json.dumps(cfg.model_dump(mode="json")))).checkpoint.async_


# ------------------------------------------------------------------ the same checkpoint, two ranks


def _save_both_ways(rank: int, world: int, root: str) -> dict[str, Any]:
    """FSDP over 2 gloo ranks: a synchronous save, then a background one of the same state whose
    weights are changed as soon as `save` returns (the write must hold the copy, not the live tensors)."""
    import threading

    import torch.distributed.checkpoint.state_dict_saver as saver_module

    from selene.model.args import ModelArgs
    from selene.train import checkpoint
    from selene.train.checkpoint_async import AsyncCheckpointer
    from selene.train.config import ParallelConfig
    from selene.train.dims import ParallelDims
    from selene.train.parallelize import build_parallel_model

    margs = ModelArgs(n_layers=2, dim=32, n_heads=2, ffn_dim=64, vocab_size=64, max_seq_len=32)
    dims = ParallelDims(1, world, 1, 1, world)
    mesh = dims.build_mesh("cpu")
    pm = build_parallel_model(margs, ParallelConfig(dp_shard=world), dims, mesh, torch.device("cpu"), seed=1)
    optims = [torch.optim.AdamW(p.parameters(), lr=1e-2) for p in pm.parts]
    tokens = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(rank))
    pm.forward_backward(tokens, tokens)
    for o in optims:
        o.step()  # optimizer state to save too
    saved = {k: v.full_tensor().clone() for k, v in pm.parts[0].state_dict().items()}
    torch.manual_seed(7)
    checkpoint.save(os.path.join(root, "sync"), 1, pm.parts, optims, {"x": 1}, keep=2)
    torch.manual_seed(7)
    # the writer starts only once the weights have changed: a write of the live tensors would see it
    changed, real_save = threading.Event(), saver_module.save
    saver_module.save = lambda *a, **k: changed.wait() and real_save(*a, **k)
    saver = AsyncCheckpointer(torch.device("cpu"))
    path = saver.save(os.path.join(root, "async"), 1, pm.parts, optims, {"x": 1}, keep=2)
    with torch.no_grad():
        for p in pm.parts[0].parameters():
            p.add_(1.0)
    changed.set()
    saver.close()
    saver_module.save = real_save
    # both load back the state as it was at the save
    checkpoint.dcp_load(checkpoint.train_state(pm.parts, optims), path)
    loaded = {k: v.full_tensor() for k, v in pm.parts[0].state_dict().items()}
    return {"same": all(torch.equal(saved[k], loaded[k]) for k in saved), "keys": sorted(saved)}


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_background_save_writes_what_a_synchronous_save_writes(tmp_path: Path) -> None:
    res = run_world(2, _save_both_ways, str(tmp_path))
    assert all(r["same"] for r in res) and res[0]["keys"]
    sync, bg = (json.loads((tmp_path / w / "step-000001" / "meta.json").read_text()) for w in ("sync", "async"))
    # every tensor file and RNG state byte for byte (DCP's index holds a random save id: not compared)
    files = {n for n in sync["files"] if n != ".metadata"}
    assert {n for n in bg["files"] if n != ".metadata"} == files and any(n.endswith(".distcp") for n in files)
    assert all(sync["files"][n] == bg["files"][n] for n in files)
    assert {k: v for k, v in bg.items() if k != "files"} == {k: v for k, v in sync.items() if k != "files"}


# ------------------------------------------------------------- killed inside the background write

# The worker, with the background hashing of one step's files (BLOCKED_STEP) held until the file
# RELEASE exists (never, when unset), once DCP has written them all and its own index (.metadata):
# the latest moment a kill can come before meta.json. BLOCKED_FLAG is created when it holds.
_BLOCKED = textwrap.dedent("""
    import os, sys, time
    from selene.train import checkpoint_digests
    real = checkpoint_digests.sha256_of
    def held(path):
        if os.environ["BLOCKED_STEP"] in path:
            open(os.environ["BLOCKED_FLAG"], "w").close()
            while not os.path.exists(os.environ.get("RELEASE", "/nonexistent")):
                time.sleep(0.05)
        return real(path)
    checkpoint_digests.sha256_of = held
    from selene.train.worker import main
    sys.exit(main(sys.argv[1:]))
""")


def start_held(cfg: TrainConfig, out: Path, step: int, port: int, release: str = "") -> tuple[subprocess.Popen[bytes], Path]:
    """The worker of `cfg` in its own session, its save of `step` held in the background write."""
    out.mkdir()
    (out / "cfg.json").write_text(json.dumps(cfg.model_dump(mode="json")))
    flag = out.parent / f"{out.name}.held"
    env = {**os.environ, "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": str(port), "BLOCKED_FLAG": str(flag), "BLOCKED_STEP": f"step-{step:06d}"}  # fmt: skip
    if release:
        env["RELEASE"] = release
    proc = subprocess.Popen([sys.executable, "-c", _BLOCKED, str(out / "cfg.json"), str(out)], env=env,
                            start_new_session=True)  # fmt: skip
    return proc, flag


def wait_for(proc: subprocess.Popen[bytes], flag: Path, out: Path, step: int) -> None:
    """Until the save is held and training has logged `step` (it did not wait for the write)."""
    deadline = time.time() + 120
    while not (flag.exists() and (out / "metrics.jsonl").exists() and max(losses(out), default=0) >= step):
        assert proc.poll() is None and time.time() < deadline, "training ended, hung or waited on the write"
        time.sleep(0.05)


@pytest.mark.timeout(300)
@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_kill_inside_the_background_write_leaves_the_previous_checkpoint(tokens: str, tmp_path: Path) -> None:
    """Saves at 3, 6, 9 with keep 1. Step 6's write blocks; training goes on past it (the step did
    not wait for the write); the process is killed. Step 3 is still the latest complete checkpoint
    (kept: pruning waits for completion), step 6 is not one, and a resumed run removes it, continues
    from step 3 and logs exactly the losses of an uninterrupted synchronous run."""
    ref = tmp_path / "ref"
    launch(config(tokens, ref, 9), str(ref), 1)
    out = tmp_path / "killed"
    cfg = config(tokens, out, 9, **{"async": True})
    proc, flag = start_held(cfg, out, 6, 29741)
    wait_for(proc, flag, out, 8)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    root = out / "checkpoints"
    assert complete_steps(str(root)) == [3]
    assert unfinished_steps(str(root)) == [str(root / "step-000006")]
    assert (root / "step-000006" / ".metadata").exists()  # complete to DCP, not to selene
    cfg.checkpoint.keep = 2
    launch(cfg, str(out), 1)
    want, got = losses(ref), losses(out)
    assert sorted(got) == list(range(1, 10))
    assert all(got[s] == pytest.approx(want[s], abs=1e-6) for s in want)
    assert complete_steps(str(root)) == [6, 9] and unfinished_steps(str(root)) == []
    assert json.loads((root / "step-000009" / "meta.json").read_text())["step"] == 9


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_sigterm_waits_for_the_save_in_flight_then_saves_the_last_step(tokens: str, tmp_path: Path) -> None:
    out = tmp_path / "term"
    cfg = config(tokens, out, 500, **{"async": True, "every": 2, "keep": 5})
    release = tmp_path / "release"
    proc, flag = start_held(cfg, out, 2, 29743, str(release))
    wait_for(proc, flag, out, 3)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    release.touch()
    assert proc.wait(timeout=120) == 0
    last = max(losses(out))
    root = str(out / "checkpoints")
    assert 3 <= last < 500 and complete_steps(root)[0] == 2 and complete_steps(root)[-1] == last
    assert unfinished_steps(root) == []
    # one save in flight: the last step's files were written after step 2 was complete
    final, held = Path(root) / f"step-{last:06d}", Path(root) / "step-000002"
    assert (final / ".metadata").stat().st_mtime_ns >= (held / "meta.json").stat().st_mtime_ns


def test_a_failed_background_write_is_one_output_error(tmp_path: Path) -> None:
    from selene.errors import OutputError
    from selene.train.checkpoint_async import AsyncCheckpointer

    model = torch.nn.Linear(4, 4)
    optim = torch.optim.AdamW(model.parameters())
    saver = AsyncCheckpointer(torch.device("cpu"))
    (tmp_path / "file").touch()  # a file where the checkpoints' folder should be
    with pytest.raises(OutputError, match=r"file/step-000002: cannot write the checkpoint \(NotADirectoryError") as e:
        saver.save(str(tmp_path / "file"), 2, [model], [optim], {}, keep=1)
        saver.wait()
    assert "\n" not in str(e.value)
    saver.save(str(tmp_path / "ok"), 3, [model], [optim], {}, keep=1)  # the saver goes on after a failure
    saver.close()
    assert complete_steps(str(tmp_path / "ok")) == [3]


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_two_ranks_save_in_the_background_and_resume_under_another_layout(tokens: str, tmp_path: Path) -> None:
    """FSDP over 2 ranks trains on while its writer's collectives run on their own group; the run
    resumed from its step 4 at tp=2 logs the same losses (up to float reduction order)."""
    out = tmp_path / "fsdp"
    cfg = config(tokens, out, 6, **{"async": True, "every": 2, "keep": 2})
    cfg.parallel.dp_shard = 2
    launch(cfg, str(out), 2)
    ref, root = losses(out), str(out / "checkpoints")
    assert complete_steps(root) == [4, 6] and unfinished_steps(root) == []
    shutil.rmtree(out / "checkpoints" / "step-000006")
    cfg.parallel.dp_shard, cfg.parallel.tp = 1, 2
    launch(cfg, str(out), 2)
    got = losses(out)
    assert sorted(got) == list(range(1, 7)) and complete_steps(root) == [4, 6]
    assert all(got[s] == pytest.approx(ref[s], abs=2e-4) for s in (5, 6))
