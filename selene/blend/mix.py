"""The mix: per-source sizes, weights and epochs → passes over each source, sampled with seeds.

MT-NLG gives each source of the mix either a share of the training tokens (a weight) or a number of
passes over it (epochs: Books3 1.5, Pile-CC 0.5). Both become epochs here: a weighted source gets
``T_w · w / Σw`` tokens, where ``T_w`` is the target minus what the epoch sources take, and
``epochs = those tokens / the source's tokens``. Epochs are realised per document: ``floor(epochs)``
whole passes, plus a last, partial pass chosen by tokens (`partial_passes`): the source's documents in
a seeded order, taken until the pass holds ``frac · bytes`` (tokens are bytes × the source's
tokens/byte, so bytes are the source's token unit), whatever the sizes of the documents.

Everything here is a pure function of what is passed in (counts, sample sizes, configs, generators);
`selene.blend.stage` does the reading and writing. Random streams are derived from the seed and the
*name* of a source (`source_seed`), never from its position, so adding a source to a dataset does not
change which documents of the others are sampled.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendSource, BlendSummary, BlendTotals, TokensMethod
from selene.errors import ConfigError, InternalError
from selene.manifest import SourceStats

# Purposes of the random streams: one independent stream per (purpose, source, shard).
TOKENS, PARTIAL, SAMPLE, SHUFFLE = 1, 2, 3, 4
_U64 = 2**64

WARN_EPOCHS = 4.0
"""With blend.max_epochs unset, a source that its weight repeats more often than this is warned about:
past ~4 epochs, repeated text is worth much less than new text (Muennighoff et al. 2023, "Scaling
Data-Constrained Language Models")."""
PARTIAL_TOLERANCE = 1e-3
"""The partial pass stops looking for documents that fit once it is this close to its budget, as a
fraction of the source's planned bytes (the promise is 1%)."""
PARTIAL_WINDOW = 4096
"""Documents before and after the first that does not fit that the partial pass may drop or take."""
PARTIAL_BINS = 4096
"""Bins of a histogram round of the partial-pass search."""
PARTIAL_COLLECT = 1 << 16
"""Documents of a source the main process lists one by one (else histogram rounds first)."""


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


# ----------------------------------------------------------------------- the partial pass


@dataclass(frozen=True)
class Partial:
    """The last, partial pass over one source: every document whose key is below `lo`, plus `picks`
    (shard → indices among that shard's documents of the source). `documents` and `bytes`: its size."""

    lo: int
    picks: dict[int, list[int]]
    documents: int
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"lo": self.lo, "picks": {str(k): v for k, v in self.picks.items()},
                "documents": self.documents, "bytes": self.bytes}  # fmt: skip

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Partial:
        return cls(int(d["lo"]), {int(k): list(v) for k, v in d["picks"].items()}, d["documents"], d["bytes"])


NO_PARTIAL = Partial(0, {}, 0, 0)


def partial_keys(seed: int, source: str, shard: int, n: int) -> np.ndarray:
    """The seeded order of the partial pass: a uint64 key per document of `source` in `shard` (in row
    order). Documents are taken by (key, shard, index): independent of workers and of other sources."""
    return rng(source_seed(seed, source, PARTIAL, shard)).integers(0, _U64, size=n, dtype=np.uint64)


def partial_mask(keys: np.ndarray, part: Partial, shard: int) -> np.ndarray:
    """Which documents of one shard (with these keys) `part` takes."""
    chosen = keys < np.uint64(part.lo)
    chosen[np.asarray(part.picks.get(shard, []), dtype=np.int64)] = True
    return chosen


Query = tuple[int, int, int]
"""(lo, hi, width) of a round of the partial-pass search: documents with lo <= key < hi, as a
histogram of bins `width` keys wide, or listed one by one when width is 0."""


