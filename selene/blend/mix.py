"""The mix: per-source sizes, weights and epochs → passes over each source, sampled with seeds.

MT-NLG gives each source of the mix either a share of the training tokens (a weight) or a number of
passes over it (epochs: Books3 1.5, Pile-CC 0.5). Both become epochs here: a weighted source gets
``T_w · w / Σw`` tokens, where ``T_w`` is the target minus what the epoch sources take, and
``epochs = those tokens / the source's tokens``. Epochs are realised per document: ``floor(epochs)``
whole passes, plus a last, partial pass chosen by tokens (`selene.blend.partial`): the source's documents in
a seeded order, taken until the pass holds ``frac · bytes`` (tokens are bytes × the source's
tokens/byte, so bytes are the source's token unit), whatever the sizes of the documents.

Everything here is a pure function of what is passed in (counts, sample sizes, configs, generators);
the blend's steps (`selene.blend.stage`) do the reading and writing. Random streams are derived from the seed and the
*name* of a source (`source_seed`), never from its position, so adding a source to a dataset does not
change which documents of the others are sampled.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from selene.blend.config import BlendConfig
from selene.blend.manifest import TokensMethod
from selene.errors import ConfigError, InternalError

# Purposes of the random streams: one independent stream per (purpose, source, shard).
TOKENS, PARTIAL, SAMPLE, SHUFFLE = 1, 2, 3, 4
U64 = 2**64

WARN_EPOCHS = 4.0
"""With blend.max_epochs unset, a source that its weight repeats more often than this is warned about:
past ~4 epochs, repeated text is worth much less than new text (Muennighoff et al. 2023, "Scaling
Data-Constrained Language Models")."""


@dataclass(frozen=True)
class SourceSize:
    """One source of the input: documents, UTF-8 bytes of their text and tokens (and how counted)."""

    documents: int
    bytes: int
    tokens: int
    tokens_method: TokensMethod
    tokens_per_byte: float


@dataclass(frozen=True)
class TokenSample:
    """What a tokenizer made of a sample of one source's documents."""

    documents: int
    bytes: int
    tokens: int


# ----------------------------------------------------------------------------------- seeds


def source_seed(seed: int, source: str, *tags: int) -> np.random.SeedSequence:
    """An independent stream for `source` (by name) and `tags` (purpose, shard ...)."""
    name = np.frombuffer(hashlib.sha256(source.encode("utf-8")).digest()[:16], dtype="<u4")
    return np.random.SeedSequence([seed % U64, *name.tolist(), *tags])


def shard_seed(seed: int, *tags: int) -> np.random.SeedSequence:
    """An independent stream for a purpose and shard that is not about one source (the shuffle)."""
    return np.random.SeedSequence([seed % U64, *tags])


def rng(seq: np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seq))


# ------------------------------------------------------------------------------ validation


def check_config(cfg: BlendConfig) -> None:
    """Checks that need no data: each named source has one non-negative, finite weight or epochs."""
    if not cfg.weights and not cfg.epochs:
        raise ConfigError(
            "blend: give `weights` (source → share of the mix) or `epochs` (source → passes), "
            "e.g. weights: {Pile-CC: 0.6, Books3: 0.4} or epochs: {Books3: 1.5}; sources in neither are left out"
        )
    both = sorted(set(cfg.weights) & set(cfg.epochs))
    if both:
        raise ConfigError(
            f"blend: source {both[0]!r} has both a weight and epochs; give each source one of them "
            f"(sources with both: {', '.join(both)})"
        )
    for field, values in (("weights", cfg.weights), ("epochs", cfg.epochs)):
        for src, v in sorted(values.items()):
            if not math.isfinite(v) or v < 0:
                raise ConfigError(f"blend.{field}.{src}: got {v!r}; {field} are finite numbers >= 0")
    if cfg.weights and not any(v > 0 for v in cfg.weights.values()):
        raise ConfigError(
            f"blend.weights: all weights are 0 ({', '.join(sorted(cfg.weights))}); give at least one source "
            "a positive share"
        )
    if cfg.target_tokens is not None and not cfg.weights:
        raise ConfigError(
            "blend.target_tokens is set but no source has a weight: with epochs only, the epochs fix the "
            "size of the mix. Give some sources weights, or unset target_tokens"
        )


def check_sources(cfg: BlendConfig, sources: Sequence[str]) -> None:
    """Every source named in weights or epochs exists in the dataset."""
    known = set(sources)
    for field, values in (("weights", cfg.weights), ("epochs", cfg.epochs)):
        for src in sorted(values):
            if src not in known:
                raise ConfigError(
                    f"blend.{field}: source {src!r} is not in the dataset; its sources are: "
                    f"{', '.join(sorted(known)) or '(none)'}"
                )


# ------------------------------------------------------------------------------------ sizes


