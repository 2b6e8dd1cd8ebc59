"""Decoder-only transformer in plain PyTorch (torchtitan's Llama layout), no parallelism inside.

Parallelism is applied from outside (`selene.train.parallelize`), so the model only keeps three
accommodations, all layout-agnostic:
- the layers live in an `nn.ModuleDict` keyed "0", "1", ... so a pipeline stage can delete the layers
  it does not own and the survivors keep their fully-qualified names (FQNs);
- `forward` skips `tok_embeddings` / `pos_embeddings` / `norm` / `output` when a stage set them to None;
- attention derives its head count from the (possibly tensor-parallel, local) projection shape.

Checkpoints are keyed by FQN (`layers.3.attention.wq.weight`), so they load under any layout.

Initialisation follows Megatron/GPT-3: normal(0, init_std) for every weight, the two output
projections of each block (`wo`, `w2`) scaled by 1/sqrt(2·n_layers), zeros for biases, ones for norms.
Each parameter's initial value is a pure function of (seed, FQN, shape) — see `initial_value` — so a
pipeline stage that owns only layers 2–3, or a sharded copy, gets exactly the values the whole
single-process model gets. The model is built on the meta device and materialised with
`to_empty(device=...)` then `init_weights(...)`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.tensor import DTensor

from selene.train.args import PRESETS, ModelArgs, model_args  # noqa: F401  (re-exported: the model's shape)
from selene.train.loss import cross_entropy, linear_cross_entropy

# ----------------------------------------------------------------------------------------- modules


def rope_tables(head_dim: int, max_seq_len: int, theta: float, device: torch.device | None) -> torch.Tensor:
    """cos and sin of the rotary angles, stacked: (2, max_seq_len, head_dim // 2), float32.

    Real tables rather than torchtitan's complex `freqs_cis`, so the buffer survives `to_empty`,
    deep copies and any dtype cast without a complex dtype in sight.
    """
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(max_seq_len, device=device, dtype=torch.float32), freqs)
    return torch.stack([angles.cos(), angles.sin()])


def apply_rope(x: torch.Tensor, tables: torch.Tensor) -> torch.Tensor:
    """Rotate consecutive pairs of x (batch, seq, heads, head_dim) — Llama's (interleaved) convention."""
    seq = x.shape[1]
    return rotate(x, tables[0, :seq, None, :], tables[1, :seq, None, :])


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """The rotation itself, in fp32, by angles whose cos and sin broadcast over x's (..., head_dim // 2)
    pairs: `apply_rope` gives one position per token, generation one per (row, token)."""
    pairs = x.float().unflatten(-1, (-1, 2))
    even, odd = pairs[..., 0], pairs[..., 1]
    out = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return out.flatten(-2).type_as(x)


class ScaledDotProductAttention(nn.Module):
    """The attention core (softmax(QKᵀ/√d)·V, causal) as its own parameterless module.

    A module boundary lets selective activation checkpointing recompute exactly this part
    (Korthikanti et al. 2022) by wrapping it, without touching any parameter name.
    """

    def __init__(self, dropout: float) -> None:
        super().__init__()
        self.dropout = dropout

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        p = self.dropout if self.training else 0.0
        return attend(q, k, v, dropout_p=p, is_causal=True)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
) -> torch.Tensor:
    """`F.scaled_dot_product_attention` over q (batch, heads, seq, head_dim) and k, v with as many or
    fewer heads (grouped-query attention: key/value head j serves query heads j·g .. j·g + g − 1).

    Fewer key/value heads go to SDPA as they are, with `enable_gqa`, rather than repeated into full
    copies here: a kernel that supports groups (FlashAttention on CUDA) then reads each key/value head
    once for its group and keeps the narrow tensors for backward; the others repeat them internally.
    Multi-head attention calls SDPA exactly as before.
    """
    if k.shape[1] != q.shape[1]:
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, enable_gqa=True
        )
    return F.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal
    )


class Attention(nn.Module):
    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.head_dim = args.head_dim
        self.rope = args.positions == "rope"
        kv_dim = args.kv_heads * args.head_dim
        self.wq = nn.Linear(args.dim, args.dim, bias=args.bias)
        self.wk = nn.Linear(args.dim, kv_dim, bias=args.bias)
        self.wv = nn.Linear(args.dim, kv_dim, bias=args.bias)
        self.wo = nn.Linear(args.dim, args.dim, bias=args.bias)
        self.sdpa = ScaledDotProductAttention(args.dropout)

    def forward(self, x: torch.Tensor, rope: torch.Tensor | None) -> torch.Tensor:
        bs, seq, _ = x.shape
        # -1 heads: under tensor parallelism wq holds only this rank's heads (wk and wv this rank's
        # key/value heads, the ones its query heads are grouped on).
        q = self.wq(x).view(bs, seq, -1, self.head_dim)
        k = self.wk(x).view(bs, seq, -1, self.head_dim)
        v = self.wv(x).view(bs, seq, -1, self.head_dim)
        if self.rope and rope is not None:
            q, k = apply_rope(q, rope), apply_rope(k, rope)
        out = self.sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return self.wo(out.transpose(1, 2).reshape(bs, seq, -1))


