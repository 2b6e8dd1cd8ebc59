"""`selene quality train`: a fastText classifier from the user's examples of good and other text.

Positives and negatives are items ``NAME[KEYS]=PATH`` (`selene.quality.examples`: a source of a
selene dataset, or .jsonl / .parquet files), checked before any work. Each class is capped in bytes,
taking documents in the order of a seeded hash of their id (a random sample that does not depend on
file order; read once, holding only what it takes); a seeded hash of the id also puts each document
in the training or the held-out part. Documents whose text is in both classes are dropped from both
(and counted); a class left without text is refused. The classes are balanced by repeating the
smaller one's documents, none of the larger is dropped.

The settings the user does not fix are chosen by validation AUC on the training part
(`selene.quality.search`), then fastText's own trainer fits the whole training part with them. The
model is fastText's `.bin` (or a quantized `.ftz`), with a report: held-out AUC, precision and
recall at the cut-off, the score distribution of each class, the words and word n-grams that weigh
most each way, the settings and the search. The quality stage trains its recipes
(`selene.quality.recipe`) with the same functions.
"""

from __future__ import annotations

import heapq
import importlib.metadata
import itertools
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from selene.errors import ConfigError
from selene.io import fs
from selene.quality import fasttext, search
from selene.quality.examples import Example, described, read_examples, read_item, resolve_classes
from selene.quality.fasttext.classifier import label_scores
from selene.quality.search import auc
from selene.quality.train_report import (
    ClassExamples,
    ClassifierReport,
    Examples,
    Heldout,
    Histograms,
    Labels,
    Trained,
    TrainedSettings,
)

__all__ = [
    "Example",
    "read_examples",
    "sample",
    "train_classifier",
    "train_examples",
]  # read_examples: the ablations'

REPORT_BINS = 20
NAMING_BYTES = 1_000_000  # training text read to name the n-gram buckets of the report


def _order(ex: Example, seed: int) -> int:
    return int(xxhash.xxh64_intdigest(f"{seed}\0{ex.group}\0{ex.id}".encode()))


@dataclass
class Sampled:
    """What `sample` took from one class, and what it read."""

    examples: list[Example]  # in the order of the seeded hash of their id
    bytes_read: int  # the text of every document read
    text: bool  # whether any document read has text (not only whitespace)


def sample(examples: Iterable[Example], max_bytes: int, seed: int) -> Sampled:
    """Documents in seeded hash order of their id until `max_bytes` of text (the first one always).

    One pass that holds at most those documents (plus one), however many are read: a class may be a
    whole crawl. The documents held are the longest run, in that order, of those read so far that
    fits in `max_bytes`; the first one that had to leave ends the run for good (documents read later
    only add to what is ordered before it), so no document ordered after it is taken. Ties keep the
    reading order."""
    held: list[tuple[int, int, int, Example]] = []  # a max-heap: (-order, -position, bytes, example)
    end: tuple[int, int] | None = None  # (order, position) of the first document past the run
    total = read = 0
    text = False
    for position, ex in enumerate(examples):
        size = len(ex.text.encode("utf-8", "surrogatepass"))
        read += size
        text = text or bool(ex.text.strip())
        key = (_order(ex, seed), position)
        if end is not None and key > end:
            continue
        heapq.heappush(held, (-key[0], -position, size, ex))
        total += size
        while total > max_bytes and len(held) > 1:
            order, last, dropped, _ = heapq.heappop(held)
            total -= dropped
            end = (-order, -last)
    return Sampled([ex for *_, ex in sorted(held, reverse=True)], read, text)


def heldout(ex: Example, fraction: float, seed: int) -> bool:
    return (xxhash.xxh64_intdigest(f"held-out\0{seed}\0{ex.group}\0{ex.id}".encode()) >> 11) / float(
        1 << 53
    ) < fraction


def histogram(scores: np.ndarray) -> list[int]:
    return np.bincount(
        np.minimum((scores * REPORT_BINS).astype(np.int64), REPORT_BINS - 1), minlength=REPORT_BINS
    ).tolist()


def _shared(pos: list[Example], neg: list[Example]) -> tuple[list[Example], list[Example], int]:
    """Both classes without the documents whose text is in both, and how many texts were shared."""
    key = lambda e: xxhash.xxh64_intdigest(e.text.encode("utf-8", "surrogatepass"))  # noqa: E731
    both = {key(e) for e in pos} & {key(e) for e in neg}
    if not both:
        return pos, neg, 0
    return [e for e in pos if key(e) not in both], [e for e in neg if key(e) not in both], len(both)


def _bytes(examples: list[Example]) -> int:
    return sum(len(e.text.encode("utf-8", "surrogatepass")) for e in examples)


