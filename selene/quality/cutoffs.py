"""The rule's cut-offs, from every shard's scores (see `selene.quality.stage`): a fixed threshold is
itself; a top fraction of tokens is found to its histogram bin, then (``quality-cut``, per shard)
exactly, from the scores inside that one bin. With ``combine: max_bucket`` each score is first mapped
to its token-weighted percentile bucket through its classifier's histogram (``quality-combine`` makes
the combined histogram)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from selene.executor.mappers import Mapper
from selene.quality.config import QualityConfig
from selene.quality.scores import BINS, bin_of, load_scores
from selene.quality.steps import Cutoffs, Scored


def bucket_of(scores: np.ndarray, cdf: np.ndarray, buckets: int) -> np.ndarray:
    """Each score's token-weighted percentile bucket under its classifier (`cdf`: the share of tokens
    scored below each bin), as a score in [0, 1]: Nemotron-CC's ensemble, bucket by bucket."""
    share = cdf[bin_of(scores)]
    return np.minimum(np.floor(share * buckets), buckets - 1) / (buckets - 1)


def combined(s: np.ndarray, cfg: QualityConfig, cdfs: np.ndarray | None) -> np.ndarray:
    """The document's one score when classifiers combine (NaN stays NaN: not judged)."""
    if cfg.combine == "mean" or s.shape[1] == 1:
        return s.mean(axis=1)
    assert cdfs is not None
    return np.max(
        np.stack([bucket_of(s[:, c], cdfs[c], cfg.buckets) for c in range(s.shape[1])], axis=1), axis=1
    )


def combine_shard(root: str, k: int, cfg: QualityConfig, cdfs: list[list[float]] | None) -> list[int]:
    """The token-weighted histogram of shard `k`'s combined scores."""
    z = load_scores(root, "scores", k)
    c = combined(z["s"], cfg, None if cdfs is None else np.asarray(cdfs))
    ok = ~np.isnan(c)
    hist = np.zeros(BINS, dtype=np.int64)
    np.add.at(hist, bin_of(c[ok]), z["t"][ok])
    return list(hist.tolist())


def cut_shard(
    root: str, k: int, cfg: QualityConfig, column: int | None, cdfs: list[list[float]] | None, lo: int
) -> list[list[float]]:
    """(score, tokens) of shard `k`'s documents whose score falls in histogram bin `lo`."""
    z = load_scores(root, "scores", k)
    s = (
        z["s"][:, column]
        if column is not None
        else combined(z["s"], cfg, None if cdfs is None else np.asarray(cdfs))
    )
    ok = ~np.isnan(s)
    inside = ok.copy()
    inside[ok] = bin_of(s[ok]) == lo
    return [[float(a), int(b)] for a, b in zip(s[inside], z["t"][inside], strict=True)]


def boundarybin_of(hist: np.ndarray, fraction: float) -> tuple[int, int]:
    """The bin where the best-scoring `fraction` of the tokens ends, and the tokens above that bin."""
    total = int(hist.sum())
    want = fraction * total
    above = 0
    for b in range(len(hist) - 1, -1, -1):
        if above + hist[b] >= want:
            return b, above
        above += int(hist[b])
    return 0, above


def exact_cutoff(pairs: Sequence[Sequence[float]], above: int, fraction: float, total: int) -> float:
    """The least score kept so that the kept tokens reach `fraction` of `total` (ties at it all kept)."""
    want = fraction * total
    got = above
    for score, tokens in sorted(pairs, key=lambda p: -p[0]):
        got += int(tokens)
        if got >= want:
            return float(score)
    return 0.0


def cutoffs(root: str, n: int, scored: Sequence[Scored], cfg: QualityConfig, mapper: Mapper) -> Cutoffs:
    """The rule's cut-offs: per classifier (`combine: each`) or of the combined score."""
    hists = (
        np.sum([np.asarray(r.hist, dtype=np.int64) for r in scored], axis=0)
        if scored
        else np.zeros((len(cfg.classifiers), BINS), dtype=np.int64)
    )

    def exact(hist: np.ndarray, column: int | None, cdfs: list[list[float]] | None) -> float:
        lo, above = boundarybin_of(hist, cfg.fraction)
        parts = mapper("quality-cut", cut_shard, [(root, k, cfg, column, cdfs, lo) for k in range(n)])
        return exact_cutoff([p for part in parts for p in part], above, cfg.fraction, int(hist.sum()))

    if cfg.combine == "each" or len(cfg.classifiers) == 1:
        per: list[float | None] = [None] * len(cfg.classifiers)
        for c in range(len(cfg.classifiers)):
            if cfg.rule == "threshold":
                per[c] = cfg.threshold
            elif cfg.rule == "top_fraction":
                per[c] = exact(hists[c], c, None)
        return Cutoffs(cutoffs=per)
    cdfs: list[list[float]] | None = None
    if cfg.combine == "max_bucket":
        below = np.cumsum(hists, axis=1) - hists  # tokens scored below each bin
        cdfs = (below / np.maximum(hists.sum(axis=1, keepdims=True), 1)).tolist()
    cutoff: float | None = None
    if cfg.rule == "threshold":
        cutoff = cfg.threshold
    elif cfg.rule == "top_fraction":
        hist = np.sum(
            mapper("quality-combine", combine_shard, [(root, k, cfg, cdfs) for k in range(n)]), axis=0
        )
        cutoff = exact(np.asarray(hist, dtype=np.int64), None, cdfs)
    return Cutoffs(cutoffs=[None] * len(cfg.classifiers), cutoff=cutoff, cdfs=cdfs)
