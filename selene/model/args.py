"""The model's shape: `ModelArgs` and the named presets.

Free of torch, so that the planners (`selene plan`, `selene plan serve`) read the presets without
importing torch (~1.5 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from selene.errors import ConfigError


@dataclass(frozen=True)
class ModelArgs:
    """Shape and flavour of the transformer. `bias` adds biases to every Linear and LayerNorm (GPT/Megatron)."""

    n_layers: int
    dim: int
    n_heads: int
    ffn_dim: int
    vocab_size: int
    max_seq_len: int
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    positions: Literal["rope", "learned"] = "rope"
    mlp: Literal["swiglu", "gelu"] = "swiglu"
    tie_embeddings: bool = False
    dropout: float = 0.0
    init_std: float = 0.02
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    bias: bool = False
    # Key/value heads (grouped-query attention, Ainslie et al. 2023): each serves n_heads / n_kv_heads
    # query heads. None means one per query head; kept as None rather than filled in, so that
    # `dataclasses.replace(args, n_heads=...)` of a multi-head model stays multi-head.
    n_kv_heads: int | None = None

    def __post_init__(self) -> None:
        if self.dim % self.n_heads:
            raise ConfigError(f"model.dim {self.dim} is not divisible by model.n_heads {self.n_heads}")
        kv = self.n_kv_heads
        if kv is not None and (
            not isinstance(kv, int) or isinstance(kv, bool) or kv < 1 or self.n_heads % kv
        ):
            raise ConfigError(
                f"model.n_kv_heads {kv!r} must be a positive divisor of model.n_heads {self.n_heads} "
                "(each key/value head serves n_heads / n_kv_heads query heads); leave it unset for one per head"
            )
        if self.positions == "rope" and (self.dim // self.n_heads) % 2:
            raise ConfigError(
                f"RoPE needs an even head dimension, got dim/n_heads = {self.dim // self.n_heads}"
            )

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Key/value heads in effect: `n_kv_heads`, or `n_heads` when unset."""
        return self.n_kv_heads or self.n_heads


def _llama(
    n_layers: int,
    dim: int,
    n_heads: int,
    ffn_dim: int,
    max_seq_len: int,
    n_kv_heads: int | None = None,
    rope_theta: float = 10000.0,
) -> ModelArgs:
    """Llama flavour (RMSNorm, RoPE, SwiGLU, untied); the vocabulary (0 here) comes from `model_args`."""
    return ModelArgs(
        n_layers,
        dim,
        n_heads,
        ffn_dim,
        vocab_size=0,
        max_seq_len=max_seq_len,
        norm="rmsnorm",
        positions="rope",
        mlp="swiglu",
        tie_embeddings=False,
        rope_theta=rope_theta,
        n_kv_heads=n_kv_heads,
    )


def _gpt(n_layers: int, dim: int, n_heads: int, max_seq_len: int = 2048) -> ModelArgs:
    """GPT-3 / Megatron flavour: LayerNorm, learned positions, GELU MLP of 4·dim, biases, untied."""
    return ModelArgs(
        n_layers,
        dim,
        n_heads,
        4 * dim,
        vocab_size=0,
        max_seq_len=max_seq_len,
        norm="layernorm",
        positions="learned",
        mlp="gelu",
        tie_embeddings=False,
        bias=True,
    )


PRESETS: dict[str, ModelArgs] = {
    # Tiny and fast: 4 layers so that pp=2 × 2 virtual stages still has one layer per stage.
    "debug": _llama(n_layers=4, dim=64, n_heads=4, ffn_dim=192, max_seq_len=64),
    # The debug model with grouped-query attention: 8 query heads share 2 key/value heads (groups of
    # 4), so tp=2 still gives every rank a whole key/value head.
    "debug-gqa": _llama(n_layers=4, dim=64, n_heads=8, ffn_dim=192, max_seq_len=64, n_kv_heads=2),
    # GPT-3 shapes (Brown et al. 2020, table 2.1) in the Llama flavour; SwiGLU hidden ≈ 8/3·dim, multiple of 256.
    "125m": _llama(n_layers=12, dim=768, n_heads=12, ffn_dim=2048, max_seq_len=2048),
    "350m": _llama(n_layers=24, dim=1024, n_heads=16, ffn_dim=2816, max_seq_len=2048),
    "1.3b": _llama(n_layers=24, dim=2048, n_heads=16, ffn_dim=5632, max_seq_len=2048),
    # Llama 2 7B (Touvron et al. 2023).
    "7b": _llama(n_layers=32, dim=4096, n_heads=32, ffn_dim=11008, max_seq_len=4096),
    # Llama 3.2 1B (Meta 2024): 16 layers, hidden 2048, 32 query and 8 key/value heads, SwiGLU 8192,
    # RoPE theta 500,000. Context 8192 (Llama 3's): its 128K needs Llama 3.1's rope scaling, which
    # selene does not implement. Untied like the other presets (Meta ties this one) so it works with PP.
    "llama3-1b": _llama(
        n_layers=16, dim=2048, n_heads=32, ffn_dim=8192, max_seq_len=8192, n_kv_heads=8, rope_theta=500000.0
    ),
    # GPT-3 175B (Brown et al. 2020): 96 layers, hidden 12288, 96 heads, FFN 4·h, seq 2048.
    "gpt3-175b": _gpt(n_layers=96, dim=12288, n_heads=96),
    # MT-NLG 530B (Smith et al. 2022): 105 layers, hidden 20480, 128 heads, FFN 4·h, seq 2048.
    # Megatron ties the output layer to the input embedding through an all-reduce between the first and
    # last pipeline stage; we keep them separate (+1.05B parameters, 0.2%) so the preset works with PP.
    "mt-nlg-530b": _gpt(n_layers=105, dim=20480, n_heads=128),
}
