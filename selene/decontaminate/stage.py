"""The decontaminate stage: evaluation-task n-grams cut out of a document dataset, shard by shard.

The task n-gram index is built once and written to the work directory; each shard task loads it
(once per process) and makes one pass over its documents. A document without a match is copied as
it is; a touched one is cut into pieces (ids ``<id>.p<k>``, meta ``decontam_parent``) or dropped.
removed.parquet gets one row per touched document (reason ``decontam:<task>``, detail ``split: ...`` or
``dropped: ...``); the manifest has, per task, the n-grams matched (with examples) and the documents
split or dropped, and per source the documents in, kept (whole or in pieces) and dropped.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections import Counter
from collections.abc import Sequence

from selene.decontaminate.config import DecontaminateConfig
from selene.decontaminate.manifest import (
    DecontaminateInputs,
    DecontaminateManifest,
    DecontaminateStats,
    DecontaminateTask,
)
from selene.decontaminate.overlap import (
    NgramIndex,
    Report,
    TaskMatches,
    TaskStats,
    add_to_report,
    decontaminate,
    merge_reports,
)
from selene.decontaminate.tasks import TaskText, load_tasks
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DocumentManifest, ShardEntry, SourceStats

WORK = dataset.WORK
_INDEX_CACHE: dict[str, NgramIndex] = {}


DecontamResult = StageResult[DecontaminateManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "decontaminate")


def preflight(inp: str, out: str, cfg: DecontaminateConfig) -> list[TaskText]:
    """Input dataset complete, tasks readable, output writable — before any work starts."""
    input_dataset(inp)
    tasks = load_tasks(cfg.tasks)
    fs.check_writable(out)
    return tasks


def _tasks_digest(tasks: Sequence[TaskText]) -> str:
    h = hashlib.sha256()
    for t in tasks:
        h.update(t.task.encode())
        for text in t.texts:
            h.update(b"\0" + text.encode())
    return h.hexdigest()[:16]


def _index(path: str) -> NgramIndex:
    if path not in _INDEX_CACHE:
        _INDEX_CACHE.clear()
        _INDEX_CACHE[path] = pickle.loads(fs.read_bytes(path))
    return _INDEX_CACHE[path]


class ShardResult(steps.StepResult):
    """What one shard's step stores: its output shard, per source the documents in, split, dropped,
    pieces written and ``decontam:<task>`` → documents dropped, and what each task matched."""

    shard: ShardEntry
    counts: dict[str, dict[str, int]]
    report: Report


def decontam_shard(root: str, k: int, shard: str, out: str, cfg: DecontaminateConfig) -> ShardResult:
    """Shard `k` → output shard `k` and its removed rows; returns counts and the per-task report."""
    target, removed_part = fs.join(out, dataset.shard_name(k)), _removed_part(root, k)
    return steps.resumable(
        steps.marker(root, "done", k),
        ShardResult,
        lambda: _decontam(root, shard, target, removed_part, cfg),
        outputs=[target, removed_part],
    )


def _removed_part(root: str, k: int) -> str:
    return fs.join(root, "removed", f"{k:05d}.parquet")


def _decontam(root: str, shard: str, target: str, removed_part: str, cfg: DecontaminateConfig) -> ShardResult:
    index = _index(fs.join(root, "index.pkl"))
    report: Report = {}
    counts: dict[str, Counter[str]] = {}
    with (
        dataset.ParquetSink(target, dataset.DOC_SCHEMA) as sink,
        dataset.ParquetSink(removed_part, dataset.REMOVED_SCHEMA) as removed,
    ):
        for batch in dataset.iter_row_groups(shard, dataset.DOC_SCHEMA.names):  # row groups: sized in bytes
            for doc in batch.to_pylist():
                c = counts.setdefault(doc["source"], Counter())
                c["in"] += 1
                res = decontaminate(doc["text"], index, cfg.margin_chars, cfg.min_piece_chars, cfg.max_splits)
                if res.reason is None:
                    sink.add(**doc)
                    continue
                add_to_report(report, res)
                kind = "dropped" if res.dropped else "split"
                c[kind] += 1
                c[res.reason] += int(res.dropped)
                detail = f"{kind}: {res.detail}; {res.removed_chars} of {len(doc['text'])} chars removed"
                removed.add(id=doc["id"], source=doc["source"], reason=res.reason, detail=detail, meta=doc["meta"])
                meta = json.loads(doc["meta"] or "{}")
                for i, piece in enumerate(res.pieces):
                    m = dataset.to_meta_json({**meta, "decontam_parent": doc["id"], "piece": i})
                    sink.add(id=f"{doc['id']}.p{i}", text=piece, source=doc["source"], meta=m)
                c["pieces"] += len(res.pieces)
    counted = {s: dict(c) for s, c in sorted(counts.items())}
    return ShardResult(shard=sink.written.entry(), counts=counted, report=report)


def run_decontaminate(
    inp: str, out: str, cfg: DecontaminateConfig, *, mapper: Mapper | None = None, force: bool = False
) -> DecontamResult:
    mapper = mapper or serial_map
    tasks = preflight(inp, out, cfg)
    m_in = input_dataset(inp)
    settings = fingerprints.settings(cfg, "tasks")
    fp = fingerprints.of([s.sha256 for s in m_in.shards], settings, _tasks_digest(tasks))
    if (done := dataset.open_output(out, fp, force, DecontaminateManifest)) is not None:
        return done
    root = fs.join(out, WORK, fp)
    index = NgramIndex.build(tasks, cfg.ngram, cfg.min_ngram)
    fs.atomic_write(fs.join(root, "index.pkl"), pickle.dumps(index))
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    results = mapper("decontam-shard", decontam_shard, [(root, k, p, out, cfg) for k, p in enumerate(shards)])
    failpoint("decontaminate:shards-written")
    return finalize(out, inp, m_in, root, results, index, cfg, fp)


def finalize(
    out: str, inp: str, m_in: DocumentManifest, root: str, results: Sequence[ShardResult],
    index: NgramIndex, cfg: DecontaminateConfig, fp: str,
) -> DecontamResult:
    report: Report = {}
    counts: dict[str, Counter[str]] = {}  # source → in, split, dropped, pieces and decontam:<task> → n
    for r in results:
        report = merge_reports(report, r.report)
        for src, c in r.counts.items():
            counts.setdefault(src, Counter()).update(c)
    per_source = {
        src: SourceStats(
            documents_in=c["in"],
            kept=c["in"] - c["dropped"],
            split=c["split"],
            pieces=c["pieces"],
            removed={reason: n for reason, n in c.items() if reason.startswith("decontam:") and n},
        )
        for src, c in counts.items()
    }
    totals: Counter[str] = sum(counts.values(), Counter())
    n_in = sum(s.rows for s in m_in.shards)
    shards = [r.shard for r in results]

    def manifest(removed: dataset.WrittenFile) -> DecontaminateManifest:
        return DecontaminateManifest(
            **steps.header(fp, cfg, shards, removed.entry()),
            inputs=DecontaminateInputs(dataset=inp, fingerprint=m_in.fingerprint, tasks=cfg.tasks),
            tasks={t.task: _task_entry(t, report.get(t.task)) for t in index.stats},
            stats=DecontaminateStats(
                documents_in=n_in,
                documents_out=sum(s.rows for s in shards),
                documents_removed=totals["dropped"],
                documents_split=totals["split"],
                pieces_out=totals["pieces"],
                per_source=per_source,
            ),
        )

    return steps.finish_documents(
        out,
        "decontaminate",
        [_removed_part(root, k) for k in range(len(results))],
        balance=lambda removed: {
            "documents read vs input shards": (totals["in"], n_in),
            "removed rows vs documents split + dropped": (removed.rows, totals["split"] + totals["dropped"]),
        },
        manifest=manifest,
    )


def _task_entry(t: TaskStats, rep: TaskMatches | None) -> DecontaminateTask:
    rep = rep or TaskMatches()
    return DecontaminateTask(
        n=t.n,
        examples=t.examples,
        indexed_examples=t.indexed_examples,
        task_ngrams=t.ngrams,
        matched_ngrams=rep.ngrams,
        documents_touched=rep.documents,
        documents_split=rep.split,
        documents_dropped=rep.dropped,
        matched_examples=rep.examples,
    )
