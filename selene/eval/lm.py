"""lm-eval-harness adapter: a selene checkpoint as the harness's `LM` (registered as ``"selene"``).

We subclass the harness's `TemplateLM`, so the context/continuation split is the harness's own
(`TemplateLM._encode_pair`): trailing spaces of the context move to the continuation, then
``context + continuation`` is encoded whole and the continuation is the whole's tokens after the
context's. Encoding the two halves separately would be wrong with sentencepiece whenever the boundary
falls inside a word ("recurs" + "ion"): the model never saw that segmentation. An empty context is
conditioned on the end-of-document token — the model was trained on EOD-separated documents with no
BOS, so EOD is what precedes the start of any text it knows.

Scoring is plain full-sequence forward passes on one device in float32: inputs are left-truncated to
the model's context (`max_seq_len`: the RoPE tables / learned positions end there), sorted by length
descending as the harness's `Collator` does (the first batch is the largest, so an out-of-memory shows
at once; equal lengths pad little), padded on the right (causal attention: padding after a position
cannot change its logits) and put back in request order. What a request needs is computed where the
logits are: the log-softmax of its continuation's positions only, the continuation tokens' log-probs
summed and the greedy check; a batch then copies two numbers a request to the host, not its
(batch × seq × vocab) log-probs.

The model is a checkpoint loaded into this process, or a model already in memory (`Scorer`): the
training run scores its own sharded model through it (`selene.train.evaluate`), with the same request
order, truncation, batching and reductions, so its numbers are the ones `selene eval` gives on the
checkpoint of that step.

float32 on CUDA too (no bf16 autocast): scoring is a small part of an evaluation, bf16's 8-bit
mantissa moves log-likelihoods by more than the gaps between close multiple-choice answers, and the
same checkpoint scores the same on either device (CUDA's matmuls are not TF32 unless a caller
enables it).
"""

from __future__ import annotations

import importlib
from typing import Any

import torch
import torch.nn.functional as F
from lm_eval.api.instance import Instance
from lm_eval.api.model import TemplateLM
from lm_eval.api.registry import register_model
from lm_eval.models.utils import Collator
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

from selene.errors import ConfigError, InputError
from selene.eval import checkpoint_io
from selene.eval.lm_scorer import Scorer

# (request key for the cache hook, context tokens, continuation tokens)
TokenRequest = tuple[Any, list[int], list[int]]


def checkpoint_scorer(checkpoint: str, device: str | torch.device | None = "auto") -> Scorer:
    """A checkpoint's model loaded into this process (float32, eval mode) with its tokenizer."""
    where = checkpoint_io.pick_device(device)  # auto: cuda when there is a GPU
    loaded = checkpoint_io.load_model(checkpoint, device=where)
    tok = checkpoint_io.tokenizer(loaded.path)
    return Scorer(
        logits=loaded.model, args=loaded.args, tokenizer=tok, eod=checkpoint_io.eod_id(tok, loaded.meta),
        device=where, model=loaded.model, checkpoint=loaded.path,
    )  # fmt: skip


