"""What `selene quality` records in its manifest."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, Record, Stats


class QualityInputs(DatasetInputs):
    """The document dataset read, its shards, and the classifier files (by content)."""

    shards: list[str] = Field(description="sha256 of each input shard.")
    models: dict[str, str] = Field(description="Classifier name → sha256 of its model file.")


class TrainedClassifier(Record):
    """A classifier the stage trained from its recipe (`train:`), with its held-out report's headline."""

    report: str = Field(description="Its report.json: held-out scores, the words and n-grams that weigh most.")
    fingerprint: str = Field(description="The recipe's: its examples (by content), settings and seed.")
    positive: list[str] = Field(description="The positive examples: sources of the input, and file globs.")
    negative: list[str] = Field(description="The negative examples: sources of the input, and file globs.")
    documents: dict[str, int] = Field(description="Label → documents sampled (training and held out).")
    heldout: dict[str, int] = Field(description="Label → of those, held out for the report.")
    auc: float | None = Field(description="Held-out AUC (None: a class had no held-out document).")
    precision: float = Field(description="Held-out precision of the positive label at `threshold`.")
    recall: float = Field(description="Held-out recall of the positive label at `threshold`.")
    threshold: float = Field(description="The score at which precision and recall are counted.")
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="fastText's settings it was trained with (chosen by validation AUC where the recipe leaves "
        "them open), its seed and fastText's version: with the examples, what makes its bytes.",
    )

    def auc_said(self, digits: int) -> str:
        """The held-out AUC as a summary says it, or why there is none (the labels nothing was held out of)."""
        if self.auc is not None:
            return f"{self.auc:.{digits}f}"
        missing = [label for label, n in self.heldout.items() if not n]
        return f"n/a (no {' or '.join(missing)} document held out)" if missing else "n/a"


class ClassifierSummary(Record):
    """One classifier as the run used it."""

    _omit_if_none = ("trained",)

    model: str = Field(description="The model file.")
    label: str = Field(description="The label read (fastText's `__label__<name>`).")
    cutoff: float | None = Field(
        default=None,
        description="The least score kept by this classifier's rule (`combine: each`; None: pareto sampling).",
    )
    histogram: dict[str, list[int]] = Field(
        description="Source → documents per score bin (20 bins of 0.05 over [0, 1]) among the judged ones."
    )
    trained: TrainedClassifier | None = Field(
        default=None, description="Set when the stage trained the model itself, from the classifier's recipe."
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
