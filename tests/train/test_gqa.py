"""Grouped-query attention end to end: the model against transformers' Llama (one process and TP=2),
cached generation, the Hugging Face export, the checks of a bad `n_kv_heads`, and the planners.

The small GQA model is the `debug-gqa` preset: 8 query heads on 2 key/value heads (groups of 4).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from selene.errors import ConfigError
from selene.model.args import PRESETS, ModelArgs
from selene.model.init import num_params
from selene.model.transformer import Transformer
from selene.train.args import model_args
from selene.train.config import ModelConfig, ParallelConfig

ROOT = Path(__file__).resolve().parents[2]
VOCAB = 128  # divisible by tp 2 (the output layer is vocabulary-parallel)
SEQ = 32
SEED = 5
GQA = dataclasses.replace(PRESETS["debug-gqa"], vocab_size=VOCAB)
TOL = 1e-6


def sharpen(model: torch.nn.Module) -> None:
    """Double every matrix: the initial 0.02 std makes near-uniform logits, which would let a wrong
    attention pass a tolerance unnoticed."""
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 2:
                p.mul_(2.0)


def gqa_model(args: ModelArgs = GQA) -> Transformer:
    model = Transformer(args)
    model.init_weights(seed=SEED)
    sharpen(model)
    return model.eval()


def tokens(batch: int = 2, seq: int = SEQ + 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(0))


def hf_llama(state: dict[str, torch.Tensor], args: ModelArgs) -> Any:
    from transformers import LlamaForCausalLM

    from selene.eval.export import hf_config

    hf = LlamaForCausalLM(hf_config(args)).eval()
    hf.load_state_dict(state)
    return hf


def hf_logits_and_loss(hf: Any, x: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Logits of x[:, :-1] and the loss of predicting x[:, 1:] (transformers shifts the labels itself)."""
    with torch.no_grad():
        out = hf(input_ids=x, labels=x)
    return out.logits[:, :-1], float(out.loss)


# ------------------------------------------------------------------------------ the model itself


def test_key_value_projections_have_the_kv_heads() -> None:
    model = gqa_model()
    attn = model.layers["0"].attention
    assert GQA.kv_heads == 2 and GQA.head_dim == 8
    assert tuple(attn.wq.weight.shape) == (64, 64) and tuple(attn.wo.weight.shape) == (64, 64)
    assert tuple(attn.wk.weight.shape) == tuple(attn.wv.weight.shape) == (2 * 8, 64)
    # multi-head stays as it was: the default is one key/value head per query head
    mha = model_args(ModelConfig(preset="debug"), VOCAB)
    assert mha.n_kv_heads is None and mha.kv_heads == mha.n_heads
    assert tuple(Transformer(mha).layers["0"].attention.wk.weight.shape) == (64, 64)


def test_logits_and_loss_equal_transformers_llama() -> None:
    from selene.eval.export import hf_state_dict

    model = gqa_model()
    hf = hf_llama(hf_state_dict(model, GQA), GQA)
    x = tokens()
    want_logits, want_loss = hf_logits_and_loss(hf, x)
    with torch.no_grad():
        logits = model(x[:, :-1])
        loss = float(model(x[:, :-1], x[:, 1:]))
    assert (logits - want_logits).abs().max() < TOL
    assert abs(loss - want_loss) < TOL
    # the test can fail: key/value heads handed to the wrong query groups change the logits
    state = hf_state_dict(model, GQA)
    for name in ("k_proj", "v_proj"):
        w = state[f"model.layers.0.self_attn.{name}.weight"]
        state[f"model.layers.0.self_attn.{name}.weight"] = torch.cat([w[8:], w[:8]])
    swapped, _ = hf_logits_and_loss(hf_llama(state, GQA), x)
    assert (swapped - want_logits).abs().max() > 1e-2


def test_parameters_and_flops_count_the_narrow_projections() -> None:
    from selene.plan.cost import Shape
    from selene.train.flops import flops_per_token, matmul_params

    for args in (GQA, dataclasses.replace(PRESETS["llama3-1b"], vocab_size=128256)):
        with torch.device("meta"):
            model = Transformer(args)
        linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
        assert matmul_params(args) == linear
        shape = Shape.from_model_args(args, args.vocab_size)
        assert shape.kv_heads == args.kv_heads
        assert shape.layers * shape.layer_matmul_params + shape.hidden * shape.vocab == linear
        # the planner counts a bias for every norm; RMSNorm has none
        assert shape.params - (2 * shape.layers + 1) * shape.hidden == num_params(model)
        assert shape.model_flops_per_token() == pytest.approx(
            flops_per_token(args, args.max_seq_len), rel=1e-12
        )
    # Llama 3.2 1B's shape, untied (its tied count is 1.236B: + 128256 × 2048 for the output layer)
    assert num_params(model) == 1_498_482_688


