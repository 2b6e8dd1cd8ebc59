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

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

import torch

from selene.errors import InputError
from selene.eval.decode_graph import GraphDecoder, attention_kernels
from selene.eval.decode_graph import decoder as graph_decoder
from selene.eval.decode_graph import enabled as graphs_enabled
from selene.train.model import Attention, ModelArgs, Transformer, TransformerBlock, apply_rope, attend, rotate

# selene's tokenizers put the end-of-document piece at id 1 (sentencepiece's eos, `selene.tokenize.spm`);
# pass the manifest's `eod_id` when in doubt.
DEFAULT_EOD = 1


def _contexts(
    args: ModelArgs, prompts: Sequence[Sequence[int]], temperature: float, top_p: float, stop_ids: Sequence[int]
) -> list[list[int]]:
    """The checked sampling settings and the context of each prompt: its ids, or the EOD token for an
    empty prompt (what precedes every document in training); ids outside the vocabulary are refused."""
    if temperature < 0:
        raise InputError(f"temperature must be >= 0, got {temperature}")
    if not 0.0 < top_p <= 1.0:
        raise InputError(f"top_p must be in (0, 1], got {top_p}")
    start_id = stop_ids[0] if stop_ids else DEFAULT_EOD
    contexts = [[int(t) for t in p] or [start_id] for p in prompts]
    bad = [t for c in contexts for t in c if not 0 <= t < args.vocab_size]
    if bad:
        raise InputError(f"prompt ids {bad[:5]} are outside the model's vocabulary of {args.vocab_size}")
    return contexts


