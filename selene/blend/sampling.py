"""Step 3 of the blend: the sampling, from the counted sources to what each shard's scatter task takes.

Weights and epochs → epochs per source (`mix.plan_epochs`; warnings on stderr: sources the config does
not name, sources repeated more than `mix.WARN_EPOCHS` times). The last, partial pass of each source
is chosen by tokens (`partial.partial_passes`): `partial_shard` answers the search's rounds per shard (a
histogram of bytes over a key range, then the few documents around where the pass ends) from the
lengths files, so no step holds a per-document plan of the corpus; the result is a key bound and a
short list of picks per source (the ``partial`` step's result). The number of shuffle buckets is
`shuffle_buckets`, or the planned bytes of the mix divided by `shuffle_bucket_bytes`
(`mix.shuffle_buckets`): data and config decide it, never the workers or the memory budget. The budget
is only checked: a bucket that would not fit a task's share of it (`check_bucket_memory`) stops the
run before the shuffle, naming the settings to change.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from selene.blend import mix, partial
from selene.blend.config import BlendConfig
from selene.blend.count import Scanned, lengths_path
from selene.blend.partial import Partial
from selene.blend.shuffle import check_bucket_memory
from selene.executor.mappers import Mapper
from selene.io import fs, steps


@dataclass(frozen=True)
class Sampling:
    """What the mix takes of each source: its size, its epochs and its partial pass; and the number of
    shuffle buckets."""

    sizes: dict[str, mix.SourceSize]
    epochs: dict[str, float]
    buckets: int
    partials: dict[str, Partial]

    def spec(self, k: int, per_shard: Mapping[str, Sequence[int]]) -> dict[str, tuple[float, Partial]]:
        """What shard `k`'s scatter task needs, per source it holds: the epochs, and of the partial
        pass the key bound and the shard's own picks."""
        return {
            s: (self.epochs[s], _for_shard(self.partials[s], k)) for s in sorted(self.sizes) if per_shard[s][k]
        }


class PartialPasses(steps.StepResult):
    """The ``partial`` step's result: each source's partial pass."""

    sources: dict[str, Partial]


@dataclass(frozen=True)
class ShardAnswers:
    """One shard's answers to a round of the search: the sources whose histograms are in its round
    file (``partial/r<round>-s<shard>.npy``, in this order) and the documents it listed per source."""

    hist: list[str]
    listed: dict[str, partial.Listed]


def choose(
    root: str,
    scans: Sequence[Scanned],
    totals: Mapping[str, tuple[int, int]],
    samples: Mapping[str, mix.TokenSample] | None,
    cfg: BlendConfig,
    mapper: Mapper,
) -> Sampling:
    """Sizes, epochs (warning on stderr), buckets (checked against the memory budget before any work)
    and partial passes; a plan that samples nothing is a ConfigError."""
    sizes = mix.source_sizes(totals, samples, cfg)
    epochs = mix.plan_epochs(sizes, cfg)
    for warning in mix.warnings({s: sizes[s].documents for s in sorted(totals)}, epochs, cfg):
        print(f"warning: blend: {warning}", file=sys.stderr)
    buckets = mix.shuffle_buckets(sizes, epochs, cfg)
    planned = mix.planned_bytes(sizes, epochs) // buckets
    check_bucket_memory(planned, buckets, cfg, mapper.budget)  # before any work
    parts = steps.resumable(
        steps.marker(root, "partial"),
        PartialPasses,
        lambda: PartialPasses(sources=_partial_passes(root, scans, sizes, epochs, cfg, mapper)),
    ).sources
    partial.check_sampled(sizes, epochs, parts)
    return Sampling(sizes, epochs, buckets, parts)


def partial_path(root: str, r: int, k: int) -> str:
    return fs.join(root, "partial", f"r{r:02d}-s{k:05d}.npy")


def partial_shard(
    root: str, k: int, r: int, queries: dict[str, tuple[int, int, int, int, int]], bins: int, seed: int
) -> ShardAnswers:
    """Shard `k`'s answers to round `r` of the partial-pass search (`partial.partial_passes`).

    `queries[source]` is (offset and count of the source's documents in the lengths file, lo, hi,
    width). Histograms (bins × [bytes, documents]) go to ``partial/r<round>-s<shard>.npy`` (many
    shards' histograms are summed one at a time); listed documents come back as (indices, keys, bytes).
    """
    lengths = fs.load_npy(lengths_path(root, k))
    hist_sources, hists, listed = [], [], {}
    for src, (off, n, lo, hi, width) in sorted(queries.items()):
        answer = partial.partial_query(
            partial.partial_keys(seed, src, k, n), lengths[off : off + n], (lo, hi, width), bins
        )
        if isinstance(answer, tuple):
            listed[src] = answer
        else:
            hist_sources.append(src)
            hists.append(answer)
    if hists:
        fs.save_npy(partial_path(root, r, k), np.stack(hists))
    return ShardAnswers(hist_sources, listed)


def _partial_passes(
    root: str,
    scans: Sequence[Scanned],
    sizes: Mapping[str, mix.SourceSize],
    epochs: Mapping[str, float],
    cfg: BlendConfig,
    mapper: Mapper,
) -> dict[str, Partial]:
    """`partial.partial_passes` over the shards through `mapper`."""
    offsets: list[dict[str, tuple[int, int]]] = []
    for sc in scans:  # each shard's lengths file: its sources in sorted order
        starts = itertools.accumulate((c.documents for c in sc.sources.values()), initial=0)
        offsets.append({s: (o, c.documents) for (s, c), o in zip(sc.sources.items(), starts, strict=False)})
    bins = partial.PARTIAL_BINS

    def rounds(r: int, queries: Mapping[str, partial.Query]) -> Iterator[tuple[int, dict[str, partial.Answer]]]:
        jobs = [
            (
                root,
                k,
                r,
                {s: (*offsets[k][s], *q) for s, q in queries.items() if s in offsets[k]},
                bins,
                cfg.seed,
            )
            for k in range(len(scans))
            if any(s in offsets[k] for s in queries)
        ]
        for job, res in zip(jobs, mapper("blend-partial", partial_shard, jobs), strict=True):
            answers: dict[str, partial.Answer] = dict(res.listed)
            if res.hist:
                answers.update(zip(res.hist, fs.load_npy(partial_path(root, r, job[1])), strict=True))
            yield job[1], answers

    return partial.partial_passes(sizes, epochs, rounds, bins=bins)


def _for_shard(part: Partial, k: int) -> Partial:
    """What shard `k`'s scatter task needs of a partial pass: the key bound and its own picks."""
    return Partial(part.lo, {k: part.picks[k]} if k in part.picks else {}, part.documents, part.bytes)