# --------------------------------------------------------------------- tensor parallel, 2 ranks


def _tp2_rank(rank: int, world_size: int, x: torch.Tensor) -> dict[str, Any]:
    """On one rank of TP=2: logits, loss and the gathered export of the sharded GQA model, plus the
    5-step training run of tests/distributed.py under the same layout."""
    from selene.eval.export import hf_state_dict
    from selene.train.dims import ParallelDims
    from selene.train.parallelize import build_parallel_model
    from tests.distributed import Run, train_layout

    pcfg = ParallelConfig(dp_shard=1, tp=2)
    dims = ParallelDims(1, 1, 2, 1, world_size)
    pm = build_parallel_model(GQA, pcfg, dims, dims.build_mesh("cpu"), torch.device("cpu"), SEED)
    model = pm.parts[0]
    sharpen(model)
    model.eval()
    wk = model.layers["0"].attention.wk.weight
    with torch.no_grad():
        logits = model(x[:, :-1]).full_tensor()
    loss = pm.evaluate(x[:, :-1], x[:, 1:])
    state = hf_state_dict(model, GQA)  # gathers every shard: collective, so on every rank
    trained = train_layout(rank, world_size, Run(GQA), pcfg)
    return {"local_wk": tuple(wk.to_local().shape), "logits": logits, "loss": loss, "state": state,
            "trained": trained}  # fmt: skip


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
@pytest.mark.timeout(600)
def test_tp2_equals_transformers_llama_and_trains_like_one_process() -> None:
    from selene.eval.export import hf_state_dict
    from tests.distributed import Run, reference, run_world

    x = tokens()
    results = run_world(2, _tp2_rank, x)
    first = results[0]
    # each rank holds one of the two key/value heads (8 rows of wk), beside its 4 query heads
    assert all(r["local_wk"] == (8, 64) for r in results)
    hf = hf_llama(first["state"], GQA)
    want_logits, want_loss = hf_logits_and_loss(hf, x)
    # sharded init and the same sharpening give the single process's weights, gathered
    single = gqa_model()
    expected = hf_state_dict(single, GQA)
    assert set(first["state"]) == set(expected)
    assert all(torch.equal(first["state"][k], v) for k, v in expected.items())
    for r in results:
        assert (r["logits"] - want_logits).abs().max() < TOL
        assert abs(r["loss"] - want_loss) < TOL
    with torch.no_grad():
        assert (single(x[:, :-1]) - want_logits).abs().max() < TOL
    ref = reference(Run(GQA))
    got = first["trained"]
    assert got["init"] == [0.0]
    assert results[1]["trained"]["loss"] == got["loss"]
    for key in ("loss", "norm", "eval"):
        diff = max(abs(a - b) for a, b in zip(got[key], ref[key], strict=True))
        assert diff < 1e-4, f"max |{key} diff| {diff:.2e}; got {got[key]}, want {ref[key]}"


def test_tp_must_divide_the_kv_heads() -> None:
    from selene.train.config import TrainConfig
    from selene.train.dims import ParallelDims
    from selene.train.launch import check_layout as preflight_layout
    from selene.train.parallelize import check_layout

    # 8 query heads divide by tp 4, the 2 key/value heads do not
    with pytest.raises(ConfigError, match=r"model\.n_kv_heads 2 is not divisible by parallel\.tp 4"):
        check_layout(GQA, ParallelConfig(dp_shard=1, tp=4), ParallelDims(1, 1, 4, 1, 4))
    cfg = TrainConfig.model_validate(
        {"model": {"preset": "debug-gqa"}, "parallel": {"tp": 4, "dp_shard": 1}, "batch": {"global_batch": 4}}
    )
    with pytest.raises(ConfigError, match=r"model\.n_kv_heads 2 is not divisible by parallel\.tp 4"):
        preflight_layout(cfg, 4)
    assert preflight_layout(cfg.model_copy(update={"parallel": ParallelConfig(tp=2, dp_shard=1)}), 2).tp == 2


# ------------------------------------------------------------------------------- configuration


