"""The ingest stage: raw files → cleaned, filtered, exactly-deduplicated document dataset.

Plain functions over paths and an `IngestConfig`; nothing here knows about Prefect. The work is
three parallel maps joined by files, so any executor can run it (`Mapper`):

1. `process_file` per input file: read, clean, identify language, filter, hash → a candidate file,
   a removed file and a stats file (written last: the file's completion marker).
2. `exact_dedup.dedup_bucket` per hash bucket → duplicates, grouped per file by `exact_dedup.resolve`;
   with an `id_key`, the same per id-hash bucket → repeated ids, an error (`ids.check_unique`). A
   source that yielded no text at all is an error before this step (`keys.check_read`).
3. `write_shard` per output shard: the surviving documents in the global order (input file, record),
   cut into shards of `shard_bytes` of text (and at most `shard_docs` documents), so the output does not
   depend on the number of workers and a shard's memory does not follow document length.

`finalize` writes ``removed.parquet`` and, last, ``manifest.json``. Work files live under
``OUT/_work/<fingerprint>/`` (fingerprint of inputs + config), so a rerun after a kill reuses what
finished and a changed config never reuses stale work.
"""

from __future__ import annotations

import json
from array import array
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene import __version__, executor
from selene.errors import InputError, InternalError, UsageError
from selene.executor import Mapper, serial_map
from selene.faults import kill_once
from selene.ingest import columnar, exact_dedup, ids, keys
from selene.ingest.clean import clean_text
from selene.ingest.config import IngestConfig, SourceSpec
from selene.ingest.filters import FilterChain
from selene.ingest.html import check_extractor
from selene.ingest.langid import LanguageIdentifier
from selene.ingest.manifest import FileStats, IngestInput, IngestManifest, IngestStats
from selene.ingest.readers import detect_format, read_records
from selene.ingest.records import Fields, ReadStats
from selene.io import dataset, fs
from selene.manifest import ShardEntry, SourceStats

CANDIDATE_SCHEMA = pa.schema(
    [
        *dataset.DOC_SCHEMA,
        pa.field("h1", pa.uint64(), nullable=False),
        pa.field("h2", pa.uint64(), nullable=False),
        pa.field("i1", pa.uint64(), nullable=False),  # the id's hash: `ids.check_unique`
        pa.field("i2", pa.uint64(), nullable=False),
    ]
)
WORK = dataset.WORK


@dataclass(frozen=True)
class InputFile:
    idx: int
    path: str
    key: str  # "<source name>/<path relative to the glob root>"; selene's document ids are "<key>#<index>"
    source: str
    override: bool
    bytes: int
    fields: Fields  # the source's text_key, id_key and meta_keys


IngestResult = dataset.StageResult[IngestManifest]


# ------------------------------------------------------------------------------------- planning


def plan_inputs(sources: Sequence[SourceSpec]) -> list[InputFile]:
    if not sources:
        raise UsageError(
            "no inputs: give at least one --source NAME=GLOB (or `ingest.sources` in the config)"
        )
    seen: dict[str, str] = {}
    out: list[InputFile] = []
    for spec in sources:
        files, root = columnar.expand_source(spec.glob)
        if not files:
            raise UsageError(
                f"--source {spec.name}={spec.glob}: the pattern matches no file. Paths are {fs.ACCEPTED_FORMS}."
            )
        fields = spec.fields()
        for path in files:
            kind, _ = detect_format(path)
            if kind in ("warc", "wet") and fields != Fields():
                raise UsageError(
                    f"source {spec.name!r}: text_key, id_key and meta_keys apply to jsonl, Parquet and Arrow files; "
                    f"{path} is a {kind.upper()} file"
                )
            if path in seen:
                raise UsageError(f"{path} is matched by both source {seen[path]!r} and {spec.name!r}")
            seen[path] = spec.name
            rel = path[len(root) :].lstrip("/") if root and path.startswith(root) else path.rsplit("/", 1)[-1]
            key = f"{spec.name}/{rel}"
            out.append(InputFile(len(out), path, key, spec.name, spec.source_override, fs.size(path), fields))
    return out


def preflight(out: str, cfg: IngestConfig) -> list[InputFile]:
    """The checks that need no reading but a footer: inputs exist and have known formats, Parquet and
    Arrow sources have the columns they name, `out` is writable."""
    inputs = plan_inputs(cfg.sources)
    kinds = [detect_format(i.path)[0] for i in inputs]
    if "warc" in kinds:
        check_extractor(cfg.extractor)
    check_columns(inputs, kinds)
    fs.check_writable(out)
    return inputs