@register_model("selene")
class SeleneLM(TemplateLM):
    """A selene checkpoint scored by the harness: loglikelihood, rolling loglikelihood, generation.

    `max_length` may shorten the model's context (never lengthen it: positions past `max_seq_len` have
    no embedding). `max_batch_size` and unknown harness options are accepted and ignored so that
    ``lm_eval --model selene --model_args checkpoint=...`` works as well as passing an instance.
    """

    def __init__(
        self,
        checkpoint: str | None = None,
        batch_size: int | str = 8,
        device: str | None = "auto",
        max_length: int | None = None,
        max_gen_toks: int = 256,
        seed: int = 1234,
        *,
        scorer: Scorer | None = None,
        **_ignored: Any,
    ) -> None:
        super().__init__()
        if scorer is None:
            if not checkpoint:
                raise ConfigError("the selene harness model needs checkpoint=DIR (a step-NNNNNN directory)")
            scorer = checkpoint_scorer(checkpoint, device)
        self.scorer = scorer
        self._device = scorer.device
        self.model = scorer.model
        self.args = scorer.args
        self.checkpoint = scorer.checkpoint
        self.tok = scorer.tokenizer
        self._eod = scorer.eod
        limit = self.args.max_seq_len
        self._max_length = min(int(max_length), limit) if max_length else limit
        # "auto" (the harness's batch-size search) has nothing to search on CPU; fall back to 8.
        self.batch_size = int(batch_size) if str(batch_size).isdigit() else 8
        self.max_gen_toks = int(max_gen_toks)
        self.seed = seed

    # ------------------------------------------------------------------ TemplateLM plumbing
    @property
    def eot_token_id(self) -> int:
        return self._eod

    @property
    def max_length(self) -> int:
        return self._max_length

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, **kwargs: Any) -> list[int]:
        """Token ids of `string`; no BOS/EOS is ever added (training data had none but EOD)."""
        return self.tok.encode(string)

    def tok_decode(self, tokens: list[int]) -> str:
        return self.tok.decode(tokens)

    @torch.no_grad()
    def _logits(self, batch: list[list[int]]) -> torch.Tensor:
        """Logits (B, T, V) of right-padded `batch`, left where the model is (no copy to the host)."""
        width = max(len(x) for x in batch)
        pad = torch.zeros(len(batch), width, dtype=torch.long)
        for i, x in enumerate(batch):
            pad[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        logits: torch.Tensor = self.scorer.logits(pad.to(self._device))
        return logits

    def _loglikelihood_tokens(
        self, requests: list[TokenRequest], disable_tqdm: bool = False, **kwargs: Any
    ) -> list[tuple[float, bool]]:
        """(sum of log p(continuation token), every continuation token is the argmax) per request.

        A continuation longer than the context (a long multiple-choice ending on a small model) is
        scored in pieces of `max_length` tokens, each conditioned on everything before it (left-truncated)
        — the same numbers one pass would give with a longer context, where the HF adapter just asserts."""
        pieces: list[TokenRequest] = []
        owner: list[int] = []
        for i, (key, ctx, cont) in enumerate(requests):
            if not cont:
                raise InputError(f"empty continuation after tokenization (request {str(key)[:80]!r})")
            for start in range(0, len(cont), self.max_length):
                pieces.append((key, ctx + cont[:start], cont[start : start + self.max_length]))
                owner.append(i)
        scores = self._score(pieces)
        totals: list[tuple[float, bool]] = [(0.0, True)] * len(requests)
        for i, (lp, greedy) in zip(owner, scores, strict=True):
            totals[i] = (totals[i][0] + lp, totals[i][1] and greedy)
        for (key, _, _), answer in zip(requests, totals, strict=True):
            if key is not None:
                self.cache_hook.add_partial("loglikelihood", key, answer)
        return totals

    def _score(self, requests: list[TokenRequest]) -> list[tuple[float, bool]]:
        """`_loglikelihood_tokens` for continuations that fit the context: batched, in request order."""

        def sort_key(req: TokenRequest) -> tuple[int, tuple[int, ...]]:
            toks = req[1] + req[2]
            return -len(toks), tuple(toks)

        collator = Collator(requests, sort_fn=sort_key, group_by=None)
        results: list[tuple[float, bool]] = []
        for chunk in collator.get_batched(n=self.batch_size):
            # the last token is only predicted, never fed; keep at most max_length inputs (left-truncate)
            inputs = [(ctx + cont)[-(self.max_length + 1) :][:-1] for _, ctx, cont in chunk]
            results.extend(self._score_batch(inputs, [cont for _, _, cont in chunk]))
        return list(collator.get_original(results))

    @torch.no_grad()
    def _score_batch(self, inputs: list[list[int]], conts: list[list[int]]) -> list[tuple[float, bool]]:
        """(sum of log p(continuation), greedy) of each row, computed on the model's device: the
        log-softmax of the continuation's positions alone (position t predicts token t+1), the targets'
        log-probs summed and the argmax compared there; one (2, B) float32 tensor comes back to the host.

        The same float32 numbers as a log-softmax of the whole batch copied to the host: each position's
        log-softmax depends on its own logits only, and each row sums the same values in the same order
        (tests/eval/test_eval.py compares them)."""
        # every continuation token in one tensor, moved before the forward is queued (on CUDA a copy
        # from the host waits for the device; the forward is not queued yet)
        targets = torch.tensor([t for cont in conts for t in cont], dtype=torch.long).to(self._device)
        logits = self._logits(inputs)
        sums: list[torch.Tensor] = []
        greedy: list[torch.Tensor] = []
        offset = 0
        for row, (inp, cont) in enumerate(zip(inputs, conts, strict=True)):
            lp = F.log_softmax(logits[row, len(inp) - len(cont) : len(inp)].float(), dim=-1)  # (len(cont), V)
            target = targets[offset : offset + len(cont)]
            offset += len(cont)
            sums.append(lp.gather(1, target[:, None]).sum())
            greedy.append((lp.argmax(dim=-1) == target).all())
        back = torch.stack([torch.stack(sums), torch.stack(greedy).float()]).tolist()
        return [(total, flag == 1.0) for total, flag in zip(back[0], back[1], strict=True)]

    # ------------------------------------------------------------------ rolling loglikelihood
    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        """Total log-likelihood of each whole text (perplexity tasks): disjoint windows of the model's
        context, the first conditioned on EOD, each later one on the tokens before it (up to the context),
        so every token is scored exactly once."""
        windows: list[TokenRequest] = []
        owner: list[int] = []
        for i, req in enumerate(requests):
            tokens = self.tok_encode(req.args[0])
            for ctx, cont in map(
                make_disjoint_window,
                get_rolling_token_windows(
                    token_list=tokens,
                    prefix_token=self.prefix_token_id,
                    max_seq_len=self.max_length,
                    context_len=1,
                ),
            ):
                windows.append((None, ctx, cont))
                owner.append(i)
        scores = self._score(windows)
        totals = [0.0] * len(requests)
        for i, (lp, _) in zip(owner, scores, strict=True):
            totals[i] += lp
        for req, total in zip(requests, totals, strict=True):
            self.cache_hook.add_partial("loglikelihood_rolling", (req.args[0],), total)
        return totals

    # ------------------------------------------------------------------ generation
    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        """Continue each context until a stop string appears in the decoded text (cut there), EOD, or
        `max_gen_toks`. Greedy unless the request asks for `do_sample` with a temperature > 0."""
        out: list[str] = []
        for req in requests:
            context, kwargs = req.args[0], dict(req.args[1] or {})
            until = kwargs.get("until") or [self.tok_decode([self.eot_token_id])]
            until = [until] if isinstance(until, str) else list(until)
            max_new = int(kwargs.get("max_gen_toks", self.max_gen_toks))
            temperature = float(kwargs.get("temperature", 0.0)) if kwargs.get("do_sample", False) else 0.0
            top_p = float(kwargs.get("top_p", 1.0))
            prompt = self.tok_encode(context) if context else [self.eot_token_id]
            # keep room for the new tokens inside the context window, like the HF adapter
            prompt = prompt[-max(1, self.max_length - max_new) :]
            ids = self._generate(prompt, max_new, temperature, top_p, until)
            text = self.tok_decode(ids)
            for stop in until:
                if stop:
                    text = text.split(stop)[0]
            out.append(text)
            self.cache_hook.add_partial("generate_until", (context, req.args[1]), text)
        return out

    def _generate(
        self, prompt: list[int], max_new: int, temperature: float, top_p: float, until: list[str]
    ) -> list[int]:
        """New token ids after `prompt`: `selene.eval.generate.generate` (KV cache) when this process holds
        the whole model, else (a sharded model in a training run) a full-forward loop that also stops as soon as a stop string shows in the decoded text."""
        try:
            gen = importlib.import_module("selene.eval.generate").generate
        except (ImportError, AttributeError):
            gen = None
        if gen is not None and self.model is not None:
            ids = gen(
                self.model, self.args, prompt, max_new, temperature, top_p, self.seed, [self.eot_token_id]
            )
            return [int(t) for t in ids if int(t) != self.eot_token_id]
        rng = torch.Generator().manual_seed(self.seed)
        seq, new = list(prompt), []  # type: list[int], list[int]
        for _ in range(max_new):
            last = self._logits([seq[-self.max_length :]])[0, -1]
            nxt = _pick(F.log_softmax(last.float(), dim=-1).cpu(), temperature, top_p, rng)
            if nxt == self.eot_token_id:
                break
            seq.append(nxt)
            new.append(nxt)
            text = self.tok_decode(new)
            if any(stop and stop in text for stop in until):
                break
        return new


def _pick(logprobs: torch.Tensor, temperature: float, top_p: float, rng: torch.Generator) -> int:
    """Greedy at temperature 0; otherwise nucleus sampling from softmax(logprobs / temperature)."""
    if temperature <= 0:
        return int(logprobs.argmax())
    probs = F.softmax(logprobs / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = probs.sort(descending=True)
        keep = sorted_p.cumsum(0) - sorted_p < top_p
        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
    return int(torch.multinomial(probs, 1, generator=rng))
