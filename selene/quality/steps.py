"""What the quality stage's steps store and pass on: typed, so the next step reads named fields."""

from __future__ import annotations

import numpy as np

from selene.io.steps import StepResult
from selene.manifest import ShardEntry
from selene.quality.manifest import Example


class SourceScores(StepResult):
    """One source's documents in a scored shard."""

    documents: int
    judged: int
    tokens: int  # whitespace words of the judged documents
    report: list[list[int]]  # per classifier: judged documents per report bin (`scores.REPORT_BINS`)


class Scored(StepResult):
    """A shard's scoring (``quality-score``): per classifier, its judged tokens per score bin
    (`scores.BINS` over [0, 1]), and what each source had in it. The scores themselves are a file."""

    hist: list[list[int]]
    sources: dict[str, SourceScores]


class Cutoffs(StepResult):
    """The rule's cut-offs, found from every shard's scores, for ``quality-write``."""

    cutoffs: list[float | None]  # per classifier: `combine: each` or one classifier (None: pareto)
    cutoff: float | None = None  # of the combined score (`combine: mean | max_bucket`)
    cdfs: list[list[float]] | None = (
        None  # `combine: max_bucket`: per classifier, tokens scored below each bin
    )

    def cdf_array(self) -> np.ndarray | None:
        return None if self.cdfs is None else np.asarray(self.cdfs)


class Written(StepResult):
    """A shard's writing (``quality-write``): the output shard, its documents per source and fate
    (in, judged, tokens, kept, ``quality:<classifier>``), and the examples nearest the decision."""

    shard: ShardEntry
    counts: dict[str, dict[str, int]]
    examples: list[Example]
