"""What `selene dedup` records in its manifest."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, Record, Stats


class SimilarityStats(Record):
    """dedup: the similarity of each removed document to the document kept for it (for audit)."""

    _omit_if_none = ("min", "p1", "p5", "p50", "mean")

    measure: str = Field(
        description="`estimate` (MinHash signatures), `exact` (shingle Jaccard), or `estimate, exact near "
        "the threshold` (`verify: signature`: exact where the estimate is within `exact_within` of it)."
    )
    count: int = Field(description="Removed documents.")
    min: float | None = Field(default=None, description="The least similarity.")
    p1: float | None = Field(default=None, description="1st percentile.")
    p5: float | None = Field(default=None, description="5th percentile.")
    p50: float | None = Field(default=None, description="Median.")
    mean: float | None = Field(default=None, description="Mean.")
    histogram: dict[str, int] = Field(
        default_factory=dict, description='Lower bin edge (bins of 0.05; "1.00" is exactly 1) → documents.'
    )
    below_threshold: int = Field(
        default=0, description="Removed below the threshold (only with `verify: none`)."
    )


class ClusterStats(Record):
    """dedup: the near-duplicate clusters found: a kept document and the documents removed for it."""

    _omit_if_none: ClassVar[tuple[str, ...]] = (
        "documents_linked",
        "kept_by_check",
        "exact_checks",
        "removed_similarity",
        "without_score",
    )

    pairs_verified: int = Field(description="Candidate pairs that passed verification (graph edges).")
    clusters: int = Field(description="Clusters of two documents or more.")
    documents_in_clusters: int = Field(description="Documents in those clusters.")
    duplicates: int = Field(description="Documents removed (every member of a cluster but the kept one).")
    cluster_sizes: dict[str, int] = Field(description="Cluster size (as a string) → number of clusters.")
    largest_cluster: int = Field(description="Documents in the largest cluster (1 when there are none).")
    documents_linked: int | None = Field(
        default=None,
        description="Documents joined to another by verified pairs (before the check against the kept one).",
    )
    kept_by_check: int | None = Field(
        default=None,
        description="Linked documents kept because they are below the threshold to every kept document of "
        "their component (each then keeps its own duplicates).",
    )
    exact_checks: int | None = Field(
        default=None,
        description="Documents whose check against a kept document was settled on exact Jaccard (estimate "
        "too close to the threshold).",
    )
    removed_similarity: SimilarityStats | None = Field(
        default=None, description="Similarity of each removed document to the document kept for it."
    )
    without_score: int | None = Field(
        default=None,
        description="keep: score — documents with no number at `score_key` in their meta: ranked after "
        "every copy that has one (ties by corpus order).",
    )


class DedupInputs(DatasetInputs):
    """The document dataset dedup read, with its shards."""

    _omit_if_none = ("against",)

    shards: list[str] = Field(description="sha256 of each input shard.")
    against: list[DatasetInputs] | None = Field(
        default=None, description="--against: the earlier dedup outputs whose documents were kept first."
    )


class LshSummary(Record):
    """dedup: the LSH banding and its S-curve."""

    bands: int = Field(description="Bands b.")
    rows: int = Field(description="Rows per band r.")
    band_sets: int = Field(default=1, description="Sets of b bands cut from the same signature.")
    false_positive_area: float = Field(description="∫_0^t P(J) dJ.")
    false_negative_area: float = Field(description="∫_t^1 (1 - P(J)) dJ.")
    p_at_threshold: float = Field(description="P(candidate | J = threshold).")
    steepest_jaccard: float = Field(description="(1/b)^(1/r): where the S-curve is steepest.")
    s_curve: list[tuple[float, float]] = Field(description="(J, P(candidate | J)) at 101 points.")


class DedupStats(Stats):
    """dedup's stats: with the clusters."""

    clusters: ClusterStats = Field(description="The near-duplicate clusters found.")


class DedupManifest(DocumentManifest):
    """dedup: documents without their near duplicates (MinHash LSH)."""

    stage: Literal["dedup"] = "dedup"
    inputs: DedupInputs = Field(description="The dataset read and its shards.")
    lsh: LshSummary = Field(description="Bands × rows and the S-curve they give.")
    stats: DedupStats = Field(description="Documents per source (reason ``near_dup``) and the clusters.")
