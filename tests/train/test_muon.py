"""`optim.name: muon`: the parameter split, AdamW unchanged, torch's Muon step, FSDP2/TP parity,
exact resume and the refusal of another optimizer's checkpoint."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.distributed.tensor import DTensor, distribute_tensor

from selene.errors import ConfigError
from selene.model.args import ModelArgs
from selene.model.init import canonical_fqn
from selene.model.transformer import Transformer
from selene.train.checkpoint import ModelState, OptimizerState, dcp_load
from selene.train.config import OptimConfig, ParallelConfig, TrainConfig
from selene.train.dims import ParallelDims
from selene.train.launch import launch
from selene.train.metrics import read_metrics
from selene.train.optim import ShardedMuon, build_optimizers, check_checkpoint_optimizer, set_lr, split_params
from selene.train.parallelize import build_parallel_model
from tests.distributed import Run, batches, run_world
from tests.pipeline_runs import subprocess_env, write_token_dataset

DEBUG = ModelArgs(n_layers=2, dim=32, n_heads=4, ffn_dim=64, vocab_size=64, max_seq_len=32)
MUON = {"name": "muon", "lr": 3e-3, "muon_lr": 2e-2, "weight_decay": 0.1, "muon_weight_decay": 0.05}


def plain_model(args: ModelArgs = DEBUG, seed: int = 7) -> Transformer:
    with torch.device("meta"):
        model = Transformer(args)
    model.to_empty(device="cpu")
    model.init_weights(seed=seed)
    return model


def names(model: torch.nn.Module, params: list[torch.nn.Parameter]) -> list[str]:
    by_id = {id(p): n for n, p in model.named_parameters()}
    return [by_id[id(p)] for p in params]


def train_steps(
    model: Transformer, optims: list[torch.optim.Optimizer], cfg: OptimConfig, steps: int = 3
) -> None:
    for step, (tokens, labels) in enumerate(batches(Run(DEBUG, steps=steps))):
        set_lr(optims, cfg.lr * (step + 1) / steps, cfg)
        for o in optims:
            o.zero_grad(set_to_none=True)
        model(tokens, labels).backward()
        for o in optims:
            o.step()


def test_muon_takes_the_hidden_matrices_and_adamw_the_rest() -> None:
    model = plain_model(dataclasses.replace(DEBUG, bias=True, positions="learned", norm="layernorm"))
    hidden, matrices, vectors = split_params(model)
    assert names(model, hidden) == [f"layers.{i}.{m}.weight" for i in range(2) for m in
                                    ("attention.wq", "attention.wk", "attention.wv", "attention.wo",
                                     "feed_forward.w1", "feed_forward.w2", "feed_forward.w3")]  # fmt: skip
    assert names(model, matrices) == ["tok_embeddings.weight", "pos_embeddings.weight", "output.weight"]
    assert all(p.ndim == 1 for p in vectors) and "layers.0.attention.wq.bias" in names(model, vectors)
    assert len(hidden) + len(matrices) + len(vectors) == len(list(model.parameters()))
    muon, adamw = build_optimizers([model], TrainConfig.model_validate({"optim": MUON}))
    assert isinstance(muon, ShardedMuon) and isinstance(adamw, torch.optim.AdamW)
    assert [g["weight_decay"] for g in muon.param_groups] == [0.05]
    assert [g["weight_decay"] for g in adamw.param_groups] == [0.1, 0.0]
    tied = plain_model(dataclasses.replace(DEBUG, tie_embeddings=True))
    assert names(tied, split_params(tied)[1]) == ["tok_embeddings.weight"]  # one parameter, stepped once


def test_adamw_is_the_optimizer_it_was() -> None:
    """optim.name adamw: one AdamW per part with the groups it always had, bit for bit."""
    cfg = TrainConfig.model_validate({"optim": {"lr": 3e-3}})
    ours = plain_model()
    train_steps(ours, build_optimizers([ours], cfg), cfg.optim)
    before = plain_model()
    o = cfg.optim
    groups = [{"params": [p for p in before.parameters() if p.ndim >= 2], "weight_decay": o.weight_decay},
              {"params": [p for p in before.parameters() if p.ndim < 2], "weight_decay": 0.0}]  # fmt: skip
    adamw = torch.optim.AdamW(groups, lr=o.lr, betas=(o.beta1, o.beta2), eps=o.eps, fused=True)
    train_steps(before, [adamw], cfg.optim)
    for a, b in zip(ours.parameters(), before.parameters(), strict=True):
        assert torch.equal(a, b)


def test_muon_steps_as_torch_muon_beside_adamw() -> None:
    """Our optimizers against torch.optim.Muon and AdamW built by hand on the same split: equal, and
    Muon's rate follows the schedule in the ratio muon_lr / lr."""
    cfg = TrainConfig.model_validate({"optim": MUON}).optim
    ours = plain_model()
    optims = build_optimizers([ours], TrainConfig.model_validate({"optim": MUON}))
    train_steps(ours, optims, cfg)
    assert optims[0].param_groups[0]["lr"] == pytest.approx(2e-2) and optims[1].param_groups[0][
        "lr"
    ] == pytest.approx(3e-3)
    ref = plain_model()
    hidden, matrices, vectors = split_params(ref)
    muon = torch.optim.Muon(hidden, lr=2e-2, weight_decay=0.05, adjust_lr_fn="match_rms_adamw")
    adamw = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1}, {"params": vectors, "weight_decay": 0.0}],
                              lr=3e-3, betas=(0.9, 0.95), eps=1e-8, fused=True)  # fmt: skip
    train_steps(ref, [muon, adamw], cfg)
    moved = 0.0
    for (name, a), b, c in zip(
        ours.named_parameters(), ref.parameters(), plain_model().parameters(), strict=True
    ):
        assert torch.equal(a, b), name
        moved = max(moved, float((a - c).abs().max().detach()))
    assert moved > 1e-3  # the steps did move the weights