class FeedForward(nn.Module):
    """SwiGLU (w2(silu(w1·x) ⊙ w3·x), Llama) or GELU (w2(gelu(w1·x)), GPT/Megatron)."""

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.swiglu = args.mlp == "swiglu"
        self.w1 = nn.Linear(args.dim, args.ffn_dim, bias=args.bias)
        self.w2 = nn.Linear(args.ffn_dim, args.dim, bias=args.bias)
        self.w3 = nn.Linear(args.dim, args.ffn_dim, bias=args.bias) if self.swiglu else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.w3 is not None:
            return self.w2(F.silu(self.w1(x)) * self.w3(x))
        return self.w2(F.gelu(self.w1(x)))


def _norm(args: ModelArgs) -> nn.Module:
    if args.norm == "rmsnorm":
        return nn.RMSNorm(args.dim, eps=args.norm_eps)
    return nn.LayerNorm(args.dim, eps=args.norm_eps, bias=args.bias)


class TransformerBlock(nn.Module):
    """Pre-norm block: h = x + attn(norm(x)); out = h + ffn(norm(h))."""

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.attention_norm = _norm(args)
        self.attention = Attention(args)
        self.ffn_norm = _norm(args)
        self.feed_forward = FeedForward(args)
        self.dropout = nn.Dropout(args.dropout)

    def forward(self, x: torch.Tensor, rope: torch.Tensor | None) -> torch.Tensor:
        h = x + self.dropout(self.attention(self.attention_norm(x), rope))
        return h + self.dropout(self.feed_forward(self.ffn_norm(h)))


