"""Scoring with fastText's own C++ (fasttext-predict): any fastText classifier file and the label
read; and what a model trained here learned (`top_ngrams`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import fasttext
import numpy as np

from selene.errors import ConfigError, InputError
from selene.io import fs
from selene.quality.fasttext.binary import ModelInfo, read_info
from selene.quality.fasttext.text import (
    _ENCODING_ERRORS,
    EOS,
    LABEL_PREFIX,
    full_label,
    normalize,
    short_label,
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
    a document's score, computed by fastText's own C++ (fasttext-predict).

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
        out = np.zeros(len(texts), dtype=np.float64)
        predict, label = self._model.f.predict, self.label
        for i, text in enumerate(texts):
            line = normalize(text).encode("utf-8", _ENCODING_ERRORS) + b"\n"
            for prob, name in predict(line, -1, 0.0, "strict"):
                if name == label:
                    out[i] = prob
                    break
        return out


def top_ngrams(model: TrainedModel, k: int = 20) -> dict[str, list[tuple[str, float]]]:
    """For each label, the `k` words and word n-grams whose input rows push most toward it.

    A row r adds ``output · input[r]`` to the logits, divided by the document's number of inputs
    (the same for every row of a document), so its push toward label c is its logit for c minus the
    largest logit of the other labels: the log-odds it adds for c against the strongest alternative
    (with two labels, the log-odds ratio itself). Words come from the dictionary ("</s>" left out:
    every document has it); n-gram buckets are shown by the n-gram training saw in them, and
    buckets no training n-gram reached are left out.
    """
    eos = model.vocab.get(EOS)
    word_rows = np.array([i for i in range(model.nwords) if i != eos], dtype=np.int64)
    buckets = np.flatnonzero(model.ngram_tokens[:, 0] >= 0) if model.bucket else np.zeros(0, np.int64)
    rows = np.concatenate([word_rows, model.nwords + buckets])
    logits = model.input[rows].astype(np.float64) @ model.output.astype(np.float64).T
    out: dict[str, list[tuple[str, float]]] = {}
    for c, label in enumerate(model.labels):
        others = np.delete(logits, c, axis=1)
        push = logits[:, c] - (others.max(axis=1) if others.shape[1] else 0.0)
        best = np.argsort(-push, kind="stable")[:k]
        out[label] = [(_row_name(model, int(rows[i])), float(push[i])) for i in best]
    return out


def _row_name(model: TrainedModel, row: int) -> str:
    if row < model.nwords:
        return model.words[row]
    return model.ngram(row - model.nwords) or f"<bucket {row - model.nwords}>"
