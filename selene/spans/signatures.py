"""Step 1 of spans, per shard: the hash of every span of every document, with where it sits (row,
first unit), written sorted by hash so that a find task reads one hash partition of it with two
binary searches. Run again over the output shards, it gives the hashes the output's index holds."""

from __future__ import annotations

import numpy as np

from selene.io import dataset, fs, steps
from selene.spans.config import SpansConfig
from selene.spans.units import spans
from selene.spans.work import SIG_DTYPE, Work


class Signatures(steps.StepResult):
    """What one shard's signature step stores: its documents and spans."""

    documents: int
    spans: int


def signature_shard(work: Work, k: int, shard: str, cfg: SpansConfig, kind: str = "sig") -> Signatures:
    """Shard `k` (path `shard`) → ``<root>/<kind>/k.npy`` (SIG_DTYPE, sorted), resumable."""
    target = work.sig(k, kind)
    return steps.resumable(
        steps.marker(work.root, kind, k),
        Signatures,
        lambda: _signatures(shard, target, cfg),
        outputs=[target],
    )


def _signatures(shard: str, target: str, cfg: SpansConfig) -> Signatures:
    parts: list[np.ndarray] = []
    row = 0
    for batch in dataset.iter_row_groups(shard, ["text"]):  # row groups: sized in bytes
        for text in batch.column("text").to_pylist():
            s = spans(text, cfg)
            if s.hashes.size:
                rec = np.empty(s.hashes.size, dtype=SIG_DTYPE)
                rec["hash"], rec["row"], rec["first"] = s.hashes, row, s.first
                parts.append(rec)
            row += 1
    sig = np.concatenate(parts) if parts else np.empty(0, dtype=SIG_DTYPE)
    sig = sig[np.lexsort((sig["first"], sig["row"], sig["hash"]))]
    fs.save_npy(target, sig)
    return Signatures(documents=row, spans=int(sig.size))