def test_a_bad_n_kv_heads_is_a_config_error_naming_the_field() -> None:
    with pytest.raises(
        ConfigError, match=r"model\.n_kv_heads 3 must be a positive divisor of model\.n_heads 4"
    ):
        model_args(ModelConfig(preset="debug", n_kv_heads=3), VOCAB)
    # the preset's 2 key/value heads cannot serve one query head
    with pytest.raises(
        ConfigError, match=r"model\.n_kv_heads 2 must be a positive divisor of model\.n_heads 1"
    ):
        model_args(ModelConfig(preset="debug-gqa", n_heads=1), VOCAB)
    with pytest.raises(ConfigError, match=r"model\.n_kv_heads 0"):
        ModelArgs(2, 64, 4, 128, VOCAB, 32, n_kv_heads=0)


def test_a_bad_n_kv_heads_in_a_config_file_names_the_field(tmp_path: Path) -> None:
    from selene.train.launch import load_train_config

    path = tmp_path / "train.yaml"
    path.write_text("out: x\nmodel: {preset: debug, n_kv_heads: 0}\n")
    with pytest.raises(ConfigError, match=r"n_kv_heads"):
        load_train_config(str(path), [])


def test_config_overrides_and_presets() -> None:
    assert model_args(ModelConfig(preset="debug", n_kv_heads=2), VOCAB).kv_heads == 2
    assert model_args(ModelConfig(preset="debug-gqa"), VOCAB).n_kv_heads == 2
    # a multi-head preset given more query heads stays multi-head
    wider = model_args(ModelConfig(preset="debug", n_heads=8), VOCAB)
    assert wider.n_kv_heads is None and wider.kv_heads == 8
    llama3 = PRESETS["llama3-1b"]
    assert (llama3.n_layers, llama3.dim, llama3.n_heads, llama3.kv_heads, llama3.ffn_dim) == (
        16,
        2048,
        32,
        8,
        8192,
    )
    assert llama3.rope_theta == 500000.0 and llama3.vocab_size == 0  # the vocabulary comes from the data


# --------------------------------------------------------------------------- cached generation


def test_cached_logits_equal_the_full_forward() -> None:
    from selene.model.cache import KVCache

    model = gqa_model()
    x = torch.randint(0, VOCAB, (2, 30), generator=torch.Generator().manual_seed(1))
    cache = KVCache()
    with torch.no_grad():
        full = model(x)
        pieces = [model(x[:, lo:hi], cache=cache) for lo, hi in [(0, 7), (7, 8), (8, 11), (11, 30)]]
    assert tuple(cache.keys[0].shape[:2]) == (2, GQA.kv_heads)  # the cache keeps key/value heads only
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=0)


def _greedy_by_full_forward(model: Transformer, prompt: list[int], n: int) -> list[int]:
    ctx, out = list(prompt), []
    for _ in range(n):
        with torch.no_grad():
            logits = model(torch.tensor([ctx[-model.args.max_seq_len :]]))
        out.append(int(logits[0, -1].argmax()))
        ctx.append(out[-1])
    return out


PROMPTS = [[5, 17, 42, 8], [3], list(range(2, 22)), [], [9, 9, 9, 9, 9, 9, 9]]


def test_generate_and_generate_batch_equal_the_full_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    from selene.eval import decode_graph
    from selene.eval import generate as gen_module
    from selene.eval.generate import generate, generate_batch

    model = gqa_model(dataclasses.replace(GQA, max_seq_len=SEQ))
    args = model.args
    want = [_greedy_by_full_forward(model, p or [1], 12) for p in PROMPTS]
    assert [generate(model, args, p, 12, temperature=0, stop_ids=()) for p in PROMPTS] == want
    eager = generate_batch(model, args, PROMPTS, 12, temperature=0, stop_ids=())
    assert not eager.graph and eager.tokens == want
    # the fixed-shape decode step CUDA replays as a graph, run eagerly on the CPU
    monkeypatch.setattr(gen_module, "graphs_enabled", lambda device: True)
    stepped = generate_batch(model, args, PROMPTS, 12, temperature=0, stop_ids=())
    assert stepped.graph and stepped.tokens == want
    (dec,) = decode_graph._DECODERS[model].values()
    assert tuple(dec.cache.keys[0].shape[:2]) == (len(PROMPTS), GQA.kv_heads)
    # past the window (20 + 30 > 32 positions) the eager path slides it
    long = generate_batch(model, args, PROMPTS, 30, temperature=0, stop_ids=())
    assert not long.graph and long.tokens == [_greedy_by_full_forward(model, p or [1], 30) for p in PROMPTS]


