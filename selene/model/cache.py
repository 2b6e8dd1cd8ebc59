"""Keys and values of the tokens a model has seen, for generation: the optional argument of the
model's one forward pass (`Transformer.forward(tokens, cache=...)`).

A forward asks its cache once where its tokens sit (`begin`: their positions, and the mask its layers
attend under); each attention layer then hands the cache its new keys and values (`update`) and
attends over what comes back. Two caches implement that protocol:

- `KVCache`: buffers that grow, for eager generation: one prompt, or left-padded rows of several;
- `StaticKVCache`: buffers of fixed capacity written in place at a position tensor, so that a decode
  step has the same shapes and addresses every time and CUDA can capture it as a graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch

from selene.errors import InputError


@dataclass(frozen=True)
class Positions:
    """Where a forward's tokens sit: from `start` on in every row, or `rows` (batch, seq), each row's own."""

    start: int = 0
    rows: torch.Tensor | None = None

    def indices(self, seq: int, device: torch.device) -> torch.Tensor:
        """Position ids for learned position embeddings: (seq,) shared by the rows, or (batch, seq)."""
        if self.rows is not None:
            return self.rows
        return torch.arange(self.start, self.start + seq, device=device)

    def angles(self, tables: torch.Tensor) -> torch.Tensor:
        """The RoPE tables (2, max_seq_len, pairs) seen from these positions: the rows from `start` on,
        or each row's own (2, batch, seq, 1, pairs), gathered once a forward rather than once a layer."""
        if self.rows is not None:
            return tables[:, self.rows, None, :]
        return tables[:, self.start :] if self.start else tables


