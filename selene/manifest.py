"""Typed, versioned manifests: what a finished stage wrote, as pydantic models (DESIGN.md, data contracts).

Every data stage ends by writing ``manifest.json`` from one of the models below (`IngestManifest`,
`DedupManifest`, `DecontamManifest`, `BlendManifest`, `TokenizeManifest`, told apart by `stage`);
every reader gets it back validated, through `parse_manifest`, so a manifest this selene cannot read
is an `InputError` that names the file and the fields, never a KeyError deep inside a stage.

Versions. `MANIFEST_VERSION` is the layout written now. It goes up when a field is removed, renamed or
changes type or meaning, i.e. whenever an older selene would misread the file; a new optional field
does not need a bump, since readers ignore keys they do not know. A manifest with a higher version
is refused with a message that says which selene wrote it. A manifest without `manifest_version`
was written before versions existed; its layout is version 1, so it is read as version 1 and
accepted when it validates (run directories made before this change keep working).

The JSON keys are those the stages wrote before the models existed (plus `manifest_version`):
`stats.per_source.<source>.in` is read and written as ``in`` and is `documents_in` in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from selene import __version__
from selene.errors import InputError

MANIFEST_VERSION = 1
"""The manifest layout this selene writes, and the highest one it reads."""

UNVERSIONED = 1
"""The layout of a manifest without `manifest_version` (written before versions existed)."""


class _Record(BaseModel):
    """A part of a manifest. Unknown keys are ignored (a newer selene may add optional ones);
    `_omit_if_none` fields are left out of the JSON when unset (stage-specific counts); `_last` keys
    are written last (the long stats after the stage's own sections, as the stages always wrote them)."""

    # populate_by_name: Python code says `documents_in=`, files say "in" (pydantic >= 2.7, see pyproject)
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    _omit_if_none: ClassVar[tuple[str, ...]] = ()
    _last: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._omit_if_none:
                if getattr(self, name) is None:
                    data.pop(name, None)
            for key in self._last:
                if key in data:
                    data[key] = data.pop(key)
        return data

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data with the file's key names."""
        return self.model_dump(mode="json", by_alias=True)


# ------------------------------------------------------------------------------ common parts


class FileEntry(_Record):
    """One file a stage wrote, as its manifest lists it."""

    _omit_if_none = ("rows",)

    name: str = Field(description="File name, relative to the stage's output directory.")
    rows: int | None = Field(default=None, description="Documents in it; absent for tokenize's .bin/.idx.")
    bytes: int = Field(description="Size in bytes.")
    sha256: str = Field(description="sha256 of the file's bytes (hex).")


class ShardEntry(FileEntry):
    """A Parquet file of documents (a ``part-NNNNN.parquet`` shard or ``removed.parquet``)."""

    rows: int = Field(description="Documents (rows) in the file.")


class SourceStats(_Record):
    """What became of one source's documents in one stage."""

    _omit_if_none = ("split", "pieces", "tokens")

    documents_in: int = Field(
        validation_alias="in", serialization_alias="in", description="Documents entering."
    )
    kept: int = Field(
        description="Documents kept (decontaminate: whole or in pieces; blend: sampled at least once)."
    )
    split: int | None = Field(default=None, description="decontaminate: documents cut into pieces.")
    pieces: int | None = Field(
        default=None, description="decontaminate: pieces written for the split documents."
    )
    removed: dict[str, int] = Field(
        description="Documents removed, by reason (the reasons of removed.parquet)."
    )
    tokens: int | None = Field(default=None, description="tokenize: tokens, EOD included.")


class SimilarityStats(_Record):
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
    below_threshold: int = Field(default=0, description="Removed below the threshold (only with `verify: none`).")


class ClusterStats(_Record):
    """dedup: the near-duplicate clusters found: a kept document and the documents removed for it."""

    _omit_if_none = ("documents_linked", "kept_by_check", "exact_checks", "removed_similarity")

    pairs_verified: int = Field(description="Candidate pairs that passed verification (graph edges).")
    clusters: int = Field(description="Clusters of two documents or more.")
    documents_in_clusters: int = Field(description="Documents in those clusters.")
    duplicates: int = Field(description="Documents removed (every member of a cluster but the kept one).")
    cluster_sizes: dict[str, int] = Field(description="Cluster size (as a string) → number of clusters.")
    largest_cluster: int = Field(description="Documents in the largest cluster (1 when there are none).")
    documents_linked: int | None = Field(
        default=None, description="Documents joined to another by verified pairs (before the check against the kept one)."
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


class FileStats(_Record):
    """ingest: what reading one input file found besides its documents."""

    file: str = Field(description="The input file.")
    bytes: int = Field(description="Its size in bytes.")
    blank_lines: int = Field(description="Blank lines skipped (jsonl).")
    other_records: dict[str, int] = Field(
        description="Records that hold no document, by kind (WARC request ...)."
    )


class Stats(_Record):
    """Documents in, out and removed, per source and reason, plus the counts only some stages have."""

    _omit_if_none = ("documents_split", "pieces_out", "sequences", "tokens", "clusters", "files")

    documents_in: int = Field(description="Documents read (ingest: input records).")
    documents_out: int = Field(description="Documents (rows) in the output shards.")
    documents_removed: int = Field(
        description="Documents removed (rows of removed.parquet; decontaminate: dropped)."
    )
    documents_split: int | None = Field(default=None, description="decontaminate: documents cut into pieces.")
    pieces_out: int | None = Field(default=None, description="decontaminate: pieces written.")
    sequences: int | None = Field(
        default=None, description="tokenize: sequences in the .idx (one per document)."
    )
    tokens: int | None = Field(default=None, description="tokenize: tokens in the .bin, EOD included.")
    per_source: dict[str, SourceStats] = Field(description="The same per source.")
    clusters: ClusterStats | None = Field(default=None, description="dedup: the clusters found.")
    files: list[FileStats] | None = Field(default=None, description="ingest: per input file.")


class DatasetInputs(_Record):
    """The document dataset a stage read."""

    dataset: str = Field(description="Its directory.")
    fingerprint: str | None = Field(description="The fingerprint in its manifest.")


class IngestInput(_Record):
    """One raw input file."""

    path: str = Field(description="Path or URL.")
    key: str = Field(
        description="``<source>/<path under the glob root>``; document ids are ``<key>#<index>``."
    )
    source: str = Field(description="The --source name it matched.")
    format: str = Field(description="Detected format, e.g. ``jsonl.zst``, ``warc.gz``.")
    bytes: int = Field(description="Its size in bytes (part of the fingerprint).")


class StageManifest(_Record):
    """What every stage's manifest has. Written last: its presence marks the output complete."""

    _last = ("stats",)

    manifest_version: int = Field(
        default=MANIFEST_VERSION,
        description="Layout of this file (absent: written before versions, read as 1).",
    )
    selene_version: str = Field(description="The selene that wrote it.")
    stage: str = Field(description="The stage that wrote it; decides the model.")
    fingerprint: str = Field(
        description="Inputs + every setting that changes the output; a match skips a rerun."
    )
    config: dict[str, Any] = Field(description="The stage's configuration (its config model, dumped).")
    inputs: list[IngestInput] | DatasetInputs = Field(description="What the stage read.")
    shards: Sequence[FileEntry] = Field(description="The output files, in order.")
    removed: ShardEntry | None = Field(
        default=None, description="removed.parquet (None: tokenize removes nothing)."
    )
    stats: Stats = Field(description="Documents per source and reason.")


class DocumentManifest(StageManifest):
    """The manifest of a document dataset (Parquet shards + removed.parquet)."""

    shards: list[ShardEntry] = Field(description="The ``part-NNNNN.parquet`` shards, in order.")
    removed: ShardEntry = Field(
        description="removed.parquet: every document that did not make it, with its reason."
    )


# ----------------------------------------------------------------------------------- ingest


class IngestStats(Stats):
    """ingest's stats: with what reading each input file found."""

    files: list[FileStats] = Field(
        description="Per input file: blank lines and records that hold no document."
    )


class IngestManifest(DocumentManifest):
    """ingest: raw files → cleaned, filtered, exactly deduplicated documents."""

    stage: Literal["ingest"] = "ingest"
    inputs: list[IngestInput] = Field(description="The input files, in document order.")
    stats: IngestStats = Field(description="Documents per source and reason, and per input file.")


# ------------------------------------------------------------------------------------ dedup


class DedupInputs(DatasetInputs):
    """The document dataset dedup read, with its shards."""

    shards: list[str] = Field(description="sha256 of each input shard.")


class LshSummary(_Record):
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


# ---------------------------------------------------------------------------- decontaminate


class DecontamInputs(DatasetInputs):
    """The document dataset decontaminate read, and the tasks it looked for."""

    tasks: list[str] = Field(description="The evaluation task files or directories.")


class DecontamTask(_Record):
    """decontaminate: one evaluation task, its n-grams and what matched them."""

    n: int = Field(description="n-gram length (words).")
    examples: int = Field(description="Examples in the task.")
    indexed_examples: int = Field(description="Examples long enough to index.")
    task_ngrams: int = Field(description="Distinct n-grams indexed.")
    matched_ngrams: int = Field(description="n-gram matches in the corpus.")
    documents_touched: int = Field(description="Documents with a match.")
    documents_split: int = Field(description="Of those, cut into pieces.")
    documents_dropped: int = Field(description="Of those, dropped (no piece long enough).")
    matched_examples: list[str] = Field(description="A few matched n-grams, as text.")


class DecontamStats(Stats):
    """decontaminate's stats: with the documents split and the pieces written."""

    documents_split: int = Field(description="Documents cut into pieces.")
    pieces_out: int = Field(description="Pieces written.")


class DecontamManifest(DocumentManifest):
    """decontaminate: documents with evaluation-task n-grams cut out."""

    stage: Literal["decontaminate"] = "decontaminate"
    inputs: DecontamInputs = Field(description="The dataset read and the task files.")
    tasks: dict[str, DecontamTask] = Field(description="Per task: its n-grams and what matched them.")
    stats: DecontamStats = Field(description="Documents per source (kept, split, pieces, dropped by task).")


# ------------------------------------------------------------------------------------ blend


class BlendInputs(DatasetInputs):
    """The document dataset blend read, its shards and the tokenizer that counted tokens."""

    shards: list[str] = Field(description="sha256 of each input shard.")
    tokenizer: str | None = Field(
        description="The tokenizer that counted tokens (None: estimated from bytes)."
    )


TokensMethod = Literal["counted", "sampled", "estimated"]


class BlendSource(_Record):
    """blend: one source, what was asked, planned and realised."""

    documents: int = Field(description="Documents in the input.")
    bytes: int = Field(description="UTF-8 bytes of their text.")
    tokens: int = Field(description="Tokens (counted, extrapolated from a sample, or estimated).")
    tokens_method: TokensMethod = Field(description="How `tokens` was found.")
    tokens_per_byte: float = Field(description="tokens / bytes.")
    weight_requested: float | None = Field(description="blend.weights[source], if set.")
    epochs_requested: float | None = Field(description="blend.epochs[source], if set.")
    epochs: float = Field(description="Passes over the source in the mix.")
    tokens_planned: int = Field(description="tokens × epochs.")
    documents_sampled: int = Field(description="Documents in the mix, repeats counted.")
    documents_distinct: int = Field(description="Distinct documents in the mix.")
    bytes_sampled: int = Field(description="UTF-8 bytes of the documents in the mix.")
    tokens_sampled: int = Field(description="bytes_sampled × tokens_per_byte.")
    share_requested: float = Field(description="Planned share of the mix's tokens.")
    share_realised: float = Field(description="Realised share of the mix's tokens.")


class BlendTotals(_Record):
    """blend: the whole mix."""

    sources: int = Field(description="Sources in the input.")
    documents: int = Field(description="Documents in the input.")
    bytes: int = Field(description="UTF-8 bytes of their text.")
    tokens: int = Field(description="Their tokens.")
    target_tokens: int | None = Field(description="blend.target_tokens, if set.")
    tokens_planned: int = Field(description="Tokens the plan asks for.")
    documents_sampled: int = Field(description="Documents in the mix, repeats counted.")
    documents_distinct: int = Field(description="Distinct documents in the mix.")
    bytes_sampled: int = Field(description="UTF-8 bytes of the mix.")
    tokens_sampled: int = Field(description="Tokens of the mix.")
    max_share_error: float = Field(description="Largest |realised − requested| share over the sources.")
    shuffle_buckets: int | None = Field(
        default=None,
        description="Buckets of the out-of-core shuffle (blend.shuffle_buckets, or chosen from the planned "
        "bytes); absent in manifests written before it was recorded.",
    )


class BlendSummary(_Record):
    """blend: requested vs realised, per source and in total (also written as blend.json)."""

    sources: dict[str, BlendSource] = Field(description="Per source.")
    totals: BlendTotals = Field(description="Over all sources.")


class BlendManifest(DocumentManifest):
    """blend: the training mix, sampled per source and shuffled."""

    stage: Literal["blend"] = "blend"
    inputs: BlendInputs = Field(description="The dataset read, its shards and the tokenizer.")
    blend: BlendSummary = Field(description="Requested vs realised, per source and in total.")


# --------------------------------------------------------------------------------- tokenize


class TokenizerInfo(_Record):
    """tokenize: the sentencepiece model next to the token data."""

    file: str = Field(description="Its file name in the output directory.")
    sha256: str = Field(description="sha256 of the serialized model.")
    _omit_if_none = ("vocab_size_requested",)

    vocab_size: int = Field(description="Pieces in the vocabulary (what the model has).")
    vocab_size_requested: int | None = Field(
        default=None,
        description="tokenize.vocab_size of a trained model: more than `vocab_size` only with "
        "allow_smaller_vocab (absent: a given model, or a manifest written before it was recorded).",
    )
    eod_id: int = Field(description="The end-of-document id appended to every document.")
    eod_piece: str = Field(description="The piece of that id.")
    trained: bool = Field(description="True: trained on the input; False: given (tokenize.tokenizer).")


class TokenizeStats(Stats):
    """tokenize's stats: with sequences and tokens (per source too)."""

    sequences: int = Field(description="Sequences in the .idx (one per document).")
    tokens: int = Field(description="Tokens in the .bin, EOD included.")


class TokenizeManifest(StageManifest):
    """tokenize: a Megatron-LM indexed dataset (``<prefix>.bin`` / ``.idx``) and its tokenizer."""

    stage: Literal["tokenize"] = "tokenize"
    inputs: DatasetInputs = Field(description="The dataset read.")
    shards: list[FileEntry] = Field(description="``<prefix>.bin`` and ``<prefix>.idx``.")
    removed: None = Field(default=None, exclude=True, description="Nothing is removed (not written).")
    prefix: str = Field(description="The data prefix, relative to the output directory.")
    tokenizer: TokenizerInfo = Field(description="The sentencepiece model: vocabulary and EOD id.")
    dtype: str = Field(description="Token dtype of the .bin (uint16 below 65,500 pieces, else int32).")
    stats: TokenizeStats = Field(description="Documents and tokens per source.")


# ---------------------------------------------------------------------------------- reading

AnyManifest = Annotated[
    IngestManifest | DedupManifest | DecontamManifest | BlendManifest | TokenizeManifest,
    Field(discriminator="stage"),
]
"""A manifest of any stage: the model is chosen by its `stage`."""
_ADAPTER: TypeAdapter[AnyManifest] = TypeAdapter(AnyManifest)
MODELS: tuple[type[StageManifest], ...] = (
    IngestManifest,
    DedupManifest,
    DecontamManifest,
    BlendManifest,
    TokenizeManifest,
)
STAGES = tuple(m.model_fields["stage"].default for m in MODELS)

_RERUN = "rerun the stage with --force to rewrite it"


def parse_manifest(data: Any, where: str) -> AnyManifest:
    """The typed manifest in `data` (the parsed JSON of the file `where`); `InputError` when this
    selene cannot read it, naming the file, the versions or the dotted fields at fault."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: not a selene manifest (a JSON object was expected); {_RERUN}")
    wrote = data.get("selene_version")
    by = f"selene {wrote}" if isinstance(wrote, str) else "an unknown selene"
    version = data.get("manifest_version", UNVERSIONED)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(
            f"{where}: manifest_version: got {version!r}, expected a whole number >= 1; {_RERUN}"
        )
    if version > MANIFEST_VERSION:
        raise InputError(
            f"{where}: written by {by} with manifest version {version}; this selene ({__version__}) reads "
            f"manifest versions <= {MANIFEST_VERSION}. Upgrade selene, or {_RERUN}."
        )
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as e:
        problems = "\n".join(_problem(err) for err in e.errors())
        raise InputError(
            f"{where}: this selene ({__version__}) cannot read this manifest (written by {by}, "
            f"perhaps edited since); {_RERUN}.\n{problems}"
        ) from None


def _problem(err: Any) -> str:
    loc = tuple(err["loc"])
    if err["type"] == "union_tag_not_found":
        return f"  stage: missing; expected one of {', '.join(STAGES)}"
    if err["type"] == "union_tag_invalid":
        return f"  stage: got {err['input'].get('stage')!r}, expected one of {', '.join(STAGES)}"
    # the first element names the union member (the stage); the rest is the field in the file
    field = ".".join(str(p) for p in loc[1:]) or "<top level>"
    shown = "" if err["type"] == "missing" else f" got {_short(err.get('input'))}:"
    return f"  {field}:{shown} {err['msg']}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = [
    "MANIFEST_VERSION",
    "AnyManifest",
    "BlendManifest",
    "DecontamManifest",
    "DedupManifest",
    "DocumentManifest",
    "FileEntry",
    "IngestManifest",
    "ShardEntry",
    "SourceStats",
    "StageManifest",
    "Stats",
    "TokenizeManifest",
    "parse_manifest",
]
