"""Batched decode steps over a preallocated cache, replayed on CUDA as one captured graph.

An eager decode step of a small model is bound by the host: some twenty kernels a layer, each
launched from Python, cost ~1 ms a layer on an H200 whatever the batch, while the GPU's share of a
125m step is a few tens of microseconds. A CUDA graph launches the whole step at once. Capturing
needs every shape and address fixed, so the decoder owns its buffers: the token ids of the step, the
cache column it writes, each row's left padding, and keys and values with room for the whole
generation. A step writes its column in place and attends over the full buffer under a mask (the
real keys of each row up to the column), so the graph is the same at every step: the model's own
forward over a `StaticKVCache`, captured.

It computes what the eager steps of `generate.generate_batch` compute for one new token a row, with
every row kept to the end (a finished row's tokens are discarded): the tests compare the two,
eagerly, on the CPU.
"""

from __future__ import annotations

import contextlib
import os
import weakref

import torch

from selene.model.cache import StaticKVCache
from selene.model.transformer import Transformer

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
        args = model.args
        self.model = model
        # grouped-query attention keeps fewer key/value heads than query heads
        self.cache = StaticKVCache(
            len(model.layers), batch, args.kv_heads, capacity, args.head_dim, first.device, first.dtype
        )
        self.ids = torch.zeros(batch, 1, dtype=torch.long, device=first.device)
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
        """Take over a prefill's cache (`StaticKVCache.load`); the next step writes column `width`."""
        self.cache.load(keys, values, width, pads)

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
        self.cache.column.add_(1)
        return logits

    def _step(self) -> torch.Tensor:
        logits: torch.Tensor = self.model(self.ids, cache=self.cache, last_only=True)[:, -1]
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
