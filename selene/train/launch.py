"""`selene train`: resolve the training config, check the layout against the world size, run torchrun.

The check happens here, before any process starts: a layout that cannot fit the world size is a
configuration error with the whole product spelled out, not a hang or a traceback on N ranks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import yaml
from pydantic import ValidationError

from selene.config import PipelineConfig, TrainConfig, format_validation_error, load_yaml
from selene.errors import ConfigError, SeleneError
from selene.train.dims import ParallelDims
from selene.train.model import model_args


def load_train_config(path: str, overrides: list[str]) -> tuple[TrainConfig, str]:
    """(train config, output dir) from a pipeline file (its `train:` section, out = <run_dir>/train)
    or a train-only file (needs `out`), with ``key=value`` overrides (``parallel.tp=2``)."""
    data, lines = load_yaml(path)
    pipeline = "run_dir" in data
    section: dict[str, Any] = dict(data.get("train") or {}) if pipeline else data
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected key=value, e.g. --set parallel.tp=2")
        node = section
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {p!r} is not a group of settings")
        node[parts[-1]] = yaml.safe_load(value)
    try:
        if pipeline:
            pcfg = PipelineConfig.model_validate({**data, "train": section})
            cfg, out = pcfg.train, pcfg.train.out or pcfg.stage_dir("train")
            if not cfg.data.prefixes:
                prefix = pcfg.tokenize.prefix
                cfg.data.prefixes = [os.path.join(pcfg.stage_dir("tokenize"), prefix)]
        else:
            cfg = TrainConfig.model_validate(section)
            if not cfg.out:
                raise ConfigError(f"{path}: a training config on its own needs `out:` (or use a pipeline file)")
            out = cfg.out
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where=path, lines=lines, root=PipelineConfig if pipeline else TrainConfig)) from None
    return cfg, out


def check_layout(cfg: TrainConfig, world_size: int) -> ParallelDims:
    p = cfg.parallel
    dims = ParallelDims(p.dp_replicate, p.dp_shard, p.tp, p.pp, world_size)
    max_len = model_args(cfg.model, cfg.model.vocab_size or 256).max_seq_len
    if (cfg.batch.seq_len or max_len) > max_len:
        raise ConfigError(f"train.batch.seq_len {cfg.batch.seq_len} exceeds the model's max_seq_len {max_len}")
    dp = p.dp_replicate * dims.dp_shard
    if cfg.batch.global_batch % dp:
        raise ConfigError(f"train.batch.global_batch {cfg.batch.global_batch} is not divisible by the data-parallel size {dp}")
    return dims


def launch(
    cfg: TrainConfig, out: str, nproc_per_node: int, nnodes: int = 1, node_rank: int = 0,
    rdzv_endpoint: str | None = None,
) -> int:
    """Run torchrun with `nproc_per_node` × `nnodes` processes; returns its exit code."""
    check_layout(cfg, nproc_per_node * nnodes)
    os.makedirs(out, exist_ok=True)
    config_path = os.path.join(out, f"config.node{node_rank}.json")
    with open(config_path, "w") as f:
        json.dump(cfg.model_dump(mode="json"), f, indent=1)
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}", f"--nnodes={nnodes}"]
    if nnodes > 1:
        if not rdzv_endpoint:
            raise ConfigError("--nnodes > 1 needs --rdzv-endpoint HOST:PORT (the same on every node)")
        cmd += [f"--node-rank={node_rank}", "--rdzv-backend=c10d", f"--rdzv-endpoint={rdzv_endpoint}", "--rdzv-id=selene"]
    else:
        cmd += ["--standalone"]
    cmd += ["-m", "selene.train.worker", config_path, out]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.run(cmd, env=env)
    if proc.returncode:
        raise SeleneError(f"training failed (torchrun exit code {proc.returncode}); the log above has the rank's error")
    return 0
