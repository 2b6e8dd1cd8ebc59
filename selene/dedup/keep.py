"""Which copy of a near-duplicate cluster dedup keeps: the `keep` rules' order, what they compared
(for clusters.md), and the check of a priority list against the input's sources."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from selene.dedup.config import DedupConfig
from selene.errors import ConfigError
from selene.io import dataset, fs
from selene.manifest import DocumentManifest

SCORE_SAMPLE = 2000  # documents whose meta `check_score_key` reads, from up to SCORE_SHARDS shards
SCORE_SHARDS = 8
FIELDS_SHOWN = 30

KEEP_RULE = {
    "first": "the first in corpus order is kept",
    "longest": "the longest is kept (ties: the first in corpus order)",
    "priority": "the copy from the source earliest in `priority` is kept (ties: the first in corpus order)",
    "score": "the copy with the highest score is kept (ties: the first in corpus order)",
}


def keep_rank(column: pa.ChunkedArray, cfg: DedupConfig) -> np.ndarray:
    """Per document, its place in the order of `keep` (lower is kept first; ties go by corpus order):
    `priority`: the index of its source in the list (unlisted sources after every listed one);
    `score`: minus its score (a document without one, or with a score that is not a number, last)."""
    if cfg.keep == "priority":
        order = {src: i for i, src in enumerate(cfg.priority)}
        unlisted = float(len(cfg.priority))
        return np.array([order.get(src, unlisted) for src in column.to_pylist()], dtype=np.float64)
    assert cfg.score_key is not None
    return np.array([-_score(meta, cfg.score_key) for meta in column.to_pylist()], dtype=np.float64)


def _score(meta: str | None, key: str) -> float:
    """The number at `key` of a document's meta JSON (the key itself, as `quality.<name>` is written,
    else a dotted path into nested objects); -inf when absent or not a finite number."""
    value: Any = json.loads(meta) if meta else {}
    if isinstance(value, dict) and key in value:
        value = value[key]
    else:
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        return float("-inf")
    return float(value)


def kept_because(doc: dict[str, Any], cfg: DedupConfig) -> str:
    """What the `keep` rule saw of a document, for clusters.md."""
    if cfg.keep == "priority":
        src = doc["source"]
        rank = (
            f"priority {cfg.priority.index(src) + 1} of {len(cfg.priority)}"
            if src in cfg.priority
            else "not in priority"
        )
        return f"source {src}, {rank}"
    if cfg.keep == "score":
        assert cfg.score_key is not None
        score = _score(doc["meta"], cfg.score_key)
        return f"{cfg.score_key}={score:g}" if np.isfinite(score) else f"no {cfg.score_key}"
    if cfg.keep == "longest":
        return f"{len(doc['text'])} characters"
    return f"source {doc['source']}"


def check_priority(m_in: DocumentManifest, cfg: DedupConfig) -> None:
    """`priority` naming a source the data lacks (a typo would silently rank it last): a warning
    listing the data's sources, or an error with `strict`."""
    if cfg.keep != "priority":
        return
    have = sorted(m_in.stats.per_source)
    missing = [s for s in cfg.priority if s not in have]
    if not missing:
        return
    msg = f"dedup.priority names {', '.join(map(repr, missing))}, not a source of the input; its sources: {', '.join(have)}"
    if cfg.strict:
        raise ConfigError(msg)
    print(f"warning: {msg}", file=sys.stderr)


def check_score_key(inp: str, m_in: DocumentManifest, cfg: DedupConfig) -> None:
    """keep: score with a `score_key` that no document has would rank every copy alike and keep each
    cluster's first in corpus order, without a word: refused (ConfigError) when no document of a
    sample (the first row group of up to SCORE_SHARDS shards spread over the input) has a number
    there, naming the fields the sample's meta do have."""
    if cfg.keep != "score":
        return
    assert cfg.score_key is not None
    shards = [s.name for s in m_in.shards]
    n = min(SCORE_SHARDS, len(shards))
    picked = [shards[i * len(shards) // n] for i in range(n)]
    fields: set[str] = set()
    seen = 0
    for name in picked:
        pf = dataset.open_parquet(fs.join(inp, name))
        if not pf.metadata.num_row_groups:
            continue
        metas = pf.read_row_group(0, columns=["meta"]).column("meta").to_pylist()
        for meta in metas[: SCORE_SAMPLE // len(picked)]:
            seen += 1
            if np.isfinite(_score(meta, cfg.score_key)):
                return
            fields.update(_fields(meta))
    have = ", ".join(sorted(fields)[:FIELDS_SHOWN]) + (" ..." if len(fields) > FIELDS_SHOWN else "")
    raise ConfigError(
        f"dedup.score_key {cfg.score_key!r}: none of {seen} documents sampled from {len(picked)} shard(s) "
        f"of {inp} has a number there, so keep: score would keep each cluster's first copy in corpus "
        f"order; their meta fields: {have or '(none)'}"
    )


def _fields(meta: str | None) -> list[str]:
    """The fields of a document's meta JSON, nested objects' as dotted paths (as `score_key` reads them)."""
    try:
        value = json.loads(meta) if meta else {}
    except ValueError:
        return []
    out: list[str] = []

    def walk(obj: dict[str, Any], prefix: str) -> None:
        for key, v in obj.items():
            out.append(prefix + key)
            if isinstance(v, dict) and len(out) < 10 * FIELDS_SHOWN:
                walk(v, f"{prefix}{key}.")

    if isinstance(value, dict):
        walk(value, "")
    return out


def without_score(rank_files: Sequence[str], cfg: DedupConfig) -> int | None:
    """keep: score — documents with no number at `score_key` (`keep_rank` put them last: +inf in the
    shards' rank files), with a warning when there are some; None for the other rules."""
    if cfg.keep != "score":
        return None
    missing = total = 0
    for path in rank_files:
        rank = fs.load_npy(path, mmap=True)
        missing += int(np.count_nonzero(np.isposinf(rank)))
        total += rank.size
    if missing:
        print(
            f"warning: dedup.score_key {cfg.score_key!r}: {missing} of {total} documents have no number "
            "there; they are kept last (ties by corpus order)",
            file=sys.stderr,
        )
    return missing