class Cache(Protocol):
    """What the model's forward needs of a cache: `begin` once a forward, `update` once a layer."""

    mask: torch.Tensor | None  # the forward's attention mask (True: attend), broadcast over heads
    causal: bool  # with no mask: causal attention (SDPA's is_causal) or every key

    def begin(self, seq: int, max_seq_len: int) -> Positions:
        """The positions of the next `seq` tokens of each row; sets `mask` and `causal` for them."""
        ...

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new keys and values (batch, kv_heads, seq, head_dim) of `layer`; the keys and
        values its queries attend over."""
        ...


@dataclass
class KVCache:
    """Per-layer keys and values, (batch, kv_heads, seen, head_dim) each, for the `seen` columns so far:
    the model's key/value heads, which grouped-query attention makes fewer than its query heads.

    Without `pads` the rows are one prompt's (or prompts of one length) at positions 0, 1, ...; with
    `pads`, row b's first `pads[b]` columns are padding: its real tokens are at
    positions 0, 1, ... from column `pads[b]` on, and no real query attends to a padding key (a padding
    query attends to itself only, so its values stay finite; its logits mean nothing).

    Each layer's keys and values live in a buffer with room to spare (`SPARE` positions, then
    doubling): a decode step writes its one position in place instead of copying the whole cache
    (a copy per step per layer made a step's cost grow with the context twice over)."""

    pads: torch.Tensor | None = None  # (batch,) left padding of each row, on the device ...
    pad_list: list[int] | None = None  # ... and on the host: the checks then read nothing back
    keys: list[torch.Tensor] = field(default_factory=list)  # buffers, (batch, kv_heads, capacity, head_dim)
    values: list[torch.Tensor] = field(default_factory=list)
    filled: list[int] = field(default_factory=list)  # positions in use, per layer
    mask: torch.Tensor | None = field(default=None, init=False)  # set by `begin`, for its forward
    causal: bool = field(default=True, init=False)

    SPARE = 256

    def __post_init__(self) -> None:
        if self.pads is not None and self.pad_list is None:
            self.pad_list = self.pads.tolist()

    @property
    def seen(self) -> int:
        return self.filled[0] if self.filled else 0

    def begin(self, seq: int, max_seq_len: int) -> Positions:
        start = self.seen
        if self.pads is None or self.pad_list is None:
            if start + seq > max_seq_len:
                raise InputError(f"{start + seq} positions exceed the model's max_seq_len {max_seq_len}")
            self.causal = start == 0
            self.mask = None
            if start:  # new query i sits at absolute position start + i and sees keys 0 .. start + i
                device = self.keys[0].device
                self.mask = torch.arange(start + seq, device=device)[None, :] <= (
                    start + torch.arange(seq, device=device)
                )[:, None]
            return Positions(start)
        device = self.pads.device
        cols = torch.arange(start, start + seq, device=device)
        rows = (cols[None, :] - self.pads[:, None]).clamp(min=0)  # (batch, seq)
        top = max(start + seq - 1 - min(self.pad_list), 0)  # rows.max(), from the host's pads
        if top >= max_seq_len:
            raise InputError(f"{top + 1} positions exceed the model's max_seq_len {max_seq_len}")
        self.mask, self.causal = None, seq > 1
        if any(self.pad_list) or (start and seq > 1):
            keys = torch.arange(start + seq, device=device)
            causal = keys[None, :] <= cols[:, None]  # (seq, keys)
            real = keys[None, :] >= self.pads[:, None]  # (batch, keys)
            mask = (causal[None] & real[:, None, :]) | (keys[None, None, :] == cols[None, :, None])
            self.mask, self.causal = mask[:, None], False  # (batch, 1, seq, keys): broadcast over heads
        # else no row is padded: a prefill is causal attention from position 0, and one new token sees
        # every key; SDPA's causal kernels then never build a (batch, heads, seq, keys) mask or scores
        return Positions(start, rows)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append this step's keys and values of `layer` (along the sequence); all of them so far."""
        seq = k.shape[2]
        if layer == len(self.keys):
            shape = (*k.shape[:2], seq + self.SPARE, k.shape[3])
            self.keys.append(k.new_empty(shape))
            self.values.append(v.new_empty(shape))
            self.filled.append(0)
        n = self.filled[layer]
        if n + seq > self.keys[layer].shape[2]:  # full: double the room
            grow = max(n + seq, 2 * self.keys[layer].shape[2]) - self.keys[layer].shape[2]
            pad = (*k.shape[:2], grow, k.shape[3])
            self.keys[layer] = torch.cat([self.keys[layer], k.new_empty(pad)], dim=2)
            self.values[layer] = torch.cat([self.values[layer], v.new_empty(pad)], dim=2)
        self.keys[layer][:, :, n : n + seq] = k
        self.values[layer][:, :, n : n + seq] = v
        self.filled[layer] = n + seq
        return self.keys[layer][:, :, : n + seq], self.values[layer][:, :, : n + seq]

    def select(self, rows: Sequence[int]) -> torch.Tensor:
        """Keep the batch rows `rows` (finished rows leave) and drop the columns that are padding in
        every one of them; the rows' index on the device, for the caller's own per-row tensors."""
        drop = min(self.pad_list[j] for j in rows) if self.pad_list else 0
        index = torch.tensor(list(rows), device=self.keys[0].device)
        self.keys = [k[index, :, drop:] for k in self.keys]
        self.values = [v[index, :, drop:] for v in self.values]
        self.filled = [n - drop for n in self.filled]
        if self.pads is not None and self.pad_list is not None:
            self.pad_list = [self.pad_list[j] - drop for j in rows]
            self.pads = self.pads[index] - drop
        return index


class StaticKVCache:
    """Keys and values with room for `capacity` columns of `batch` left-padded rows, for decode steps of
    one new token a row: a step writes its column in place (at the `column` tensor) and attends over
    the whole buffer under a mask (each row's real keys up to the column), so every step has the same
    shapes and addresses, and CUDA can replay it as one captured graph. The caller moves `column` on."""

    def __init__(
        self, layers: int, batch: int, kv_heads: int, capacity: int, head_dim: int,
        device: torch.device, dtype: torch.dtype,
    ) -> None:  # fmt: skip
        shape = (batch, kv_heads, capacity, head_dim)
        self.keys = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(layers)]
        self.values = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(layers)]
        self.column = torch.zeros(1, dtype=torch.long, device=device)  # where the next token goes
        self.pads = torch.zeros(batch, dtype=torch.long, device=device)
        self.key_index = torch.arange(capacity, device=device)
        self.mask: torch.Tensor | None = None
        self.causal = False

    def load(self, keys: list[torch.Tensor], values: list[torch.Tensor], width: int, pads: torch.Tensor) -> None:
        """Take over a prefill's cache: `width` columns of each layer's keys and values, left-padded
        by `pads` (batch,); the next step writes column `width`."""
        for mine, theirs in zip(self.keys + self.values, keys + values, strict=True):
            mine[:, :, :width].copy_(theirs[:, :, :width])
        self.pads.copy_(pads)
        self.column.fill_(width)

    def begin(self, seq: int, max_seq_len: int) -> Positions:
        if seq != 1:
            raise ValueError(f"a static cache takes one new token a row, got {seq}")
        rows = (self.column - self.pads)[:, None]  # (batch, 1): each row counts from its first real token
        real = (self.key_index[None, :] >= self.pads[:, None]) & (self.key_index[None, :] <= self.column)
        self.mask = real[:, None, None, :]  # (batch, 1, 1, capacity): broadcast over heads
        return Positions(rows=rows)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.keys[layer].index_copy_(2, self.column, k)
        self.values[layer].index_copy_(2, self.column, v)
        return self.keys[layer], self.values[layer]
