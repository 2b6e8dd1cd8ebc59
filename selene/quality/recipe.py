"""The classifiers the quality stage trains itself, from the recipes of its config (`train:`).

GPT-3's classifier told a curated source from the crawl; a recipe names both, as sources of the
stage's own input and as example files, and the stage trains the classifier before it scores, into
``<output>/classifiers/<name>/``: model.bin and report.json, as `selene quality train` writes them
(`selene.quality.train.train_examples`). From there on the model is used exactly as a given one.

Each class's examples are sampled in the order of a seeded hash of (label, document id), so the same
input, recipe and seed give the same model, byte for byte. ``recipe.json``, written last, holds the
recipe's fingerprint (the examples by content, the settings, the seed, selene's version) and the
sha256 of model.bin: a rerun, or a killed run resumed, takes the classifier as it stands while both
match, and trains it again otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from selene import __version__
from selene.errors import ConfigError
from selene.io import dataset, fingerprints, fs
from selene.manifest import DocumentManifest
from selene.quality import fasttext
from selene.quality.config import ClassifierSpec, Examples, QualityConfig, TrainRecipe
from selene.quality.examples import Example, dataset_examples, files_item, read_item
from selene.quality.manifest import TrainedClassifier
from selene.quality.train import train_examples
from selene.quality.train_report import ClassifierReport

CLASSIFIERS = "classifiers"
RECIPE = "recipe.json"


def classifier_dir(out: str, name: str) -> str:
    return fs.join(out, CLASSIFIERS, name)


def model_path(out: str, name: str) -> str:
    return fs.join(classifier_dir(out, name), "model.bin")


def resolved(cfg: QualityConfig, out: str) -> QualityConfig:
    """`cfg` with each trained classifier as a given one: its model in `classifier_dir`."""
    specs = [
        ClassifierSpec(name=c.name, model=model_path(out, c.name), label=c.label) if c.train else c
        for c in cfg.classifiers
    ]
    return cfg.model_copy(update={"classifiers": specs})


def _where(spec: ClassifierSpec, cls: str) -> str:
    return f"quality.classifiers[{spec.name}].train.{cls}"


def _classes(recipe: TrainRecipe) -> list[tuple[str, Examples, str]]:
    return [
        ("positive", recipe.positive, recipe.positive_label),
        ("negative", recipe.negative, recipe.negative_label),
    ]


def check(inp: str, m_in: DocumentManifest, cfg: QualityConfig) -> None:
    """Before any work: every recipe source is a source of the input with documents left, and every
    glob matches files."""
    have = m_in.stats.per_source
    for spec in cfg.classifiers:
        if spec.train is None:
            continue
        for cls, examples, label in _classes(spec.train):
            missing = [s for s in examples.sources if s not in have]
            if missing:
                raise ConfigError(
                    f"{_where(spec, cls)}.sources: {', '.join(missing)} not in {inp} (its sources: {', '.join(have)})"
                )
            if examples.sources and not examples.files and not sum(have[s].kept for s in examples.sources):
                raise ConfigError(
                    f"{_where(spec, cls)}.sources: no documents of {', '.join(examples.sources)} left in {inp} "
                    "(all removed before it); a classifier needs examples of both classes"
                )
            for pattern in examples.files:
                files_item(f"{_where(spec, cls)}.files", pattern, label)


def _digest(path: str) -> str:
    """A file by its content; a selene dataset by its manifest, which lists its shards' sha256."""
    manifest = fs.join(path, dataset.MANIFEST)
    if os.path.isdir(path):
        return fs.sha256_file(manifest) if fs.exists(manifest) else ""  # reading it says what is wrong
    return fs.sha256_file(path)


def fingerprint(spec: ClassifierSpec, m_in: DocumentManifest, seed: int) -> str:
    """What the model depends on: the input's shards (when the recipe takes sources of it), the
    example files by content, the recipe and the seed. Not selene's version: a new selene alone never
    retrains a finished classifier (and so never reruns the stage that scores with it); a trainer
    change that alters the model is a recipe setting, or --force."""
    assert spec.train is not None
    recipe = spec.train
    shards = [s.sha256 for s in m_in.shards] if recipe.positive.sources or recipe.negative.sources else []
    files = [
        (pattern, [(p, _digest(p)) for p in files_item(f"{_where(spec, cls)}.files", pattern, label).files])
        for cls, examples, label in _classes(recipe)
        for pattern in examples.files
    ]
    return fingerprints.of(recipe.model_dump(mode="json"), seed, shards, files)


class Finished(BaseModel):
    """``recipe.json``: what a trained classifier was trained from, written after its model."""

    selene_version: str | None = None  # the selene that trained it (absent: written before it was recorded)
    fingerprint: str
    model_sha256: str
    seed: int
    recipe: TrainRecipe