def check_columns(inputs: Sequence[InputFile], kinds: Sequence[str]) -> None:
    """A source's fields against its first readable Parquet/Arrow footer, or the first records of its
    jsonl files (`keys.check_jsonl_fields`): a wrong text_key is found before any work, at the cost of
    one footer or a few records per source (not per file: a remote corpus has thousands). Every file
    is checked again as it is read."""
    done: set[str] = set()
    jsonl: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    fields: dict[str, Fields] = {}
    for inp, kind in zip(inputs, kinds, strict=True):
        fields[inp.source] = inp.fields
        if kind == "jsonl":
            jsonl[inp.source].append((inp.path, detect_format(inp.path)[1]))
        if kind not in ("parquet", "arrow") or inp.source in done:
            continue
        if columnar.check_columns(inp.path, kind, inp.fields):
            done.add(inp.source)
            if kind == "parquet" and inp.fields.id is not None:
                keys.check_parquet_ids(inp.source, inp.path, inp.fields)
    for source, files in jsonl.items():
        keys.check_jsonl_fields(source, files, fields[source])


def fingerprint(inputs: Sequence[InputFile], cfg: IngestConfig) -> str:
    """Identity of an ingest run: inputs (path, size) and every setting that changes the output."""
    settings = executor.settings(cfg, "sources")
    files = [(i.key, i.path, i.source, i.override, i.bytes, *astuple(i.fields)) for i in inputs]
    # A block or word list edited in place changes the output under the same setting.
    lists = [(p, _list_digest(p)) for p in cfg.filters.input_files()]
    return executor.fingerprint(files, settings, lists)


def _list_digest(path: str) -> str:
    """Digest of a list file, or of the files of a UT1 category directory."""
    fsys, p = fs.get_fs(path)
    if fsys.isdir(p):
        files = sorted(f for f in fsys.find(p) if not fsys.isdir(f))
        return executor.fingerprint([(f[len(p) :], fs.sha256_file(fs.unstrip(fsys, f))) for f in files])
    return fs.sha256_file(path) if fsys.exists(p) else ""


class Work:
    """Paths of the intermediate files of one run."""

    def __init__(self, out: str, fp: str) -> None:
        self.root = fs.join(out, WORK, fp)

    @classmethod
    def at(cls, root: str) -> Work:
        """The work directory `root` (what tasks receive: a path, not an object)."""
        w = cls.__new__(cls)
        w.root = root
        return w

    def docs(self, i: int) -> str:
        return self.docs_pattern().format(i)

    def docs_pattern(self) -> str:
        return fs.join(self.root, "files", "{:05d}.docs.parquet")

    def removed(self, i: int) -> str:
        return fs.join(self.root, "files", f"{i:05d}.removed.parquet")

    def lengths(self, i: int) -> str:
        return fs.join(self.root, "files", f"{i:05d}.bytes.npy")

    def stats(self, i: int) -> str:
        return fs.join(self.root, "files", f"{i:05d}.stats.json")

    def bucket(self, b: int, of: int) -> str:
        return fs.join(self.root, f"buckets-{of}", f"{b:05d}.npy")

    def id_bucket(self, b: int, of: int) -> str:
        return fs.join(self.root, f"id-buckets-{of}", f"{b:05d}.npy")

    def dups_dir(self) -> str:
        return fs.join(self.root, "dups")

    def dups_pattern(self) -> str:
        return fs.join(self.dups_dir(), "{:05d}.parquet")  # as `exact_dedup.resolve` names them

    def part_done(self, k: int) -> str:
        return fs.join(self.root, "parts", f"{k:05d}.json")


# ------------------------------------------------------------------------------- 1. per file


