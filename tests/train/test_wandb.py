"""Weights & Biases beside TensorBoard: an offline W&B run of a tiny training run, off by default, a
resumed run continuing it, a failing W&B costing a warning, a missing package stopping the launch."""

from __future__ import annotations

import glob
import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from selene.errors import ConfigError
from selene.train.config import TrainConfig
from selene.train.launch import launch, preflight
from selene.train.metrics import MetricsLogger, read_metrics
from tests.pipeline_runs import write_token_dataset


@pytest.fixture
def wandb() -> Any:
    """The package (a dev dependency); without it only the tests that need no W&B run."""
    return pytest.importorskip("wandb")


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("tokens"))


@pytest.fixture(autouse=True)
def offline_wandb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No network, no login, nothing under ~: wandb's own folders in the test's tmp (the ranks inherit it)."""
    home = tmp_path / "wandb-home"
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for var in ("WANDB_DIR", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(var, str(home / var.lower()))
    monkeypatch.setenv("WANDB_DISABLE_CODE", "true")  # nothing to save, and no copy of the test file
    monkeypatch.setenv("WANDB_DISABLE_GIT", "true")  # the checkout's state is not the run's
    monkeypatch.delenv("WANDB_API_KEY", raising=False)


def config(prefix: str, out: Path, steps: int, **wandb_cfg: Any) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "model": {"preset": "debug"},
            "parallel": {"dp_shard": 1},
            "steps": steps,
            "batch": {"seq_len": 32, "global_batch": 4, "micro_batch": 4},
            "data": {"prefixes": [prefix]},
            "eval_every": 100,
            "eval_batches": 1,
            "checkpoint": {"every": 2},
            "tensorboard": False,
            "wandb": wandb_cfg,
            "out": str(out),
        }
    )


def records(path: str) -> Iterator[Any]:
    """The records of a `.wandb` file: a 7-byte W&B header, then LevelDB's log format (32 KiB blocks of
    chunks with a 7-byte header: crc32c, length, type 1 full / 2 first / 3 middle / 4 last), each
    record one wandb `Record` protobuf. wandb ships no Python reader of it (its core, in Go, reads it)."""
    from wandb.proto import wandb_internal_pb2

    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b":W&B", path
    pos, block, chunks = 7, 32768, b""
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # too little room left for a chunk header: the block is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if kind == 0:  # zeros: preallocated, not written
            break
        chunks += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(chunks)
            chunks = b""
            yield record


def offline_runs(out: Path) -> list[dict[str, Any]]:
    """Each offline run under <out>/wandb, oldest first: its id, name, config and history by step."""
    runs = []
    for folder in sorted(glob.glob(str(out / "wandb" / "offline-run-*"))):
        (file,) = glob.glob(os.path.join(folder, "run-*.wandb"))
        run: dict[str, Any] = {"history": {}}
        for r in records(file):
            kind = r.WhichOneof("record_type")
            if kind == "run":
                run["id"], run["name"] = r.run.run_id, r.run.display_name
                run["config"] = {u.key: json.loads(u.value_json) for u in r.run.config.update}
            elif kind == "history":
                row = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
                run["history"][row.pop("_step")] = row
        runs.append(run)
    return runs


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
@pytest.mark.usefixtures("wandb")
def test_offline_run_has_each_step_and_a_resumed_run_continues_it(tokens: str, tmp_path: Path) -> None:
    out = tmp_path / "myrun" / "train"  # a pipeline's <run_dir>/train: the W&B run is named after myrun
    assert launch(config(tokens, out, 2, enabled=True), str(out), 1) == 0
    run_id = (out / "wandb-run-id").read_text().strip()
    (first,) = offline_runs(out)
    assert first["id"] == run_id and first["name"] == "myrun"
    assert first["config"]["steps"] == 2 and first["config"]["optim"]["lr"] == pytest.approx(3e-4)
    assert first["config"]["run"]["parameters"] > 0 and first["config"]["run"]["resumed_from"] is None
    logged = {r["step"]: r for r in read_metrics(str(out / "metrics.jsonl"))}
    assert sorted(first["history"]) == [1, 2]
    for step, row in first["history"].items():
        assert row["loss"] == pytest.approx(logged[step]["loss"])
        assert row["lr"] == pytest.approx(logged[step]["lr"])
        assert "step" not in row  # the record's step is W&B's own step, not a metric beside it

    assert launch(config(tokens, out, 4, enabled=True), str(out), 1) == 0  # resumes from step 2
    assert (out / "wandb-run-id").read_text().strip() == run_id
    first_again, second = offline_runs(out)
    # offline, each launch is a folder of its own; `wandb sync` uploads both into the one W&B run
    assert sorted(first_again["history"]) == [1, 2]
    assert second["id"] == run_id and second["config"]["steps"] == 4
    assert second["config"]["run"]["resumed_from"].endswith("step-000002")
    logged = {r["step"]: r for r in read_metrics(str(out / "metrics.jsonl"))}
    assert sorted(second["history"]) == [3, 4]
    for step, row in second["history"].items():
        assert row["loss"] == pytest.approx(logged[step]["loss"])


def test_off_by_default_and_never_imported_by_the_commands(tmp_path: Path) -> None:
    assert TrainConfig().wandb.enabled is False
    logger = MetricsLogger(str(tmp_path), tensorboard=False, enabled=True, wandb=TrainConfig().wandb)
    logger.begin({"config": {}}, 0)
    logger.log({"step": 1, "loss": 2.0})
    logger.close()
    assert sorted(os.listdir(tmp_path)) == ["metrics.jsonl"]  # no wandb/, no wandb-run-id
    # the CLI and the training modules import wandb only when a run has it enabled
    code = (
        "import sys, selene.cli, selene.train.loop, selene.train.launch, selene.train.metrics; "
        "sys.exit('wandb' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_a_failing_wandb_costs_one_warning_and_metrics_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wandb: Any
) -> None:
    cfg = TrainConfig.WandbConfig(enabled=True)

    def no_login(**kwargs: Any) -> None:
        raise wandb.errors.UsageError("api_key not configured (no-tty)")

    monkeypatch.setattr(wandb, "init", no_login)
    logger = MetricsLogger(str(tmp_path), tensorboard=False, enabled=True, wandb=cfg)
    logger.begin({"config": {}}, 0)
    logger.log({"step": 1, "loss": 2.0})
    logger.close()
    err = capsys.readouterr().err
    assert err.count("W&B could not start") == 1 and "api_key not configured" in err
    assert [r["step"] for r in read_metrics(str(tmp_path / "metrics.jsonl"))] == [1]

    calls: list[str] = []

    class Broken:  # a run that fails mid-training (its service died): dropped after one warning
        def log(self, *args: Any, **kwargs: Any) -> None:
            calls.append("log")
            raise ConnectionResetError("service gone")

        def finish(self) -> None:
            calls.append("finish")

    monkeypatch.setattr(wandb, "init", lambda **kwargs: Broken())
    logger = MetricsLogger(str(tmp_path / "b"), tensorboard=False, enabled=True, wandb=cfg)
    logger.begin({"config": {}}, 0)
    for step in (1, 2, 3):
        logger.log({"step": step, "loss": 2.0})
    logger.close()
    err = capsys.readouterr().err
    assert calls == ["log"] and err.count("W&B") == 1 and "W&B failed (ConnectionResetError" in err
    assert [r["step"] for r in read_metrics(str(tmp_path / "b" / "metrics.jsonl"))] == [1, 2, 3]


def test_a_missing_wandb_package_is_a_config_error_before_launch(
    tokens: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` fails as if it were not installed
    out = tmp_path / "out"
    missing = r"train\.wandb\.enabled needs the wandb package: pip install 'selene\[wandb\]'"
    with pytest.raises(ConfigError, match=missing):
        preflight(config(tokens, out, 2, enabled=True), str(out), 1)
    preflight(config(tokens, out, 2), str(out), 1)  # disabled: no need of it
