"""Step 1 of spans, per shard: the hash of every span of every document, with where it sits (row,
first unit), written sorted by hash so that a find task reads one hash partition of it with two
binary searches. For the output's index, `kept_signatures` gives the same of an output shard: the
input's records of the documents that were not touched (their text is unchanged) and the spans of
the touched ones' text as written, hashed again."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from selene.io import dataset, fs, steps
from selene.spans.config import SpansConfig
from selene.spans.units import Spans, spans
from selene.spans.work import DUP_DTYPE, SIG_DTYPE, Work


class Signatures(steps.StepResult):
    """What one shard's signature step stores: its documents and spans."""

    documents: int
    spans: int


def signature_shard(work: Work, k: int, shard: str, cfg: SpansConfig) -> Signatures:
    """Shard `k` (path `shard`) → ``<root>/sig/k.npy`` (SIG_DTYPE, sorted), resumable."""
    target = work.sig(k)
    return steps.resumable(
        steps.marker(work.root, "sig", k),
        Signatures,
        lambda: _signatures(shard, target, cfg),
        outputs=[target],
    )


def _signatures(shard: str, target: str, cfg: SpansConfig) -> Signatures:
    parts: list[np.ndarray] = []
    row = 0
    for batch in dataset.iter_row_groups(shard, ["text"]):  # row groups: sized in bytes
        texts = batch.column("text").to_pylist()
        parts.append(_records(texts, range(row, row + len(texts)), cfg))
        row += len(texts)
    sig = _sorted(parts)
    fs.save_npy(target, sig)
    return Signatures(documents=row, spans=int(sig.size))


def records(s: Spans, row: int) -> np.ndarray:
    """One document's spans as SIG_DTYPE records of row `row`."""
    rec = np.empty(s.hashes.size, dtype=SIG_DTYPE)
    rec["hash"], rec["row"], rec["first"] = s.hashes, row, s.first
    return rec


def _records(texts: list[str], rows: Sequence[int], cfg: SpansConfig) -> np.ndarray:
    hashes, firsts, at = [], [], []
    for text, row in zip(texts, rows, strict=True):
        s = spans(text, cfg)
        hashes.append(s.hashes)
        firsts.append(s.first)
        at.append(np.full(s.hashes.size, row, dtype=np.uint32))
    rec = np.empty(sum(h.size for h in hashes), dtype=SIG_DTYPE)
    if rec.size:
        rec["hash"], rec["row"], rec["first"] = (
            np.concatenate(hashes),
            np.concatenate(at),
            np.concatenate(firsts),
        )
    return rec


def _sorted(parts: list[np.ndarray]) -> np.ndarray:
    sig = np.concatenate(parts) if parts else np.empty(0, dtype=SIG_DTYPE)
    return sig[np.lexsort((sig["first"], sig["row"], sig["hash"]))]


def kept_signatures(
    work: Work, k: int, shard: str, written: str, dup_files: Sequence[str], cfg: SpansConfig
) -> Signatures:
    """Output shard `written` (made from input shard k, `shard`) → ``<root>/kept/k.npy``: the spans it
    holds (rows of SIG_DTYPE are the input's for untouched documents), resumable. Only the documents
    with a duplicate span are read and split again: the others are the input's, unchanged."""
    target = work.sig(k, "kept")
    return steps.resumable(
        steps.marker(work.root, "kept", k),
        Signatures,
        lambda: _kept(work, k, shard, written, target, dup_files, cfg),
        outputs=[target],
    )


def _kept(
    work: Work, k: int, shard: str, written: str, target: str, dup_files: Sequence[str], cfg: SpansConfig
) -> Signatures:
    sig = fs.load_npy(work.sig(k))
    changed, new = work.sig(k, "cut-rows"), work.sig(k, "cut-spans")
    if fs.exists(changed) and fs.exists(new):  # what the cut step found, when it ran to its end here
        parts = [sig[~np.isin(sig["row"], fs.load_npy(changed))], fs.load_npy(new)]
    else:
        dups = [fs.load_npy(f) for f in dup_files]
        touched = np.unique(np.concatenate(dups)["row"]) if dups else np.empty(0, dtype=DUP_DTYPE["row"])
        parts = [sig[~np.isin(sig["row"], touched)]]
        if touched.size:
            # the touched documents still in the output (a dropped one is not), found there by id
            ids = set(dataset.take_rows(shard, touched, ["id"]).column("id").to_pylist())
            out_ids = dataset.open_parquet(written).read(columns=["id"]).column("id").to_pylist()
            rows = [r for r, i in enumerate(out_ids) if i in ids]
            texts = dataset.take_rows(written, rows, ["text"]).column("text").to_pylist()
            parts.append(_records(texts, rows, cfg))
    kept = _sorted(parts)
    fs.save_npy(target, kept)
    return Signatures(documents=dataset.open_parquet(written).metadata.num_rows, spans=int(kept.size))
