"""Sampling from a selene `Transformer` with a key/value cache, without touching the model code.

The training model has no cache (and should not: parallelism wraps its modules from outside), so
`forward_cached` re-walks the same modules and weights — embeddings, each block's norms and
projections, the RoPE tables or learned positions, the final norm and the output layer — and keeps
each layer's keys and values. It must compute exactly what `Transformer.forward` computes; the tests
compare the two at every position.

Context beyond ``max_seq_len`` is left-truncated: the model always sees the last ``max_seq_len``
tokens. Positions are absolute (RoPE angles or learned rows), so once the window slides the cached
keys are stale and every further step re-runs the window from scratch (one full forward per token);
below the limit each step costs one token's forward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from selene.errors import InputError
from selene.train.model import Attention, ModelArgs, Transformer, TransformerBlock, apply_rope

# selene's tokenizers put the end-of-document piece at id 1 (sentencepiece's eos, `selene.tokenize.spm`);
# pass the manifest's `eod_id` when in doubt.
DEFAULT_EOD = 1


@dataclass
class KVCache:
    """Per-layer keys and values, (batch, heads, seen, head_dim) each, for the `seen` tokens so far."""

    keys: list[torch.Tensor] = field(default_factory=list)
    values: list[torch.Tensor] = field(default_factory=list)

    @property
    def seen(self) -> int:
        return 0 if not self.keys else int(self.keys[0].shape[2])


def _attention(attn: Attention, x: torch.Tensor, rope: torch.Tensor | None, pos: int, layer: int,
               cache: KVCache) -> torch.Tensor:
    """`Attention.forward` for tokens at positions pos.. , attending to the cached ones before them."""
    bs, seq, _ = x.shape
    q = attn.wq(x).view(bs, seq, -1, attn.head_dim)
    k = attn.wk(x).view(bs, seq, -1, attn.head_dim)
    v = attn.wv(x).view(bs, seq, -1, attn.head_dim)
    if attn.rope and rope is not None:
        # apply_rope takes the first `seq` rows of the tables it is given: start them at `pos`.
        q, k = apply_rope(q, rope[:, pos:]), apply_rope(k, rope[:, pos:])
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    if layer < len(cache.keys):
        k = torch.cat([cache.keys[layer], k], dim=2)
        v = torch.cat([cache.values[layer], v], dim=2)
        cache.keys[layer], cache.values[layer] = k, v
    else:
        cache.keys.append(k)
        cache.values.append(v)
    if pos == 0:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:  # new query i sits at absolute position pos + i and sees keys 0 .. pos + i
        total = k.shape[2]
        mask = torch.arange(total, device=x.device)[None, :] <= (pos + torch.arange(seq, device=x.device))[:, None]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return attn.wo(out.transpose(1, 2).reshape(bs, seq, -1))


def _block(block: TransformerBlock, x: torch.Tensor, rope: torch.Tensor | None, pos: int, layer: int,
           cache: KVCache) -> torch.Tensor:
    # Dropout is the identity at inference: generation runs the model in eval mode.
    h = x + _attention(block.attention, block.attention_norm(x), rope, pos, layer, cache)
    return h + block.feed_forward(block.ffn_norm(h))


@torch.no_grad()
def forward_cached(model: Transformer, tokens: torch.Tensor, cache: KVCache) -> torch.Tensor:
    """Logits (batch, seq, vocab) of `tokens`, which follow the `cache.seen` tokens already in `cache`.

    With an empty cache this is `model(tokens)`; the cache is extended in place.
    """
    if model.tok_embeddings is None or model.output is None:
        raise InputError("generation needs the whole model, not one pipeline stage")
    pos = cache.seen
    seq = tokens.shape[1]
    if pos + seq > model.args.max_seq_len:
        raise InputError(f"{pos + seq} positions exceed the model's max_seq_len {model.args.max_seq_len}")
    h = model.tok_embeddings(tokens)
    if model.pos_embeddings is not None:
        h = h + model.pos_embeddings(torch.arange(pos, pos + seq, device=tokens.device))
    for i, layer in enumerate(model.layers.values()):
        h = _block(layer, h, model.rope, pos, i, cache)  # type: ignore[arg-type]
    if model.norm is not None:
        h = model.norm(h)
    logits: torch.Tensor = model.output(h)
    return logits


def sample(logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator | None) -> int:
    """One token id from the logits (vocab,) of the last position: argmax when temperature is 0, else
    nucleus sampling (the smallest set of most likely tokens whose probability reaches `top_p`)."""
    if temperature == 0:
        return int(logits.argmax())
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = probs.sort(descending=True)
        # Keep a token when the mass before it is below top_p: the most likely token always stays.
        keep = (sorted_p.cumsum(0) - sorted_p) < top_p
        sorted_p = sorted_p * keep
        probs = torch.zeros_like(probs).scatter_(0, order, sorted_p)
    return int(torch.multinomial(probs, 1, generator=gen))


@torch.no_grad()
def generate(
    model: Transformer,
    args: ModelArgs,
    prompt_ids: Sequence[int],
    max_tokens: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
    seed: int | None = None,
    stop_ids: Sequence[int] = (DEFAULT_EOD,),
) -> list[int]:
    """Up to `max_tokens` new ids after `prompt_ids` (the prompt is not returned).

    Greedy when `temperature` is 0; otherwise sampled with a `torch.Generator` seeded by `seed`, so the
    same seed gives the same tokens (on the same device type). Generation stops at the first id in
    `stop_ids` (the end-of-document token), which is not returned. An empty prompt starts a new document:
    the context is then the EOD token, which is what precedes every document in training.
    """
    if temperature < 0:
        raise InputError(f"temperature must be >= 0, got {temperature}")
    if not 0.0 < top_p <= 1.0:
        raise InputError(f"top_p must be in (0, 1], got {top_p}")
    context = [int(t) for t in prompt_ids] or [stop_ids[0] if stop_ids else DEFAULT_EOD]
    bad = [t for t in context if not 0 <= t < args.vocab_size]
    if bad:
        raise InputError(f"prompt ids {bad[:5]} are outside the model's vocabulary of {args.vocab_size}")
    device = next(model.parameters()).device
    gen = None
    if temperature > 0:
        gen = torch.Generator(device=device)
        if seed is None:
            gen.seed()  # nondeterministic on purpose
        else:
            gen.manual_seed(seed)
    window = args.max_seq_len
    stops = set(int(s) for s in stop_ids)
    cache = KVCache()
    pending = context[-window:]  # tokens not yet in the cache
    out: list[int] = []
    for _ in range(max_tokens):
        if cache.seen + len(pending) > window:  # the window slid: positions changed, rebuild
            cache = KVCache()
            pending = (context + out)[-window:]
        logits = forward_cached(model, torch.tensor([pending], device=device), cache)
        token = sample(logits[0, -1], temperature, top_p, gen)
        if token in stops:
            break
        out.append(token)
        pending = [token]
    return out
