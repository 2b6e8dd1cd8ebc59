"""Training: fastText's supervised model fitted with numpy (and BLAS through scipy), one thread,
seeded, so the same examples, settings and seed give the same bytes."""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.linalg.blas import sgemv, sger

from selene.errors import ConfigError
from selene.quality.fasttext.binary import write_bin
from selene.quality.fasttext.text import (
    _NGRAM_MULTIPLIER,
    _SEPARATORS,
    LABEL_PREFIX,
    _hashes,
    _line,
    _split,
    _widen,
    full_label,
    line_ids,
    normalize,
)

_CHUNK_DOCS = 1024  # documents whose features are built in one vectorised pass (bounds the memory)


@dataclass(frozen=True)
class Settings:
    """Training settings, named after fastText's options (``-dim``, ``-epoch``, ``-lr`` ...).

    The defaults are `fasttext supervised`'s with DCLM's ``-wordNgrams 2``, except two sizes:

    - `dim` 64 (fastText and DCLM: 100). With two labels the model is a linear classifier over the
      bag of words and n-grams whatever `dim` is (only each row's projection on the difference of
      the two output rows reaches the logit), so `dim` buys optimisation slack, not capacity; 64
      keeps a row at 256 bytes (four cache lines) and a step's memory traffic at 64 % of 100's.
    - `bucket` 1,000,000 (fastText: 2,000,000). The n-gram table is ``bucket × dim × 4`` bytes of
      memory and model file (244 MiB here, DCLM's 763 MiB). A training set of ~100k documents of
      1 KB has ~17M bigrams, a few million distinct, most of them seen once; the frequent ones,
      which carry the signal, are a few hundred thousand and mostly get a bucket of their own. Not
      a power of two: with 2^k buckets only the low k bits of each word's hash would decide its
      n-grams' bucket (the n-gram hash carries no high bits downwards).
    """

    dim: int = 64
    epoch: int = 5
    lr: float = 0.1
    word_ngrams: int = 2
    bucket: int = 1_000_000
    min_count: int = 1
    lr_update_rate: int = 100

    def __post_init__(self) -> None:
        checks = [
            ("dim", self.dim >= 1, "at least 1"),
            ("epoch", self.epoch >= 1, "at least 1"),
            ("lr", self.lr > 0 and math.isfinite(self.lr), "a positive number"),
            ("word_ngrams", self.word_ngrams >= 1, "at least 1 (1: words only)"),
            ("bucket", 1 <= self.bucket < 2**31 - 1 or self.word_ngrams == 1, "between 1 and 2^31 - 2"),
            ("min_count", self.min_count >= 1, "at least 1"),
            ("lr_update_rate", self.lr_update_rate >= 1, "at least 1"),
        ]
        for name, ok, accepted in checks:
            if not ok:
                raise ConfigError(f"fastText setting {name}={getattr(self, name)!r}: must be {accepted}")

    @property
    def rows_of_ngrams(self) -> int:
        """The n-gram rows of the input matrix: none without word n-grams, as fastText sets
        ``bucket = 0`` for a supervised model with ``wordNgrams 1``."""
        return self.bucket if self.word_ngrams > 1 else 0