def process_file(inp: InputFile, cfg: IngestConfig, work_root: str) -> dict[str, Any]:
    """Read one input file through cleaning, language id and filters; returns its stats."""
    work = Work.at(work_root)
    marker = work.stats(inp.idx)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    kill_once("ingest:file")
    chain = _filter_chain(work_root, cfg)
    hash_ids = ids.needed(cfg.sources)
    langid = LanguageIdentifier(cfg.langid) if cfg.langid.enabled else None
    read_stats = ReadStats()
    counts: dict[str, Counter[str]] = defaultdict(Counter)  # source → reason (or "kept") → n
    edits: dict[str, Counter[str]] = defaultdict(Counter)  # source → <filter>.<kind> → n, of kept documents
    docs = dataset.ParquetSink(work.docs(inp.idx), CANDIDATE_SCHEMA, cfg.row_group_docs, cfg.row_group_bytes)
    removed = dataset.ParquetSink(
        work.removed(inp.idx), dataset.REMOVED_SCHEMA, cfg.row_group_docs, cfg.row_group_bytes
    )
    lengths = array("q")  # UTF-8 bytes of each candidate's text: shards are cut by size
    try:
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
    except BaseException:
        docs.abort()
        removed.abort()
        raise
    docs.close()
    removed.close()
    fs.save_npy(work.lengths(inp.idx), np.frombuffer(lengths, dtype=np.int64))
    stats = {
        "file": inp.path,
        "key": inp.key,
        "bytes": inp.bytes,
        "counts": {s: dict(sorted(c.items())) for s, c in sorted(counts.items())},
        "edits": {s: dict(sorted(c.items())) for s, c in sorted(edits.items())},
        "blank_lines": read_stats.blank_lines,
        "other_records": dict(sorted(read_stats.other_records.items())),
    }
    fs.atomic_write(marker, json.dumps(stats, indent=1))
    return stats


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


# ------------------------------------------------------------------------------ 3. per shard


@dataclass(frozen=True)
class ShardPlan:
    index: int
    segments: tuple[tuple[int, int, int], ...]  # (file idx, first row, end row) of candidate rows


def plan_shards(
    n_candidates: dict[int, int],
    dup_rows: dict[int, np.ndarray],
    lengths: dict[int, str],
    shard_bytes: int,
    shard_docs: int | None = None,
) -> list[ShardPlan]:
    """Cut the surviving documents, in global order, into shards of at most `shard_bytes` of text
    (at least one document) and at most `shard_docs` documents. `lengths` maps each input file to the
    .npy of its candidates' text bytes; one file's array is in memory at a time."""
    plans: list[ShardPlan] = []
    current: list[tuple[int, int, int]] = []
    room_bytes, room_docs = shard_bytes, shard_docs or np.iinfo(np.int64).max
    for f_idx in sorted(n_candidates):
        n = n_candidates[f_idx]
        survivors = np.setdiff1d(np.arange(n), dup_rows.get(f_idx, np.empty(0, dtype=np.int64)))
        size = fs.load_npy(lengths[f_idx])[survivors] if survivors.size else np.empty(0, dtype=np.int64)
        ends = np.cumsum(size)
        pos = 0
        while pos < survivors.size:
            base = int(ends[pos - 1]) if pos else 0
            fit = int(np.searchsorted(ends, base + room_bytes, side="right")) - pos  # documents that fit
            take = min(max(fit, 1 if not current else 0), room_docs, survivors.size - pos)
            if take:
                current.append((f_idx, int(survivors[pos]), int(survivors[pos + take - 1]) + 1))
                room_bytes -= int(ends[pos + take - 1]) - base
                room_docs -= take
                pos += take
            if room_bytes <= 0 or room_docs == 0 or pos < survivors.size:  # full: the next one does not fit
                plans.append(ShardPlan(len(plans), tuple(current)))
                current, room_bytes, room_docs = [], shard_bytes, shard_docs or np.iinfo(np.int64).max
    if current:
        plans.append(ShardPlan(len(plans), tuple(current)))
    return plans


def write_shard(
    plan: ShardPlan,
    work_root: str,
    dups: dict[int, str],
    out: str,
    row_group: int | None,
    row_group_bytes: int,
) -> dict[str, Any]:
    """Write output shard `plan.index` from the candidate files, skipping duplicates."""
    work = Work.at(work_root)
    marker = work.part_done(plan.index)
    target = fs.join(out, dataset.shard_name(plan.index))
    if fs.exists(marker) and fs.exists(target):
        return json.loads(fs.read_text(marker))
    sink = dataset.ParquetSink(target, dataset.DOC_SCHEMA, row_group, row_group_bytes)
    try:
        for f_idx, start, end in plan.segments:
            table = _read_rows(work.docs(f_idx), start, end)
            if f_idx in dups:
                dup = dataset.open_parquet(dups[f_idx]).read(columns=["row"]).column("row").to_numpy()
                keep = ~np.isin(np.arange(start, end), dup)
                table = table.filter(pa.array(keep))
            sink.add_table(table.select(dataset.DOC_SCHEMA.names))
    except BaseException:
        sink.abort()
        raise
    written = sink.close().to_json()
    fs.atomic_write(marker, json.dumps(written))
    return written


