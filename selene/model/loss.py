"""The output layer and the cross-entropy in one pass over chunks of tokens, never the whole logits.

`F.cross_entropy(hidden @ Wᵀ)` materialises the logits (tokens × vocabulary, fp32) and keeps its
log-softmax for backward, and backward makes two more tensors of that size: at seq 2048 × 8
sequences and a 32k vocabulary, 2.1 GB each, more than the activations of a 125m model's blocks.
Here the forward pass walks the tokens in chunks: a chunk's logits are computed, its loss summed,
turned in place into the gradient of the logits (softmax − one-hot, scaled by 1/N) and multiplied
out at once into the gradients of the hidden states and of the weight, which are kept for backward
in place of the logits (the approach of Liger-Kernel's fused linear cross-entropy). Extra memory:
one chunk of logits and one weight-sized fp32 gradient.

The matmul FLOPs are the same (forward, and the two gradient matmuls); what goes is three or four
passes over the logits in memory. On a 2-core CPU with a 64-wide hidden state (the `debug`
preset) and a 32k vocabulary that is half the loss's time in bf16; with a 768-wide one the matmuls
dominate and the time is the same (benchmarks/train.py --vs-hf measures the whole step).

Under autocast the matmuls run in the autocast dtype and the softmax in fp32, as autocast would do
with the unfused layer. Labels equal to `ignore_index` count neither in the loss nor in the mean.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd.function import once_differentiable

from selene.model.loss_chunks import chunk_rows

IGNORE_INDEX = -100


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        hidden: torch.Tensor,
        weight: torch.Tensor,
        labels: torch.Tensor,
        compute_dtype: torch.dtype,
        chunk: int,
        ignore_index: int,
    ) -> torch.Tensor:
        want_grad = ctx.needs_input_grad[0] or ctx.needs_input_grad[1]
        h = hidden.to(compute_dtype)
        w = weight.to(compute_dtype)
        n = h.shape[0]
        valid = labels != ignore_index
        # The count stays on the device: reading it (int()) would stall the host on every step, and a
        # GPU then idles while the host launches the rest of the step. 0/0 = nan when nothing counts,
        # as F.cross_entropy's mean of nothing.
        count = valid.sum()
        scale = count.clamp(min=1).float().reciprocal()
        total = torch.zeros((), dtype=torch.float32, device=h.device)
        grad_h = torch.empty_like(h) if want_grad else None
        grad_w: torch.Tensor | None = None
        for start in range(0, n, chunk):
            end = min(start + chunk, n)
            grad_w = _chunk(h[start:end], w, labels[start:end], valid[start:end], total,
                            grad_h[start:end] if grad_h is not None else None, grad_w)
        loss = total / count.float()
        if want_grad and grad_w is None:  # no rows at all
            grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=h.device)
        if want_grad:
            # unscaled: 1/N is applied in backward with the incoming gradient, in one pass
            ctx.save_for_backward(grad_h, grad_w, scale)
            ctx.dtypes = (hidden.dtype, weight.dtype)
        return loss

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_loss: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        # Scaled in place: the weight's gradient is weight-sized (131 MB for 350m), and a scaled copy
        # was a fresh allocation and a pass over it every step. So the graph's backward runs once.
        grad_h, grad_w, scale = ctx.saved_tensors
        h_dtype, w_dtype = ctx.dtypes
        factor = grad_loss * scale
        return grad_h.mul_(factor).to(h_dtype), grad_w.mul_(factor).to(w_dtype), None, None, None, None


def _chunk(
    hc: torch.Tensor,
    w: torch.Tensor,
    labels: torch.Tensor,
    keep: torch.Tensor,
    total: torch.Tensor,
    grad_h: torch.Tensor | None,
    grad_w: torch.Tensor | None,
) -> torch.Tensor | None:
    """One chunk: subtracts its summed log-likelihood from `total`; with `grad_h` (the chunk's rows of
    the hidden states' gradient) writes those and adds to `grad_w`, which it returns (made on the first
    chunk). A function of its own so that the chunk's logits are freed before the next chunk's are
    made: a loop body keeps its names alive, and with them one more chunk of logits at the peak."""
    target = labels.where(keep, 0)[:, None]
    logp = torch.log_softmax(torch.mm(hc, w.t()).float(), dim=-1)
    total -= logp.gather(1, target).squeeze(1).where(keep, 0.0).sum()
    if grad_h is None:
        return None
    # d loss / d logits of the chunk, unscaled: softmax − one-hot, zero on ignored rows
    g = logp.exp_()
    g.scatter_add_(1, target, torch.full_like(target, -1, dtype=g.dtype))
    g16 = g.to(w.dtype)
    torch.mm(g16, w, out=grad_h)
    # Ignored rows get no gradient. Masked always (whether any row is ignored is a host sync), and on
    # the dim-wide tensors, not on the vocabulary-wide `g`: a pass over rows × dim instead of rows × vocab.
    mask = keep[:, None].to(hc.dtype)
    grad_h.mul_(mask)
    hc = hc * mask
    if grad_w is None:
        return torch.mm(g16.t(), hc).float()
    if w.dtype == torch.float32:
        return grad_w.addmm_(g16.t(), hc)
    return grad_w.add_(torch.mm(g16.t(), hc))


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean token cross-entropy of logits (batch, seq, vocab); they may be a vocabulary-sharded
    DTensor (under `loss_parallel`)."""
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))


def linear_cross_entropy(
    hidden: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, ignore_index: int = IGNORE_INDEX
) -> torch.Tensor:
    """Mean cross-entropy of `hidden @ weight.T` (logits never stored) against `labels`.

    hidden (..., dim), weight (vocab, dim), labels (...) → a scalar; equal to
    `F.cross_entropy((hidden @ weight.T).float().flatten(0, -2), labels.flatten())` up to rounding.
    """
    h = hidden.reshape(-1, hidden.shape[-1])
    y = labels.reshape(-1)
    device = h.device
    compute = torch.get_autocast_dtype(device.type) if torch.is_autocast_enabled(device.type) else weight.dtype
    with torch.autocast(device.type, enabled=False):
        out = _LinearCrossEntropy.apply(h, weight, y, compute, chunk_rows(weight.shape[0], weight.shape[1], device.type, h.shape[0]), ignore_index)
    return out