def fasttext_version() -> str:
    try:
        return importlib.metadata.version("fasttext-numpy2-wheel")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def train_classifier(
    positives: Sequence[str],
    negatives: Sequence[str],
    out: str,
    *,
    positive_label: str = "hq",
    negative_label: str = "lq",
    max_bytes: int = 200_000_000,
    heldout_fraction: float = 0.1,
    threshold: float = 0.5,
    seed: int = 1234,
    settings: fasttext.Settings | None = None,
    fixed: Collection[str] = (),
    quantize: int | None = None,
) -> Trained:
    """Train from the ``NAME[KEYS]=PATH`` items of each class (checked before any work), evaluate on
    the held-out part, write ``<out>/model.bin`` (``model.ftz`` when quantized) and ``<out>/report.json``
    (`Trained.report`).
    `fixed`: the settings the user gave, which the search leaves as `settings` has them."""
    if not 0.0 < heldout_fraction < 1.0:
        raise ConfigError(f"--heldout {heldout_fraction}: must be between 0 and 1")
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"--threshold {threshold}: must be between 0 and 1")
    if fasttext.full_label(positive_label) == fasttext.full_label(negative_label):
        raise ConfigError(f"the positive and negative labels must differ (both {positive_label!r})")
    pos, neg = resolve_classes(positives, negatives)
    return train_examples(
        # the class's label keys each document's sampling and held-out hash, as in a recipe: the same
        # documents give the same model whatever the items are called
        itertools.chain.from_iterable(read_item(i, positive_label) for i in pos),
        itertools.chain.from_iterable(read_item(i, negative_label) for i in neg),
        out, classes=(f"--positive {described(pos)}", f"--negative {described(neg)}"),
        positive_label=positive_label, negative_label=negative_label, max_bytes=max_bytes,
        heldout_fraction=heldout_fraction, threshold=threshold, seed=seed, settings=settings, fixed=fixed,
        quantize=quantize,
    )  # fmt: skip


def train_examples(
    positives: Iterable[Example],
    negatives: Iterable[Example],
    out: str,
    *,
    classes: tuple[str, str] = ("--positive", "--negative"),
    positive_label: str = "hq",
    negative_label: str = "lq",
    max_bytes: int = 200_000_000,
    heldout_fraction: float = 0.1,
    threshold: float = 0.5,
    seed: int = 1234,
    settings: fasttext.Settings | None = None,
    fixed: Collection[str] = (),
    quantize: int | None = None,
) -> Trained:
    """`train_classifier` on examples already read: each class is sampled as it is read (`sample`),
    so memory holds what is trained on, not the classes. `classes` names the two in errors."""
    found = [sample(positives, max_bytes, seed), sample(negatives, max_bytes, seed)]
    for name, got in zip(classes, found, strict=True):
        if not got.text:
            raise ConfigError(f"{name}: no documents with text; a classifier needs examples of both classes")
    pos, neg, shared = _shared(found[0].examples, found[1].examples)
    for name, other, kept in zip(classes, classes[::-1], (pos, neg), strict=True):
        if not any(e.text.strip() for e in kept):
            raise ConfigError(
                f"{name}: every document with text is also in {other} ({shared} texts in both): "
                "the two classes are the same documents"
            )
    labels = (fasttext.full_label(positive_label), fasttext.full_label(negative_label))
    train_pos = [(e.id, e.text) for e in pos if not heldout(e, heldout_fraction, seed)]
    train_neg = [(e.id, e.text) for e in neg if not heldout(e, heldout_fraction, seed)]
    test_pos = [e.text for e in pos if heldout(e, heldout_fraction, seed)]
    test_neg = [e.text for e in neg if heldout(e, heldout_fraction, seed)]
    if not train_pos or not train_neg:
        raise ConfigError(
            f"{classes[0] if not train_pos else classes[1]}: every document fell in the held-out part "
            f"(--heldout {heldout_fraction}); give more examples or a smaller --heldout"
        )
    base = settings or fasttext.Settings()
    searched = search.choose(train_pos, train_neg, labels, base, fixed, seed)
    texts = search.balanced([t for _, t in train_pos], [t for _, t in train_neg], labels, seed)
    with fasttext.training_file(texts, seed) as (path, n):
        trained = fasttext.fit(path, n, searched.best, seed)
        naming = search._prefix([(str(i), t) for i, (_, t) in enumerate(texts)], NAMING_BYTES)
        top = fasttext.top_ngrams(trained, [t for _, t in naming], 15)
        if quantize is not None:
            trained.quantize(path, quantize)
    model_path = fs.join(out, "model.ftz" if quantize is not None else "model.bin")
    trained.save(model_path)
    fasttext.read_info(model_path)  # the written file is a whole fastText classifier
    # scored by the model in memory: the same C++ predict a reload would run, without reading the
    # file back (hundreds of MB at the default size)
    sp, sn = (label_scores(trained.model, labels[0], texts) for texts in (test_pos, test_neg))
    tp, fp_, fn = int((sp >= threshold).sum()), int((sn >= threshold).sum()), int((sp < threshold).sum())
    report = ClassifierReport(
        model=model_path,
        labels=Labels(positive=positive_label, negative=negative_label),
        examples=Examples(
            positive=ClassExamples(documents=len(pos), bytes=_bytes(pos), heldout=len(test_pos)),
            negative=ClassExamples(documents=len(neg), bytes=_bytes(neg), heldout=len(test_neg)),
            shared_dropped=shared,
            training_lines=n,
        ),
        heldout=Heldout(
            auc=auc(sp, sn),
            threshold=threshold,
            precision=tp / max(tp + fp_, 1),
            recall=tp / max(tp + fn, 1),
            histogram=Histograms(positive=histogram(sp), negative=histogram(sn)),
        ),
        top_ngrams={
            fasttext.short_label(label): [(g, round(float(w), 4)) for g, w in grams] for label, grams in top.items()
        },
        settings=TrainedSettings(
            **searched.best.recorded(seed).model_dump(), quantize_cutoff=quantize, fasttext=fasttext_version(),
            max_bytes=max_bytes, heldout_fraction=heldout_fraction, fixed=sorted(fixed),
        ),
        search=searched.recorded(),
    )  # fmt: skip
    fs.atomic_write(fs.join(out, "report.json"), json.dumps(report.model_dump(), indent=2) + "\n")
    return Trained(report, search_seconds=searched.seconds, fit_seconds=trained.seconds)