def split_across_shards(shard_counts: Sequence[int], k: int, gen: np.random.Generator) -> np.ndarray:
    """How many of `k` documents drawn without replacement from all shards fall in each shard.

    A multivariate hypergeometric draw: followed by a uniform choice of that many rows inside each
    shard, it is a uniform sample of the whole source, while no step ever holds more than one
    shard's rows (the plan stays O(shards), not O(documents)).
    """
    counts = np.asarray(shard_counts, dtype=np.int64)
    if k <= 0 or counts.sum() == 0:
        return np.zeros(counts.size, dtype=np.int64)
    return gen.multivariate_hypergeometric(counts, min(int(k), int(counts.sum())), method="marginals")


def token_sample_split(shard_counts: Mapping[str, Sequence[int]], cfg: BlendConfig) -> dict[str, np.ndarray]:
    """Per source, the number of its documents to tokenize in each shard (up to token_sample_docs)."""
    return {
        src: split_across_shards(counts, cfg.token_sample_docs, rng(source_seed(cfg.seed, src, TOKENS)))
        for src, counts in sorted(shard_counts.items())
    }


def source_sizes(
    scan: Mapping[str, tuple[int, int]], samples: Mapping[str, TokenSample] | None, cfg: BlendConfig
) -> dict[str, SourceSize]:
    """Documents, bytes and tokens per source, from a scan (docs, bytes) and token samples.

    With a tokenizer, tokens/byte is measured on the sample (a ratio of sums, so long documents weigh
    as much as their bytes) and extrapolated to the source's bytes; a sample that covers every document
    is an exact count. Without one, tokens are bytes / bytes_per_token.
    """
    out: dict[str, SourceSize] = {}
    for src, (docs, nbytes) in sorted(scan.items()):
        method: TokensMethod
        if samples is None:
            tpb, method = 1.0 / cfg.bytes_per_token, "estimated"
            tokens = round(nbytes * tpb)
        else:
            s = samples.get(src, TokenSample(0, 0, 0))
            tpb = s.tokens / s.bytes if s.bytes else 0.0
            if s.documents >= docs:
                method, tokens = "counted", s.tokens
            else:
                method, tokens = "sampled", round(nbytes * tpb)
        out[src] = SourceSize(docs, nbytes, int(tokens), method, tpb)
    return out


# ----------------------------------------------------------------------------------- epochs


def plan_epochs(sizes: Mapping[str, SourceSize], cfg: BlendConfig) -> dict[str, float]:
    """Epochs per source: as given for `epochs` sources; from the weights for the others; 0 if in neither.

    With `target_tokens` T, the weighted sources share T minus the tokens the epoch sources take, in
    proportion to their weights. Without it, they share their own size (their tokens taken once) and
    the epoch sources come on top: the mix is that much plus what the epochs ask for. A source over
    `cfg.max_epochs` (when set) is a ConfigError.
    """
    check_config(cfg)
    check_sources(cfg, list(sizes))
    epochs = {src: 0.0 for src in sorted(sizes)}
    epochs.update({src: float(e) for src, e in cfg.epochs.items()})
    if cfg.weights:
        _weighted_epochs(sizes, cfg, epochs)
    check_max_epochs(sizes, epochs, cfg)
    return epochs


def _weighted_epochs(sizes: Mapping[str, SourceSize], cfg: BlendConfig, epochs: dict[str, float]) -> None:
    for src, w in sorted(cfg.weights.items()):
        if w > 0 and sizes[src].tokens <= 0:
            raise ConfigError(
                f"blend.weights.{src}: source {src!r} has {sizes[src].documents} documents but 0 tokens "
                f"({sizes[src].bytes} bytes of text); it cannot take a share of the mix — drop its weight"
            )
    fixed = sum(sizes[src].tokens * e for src, e in cfg.epochs.items())
    own = sum(sizes[s].tokens for s, w in cfg.weights.items() if w > 0)
    target = cfg.target_tokens or own + fixed
    rest = target - fixed
    if rest < 0:
        taken = ", ".join(f"{s} {e:g} × {sizes[s].tokens:,}" for s, e in sorted(cfg.epochs.items()))
        raise ConfigError(
            f"blend: the epoch sources take {fixed:,.0f} tokens ({taken}), more than the target of {target:,} "
            "(blend.target_tokens); raise blend.target_tokens or lower blend.epochs"
        )
    total_w = sum(cfg.weights.values())
    for src, w in cfg.weights.items():
        epochs[src] = rest * w / total_w / sizes[src].tokens if w > 0 else 0.0


def _why(src: str, size: SourceSize, epochs: float, cfg: BlendConfig) -> str:
    if src in cfg.epochs:
        return f"blend.epochs.{src} is {cfg.epochs[src]:g}"
    return (
        f"its weight {cfg.weights[src]:g} asks for {size.tokens * epochs:,.0f} tokens and it has "
        f"{size.tokens:,}"
    )