@dataclass
class TrainedModel:
    """A model `train` made: fastText's dictionary and matrices, and what explains them.

    `input` holds the rows of the words (ids below `nwords`, most frequent first) and then the
    n-gram buckets; `output` one row per label. `ngram_tokens[b]` are the token ids (into
    `token_strings`) of one n-gram seen in bucket b (-1: none), kept so that `top_ngrams` can show
    n-grams, which fastText's file only knows by bucket. `losses`: the mean cross-entropy of each
    epoch; `ntokens`: the tokens of the training lines as fastText counts them (labels and "</s>"
    included).
    """

    settings: Settings
    words: list[str]
    word_counts: np.ndarray
    labels: list[str]
    label_counts: np.ndarray
    ntokens: int
    input: np.ndarray
    output: np.ndarray
    losses: list[float]
    ngram_tokens: np.ndarray
    token_strings: list[str]
    seconds: float
    documents: int
    path: str | None = field(default=None)

    @property
    def nwords(self) -> int:
        return len(self.words)

    @property
    def bucket(self) -> int:
        return self.settings.rows_of_ngrams

    @cached_property
    def vocab(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}

    def ngram(self, b: int) -> str | None:
        """One n-gram seen in bucket `b` in training, its tokens joined by spaces; None: none was."""
        if not 0 <= b < len(self.ngram_tokens) or self.ngram_tokens[b, 0] < 0:
            return None
        return " ".join(self.token_strings[int(u)] for u in self.ngram_tokens[b] if u >= 0)

    def line_ids(self, text: str) -> np.ndarray:
        """The input rows fastText averages for the document `text`."""
        return line_ids(normalize(text), self.vocab, self.nwords, self.bucket, self.settings.word_ngrams)

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """The softmax over `labels` for each document (float64, one row per text): the model's
        forward pass in numpy, which fastText's C++ must reproduce from the written file (plus its
        `PROBABILITY_OFFSET`). A text reaching no row gets zeros (fastText predicts nothing)."""
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float64)
        wo = self.output.astype(np.float64)
        for i, text in enumerate(texts):
            ids = self.line_ids(text)
            if ids.size == 0:
                continue
            hidden = self.input[ids].astype(np.float64).mean(axis=0)
            z = wo @ hidden
            z = np.exp(z - z.max())
            out[i] = z / z.sum()
        return out

    def save(self, path: str) -> None:
        """Write the model as fastText's `.bin` (atomically: a reader never sees a partial file)."""
        write_bin(self, path)
        self.path = path


@dataclass
class _Corpus:
    """The training examples read once: every token as an id into `token_strings` (distinct tokens
    in order of first occurrence), each example's tokens ending with "</s>" and concatenated."""

    token_strings: list[str]
    uids: np.ndarray  # int32
    ends: np.ndarray  # int64: where each example's tokens end in `uids`
    label_of: np.ndarray  # int64: each example's label, an index into `labels`
    labels: list[str]
    line_tokens: np.ndarray  # int64: the tokens fastText's getLine counts for the example's line


@dataclass
class _Features:
    """Each document's distinct input rows and how often each occurs (CSR by document)."""

    offsets: np.ndarray  # int64, documents + 1
    ids: np.ndarray  # intp: numpy indexes with it without a conversion
    counts: np.ndarray  # float32
    lengths: np.ndarray  # int64: the number of inputs (fastText's input.size()) per document


class _Ids(dict[str, int]):
    """Token → id, a new token getting the next id: looking up known tokens (nearly all of them)
    stays in C (`map(ids.__getitem__, tokens)`), only a new one calls back into Python."""

    def __missing__(self, token: str) -> int:
        self[token] = n = len(self)
        return n


def _read_examples(examples: Iterable[tuple[str, str]]) -> _Corpus:
    index = _Ids()
    lookup = index.__getitem__
    labels: dict[str, int] = {}
    uids, ends, label_of, line_tokens = array("i"), array("q"), array("q"), array("q")
    for label, text in examples:
        lab = full_label(label)
        if lab == LABEL_PREFIX or any(c in lab for c in " \n" + _SEPARATORS):
            raise ConfigError(f"label {label!r}: a label is one non-empty token (no spaces)")
        label_of.append(labels.setdefault(lab, len(labels)))
        line = normalize(text)
        toks = _line(_split(line), line)  # as scoring will read it: up to a "</s>" written in the text
        line_tokens.append(len(toks) + 1)  # what fastText's getLine counts: the label, the words, "</s>"
        if LABEL_PREFIX in line:
            toks = [t for t in toks if not t.startswith(LABEL_PREFIX)]  # fastText reads them as labels
        uids.fromlist(list(map(lookup, toks)))
        ends.append(len(uids))
    return _Corpus(
        token_strings=list(index),
        uids=np.frombuffer(uids, dtype=np.int32) if uids else np.zeros(0, np.int32),
        ends=np.frombuffer(ends, dtype=np.int64) if ends else np.zeros(0, np.int64),
        label_of=np.frombuffer(label_of, dtype=np.int64) if label_of else np.zeros(0, np.int64),
        labels=list(labels),
        line_tokens=np.frombuffer(line_tokens, dtype=np.int64) if line_tokens else np.zeros(0, np.int64),
    )


