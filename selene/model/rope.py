"""Rotary position embeddings (RoPE, Su et al. 2021) in Llama's interleaved convention."""

from __future__ import annotations

import torch


def rope_tables(head_dim: int, max_seq_len: int, theta: float, device: torch.device | None) -> torch.Tensor:
    """cos and sin of the rotary angles, stacked: (2, max_seq_len, head_dim // 2), float32.

    Real tables rather than torchtitan's complex `freqs_cis`, so the buffer survives `to_empty`,
    deep copies and any dtype cast without a complex dtype in sight.
    """
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(max_seq_len, device=device, dtype=torch.float32), freqs)
    return torch.stack([angles.cos(), angles.sin()])


def angles(tables: torch.Tensor, seq: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin that broadcast over q or k (batch, seq, heads, head_dim // 2 pairs).

    `tables` is what the model hands its layers: (2, positions, head_dim // 2), row i the angles of
    the forward's i-th token in every batch row (its first `seq` rows are taken), or (2, batch, seq,
    1, head_dim // 2), each batch row's own positions (left-padded generation), shaped once a forward.
    """
    if tables.dim() == 3:
        return tables[0, :seq, None, :], tables[1, :seq, None, :]
    cos, sin = tables.unbind(0)
    return cos, sin


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate consecutive pairs of x (batch, seq, heads, head_dim) by the angles whose cos and sin
    broadcast over its (..., head_dim // 2) pairs, in fp32."""
    pairs = x.float().unflatten(-1, (-1, 2))
    even, odd = pairs[..., 0], pairs[..., 1]
    out = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return out.flatten(-2).type_as(x)
