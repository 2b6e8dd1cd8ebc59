"""The blend plan: per-source sizes, weights and epochs → passes over each source, sampled with seeds.

MT-NLG gives each source of the mix either a share of the training tokens (a weight) or a number of
passes over it (epochs: Books3 1.5, Pile-CC 0.5). Both become epochs here: a weighted source gets
``T_w · w / Σw`` tokens, where ``T_w`` is the target minus what the epoch sources take, and
``epochs = those tokens / the source's tokens``. Epochs are realised per document: ``floor(epochs)``
whole passes, plus a seeded subset of ``round(frac · n)`` documents for the last partial pass.

Everything here is a pure function of what is passed in (counts, sample sizes, configs, generators);
`selene.blend.stage` does the reading and writing. Random streams are derived from the seed and the
*name* of a source (`source_seed`), never from its position, so adding a source to a dataset does not
change which documents of the others are sampled.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from selene.config import BlendConfig
from selene.errors import ConfigError
from selene.manifest import BlendSource, BlendSummary, BlendTotals, SourceStats, TokensMethod

# Purposes of the random streams: one independent stream per (purpose, source, shard).
TOKENS, PARTIAL, SAMPLE, SHUFFLE = 1, 2, 3, 4
_U64 = 2**64


@dataclass(frozen=True)
class SourceSize:
    """One source of the input: documents, UTF-8 bytes of their text and tokens (and how counted)."""

    documents: int
    bytes: int
    tokens: int
    tokens_method: TokensMethod
    tokens_per_byte: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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
    return np.random.SeedSequence([seed % _U64, *name.tolist(), *tags])


def shard_seed(seed: int, *tags: int) -> np.random.SeedSequence:
    """An independent stream for a purpose and shard that is not about one source (the shuffle)."""
    return np.random.SeedSequence([seed % _U64, *tags])


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
        out[src] = SourceSize(docs, nbytes, int(tokens), method, tpb)  # type: ignore[arg-type]
    return out


# ----------------------------------------------------------------------------------- epochs


def plan_epochs(sizes: Mapping[str, SourceSize], cfg: BlendConfig) -> dict[str, float]:
    """Epochs per source: as given for `epochs` sources; from the weights for the others; 0 if in neither.

    With `target_tokens` T, the weighted sources share T minus the tokens the epoch sources take, in
    proportion to their weights. Without it, they share their own size (their tokens taken once) and
    the epoch sources come on top: the mix is that much plus what the epochs ask for.
    """
    check_config(cfg)
    check_sources(cfg, list(sizes))
    epochs = {src: 0.0 for src in sorted(sizes)}
    epochs.update({src: float(e) for src, e in cfg.epochs.items()})
    if cfg.weights:
        _weighted_epochs(sizes, cfg, epochs)
    if not sum(planned_docs(sizes[s].documents, e) for s, e in epochs.items()):
        raise ConfigError(
            f"blend: the plan samples no documents (epochs: {epochs}); raise the weights or epochs"
        )
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


def partial_docs(n_docs: int, epochs: float) -> int:
    """Documents of the last, partial pass: round(frac · n), halves rounded up."""
    frac = epochs - math.floor(epochs)
    return min(n_docs, math.floor(frac * n_docs + 0.5))


def partial_split(
    shard_counts: Mapping[str, Sequence[int]], epochs: Mapping[str, float], seed: int
) -> dict[str, np.ndarray]:
    """Per source, how many documents of each shard go into the partial pass (exactly round(frac · n))."""
    return {
        src: split_across_shards(
            counts, partial_docs(int(np.sum(counts)), epochs[src]), rng(source_seed(seed, src, PARTIAL))
        )
        for src, counts in sorted(shard_counts.items())
    }


def sample_documents(
    n_docs: int, epochs: float, gen: np.random.Generator, partial: int | None = None
) -> np.ndarray:
    """(document index, pass number) pairs: floor(epochs) whole passes, then a random partial pass.

    The partial pass takes `partial` documents (default round(frac · n_docs)) without replacement, so
    every document appears floor(epochs) or floor(epochs) + 1 times. Rows are ordered by pass, then
    document. `partial` lets a caller that splits a source over shards give each shard its part of
    the source-wide count (`partial_split`).
    """
    if n_docs < 0 or not math.isfinite(epochs) or epochs < 0:
        raise ValueError(f"sample_documents: n_docs={n_docs}, epochs={epochs}")
    full = math.floor(epochs)
    k = partial_docs(n_docs, epochs) if partial is None else partial
    if not 0 <= k <= n_docs:
        raise ValueError(f"sample_documents: a partial pass of {k} out of {n_docs} documents")
    docs = np.arange(n_docs, dtype=np.int64)
    chosen = np.sort(gen.choice(n_docs, size=k, replace=False)).astype(np.int64) if k else docs[:0]
    index = np.concatenate([np.tile(docs, full), chosen])
    passes = np.concatenate([np.repeat(np.arange(full, dtype=np.int64), n_docs), np.full(k, full, np.int64)])
    return np.stack([index, passes], axis=1)


def planned_docs(n_docs: int, epochs: float) -> int:
    return math.floor(epochs) * n_docs + partial_docs(n_docs, epochs)


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


def shares(tokens: Mapping[str, float]) -> dict[str, float]:
    total = sum(tokens.values())
    return {s: (t / total if total else 0.0) for s, t in tokens.items()}


# ---------------------------------------------------------------------------------- summary


def not_sampled_detail(source: str, epochs: float, cfg: BlendConfig) -> str:
    """The removed.parquet detail of a document of `source` that the mix does not use."""
    if source not in cfg.weights and source not in cfg.epochs:
        return f"source {source} is in neither blend.weights nor blend.epochs (0 epochs)"
    return f"source {source} at {epochs:.4g} epochs"


def per_source_stats(sampled: Mapping[str, Mapping[str, int]], reason: str) -> dict[str, SourceStats]:
    """`stats.per_source` in the shape of the other stages: in, kept (sampled at least once), removed."""
    return {
        s: SourceStats(
            documents_in=c["in"],
            kept=c["kept"],
            removed={reason: c["in"] - c["kept"]} if c["in"] > c["kept"] else {},
        )
        for s, c in sorted(sampled.items())
    }


def summarize(
    sizes: Mapping[str, SourceSize],
    epochs: Mapping[str, float],
    sampled: Mapping[str, Mapping[str, int]],
    cfg: BlendConfig,
    buckets: int | None = None,
) -> BlendSummary:
    """The `blend` section of the manifest: per source what was asked, planned and realised.

    `sampled[source]` has ``rows`` (documents in the mix, repeats counted), ``kept`` (distinct
    documents in it) and ``bytes`` (UTF-8 bytes of the rows). Realised tokens are those bytes times
    the source's tokens/byte, so realised shares are comparable with the requested ones. `buckets`:
    the shuffle's bucket count, recorded with the totals.
    """
    planned = {s: sizes[s].tokens * epochs[s] for s in sizes}
    requested = shares(planned)
    realised_tokens = {s: round(sampled[s]["bytes"] * sizes[s].tokens_per_byte) for s in sizes}
    realised = shares(realised_tokens)
    sources = {
        s: BlendSource(
            **sizes[s].to_json(),
            weight_requested=cfg.weights.get(s),
            epochs_requested=cfg.epochs.get(s),
            epochs=epochs[s],
            tokens_planned=round(planned[s]),
            documents_sampled=sampled[s]["rows"],
            documents_distinct=sampled[s]["kept"],
            bytes_sampled=sampled[s]["bytes"],
            tokens_sampled=realised_tokens[s],
            share_requested=requested[s],
            share_realised=realised[s],
        )
        for s in sorted(sizes)
    }
    totals = BlendTotals(
        sources=len(sizes),
        documents=sum(v.documents for v in sizes.values()),
        bytes=sum(v.bytes for v in sizes.values()),
        tokens=sum(v.tokens for v in sizes.values()),
        target_tokens=cfg.target_tokens,
        tokens_planned=round(sum(planned.values())),
        documents_sampled=sum(v["rows"] for v in sampled.values()),
        documents_distinct=sum(v["kept"] for v in sampled.values()),
        bytes_sampled=sum(v["bytes"] for v in sampled.values()),
        tokens_sampled=sum(realised_tokens.values()),
        max_share_error=max((abs(realised[s] - requested[s]) for s in sizes), default=0.0),
        shuffle_buckets=buckets,
    )
    return BlendSummary(sources=sources, totals=totals)
