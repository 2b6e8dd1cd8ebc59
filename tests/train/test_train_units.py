"""Training pieces that need no process group: schedules, FLOPs, config loading, metrics."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from selene.charts import loss_curve
from selene.errors import ConfigError
from selene.train.config import BatchConfig, OptimConfig
from selene.train.flops import flops_per_token
from selene.train.metrics import MetricsLogger, read_metrics
from selene.train.schedule import batch_at, lr_at, samples_needed


def test_lr_warmup_then_cosine_to_ten_percent() -> None:
    cfg = OptimConfig(lr=1.0, warmup_steps=10, min_lr_ratio=0.1)
    lrs = [lr_at(s, cfg, 110) for s in range(120)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in itertools.pairwise(lrs[10:111]))  # decays monotonically
    assert lrs[60] == pytest.approx(0.55) and lrs[110] == pytest.approx(0.1) and lrs[119] == pytest.approx(0.1)


def test_mt_nlg_batch_ramp() -> None:
    """32 → 1920 sequences in steps of 32 over the first 12B tokens (seq 2048)."""
    cfg = BatchConfig(seq_len=2048, global_batch=1920, ramp_start=32, ramp_increment=32, ramp_tokens=12_000_000_000)
    assert batch_at(0, cfg) == 32
    per_increment = 12e9 / ((1920 - 32) // 32)
    assert batch_at(int(per_increment) - 1, cfg) == 32 and batch_at(int(per_increment) + 1, cfg) == 64
    assert batch_at(6_000_000_000, cfg) == 32 + 32 * int(6e9 // per_increment)
    assert batch_at(12_000_000_000, cfg) == 1920 == batch_at(10**13, cfg)
    flat = BatchConfig(global_batch=8)
    assert batch_at(0, flat) == 8 and samples_needed(5, flat, 64) == 40


def test_flops_match_megatron_formula_for_gpt_shapes() -> None:
    """72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per iteration without recomputation (Narayanan et al.
    2021 give 96·…·(1 + s/(6h) + V/(16·l·h)) with a recompute pass that skips the logits)."""
    args = SimpleNamespace(n_layers=105, dim=20480, ffn_dim=4 * 20480, vocab_size=51200, mlp="gelu")
    s, layers, h, v = 2048, 105, 20480, 51200
    megatron = 72 * s * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h)) / s
    assert flops_per_token(args, s) == pytest.approx(megatron, rel=1e-9)


def test_metrics_jsonl_truncate_and_curve(tmp_path: Path) -> None:
    log = MetricsLogger(str(tmp_path), tensorboard=True, enabled=True)
    for step in range(1, 6):
        log.log({"step": step, "loss": 5.0 / step, "lr": 1e-3})
    log.log({"step": 5, "loss": 1.0, "val_loss": 1.2})
    log.close()
    assert [r["step"] for r in read_metrics(log.path)] == [1, 2, 3, 4, 5, 5]
    log.truncate_after(3)
    assert [r["step"] for r in read_metrics(log.path)] == [1, 2, 3]
    assert list((tmp_path / "tensorboard").iterdir())
    svg = loss_curve([json.loads(x) for x in Path(log.path).read_text().splitlines()])
    assert svg.startswith("<svg") and "polyline" in svg


def test_train_config_overrides_and_layout_check(tmp_path: Path) -> None:
    from selene.train.launch import check_layout, load_train_config

    p = tmp_path / "p.yaml"
    p.write_text("run_dir: r\ntrain:\n  steps: 3\n  parallel: {tp: 2}\n")
    cfg, out = load_train_config(str(p), ["parallel.pp=2", "batch.seq_len=64", "model.preset=debug"])
    assert (cfg.parallel.tp, cfg.parallel.pp, cfg.batch.seq_len, out) == (2, 2, 64, "r/train")
    assert cfg.data.prefixes == ["r/tokenize/data_text_document"]
    with pytest.raises(ConfigError, match=r"pp 2 × dp_replicate 1 × dp_shard .* × tp 2 .* 6"):
        check_layout(cfg.model_copy(update={"parallel": cfg.parallel.model_copy(update={"dp_shard": 2})}), 6)
    with pytest.raises(ConfigError, match=r"parallel\.tpp"):
        load_train_config(str(p), ["parallel.tpp=2"])
    with pytest.raises(ConfigError, match="expected key=value"):
        load_train_config(str(p), ["parallel.tp"])


def test_adamw_implementations_agree_and_fused_is_the_default() -> None:
    """`optim.implementation`: fused (default), foreach and for-loop give the same steps (to rounding)."""
    import torch

    from selene.train.config import TrainConfig
    from selene.train.loop import build_optimizers

    results = {}
    for impl in ("fused", "foreach", "for-loop"):
        cfg = TrainConfig.model_validate({"optim": {"implementation": impl}})
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.LayerNorm(8))
        (opt,) = build_optimizers([model], cfg)
        assert opt.defaults["fused"] is (impl == "fused") and opt.defaults["foreach"] is (impl == "foreach")
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(4, 8, generator=torch.Generator().manual_seed(step))).square().sum().backward()
            opt.step()
        results[impl] = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert TrainConfig().optim.implementation == "fused"
    torch.testing.assert_close(results["foreach"], results["fused"], atol=1e-6, rtol=0)
    torch.testing.assert_close(results["for-loop"], results["fused"], atol=1e-6, rtol=0)


def test_ranks_share_the_cores_unless_omp_num_threads_says(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    from selene.train import launch

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert [launch.threads_per_rank(n) for n in (1, 2, 8, 32)] == [16, 8, 2, 1]
    seen: dict[str, str] = {}

    def fake_agent(cmd: list[str], env: dict[str, str], stop: object) -> int:
        seen.update(env)
        return 0

    monkeypatch.setattr(launch, "preflight", lambda *a: None)
    monkeypatch.setattr(launch, "run_agent", fake_agent)
    cfg = launch.TrainConfig.model_validate({"model": {"preset": "debug"}, "data": {"prefixes": ["x"]}})
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    launch.launch(cfg, str(tmp_path), 2)
    assert seen["OMP_NUM_THREADS"] == "8"
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the user's setting wins
    launch.launch(cfg, str(tmp_path), 2)
    assert seen["OMP_NUM_THREADS"] == "3"
    seen.clear()
    monkeypatch.setenv("SELENE_HOST_ALLOCATOR", "jemalloc")  # refused once, before any rank starts
    with pytest.raises(ConfigError, match="SELENE_HOST_ALLOCATOR='jemalloc'"):
        launch.launch(cfg, str(tmp_path), 2)
    assert not seen
