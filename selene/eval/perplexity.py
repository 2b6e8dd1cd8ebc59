"""Perplexity and bits per byte of a checkpoint on the documents its training held out.

The held-out documents are recomputed, not stored: `selene.train.data.split_documents` is a pure
function of (number of documents, valid_fraction, seed), and the checkpoint's meta.json keeps the
training config, so we get exactly the documents training never saw (per prefix of a blend).

Each document is scored as training saw documents: its tokens end with EOD, and its first token is
conditioned on EOD (the end of whatever came before it in the packed stream). A document longer than
the context is scored in disjoint windows of `max_seq_len` predictions, each conditioned on the
tokens just before it (`SeleneLM.loglikelihood_rolling`'s scheme), so every token counts once.

Bits per byte divides by the UTF-8 bytes of the decoded text instead of by tokens, so models with
different tokenizers (or vocabulary sizes) are comparable: bpb = total nats / ln 2 / total bytes.
"""

from __future__ import annotations

import math
import os
from typing import Any

from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

from selene.errors import ConfigError, InputError
from selene.eval import checkpoint_io
from selene.eval.lm import SeleneLM
from selene.tokenize.indexed import IndexedDataset
from selene.train.checkpoint import check_tokenizer
from selene.train.data import split_documents, tokenizer_sha256


def heldout_perplexity(
    checkpoint: str,
    *,
    prefixes: list[str] | None = None,
    valid_fraction: float | None = None,
    seed: int | None = None,
    max_documents: int | None = None,
    batch_size: int = 8,
    device: str = "auto",
) -> dict[str, Any]:
    """{tokens, documents, loss (nats/token), perplexity, bits_per_byte} on the held-out split.

    `prefixes`, `valid_fraction` and `seed` default to the checkpoint's training data config; override
    `prefixes` when the token data moved. `max_documents` caps the documents scored (the first ones
    of each prefix's held-out split, in id order) for a quick estimate.
    """
    lm = SeleneLM(checkpoint, batch_size=batch_size, device=device)
    path = lm.checkpoint or checkpoint  # the resolved step directory
    data_cfg = _data_config(lm)
    prefixes = prefixes if prefixes is not None else list(data_cfg.get("prefixes") or [])
    fraction = float(valid_fraction if valid_fraction is not None else data_cfg.get("valid_fraction", 0.02))
    seed = int(seed if seed is not None else data_cfg.get("seed", 1234))
    if not prefixes:
        raise ConfigError(
            f"checkpoint {path}: its training config names no token data (train.data.prefixes), "
            "so there is no held-out split to score; set eval.perplexity: false"
        )

    meta = checkpoint_io.read_meta(path)
    eod = lm.eot_token_id
    windows: list[tuple[Any, list[int], list[int]]] = []
    n_tokens = n_bytes = n_docs = 0
    for prefix in prefixes:
        if not (os.path.exists(prefix + ".idx") and os.path.exists(prefix + ".bin")):
            raise InputError(
                f"token dataset {prefix}.bin/.idx, the checkpoint's training data, not found (moved or "
                "removed): held-out perplexity needs it there (or set eval.perplexity: false)"
            )
        check_tokenizer(meta, path, tokenizer_sha256([prefix]), f"the tokenizer of {prefix}", InputError)
        ds = IndexedDataset(prefix)
        _, valid = split_documents(len(ds), fraction, seed)
        for doc_id in valid[:max_documents] if max_documents else valid:
            tokens = [int(t) for t in ds[int(doc_id)]]
            if tokens and tokens[-1] != eod:  # data written without EOD: score it as training would see it
                tokens.append(eod)
            n_tokens += len(tokens)
            n_bytes += len(lm.tok_decode([t for t in tokens if t != eod]).encode("utf-8"))
            n_docs += 1
            windows += _windows(tokens, eod, lm.max_length)
    if not n_tokens:
        raise InputError(
            f"no held-out documents in {prefixes} (train.data.valid_fraction {fraction}): train with a "
            "larger train.data.valid_fraction to score held-out perplexity"
        )
    nats = -sum(lp for lp, _ in lm._score(windows))
    loss = nats / n_tokens
    return {
        "tokens": n_tokens,
        "documents": n_docs,
        "loss": loss,
        "perplexity": math.exp(loss),
        "bits_per_byte": nats / math.log(2) / max(n_bytes, 1),
        "bytes": n_bytes,
        "prefixes": prefixes,
        "valid_fraction": fraction,
        "seed": seed,
    }


def text_bits_per_byte(
    checkpoint: str, texts: list[str], *, batch_size: int = 8, device: str = "auto"
) -> dict[str, Any]:
    """{documents, tokens, bytes, loss, bits_per_byte} of a checkpoint on `texts` (`bits_per_byte`)."""
    if not texts:
        raise InputError("no reference texts to score")
    return bits_per_byte(SeleneLM(checkpoint, batch_size=batch_size, device=device), texts)


def bits_per_byte(lm: SeleneLM, texts: list[str]) -> dict[str, Any]:
    """{documents, tokens, bytes, loss, bits_per_byte} of the harness model `lm` on `texts` (a fixed
    reference set, e.g. the same for models with different tokenizers): each text encoded with the
    model's tokenizer and ended with EOD, scored as the held-out documents are; the bytes are those of
    the texts themselves, so a tokenizer that cannot represent some text gains nothing by it."""
    if not texts:
        raise InputError("no reference texts to score")
    eod = lm.eot_token_id
    windows: list[tuple[Any, list[int], list[int]]] = []
    n_tokens = n_bytes = 0
    for text in texts:
        tokens = [*lm.tok_encode(text), eod]
        n_tokens += len(tokens)
        n_bytes += len(text.encode("utf-8"))
        windows += _windows(tokens, eod, lm.max_length)
    nats = -sum(lp for lp, _ in lm._score(windows))
    return {
        "documents": len(texts),
        "tokens": n_tokens,
        "bytes": n_bytes,
        "loss": nats / n_tokens,
        "bits_per_byte": nats / math.log(2) / max(n_bytes, 1),
    }


def _windows(tokens: list[int], eod: int, max_length: int) -> list[tuple[Any, list[int], list[int]]]:
    """A document's disjoint scoring windows, its first token conditioned on EOD."""
    return [
        (None, ctx, cont)
        for ctx, cont in map(
            make_disjoint_window,
            get_rolling_token_windows(tokens, prefix_token=eod, max_seq_len=max_length, context_len=1),
        )
    ]


def _data_config(lm: Any) -> dict[str, Any]:
    meta = checkpoint_io.read_meta(lm.checkpoint)
    data = meta.get("config", {}).get("data", {})
    return data if isinstance(data, dict) else {}
