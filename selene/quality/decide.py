"""The quality stage's last step, per shard (``quality-write``): kept documents to the output shard
with ``quality.<name>`` scores in meta; the others to the shard's removed part as
``quality:<classifier>`` with the score and the cut-off (or the Pareto draw)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import numpy as np
import xxhash

from selene.io import dataset, fs, steps
from selene.quality.config import QualityConfig
from selene.quality.cutoffs import combined
from selene.quality.manifest import Example
from selene.quality.scores import load_scores
from selene.quality.steps import Cutoffs, Written

EXAMPLES = 3


def pareto_draw(ids: Sequence[str], seed: int, name: str, alpha: float) -> np.ndarray:
    """GPT-3's Pareto(alpha) draw (numpy's `pareto`, a Lomax sample) per document, from a hash of
    its id: the same document gets the same draw in any shard, on any worker."""
    u = np.array(
        [xxhash.xxh64_intdigest(f"{seed}\0{name}\0{i}".encode()) >> 11 for i in ids], dtype=np.float64
    ) / float(1 << 53)
    return np.asarray((1.0 - u) ** (-1.0 / alpha) - 1.0)


def decide(
    ids: Sequence[str], s: np.ndarray, cfg: QualityConfig, plan: Cutoffs
) -> tuple[np.ndarray, list[str], list[str]]:
    """(keep, reason, detail) per document; unjudged documents (NaN scores) are kept."""
    n = len(ids)
    keep = np.ones(n, dtype=bool)
    reason = [""] * n
    detail = [""] * n
    names = [c.name for c in cfg.classifiers]
    if cfg.combine == "each" or len(names) == 1:
        columns = [(names[c], s[:, c], plan.cutoffs[c]) for c in range(len(names))]
    else:
        columns = [(cfg.combine, combined(s, cfg, plan.cdf_array()), plan.cutoff)]
    for name, score, cutoff in columns:
        ok = ~np.isnan(score)
        if cfg.rule == "pareto":
            draw = pareto_draw(ids, cfg.seed, name, cfg.alpha)
            drop = ok & ~(draw > 1.0 - np.where(ok, score, 0.0))
        else:
            drop = ok & (np.where(ok, score, 1.0) < cutoff)
        for i in np.flatnonzero(drop & keep):
            reason[i] = f"quality:{name}"
            if cfg.rule == "pareto":
                detail[i] = f"score={score[i]:.4f}; pareto({cfg.alpha:g}) draw {draw[i]:.4f} <= 1 - score"
            else:
                detail[i] = f"score={score[i]:.4f} < cutoff {cutoff:.4f}"
        keep &= ~drop
    return keep, reason, detail


def removed_part(root: str, k: int) -> str:
    return fs.join(root, "removed", f"{k:05d}.parquet")


def write_shard(root: str, k: int, shard: str, out: str, cfg: QualityConfig, plan: Cutoffs) -> Written:
    """Shard `k` → output shard `k` (scores in meta) and its removed rows; returns the counts."""
    target = fs.join(out, dataset.shard_name(k))
    return steps.resumable(
        steps.marker(root, "done", k), Written, lambda: _write(root, k, shard, target, cfg, plan),
        outputs=[target, removed_part(root, k)],
    )  # fmt: skip


def _write(root: str, k: int, shard: str, target: str, cfg: QualityConfig, plan: Cutoffs) -> Written:
    z = load_scores(root, "scores", k)
    names = [c.name for c in cfg.classifiers]
    counts: dict[str, Counter[str]] = {}
    examples: list[Example] = []
    row = 0
    with (
        dataset.ParquetSink(target, dataset.DOC_SCHEMA) as sink,
        dataset.ParquetSink(removed_part(root, k), dataset.REMOVED_SCHEMA) as removed,
    ):
        for batch in dataset.iter_row_groups(shard, dataset.DOC_SCHEMA.names):
            docs = batch.to_pylist()
            s = z["s"][row : row + len(docs)]
            t = z["t"][row : row + len(docs)]
            row += len(docs)
            keep, reason, detail = decide([d["id"] for d in docs], s, cfg, plan)
            shown = _shown_score(s, cfg, plan)
            for i, doc in enumerate(docs):
                c = counts.setdefault(doc["source"], Counter())
                c["in"] += 1
                scored = not np.isnan(s[i, 0])
                if scored:
                    c["judged"] += 1
                    c["tokens_in"] += int(t[i])
                    examples.append(Example(id=doc["id"], source=doc["source"], score=float(shown[i]), kept=bool(keep[i]),
                                            text=doc["text"][:300]))  # fmt: skip
                if keep[i]:
                    meta = json.loads(doc["meta"] or "{}")
                    if scored:
                        meta.update({f"quality.{n}": round(float(s[i, c_]), 6) for c_, n in enumerate(names)})
                    sink.add(**{**doc, "meta": dataset.to_meta_json(meta)})
                    if scored:
                        c["kept_judged"] += 1
                        c["tokens_kept"] += int(t[i])
                else:
                    c[reason[i]] += 1
                    removed.add(
                        id=doc["id"],
                        source=doc["source"],
                        reason=reason[i],
                        detail=detail[i],
                        meta=doc["meta"],
                    )
    return Written(
        shard=sink.written.entry(),
        counts={src: dict(c) for src, c in sorted(counts.items())},
        examples=near(examples),
    )


def _shown_score(s: np.ndarray, cfg: QualityConfig, plan: Cutoffs) -> np.ndarray:
    if s.shape[1] == 1 or cfg.combine == "each":
        return np.asarray(s.min(axis=1) if s.shape[1] else np.zeros(len(s)))
    return combined(s, cfg, plan.cdf_array())


def near(examples: Sequence[Example]) -> list[Example]:
    """The lowest-scoring kept and the highest-scoring dropped documents (ties by id)."""
    kept = sorted((e for e in examples if e.kept), key=lambda e: (e.score, e.id))[:EXAMPLES]
    dropped = sorted((e for e in examples if not e.kept), key=lambda e: (-e.score, e.id))[:EXAMPLES]
    return kept + dropped