class Transformer(nn.Module):
    """Token ids (batch, seq) → logits (batch, seq, vocab); a pipeline stage maps hidden → hidden/logits."""

    rope: torch.Tensor | None  # a buffer: cos/sin tables with rotary positions, else None

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.args = args
        self.tok_embeddings: nn.Embedding | None = nn.Embedding(args.vocab_size, args.dim)
        self.pos_embeddings: nn.Embedding | None = (
            nn.Embedding(args.max_seq_len, args.dim) if args.positions == "learned" else None
        )
        self.emb_dropout = nn.Dropout(args.dropout)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(args) for i in range(args.n_layers)})
        self.norm: nn.Module | None = _norm(args)
        self.output: nn.Linear | None = nn.Linear(args.dim, args.vocab_size, bias=False)
        self._tie()
        # Not persistent: recomputed by init_weights, never part of a checkpoint.
        self.register_buffer(
            "rope",
            rope_tables(args.head_dim, args.max_seq_len, args.rope_theta, None)
            if args.positions == "rope"
            else None,
            persistent=False,
        )

    def forward(self, tokens: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        """Logits, or with `labels` the mean cross-entropy loss.

        The loss of a whole model (or of a last pipeline stage run outside a schedule) goes through
        `linear_cross_entropy`: the output layer and the loss in chunks, the logits never stored. A
        tensor-parallel output layer (a DTensor weight) keeps its vocabulary-sharded logits for
        `loss_parallel`.
        """
        h = self.hidden(tokens)
        if labels is None:
            return self.output(h) if self.output is not None else h
        if self.output is None:
            raise ValueError("labels given to a model part without the output layer")
        if isinstance(self.output.weight, DTensor):
            return cross_entropy(self.output(h), labels)
        return linear_cross_entropy(h, self.output.weight, labels)

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        """The final hidden states (after the last norm), or a pipeline stage's output hidden states."""
        if self.tok_embeddings is not None:
            h = self.tok_embeddings(tokens)
            if self.pos_embeddings is not None:
                positions = torch.arange(tokens.shape[1], device=tokens.device)
                h = h + self.pos_embeddings(positions)
            h = self.emb_dropout(h)
        else:  # a later pipeline stage: the input is the previous stage's hidden state
            h = tokens
        for layer in self.layers.values():
            h = layer(h, self.rope)
        if self.norm is not None:
            h = self.norm(h)
        return h

    def _tie(self) -> None:
        if self.args.tie_embeddings and self.output is not None and self.tok_embeddings is not None:
            self.output.weight = self.tok_embeddings.weight

    def to_empty(self, *, device: torch.device | str | int | None, recurse: bool = True) -> Transformer:
        """`Module.to_empty`, keeping tied embeddings tied: moving a plain (non-DTensor) parameter off
        the meta device makes a new Parameter per module that holds it, which would untie them.
        (DTensor parameters are swapped in place and stay tied.)"""
        super().to_empty(device=device, recurse=recurse)
        self._tie()
        return self

    def init_weights(
        self,
        buffer_device: torch.device | None = None,
        *,
        seed: int = 0,
        fill: Callable[[torch.Tensor, torch.Tensor], None] | None = None,
    ) -> None:
        """Megatron/GPT-3 initialisation, deterministic in (seed, FQN); recomputes the RoPE tables.

        `fill(param, full_value)` writes a parameter's full initial value into it; the default copies
        it. `selene.train.parallelize` passes one that keeps only this rank's shard of a DTensor, so a
        sharded model starts from exactly the single-process values.
        """
        fill = fill or _copy_into
        with torch.no_grad():
            if self.rope is not None:
                device = buffer_device or self.rope.device
                self.rope = rope_tables(
                    self.args.head_dim, self.args.max_seq_len, self.args.rope_theta, device
                )
            for name, param in self.named_parameters():
                fqn = canonical_fqn(name)
                full = initial_value(
                    self.init_rule(fqn), param.shape, param.dtype, _local_device(param), seed, fqn
                )
                fill(param, full)

    def init_rule(self, fqn: str) -> tuple[str, float]:
        """('normal', std) | ('zeros', 0) | ('ones', 0) for the parameter named `fqn` (canonical)."""
        owner, _, leaf = fqn.rpartition(".")
        last = owner.rpartition(".")[2]
        if last in ("attention_norm", "ffn_norm", "norm"):
            return ("ones", 0.0) if leaf == "weight" else ("zeros", 0.0)
        if leaf == "bias":
            return ("zeros", 0.0)
        if fqn.endswith(("attention.wo.weight", "feed_forward.w2.weight")):
            # Residual-branch outputs: the sum of 2·n_layers of them keeps unit scale (GPT-2/Megatron).
            return ("normal", self.args.init_std / math.sqrt(2 * self.args.n_layers))
        return ("normal", self.args.init_std)


# Wrappers that activation checkpointing and torch.compile put into parameter names.
_WRAPPER_PARTS = ("_checkpoint_wrapped_module.", "_orig_mod.", "_fsdp_wrapped_module.")


def canonical_fqn(name: str) -> str:
    """The parameter's name in the plain model: wrapper prefixes removed (as DCP's state_dict does)."""
    for part in _WRAPPER_PARTS:
        name = name.replace(part, "")
    return name


def param_seed(seed: int, fqn: str) -> int:
    """A 63-bit generator seed per (seed, FQN): independent of module order and of which layers exist."""
    digest = hashlib.sha256(f"{seed}:{fqn}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def initial_value(
    rule: tuple[str, float], shape: torch.Size, dtype: torch.dtype, device: torch.device, seed: int, fqn: str
) -> torch.Tensor:
    """The full initial tensor of one parameter. Normal draws are in float32, then cast, so a bf16
    parameter starts from the rounded float32 value; the stream depends on the device type (CPU and CUDA
    generators differ), so parity is per device type."""
    kind, std = rule
    if kind == "ones":
        return torch.ones(shape, dtype=dtype, device=device)
    if kind == "zeros":
        return torch.zeros(shape, dtype=dtype, device=device)
    gen = torch.Generator(device=device).manual_seed(param_seed(seed, fqn))
    return torch.empty(shape, dtype=torch.float32, device=device).normal_(0.0, std, generator=gen).to(dtype)


def _copy_into(param: torch.Tensor, full: torch.Tensor) -> None:
    param.copy_(full)


def _local_device(param: torch.Tensor) -> torch.device:
    # A DTensor reports its mesh's device type; the local tensor is what the generator must match.
    local = getattr(param, "_local_tensor", param)
    return local.device


def num_params(model: nn.Module, exclude_embeddings: bool = False) -> int:
    """Parameters of `model` (a whole model or one pipeline stage), counted once when tied.

    Counts global sizes: a DTensor parameter counts its full shape, not this rank's shard.
    `exclude_embeddings` leaves out the input token and position embeddings (the usual "non-embedding
    parameters" of scaling-law papers); a tied output layer then disappears with them.
    """
    skip: set[int] = set()
    if exclude_embeddings:
        for name in ("tok_embeddings", "pos_embeddings"):
            module = getattr(model, name, None)
            if module is not None:
                skip.update(id(p) for p in module.parameters())
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)
