"""The settings of a quality classifier, chosen by validation AUC.

fastText's defaults (5 epochs, lr 0.1) underfit a small training set: a few hundred documents give
too few updates (on a held-out task of technical prose of two kinds fastText scored an AUC of
0.32-0.37 at its defaults, 0.979 at 50 epochs and lr 0.5). So the settings the user did not fix are
searched over a small grid: each is fitted on the training part less a validation part carved from
it (by a seeded hash of the document; three folds on a small set, whose single validation part would
be a handful of documents), and scored there. The best is the highest validation AUC, ties broken by
the lower log-loss, then by the earlier (cheaper) grid point; the caller retrains on the whole
training part with it. Deterministic: fastText on one thread with a seed, folds by hash.

The grid shrinks with the training text, whose fits cost in proportion to it (`grid`); the search
fits on at most `SEARCH_BYTES` of it, and with at most `SEARCH_BUCKET` n-gram buckets (the ranking of
epochs, learning rates and n-gram lengths is what is searched; the table's size decides little of it
and its initialisation would dominate a small set's fits).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import xxhash
from pydantic import BaseModel

from selene.quality import fasttext
from selene.quality.fasttext.classifier import label_scores

FULL_GRID = {"epoch": (5, 25, 50), "lr": (0.1, 0.5, 1.0), "word_ngrams": (1, 2)}
MEDIUM_GRID = {"epoch": (5, 25), "lr": (0.1, 0.5), "word_ngrams": (2,)}
LARGE_GRID = {"epoch": (5, 10), "lr": (0.1, 0.5), "word_ngrams": (2,)}
FULL_GRID_BYTES = 2_000_000  # training text up to which every grid point is tried
MEDIUM_GRID_BYTES = 16_000_000
SEARCH_BYTES = 32_000_000  # the most training text the search fits on
SEARCH_BUCKET = 200_003
FOLDS = 3  # on a training set of fewer than FOLDS_BELOW documents
FOLDS_BELOW = 600
VALIDATION = 0.2  # the validation share of a larger training set
SEARCHED = ("epoch", "lr", "word_ngrams")


@dataclass(frozen=True)
class Trial:
    """One grid point and how it did on the validation part(s)."""

    epoch: int
    lr: float
    word_ngrams: int
    auc: float
    log_loss: float
    seconds: float


@dataclass(frozen=True)
class Search:
    """The search's outcome: the settings to retrain with, and every trial (`recorded` leaves the
    timings out: a report is the same bytes on every run)."""

    best: fasttext.Settings
    trials: list[Trial]
    folds: int
    documents: int  # the training documents the search used (validation parts included)
    seconds: float

    def recorded(self) -> SearchRecord:
        """As a report records it."""
        return SearchRecord(
            folds=self.folds,
            documents=self.documents,
            chosen=Chosen(epoch=self.best.epoch, lr=self.best.lr, word_ngrams=self.best.word_ngrams),
            trials=[
                TrialRecord(epoch=t.epoch, lr=t.lr, word_ngrams=t.word_ngrams, auc=t.auc, log_loss=t.log_loss)
                for t in self.trials
            ],
        )


class Chosen(BaseModel):
    """The searched settings (`SEARCHED`) of the grid point chosen."""

    epoch: int
    lr: float
    word_ngrams: int


class TrialRecord(BaseModel):
    """A `Trial` as a report records it: without its time."""

    epoch: int
    lr: float
    word_ngrams: int
    auc: float  # NaN: no validation part had documents of both classes
    log_loss: float


class SearchRecord(BaseModel):
    """The search as a report records it (`Search.recorded`)."""

    folds: int  # 0: every searched setting was fixed, nothing was tried
    documents: int
    chosen: Chosen
    trials: list[TrialRecord]


def grid(base: fasttext.Settings, fixed: Collection[str], train_bytes: int) -> list[fasttext.Settings]:
    """The grid points for a training set of `train_bytes`: the settings named in `fixed` (given by
    the user) stay as `base` has them. Ordered cheapest first (fewer epochs, lower lr, fewer n-grams)."""
    options = (
        FULL_GRID
        if train_bytes <= FULL_GRID_BYTES
        else MEDIUM_GRID
        if train_bytes <= MEDIUM_GRID_BYTES
        else LARGE_GRID
    )
    axes = [(getattr(base, k),) if k in fixed else options[k] for k in SEARCHED]
    return [dataclasses.replace(base, epoch=e, lr=lr, word_ngrams=n) for e, lr, n in itertools.product(*axes)]


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of `x`, ties sharing their average rank (scipy's `rankdata`, whose import
    alone costs a command almost a second)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    ends = np.r_[starts[1:], len(xs)]
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Area under the ROC curve: the probability that a positive outscores a negative (ties: half),
    from the Mann-Whitney rank sum."""
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = average_ranks(np.concatenate([pos, neg]).astype(np.float64))
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def log_loss(pos: np.ndarray, neg: np.ndarray) -> float:
    """Mean cross-entropy of the positive label's probability (clipped away from 0 and 1)."""
    p = np.clip(np.concatenate([pos, 1.0 - neg]), 1e-7, 1.0)
    return float(-np.log(p).mean()) if len(p) else float("nan")


