"""The transformer block and its parts: attention (with an optional key/value cache), feed-forward, norms."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from selene.model.args import ModelArgs
from selene.model.cache import Cache
from selene.model.masks import AttentionMask, BlockMask, flex_attend
from selene.model.rope import angles, rotate


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


class ScaledDotProductAttention(nn.Module):
    """The attention core (softmax(QKᵀ/√d)·V under a causal rule or a mask) as its own parameterless module.

    A module boundary lets selective activation checkpointing recompute exactly this part
    (Korthikanti et al. 2022) by wrapping it, without touching any parameter name.
    """

    def __init__(self, dropout: float) -> None:
        super().__init__()
        self.dropout = dropout

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: AttentionMask | None = None, causal: bool = True
    ) -> torch.Tensor:
        """`mask`: a boolean tensor (True: attend) for SDPA, or a FlexAttention `BlockMask`
        (`selene.model.masks`, document masking on CUDA), which never comes with dropout."""
        if isinstance(mask, BlockMask):
            return flex_attend(q, k, v, mask)
        p = self.dropout if self.training else 0.0
        return attend(q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal)


class Attention(nn.Module):
    def __init__(self, args: ModelArgs, layer_id: int) -> None:
        super().__init__()
        self.layer_id = layer_id  # its keys and values in a cache
        self.head_dim = args.head_dim
        kv_dim = args.kv_heads * args.head_dim
        self.wq = nn.Linear(args.dim, args.dim, bias=args.bias)
        self.wk = nn.Linear(args.dim, kv_dim, bias=args.bias)
        self.wv = nn.Linear(args.dim, kv_dim, bias=args.bias)
        self.wo = nn.Linear(args.dim, args.dim, bias=args.bias)
        self.sdpa = ScaledDotProductAttention(args.dropout)

    def forward(
        self, x: torch.Tensor, rope: torch.Tensor | None, cache: Cache | None = None, mask: AttentionMask | None = None
    ) -> torch.Tensor:
        """Causal self-attention over x (batch, seq, dim), RoPE-rotated by `rope` (`selene.model.rope.angles`)
        when the model has rotary positions; with a `cache`, over its earlier keys too, under its mask;
        with a document `mask` (`selene.model.masks.attention_mask`), under that mask instead."""
        bs, seq, _ = x.shape
        # -1 heads: under tensor parallelism wq holds only this rank's heads (wk and wv this rank's
        # key/value heads, the ones its query heads are grouped on).
        q = self.wq(x).view(bs, seq, -1, self.head_dim)
        k = self.wk(x).view(bs, seq, -1, self.head_dim)
        v = self.wv(x).view(bs, seq, -1, self.head_dim)
        if rope is not None:
            cos, sin = angles(rope, seq)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        causal = True
        if cache is not None:
            k, v = cache.update(self.layer_id, k, v)
            mask, causal = cache.mask, cache.causal
        elif mask is not None:
            causal = False
        out = self.sdpa(q, k, v, mask=mask, causal=causal)
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


def norm(args: ModelArgs) -> nn.Module:
    if args.norm == "rmsnorm":
        return nn.RMSNorm(args.dim, eps=args.norm_eps)
    return nn.LayerNorm(args.dim, eps=args.norm_eps, bias=args.bias)


class TransformerBlock(nn.Module):
    """Pre-norm block: h = x + attn(norm(x)); out = h + ffn(norm(h))."""

    def __init__(self, args: ModelArgs, layer_id: int) -> None:
        super().__init__()
        self.attention_norm = norm(args)
        self.attention = Attention(args, layer_id)
        self.ffn_norm = norm(args)
        self.feed_forward = FeedForward(args)
        self.dropout = nn.Dropout(args.dropout)

    def forward(
        self, x: torch.Tensor, rope: torch.Tensor | None, cache: Cache | None = None, mask: AttentionMask | None = None
    ) -> torch.Tensor:
        # the cache and the mask go by keyword: tensor parallelism's input plan for `attention` lists
        # (x, rope); the mask is the same plain tensor on every tensor-parallel rank (whole sequences)
        h = x + self._drop(self.attention(self.attention_norm(x), rope, cache=cache, mask=mask))
        return h + self._drop(self.feed_forward(self.ffn_norm(h)))

    def _drop(self, x: torch.Tensor) -> torch.Tensor:
        # Dropout is the identity in eval mode; not calling it there spares a small model's decode
        # step, which the host bounds, two module calls a layer.
        return self.dropout(x) if self.training else x
