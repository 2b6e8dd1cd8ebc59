"""Scoring with fastText's own C++ (the `fasttext` module): any fastText classifier file and the
label read; and what a model trained here learned (`top_ngrams`)."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import fasttext
import numpy as np

from selene.errors import ConfigError, InputError
from selene.io import fs
from selene.quality.fasttext.binary import ModelInfo, read_info
from selene.quality.fasttext.text import (
    _ENCODING_ERRORS,
    _NGRAM_MULTIPLIER,
    EOS,
    LABEL_PREFIX,
    _hashes,
    _widen,
    full_label,
    normalize,
    short_label,
    tokens,
)
from selene.quality.fasttext.trainer import TrainedModel

# fastText reports a label's probability as exp(log(p + 1e-5)) (its predict keeps log-probabilities
# and adds 1e-5 before the log), so its numbers are the softmax plus this.
PROBABILITY_OFFSET = 1e-5


@contextlib.contextmanager
def _local_file(path: str) -> Iterator[str]:
    """A local path to the file: itself, or a temporary copy of a remote one (fastText's C++ reads
    local files only); the copy goes once fastText has read it."""
    fsys, p = fs.get_fs(path)
    if fs.is_local(path):
        yield p
        return
    with tempfile.TemporaryDirectory(prefix="selene-fasttext-") as d:
        local = os.path.join(d, os.path.basename(p) or "model.bin")
        fsys.get(p, local)
        yield local


class Classifier:
    """A fastText classifier (selene's or anyone's `.bin`/`.ftz`) and the label whose probability is
    a document's score, computed by fastText's own C++.

    The score is the number fastText reports, the softmax plus `PROBABILITY_OFFSET` (so at most
    1.00001): the number datatrove's FastTextClassifierFilter and DCLM compare with their
    thresholds, so a threshold means the same here as there.
    """

    def __init__(self, path: str, label: str, info: ModelInfo, model: Any) -> None:
        self.path, self.label, self.info, self._model = path, label, info, model

    @classmethod
    def load(cls, path: str, label: str) -> Classifier:
        """Load the model at `path` to score `label` ("hq" or "__label__hq").

        Raises `InputError` (naming the file) when the file is missing, not a fastText classifier,
        or damaged, and `ConfigError` (listing the model's labels) when it has no such label."""
        info = read_info(path)
        given = label.strip()
        choices = [given, full_label(given)]
        found = next((c for c in choices if c in info.labels), None)
        if found is None:
            listed = ", ".join(short_label(x) for x in info.labels)
            raise ConfigError(
                f"{path}: the model has no label {label!r}; its labels are: {listed} (with or without '{LABEL_PREFIX}')"
            )
        with _local_file(path) as local:
            try:
                model = fasttext.load_model(local)
            except (ValueError, RuntimeError, MemoryError) as e:
                raise InputError(f"{path}: fastText cannot load it: {e}") from None
        return cls(path, found, info, model)

    @property
    def labels(self) -> list[str]:
        """The model's labels, as its dictionary holds them ("__label__hq", ...)."""
        return list(self.info.labels)

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """The probability of `label` for each document (float64), as fastText computes it on the
        document's `normalize`d line; 0.0 where fastText predicts nothing (no known token)."""
        return label_scores(self._model, self.label, texts)


def label_scores(model: Any, label: str, texts: Sequence[str]) -> np.ndarray:
    """fastText's probability of `label` (as the model's dictionary holds it) for each text, from
    the loaded fastText `model`."""
    out = np.zeros(len(texts), dtype=np.float64)
    predict = model.f.predict
    for i, text in enumerate(texts):
        line = normalize(text).encode("utf-8", _ENCODING_ERRORS) + b"\n"
        for prob, name in predict(line, -1, 0.0, "strict"):
            if name == label:
                out[i] = prob
                break
    return out


def top_ngrams(model: TrainedModel, texts: Sequence[str], k: int = 20) -> dict[str, list[tuple[str, float]]]:
    """For each label, the `k` words and word bigrams whose input rows push most toward it.

    A row r adds ``output · input[r]`` to the logits, divided by the document's number of inputs
    (the same for every row of a document), so its push toward label c is its logit for c minus the
    largest logit of the other labels: the log-odds it adds for c against the strongest alternative
    (with two labels, the log-odds ratio itself). Words come from the model's dictionary ("</s>" left
    out: every document has it). fastText's file knows n-grams only by bucket, so bigrams are named
    from `texts` (the training texts, or a sample of them): each bucket by the most frequent bigram
    of `texts` in it (`line_ids` computes the buckets as fastText does). A quantized model has no
    rows to read: nothing is returned for it.
    """
    ft = model.model
    if model.quantized or ft.is_quantized():
        return {}
    words = list(ft.get_words(on_unicode_error="replace"))
    rows = [i for i, w in enumerate(words) if w != EOS]
    names = [words[i] for i in rows]
    if model.settings.word_ngrams > 1:
        for bucket, gram in _bigram_buckets(texts, model.settings.bucket).items():
            rows.append(len(words) + bucket)
            names.append(gram)
    # views of fastText's own matrices (buffer protocol): `get_input_matrix` would copy all of it
    held = ft.f.getInputMatrix(), ft.f.getOutputMatrix()
    wi, wo = np.asarray(held[0]), np.asarray(held[1])
    logits = wi[np.asarray(rows, dtype=np.int64)].astype(np.float64) @ wo.astype(np.float64).T
    out: dict[str, list[tuple[str, float]]] = {}
    for c, label in enumerate(ft.get_labels()):
        others = np.delete(logits, c, axis=1)
        push = logits[:, c] - (others.max(axis=1) if others.shape[1] else 0.0)
        best = np.argsort(-push, kind="stable")[:k]
        out[label] = [(names[i], float(push[i])) for i in best]
    return out


def _bigram_buckets(texts: Sequence[str], bucket: int) -> dict[int, str]:
    """Bucket → the most frequent bigram of `texts` that fastText puts there (ties: the first seen)."""
    counts: Counter[tuple[str, str]] = Counter()
    for text in texts:
        toks = [t for t in tokens(normalize(text)) if not t.startswith(LABEL_PREFIX)]
        counts.update(p for p in itertools.pairwise(toks) if EOS not in p)
    pairs = [p for p, _ in counts.most_common()]
    if not pairs:
        return {}
    first = _widen(_hashes([a for a, _ in pairs]))
    second = _widen(_hashes([b for _, b in pairs]))
    buckets = ((first * np.uint64(_NGRAM_MULTIPLIER) + second) % np.uint64(bucket)).tolist()
    out: dict[int, str] = {}
    for (a, b), r in zip(pairs, buckets, strict=True):
        out.setdefault(int(r), f"{a} {b}")
    return out
