"""Which copy of a near-duplicate cluster dedup keeps: the `keep` rules' order, what they compared
(for clusters.md), and the check of a priority list against the input's sources."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import pyarrow as pa

from selene.dedup.config import DedupConfig
from selene.errors import ConfigError
from selene.manifest import DocumentManifest

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
