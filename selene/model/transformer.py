"""Decoder-only transformer in plain PyTorch (torchtitan's Llama layout), no parallelism inside.

One forward pass serves every caller: training (with labels: the loss), evaluation (logits),
generation (with a key/value cache, `selene.model.cache`: logits of the new tokens, or of the last
one alone) and the CUDA-graph decode step (a static cache). A model change is made here once.

Parallelism is applied from outside (`selene.train.parallelize`), so the model only keeps three
accommodations, all layout-agnostic:
- the layers live in an `nn.ModuleDict` keyed "0", "1", ... so a pipeline stage can delete the layers
  it does not own and the survivors keep their fully-qualified names (FQNs);
- `forward` skips `tok_embeddings` / `pos_embeddings` / `norm` / `output` when a stage set them to None;
- attention derives its head count from the (possibly tensor-parallel, local) projection shape.

Checkpoints are keyed by FQN (`layers.3.attention.wq.weight`), so they load under any layout.

Initialisation follows Megatron/GPT-3 (`selene.model.init`): normal(0, init_std) for every weight, the
two output projections of each block (`wo`, `w2`) scaled by 1/sqrt(2·n_layers), zeros for biases,
ones for norms, each a pure function of (seed, FQN, shape). The model is built on the meta device and
materialised with `to_empty(device=...)` then `init_weights(...)`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.distributed.tensor import DTensor

from selene.errors import InputError
from selene.model.args import ModelArgs
from selene.model.cache import Cache, Positions
from selene.model.init import canonical_fqn, copy_into, init_rule, initial_value, local_device
from selene.model.layers import TransformerBlock, norm
from selene.model.loss import cross_entropy, linear_cross_entropy
from selene.model.masks import attention_mask
from selene.model.rope import rope_tables

_FROM_ZERO = Positions()  # a forward without a cache: every row at positions 0, 1, ...


class Transformer(nn.Module):
    """Token ids (batch, seq) → logits (batch, seq, vocab); a pipeline stage maps hidden → hidden/logits."""

    rope: torch.Tensor | None  # a buffer: cos/sin tables with rotary positions, else None

    def __init__(self, args: ModelArgs) -> None:
        super().__init__()
        self.args = args
        self.tok_embeddings: nn.Embedding | None = nn.Embedding(args.vocab_size, args.dim)
        self.pos_embeddings: nn.Embedding | None = (
            nn.Embedding(args.max_seq_len, args.dim) if args.positions == "learned" else None
        )
        self.emb_dropout = nn.Dropout(args.dropout)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(args, i) for i in range(args.n_layers)})
        self.norm: nn.Module | None = norm(args)
        self.output: nn.Linear | None = nn.Linear(args.dim, args.vocab_size, bias=False)
        self._tie()
        # Not persistent: recomputed by init_weights, never part of a checkpoint.
        self.register_buffer(
            "rope",
            rope_tables(args.head_dim, args.max_seq_len, args.rope_theta, None)
            if args.positions == "rope"
            else None,
            persistent=False,
        )

    def forward(
        self,
        tokens: torch.Tensor,
        labels: torch.Tensor | None = None,
        *,
        cache: Cache | None = None,
        last_only: bool = False,
        documents: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits, or with `labels` the mean cross-entropy loss.

        `documents` (batch, seq): the document index of each token of packed samples
        (`selene.model.masks.document_ids`); attention then stays inside each document. `positions`
        (batch, seq): each token's position, e.g. restarting per document
        (`selene.model.masks.document_positions`); default 0, 1, ... in every row. Both are training
        and evaluation inputs, never given with a cache, and every pipeline stage takes them.

        With a `cache`, `tokens` follow the tokens already in it (their keys and values are added to it)
        and the model must be whole, not a pipeline stage. `last_only`: the logits of the last position
        alone, (batch, 1, vocab) — what sampling needs (a prefill then skips the output layer for every
        prompt position but the last).

        The loss of a whole model (or of a last pipeline stage run outside a schedule) goes through
        `linear_cross_entropy`: the output layer and the loss in chunks, the logits never stored. A
        tensor-parallel output layer (a DTensor weight) keeps its vocabulary-sharded logits for
        `loss_parallel`.
        """
        if cache is not None and (self.tok_embeddings is None or self.output is None):
            raise InputError("generation needs the whole model, not one pipeline stage")
        h = self.hidden(tokens, cache=cache, last_only=last_only, documents=documents, positions=positions)
        if labels is None:
            return self.output(h) if self.output is not None else h
        if self.output is None:
            raise ValueError("labels given to a model part without the output layer")
        if isinstance(self.output.weight, DTensor):
            return cross_entropy(self.output(h), labels)
        return linear_cross_entropy(h, self.output.weight, labels)

    def hidden(
        self,
        tokens: torch.Tensor,
        *,
        cache: Cache | None = None,
        last_only: bool = False,
        documents: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The final hidden states (after the last norm), or a pipeline stage's output hidden states."""
        seq = tokens.shape[1]
        if cache is not None and (documents is not None or positions is not None):
            raise InputError("documents and positions are inputs of training and evaluation, not of generation with a cache")
        if cache is not None:
            where = cache.begin(seq, self.args.max_seq_len)
        else:
            where = _FROM_ZERO if positions is None else Positions(rows=positions)
        mask = None
        if documents is not None:
            mask = attention_mask(documents, self.args.dropout if self.training else 0.0)
        if self.tok_embeddings is not None:
            h = self.tok_embeddings(tokens)
            if self.pos_embeddings is not None:
                h = h + self.pos_embeddings(where.indices(seq, tokens.device))
            if self.training:  # dropout is the identity otherwise (see TransformerBlock._drop)
                h = self.emb_dropout(h)
        else:  # a later pipeline stage: the input is the previous stage's hidden state
            h = tokens
        rope = where.angles(self.rope) if self.rope is not None else None
        for layer in self.layers.values():
            h = layer(h, rope, cache=cache, mask=mask)
        if last_only:
            h = h[:, -1:]
        if self.norm is not None:
            h = self.norm(h)
        return h

    def _tie(self) -> None:
        if self.args.tie_embeddings and self.output is not None and self.tok_embeddings is not None:
            self.output.weight = self.tok_embeddings.weight

    def to_empty(self, *, device: torch.device | str | int | None, recurse: bool = True) -> Transformer:
        """`Module.to_empty`, keeping tied embeddings tied: moving a plain (non-DTensor) parameter off
        the meta device makes a new Parameter per module that holds it, which would untie them.
        (DTensor parameters are swapped in place and stay tied.)"""
        super().to_empty(device=device, recurse=recurse)
        self._tie()
        return self

    def init_weights(
        self,
        buffer_device: torch.device | None = None,
        *,
        seed: int = 0,
        fill: Callable[[torch.Tensor, torch.Tensor], None] | None = None,
    ) -> None:
        """Megatron/GPT-3 initialisation, deterministic in (seed, FQN); recomputes the RoPE tables.

        `fill(param, full_value)` writes a parameter's full initial value into it; the default copies
        it. `selene.train.parallelize` passes one that keeps only this rank's shard of a DTensor, so a
        sharded model starts from exactly the single-process values.
        """
        fill = fill or copy_into
        with torch.no_grad():
            if self.rope is not None:
                device = buffer_device or self.rope.device
                self.rope = rope_tables(
                    self.args.head_dim, self.args.max_seq_len, self.args.rope_theta, device
                )
            for name, param in self.named_parameters():
                fqn = canonical_fqn(name)
                full = initial_value(
                    init_rule(self.args, fqn), param.shape, param.dtype, local_device(param), seed, fqn
                )
                fill(param, full)