def check_max_epochs(sizes: Mapping[str, SourceSize], epochs: Mapping[str, float], cfg: BlendConfig) -> None:
    """With `cfg.max_epochs` set, a source repeated more often than that is a ConfigError naming it."""
    if cfg.max_epochs is None:
        return
    over = [(s, e) for s, e in sorted(epochs.items()) if e > cfg.max_epochs]
    if over:
        each = "; ".join(f"{s} {e:.2f} epochs ({_why(s, sizes[s], e, cfg)})" for s, e in over)
        raise ConfigError(
            f"blend.max_epochs is {cfg.max_epochs:g}, and the plan repeats {each}. Lower those weights or "
            "epochs, give the mix more data or a smaller blend.target_tokens, or raise blend.max_epochs"
        )


def warnings(documents: Mapping[str, int], epochs: Mapping[str, float], cfg: BlendConfig) -> list[str]:
    """What the user should hear about a plan that is not an error, one line per source:

    - a source with documents that neither `weights` nor `epochs` name gets share 0 (its documents go
      to removed.parquet as not sampled);
    - with `max_epochs` unset, a source whose *weight* repeats it more than `WARN_EPOCHS` times
      (epochs the user gave are not second-guessed; with `max_epochs` set, `check_max_epochs` errs).

    A function of per-source counts, epochs and the config, so the manifest alone gives them again.
    """
    out = []
    for src in sorted(documents):
        n = documents[src]
        if n and src not in cfg.weights and src not in cfg.epochs:
            out.append(
                f"source {src} has {n:,} documents but no weight: it gets share 0 (its documents are listed "
                f"in removed.parquet as not sampled); name it in --weights or --epochs to keep it"
            )
    if cfg.max_epochs is None:
        for src, w in sorted(cfg.weights.items()):
            e = epochs.get(src, 0.0)
            if e > WARN_EPOCHS:
                out.append(
                    f"source {src} is repeated {e:.1f} times (from its weight {w:g}): more than {WARN_EPOCHS:g} "
                    "epochs of the same text adds little; lower its weight, or set blend.max_epochs to make "
                    "this an error"
                )
    return out


def partial_docs(n_docs: int, epochs: float) -> int:
    """Documents of a last, partial pass chosen by count: round(frac · n), halves rounded up
    (`sample_documents` without a `chosen` mask; the stage chooses by tokens, `partial_passes`)."""
    frac = epochs - math.floor(epochs)
    return min(n_docs, math.floor(frac * n_docs + 0.5))


def sample_documents(
    n_docs: int,
    epochs: float,
    gen: np.random.Generator | None = None,
    partial: int | None = None,
    chosen: np.ndarray | None = None,
) -> np.ndarray:
    """(document index, pass number) pairs: floor(epochs) whole passes, then a partial pass.

    The partial pass is `chosen` (a boolean mask over the documents: what `partial_passes` picked by
    tokens), or else `partial` documents (default round(frac · n_docs)) drawn with `gen`, without
    replacement, so every document appears floor(epochs) or floor(epochs) + 1 times. Rows are ordered
    by pass, then document.
    """
    if n_docs < 0 or not math.isfinite(epochs) or epochs < 0:
        raise InternalError(f"sample_documents: n_docs={n_docs}, epochs={epochs}")
    full = math.floor(epochs)
    docs = np.arange(n_docs, dtype=np.int64)
    if chosen is not None:
        if chosen.shape != (n_docs,):
            raise InternalError(f"sample_documents: a mask of {chosen.shape} for {n_docs} documents")
        picked = np.flatnonzero(chosen).astype(np.int64)
    else:
        k = partial_docs(n_docs, epochs) if partial is None else partial
        if not 0 <= k <= n_docs:
            raise InternalError(f"sample_documents: a partial pass of {k} out of {n_docs} documents")
        if k and gen is None:
            raise InternalError("sample_documents: a partial pass by count needs a generator")
        picked = (
            np.sort(gen.choice(n_docs, size=k, replace=False)).astype(np.int64)
            if k and gen is not None
            else docs[:0]
        )
    index = np.concatenate([np.tile(docs, full), picked])
    passes = np.concatenate(
        [np.repeat(np.arange(full, dtype=np.int64), n_docs), np.full(picked.size, full, np.int64)]
    )
    return np.stack([index, passes], axis=1)


def planned_bytes(sizes: Mapping[str, SourceSize], epochs: Mapping[str, float]) -> int:
    """UTF-8 bytes of text the plan puts in the mix: each source's bytes × its epochs."""
    return round(sum(sizes[s].bytes * epochs.get(s, 0.0) for s in sizes))


def shuffle_buckets(sizes: Mapping[str, SourceSize], epochs: Mapping[str, float], cfg: BlendConfig) -> int:
    """Buckets of the out-of-core shuffle: `cfg.shuffle_buckets`, or enough that each holds about
    `cfg.shuffle_bucket_bytes` of the planned text. A function of the data and the config only (never
    of the memory budget or the workers): the bucket count decides the output order."""
    if cfg.shuffle_buckets is not None:
        return cfg.shuffle_buckets
    return max(1, math.ceil(planned_bytes(sizes, epochs) / cfg.shuffle_bucket_bytes))

