"""FLOPs of a training step and model FLOPs utilisation (MFU).

Model FLOPs (what MFU counts; recomputation is not counted, as in PaLM and Narayanan et al. 2021):
a forward pass costs, per token,
    2 × (matmul parameters)                               weights: 2 FLOPs per multiply-add
  + 2 × 2 × n_layers × seq_len × dim                      attention scores QKᵀ and the weighted sum AV
and a training step 3× the forward (the backward pass costs twice the forward). Matmul parameters
are every Linear weight of the blocks plus the output projection (embeddings are lookups, norms are
negligible; grouped-query attention narrows the key and value projections, `matmul_params`). For the
GPT-3/MT-NLG shape (ffn = 4·dim) this is 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))
per iteration: Narayanan et al.'s 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) counts a fourth pass for full
recomputation of the blocks (not of the logits); without it 96 → 72 and the logit term becomes V/(12·l·h).
"""

from __future__ import annotations

import time
from typing import Any

import torch


def matmul_params(args: Any) -> int:
    """Parameters that take part in matmuls per token: attention, MLP and the output layer.

    wq and wo are dim × dim; wk and wv dim × (kv_heads · head_dim), narrower under grouped-query
    attention. The attention scores count query heads, so GQA leaves that term as it is."""
    # a shape without head counts (a plain namespace of dims) is multi-head
    kv_dim = args.kv_heads * args.head_dim if hasattr(args, "kv_heads") else args.dim
    attention = 2 * args.dim * args.dim + 2 * args.dim * kv_dim
    per_layer = attention + (3 if args.mlp == "swiglu" else 2) * args.dim * args.ffn_dim
    return args.n_layers * per_layer + args.dim * args.vocab_size


def flops_per_token(args: Any, seq_len: int, attention_share: float = 1.0) -> float:
    """Training FLOPs per token (forward + backward), attention included.

    `attention_share`: the attention work done, as a fraction of causal attention's. A document mask
    run by FlexAttention skips the blocks it empties (`selene.train.data.attention_share` measures the
    fraction on the run's samples) and its step counts that much less attention; the dense reference
    mask computes every score, as causal attention is counted, and keeps 1.0."""
    forward = 2 * matmul_params(args) + 4 * args.n_layers * seq_len * args.dim * attention_share
    return 3.0 * forward


def measured_matmul_tflops(device: torch.device, dtype: torch.dtype, n: int = 1024, repeat: int = 5) -> float:
    """The matmul rate this device reaches on square n×n matrices now: what a benchmark compares
    with, never the peak MFU divides by (that is `selene.train.peak`: it moves with the load)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    a @ b  # warm-up
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t = time.perf_counter()
    for _ in range(repeat):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return 2 * n**3 * repeat / (time.perf_counter() - t) / 1e12
