"""`selene quality`'s settings: the classifiers, which documents they judge, and the rule that keeps.

A classifier is a fastText supervised model (selene's own, from `selene quality train`, or anyone's
`.bin`: DCLM's, FineWeb-Edu's fastText ports ...) and the label whose probability is the score. The
rule turns the scores into a decision:

- ``threshold``: keep a document whose score is at least `threshold`;
- ``top_fraction``: keep the best-scoring documents that hold `fraction` of the judged tokens (DCLM's
  top 10%: a token-weighted percentile over the whole corpus, not per shard);
- ``pareto``: GPT-3's sampling, keep when a Pareto(`alpha`) draw exceeds ``1 - score`` (GPT-3 used
  alpha 9, NeMo Curator 3); the draw is seeded by the document id, so the decision never depends on
  workers or order.

With several classifiers, `combine` says how: ``each`` (every classifier's rule must keep),
``max_bucket`` (Nemotron-CC: each score becomes its token-weighted percentile bucket, the best bucket
is the document's score) or ``mean`` (the mean score), the rule then applying to the combined score.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from selene.config.base import StageConfig, Strict, format_validation_error
from selene.errors import ConfigError

_LABEL_PREFIX = "__label__"  # fastText's (`selene.quality.fasttext.LABEL_PREFIX`, not imported: it loads numpy)


class Examples(Strict):
    """One class of a recipe's examples: documents of the stage's input, and files."""

    sources: list[str] = Field(
        default_factory=list,
        description="Sources of the stage's own input dataset whose documents are examples (e.g. PythonReference).",
    )
    files: list[str] = Field(
        default_factory=list,
        description="Globs of example files, as `selene quality train -p NAME=GLOB` reads them: selene datasets, "
        ".jsonl(.gz/.zst) with a `text` field, .parquet with a `text` column.",
    )

    @model_validator(mode="after")
    def _some(self) -> Examples:
        if not self.sources and not self.files:
            raise ValueError("give the class's examples: sources (of the input), files (globs), or both")
        return self

    def described(self) -> list[str]:
        """Its sources and globs, as a report names them."""
        return [*self.sources, *self.files]


class TrainRecipe(Strict):
    """A classifier the stage trains before it scores (GPT-3's: a curated source against the crawl),
    as `selene quality train` would from the same examples and settings. The same input, recipe and
    seed give the same model, byte for byte."""

    positive: Examples = Field(description="The good text: its documents are the positive label's examples.")
    negative: Examples = Field(description="The other text (the crawl, say): the negative label's examples.")
    positive_label: str = Field(default="hq", description="Label of the good class (the score read by default).")
    negative_label: str = Field(default="lq", description="Label of the other class.")
    max_bytes: int = Field(
        default=200_000_000, ge=1, description="Bytes of text per class, at most (the smaller class is repeated to balance, none dropped)."
    )
    heldout: float = Field(
        default=0.1, gt=0.0, lt=1.0, description="Share of each class held out for the report (a seeded hash of the id)."
    )
    seed: int | None = Field(
        default=None, description="Sampling, held-out split and training seed; None: the stage's `seed`."
    )
    epoch: int | None = Field(
        default=None, ge=1, description="Passes over the examples; None: chosen by validation AUC (5 to 50)."
    )
    dim: int | None = Field(default=None, ge=1, description="Embedding size; None: the trainer's (64).")
    word_ngrams: int | None = Field(default=None, ge=1, description="Longest word n-gram (2: bigrams); None: chosen by validation AUC (1 or 2).")
    # The model is part of the stage's output, kept in every run directory: 100k n-gram buckets make
    # its table 100,000 × 64 × 4 bytes = 24 MiB, where the trainer's 1M (for `selene quality train` on
    # up to 200 MB a class) make 244 MiB. Words keep rows of their own whatever the bucket count; only
    # n-grams share buckets, and what a curated source and a crawl are told apart by lies mostly in
    # their frequent words and n-grams. Not a power of two, as the trainer's default explains.
    bucket: int = Field(default=100_003, ge=1, description="Hash buckets of the word n-grams (the model's size).")
    lr: float | None = Field(default=None, gt=0.0, description="Learning rate; None: chosen by validation AUC (0.1 to 1.0).")

    @field_validator("positive_label", "negative_label")
    @classmethod
    def _one_token(cls, v: str) -> str:
        if not v.strip() or any(c.isspace() for c in v):
            raise ValueError("a label is one non-empty token (no spaces)")
        return v

    @model_validator(mode="after")
    def _two_classes(self) -> TrainRecipe:
        if self.positive_label == self.negative_label:
            raise ValueError(f"positive_label and negative_label must differ (both {self.positive_label!r})")
        shared = sorted(set(self.positive.sources) & set(self.negative.sources))
        shared += sorted(set(self.positive.files) & set(self.negative.files))
        if shared:
            raise ValueError(f"positive and negative share {', '.join(shared)}: a document cannot be an example of both")
        return self


class ClassifierSpec(Strict):
    """One classifier: a fastText `.bin` given (`model`) or trained by the stage from a recipe
    (`train`), and the label whose probability is the document's score."""

    name: str = Field(description="Its name: documents get `quality.<name>` in meta; removals say `quality:<name>`.")
    model: str | None = Field(default=None, description="The fastText supervised model (.bin), selene's or anyone's.")
    train: TrainRecipe | None = Field(
        default=None,
        description="Train the classifier here instead, into `<output>/classifiers/<name>/` (model.bin, report.json).",
    )
    label: str = Field(
        description="The label to read (`hq` or `__label__hq`): its probability is the score. With `train`, "
        "by default the recipe's positive_label.",
    )

    @model_validator(mode="before")
    @classmethod
    def _label_of_recipe(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("label") is None and data.get("train") is not None:
            recipe = data["train"]
            if isinstance(recipe, TrainRecipe):
                return {**data, "label": recipe.positive_label}
            if isinstance(recipe, dict):
                return {**data, "label": recipe.get("positive_label", TrainRecipe.model_fields["positive_label"].default)}
        return data

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_\-]*", v):
            raise ValueError("a classifier name uses letters, digits, '_' and '-' and starts with a letter or digit")
        return v

    @model_validator(mode="after")
    def _model_or_recipe(self) -> ClassifierSpec:
        if (self.model is None) == (self.train is None):
            raise ValueError(f"classifier {self.name}: give exactly one of `model` (a .bin) and `train` (a recipe)")
        trained = self.train and (self.train.positive_label, self.train.negative_label)
        if trained and self.label.removeprefix(_LABEL_PREFIX) not in trained:
            raise ValueError(f"classifier {self.name}: label {self.label!r} is not one its recipe trains ({', '.join(trained)})")
        return self


class QualityConfig(StageConfig):
    """`selene quality`: score documents with fastText classifiers and keep the best by a rule."""

    classifiers: list[ClassifierSpec] = Field(default_factory=list, description="The classifiers; none: the stage is off.")
    rule: Literal["threshold", "top_fraction", "pareto"] = Field(
        default="threshold", description="threshold | top_fraction (token-weighted) | pareto (GPT-3's sampling)."
    )
    threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="`rule: threshold`: the least score kept.")
    fraction: float = Field(
        default=0.1, gt=0.0, le=1.0, description="`rule: top_fraction`: the share of judged tokens kept (DCLM: 0.1)."
    )
    alpha: float = Field(default=9.0, gt=0.0, description="`rule: pareto`: the Pareto shape (GPT-3: 9, NeMo Curator: 3).")
    combine: Literal["each", "max_bucket", "mean"] = Field(
        default="each", description="Several classifiers: each must keep, the best percentile bucket, or the mean score."
    )
    buckets: int = Field(default=20, ge=2, le=1000, description="`combine: max_bucket`: percentile buckets (20: 5% each).")
    sources: list[str] | None = Field(
        default=None,
        description="Sources judged; the others pass unjudged. Default: web documents (those with a `url` in meta: "
        "WARC/WET pages), as MT-NLG and GPT-3 filtered the crawl only.",
    )
    seed: int = Field(default=1234, description="The Pareto draws' seed.")

    @model_validator(mode="after")
    def _unique_names(self) -> QualityConfig:
        names = [c.name for c in self.classifiers]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"classifier names must be unique, repeated: {', '.join(dup)}")
        return self

    def extra_inputs(self) -> list[str]:
        """The given models and the recipes' example files; a trained model is an output."""
        given = [c.model for c in self.classifiers if c.model is not None]
        return given + [g for c in self.classifiers if c.train for g in (*c.train.positive.files, *c.train.negative.files)]


def parse_classifiers(flag: str, values: list[str]) -> list[ClassifierSpec]:
    """``--classifier NAME=MODEL.bin:LABEL`` options; the error names the item."""
    out = []
    for v in values:
        name, sep, rest = v.partition("=")
        model, colon, label = rest.rpartition(":")
        if not sep or not colon or not name or not model or not label:
            raise ConfigError(f"{flag} {v!r}: expected NAME=MODEL.bin:LABEL, e.g. {flag} hq=models/hq/model.bin:hq")
        try:
            out.append(ClassifierSpec(name=name.strip(), model=model.strip(), label=label.strip()))
        except ValidationError as e:
            raise ConfigError(format_validation_error(e, where=f"{flag} {v!r}")) from None
    return out
