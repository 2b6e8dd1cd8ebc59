"""Ingest's end: ``removed.parquet`` (per input file, its filtered, language and malformed records, then
its exact duplicates), every input record accounted for, and ``manifest.json`` written last."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from selene.ingest.config import IngestConfig
from selene.ingest.files import FileResult
from selene.ingest.manifest import IngestInput, IngestManifest, IngestStats
from selene.ingest.readers import detect_format
from selene.ingest.shards import ShardResult
from selene.ingest.work import InputFile, Work
from selene.io import dataset, fs, steps
from selene.io.results import StageResult
from selene.manifest import SourceStats


def finish(
    out: str,
    inputs: Sequence[InputFile],
    files: Sequence[FileResult],
    dup_files: dict[int, str],
    work: Work,
    shards: Sequence[ShardResult],
    cfg: IngestConfig,
    fp: str,
) -> StageResult[IngestManifest]:
    """Write removed.parquet and, after checking that every input record is accounted for, the
    manifest; the work directory goes."""
    input_n: Counter[str] = Counter()
    kept_n: Counter[str] = Counter()
    removed_n: dict[str, Counter[str]] = defaultdict(Counter)
    edits_n: dict[str, Counter[str]] = defaultdict(Counter)
    for st in files:
        for src, c in st.edits.items():
            edits_n[src].update(c)
        for src, c in st.counts.items():
            for reason, n in c.items():
                input_n[src] += n
                if reason == "kept":
                    kept_n[src] += n
                else:
                    removed_n[src][reason] += n
    removed, duplicates = _write_removed(out, inputs, dup_files, work)
    for src, n in duplicates.items():
        kept_n[src] -= n
        removed_n[src]["exact_dup"] += n
    shard_rows = sum(s.shard.rows for s in shards)
    steps.check_accounting("ingest", balance(input_n, kept_n, removed_n, shard_rows, removed.rows))
    manifest = IngestManifest(
        **steps.header(fp, cfg, [s.shard for s in shards], removed.entry()),
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
        stats=IngestStats(
            documents_in=sum(input_n.values()),
            documents_out=shard_rows,
            documents_removed=removed.rows,
            per_source={
                s: SourceStats(
                    documents_in=input_n[s],
                    kept=kept_n[s],
                    removed=dict(sorted(removed_n[s].items())),
                    edits=dict(sorted(edits_n[s].items())) or None,
                )
                for s in sorted(input_n)
            },
            files=[st.stats() for st in files],
        ),
    )
    return steps.finish(out, manifest)


def balance(
    input_n: Counter[str],
    kept_n: Counter[str],
    removed_n: dict[str, Counter[str]],
    shard_rows: int,
    removed_rows: int,
) -> dict[str, tuple[int, int]]:
    """What must agree (`steps.check_accounting`): per source, records in against kept + removed;
    the kept against the shards' rows, the removed against removed.parquet's."""
    per_source = {
        f"source {s!r} in vs kept + removed": (input_n[s], kept_n[s] + sum(removed_n[s].values()))
        for s in input_n
    }
    return {
        **per_source,
        "kept vs shard rows": (sum(kept_n.values()), shard_rows),
        "removed vs removed.parquet rows": (sum(sum(c.values()) for c in removed_n.values()), removed_rows),
    }


def _write_removed(
    out: str, inputs: Sequence[InputFile], dup_files: dict[int, str], work: Work
) -> tuple[dataset.WrittenFile, Counter[str]]:
    """removed.parquet, per input file in order: the rows its reading removed (their row groups as
    written), then its exact duplicates, each with the id of the document it duplicates. Returns the
    file and the exact duplicates per source."""
    duplicates: Counter[str] = Counter()
    with dataset.ParquetSink(fs.join(out, dataset.REMOVED), dataset.REMOVED_SCHEMA) as sink:
        for inp in inputs:
            for group in dataset.iter_row_groups(work.removed(inp.idx)):
                sink.add_table(group)
            if inp.idx not in dup_files:
                continue
            dups = dataset.open_parquet(dup_files[inp.idx]).read()
            cand = dataset.take_rows(
                work.docs(inp.idx), dups.column("row").to_numpy(), ["id", "source", "meta"]
            )
            duplicates.update(dataset.value_counts(cand.column("source")))
            sink.add_table(
                pa.table(
                    {
                        "id": cand.column("id"),
                        "source": cand.column("source"),
                        "reason": pc.binary_join_element_wise("exact_dup_of:", dups.column("kept_id"), ""),
                        "detail": pa.repeat(pa.scalar("same normalised text"), dups.num_rows),
                        "meta": cand.column("meta"),
                    },
                    schema=dataset.REMOVED_SCHEMA,
                )
            )
    return sink.written, duplicates
