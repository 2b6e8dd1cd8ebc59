"""``report.json`` of a trained classifier, typed: what `selene.quality.train` writes beside the model
(`selene quality train`, and the quality stage's recipes) and `selene.quality.recipe` reads back.

Written with ``json.dumps(report.model_dump(), indent=2)``: the Python values as they are, so a held-out
AUC of NaN (a class without held-out documents) is written as fastText's users read it, ``NaN``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from selene.quality.fasttext import RecordedSettings
from selene.quality.search import SearchRecord


class Labels(BaseModel):
    """The label of each class, as given (``hq``, not ``__label__hq``)."""

    positive: str
    negative: str


class ClassExamples(BaseModel):
    """One class's documents as sampled (documents in both classes left out)."""

    documents: int  # training and held out
    bytes: int  # their text, UTF-8
    heldout: int  # of `documents`, held out for the report


class Examples(BaseModel):
    positive: ClassExamples
    negative: ClassExamples
    shared_dropped: int  # texts in both classes, left out of both
    training_lines: int  # lines of fastText's training file: the smaller class repeated to balance


class Histograms(BaseModel):
    """Held-out documents of each class per score bin (`train.REPORT_BINS` bins over [0, 1])."""

    positive: list[int]
    negative: list[int]


class Heldout(BaseModel):
    """The held-out part, scored by the model."""

    auc: float  # NaN: a class had no held-out document
    threshold: float  # the score at which precision and recall are counted
    precision: float
    recall: float
    histogram: Histograms


class TrainedSettings(RecordedSettings):
    """fastText's settings and seed the model was fitted with, and what else makes its bytes."""

    quantize_cutoff: int | None  # None: not quantized (a .bin)
    fasttext: str  # the fasttext-numpy2-wheel version
    max_bytes: int  # each class's sample, in bytes of text
    heldout_fraction: float
    fixed: list[str]  # the settings the user gave (not searched), sorted


class ClassifierReport(BaseModel):
    """``report.json``."""

    model: str  # the model file: model.bin, or model.ftz when quantized
    labels: Labels
    examples: Examples
    heldout: Heldout
    top_ngrams: dict[str, list[tuple[str, float]]]  # label → (word or n-gram, weight), heaviest first
    settings: TrainedSettings
    search: SearchRecord


@dataclass(frozen=True)
class Trained:
    """A classifier `train.train_examples` trained: its report (as written), and the time its two parts
    took (returned, not written: the same inputs give the same report.json, byte for byte)."""

    report: ClassifierReport
    search_seconds: float  # choosing the settings by validation AUC
    fit_seconds: float  # fastText's fit of the whole training part with them