def _finished(directory: str, fp: str) -> ClassifierReport | None:
    """The report of the classifier in `directory` when its recipe.json has fingerprint `fp` and its
    model.bin is the file it records; None otherwise."""
    model, report, recipe = (fs.join(directory, n) for n in ("model.bin", "report.json", RECIPE))
    if not all(fs.exists(p) for p in (model, report, recipe)):
        return None
    try:
        done = Finished.model_validate_json(fs.read_text(recipe))
        if done.fingerprint != fp or done.model_sha256 != fs.sha256_file(model):
            return None
        return ClassifierReport.model_validate_json(fs.read_text(report))
    except ValidationError:  # a damaged file: train again
        return None


def _examples(inp: str, spec: ClassifierSpec, cls: str, examples: Examples, label: str) -> Iterator[Example]:
    """One class's examples; the label is every example's group (the sampling hash's key with the id)."""
    if examples.sources:
        yield from dataset_examples(inp, label, set(examples.sources))
    for pattern in examples.files:
        yield from read_item(files_item(f"{_where(spec, cls)}.files", pattern, label))


def _settings(recipe: TrainRecipe) -> tuple[fasttext.Settings, set[str]]:
    """The trainer's settings with the recipe's, and the names of those the recipe fixes (the
    others are chosen by validation AUC)."""
    given: dict[str, Any] = {"dim": recipe.dim, "word_ngrams": recipe.word_ngrams, "lr": recipe.lr, "epoch": recipe.epoch}
    fixed = {k: v for k, v in given.items() if v is not None}
    return dataclasses.replace(fasttext.Settings(), bucket=recipe.bucket, **fixed), {*fixed, "bucket"}


def _train(
    inp: str, m_in: DocumentManifest, out: str, spec: ClassifierSpec, stage_seed: int, force: bool
) -> TrainedClassifier:
    """The classifier of `spec`'s recipe in `classifier_dir`: trained, or the finished one there."""
    recipe = spec.train
    assert recipe is not None
    seed = stage_seed if recipe.seed is None else recipe.seed
    directory = classifier_dir(out, spec.name)
    fp = fingerprint(spec, m_in, seed)
    report = None if force else _finished(directory, fp)
    if report is None:
        fs.rm(fs.join(directory, RECIPE))  # from here until it is written again, the directory is unfinished
        positives, negatives = (
            _examples(inp, spec, cls, examples, label) for cls, examples, label in _classes(recipe)
        )
        settings, fixed = _settings(recipe)
        report = train_examples(
            positives, negatives, directory, classes=(_where(spec, "positive"), _where(spec, "negative")),
            positive_label=recipe.positive_label, negative_label=recipe.negative_label, max_bytes=recipe.max_bytes,
            heldout_fraction=recipe.heldout, seed=seed, settings=settings, fixed=fixed,
        ).report  # fmt: skip
        done = Finished(selene_version=__version__, fingerprint=fp, model_sha256=fs.sha256_file(model_path(out, spec.name)), seed=seed, recipe=recipe)
        fs.atomic_write(fs.join(directory, RECIPE), json.dumps(done.model_dump(mode="json"), indent=2) + "\n")
        said = "trained"
    else:
        said = "reused (its recipe and examples are unchanged)"
    summary = _summary(report, directory, fp, recipe)
    auc = summary.auc_said(4)
    print(f"quality: classifier {spec.name} {said}: {directory}, held-out AUC {auc}", file=sys.stderr)
    return summary


def _summary(report: ClassifierReport, directory: str, fp: str, recipe: TrainRecipe) -> TrainedClassifier:
    held, labels, ex = report.heldout, report.labels, report.examples
    return TrainedClassifier(
        report=fs.join(directory, "report.json"),
        fingerprint=fp,
        positive=recipe.positive.described(),
        negative=recipe.negative.described(),
        documents={labels.positive: ex.positive.documents, labels.negative: ex.negative.documents},
        heldout={labels.positive: ex.positive.heldout, labels.negative: ex.negative.heldout},
        auc=None if math.isnan(held.auc) else held.auc,
        precision=held.precision,
        recall=held.recall,
        threshold=held.threshold,
        settings=report.settings.model_dump(),
    )


def train_all(
    inp: str, m_in: DocumentManifest, out: str, cfg: QualityConfig, *, force: bool
) -> dict[str, TrainedClassifier]:
    """Every recipe's classifier (classifier name → its summary), before any scoring."""
    return {
        c.name: _train(inp, m_in, out, c, cfg.seed, force) for c in cfg.classifiers if c.train is not None
    }
