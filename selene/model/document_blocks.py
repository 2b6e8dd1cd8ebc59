"""How much attention a document mask leaves for a block-sparse kernel (FlexAttention) to execute.

Free of torch (numpy only), so that the planner counts a masked step's FLOPs without importing torch.
"""

from __future__ import annotations

import numpy as np

FLEX_BLOCK = 128  # FlexAttention's default block (queries × keys) of a BlockMask


def executed_block_share(ids: np.ndarray, block: int = FLEX_BLOCK) -> float:
    """The attention work FlexAttention does under a document mask, as a fraction of what it does
    causally: over samples `ids` (samples, seq) of document indices that rise along each row, the
    (query block, key block) pairs that hold at least one attended pair, over the causal ones. A block
    straddling a document boundary is computed whole, as the kernel does.

    Key block j ≤ query block i holds an attended pair exactly when the first document of block i
    is at most the last document of block j."""
    ids = np.asarray(ids, dtype=np.int64)
    samples, seq = ids.shape
    n = -(-seq // block)
    if n * block != seq:  # the last, partial block: its last token's document stands for the rest
        ids = np.concatenate([ids, np.repeat(ids[:, -1:], n * block - seq, axis=1)], axis=1)
    blocks = ids.reshape(samples, n, block)
    first, last = blocks[..., 0], blocks[..., -1]
    hit = np.tril(first[:, :, None] <= last[:, None, :])
    return float(hit.sum()) / (samples * n * (n + 1) // 2)


def share_of_documents(lengths: np.ndarray, seq: int, max_samples: int = 1024) -> float:
    """`executed_block_share` of the samples that packing documents of `lengths` (EOD included, in
    order) into `seq`-token samples makes: what a run on that data executes, before it starts."""
    lengths = np.asarray(lengths, dtype=np.int64)
    lengths = lengths[lengths > 0]
    if not len(lengths):
        return 1.0
    # enough documents for the samples wanted (or all of them), cut into whole samples
    need = np.searchsorted(np.cumsum(lengths), max_samples * seq) + 1
    ids = np.repeat(np.arange(min(need, len(lengths))), lengths[:need])
    samples = len(ids) // seq
    if samples == 0:
        return 1.0
    return executed_block_share(ids[: samples * seq].reshape(samples, seq))