@torch.no_grad()
def test_graph_decoder_logits_equal_the_padded_forward() -> None:
    from selene.eval.decode_graph import GraphDecoder
    from selene.model.cache import KVCache

    model = gqa_model()
    rows = [[5, 6, 7, 8, 9], [11, 12]]
    x, pads = torch.tensor([rows[0], [0, 0, 0, *rows[1]]]), torch.tensor([0, 3])
    cache = KVCache(pads=pads)
    model(x, cache=cache)
    dec = GraphDecoder(model, batch=2, capacity=16, capture=False)
    assert tuple(dec.cache.keys[0].shape) == (2, GQA.kv_heads, 16, GQA.head_dim)
    dec.load(cache.keys, cache.values, 5, pads)
    for new in ([20, 30], [21, 31], [22, 32]):
        step = torch.tensor(new)[:, None]
        want = model(step, cache=cache, last_only=True)[:, -1]
        torch.testing.assert_close(dec.step(step), want, atol=1e-5, rtol=0)


# ------------------------------------------------------------ a trained checkpoint: export, plans


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.tiny_checkpoint import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("gqa_ckpt"), preset="debug-gqa")


def test_export_round_trip(ckpt: str, tmp_path: Path) -> None:
    from transformers import LlamaForCausalLM

    from selene.eval.checkpoint_io import load_model
    from selene.eval.export import export_hf

    out = tmp_path / "hf"
    export_hf(ckpt, str(out))
    config = json.loads((out / "config.json").read_text())
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (8, 2)
    ours = load_model(ckpt)
    assert ours.args.n_kv_heads == 2
    hf = LlamaForCausalLM.from_pretrained(str(out)).eval()
    x = torch.randint(
        0, ours.args.vocab_size, (2, ours.args.max_seq_len), generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        torch.testing.assert_close(hf(input_ids=x).logits, ours.model(x), atol=1e-5, rtol=0)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "selene.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_serve_planner_reads_the_kv_heads_of_a_checkpoint(ckpt: str) -> None:
    from selene.eval.checkpoint_io import load_model

    proc = _cli("plan", "serve", "--checkpoint", ckpt, "--gpus", "1", "--gpu", "a100-80g", "--json")
    assert proc.returncode == 0, proc.stderr
    model = json.loads(proc.stdout)["model"]
    assert (model["heads"], model["kv_heads"], model["n_kv_heads"], model["head_dim"]) == (8, 2, 2, 8)
    # 2 (K, V) × 4 layers × 2 kv heads × head_dim 8 × 2 bytes (bf16)
    assert model["kv_bytes_per_token"] == 2 * 4 * 2 * 8 * 2
    loaded = load_model(ckpt)
    assert model["params"] == pytest.approx(num_params(loaded.model), rel=2e-2)  # + norm biases it counts
    wider = _cli("plan", "serve", "--checkpoint", ckpt, "--kv-heads", "4", "--gpus", "1", "--json")
    assert wider.returncode == 0, wider.stderr
    assert json.loads(wider.stdout)["model"]["params"] - model["params"] == 4 * 2 * 64 * 8 * 2


def test_training_planner_reads_the_kv_heads(tmp_path: Path) -> None:
    proc = _cli(
        "plan", "--model", "llama3-1b", "--vocab", "128256", "--gpus", "8", "--tokens", "1B", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    model = json.loads(proc.stdout)["model"]
    assert (model["heads"], model["n_kv_heads"]) == (32, 8)
    assert model["params"] == pytest.approx(1_498_482_688, rel=1e-3)
    config = tmp_path / "train.yaml"
    config.write_text(
        "out: x\nmodel: {preset: debug, n_kv_heads: 2, vocab_size: 512}\nparallel: {dp_shard: 1}\n"
    )
    proc = _cli("plan", str(config), "--json", "--gpus", "1")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"]["n_kv_heads"] == 2
    text = _cli(
        "plan",
        "--layers",
        "4",
        "--hidden",
        "64",
        "--heads",
        "8",
        "--kv-heads",
        "3",
        "--gpus",
        "1",
        "--tokens",
        "1M",
    )
    assert text.returncode != 0 and "--kv-heads 3 must divide the 8 heads" in text.stderr