def _read_rows(path: str, start: int, end: int) -> pa.Table:
    """Rows [start, end) of a Parquet file, reading only the row groups that hold them."""
    pf = dataset.open_parquet(path)
    groups, first, offset = [], None, 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if offset + n > start and offset < end:
            groups.append(g)
            first = offset if first is None else first
        offset += n
    if not groups:
        return dataset.DOC_SCHEMA.empty_table()
    t = pf.read_row_groups(groups, columns=dataset.DOC_SCHEMA.names)
    return t.slice(start - (first or 0), end - start)


# ---------------------------------------------------------------------------------- the stage


def run_ingest(
    out: str, cfg: IngestConfig, *, mapper: Mapper | None = None, force: bool = False
) -> IngestResult:
    """Ingest `cfg.sources` into the document dataset `out`. Skipped when `out` is already complete."""
    mapper = mapper or serial_map
    FilterChain(cfg.filters)  # a missing or empty block list, a bad word list: errors before any work
    inputs = plan_inputs(cfg.sources)
    fp = fingerprint(inputs, cfg)
    if (done := dataset.open_output(out, fp, force, IngestManifest)) is not None:
        return done
    work = Work(out, fp)

    file_stats = mapper("ingest-file", process_file, [(i, cfg, work.root) for i in inputs])
    try:
        keys.check_read(
            [(s.name, s.fields()) for s in cfg.sources],
            [(i.source, s) for i, s in zip(inputs, file_stats, strict=True)],
        )
    except InputError:
        _drop_work(out, work)
        raise
    n_candidates = {i.idx: _count_kept(s) for i, s in zip(inputs, file_stats, strict=True)}
    docs_files = [(i.idx, work.docs(i.idx)) for i in inputs]

    dup_files: dict[int, str] = {}
    nb = cfg.exact_dedup.buckets or exact_dedup.buckets_for(sum(n_candidates.values()))
    if cfg.exact_dedup.enabled:
        buckets = mapper(
            "exact-dedup-bucket",
            exact_dedup.dedup_bucket,
            [(b, nb, work.docs_pattern(), len(inputs), work.bucket(b, nb)) for b in range(nb)],
        )
        dup_files = exact_dedup.resolve(buckets, dict(docs_files), work.dups_dir())
    if ids.needed(cfg.sources):
        id_buckets = mapper(
            "unique-ids-bucket",
            exact_dedup.dedup_bucket,
            [
                (
                    b,
                    nb,
                    work.docs_pattern(),
                    len(inputs),
                    work.id_bucket(b, nb),
                    ("i1", "i2"),
                    work.dups_pattern(),
                )
                for b in range(nb)
            ],
        )
        try:
            ids.check_unique(
                id_buckets, [(i.path, i.source) for i in inputs], work.docs_pattern(), cfg.sources
            )
        except InputError:
            _drop_work(out, work)
            raise
    dup_rows = {
        f: dataset.open_parquet(p).read(columns=["row"]).column("row").to_numpy()
        for f, p in dup_files.items()
    }

    lengths = {i.idx: work.lengths(i.idx) for i in inputs}
    plans = plan_shards(n_candidates, dup_rows, lengths, cfg.shard_bytes, cfg.shard_docs)
    shards = mapper(
        "write-shard",
        write_shard,
        [(p, work.root, _dups_of(p, dup_files), out, cfg.row_group_docs, cfg.row_group_bytes) for p in plans],
    )
    _remove_stale_parts(out, {s["name"] for s in shards})
    manifest = finalize(out, inputs, file_stats, dup_files, work, shards, cfg, fp)
    fs.rm(fs.join(out, WORK), recursive=True)
    return IngestResult(out, skipped=False, manifest=manifest)


def _drop_work(out: str, work: Work) -> None:
    """Remove what a run that cannot go on wrote: its fix is another setting, so another fingerprint
    whose run never reads these files; `out` goes too when nothing else is in it."""
    fs.rm(work.root, recursive=True)
    for d in (fs.join(out, WORK), out):
        if fs.exists(d) and not fs.ls(d):
            fs.rm(d, recursive=True)


def _dups_of(plan: ShardPlan, dup_files: dict[int, str]) -> dict[int, str]:
    """The duplicate files of the input files a shard reads: a task's parameters stay small however
    many input files the corpus has."""
    return {f: dup_files[f] for f, _, _ in plan.segments if f in dup_files}