def _by_count(counts: np.ndarray) -> np.ndarray:
    """fastText's dictionary order: count descending. fastText's std::sort leaves ties in no
    defined order; here they keep their order of first occurrence, so a dictionary is reproducible."""
    return np.argsort(-counts, kind="stable")


def _features(
    corpus: _Corpus, word_of: np.ndarray, nwords: int, settings: Settings
) -> tuple[_Features, np.ndarray]:
    """Every document's input rows (as `line_ids` gives them), vectorised over chunks of documents,
    and one n-gram (its token ids) per bucket hit, for `top_ngrams`."""
    bucket, n = settings.rows_of_ngrams, settings.word_ngrams
    rows = nwords + bucket
    ngram_tokens = np.full((bucket, n), -1, dtype=np.int32)
    hashes = _widen(_hashes(corpus.token_strings)) if n > 1 else np.zeros(0, np.uint64)
    mult, modulus = np.uint64(_NGRAM_MULTIPLIER), np.uint64(max(bucket, 1))
    ndocs = len(corpus.ends)
    first_at = np.full(bucket, np.iinfo(np.int64).max, dtype=np.int64)  # scratch for _remember_ngrams
    ids_parts, count_parts, per_doc, lengths = [], [], [], []
    for c0 in range(0, ndocs, _CHUNK_DOCS):
        c1 = min(ndocs, c0 + _CHUNK_DOCS)
        t0 = int(corpus.ends[c0 - 1]) if c0 else 0
        ends = corpus.ends[c0:c1] - t0
        u = corpus.uids[t0 : t0 + int(ends[-1])]
        doc_len = np.diff(ends, prepend=0)
        doc = np.repeat(np.arange(c1 - c0, dtype=np.int64), doc_len)
        wid = word_of[u]
        known = wid >= 0
        keys = [doc[known] * rows + wid[known]]
        if n > 1:
            end = np.repeat(ends, doc_len)  # each position's document end
            pos = np.arange(len(u), dtype=np.int64)
            h = hashes[u]
            acc = h
            for m in range(n - 1):
                span = len(u) - m - 1
                if span <= 0:
                    break
                acc = acc[:span] * mult + h[m + 1 : m + 1 + span]
                ok = pos[:span] + m + 1 < end[:span]  # the n-gram stays inside its document
                b = (acc[ok] % modulus).astype(np.int64)
                keys.append(doc[:span][ok] * rows + nwords + b)
                _remember_ngrams(ngram_tokens, first_at, b, pos[:span][ok], u, m + 2)
        uniq, counts = _counted(np.concatenate(keys))
        d = uniq // rows
        ids_parts.append((uniq - d * rows).astype(np.intp, copy=False))
        count_parts.append(counts.astype(np.float32))
        per_doc.append(np.bincount(d, minlength=c1 - c0))
        lengths.append(np.bincount(d, weights=counts, minlength=c1 - c0).astype(np.int64))
    offsets = np.zeros(ndocs + 1, dtype=np.int64)
    if ndocs:
        np.cumsum(np.concatenate(per_doc), out=offsets[1:])
    feats = _Features(
        offsets=offsets,
        ids=np.concatenate(ids_parts) if ids_parts else np.zeros(0, np.intp),
        counts=np.concatenate(count_parts) if count_parts else np.zeros(0, np.float32),
        lengths=np.concatenate(lengths) if lengths else np.zeros(0, np.int64),
    )
    return feats, ngram_tokens


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `keys` (sorted, in place) and how often each occurs: `np.unique`'s
    answer without its copies."""
    keys.sort()
    starts = np.empty(len(keys), dtype=bool)
    starts[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=starts[1:])
    at = np.flatnonzero(starts)
    return keys[at], np.diff(at, append=len(keys))


def _remember_ngrams(
    table: np.ndarray, first_at: np.ndarray, buckets: np.ndarray, starts: np.ndarray, uids: np.ndarray, n: int
) -> None:
    """Record, for each bucket not seen before, the token ids of its first n-gram here (its
    earliest start; `first_at` is scratch space, all "none" between calls)."""
    new = table[buckets, 0] < 0
    if not new.any():
        return
    b, at = buckets[new], starts[new]
    np.minimum.at(first_at, b, at)
    hit = np.zeros(len(first_at), dtype=bool)
    hit[b] = True
    fresh = np.flatnonzero(hit)
    at = first_at[fresh]
    first_at[fresh] = np.iinfo(np.int64).max
    for j in range(n):
        table[fresh, j] = uids[at + j]


def _sgd(
    feats: _Features,
    targets: np.ndarray,
    line_tokens: np.ndarray,
    rows: int,
    nlabels: int,
    settings: Settings,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """fastText's supervised SGD, one thread, documents in a seeded random order each epoch.

    Per document, as fastText's ``Model::update`` with the softmax loss: hidden = mean of the input
    rows; p = softmax(output · hidden); alpha = lr · (onehot(label) − p); the hidden's gradient
    alpha · output (taken before the output rows move) is scaled by 1 / (number of inputs), as
    fastText does for supervised models, and added to every input row once per occurrence (a
    document's distinct rows are gathered once, updated together and written back); each output
    row moves by alpha_c · hidden. The learning rate decays linearly with the tokens
    processed, ``lr · (1 − tokens / (epoch · ntokens))``, the count advancing every time more than
    `lr_update_rate` tokens have gone by, as in fastText's training thread.
    """
    rng = np.random.default_rng(seed)
    dim = settings.dim
    wi = rng.random((rows, dim), dtype=np.float32)
    wi *= np.float32(2.0 / dim)
    wi -= np.float32(1.0 / dim)  # uniform in [-1/dim, 1/dim), fastText's initialisation
    wo = np.zeros((nlabels, dim), dtype=np.float32)
    # One item per input row, so that gathering and scattering a document's rows copies whole rows
    # (numpy's row-wise fancy indexing of the float matrix is twice as slow).
    row = np.dtype((np.void, 4 * dim))
    table = wi.view(row).reshape(-1)
    offsets = feats.offsets.tolist()
    # count / (number of inputs): the mean of the rows is Σ weight · row, and each row's share of
    # the gradient (fastText: 1/n per occurrence) is weight · gradient
    per_doc = np.repeat(np.maximum(feats.lengths, 1), np.diff(feats.offsets))
    weights_all = (feats.counts / per_doc).astype(np.float32)
    ids_all = feats.ids
    target = targets.tolist()
    ntok = line_tokens.tolist()
    total = float(settings.epoch * int(line_tokens.sum()))
    lr0, rate = settings.lr, settings.lr_update_rate
    token_count = local = 0
    losses: list[float] = []
    for _ in range(settings.epoch):
        loss, seen = 0.0, 0
        for d in rng.permutation(len(target)).tolist():
            s, e = offsets[d], offsets[d + 1]
            if e > s:
                lr = lr0 * (1.0 - token_count / total)
                ids = ids_all[s:e]
                weights = weights_all[s:e]
                inputs = table.take(ids).view(np.float32).reshape(e - s, dim)
                hidden = sgemv(1.0, inputs.T, weights)
                # the softmax in Python floats: with a handful of labels, cheaper than numpy calls
                z = (wo @ hidden).tolist()
                top = max(z)
                ex = [math.exp(v - top) for v in z]
                norm = sum(ex)
                t = target[d]
                loss -= math.log(max(ex[t] / norm, 1e-30))
                seen += 1
                alpha = [-lr * v / norm for v in ex]
                alpha[t] += lr  # alpha = lr * (onehot - p)
                a = np.array(alpha, dtype=np.float32)
                grad = a @ wo  # before the output rows move
                sger(1.0, hidden, a, a=wo.T, overwrite_a=1)  # wo[c] += alpha_c · hidden, in place
                # every input row += weight · grad, as one BLAS rank-1 update of the gathered rows
                updated = sger(1.0, grad, weights, a=inputs.T, overwrite_a=1).T
                table[ids] = np.ascontiguousarray(updated).view(row).reshape(-1)
            local += ntok[d]
            if local > rate:
                token_count += local
                local = 0
        losses.append(loss / max(seen, 1))
    return wi, wo, losses


def train(
    examples: Iterable[tuple[str, str]],
    settings: Settings | None = None,
    out_path: str | None = None,
    seed: int = 0,
) -> TrainedModel:
    """Train a fastText supervised classifier on (label, text) pairs; write it to `out_path` if given.

    Labels are given as "hq" or "__label__hq". Each text is `normalize`d and read as fastText will
    read it when scoring (`tokens`: up to a "</s>" written in it; tokens with the label prefix are
    not words). The dictionary is fastText's: the words seen at least `min_count` times ("</s>"
    once per example) by count, then the labels by count. The same examples, settings and seed
    give the same bytes (one thread, seeded shuffling, on the same machine and libraries).
    """
    settings = settings or Settings()
    started = time.perf_counter()
    corpus = _read_examples(examples)
    if len(corpus.ends) == 0:
        raise ConfigError("fastText training: no examples")
    if len(corpus.labels) < 2:
        raise ConfigError(
            f"fastText training needs at least two labels; the examples only have {corpus.labels}"
        )
    counts = np.bincount(corpus.uids, minlength=len(corpus.token_strings))
    order = _by_count(counts)
    kept = order[counts[order] >= settings.min_count]
    if kept.size + settings.rows_of_ngrams >= 2**31:
        raise ConfigError(
            "fastText training: the words and n-gram buckets exceed fastText's 2^31 rows; lower bucket or raise min_count"
        )
    word_of = np.full(len(corpus.token_strings), -1, dtype=np.int32)
    word_of[kept] = np.arange(kept.size, dtype=np.int32)
    label_counts = np.bincount(corpus.label_of, minlength=len(corpus.labels))
    label_order = _by_count(label_counts)
    label_rank = np.empty_like(label_order)
    label_rank[label_order] = np.arange(label_order.size)
    feats, ngram_tokens = _features(corpus, word_of, int(kept.size), settings)
    wi, wo, losses = _sgd(
        feats, label_rank[corpus.label_of], corpus.line_tokens, int(kept.size) + settings.rows_of_ngrams,
        len(corpus.labels), settings, seed,
    )  # fmt: skip
    model = TrainedModel(
        settings=settings,
        words=[corpus.token_strings[int(u)] for u in kept],
        word_counts=counts[kept].astype(np.int64),
        labels=[corpus.labels[int(i)] for i in label_order],
        label_counts=label_counts[label_order].astype(np.int64),
        ntokens=int(corpus.line_tokens.sum()),
        input=wi,
        output=wo,
        losses=losses,
        ngram_tokens=ngram_tokens,
        token_strings=corpus.token_strings,
        seconds=time.perf_counter() - started,
        documents=len(corpus.ends),
    )
    if out_path is not None:
        model.save(out_path)
    return model
