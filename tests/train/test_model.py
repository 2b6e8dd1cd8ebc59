"""The plain model: shapes, causality, tying, presets, Megatron init, per-FQN determinism."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from selene.errors import ConfigError
from selene.model.args import PRESETS, ModelArgs
from selene.model.init import num_params
from selene.model.transformer import Transformer
from selene.train.args import model_args
from selene.train.config import ModelConfig

VOCAB = 128
DEBUG = model_args(ModelConfig(preset="debug"), VOCAB)
GPT = dataclasses.replace(DEBUG, norm="layernorm", positions="learned", mlp="gelu", bias=True)
FLAVOURS = {"llama": DEBUG, "gpt": GPT}


def build(args: ModelArgs, seed: int = 0) -> Transformer:
    """Meta → to_empty → init_weights: the way every model in selene is made."""
    with torch.device("meta"):
        model = Transformer(args)
    model.to_empty(device="cpu")
    model.init_weights(seed=seed)
    return model


def tokens(batch: int = 2, seq: int = 16, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_forward_shape_and_finite(flavour: str) -> None:
    logits = build(FLAVOURS[flavour])(tokens())
    assert logits.shape == (2, 16, VOCAB)
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_causal_masking(flavour: str) -> None:
    """Changing token 10 changes no logit before position 10, and does change position 10."""
    model = build(FLAVOURS[flavour])
    x = tokens()
    y = x.clone()
    y[:, 10] = (y[:, 10] + 1) % VOCAB
    with torch.no_grad():
        a, b = model(x), model(y)
    torch.testing.assert_close(a[:, :10], b[:, :10], rtol=0, atol=0)
    assert (a[:, 10] - b[:, 10]).abs().max() > 1e-4


def test_gelu_flavour_has_the_gpt_modules() -> None:
    model = build(GPT)
    names = {n for n, _ in model.named_parameters()}
    assert "pos_embeddings.weight" in names and "layers.0.feed_forward.w3.weight" not in names
    assert {"layers.0.attention.wq.bias", "layers.0.attention_norm.bias", "norm.bias"} <= names
    assert isinstance(model.norm, torch.nn.LayerNorm) and model.rope is None


def test_fqns_are_torchtitan_style() -> None:
    names = [n for n, _ in build(DEBUG).named_parameters()]
    assert names[0] == "tok_embeddings.weight" and names[-1] == "output.weight"
    assert "layers.3.attention.wq.weight" in names and "layers.3.feed_forward.w3.weight" in names
    assert "layers.0.ffn_norm.weight" in names and "norm.weight" in names


def test_tied_embeddings_stay_tied_through_to_empty() -> None:
    tied = build(dataclasses.replace(DEBUG, tie_embeddings=True))
    assert tied.output is not None and tied.tok_embeddings is not None
    assert tied.output.weight is tied.tok_embeddings.weight
    assert num_params(build(DEBUG)) - num_params(tied) == VOCAB * DEBUG.dim
    loss = tied(tokens()).sum()
    loss.backward()
    assert tied.tok_embeddings.weight.grad is not None  # both uses feed one gradient


def test_forward_skips_missing_stage_modules() -> None:
    """A middle pipeline stage (no embeddings, no head) maps hidden states to hidden states."""
    model = build(DEBUG)
    x = tokens()
    with torch.no_grad():
        hidden = model.tok_embeddings(x)  # type: ignore[misc]
        full = model(x)
        model.tok_embeddings = None
        head, norm = model.output, model.norm
        model.norm, model.output = None, None
        out = model(hidden)
        assert out.shape == (2, 16, DEBUG.dim)
        assert norm is not None and head is not None
        torch.testing.assert_close(head(norm(out)), full)


# vocabularies: Llama's 32000 for the Llama-style presets, GPT-2's padded 51200 for MT-NLG
@pytest.mark.parametrize(
    ("preset", "vocab", "expected", "tol"),
    [("125m", 32000, 1.2e8, 0.2), ("350m", 32000, 3.5e8, 0.2), ("1.3b", 32000, 1.3e9, 0.2),
     ("7b", 32000, 6.7e9, 0.1), ("gpt3-175b", 51200, 1.75e11, 0.02), ("mt-nlg-530b", 51200, 5.3e11, 0.05)],
)  # fmt: skip
def test_presets_build_on_meta_with_plausible_sizes(
    preset: str, vocab: int, expected: float, tol: float
) -> None:
    with torch.device("meta"):
        model = Transformer(model_args(ModelConfig(preset=preset), vocab))  # type: ignore[arg-type]
    n = num_params(model)
    assert abs(n - expected) / expected < tol, f"{preset}: {n:.3e} parameters"
    assert num_params(model, exclude_embeddings=True) < n


def test_mt_nlg_preset_is_the_paper_shape() -> None:
    a = PRESETS["mt-nlg-530b"]
    assert (a.n_layers, a.dim, a.n_heads, a.ffn_dim, a.max_seq_len) == (105, 20480, 128, 81920, 2048)
    assert (a.mlp, a.norm, a.positions) == ("gelu", "layernorm", "learned")


def test_model_args_applies_only_what_the_config_sets() -> None:
    a = model_args(ModelConfig(preset="125m", n_layers=6, vocab_size=1000), 32000)
    assert (a.n_layers, a.dim, a.vocab_size, a.norm) == (6, 768, 1000, "rmsnorm")
    assert model_args(ModelConfig(preset="125m"), 32000).vocab_size == 32000
    # init_std and dropout have defaults in ModelConfig; only an explicit value overrides the preset
    assert model_args(ModelConfig(preset="debug", init_std=0.006), VOCAB).init_std == 0.006
    assert model_args(ModelConfig(preset="mt-nlg-530b", positions="rope"), VOCAB).positions == "rope"


def test_model_args_rejects_heads_that_do_not_divide() -> None:
    with pytest.raises(ConfigError, match=r"not divisible by model\.n_heads"):
        model_args(ModelConfig(preset="debug", n_heads=5), VOCAB)


def test_megatron_init() -> None:
    """normal(0, σ) weights, σ/√(2L) for wo and w2, zero biases, unit norms."""
    args = dataclasses.replace(GPT, dim=256, ffn_dim=1024, n_heads=4, n_layers=8, init_std=0.02)
    params = dict(build(args).named_parameters())
    scaled = 0.02 / math.sqrt(2 * 8)
    for name, std in [("layers.1.attention.wq.weight", 0.02), ("layers.1.feed_forward.w1.weight", 0.02),
                      ("tok_embeddings.weight", 0.02), ("output.weight", 0.02),
                      ("layers.1.attention.wo.weight", scaled), ("layers.1.feed_forward.w2.weight", scaled)]:  # fmt: skip
        w = params[name]
        assert w.std().item() == pytest.approx(std, rel=0.03), name
        assert abs(w.mean().item()) < std / 20, name
    assert (params["layers.1.attention.wq.bias"] == 0).all()
    assert (params["layers.1.ffn_norm.weight"] == 1).all() and (params["norm.bias"] == 0).all()


def test_init_is_a_function_of_seed_and_name() -> None:
    """Same seed → same weights; another seed → others; a stage holding only some layers gets the very
    values the whole model gives those layers (what pipeline and sharded init rely on)."""
    a, b, c = build(DEBUG, seed=1), build(DEBUG, seed=1), build(DEBUG, seed=2)
    for (name, pa), pb, pc in zip(a.named_parameters(), b.parameters(), c.parameters(), strict=True):
        assert torch.equal(pa, pb), name
        if pa.std() > 0:
            assert not torch.equal(pa, pc), name
    with torch.device("meta"):
        stage = Transformer(DEBUG)
    for name in ("0", "1"):
        del stage.layers[name]
    stage.tok_embeddings = None
    stage.to_empty(device="cpu")
    stage.init_weights(seed=1)
    full = dict(a.named_parameters())
    for name, p in stage.named_parameters():
        assert torch.equal(p, full[name]), name


def test_rope_tables_are_recomputed_by_init_weights() -> None:
    model = build(DEBUG)
    assert model.rope is not None and model.rope.shape == (2, DEBUG.max_seq_len, DEBUG.head_dim // 2)
    assert model.rope[0, 0].eq(1).all() and model.rope[1, 0].eq(0).all()  # angle 0 at position 0
    assert "rope" not in model.state_dict()


def _ce_and_grads(fn, hidden: torch.Tensor, weight: torch.Tensor, bf16: bool = False):  # type: ignore[no-untyped-def]
    h, w = hidden.clone().requires_grad_(), weight.clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        loss = fn(h, w)
    (3 * loss).backward()  # a scale on the loss reaches both gradients
    return loss.detach(), h.grad, w.grad


@pytest.mark.parametrize("ignored", [0, 7])
@pytest.mark.parametrize("bf16", [False, True])
def test_linear_cross_entropy_is_the_unfused_loss(monkeypatch: pytest.MonkeyPatch, ignored: int, bf16: bool) -> None:
    """Chunked output layer + loss (logits never stored) = F.cross_entropy of the logits: loss and both
    gradients, over several chunks with a ragged last one, ignored labels, and under bf16 autocast."""
    from selene.model import loss as loss_mod
    from selene.model import loss_chunks

    monkeypatch.setitem(loss_chunks.CHUNK_BYTES, "cpu", 64 * 1000 * 4)  # 64 tokens per chunk (2·dim is 32): 5 chunks of 300
    g = torch.Generator().manual_seed(0)
    hidden, weight = torch.randn(3, 100, 16, generator=g), 0.1 * torch.randn(1000, 16, generator=g)
    labels = torch.randint(0, 1000, (3, 100), generator=g)
    labels[1, :ignored] = loss_mod.IGNORE_INDEX

    def unfused(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy((h @ w.T).float().flatten(0, 1), labels.flatten())

    want = _ce_and_grads(unfused, hidden, weight, bf16)
    got = _ce_and_grads(lambda h, w: loss_mod.linear_cross_entropy(h, w, labels), hidden, weight, bf16)
    tol = 2e-3 if bf16 else 1e-6  # bf16: the logits' gradient is rounded before each matmul
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a, b, atol=tol, rtol=tol)
    with torch.no_grad():  # evaluation: the loss alone, no gradient computed
        assert torch.allclose(loss_mod.linear_cross_entropy(hidden, weight, labels), want[0], atol=tol)


def test_linear_cross_entropy_keeps_two_chunks_of_logits_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the peak: one chunk's logits beside its log-probabilities, never a previous chunk's too (the
    planner counts two; `selene.plan.cost.Shape.fused_loss_bytes`). Allocations from the profiler."""
    from torch.profiler import ProfilerActivity, profile

    from selene.model import loss as loss_mod
    from selene.model import loss_chunks

    vocab, dim, tokens_, rows = 4000, 16, 512, 64
    monkeypatch.setitem(loss_chunks.CHUNK_BYTES, "cpu", rows * vocab * 4)  # 8 chunks
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(tokens_, dim, generator=g, requires_grad=True)
    weight = torch.randn(vocab, dim, generator=g, requires_grad=True)
    labels = torch.randint(0, vocab, (tokens_,), generator=g)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        loss_mod.linear_cross_entropy(hidden, weight, labels)
    running = high = 0
    for e in sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns()):  # type: ignore[union-attr]
        running += e.nbytes()
        high = max(high, running)
    chunk = rows * vocab * 4
    kept = 4 * (tokens_ * dim + vocab * dim)  # the gradients made in forward
    assert 1.9 * chunk < high - kept < 2.2 * chunk, (high - kept) / chunk


def test_model_loss_is_cross_entropy_of_its_logits() -> None:
    model = build(DEBUG)
    x, y = tokens(seed=1), tokens(seed=2)
    want = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    torch.testing.assert_close(model(x, y), want, atol=1e-6, rtol=0)