def _count_kept(stats: dict[str, Any]) -> int:
    return sum(c.get("kept", 0) for c in stats["counts"].values())


def _remove_stale_parts(out: str, keep: set[str]) -> None:
    for p in fs.ls(out):
        name = p.rsplit("/", 1)[-1]
        if name.startswith("part-") and name.endswith(".parquet") and name not in keep:
            fs.rm(p)


def finalize(
    out: str,
    inputs: Sequence[InputFile],
    file_stats: Sequence[dict[str, Any]],
    dup_files: dict[int, str],
    work: Work,
    shards: Sequence[dict[str, Any]],
    cfg: IngestConfig,
    fp: str,
) -> IngestManifest:
    """Write removed.parquet (filter/lang/malformed records, then duplicates, per input file) and
    the manifest, after checking that every input record is accounted for."""
    input_n: Counter[str] = Counter()
    kept_n: Counter[str] = Counter()
    removed_n: dict[str, Counter[str]] = defaultdict(Counter)
    edits_n: dict[str, Counter[str]] = defaultdict(Counter)
    sink = dataset.ParquetSink(fs.join(out, dataset.REMOVED), dataset.REMOVED_SCHEMA)
    try:
        for inp, st in zip(inputs, file_stats, strict=True):
            for src, c in st.get("edits", {}).items():
                edits_n[src].update(c)
            for src, c in st["counts"].items():
                for reason, n in c.items():
                    input_n[src] += n
                    if reason == "kept":
                        kept_n[src] += n
                    else:
                        removed_n[src][reason] += n
            for group in dataset.iter_row_groups(work.removed(inp.idx)):
                sink.add_table(group)
            if inp.idx in dup_files:
                dups = dataset.open_parquet(dup_files[inp.idx]).read()
                cand = dataset.take_rows(
                    work.docs(inp.idx), dups.column("row").to_numpy(), ["id", "source", "meta"]
                )
                for src, n in dataset.value_counts(cand.column("source")).items():
                    kept_n[src] -= n
                    removed_n[src]["exact_dup"] += n
                sink.add_table(
                    pa.table(
                        {
                            "id": cand.column("id"),
                            "source": cand.column("source"),
                            "reason": pc.binary_join_element_wise(
                                "exact_dup_of:", dups.column("kept_id"), ""
                            ),
                            "detail": pa.repeat(pa.scalar("same normalised text"), dups.num_rows),
                            "meta": cand.column("meta"),
                        },
                        schema=dataset.REMOVED_SCHEMA,
                    )
                )
    except BaseException:
        sink.abort()
        raise
    removed_file = sink.close()
    shard_rows = sum(s["rows"] for s in shards)
    _check_accounting(input_n, kept_n, removed_n, shard_rows, removed_file.rows)
    sources = sorted(input_n)
    manifest = IngestManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=cfg.model_dump(mode="json"),
        inputs=[
            IngestInput(
                path=i.path,
                key=i.key,
                source=i.source,
                format=".".join(filter(None, detect_format(i.path))),
                bytes=i.bytes,
            )
            for i in inputs
        ],
        shards=[ShardEntry.model_validate(s) for s in shards],
        removed=removed_file.entry(),
        stats=IngestStats(
            documents_in=sum(input_n.values()),
            documents_out=shard_rows,
            documents_removed=removed_file.rows,
            per_source={
                s: SourceStats(
                    documents_in=input_n[s],
                    kept=kept_n[s],
                    removed=dict(sorted(removed_n[s].items())),
                    edits=dict(sorted(edits_n[s].items())) or None,
                )
                for s in sources
            },
            files=[FileStats.model_validate(st) for st in file_stats],
        ),
    )
    dataset.write_manifest(out, manifest)
    return manifest


def _check_accounting(
    input_n: Counter[str],
    kept_n: Counter[str],
    removed_n: dict[str, Counter[str]],
    shard_rows: int,
    removed_rows: int,
) -> None:
    for s in input_n:
        if input_n[s] != kept_n[s] + sum(removed_n[s].values()):
            raise InternalError(f"accounting for source {s!r}: in != kept + removed")
    if sum(kept_n.values()) != shard_rows or sum(sum(c.values()) for c in removed_n.values()) != removed_rows:
        raise InternalError("accounting: shard/removed rows differ from the per-file counts")


__all__ = ["IngestResult", "InputFile", "Mapper", "process_file", "run_ingest", "serial_map", "write_shard"]
