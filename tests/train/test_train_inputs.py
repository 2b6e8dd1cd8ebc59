"""`selene train` as a new user meets it: started from any directory, on token data it never writes to."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from selene.errors import ConfigError
from selene.train.config import TrainConfig
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from tests.pipeline_runs import ROOT, write_token_dataset


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("tokens"))


def config(prefix: str, out: Path, steps: int = 2) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "model": {"preset": "debug"},
            "parallel": {"dp_shard": 1},
            "steps": steps,
            "batch": {"seq_len": 32, "global_batch": 4, "micro_batch": 4},
            "data": {"prefixes": [prefix]},
            "eval_every": 100,
            "eval_batches": 1,
            "checkpoint": {"every": 100},
            "tensorboard": False,
            "out": str(out),
        }
    )


def steps_logged(out: Path) -> list[int]:
    return [r["step"] for r in read_metrics(str(out / "metrics.jsonl"))]


def test_trains_from_a_directory_that_holds_a_selene_folder(
    tokens: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m` would put the working directory first on sys.path, and its empty `selene/` folder
    would shadow the installed package on every rank."""
    here = tmp_path / "here"
    (here / "selene").mkdir(parents=True)
    monkeypatch.chdir(here)
    # the checkout on PYTHONPATH would hide the fault (it comes before the editable install's finder)
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(kept))
    out = tmp_path / "out"
    assert launch(config(tokens, out), str(out), 1) == 0
    assert steps_logged(out) == [1, 2]


@pytest.fixture
def read_only_tokens(tokens: str, tmp_path: Path) -> Iterator[Path]:
    """A copy of the token data with every write permission taken away (given back at teardown)."""
    folder = tmp_path / "ro-tokens"
    shutil.copytree(Path(tokens).parent, folder)
    paths = [folder, *folder.iterdir()]
    for p in paths:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    yield folder
    for p in paths:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_read_only_token_data_trains_and_is_left_as_it_was(read_only_tokens: Path, tmp_path: Path) -> None:
    before = listing(read_only_tokens)
    prefix = str(read_only_tokens / "data_text_document")
    out = tmp_path / "out"
    assert launch(config(prefix, out), str(out), 1) == 0
    assert steps_logged(out) == [1, 2]
    assert listing(read_only_tokens) == before
    cache = out / "index-cache"
    built = sorted(p.name for p in cache.iterdir())
    assert any(n.endswith(".description.json") for n in built) and any(n.endswith(".npy") for n in built)
    launch(config(prefix, out), str(out), 1)  # a rerun into the same directory reuses its indices
    assert sorted(p.name for p in cache.iterdir()) == built
    assert listing(read_only_tokens) == before


def test_resuming_on_remade_token_data_is_refused_with_the_fix(tokens: str, tmp_path: Path) -> None:
    """The data was made again (its tokenize fingerprint differs), with the same tokenizer: resuming
    would go on with the old cursor on other data. `selene train` stops before any rank starts."""
    folder = tmp_path / "tokens"
    shutil.copytree(Path(tokens).parent, folder)
    prefix = str(folder / "data_text_document")
    out = tmp_path / "out"
    launch(config(prefix, out), str(out), 1)
    manifest = json.loads((folder / "manifest.json").read_text())
    old, manifest["fingerprint"] = manifest["fingerprint"], "remade"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError) as e:
        launch(config(prefix, out, steps=3), str(out), 1)
    assert f"trained on other token data (tokenize fingerprint {old[:16]}..., now remade...)" in str(e.value)
    assert "`selene train CFG --force`" in str(e.value)
    assert steps_logged(out) == [1, 2]
