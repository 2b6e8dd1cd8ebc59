"""Batched decode steps over a preallocated cache, replayed on CUDA as one captured graph.

An eager decode step of a small model is bound by the host: some twenty kernels a layer, each
launched from Python, cost ~1 ms a layer on an H200 whatever the batch, while the GPU's share of a
125m step is a few tens of microseconds. A CUDA graph launches the whole step at once. Capturing
needs every shape and address fixed, so the decoder owns its buffers: the token ids of the step, the
cache column it writes, each row's left padding, and keys and values with room for the whole
generation. A step writes its column in place and attends over the full buffer under a mask (the
real keys of each row up to the column), so the graph is the same at every step.

It computes what `generate.forward_padded` computes for one new token a row, with every row kept to
the end (a finished row's tokens are discarded): the tests compare the two, eagerly, on the CPU.
"""

from __future__ import annotations

import contextlib
import os
import weakref

import torch

from selene.train.model import Transformer, attend, rotate

# capacity is rounded up to this many positions, so batches whose prompts differ a little in length
# share one captured graph (and its buffers)
CAPACITY_STEP = 256
# captured decoders kept per model (each holds a cache of batch × capacity positions a layer)
KEEP = 4


def attention_kernels() -> contextlib.AbstractContextManager[None]:
    """SDPA's flash / memory-efficient / math kernels but not cuDNN's. cuDNN's attention (which PyTorch
    picks for bf16 on Hopper) builds an execution plan for every new shape, some 50 ms on an H200, and
    an eager decode step's shape is new at every step (the keys so far) and every batch size: a stall
    on most steps of a first generation. The other kernels have no plan to build (nor anything to
    build inside a graph capture). The CPU has no cuDNN kernel: nothing changes there."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def enabled(device: torch.device) -> bool:
    """Graphs on CUDA unless SELENE_CUDA_GRAPHS=off (the eager path, for comparison or debugging)."""
    return device.type == "cuda" and os.environ.get("SELENE_CUDA_GRAPHS", "on").lower() not in ("off", "0", "no")


def capacity(positions: int) -> int:
    return -(-positions // CAPACITY_STEP) * CAPACITY_STEP


class GraphDecoder:
    """One decode step for `batch` rows and `capacity` cache columns, captured as a CUDA graph when
    `capture` (else run eagerly: the CPU, and the tests)."""

    def __init__(self, model: Transformer, batch: int, capacity: int, capture: bool) -> None:
        first = next(model.parameters())
        device, dtype = first.device, first.dtype
        args = model.args
        self.model, self.batch, self.capacity = model, batch, capacity
        shape = (batch, args.kv_heads, capacity, args.head_dim)  # grouped-query attention keeps fewer
        self.keys = [torch.zeros(shape, device=device, dtype=dtype) for _ in model.layers]
        self.values = [torch.zeros(shape, device=device, dtype=dtype) for _ in model.layers]
        self.ids = torch.zeros(batch, 1, dtype=torch.long, device=device)
        self.column = torch.zeros(1, dtype=torch.long, device=device)  # where this step's token goes
        self.pads = torch.zeros(batch, dtype=torch.long, device=device)
        self.key_index = torch.arange(capacity, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.logits: torch.Tensor | None = None
        if capture:
            self._capture()

    def _capture(self) -> None:
        # warm-up runs on a side stream (as torch.cuda.graphs asks) so lazy initialisations (cuBLAS
        # workspaces, kernel selection) happen before capture; they write column 0, which a prefill
        # overwrites before it is ever attended to
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), attention_kernels():
            with torch.cuda.stream(side):
                for _ in range(2):
                    self._step()
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.logits = self._step()

    def load(self, keys: list[torch.Tensor], values: list[torch.Tensor], width: int, pads: torch.Tensor) -> None:
        """Take over a prefill's cache: `width` columns of each layer's keys and values, left-padded
        by `pads` (batch,); the next step writes column `width`."""
        for mine, theirs in zip(self.keys + self.values, keys + values, strict=True):
            mine[:, :, :width].copy_(theirs[:, :, :width])
        self.pads.copy_(pads)
        self.column.fill_(width)

    @torch.no_grad()
    def step(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (batch, vocab) of the tokens `ids` (batch, 1) at the next column; nothing read back."""
        self.ids.copy_(ids)
        if self.graph is not None:
            self.graph.replay()
            assert self.logits is not None
            logits = self.logits
        else:
            with attention_kernels():
                logits = self._step()
        self.column.add_(1)
        return logits

    def _step(self) -> torch.Tensor:
        model = self.model
        assert model.tok_embeddings is not None and model.output is not None
        positions = (self.column - self.pads)[:, None]  # (batch, 1): each row counts from its first real token
        real = (self.key_index[None, :] >= self.pads[:, None]) & (self.key_index[None, :] <= self.column)
        mask = real[:, None, None, :]  # (batch, 1, 1, capacity): broadcast over heads
        h = model.tok_embeddings(self.ids)
        if model.pos_embeddings is not None:
            h = h + model.pos_embeddings(positions)
        rot = (model.rope[0][positions][:, :, None, :], model.rope[1][positions][:, :, None, :]) \
            if model.rope is not None else None
        bs = self.batch
        for i, block in enumerate(model.layers.values()):
            attn = block.attention
            x = block.attention_norm(h)  # type: ignore[operator]
            q = attn.wq(x).view(bs, 1, -1, attn.head_dim)  # type: ignore[operator, union-attr]
            k = attn.wk(x).view(bs, 1, -1, attn.head_dim)  # type: ignore[operator, union-attr]
            v = attn.wv(x).view(bs, 1, -1, attn.head_dim)  # type: ignore[operator, union-attr]
            if attn.rope and rot is not None:  # type: ignore[union-attr]
                q, k = rotate(q, *rot), rotate(k, *rot)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            self.keys[i].index_copy_(2, self.column, k)
            self.values[i].index_copy_(2, self.column, v)
            out = attend(q, self.keys[i], self.values[i], attn_mask=mask)
            h = h + attn.wo(out.transpose(1, 2).reshape(bs, 1, -1))  # type: ignore[operator, union-attr]
            h = h + block.feed_forward(block.ffn_norm(h))  # type: ignore[operator]
        if model.norm is not None:
            h = model.norm(h)
        logits: torch.Tensor = model.output(h)[:, -1]
        return logits


_DECODERS: weakref.WeakKeyDictionary[Transformer, dict[tuple[int, int], GraphDecoder]] = weakref.WeakKeyDictionary()


def decoder(model: Transformer, batch: int, positions: int, capture: bool) -> tuple[GraphDecoder, bool]:
    """The model's decoder for `batch` rows and at least `positions` cache columns, and whether it was
    built (captured) now: kept per model, the `KEEP` used last, so repeated batches of a shape
    capture once."""
    kept = _DECODERS.setdefault(model, {})
    key = (batch, min(capacity(positions), max(positions, model.args.max_seq_len)))
    found = kept.pop(key, None)
    built = found is None
    if found is None:
        while len(kept) >= KEEP:
            kept.pop(next(iter(kept)))
        found = GraphDecoder(model, batch, key[1], capture)
    kept[key] = found  # most recent last
    return found, built
