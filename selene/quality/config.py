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
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from selene.config.base import StageConfig, Strict, format_validation_error
from selene.errors import ConfigError


class ClassifierSpec(Strict):
    """One classifier: a fastText `.bin` and the label whose probability is the document's score."""

    name: str = Field(description="Its name: documents get `quality.<name>` in meta; removals say `quality:<name>`.")
    model: str = Field(description="The fastText supervised model (.bin), selene's or anyone's.")
    label: str = Field(description="The label to read (`hq` or `__label__hq`): its probability is the score.")

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_\-]*", v):
            raise ValueError("a classifier name uses letters, digits, '_' and '-' and starts with a letter or digit")
        return v


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
        return [c.model for c in self.classifiers]


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
