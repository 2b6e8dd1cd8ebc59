"""The span index a spans output keeps of what it holds, and the earlier outputs a new crawl is cut
against (``selene spans --against``).

Every spans output (unless ``store_index: false``) holds ``spans-index/``: per hash partition
``pPPPPP.npy``, the distinct hashes of the spans of its documents as written (the text left after the
cuts, split and hashed again), sorted, so a later run finds which of its spans the output holds by
binary search, a few pages of each file rather than all of it; and ``index.json``: the format, the
settings that made the hashes (a hash is only comparable with one of the same unit, span and
normalisation), the partitions and the sha256 of each output shard. A run --against an output refuses,
before any work, one that is not a finished spans output, that kept no index, whose index is
unfinished or damaged, that was made with other settings, or whose shards changed since.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from selene.errors import ConfigError, PathError
from selene.io import dataset, fs
from selene.spans.config import SpansConfig
from selene.spans.manifest import SpansManifest
from selene.spans.work import partition_of, partition_slice

DIR = "spans-index"
INDEX = "index.json"
FORMAT = 1
HASH = "xxh64"
# hashes per index partition file (32 MiB): the files are looked up memory-mapped, so their size costs
# a later run nothing; writing one holds its hashes (and a sort) in one task, whatever the corpus
INDEX_PART_SPANS = 1 << 22


def index_partitions(n_spans: int) -> int:
    """Partitions of an output's index: from its spans alone, so the index is byte-identical
    whatever the memory budget or the workers."""
    return max(1, -(-n_spans // INDEX_PART_SPANS))


class SpanSettings(BaseModel):
    """What must be equal for two runs' span hashes to be compared."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: str
    span: int
    min_span_chars: int
    lowercase: bool
    strip_punctuation: bool
    normalize_numbers: bool
    strip_diacritics: bool
    normalize_weekdays: bool
    normalize_months: bool
    hash: str


class SpanIndex(BaseModel):
    """``spans-index/index.json``: the format, the settings, the partitions, the spans and the sha256 of
    each output shard the index belongs to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int
    settings: SpanSettings
    partitions: int
    spans: int
    shards: list[str]


def settings_of(cfg: SpansConfig) -> SpanSettings:
    assert cfg.unit is not None
    return SpanSettings(
        unit=cfg.unit,
        span=cfg.span,
        min_span_chars=cfg.min_span_chars,
        lowercase=cfg.lowercase,
        strip_punctuation=cfg.strip_punctuation,
        normalize_numbers=cfg.normalize_numbers,
        strip_diacritics=cfg.strip_diacritics,
        normalize_weekdays=cfg.normalize_weekdays,
        normalize_months=cfg.normalize_months,
        hash=HASH,
    )


def part_path(out: str, p: int) -> str:
    return fs.join(out, DIR, f"p{p:05d}.npy")


def write_index(
    out: str, settings: SpanSettings, partitions: int, spans: int, shard_sha256: list[str]
) -> None:
    """``index.json``, after every partition file: an index without it is unfinished."""
    index = SpanIndex(
        format=FORMAT, settings=settings, partitions=partitions, spans=spans, shards=shard_sha256
    )
    fs.atomic_write(fs.join(out, DIR, INDEX), json.dumps(index.model_dump(mode="json"), indent=1))


@dataclass(frozen=True)
class Prior:
    """An earlier spans output: its directory, fingerprint and index partitions."""

    out: str
    fingerprint: str
    partitions: int


def load_priors(against: Sequence[str], inp: str, out: str, settings: SpanSettings) -> list[Prior]:
    """The earlier outputs `against`, checked (see the module's docstring); a `PathError` or
    `ConfigError` (exit 2) naming the output and what is wrong, before anything is written."""
    priors = []
    for prev in against:
        where = f"spans --against {prev}"
        m = dataset.earlier_output(prev, inp, out, "spans", SpansManifest)
        index_path = fs.join(prev, DIR, INDEX)
        if not fs.exists(index_path):
            raise PathError(
                f"{where}: it holds no span index ({DIR}/{INDEX}); run that spans again with store_index: true "
                "(the default)"
            )
        try:
            index = SpanIndex.model_validate_json(fs.read_text(index_path))
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or 'top level'}: {err['msg']}" for err in e.errors()
            )
            raise PathError(f"{where}: corrupt span index {index_path} ({problems})") from None
        if index.format != FORMAT:
            raise PathError(
                f"{where}: a span index of format {index.format}; this selene reads format {FORMAT}"
            )
        theirs, ours = index.settings.model_dump(), settings.model_dump()
        diff = [f"{k}={theirs[k]!r} (this run: {v!r})" for k, v in ours.items() if theirs[k] != v]
        if diff:
            raise ConfigError(
                f"{where}: its spans were hashed with other settings: {', '.join(diff)}; run with the same unit, "
                "span, min_span_chars and normalisation"
            )
        if index.shards != [s.sha256 for s in m.shards]:
            raise PathError(f"{where}: its shards changed since its span index was written")
        bad = [f"{DIR}/p{p:05d}.npy" for p in range(index.partitions) if not _readable(part_path(prev, p))]
        if bad:
            raise PathError(f"{where}: span index files missing or damaged: {', '.join(bad[:5])}")
        priors.append(Prior(prev, m.fingerprint, index.partitions))
    return priors


def _readable(path: str) -> bool:
    """A partition file that exists and holds a sorted array of uint64 (its header read only)."""
    if not fs.exists(path):
        return False
    try:
        a = fs.load_npy(path, mmap=True)
    except (ValueError, OSError, EOFError):
        return False
    return bool(a.dtype == np.dtype("<u8") and a.ndim == 1)


def held(priors: Sequence[tuple[str, int]], hashes: np.ndarray) -> np.ndarray:
    """Which of `hashes` (sorted, distinct) any earlier output's index holds: per output, each hash
    looked up by binary search in its partition's file (memory-mapped)."""
    found = np.zeros(hashes.size, dtype=bool)
    for out, parts in priors:
        their = partition_of(hashes, parts)
        for p in np.unique(their).tolist():
            sel = their == p
            index = fs.load_npy(part_path(out, p), mmap=True)
            want = hashes[sel]
            at = np.searchsorted(index, want)
            hit = np.zeros(want.size, dtype=bool)
            ok = at < index.size
            hit[ok] = np.asarray(index[at[ok]]) == want[ok]
            found[sel] |= hit
    return found


def index_partition(out: str, sig_files: Sequence[str], p: int, parts: int) -> int:
    """Partition p of the output's index: the distinct hashes of that range over every output
    shard's signature file; returns how many."""
    chunks = []
    for f in sig_files:
        sig = fs.load_npy(f, mmap=True)
        chunks.append(np.asarray(sig["hash"][partition_slice(sig["hash"], p, parts)]))
    hashes = np.unique(np.concatenate(chunks)) if chunks else np.empty(0, dtype=np.uint64)
    fs.save_npy(part_path(out, p), hashes.astype("<u8"))
    return int(hashes.size)
