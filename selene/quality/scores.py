"""The quality stage's first step, per shard (``quality-score``): each judged document's score under
each classifier and its tokens (whitespace words), written to the work directory; back come the
token-weighted histograms of the scores and what each source had (`steps.Scored`)."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from selene.io import dataset, fs, steps
from selene.quality.config import ClassifierSpec, QualityConfig
from selene.quality.fasttext import Classifier
from selene.quality.steps import Scored, SourceScores

BINS = 1 << 14  # histogram resolution: a cut-off is found to 1/16384, then exactly within its bin
REPORT_BINS = 20
_MODELS: dict[tuple[str, str], tuple[str | None, Classifier]] = {}


def classifier(path: str, label: str, digest: str | None = None) -> Classifier:
    """The loaded model (once per process: workers score many shards with it). `digest`, the file's
    sha256 when known, tells a model the stage trained again in place from the one loaded before."""
    held = _MODELS.get((path, label))
    stale = held is not None and None not in (digest, held[0]) and held[0] != digest
    if held is None or stale:
        held = _MODELS[(path, label)] = (digest, Classifier.load(path, label))
    return held[1]


def judged(source: str, meta: str | None, cfg: QualityConfig) -> bool:
    """Whether the classifiers judge this document: its source is named, or (by default) it is a
    web document (a `url` in its meta; the JSON is read only then)."""
    return source in cfg.sources if cfg.sources is not None else bool(json.loads(meta or "{}").get("url"))


def bin_of(scores: np.ndarray) -> np.ndarray:
    return np.minimum((scores * BINS).astype(np.int64), BINS - 1)


def score_shard(root: str, k: int, shard: str, cfg: QualityConfig, digests: dict[str, str]) -> Scored:
    """Scores of shard `k`'s judged documents (NaN: not judged) and the token-weighted histograms."""
    return steps.resumable(
        steps.marker(root, "scored", k), Scored, lambda: _score(root, k, shard, cfg, digests),
        outputs=[scores_path(root, "scores", k)],
    )  # fmt: skip


def _score(root: str, k: int, shard: str, cfg: QualityConfig, digests: dict[str, str]) -> Scored:
    models = [classifier(given(c), c.label, digests[c.name]) for c in cfg.classifiers]
    scores: list[np.ndarray] = []
    tokens: list[int] = []
    sources: list[str] = []
    for batch in dataset.iter_row_groups(shard, ["text", "source", "meta"]):
        texts = batch.column("text").to_pylist()
        srcs = batch.column("source").to_pylist()
        metas = batch.column("meta").to_pylist()
        mask = np.array([judged(s, m, cfg) for s, m in zip(srcs, metas, strict=True)], dtype=bool)
        block = np.full((len(texts), len(models)), np.nan)
        idx = np.flatnonzero(mask)
        if idx.size:
            chosen = [texts[i] for i in idx]
            for c, model in enumerate(models):
                block[idx, c] = model.score(chosen)
        scores.append(block)
        tokens += [len(t.split()) for t in texts]
        sources += srcs
    s = np.concatenate(scores) if scores else np.zeros((0, len(models)))
    t = np.asarray(tokens, dtype=np.int64)
    save_scores(root, "scores", k, s=s, t=t)
    hist = np.zeros((len(models), BINS), dtype=np.int64)
    ok = ~np.isnan(s[:, 0]) if len(models) else np.zeros(len(t), dtype=bool)
    for c in range(len(models)):
        np.add.at(hist[c], bin_of(s[ok, c]), t[ok])
    per_source: dict[str, dict[str, Any]] = {}  # source → documents in, judged, their tokens, report bins
    for i, src in enumerate(sources):
        e = per_source.setdefault(
            src,
            {
                "in": 0,
                "judged": 0,
                "tokens": 0,
                "report": np.zeros((len(models), REPORT_BINS), dtype=np.int64),
            },
        )
        e["in"] += 1
        if ok[i]:
            e["judged"] += 1
            e["tokens"] += int(t[i])
            e["report"][
                np.arange(len(models)), np.minimum((s[i] * REPORT_BINS).astype(np.int64), REPORT_BINS - 1)
            ] += 1
    return Scored(
        hist=hist.tolist(),
        sources={
            src: SourceScores(
                documents=e["in"], judged=e["judged"], tokens=e["tokens"], report=e["report"].tolist()
            )
            for src, e in sorted(per_source.items())
        },
    )


def scores_path(root: str, kind: str, k: int) -> str:
    return fs.join(root, kind, f"{k:05d}.npz")


def save_scores(root: str, kind: str, k: int, s: np.ndarray, t: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, s=s, t=t)
    fs.atomic_write(scores_path(root, kind, k), buf.getvalue())


def load_scores(root: str, kind: str, k: int) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(fs.read_bytes(scores_path(root, kind, k)))) as z:
        return {name: z[name] for name in z.files}


def given(c: ClassifierSpec) -> str:
    """The model file of a classifier of `recipe.resolved`'s config: every one has it by then."""
    assert c.model is not None
    return c.model