def balanced(
    pos: Sequence[str], neg: Sequence[str], labels: tuple[str, str], seed: int
) -> list[tuple[str, str]]:
    """Both classes with as many lines each: the smaller class's documents repeated (whole passes,
    then a seeded choice for the rest), so fastText's loss weighs the classes equally without
    dropping any document of the larger one."""
    out: list[tuple[str, str]] = []
    big = max(len(pos), len(neg))
    rng = np.random.default_rng(seed)
    for label, texts in zip(labels, (pos, neg), strict=True):
        if not texts:
            continue
        whole, rest = divmod(big, len(texts))
        out += [(label, t) for t in texts] * whole
        out += [(label, texts[int(i)]) for i in np.sort(rng.choice(len(texts), size=rest, replace=False))]
    return out


def _fold(doc_id: str, seed: int) -> float:
    return (xxhash.xxh64_intdigest(f"validation\0{seed}\0{doc_id}".encode()) >> 11) / float(1 << 53)


def _prefix(docs: Sequence[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """The documents (in their seeded order) up to `limit` bytes of text."""
    out: list[tuple[str, str]] = []
    total = 0
    for d in docs:
        total += len(d[1])
        if total > limit and out:
            break
        out.append(d)
    return out


def choose(
    pos: Sequence[tuple[str, str]],
    neg: Sequence[tuple[str, str]],
    labels: tuple[str, str],
    base: fasttext.Settings,
    fixed: Collection[str],
    seed: int,
) -> Search:
    """The best grid point for the (id, text) training documents of the two classes (`labels`:
    positive, negative). With every searched setting fixed, `base` itself, untried."""
    started = time.perf_counter()
    pos = _prefix(pos, SEARCH_BYTES // 2)
    neg = _prefix(neg, SEARCH_BYTES // 2)
    points = grid(base, fixed, sum(len(t) for _, t in [*pos, *neg]))
    if len(points) == 1:
        return Search(points[0], [], 0, len(pos) + len(neg), 0.0)
    folds = FOLDS if len(pos) + len(neg) < FOLDS_BELOW else 1
    splits = []
    for f in range(folds):

        def held(doc_id: str, f: int = f) -> bool:
            u = _fold(doc_id, seed)
            return int(u * folds) == f if folds > 1 else u < VALIDATION

        splits.append(
            (
                [t for i, t in pos if not held(i)], [t for i, t in neg if not held(i)],
                [t for i, t in pos if held(i)], [t for i, t in neg if held(i)],
            )
        )  # fmt: skip
    label = fasttext.full_label(labels[0])
    usable = [(tp, tn, vp, vn) for tp, tn, vp, vn in splits if tp and tn and (vp or vn)]
    trials = []
    with contextlib.ExitStack() as stack:
        # each fold's training file is written once, for every grid point
        files = [
            stack.enter_context(fasttext.training_file(balanced(tp, tn, labels, seed), seed))
            for tp, tn, _, _ in usable
        ]
        for point in points:
            small = dataclasses.replace(point, bucket=min(point.bucket, SEARCH_BUCKET))
            t0 = time.perf_counter()
            sp: list[np.ndarray] = []
            sn: list[np.ndarray] = []
            for (path, n), (_, _, vp, vn) in zip(files, usable, strict=True):
                model = fasttext.fit(path, n, small, seed)
                sp.append(label_scores(model.model, label, vp))
                sn.append(label_scores(model.model, label, vn))
            p = np.concatenate(sp) if sp else np.zeros(0)
            q = np.concatenate(sn) if sn else np.zeros(0)
            trials.append(
                Trial(
                    point.epoch,
                    point.lr,
                    point.word_ngrams,
                    auc(p, q),
                    log_loss(p, q),
                    time.perf_counter() - t0,
                )
            )
    scored = [(i, t) for i, t in enumerate(trials) if not math.isnan(t.auc)]
    best = min(scored, key=lambda it: (-it[1].auc, it[1].log_loss, it[0]))[0] if scored else 0
    return Search(points[best], trials, folds, len(pos) + len(neg), time.perf_counter() - started)