def _generator(device: torch.device, temperature: float, seed: int | None) -> torch.Generator | None:
    """The sampling generator: None for greedy decoding; seeded, or nondeterministic on purpose."""
    if temperature <= 0:
        return None
    gen = torch.Generator(device=device)
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(seed)
    return gen


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _no_cudnn_attention(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run `fn` under `decode_graph.attention_kernels` (no cuDNN attention: a plan built per shape)."""

    @functools.wraps(fn)
    def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with attention_kernels():
            return fn(*args, **kwargs)

    return wrapped


@dataclass
class KVCache:
    """Per-layer keys and values, (batch, kv_heads, seen, head_dim) each, for the `seen` tokens so far:
    the model's key/value heads, which grouped-query attention makes fewer than its query heads.

    Each layer's keys and values live in a buffer with room to spare (`SPARE` positions, then
    doubling): a decode step writes its one position in place instead of copying the whole cache
    (a copy per step per layer made a step's cost grow with the context twice over)."""

    keys: list[torch.Tensor] = field(default_factory=list)  # buffers, (batch, kv_heads, capacity, head_dim)
    values: list[torch.Tensor] = field(default_factory=list)
    filled: list[int] = field(default_factory=list)  # positions in use, per layer

    SPARE = 256

    @property
    def seen(self) -> int:
        return self.filled[0] if self.filled else 0

    def extend(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
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

    def select(self, rows: torch.Tensor, drop: int) -> None:
        """Keep the batch rows `rows` and drop the first `drop` positions (columns of padding)."""
        self.keys = [k[rows, :, drop:] for k in self.keys]
        self.values = [v[rows, :, drop:] for v in self.values]
        self.filled = [n - drop for n in self.filled]


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
    k, v = cache.extend(layer, k, v)
    if pos == 0:
        out = attend(q, k, v, is_causal=True)
    else:  # new query i sits at absolute position pos + i and sees keys 0 .. pos + i
        total = k.shape[2]
        mask = torch.arange(total, device=x.device)[None, :] <= (pos + torch.arange(seq, device=x.device))[:, None]
        out = attend(q, k, v, attn_mask=mask)
    return attn.wo(out.transpose(1, 2).reshape(bs, seq, -1))


def _block(block: TransformerBlock, x: torch.Tensor, rope: torch.Tensor | None, pos: int, layer: int,
           cache: KVCache) -> torch.Tensor:
    # Dropout is the identity at inference: generation runs the model in eval mode.
    h = x + _attention(block.attention, block.attention_norm(x), rope, pos, layer, cache)
    return h + block.feed_forward(block.ffn_norm(h))


@torch.no_grad()
def forward_cached(model: Transformer, tokens: torch.Tensor, cache: KVCache, last_only: bool = False) -> torch.Tensor:
    """Logits (batch, seq, vocab) of `tokens`, which follow the `cache.seen` tokens already in `cache`
    ((batch, 1, vocab) of the last position with `last_only`).

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
    return _head(model, h, last_only)


def _head(model: Transformer, h: torch.Tensor, last_only: bool) -> torch.Tensor:
    """The final norm and output layer over the hidden states `h`, or over their last position alone."""
    if last_only:
        h = h[:, -1:]
    if model.norm is not None:
        h = model.norm(h)
    logits: torch.Tensor = model.output(h)  # type: ignore[misc]
    return logits


def sample(logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator | None) -> int:
    """One token id from the logits (vocab,) of the last position: argmax when temperature is 0, else
    nucleus sampling (the smallest set of most likely tokens whose probability reaches `top_p`)."""
    return int(draw(logits, temperature, top_p, gen))


def draw(logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator | None) -> torch.Tensor:
    """`sample`'s id as a 0-d int64 tensor on the logits' device, not read back: no host sync.

    The draw is `torch.multinomial(probs, 1, generator=gen)`'s own one-sample method spelled out
    (argmax of probs / q, q ~ Exp(1) from `gen`: the same ids from the same generator state, on CPU and
    CUDA): multinomial first checks its input with two reads to the host, each a sync on CUDA."""
    if temperature == 0:
        return logits.argmax()
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = probs.sort(descending=True)
        # Keep a token when the mass before it is below top_p: the most likely token always stays.
        keep = (sorted_p.cumsum(0) - sorted_p) < top_p
        sorted_p = sorted_p * keep
        probs = torch.zeros_like(probs).scatter_(0, order, sorted_p)
    return (probs / torch.empty_like(probs).exponential_(1, generator=gen)).argmax()


@torch.no_grad()
@_no_cudnn_attention
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
    (context,) = _contexts(args, [prompt_ids], temperature, top_p, stop_ids)
    device = next(model.parameters()).device
    gen = _generator(device, temperature, seed)
    window = args.max_seq_len
    stops = set(int(s) for s in stop_ids)
    cache = KVCache()
    pending = torch.tensor([context[-window:]], device=device)  # (1, n): tokens not yet in the cache
    out: list[int] = []
    for _ in range(max_tokens):
        if cache.seen + pending.shape[1] > window:  # the window slid: positions changed, rebuild
            cache = KVCache()
            pending = torch.tensor([(context + out)[-window:]], device=device)
        logits = forward_cached(model, pending, cache, last_only=True)
        picked = draw(logits[0, -1], temperature, top_p, gen)
        token = int(picked)  # the one read to the host a token (it waits for the forward): stop or not
        if token in stops:
            break
        out.append(token)
        pending = picked.view(1, 1)  # stays on the device: no copy back for the next step's input
    return out


# --- Batched generation ---------------------------------------------------------------------------
#
# N prompts share one forward per step. The prefill left-pads every context to the longest one; each
# row counts its positions from its first real token (so RoPE angles / learned rows are those of the
# unpadded run) and a key mask keeps padding out of every real query's attention. Rows that finish
# (a stop id, or `max_tokens`) are dropped from the batch and from the cache, and cache columns that
# have become padding in every remaining row are trimmed, so finished sequences cost nothing further.
# Greedy output equals `generate` of each prompt alone (up to float ties); sampled output is
# deterministic for a seed but is not the one-by-one sample stream (one generator serves all rows).


@dataclass
class BatchGeneration:
    """New ids per prompt (same order as the prompts) and the batch's timings, in seconds.

    `ttft_s`: start to the first token of every row (the prefill plus the first sample); `itl_s`: one
    entry per further decode step of the batch; `total_s`: the whole call, but not `setup_s`: the
    capture of a CUDA graph for the batch's decode step, done before the clock starts and once per
    shape (zero when an earlier batch's graph served, or with no graph: `graph` False).
    """

    tokens: list[list[int]]
    ttft_s: float
    itl_s: list[float]
    total_s: float
    setup_s: float = 0.0
    graph: bool = False

    @property
    def generated(self) -> int:
        return sum(len(t) for t in self.tokens)


def _rope_rows(tables: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (batch, seq, 1, head_dim // 2) of positions (batch, seq): gathered once a forward,
    for every layer (each layer gathering its own costs four kernel launches a layer, which bound a bf16
    decode step on CUDA by the host)."""
    return tables[0][positions][:, :, None, :], tables[1][positions][:, :, None, :]


def _padded_attention(attn: Attention, x: torch.Tensor, rot: tuple[torch.Tensor, torch.Tensor] | None,
                      mask: torch.Tensor | None, layer: int, cache: KVCache) -> torch.Tensor:
    bs, seq, _ = x.shape
    q = attn.wq(x).view(bs, seq, -1, attn.head_dim)
    k = attn.wk(x).view(bs, seq, -1, attn.head_dim)
    v = attn.wv(x).view(bs, seq, -1, attn.head_dim)
    if attn.rope and rot is not None:
        q, k = rotate(q, *rot), rotate(k, *rot)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    k, v = cache.extend(layer, k, v)
    # no mask: rows without padding (`forward_padded`), a prefill or one new token per row
    out = attend(q, k, v, attn_mask=mask, is_causal=mask is None and seq > 1)
    return attn.wo(out.transpose(1, 2).reshape(bs, seq, -1))


@torch.no_grad()
def forward_padded(model: Transformer, tokens: torch.Tensor, pads: torch.Tensor, cache: KVCache,
                   last_only: bool = False, pad_list: Sequence[int] | None = None) -> torch.Tensor:
    """Logits (batch, seq, vocab) of `tokens` after the `cache.seen` columns in `cache`, for left-padded rows;
    with `last_only`, (batch, 1, vocab) of the last column alone (what sampling needs: a prefill then
    skips the output layer for every prompt position but the last).

    Row b's first `pads[b]` columns (of the cache and `tokens` together) are padding: its real tokens are
    at positions 0, 1, ... from column `pads[b]` on, and no real query attends to a padding key. (A
    padding query attends to itself only, so its values stay finite; its logits mean nothing.)
    `pad_list`: the same pads on the host, when the caller has them: the checks below then read nothing
    back from the device (on CUDA each read is a sync that stalls the kernel launches behind it).
    """
    if model.tok_embeddings is None or model.output is None:
        raise InputError("generation needs the whole model, not one pipeline stage")
    start, seq = cache.seen, tokens.shape[1]
    host_pads = list(pad_list) if pad_list is not None else pads.tolist()
    cols = torch.arange(start, start + seq, device=tokens.device)
    positions = (cols[None, :] - pads[:, None]).clamp(min=0)  # (batch, seq)
    top = max(start + seq - 1 - min(host_pads), 0)  # positions.max(), from the host's pads
    if top >= model.args.max_seq_len:
        raise InputError(f"{top + 1} positions exceed the model's max_seq_len {model.args.max_seq_len}")
    mask: torch.Tensor | None = None  # None: plain causal attention (below)
    if any(host_pads) or (start and seq > 1):
        keys = torch.arange(start + seq, device=tokens.device)
        causal = keys[None, :] <= cols[:, None]  # (seq, keys)
        real = keys[None, :] >= pads[:, None]  # (batch, keys)
        mask = (causal[None] & real[:, None, :]) | (keys[None, None, :] == cols[None, :, None])
        mask = mask[:, None]  # (batch, 1, seq, keys): broadcast over heads
    # else no row is padded: a prefill is causal attention from position 0, and one new token sees every
    # key; SDPA's causal kernels then never build a (batch, heads, seq, keys) mask or score matrix
    h = model.tok_embeddings(tokens)
    if model.pos_embeddings is not None:
        h = h + model.pos_embeddings(positions)
    rot = _rope_rows(model.rope, positions) if model.rope is not None else None
    for i, block in enumerate(model.layers.values()):
        x = block.attention_norm(h)  # type: ignore[operator]
        h = h + _padded_attention(block.attention, x, rot, mask, i, cache)  # type: ignore[arg-type]
        h = h + block.feed_forward(block.ffn_norm(h))  # type: ignore[operator]
    return _head(model, h, last_only)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
@_no_cudnn_attention
def generate_batch(
    model: Transformer,
    args: ModelArgs,
    prompts: Sequence[Sequence[int]],
    max_tokens: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
    seed: int | None = None,
    stop_ids: Sequence[int] = (DEFAULT_EOD,),
) -> BatchGeneration:
    """`generate` for several prompts at once: one forward per step for the whole batch (see above).

    Same arguments and rules as `generate` (empty prompt = new document, left truncation to
    ``max_seq_len``, stop ids not returned); `tokens[i]` are the new ids after `prompts[i]`.

    On CUDA a step reads one small tensor back to the host, the step's sampled ids (which rows stop):
    that read waits for the step's kernels, so the clock is read right after it and TTFT / ITL are
    GPU time, not launch time. The next step's input is the sampled ids as they are on the device, and
    the pads' checks use their host copy, so nothing else waits on the device.
    """
    if not prompts:
        raise InputError("no prompts to generate from")
    if max_tokens < 1:
        raise InputError(f"max_tokens must be >= 1, got {max_tokens}")
    contexts = _contexts(args, prompts, temperature, top_p, stop_ids)
    device = next(model.parameters()).device
    window = args.max_seq_len
    width = max(len(c[-window:]) for c in contexts)
    graph: GraphDecoder | None = None
    setup = 0.0
    # every decode step a replay of one captured graph, when the whole generation fits the window
    # (a slide rebuilds the cache at new positions: the eager path below)
    if max_tokens > 1 and graphs_enabled(device) and width + max_tokens - 1 <= window:
        t0 = time.perf_counter()
        graph, built = graph_decoder(model, len(contexts), width + max_tokens - 1, capture=device.type == "cuda")
        setup = time.perf_counter() - t0 if built else 0.0
    _sync(device)  # earlier work still queued on the device is not this call's
    begin = time.perf_counter()
    gen = _generator(device, temperature, seed)
    stops = set(int(s) for s in stop_ids)
    outs: list[list[int]] = [[] for _ in contexts]
    active = list(range(len(contexts)))  # prompt index of each batch row
    finished: set[int] = set()  # rows done but still in a graph's batch (their tokens are not kept)
    cache = KVCache()
    pad_list: list[int] = []  # left padding of each row, on the host ...
    pads = torch.zeros(0, dtype=torch.long, device=device)  # ... and on the device
    step_input: torch.Tensor | None = None  # (rows, 1): the last sampled tokens, not yet in the cache
    ttft = 0.0
    itl: list[float] = []
    last = begin
    for step in range(max_tokens):
        if graph is not None and step_input is not None:
            logits = graph.step(step_input)
        else:
            if step_input is None or cache.seen + 1 > window:  # prefill, or the window slid: rebuild
                rows = [(contexts[i] + outs[i])[-window:] for i in active]
                width = max(len(r) for r in rows)
                pad_list = [width - len(r) for r in rows]
                pads = torch.tensor(pad_list, device=device)
                step_input = torch.tensor([[r[0]] * (width - len(r)) + r for r in rows], device=device)
                cache = KVCache()
            logits = forward_padded(model, step_input, pads, cache, last_only=True, pad_list=pad_list)[:, -1]
            if graph is not None:
                graph.load(cache.keys, cache.values, width, pads)
                cache = KVCache()
        if temperature == 0:
            ids = logits.argmax(dim=-1)
        else:
            ids = torch.stack([draw(logits[j], temperature, top_p, gen) for j in range(len(active))])
        picked = ids.tolist()  # the step's one read to the host: it waits for the step's kernels
        now = time.perf_counter()
        if step == 0:
            ttft = now - begin
        else:
            itl.append(now - last)  # token to token, the bookkeeping between steps included
        last = now
        keep: list[int] = []
        for j, (i, token) in enumerate(zip(active, picked, strict=True)):
            if j in finished:
                continue
            if token in stops:
                finished.add(j)
                continue
            outs[i].append(int(token))
            if len(outs[i]) < max_tokens:
                keep.append(j)
            else:
                finished.add(j)
        if not keep:
            break
        if graph is None and len(keep) < len(active):  # drop the finished rows, then the all-padding columns
            index = torch.tensor(keep, device=device)
            trim = min(pad_list[j] for j in keep)
            pad_list = [pad_list[j] - trim for j in keep]
            pads = pads[index] - trim
            cache.select(index, trim)
            ids = ids[index]
            active = [active[j] for j in keep]
            finished.clear()
        step_input = ids[:, None]
    _sync(device)
    return BatchGeneration(tokens=outs, ttft_s=ttft, itl_s=itl, total_s=time.perf_counter() - begin,
                           setup_s=setup, graph=graph is not None)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between order statistics; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def timing_summary(batches: Sequence[BatchGeneration]) -> dict[str, float | int | None]:
    """TTFT (one per batch) and ITL (one per decode step) p50/p99 in ms, and generated tokens per second
    of the total time of the batches. Percentiles of no samples (e.g. one token per prompt) are None."""
    ttft = [b.ttft_s * 1e3 for b in batches]
    itl = [s * 1e3 for b in batches for s in b.itl_s]
    total = sum(b.total_s for b in batches)
    generated = sum(b.generated for b in batches)
    return {
        "batches": len(batches),
        "cuda_graphs": any(b.graph for b in batches),
        "graph_setup_s": sum(b.setup_s for b in batches),
        "prompts": sum(len(b.tokens) for b in batches),
        "generated_tokens": generated,
        "total_s": total,
        "tokens_per_s": generated / total if total > 0 else None,
        "ttft_ms_p50": percentile(ttft, 50),
        "ttft_ms_p99": percentile(ttft, 99),
        "itl_ms_p50": percentile(itl, 50),
        "itl_ms_p99": percentile(itl, 99),
    }
