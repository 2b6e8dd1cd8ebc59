"""The spans stage: spans of consecutive sentences, paragraphs or lines that repeat anywhere in the
corpus are cut from every document but the first that holds them (C4's three-sentence rule, as
datatrove's SentenceDedup does it), as external-memory steps over files.

1. `signatures.signature_shard` per input shard: every span's hash (xxh64 of its normalised units),
   with its row and first unit, sorted by hash (``_work/<fp>/sig/k.npy``).
2. The spans counted, the hash partitions chosen so that one partition fits `Budget.task_memory`;
   `find.find_partition` per partition: the partition's spans of every shard (two binary searches
   per shard file), sorted; the first occurrence of a hash in corpus order stays, every later one (and,
   with ``--against``, every one an earlier output holds) is written as a duplicate of its shard
   (``dups-<partitions>/pP-sK.npy``); the partition's most repeated spans go to the report.
3. `cut_shard` per input shard (`edits.edit_shard`): the units of its duplicate spans cut, what is
   left joined as it was; a document left too short (`min_doc_words`, `min_sentences`) goes to
   removed.parquet as ``spans:too_short``; the spans of the text left are kept for step 4.
4. With `store_index`: the spans of the output shards (the touched documents hashed again, the
   others' taken from step 1) and their distinct hashes written, partitioned
   and sorted, to ``OUT/spans-index/`` (what a later ``--against`` run looks up; its partitions are
   sized by the spans, not the budget, so the index is the same whatever the budget), then
   repeats.md and the manifest, last.

The main process holds no array over spans or documents: per shard its duplicate files' names and a
few counts.
Work files live under ``OUT/_work/<fingerprint>/``; the fingerprint covers the input dataset, every
setting that changes the result and the earlier outputs, so a changed setting never reuses stale
files. Output is the same, byte for byte, for any number of workers, executor or memory budget.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from selene.errors import InputError, UsageError
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, edits, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DatasetInputs, DocumentManifest
from selene.spans import stored
from selene.spans.config import SpansConfig
from selene.spans.find import Found, find_partition, most_repeated
from selene.spans.manifest import SpanCounts, SpansInputs, SpansManifest
from selene.spans.sentences import sentence_ends
from selene.spans.signatures import kept_signatures, records, signature_shard
from selene.spans.units import Spans, cut, spans
from selene.spans.words import count_words
from selene.spans.work import DUP_DTYPE, SIG_DTYPE, Work, partitions_for

WORK = dataset.WORK
TOO_SHORT = "spans:too_short"
# in the fingerprint: outputs and work files of another splitter or decision rule are never taken as done
ALGORITHM = 1

SpansResult = StageResult[SpansManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "cut repeated spans from")


def preflight(inp: str, out: str, cfg: SpansConfig) -> list[stored.Prior]:
    """Before any work: a unit given, the input finished, the earlier outputs usable, the output writable."""
    if cfg.unit is None:
        raise UsageError("no unit: give --unit sentence, paragraph or line (or spans.unit in the config)")
    input_dataset(inp)
    priors = stored.load_priors(cfg.against, inp, out, stored.settings_of(cfg))
    fs.check_writable(out)
    return priors


def run_spans(
    inp: str, out: str, cfg: SpansConfig, *, mapper: Mapper | None = None, force: bool = False
) -> SpansResult:
    mapper = mapper or serial_map
    priors = preflight(inp, out, cfg)
    m_in = input_dataset(inp)
    fp = fingerprints.of(
        [s.sha256 for s in m_in.shards],
        fingerprints.settings(cfg),
        ALGORITHM,
        [(p.out, p.fingerprint) for p in priors],
    )
    if (done := dataset.open_output(out, fp, force, SpansManifest)) is not None:
        return done
    shards = tuple(fs.join(inp, s.name) for s in m_in.shards)
    work = Work(
        root=fs.join(out, WORK, fp), shards=shards, priors=tuple((p.out, p.partitions) for p in priors)
    )
    sigs = mapper("spans-signatures", signature_shard, [(work, k, s, cfg) for k, s in enumerate(shards)])
    n_in = sum(s.rows for s in m_in.shards)
    if (read := sum(s.documents for s in sigs)) != n_in:
        raise InputError(f"{inp}: the shards hold {read} documents, its manifest says {n_in}")
    work = replace(work, partitions=partitions_for(sum(s.spans for s in sigs), mapper.budget))
    found = mapper("spans-find", find_partition, [(work, p, cfg) for p in range(work.partitions)])
    dup_files: dict[int, list[str]] = defaultdict(list)
    for p, f in enumerate(found):
        for k in f.shards:
            dup_files[k].append(work.dups(p, k))
    results = mapper(
        "spans-cut",
        cut_shard,
        [(work, k, s, out, dup_files.get(k, []), cfg) for k, s in enumerate(shards)],
    )
    failpoint("spans:shards-written")
    index_spans = _store_index(out, work, results, dup_files, cfg, mapper) if cfg.store_index else None
    return finalize(out, inp, m_in, work, results, found, cfg, fp, priors, index_spans)


def cut_shard(
    work: Work, k: int, shard: str, out: str, dup_files: Sequence[str], cfg: SpansConfig
) -> edits.EditedShard:
    """Input shard k → output shard k: the units of its duplicate spans cut (`units.cut`), documents
    left too short dropped. Memory: the shard's duplicates (8 bytes each) and one row group.

    With `store_index`, the spans of the text left in edited documents (split anyway to count its
    sentences) are kept for the output's index (`signatures.kept_signatures`), with the rows that
    changed; written after the shard, so a run killed in between splits those documents again there."""
    parts = [fs.load_npy(f) for f in dup_files]
    dups = np.concatenate(parts) if parts else np.empty(0, dtype=DUP_DTYPE)
    dups = dups[np.lexsort((dups["first"], dups["row"]))]
    changed: list[int] = []
    new: list[np.ndarray] = []
    ran: list[bool] = []

    def edit(docs: list[dict[str, Any]], first_row: int) -> list[edits.Cut | None]:
        ran.append(True)
        lo = np.searchsorted(dups["row"], first_row)
        hi = np.searchsorted(dups["row"], first_row + len(docs))
        rows, firsts = dups["row"][lo:hi].tolist(), dups["first"][lo:hi].tolist()
        at: dict[int, list[int]] = defaultdict(list)
        for r, f in zip(rows, firsts, strict=True):
            at[r - first_row].append(f)
        decided: list[edits.Cut | None] = []
        for i, doc in enumerate(docs):
            c, left = _cut(doc["text"], at[i], cfg) if i in at else (None, None)
            decided.append(c)
            if c is not None:
                changed.append(first_row + i)
            if left is not None:
                new.append(records(left, first_row + i))
        return decided

    result = edits.edit_shard(work.root, k, shard, out, edit)
    if ran and cfg.store_index:
        fs.save_npy(work.sig(k, "cut-spans"), np.concatenate(new) if new else np.empty(0, dtype=SIG_DTYPE))
        fs.save_npy(work.sig(k, "cut-rows"), np.array(changed, dtype=np.uint32))  # last: the pair is complete
    return result


def _cut(text: str, starts: list[int], cfg: SpansConfig) -> tuple[edits.Cut | None, Spans | None]:
    """One document's cut, and datatrove's rules on what is left (only for a document that changed);
    with the spans of the text left when it is kept."""
    res = cut(text, cfg, sorted(starts))
    if res.units == 0:
        return None, None
    words = count_words(res.text) if cfg.min_doc_words else 0
    ends = sentence_ends(res.text) if cfg.min_sentences or cfg.unit == "sentence" else []
    sentences = len(ends)
    if not res.text or words < cfg.min_doc_words or sentences < cfg.min_sentences:
        detail = f"{res.units} {cfg.unit}(s) cut; left: {len(res.text)} chars"
        detail += f", {words} words (min {cfg.min_doc_words})" if cfg.min_doc_words else ""
        detail += f", {sentences} sentences (min {cfg.min_sentences})" if cfg.min_sentences else ""
        return edits.Cut(text=res.text, chars=res.chars, spans=res.units, drop=TOO_SHORT, detail=detail), None
    left = spans(res.text, cfg, ends if cfg.unit == "sentence" else None) if cfg.store_index else None
    return edits.Cut(text=res.text, chars=res.chars, spans=res.units), left


def _store_index(
    out: str,
    work: Work,
    results: Sequence[edits.EditedShard],
    dup_files: dict[int, list[str]],
    cfg: SpansConfig,
    mapper: Mapper,
) -> int:
    """The output's span index (`stored`): the spans of its shards (`kept_signatures`), then per
    partition the distinct hashes; index.json last. Returns the distinct spans it holds."""
    args = [
        (work, k, work.shards[k], fs.join(out, r.shard.name), dup_files.get(k, []), cfg)
        for k, r in enumerate(results)
    ]
    kept = mapper("spans-index-signatures", kept_signatures, args)
    parts = stored.index_partitions(sum(s.spans for s in kept))
    files = [work.sig(k, "kept") for k in range(len(results))]
    counts = mapper("spans-index", stored.index_partition, [(out, files, p, parts) for p in range(parts)])
    total = sum(counts)
    stored.write_index(out, stored.settings_of(cfg), parts, total, [r.shard.sha256 for r in results])
    return total


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    work: Work,
    results: Sequence[edits.EditedShard],
    found: Sequence[Found],
    cfg: SpansConfig,
    fp: str,
    priors: Sequence[stored.Prior],
    index_spans: int | None,
) -> SpansResult:
    assert cfg.unit is not None
    top = most_repeated(list(found))
    title = f"Most repeated {cfg.span}-{cfg.unit} spans of {inp}"
    fs.atomic_write(fs.join(out, "repeats.md"), edits.repeats_markdown(top, title))
    counts = SpanCounts(
        unit=cfg.unit,
        span=cfg.span,
        spans=sum(f.spans for f in found),
        duplicate_spans=sum(f.duplicates for f in found),
        distinct_repeated=sum(f.distinct_repeated for f in found),
        in_earlier=sum(f.in_earlier for f in found),
        index_spans=index_spans,
    )

    def manifest(summary: edits.EditSummary, removed: dataset.WrittenFile) -> SpansManifest:
        return SpansManifest(
            **steps.header(fp, cfg, summary.shards, removed.entry()),
            inputs=SpansInputs(
                dataset=inp,
                fingerprint=m_in.fingerprint,
                against=[DatasetInputs(dataset=p.out, fingerprint=p.fingerprint) for p in priors] or None,
            ),
            spans=counts,
            repeats=top,
            stats=summary.stats,
        )

    return edits.finish_edits(out, "spans", m_in, work.root, results, manifest)