# ------------------------------------------------------------------ FSDP2 and TP on gloo


def given_grads(step: int) -> dict[str, torch.Tensor]:
    """The full gradient of every parameter at `step` (seeded): the same on every rank and layout."""
    gen = torch.Generator().manual_seed(100 + step)
    return {n: 0.01 * torch.randn(p.shape, generator=gen) for n, p in plain_model().named_parameters()}


def muon_steps(parts: list[torch.nn.Module], steps: int = 3) -> list[torch.optim.Optimizer]:
    """`steps` steps of `optim.name: muon` on the given gradients, each rank stepping its pieces."""
    cfg = TrainConfig.model_validate({"optim": MUON})
    optims = build_optimizers(parts, cfg)
    for step in range(steps):
        set_lr(optims, cfg.optim.lr * (step + 1) / steps, cfg.optim)
        full = given_grads(step)
        for part in parts:
            for n, p in part.named_parameters():
                g = full[canonical_fqn(n)]
                p.grad = distribute_tensor(g, p.device_mesh, p.placements, src_data_rank=None) if isinstance(p, DTensor) else g  # fmt: skip
        for o in optims:
            o.step()
    buf = optims[0].state[next(iter(optims[0].state))]["momentum_buffer"]
    assert isinstance(buf, DTensor) == isinstance(
        next(parts[0].parameters()), DTensor
    )  # sharded like its parameter
    return optims


def _muon_layouts(
    rank: int, world: int, layouts: list[ParallelConfig], save_to: str
) -> list[dict[str, torch.Tensor]]:
    """Muon steps under each layout; the full weights of this rank's parts by canonical name. The
    first layout's weights and optimizer state are saved to `save_to` (DCP)."""
    out = []
    for i, pcfg in enumerate(layouts):
        dims = ParallelDims(pcfg.dp_replicate, pcfg.dp_shard, pcfg.tp, pcfg.pp, world)
        pm = build_parallel_model(DEBUG, pcfg, dims, dims.build_mesh("cpu"), torch.device("cpu"), 7)
        optims = muon_steps(pm.parts)
        if i == 0:
            dcp.save(
                {"model": ModelState(pm.parts), "optim": OptimizerState(pm.parts, optims)},
                checkpoint_id=save_to,
            )
        out.append({canonical_fqn(n): (p.full_tensor() if isinstance(p, DTensor) else p).detach().clone()
                    for part in pm.parts for n, p in part.named_parameters()})  # fmt: skip
    return out


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
@pytest.mark.timeout(300)
def test_muon_under_fsdp2_tp_and_pp_is_the_one_process_step(tmp_path: Path) -> None:
    """Given the same gradients, FSDP2 (rows sharded), TP (columns and rows) and PP step every weight
    exactly as one process does: Newton-Schulz sees each matrix whole. (Orthogonalising each shard on
    its own would give another update.) The FSDP2 run's checkpoint loads into one process with the
    one-process momentum and moments."""
    layouts = [ParallelConfig(dp_shard=2), ParallelConfig(dp_shard=1, tp=2), ParallelConfig(dp_shard=1, pp=2)]
    ranks = run_world(2, _muon_layouts, layouts, str(tmp_path / "fsdp"))
    got = [ranks[0][i] | ranks[1][i] for i in range(len(layouts))]  # pipeline stages: each rank its own
    ref = plain_model()
    start = {n: p.detach().clone() for n, p in ref.named_parameters()}
    ref_optims = muon_steps([ref])
    for layout, weights in zip(layouts, got, strict=True):
        for name, p in ref.named_parameters():
            assert not torch.equal(p, start[name]), name
            assert torch.equal(weights[name], p.detach()), (layout, name)
    loaded = plain_model(seed=8)
    optims = build_optimizers([loaded], TrainConfig.model_validate({"optim": MUON}))
    dcp_load(
        {"model": ModelState([loaded]), "optim": OptimizerState([loaded], optims)}, str(tmp_path / "fsdp")
    )
    for (name, p), q in zip(ref.named_parameters(), loaded.parameters(), strict=True):
        assert torch.equal(p, q), name
        mine = next(o for o in optims if q in o.state)
        theirs = next(o for o in ref_optims if p in o.state)
        assert mine.state[q].keys() == theirs.state[p].keys()
        for key, value in theirs.state[p].items():
            assert torch.equal(mine.state[q][key], value), (name, key)