def partial_query(keys: np.ndarray, nbytes: np.ndarray, query: Query, bins: int) -> Any:
    """One shard's answer to `query` for one source: an int64 array (bins, 2) of bytes and documents per
    bin, or (indices, keys, bytes) of the documents in [lo, hi) when the query lists them."""
    lo, hi, width = query
    inside = keys >= np.uint64(lo)
    if hi < _U64:
        inside &= keys < np.uint64(hi)
    idx = np.flatnonzero(inside)
    if not width:
        return idx, keys[idx], nbytes[idx]
    b = ((keys[idx] - np.uint64(lo)) // np.uint64(width)).astype(np.int64)
    out = np.empty((bins, 2), dtype=np.int64)
    # float64 sums of int64 sizes: exact below 2**53 bytes (8 PiB) in one bin of one shard
    out[:, 0] = np.rint(np.bincount(b, weights=nbytes[idx], minlength=bins))
    out[:, 1] = np.bincount(b, minlength=bins)
    return out


@dataclass
class _Search:
    """Where the partial pass of one source ends, narrowed round by round (see `partial_passes`)."""

    budget: float
    tolerance: float
    docs: int
    lo: int = 0
    hi: int = _U64
    below_bytes: int = 0
    below_docs: int = 0

    def query(self, bins: int, collect: int) -> Query:
        span = self.hi - self.lo
        if self.docs <= collect or span <= bins:
            return (self.lo, self.hi, 0)
        return (self.lo, self.hi, -(-span // bins))

    def narrow(self, hist: np.ndarray, width: int, window: int) -> None:
        """From the bins of [lo, hi): keep the bin where the pass stops being a prefix (the first whose
        cumulative bytes pass the budget), with the bins around it that hold `window` documents before
        it and `window` after it."""
        n_bins = -(-(self.hi - self.lo) // width)
        nbytes, ndocs = hist[:n_bins, 0], hist[:n_bins, 1]
        over = np.flatnonzero(self.below_bytes + np.cumsum(nbytes) > self.budget)
        b = int(over[0]) if over.size else n_bins - 1
        after = np.cumsum(ndocs[b + 1 :])
        e = b + 1 + int(np.searchsorted(after, window)) if after.size and after[-1] >= window else n_bins - 1
        before = np.cumsum(ndocs[:b][::-1])
        s = b - 1 - int(np.searchsorted(before, window)) if before.size and before[-1] >= window else 0
        lo, hi = self.lo + s * width, min(self.hi, self.lo + (e + 1) * width)
        if (lo, hi) == (self.lo, self.hi):  # no progress (not seen with random keys): list them all
            self.docs = 0
            return
        self.below_bytes += int(nbytes[:s].sum())
        self.below_docs += int(ndocs[:s].sum())
        self.lo, self.hi, self.docs = lo, hi, int(ndocs[s : e + 1].sum())

    def fill(self, listed: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]], window: int) -> Partial:
        """The pass from the listed documents of [lo, hi) (every document below `lo` is in it).

        In (key, shard, index) order, documents are taken while they fit the budget left. At the first
        that does not (the crossing), two endings are tried, and the one closer to the budget is kept
        (the first on a tie):

        - leave it out and look at the `window` documents after it, taking those that fit; at the
          end, the smallest one left out is taken if that ends closer;
        - take it, and drop, among the `window` documents before it, the latest that fit in the
          overshoot; at the end, the smallest one kept is dropped if that ends closer.

        Each stops once the pass is within `tolerance` of its budget. So a long document near the
        end costs nothing when shorter ones surround it; the pass is a prefix of a random order but
        for a few documents around where it ends.
        """
        shard = np.concatenate(
            [np.full(len(i), k, np.int64) for k, i, _, _ in listed] or [np.empty(0, np.int64)]
        )
        index = np.concatenate([i for _, i, _, _ in listed] or [np.empty(0, np.int64)]).astype(np.int64)
        keys = np.concatenate([x for _, _, x, _ in listed] or [np.empty(0, np.uint64)]).astype(np.uint64)
        sizes = np.concatenate([x for _, _, _, x in listed] or [np.empty(0, np.int64)]).astype(np.int64)
        order = np.lexsort((index, shard, keys))
        sz: list[int] = sizes[order].tolist()
        tol = self.tolerance
        left = self.budget - self.below_bytes
        c = 0
        while c < len(sz) and sz[c] <= left:
            left -= sz[c]
            c += 1
        taken = list(range(c))
        if c < len(sz):
            # leave the crossing document out, fill with the ones after it
            added: list[int] = []
            short, smallest = left, None
            for j in range(c, min(len(sz), c + window + 1)):
                if short <= tol:
                    break
                if sz[j] <= short:
                    added.append(j)
                    short -= sz[j]
                elif smallest is None or sz[j] < sz[smallest]:
                    smallest = j
            if smallest is not None and short > tol and sz[smallest] - short <= short:
                added.append(smallest)
                short -= sz[smallest]
            # take it, and drop the latest ones before it that fit in the overshoot
            dropped: set[int] = set()
            over, kept = sz[c] - left, None
            for j in range(c - 1, max(-1, c - 1 - window), -1):
                if over <= tol:
                    break
                if sz[j] <= over:
                    dropped.add(j)
                    over -= sz[j]
                elif kept is None or sz[j] < sz[kept]:
                    kept = j
            if kept is not None and over > tol and sz[kept] - over < over:
                dropped.add(kept)
                over -= sz[kept]
            if abs(over) < abs(short):
                taken = [j for j in taken if j not in dropped] + [c]
            else:
                taken += added
        picked = order[np.asarray(taken, dtype=np.int64)]
        picks: dict[int, list[int]] = {}
        for k, i in zip(shard[picked].tolist(), index[picked].tolist(), strict=True):
            picks.setdefault(k, []).append(i)
        return Partial(
            self.lo,
            {k: sorted(v) for k, v in sorted(picks.items())},
            self.below_docs + len(taken),
            self.below_bytes + int(sizes[picked].sum()),
        )


Listing = Callable[[int, Mapping[str, Query]], Iterable[tuple[int, Mapping[str, Any]]]]
"""``rounds(r, queries)``: each shard's answers (`partial_query`) to round `r`'s queries, as
(shard, {source: answer}) for the shards that hold documents of those sources."""


def partial_budget(size: SourceSize, epochs: float) -> tuple[float, float]:
    """Bytes the partial pass should hold (frac · bytes) and how close is close enough (see
    `PARTIAL_TOLERANCE`)."""
    frac = epochs - math.floor(epochs)
    return frac * size.bytes, PARTIAL_TOLERANCE * epochs * size.bytes


def partial_passes(
    sizes: Mapping[str, SourceSize],
    epochs: Mapping[str, float],
    rounds: Listing,
    *,
    bins: int | None = None,
    collect: int | None = None,
    window: int | None = None,
) -> dict[str, Partial]:
    """The last, partial pass of every source, chosen by tokens (bytes: the blend's token unit).

    A source's documents are put in a seeded order (`partial_keys`) and taken in that order while they
    fit ``frac · bytes``. Where the first one does not fit, it is either left out and shorter ones
    after it fill the rest, or taken and shorter ones before it dropped, whichever ends closer
    (`_Search.fill`): a long document there costs nothing when shorter ones surround it. The pass
    misses its budget by at most half a document, and only when no shorter documents can make up
    the difference (one document holding much of a source).

    The main process never holds a source's documents: while more than `collect` documents are left
    in the key range that matters, each round asks every shard for a histogram of bytes over `bins`
    bins of that range (`rounds`), and the range shrinks to the bin where the pass stops and the bins
    around it that hold `window` documents either side; then the range's documents are listed and
    walked. The result does not depend on `bins` or `collect` (`window` bounds what the walk looks at).
    """
    bins = bins or PARTIAL_BINS
    collect = collect or PARTIAL_COLLECT
    window = window or PARTIAL_WINDOW
    out = {s: NO_PARTIAL for s in sorted(sizes)}
    searches = {}
    for s in sorted(sizes):
        budget, tolerance = partial_budget(sizes[s], epochs.get(s, 0.0))
        if budget > 0:
            searches[s] = _Search(budget, tolerance, sizes[s].documents)
    r = 0
    while searches:
        queries = {s: q.query(bins, collect) for s, q in searches.items()}
        hist = {s: np.zeros((bins, 2), np.int64) for s, (_, _, w) in queries.items() if w}
        listed: dict[str, list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = {
            s: [] for s, (_, _, w) in queries.items() if not w
        }
        for k, answers in rounds(r, queries):
            for s, a in answers.items():
                if s in hist:
                    hist[s] += a
                else:
                    listed[s].append((k, *a))
        for s, h in hist.items():
            searches[s].narrow(h, queries[s][2], window)
        for s, docs in listed.items():
            out[s] = searches.pop(s).fill(docs, window)
        r += 1
    return out


def check_sampled(
    sizes: Mapping[str, SourceSize], epochs: Mapping[str, float], partial: Mapping[str, Partial]
) -> None:
    """A plan that samples no document at all is a ConfigError."""
    if not sum(math.floor(epochs[s]) * sizes[s].documents + partial[s].documents for s in sizes):
        raise ConfigError(
            f"blend: the plan samples no documents (epochs: {dict(epochs)}); raise the weights or epochs"
        )


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
