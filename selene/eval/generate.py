"""Sampling from a selene `Transformer`: the model's own forward with a key/value cache
(`selene.model.cache.KVCache`), one token's forward a step.

Context beyond ``max_seq_len`` is left-truncated: the model always sees the last ``max_seq_len``
tokens. Positions are absolute (RoPE angles or learned rows), so once the window slides the cached
keys are stale and every further step re-runs the window from scratch (one full forward per token);
below the limit each step costs one token's forward.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import torch

from selene.errors import InputError
from selene.eval.decode_graph import GraphDecoder, attention_kernels
from selene.eval.decode_graph import decoder as graph_decoder
from selene.eval.decode_graph import enabled as graphs_enabled
from selene.model.args import ModelArgs
from selene.model.cache import KVCache
from selene.model.transformer import Transformer

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
        logits = model(pending, cache=cache, last_only=True)
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
                pad_list = [width - len(r) for r in rows]  # left padding of each row, on the host ...
                pads = torch.tensor(pad_list, device=device)  # ... and on the device
                step_input = torch.tensor([[r[0]] * (width - len(r)) + r for r in rows], device=device)
                cache = KVCache(pads=pads, pad_list=pad_list)
            logits = model(step_input, cache=cache, last_only=True)[:, -1]
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
            ids = ids[cache.select(keep)]
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