# ------------------------------------------------------------------ resume and refusal through the command


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("tokens"))


def config(
    prefix: str, out: Path, steps: int, optim: dict[str, object], dp_shard: int = 1
) -> dict[str, object]:
    return {
        "model": {"preset": "debug"}, "parallel": {"dp_shard": dp_shard}, "steps": steps,
        "batch": {"seq_len": 32, "global_batch": 4, "micro_batch": 4 // dp_shard},
        "optim": {"warmup_steps": 2, **optim}, "data": {"prefixes": [prefix]},
        "eval_every": 100, "eval_batches": 1, "checkpoint": {"every": 2, "keep": 5},
        "tensorboard": False, "out": str(out),
    }  # fmt: skip


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_muon_resumes_exactly(tokens: str, tmp_path: Path) -> None:
    """A Muon run under FSDP2 (two ranks, momentum sharded) resumed from its step-2 checkpoint logs the
    uninterrupted run's losses and saves the same weights and optimizer state."""
    straight = tmp_path / "straight"
    launch(TrainConfig.model_validate(config(tokens, straight, 4, MUON, dp_shard=2)), str(straight), 2)
    resumed = tmp_path / "resumed"
    shutil.copytree(straight, resumed)
    shutil.rmtree(resumed / "checkpoints" / "step-000004")
    launch(TrainConfig.model_validate(config(tokens, resumed, 4, MUON, dp_shard=2)), str(resumed), 2)
    ref = [r["loss"] for r in read_metrics(str(straight / "metrics.jsonl"))]
    got = [r["loss"] for r in read_metrics(str(resumed / "metrics.jsonl"))]
    assert len(ref) == 4 and got == ref and ref[-1] < ref[0]
    final = []
    for run in (straight, resumed):  # weights and both optimizers' state, as saved
        dcp_to_torch_save(run / "checkpoints" / "step-000004", tmp_path / f"{run.name}.pt")
        saved = torch.load(tmp_path / f"{run.name}.pt", weights_only=False)
        final.append({f"{top}.{k}": v for top in ("model", "optim") for k, v in saved[top].items()})
    assert "optim.state.layers.0.attention.wq.weight.momentum_buffer" in final[0]
    assert "optim.state.output.weight.exp_avg" in final[0]
    assert final[0].keys() == final[1].keys()
    for k, v in final[0].items():
        assert torch.equal(v, final[1][k]) if isinstance(v, torch.Tensor) else v == final[1][k], k


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_adamw_checkpoint_into_a_muon_run_is_refused(tokens: str, tmp_path: Path) -> None:
    """`selene train` with optim.name muon, loading an AdamW checkpoint: one line, exit 2, nothing written."""
    first = tmp_path / "adamw"
    launch(TrainConfig.model_validate(config(tokens, first, 2, {"lr": 3e-3})), str(first), 1)
    ckpt = first / "checkpoints" / "step-000002"
    out = tmp_path / "muon"
    cfg = config(tokens, out, 4, MUON) | {"checkpoint": {"load": str(ckpt)}}
    (tmp_path / "muon.yaml").write_text(json.dumps(cfg))  # JSON is YAML
    proc = subprocess.run([sys.executable, "-m", "selene.cli", "train", str(tmp_path / "muon.yaml")], cwd=tmp_path,
                          env=subprocess_env(tmp_path, SELENE_PREFECT="off"), capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"checkpoint {ckpt} was trained with optim.name adamw, this run has optim.name muon" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    meta = json.loads((ckpt / "meta.json").read_text())
    check_checkpoint_optimizer(meta, str(ckpt), OptimConfig())
    del meta["config"]["optim"]["name"]  # a checkpoint older than the field was AdamW's
    with pytest.raises(ConfigError, match=r"optim\.name adamw"):
        check_checkpoint_optimizer(meta, str(ckpt), OptimConfig(name="muon"))
