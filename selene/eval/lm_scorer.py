"""What the harness model (`selene.eval.lm.SeleneLM`) scores with, in a module of its own: a
training run builds one before lm-eval is imported (`selene.train.evaluate`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from selene.model.args import ModelArgs
from selene.model.transformer import Transformer
from selene.tokenize.tokenizer import Tokenizer


@dataclass
class Scorer:
    """What `SeleneLM` scores with: `logits` maps right-padded token ids (B, T) on `device` to
    logits (B, T, V) there; `model` is the whole model when this process holds it (generation then
    uses the KV cache), None for a sharded one (generation runs full forwards through `logits`)."""

    logits: Callable[[torch.Tensor], torch.Tensor]
    args: ModelArgs
    tokenizer: Tokenizer
    eod: int
    device: torch.device
    model: Transformer | None = None
    checkpoint: str | None = None  # where the weights came from; None: a model in memory
