"""What the mix took, per source: the counts a scatter task makes, the manifest's `blend` section
and `stats.per_source` built from them. Pure functions, like `selene.blend.mix`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendSource, BlendSummary, BlendTotals
from selene.blend.mix import SourceSize
from selene.manifest import SourceStats


@dataclass
class Sampled:
    """What the mix took of one source (in one shard, or in all): its documents, those sampled at least
    once, the rows they make (repeats counted) and the UTF-8 bytes of those rows."""

    documents: int = 0
    kept: int = 0
    rows: int = 0
    bytes: int = 0

    def __add__(self, other: Sampled) -> Sampled:
        return Sampled(
            self.documents + other.documents, self.kept + other.kept, self.rows + other.rows, self.bytes + other.bytes
        )


def shares(tokens: Mapping[str, float]) -> dict[str, float]:
    total = sum(tokens.values())
    return {s: (t / total if total else 0.0) for s, t in tokens.items()}


def not_sampled_detail(source: str, epochs: float, cfg: BlendConfig) -> str:
    """The removed.parquet detail of a document of `source` that the mix does not use."""
    if source not in cfg.weights and source not in cfg.epochs:
        return f"source {source} is in neither blend.weights nor blend.epochs (0 epochs)"
    return f"source {source} at {epochs:.4g} epochs"


def per_source_stats(sampled: Mapping[str, Sampled], reason: str) -> dict[str, SourceStats]:
    """`stats.per_source` in the shape of the other stages: in, kept (sampled at least once), removed."""
    return {
        s: SourceStats(
            documents_in=c.documents,
            kept=c.kept,
            removed={reason: c.documents - c.kept} if c.documents > c.kept else {},
        )
        for s, c in sorted(sampled.items())
    }


def summarize(
    sizes: Mapping[str, SourceSize],
    epochs: Mapping[str, float],
    sampled: Mapping[str, Sampled],
    cfg: BlendConfig,
    buckets: int | None = None,
) -> BlendSummary:
    """The `blend` section of the manifest: per source what was asked, planned and realised.

    `sampled[source]`: ``rows`` (documents in the mix, repeats counted), ``kept`` (distinct
    documents in it) and ``bytes`` (UTF-8 bytes of the rows). Realised tokens are those bytes times
    the source's tokens/byte, so realised shares are comparable with the requested ones. `buckets`:
    the shuffle's bucket count, recorded with the totals.
    """
    planned = {s: sizes[s].tokens * epochs[s] for s in sizes}
    requested = shares(planned)
    realised_tokens = {s: round(sampled[s].bytes * sizes[s].tokens_per_byte) for s in sizes}
    realised = shares(realised_tokens)
    sources = {
        s: BlendSource(
            **asdict(sizes[s]),
            weight_requested=cfg.weights.get(s),
            epochs_requested=cfg.epochs.get(s),
            epochs=epochs[s],
            tokens_planned=round(planned[s]),
            documents_sampled=sampled[s].rows,
            documents_distinct=sampled[s].kept,
            bytes_sampled=sampled[s].bytes,
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
        documents_sampled=sum(v.rows for v in sampled.values()),
        documents_distinct=sum(v.kept for v in sampled.values()),
        bytes_sampled=sum(v.bytes for v in sampled.values()),
        tokens_sampled=sum(realised_tokens.values()),
        max_share_error=max((abs(realised[s] - requested[s]) for s in sizes), default=0.0),
        shuffle_buckets=buckets,
    )
    return BlendSummary(sources=sources, totals=totals)

