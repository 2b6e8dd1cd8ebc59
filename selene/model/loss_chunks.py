"""How long the chunks of the fused output layer + loss are (`selene.model.loss`), without torch:
the planner (`selene.plan.cost`) counts the memory a chunk takes."""

from __future__ import annotations

# Bytes of fp32 logits per chunk: on a CPU a chunk that stays in cache (8 MiB); on a GPU large enough
# that its matmuls run at full rate (256 MiB: 2048 tokens × a 32k vocabulary).
CHUNK_BYTES = {"cpu": 8 * 2**20, "cuda": 256 * 2**20}


def chunk_rows(vocab: int, dim: int, device_type: str, tokens: int) -> int:
    """Tokens per chunk: the device's budget of fp32 logits, but at least 2·dim, a multiple of 64.

    Each chunk also adds its part of the weight's gradient (vocab × dim) with a matmul whose inner
    dimension is the chunk: a chunk much shorter than the hidden size makes that a pass over a
    weight-sized tensor for little work (2-core CPU, dim 768, bf16: 64-token chunks take 2.1× the
    time of 1024-token ones, whose time equals the unfused loss's)."""
    budget = CHUNK_BYTES.get(device_type, CHUNK_BYTES["cuda"])
    rows = max(64, budget // (4 * vocab), 2 * dim)
    return min(-(-rows // 64) * 64, tokens)
