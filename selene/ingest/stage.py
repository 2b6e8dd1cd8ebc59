"""The ingest stage: raw files → cleaned, filtered, exactly-deduplicated document dataset.

Plain functions over paths and an `IngestConfig`; nothing here knows about Prefect. The work is
three parallel maps joined by files, so any executor can run it (`Mapper`):

1. `files.process_file` per input file: read, clean, identify language, filter, hash → a candidate
   file, a removed file and its counts (`files.FileResult`, stored last: the step's marker).
2. `exact_dedup.dedup_bucket` per hash bucket → duplicates, grouped per file by `exact_dedup.resolve`;
   with an `id_key`, the same per id-hash bucket → repeated ids, an error (`ids.check_unique`). A
   source that yielded no text at all is an error before this step (`keys.check_read`).
3. `shards.write_shard` per output shard: the surviving documents in the global order (input file,
   record), cut into shards of `shard_bytes` of text (and at most `shard_docs` documents), so the
   output does not depend on the number of workers and a shard's memory does not follow document length.

`finish.finish` writes ``removed.parquet`` and, last, ``manifest.json``. Work files live under
``OUT/_work/<fingerprint>/`` (fingerprint of inputs + config), so a rerun after a kill reuses what
finished and a changed config never reuses stale work.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import astuple

from selene.errors import InputError, UsageError
from selene.executor.mappers import Mapper, serial_map
from selene.ingest import columnar, exact_dedup, ids, keys
from selene.ingest.config import IngestConfig, SourceSpec
from selene.ingest.files import process_file
from selene.ingest.filters import FilterChain
from selene.ingest.finish import finish
from selene.ingest.html import check_extractor
from selene.ingest.manifest import IngestManifest
from selene.ingest.readers import detect_format
from selene.ingest.records import Fields
from selene.ingest.shards import ShardPlan, plan_shards, write_shard
from selene.ingest.work import InputFile, Work
from selene.io import dataset, fingerprints, fs
from selene.io.results import StageResult

IngestResult = StageResult[IngestManifest]


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
    settings = fingerprints.settings(cfg, "sources")
    files = [(i.key, i.path, i.source, i.override, i.bytes, *astuple(i.fields)) for i in inputs]
    # A block or word list edited in place changes the output under the same setting.
    lists = [(p, _list_digest(p)) for p in cfg.filters.input_files()]
    return fingerprints.of(files, settings, lists)


def _list_digest(path: str) -> str:
    """Digest of a list file, or of the files of a UT1 category directory."""
    fsys, p = fs.get_fs(path)
    if fsys.isdir(p):
        files = sorted(f for f in fsys.find(p) if not fsys.isdir(f))
        return fingerprints.of([(f[len(p) :], fs.sha256_file(fs.unstrip(fsys, f))) for f in files])
    return fs.sha256_file(path) if fsys.exists(p) else ""


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

    files = mapper("ingest-file", process_file, [(i, cfg, work.root) for i in inputs])
    try:
        keys.check_read(
            [(s.name, s.fields()) for s in cfg.sources],
            [(i.source, f.counts) for i, f in zip(inputs, files, strict=True)],
        )
    except InputError:
        _drop_work(out, work)
        raise
    n_candidates = {i.idx: f.kept() for i, f in zip(inputs, files, strict=True)}
    docs_files = [(i.idx, work.docs(i.idx)) for i in inputs]

    dup_files: dict[int, str] = {}
    nb = cfg.exact_dedup.buckets or exact_dedup.buckets_for(sum(n_candidates.values()), mapper.budget)
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
    _remove_stale_parts(out, {s.shard.name for s in shards})
    return finish(out, inputs, files, dup_files, work, shards, cfg, fp)


def _drop_work(out: str, work: Work) -> None:
    """Remove what a run that cannot go on wrote: its fix is another setting, so another fingerprint
    whose run never reads these files; `out` goes too when nothing else is in it."""
    fs.rm(work.root, recursive=True)
    for d in (fs.join(out, dataset.WORK), out):
        if fs.exists(d) and not fs.ls(d):
            fs.rm(d, recursive=True)


def _dups_of(plan: ShardPlan, dup_files: dict[int, str]) -> dict[int, str]:
    """The duplicate files of the input files a shard reads: a task's parameters stay small however
    many input files the corpus has."""
    return {f: dup_files[f] for f, _, _ in plan.segments if f in dup_files}


def _remove_stale_parts(out: str, keep: set[str]) -> None:
    for p in fs.ls(out):
        name = p.rsplit("/", 1)[-1]
        if name.startswith("part-") and name.endswith(".parquet") and name not in keep:
            fs.rm(p)




__all__ = ["IngestResult", "InputFile", "Mapper", "process_file", "run_ingest", "serial_map", "write_shard"]
