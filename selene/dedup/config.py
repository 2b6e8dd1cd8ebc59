"""`selene dedup`'s settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from selene.config.base import StageConfig

# dedup's default verification margin, in standard deviations of the signature's Jaccard estimate
VERIFY_SIGMAS = 3.0


class DedupConfig(StageConfig):
    """`selene dedup`: fuzzy near-duplicate removal with MinHash LSH."""

    threshold: float = Field(
        default=0.8, gt=0.0, lt=1.0, description="Jaccard similarity that makes a duplicate."
    )
    num_perm: int = Field(default=128, ge=8, le=1024, description="MinHash permutations (signature length).")
    ngram: int = Field(default=5, ge=1, le=64, description="Shingle size, in words or characters.")
    shingle: Literal["word", "char"] = Field(default="word", description="Shingle on words or on characters.")
    bands: int | None = Field(
        default=None, ge=1, description="LSH bands; chosen from `threshold` when unset."
    )
    rows: int | None = Field(default=None, ge=1, description="Rows per band; set together with `bands`.")
    band_sets: int = Field(
        default=2,
        ge=1,
        le=8,
        description="Sets of bands × rows cut from the same signature in different orders of its values "
        "(`lsh.band_positions`). Each further set is another chance for a near-duplicate pair to share a "
        "band, at no extra hashing: one more pass over the keys, and more candidates to verify (the "
        "dedup stage's page, docs/stages/dedup.md, and benchmarks/dedup.py give what it gains). 1: plain LSH, datasketch's and "
        "datatrove's banding.",
    )
    false_positive_weight: float = Field(
        default=0.02,
        ge=0.0,
        le=1.0,
        description="Weight of false positives against false negatives when bands × rows are chosen "
        "(datasketch's routine). Far below 0.5 because verification rejects extra candidates cheaply while "
        "a pair that never shares a band is lost: at threshold 0.8, 0.5 gives 9×13 (P(candidate | J=0.8) "
        "= 0.40), 0.3 gives 11×11 (0.63), 0.02 gives 17×7 (0.98).",
    )
    verify: Literal["signature", "exact", "none"] = Field(
        default="signature",
        description="Check candidate pairs, and each removed document against the document kept for it: "
        "estimated Jaccard from full signatures, exact Jaccard on shingles, or no check (every LSH candidate "
        "links, every linked document but the kept one goes).",
    )
    verify_margin: float | None = Field(
        default=None,
        ge=0.0,
        lt=1.0,
        description="`verify: signature` links a candidate pair into a component when its estimated Jaccard "
        "is at least threshold − margin; the default is 3 standard deviations of the estimate, "
        "sqrt(t(1 − t)/num_perm) at the threshold t (0.106 at t = 0.8 and 128 permutations). Links only "
        "gather documents: a document is removed when its estimate against the document kept for it is at "
        "least the threshold itself (no margin: the estimate is unbiased, so errors fall evenly on both "
        "sides of the threshold), so a looser margin can raise recall but never removes a document below "
        "the threshold's noise.",
    )
    exact_within: float | None = Field(
        default=None,
        ge=0.0,
        lt=1.0,
        description="`verify: signature`: when the estimate of a document against the document kept for it "
        "is within this distance of the threshold, the decision is taken on exact shingle Jaccard (the "
        "two texts are read and shingled again) instead: the estimate cannot tell 0.78 from 0.82. The "
        "default, 3 standard deviations of the estimate at the threshold (0.106 at t = 0.8 and 128 "
        "permutations), leaves the estimate to decide only where it errs with probability < 0.2%. "
        "0: decide on the estimate alone (at the threshold, without margin).",
    )
    keep: Literal["first", "longest", "priority", "score"] = Field(
        default="first",
        description="Which document of a linked component stays: the first in corpus order, the longest, the "
        "one from the source earliest in `priority` (MT-NLG's rule: the copy from the best dataset), or the "
        "one with the highest `score_key` in meta (a quality score); ties by corpus order. Members below the "
        "threshold to it repeat the choice among themselves.",
    )
    priority: list[str] = Field(
        default_factory=list,
        description="keep: priority — sources, most trusted first (e.g. [Wikipedia, Books3, CommonCrawl]); "
        "sources not listed come after all listed ones.",
    )
    score_key: str | None = Field(
        default=None,
        description="keep: score — the meta field holding a document's score (e.g. `quality.hq` written by "
        "`selene quality`; dots reach into nested objects); higher is kept, a document without it comes last.",
    )
    strict: bool = Field(
        default=False,
        description="keep: priority — a source in `priority` that the data lacks is an error (default: a warning).",
    )
    seed: int = Field(default=1, description="MinHash permutation seed (datasketch's `seed`).")
    against: list[str] = Field(
        default_factory=list,
        description="Earlier dedup outputs (an old crawl, curated): this run's documents that duplicate a "
        "document kept there, or each other, are removed; theirs are read, never changed, and none of them is "
        "removed. Their stored signatures are reused (same MinHash settings required). For a chain of crawls, "
        "give every earlier output, oldest first (--against 2023 --against 2024): the links each stored to the "
        "ones before it join them as one run over all of them would.",
    )
    store_signatures: bool = Field(
        default=True,
        description="Keep the kept documents' signatures and a sorted index of their band keys in OUT/minhash/ (~1.1 KB a document at "
        "128 permutations) so a later run can be deduplicated --against this output.",
    )

    def extra_inputs(self) -> list[str]:
        return list(self.against)

    def verify_cutoff(self) -> float:
        """The estimated Jaccard a candidate pair needs to link under `verify: signature`."""
        margin = self.verify_margin
        if margin is None:
            margin = VERIFY_SIGMAS * (self.threshold * (1.0 - self.threshold) / self.num_perm) ** 0.5
        return max(0.0, self.threshold - margin)

    def exact_band(self) -> tuple[float, float]:
        """Estimates in [low, high) are settled on exact Jaccard under `verify: signature`
        (`exact_within`); an empty band when it is 0."""
        within = self.exact_within
        if within is None:
            within = VERIFY_SIGMAS * (self.threshold * (1.0 - self.threshold) / self.num_perm) ** 0.5
        return self.threshold - within, self.threshold + within

    @model_validator(mode="after")
    def _keep_rule(self) -> DedupConfig:
        if self.keep == "priority" and not self.priority:
            raise ValueError("keep: priority needs `priority`, the sources most trusted first")
        if self.keep != "priority" and self.priority:
            raise ValueError(f"`priority` is only used with keep: priority (keep is {self.keep})")
        if self.keep == "score" and not self.score_key:
            raise ValueError("keep: score needs `score_key`, the meta field holding the score")
        if self.keep != "score" and self.score_key:
            raise ValueError(f"`score_key` is only used with keep: score (keep is {self.keep})")
        dup = sorted({s for s in self.priority if self.priority.count(s) > 1})
        if dup:
            raise ValueError(f"`priority` names a source more than once: {', '.join(dup)}")
        return self

    @model_validator(mode="after")
    def _bands_rows(self) -> DedupConfig:
        if (self.bands is None) != (self.rows is None):
            raise ValueError(
                "set both `bands` and `rows`, or neither (they are then chosen from `threshold`)"
            )
        if self.bands is not None and self.rows is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands × rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        return self
