"""Document masking for packed samples: attention never crosses an end-of-document (EOD) token.

Token data is a stream of documents, each ending in EOD, cut into samples of `seq_len` tokens, so a
sample holds the tail of one document, whole documents, and the head of the next. Causal attention
lets every token see the documents before it in its sample; with a document mask a token attends
only to the earlier tokens of its own document (torchtitan's and OLMo-core's "document masking").

The inputs are derived from the token ids alone, on the device, once a forward:
- `document_ids(tokens, eod)`: (batch, seq) int32, the index of each token's document in its row; an
  EOD belongs to the document it ends;
- `document_positions(ids)`: each token's position inside its document (0 at a document's first
  token), for `reset_positions`: a document then sees the positions it would see alone.

`Transformer.forward(..., documents=ids)` builds the mask once (`attention_mask`) and hands it to
every layer. Two ways to apply it, chosen by the device:
- CUDA: FlexAttention (compiled) over a `BlockMask`; blocks of 128 × 128 that the mask empties
  are skipped, so a sample of short documents computes less than a causal one;
- elsewhere (CPU, meta shape inference, dropout, which FlexAttention lacks): the reference, SDPA with a
  dense boolean mask (batch, 1, seq, seq). It computes every score and discards the masked ones.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention

from selene.model.document_blocks import FLEX_BLOCK, executed_block_share


@dataclass(frozen=True)
class DocumentMasking:
    """What a training run masks by: the data's EOD id, and whether positions restart per document."""

    eod: int
    reset_positions: bool = False

    def inputs(self, tokens: torch.Tensor) -> dict[str, torch.Tensor]:
        """The keyword inputs of `Transformer.forward` for `tokens` (batch, seq): `documents`, and
        `positions` when they restart per document. Plain tensors split along the batch, so a
        pipeline schedule cuts them into micro-batches beside the tokens and hands them to every stage."""
        ids = document_ids(tokens, self.eod)
        out = {"documents": ids}
        if self.reset_positions:
            out["positions"] = document_positions(ids)
        return out


def document_ids(tokens: torch.Tensor, eod: int) -> torch.Tensor:
    """(batch, seq) int32: how many EODs precede each token in its row (an EOD closes its own document)."""
    ends = (tokens == eod).to(torch.int32)
    return ends.cumsum(-1, dtype=torch.int32) - ends


def document_positions(ids: torch.Tensor) -> torch.Tensor:
    """(batch, seq) int64: each token's offset from the first token of its document in the row."""
    seq = ids.shape[-1]
    index = torch.arange(seq, device=ids.device).expand_as(ids)
    starts = torch.ones_like(ids, dtype=torch.bool)
    starts[..., 1:] = ids[..., 1:] != ids[..., :-1]
    first = torch.where(starts, index, torch.zeros_like(index)).cummax(-1).values
    return index - first


def dense_mask(ids: torch.Tensor) -> torch.Tensor:
    """(batch, 1, seq, seq) bool, True where a query may attend to a key: causal within a document."""
    seq = ids.shape[-1]
    causal = torch.ones(seq, seq, dtype=torch.bool, device=ids.device).tril()
    return (ids[:, None, :, None] == ids[:, None, None, :]) & causal


def uses_flex(device: torch.device, dropout: float) -> bool:
    """FlexAttention where it runs compiled (CUDA) and nothing asks what it lacks (attention dropout)."""
    return device.type == "cuda" and dropout == 0.0


AttentionMask = torch.Tensor | BlockMask  # a boolean SDPA mask (True: attend) or a FlexAttention block mask


def attention_mask(ids: torch.Tensor, dropout: float = 0.0) -> AttentionMask:
    """The mask every layer attends under: a FlexAttention `BlockMask` on CUDA, else `dense_mask`."""
    if not uses_flex(ids.device, dropout):
        return dense_mask(ids)

    def same_document(b: Any, h: Any, q: Any, kv: Any) -> Any:
        return (q >= kv) & (ids[b, q] == ids[b, kv])

    batch, seq = ids.shape
    # compiled, as torchtitan builds it: uncompiled, the mask is evaluated over every (query, key)
    # pair of every row in memory before it is reduced to blocks
    return create_block_mask(same_document, batch, None, seq, seq, device=ids.device, _compile=True)


@functools.cache
def _flex() -> Any:
    # Uncompiled, flex_attention materialises the scores (slow, O(seq²) memory); compiled, it is one
    # fused kernel that skips empty blocks.
    return torch.compile(flex_attention, dynamic=False)


def flex_attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_mask: BlockMask) -> torch.Tensor:
    """Attention over q (batch, heads, seq, head_dim) and k, v with as many or fewer heads, under a BlockMask."""
    return _flex()(q, k, v, block_mask=block_mask, enable_gqa=k.shape[1] != q.shape[1])


def executed_attention_fraction(ids: torch.Tensor, block: int = FLEX_BLOCK) -> float:
    """`selene.model.document_blocks.executed_block_share` of document ids (batch, seq) on any device."""
    return executed_block_share(ids.cpu().numpy(), block)
