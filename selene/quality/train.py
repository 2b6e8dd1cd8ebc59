"""`selene quality train`: a fastText classifier from the user's examples of good and other text.

Positives and negatives are named groups of files (selene document datasets, jsonl / jsonl.gz /
jsonl.zst with a ``text`` field, or Parquet with a ``text`` column). Each class is capped in bytes
and the two are balanced to the smaller, taking documents in the order of a seeded hash of their id
(a random sample that does not depend on file order; read once, holding only what it takes); a
seeded hash of the id also puts each document in the training or the held-out part. The quality
stage trains its recipes (`selene.quality.recipe`) with the same functions. The model is written as fastText's own `.bin`
(`selene.quality.fasttext`), with a report: held-out AUC, precision and recall at the cut-off, the
score distribution of each class, and the words and word n-grams that weigh most each way.
"""

from __future__ import annotations

import dataclasses
import glob as globlib
import gzip
import heapq
import io
import itertools
import json
import os
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash
from scipy.stats import rankdata

from selene.errors import ConfigError, InputError, PathError, UsageError
from selene.io import dataset, fs
from selene.quality import fasttext

REPORT_BINS = 20
UPDATES = 100_000  # example updates the automatic epoch count aims for (at least 5, at most 50 passes)


def auto_epochs(examples: int) -> int:
    """Passes over the examples when the user names none: fastText's 5 for a large set, more for a
    small one, whose few SGD updates leave the model underfit at 5 (2k documents of 3 KB:
    held-out AUC 0.81 at 5 passes, 0.998 at 25; `benchmarks/quality.py`)."""
    return max(5, min(50, -(-UPDATES // max(examples, 1))))


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    group: str  # the NAME of NAME=GLOB


def parse_groups(flag: str, values: Sequence[str]) -> list[tuple[str, str]]:
    """``NAME=GLOB`` options; the error names the flag and the item."""
    out = []
    for v in values:
        name, sep, pattern = v.partition("=")
        if not sep or not name.strip() or not pattern.strip():
            raise ConfigError(f"{flag} {v!r}: expected NAME=GLOB, e.g. {flag} wiki=data/wiki/*.jsonl.zst")
        out.append((name.strip(), pattern.strip()))
    return out


def matched_files(pattern: str, flag: str) -> list[str]:
    """The files (or the one dataset directory) of a glob, sorted; none is an error naming `flag`."""
    if os.path.isdir(pattern):
        return [pattern]
    found = sorted(globlib.glob(pattern))
    if not found:
        raise PathError(f"{flag} {pattern}: matches no file")
    return found


def _jsonl_lines(path: str) -> Iterator[bytes]:
    raw = fs.read_bytes(path)
    if path.endswith(".zst"):
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
    elif path.endswith(".gz"):
        raw = gzip.decompress(raw)
    yield from raw.splitlines()


def read_examples(group: str, pattern: str, flag: str) -> Iterator[Example]:
    """The documents of one NAME=GLOB; a file of another kind, or a line without text, is an error
    naming the file and line."""
    for path in matched_files(pattern, flag):
        if os.path.isdir(path):
            if not fs.exists(fs.join(path, dataset.MANIFEST)):
                raise PathError(
                    f"{flag} {path}: a directory that is not a finished selene dataset (no manifest.json)"
                )
            yield from dataset_examples(path, group)
        elif path.endswith(".parquet"):
            table = dataset.open_parquet(path).read()
            if "text" not in table.column_names:
                raise PathError(f"{flag} {path}: no `text` column (columns: {', '.join(table.column_names)})")
            ids = (
                table.column("id").to_pylist()
                if "id" in table.column_names
                else [f"{path}#{i}" for i in range(table.num_rows)]
            )
            for i, text in zip(ids, table.column("text").to_pylist(), strict=True):
                yield Example(str(i), text or "", group)
        elif path.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.zst", ".json.gz")):
            for n, line in enumerate(_jsonl_lines(path), 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as e:
                    raise InputError(f"{flag} {path}: line {n} is not JSON ({e})") from None
                if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                    raise InputError(f'{flag} {path}: line {n} has no "text" string')
                yield Example(str(row.get("id", f"{path}#{n}")), row["text"], group)
        else:
            raise PathError(f"{flag} {path}: not a selene dataset, .parquet or .jsonl(.gz/.zst) file")


def dataset_examples(path: str, group: str, sources: Collection[str] | None = None) -> Iterator[Example]:
    """The documents of the finished selene dataset at `path`; those of `sources` only, when given."""
    for doc in dataset.iter_documents(path):
        if sources is None or doc["source"] in sources:
            yield Example(doc["id"], doc["text"], group)


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
        size = len(ex.text.encode())
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


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Area under the ROC curve: the probability that a positive outscores a negative (ties: half),
    from the Mann-Whitney rank sum."""
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = rankdata(np.concatenate([pos, neg]))  # ties share their average rank
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def histogram(scores: np.ndarray) -> list[int]:
    return np.bincount(
        np.minimum((scores * REPORT_BINS).astype(np.int64), REPORT_BINS - 1), minlength=REPORT_BINS
    ).tolist()


def train_classifier(
    positives: Sequence[tuple[str, str]],
    negatives: Sequence[tuple[str, str]],
    out: str,
    *,
    positive_label: str = "hq",
    negative_label: str = "lq",
    max_bytes: int = 200_000_000,
    heldout_fraction: float = 0.1,
    threshold: float = 0.5,
    seed: int = 1234,
    settings: fasttext.Settings | None = None,
    epochs: int | None = None,
) -> dict[str, Any]:
    """Train, evaluate on the held-out part, write ``<out>/model.bin`` and ``<out>/report.json``.
    `epochs` (None: `auto_epochs` of the training set) overrides `settings.epoch`."""
    if not 0.0 < heldout_fraction < 1.0:
        raise ConfigError(f"--heldout {heldout_fraction}: must be between 0 and 1")
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"--threshold {threshold}: must be between 0 and 1")
    if positive_label == negative_label:
        raise ConfigError(f"the positive and negative labels must differ (both {positive_label!r})")
    for flag, groups in (("--positive", positives), ("--negative", negatives)):
        for _, pattern in groups:
            matched_files(pattern, flag)  # a glob that matches nothing is refused before any reading
    return train_examples(
        itertools.chain.from_iterable(read_examples(name, pattern, "--positive") for name, pattern in positives),
        itertools.chain.from_iterable(read_examples(name, pattern, "--negative") for name, pattern in negatives),
        out, positive_label=positive_label, negative_label=negative_label, max_bytes=max_bytes,
        heldout_fraction=heldout_fraction, threshold=threshold, seed=seed, settings=settings, epochs=epochs,
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
    epochs: int | None = None,
) -> dict[str, Any]:
    """`train_classifier` on examples already read: each class is sampled as it is read (`sample`),
    so memory holds what is trained on, not the classes. `classes` names the two in errors."""
    found = [sample(positives, max_bytes, seed), sample(negatives, max_bytes, seed)]
    for name, got in zip(classes, found, strict=True):
        if not got.text:
            raise UsageError(f"{name}: no documents with text; a classifier needs examples of both classes")
    cap = min(max_bytes, found[0].bytes_read, found[1].bytes_read)
    pos, neg = (sample(got.examples, cap, seed).examples for got in found)
    train_set = [(positive_label, e.text) for e in pos if not heldout(e, heldout_fraction, seed)]
    train_set += [(negative_label, e.text) for e in neg if not heldout(e, heldout_fraction, seed)]
    test_pos = [e.text for e in pos if heldout(e, heldout_fraction, seed)]
    test_neg = [e.text for e in neg if heldout(e, heldout_fraction, seed)]
    model_path = fs.join(out, "model.bin")
    settings = dataclasses.replace(
        settings or fasttext.Settings(), epoch=epochs or auto_epochs(len(train_set))
    )
    trained = fasttext.train(train_set, settings, model_path, seed=seed)
    clf = fasttext.Classifier.load(model_path, positive_label)
    sp, sn = clf.score(test_pos), clf.score(test_neg)
    tp, fp_, fn = int((sp >= threshold).sum()), int((sn >= threshold).sum()), int((sp < threshold).sum())
    report = {
        "model": model_path,
        "labels": {"positive": positive_label, "negative": negative_label},
        "examples": {
            "positive": {
                "documents": len(pos),
                "bytes": sum(len(e.text.encode()) for e in pos),
                "heldout": len(test_pos),
            },
            "negative": {
                "documents": len(neg),
                "bytes": sum(len(e.text.encode()) for e in neg),
                "heldout": len(test_neg),
            },
        },
        "heldout": {
            "auc": auc(sp, sn),
            "threshold": threshold,
            "precision": tp / max(tp + fp_, 1),
            "recall": tp / max(tp + fn, 1),
            "histogram": {"positive": histogram(sp), "negative": histogram(sn)},
        },
        "top_ngrams": {
            fasttext.short_label(label): [[g, round(float(w), 4)] for g, w in grams]
            for label, grams in fasttext.top_ngrams(trained, 15).items()
        },
        "settings": {
            **dataclasses.asdict(trained.settings),
            "seed": seed,
            "max_bytes": max_bytes,
            "heldout_fraction": heldout_fraction,
        },
    }
    fs.atomic_write(fs.join(out, "report.json"), json.dumps(report, indent=2) + "\n")
    return report
