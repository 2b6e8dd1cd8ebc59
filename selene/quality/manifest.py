"""What `selene quality` records in its manifest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, Record, Stats


class QualityInputs(DatasetInputs):
    """The document dataset read, its shards, and the classifier files (by content)."""

    shards: list[str] = Field(description="sha256 of each input shard.")
    models: dict[str, str] = Field(description="Classifier name → sha256 of its model file.")


class ClassifierSummary(Record):
    """One classifier as the run used it."""

    model: str = Field(description="The model file.")
    label: str = Field(description="The label read (fastText's `__label__<name>`).")
    cutoff: float | None = Field(
        default=None,
        description="The least score kept by this classifier's rule (`combine: each`; None: pareto sampling).",
    )
    histogram: dict[str, list[int]] = Field(
        description="Source → documents per score bin (20 bins of 0.05 over [0, 1]) among the judged ones."
    )


class SourceTokens(Record):
    """Judged documents and tokens (whitespace words) of one source: in and kept."""

    judged: int = Field(description="Documents the classifiers scored (the others pass unjudged).")
    kept: int = Field(description="Of those, kept.")
    tokens_in: int = Field(description="Words of the judged documents.")
    tokens_kept: int = Field(description="Words of the judged documents kept.")


class Example(Record):
    """A document near the decision, for a reader to look at."""

    id: str
    source: str
    score: float = Field(description="Its score (the combined one when classifiers are combined).")
    kept: bool
    text: str = Field(description="Its first 300 characters.")


class QualityManifest(DocumentManifest):
    """quality: documents scored by classifiers, the best kept by the rule."""

    stage: Literal["quality"] = "quality"
    inputs: QualityInputs = Field(description="The dataset read, its shards and the classifier files.")
    rule: str = Field(description="threshold | top_fraction | pareto, and how classifiers combine.")
    cutoff: float | None = Field(
        default=None, description="The least combined score kept (`combine: mean | max_bucket`; None: per classifier)."
    )
    classifiers: dict[str, ClassifierSummary] = Field(description="Per classifier: its file, label, cut-off, scores.")
    judged: dict[str, SourceTokens] = Field(description="Per source: documents and tokens judged and kept.")
    examples: list[Example] = Field(description="The lowest-scoring documents kept and the highest dropped.")
    stats: Stats = Field(description="Documents per source and reason (``quality:<classifier>``).")
