"""Ingest's first step, per input file: read, clean, identify language, filter, hash.

Each input file gives a candidate file (the documents kept so far, with the hashes of their text and
id), a removed file (the records dropped, with their reasons), the UTF-8 size of each candidate's
text (shards are cut by size) and, stored last as the step's result, its counts (`FileResult`).
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from selene.faults import kill_once
from selene.ingest import exact_dedup, ids
from selene.ingest.clean import clean_text
from selene.ingest.config import IngestConfig
from selene.ingest.filters import FilterChain
from selene.ingest.langid import LanguageIdentifier
from selene.ingest.manifest import FileStats
from selene.ingest.readers import read_records
from selene.ingest.records import ReadStats
from selene.ingest.work import CANDIDATE_SCHEMA, InputFile, Work
from selene.io import dataset, fs, steps


class FileResult(steps.StepResult):
    """What reading one input file found: its records by source and fate, and what the reader skipped."""

    file: str
    key: str
    bytes: int
    counts: dict[str, dict[str, int]]  # source → reason (or "kept") → records
    edits: dict[str, dict[str, int]]  # source → <filter>.<kind> → kept documents a filter edited
    blank_lines: int
    other_records: dict[str, int]

    def kept(self) -> int:
        return sum(c.get("kept", 0) for c in self.counts.values())

    def stats(self) -> FileStats:
        """The file as the manifest lists it."""
        return FileStats(
            file=self.file, bytes=self.bytes, blank_lines=self.blank_lines, other_records=self.other_records
        )


def process_file(inp: InputFile, cfg: IngestConfig, work_root: str) -> FileResult:
    """Read one input file through cleaning, language id and filters; returns its counts."""
    work = Work.at(work_root)
    outputs = [work.docs(inp.idx), work.removed(inp.idx), work.lengths(inp.idx)]
    return steps.resumable(
        work.file_done(inp.idx), FileResult, lambda: _read_file(inp, cfg, work), outputs=outputs
    )


def _read_file(inp: InputFile, cfg: IngestConfig, work: Work) -> FileResult:
    kill_once("ingest:file")
    chain = _filter_chain(work.root, cfg)
    hash_ids = ids.needed(cfg.sources)
    langid = LanguageIdentifier(cfg.langid) if cfg.langid.enabled else None
    read_stats = ReadStats()
    counts: dict[str, Counter[str]] = defaultdict(Counter)  # source → reason (or "kept") → n
    edits: dict[str, Counter[str]] = defaultdict(Counter)  # source → <filter>.<kind> → n, of kept documents
    lengths = array("q")  # UTF-8 bytes of each candidate's text: shards are cut by size
    with (
        dataset.ParquetSink(
            work.docs(inp.idx), CANDIDATE_SCHEMA, cfg.row_group_docs, cfg.row_group_bytes
        ) as docs,
        dataset.ParquetSink(
            work.removed(inp.idx), dataset.REMOVED_SCHEMA, cfg.row_group_docs, cfg.row_group_bytes
        ) as removed,
    ):
        for rec in read_records(inp.path, cfg.max_record_bytes, read_stats, cfg.extractor, inp.fields):
            source = rec.source if (rec.source and not inp.override) else inp.source
            doc_id = rec.id if rec.id is not None else f"{inp.key}#{rec.index}"
            reject = (rec.reason, rec.detail) if rec.reason else None
            text = rec.text or ""
            if reject is None:
                reject = chain.precheck(text, source)
            if reject is None:
                text = clean_text(text, cfg.clean)
                reject = _langid(langid, text, source, rec.meta)
                if reject is None:
                    verdict = chain.run(text, source, rec.meta)
                    text, reject = verdict.text, verdict.reason
                    if reject is None and verdict.edits:
                        edits[source].update(verdict.edits)
            if reject is not None:
                counts[source][reject[0]] += 1
                removed.add(
                    id=doc_id, source=source, reason=reject[0], detail=reject[1],
                    meta=dataset.to_meta_json(rec.meta) if rec.meta else None,
                )  # fmt: skip
                continue
            counts[source]["kept"] += 1
            h1, h2 = exact_dedup.text_hash(text)
            i1, i2 = ids.id_hash(doc_id) if hash_ids else (0, 0)
            lengths.append(len(text.encode("utf-8", "surrogatepass")))
            docs.add(
                id=doc_id,
                text=text,
                source=source,
                meta=dataset.to_meta_json(rec.meta),
                h1=h1,
                h2=h2,
                i1=i1,
                i2=i2,
            )
    fs.save_npy(work.lengths(inp.idx), np.frombuffer(lengths, dtype=np.int64))
    return FileResult(
        file=inp.path,
        key=inp.key,
        bytes=inp.bytes,
        counts={s: dict(sorted(c.items())) for s, c in sorted(counts.items())},
        edits={s: dict(sorted(c.items())) for s, c in sorted(edits.items())},
        blank_lines=read_stats.blank_lines,
        other_records=dict(sorted(read_stats.other_records.items())),
    )


_chain: tuple[str, FilterChain] | None = None


def _filter_chain(work_root: str, cfg: IngestConfig) -> FilterChain:
    """The run's filter chain, built once per process rather than once per input file: a block list
    of millions of domains takes seconds to read. The work root names the run's fingerprint, which
    covers the filter settings and the lists' contents, so a chain is never reused for other ones."""
    global _chain
    if _chain is None or _chain[0] != work_root:
        _chain = (work_root, FilterChain(cfg.filters))
    return _chain[1]


def _langid(
    lid: LanguageIdentifier | None, text: str, source: str, meta: dict[str, Any]
) -> tuple[str, str] | None:
    if lid is None or source in lid.cfg.exclude_sources:
        return None
    lang, score = lid.predict(text)
    meta["lang"], meta["lang_score"] = lang, round(score, 4)
    return lid.decide(lang, score)
