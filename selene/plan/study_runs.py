"""The training settings of a scaling study's run: its model, layout and batch on the study's tokens.

Shared by the timing study (`selene.plan.study`) and the loss study over token budgets
(`selene.plan.study_budgets`), each of which trains these runs.
"""

from __future__ import annotations

from selene.plan.config import ScalingStudyConfig, StudyRun
from selene.train.args import model_args
from selene.train.config import TrainConfig
from selene.train.dims import ParallelDims


def seq_len(run: StudyRun, cfg: ScalingStudyConfig) -> int:
    return run.seq_len or model_args(run.model, cfg.vocab_size).max_seq_len


def data_parallel(run: StudyRun) -> int:
    p = run.parallel
    return ParallelDims(p.dp_replicate, p.dp_shard, p.tp, p.pp, run.nproc).dp


def global_batch(run: StudyRun) -> int:
    return run.global_batch or run.micro_batch * data_parallel(run) * (run.parallel.pp_microbatches if run.parallel.pp > 1 else 1)


def train_config(run: StudyRun, cfg: ScalingStudyConfig, prefix: str, device: str) -> TrainConfig:
    model = run.model.model_copy(update={"vocab_size": cfg.vocab_size})
    return TrainConfig.model_validate(
        {
            "model": model.model_dump(exclude_unset=True) | {"vocab_size": cfg.vocab_size},
            "parallel": run.parallel.model_dump(),
            "batch": {"seq_len": seq_len(run, cfg), "global_batch": global_batch(run), "micro_batch": run.micro_batch},
            "data": {"prefixes": [prefix], "valid_fraction": 0.0, "seed": cfg.seed},
            "optim": {"warmup_steps": 0, "lr": 1e-4},
            "checkpoint": {"every": 10**9, "keep": 1},
            "steps": cfg.steps,
            "eval_every": 10**9,
            "seed": cfg.seed,
            "device": device,
            "tensorboard": False,
        }
    )
