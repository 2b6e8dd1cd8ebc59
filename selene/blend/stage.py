"""The blend stage: a document dataset → the training mix, sampled per source and globally shuffled.

1. `scan_shard` per input shard: documents and UTF-8 bytes per source (Arrow compute, no Python
   loop per document), and each document's bytes (``lengths/s<shard>.npy``, 8 bytes a document) for
   the partial passes.
2. `token_shard` (only with a tokenizer) per input shard: encode its part of each source's seeded
   token sample; tokens/byte is extrapolated to the whole source (`mix.source_sizes`).
3. `mix.plan_epochs`: weights and epochs → epochs per source (warnings on stderr: sources the
   config does not name, sources repeated more than `mix.WARN_EPOCHS` times). The last, partial pass
   of each source is chosen by tokens (`mix.partial_passes`): its documents in a seeded key order,
   taken until the pass holds its share of the source's bytes. `partial_shard` answers the search's
   rounds per shard (a histogram of bytes over a key range, then the few documents around where the
   pass ends) from the lengths files, so no step holds a per-document plan of the corpus; the result
   is a key bound and a short list of picks per source (``partial.json``). The number of shuffle
   buckets is `shuffle_buckets`, or the planned bytes of the mix divided by `shuffle_bucket_bytes`
   (`mix.shuffle_buckets`): data and config decide it, never the workers or the memory budget. The budget is only checked: a bucket that would not fit a task's share of it
   (`check_bucket_memory`) stops the run before the shuffle, naming the settings to change.
4. `scatter_shard` per input shard: the shard's sampled (document, pass) rows, each with a seeded
   random bucket and sort key, written to one file per shard, ``scatter/s<shard>.parquet``, ordered by
   bucket with each bucket in row groups of its own (the marker records each bucket's row groups), so
   the work files are as many as the shards, not shards × buckets; repeats get the id
   ``<id>@<pass>``. Documents sampled 0 times go to removed.parquet (``blend:not_sampled``) for audit:
   they are not dropped data, only not part of this mix.
5. `shuffle_bucket` per bucket: its scatter files read (the bucket is in memory once), the order
   computed from the key column alone, then parts of at most `shard_bytes` of text (a longer
   document alone) and `shard_docs` documents are written in that order, one row group at a time
   taken from the scatter tables. No sorted copy of the bucket or of a part is made: a task holds
   about one bucket (`SHUFFLE_MEMORY_FACTOR`).
6. `publish` (main process): how many parts a bucket makes depends on its documents' lengths in key
   order, known only after step 5, so buckets write their parts under work names
   (``parts/b<bucket>-p<part>.parquet``) and publish renames them ``part-NNNNN.parquet`` in bucket
   order, then part order. The numbering is a function of the data and config alone: the same seed
   gives byte-identical output whatever the number of workers. A run killed while publishing resumes:
   a part whose work file is gone was already renamed (its final file has the recorded size), since
   a new run into the same directory first deletes the work files of any other configuration.

Memory is one input shard (steps 1-4) or one bucket plus one row group (step 5); the main process holds
per-shard and per-bucket counts, never per-document data. Work files live under
``OUT/_work/<fingerprint>/`` with a completion marker per task; the manifest (with the plan and
realised shares also written as ``blend.json``) is written last.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene import __version__, executor
from selene.blend import mix
from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendInputs, BlendManifest
from selene.errors import ConfigError, InputError, InternalError
from selene.executor import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fs
from selene.manifest import DocumentManifest, ShardEntry, Stats
from selene.tokenize.tokenizer import Tokenizer
from selene.tokenize.tokenizer import load as load_tokenizer

WORK = dataset.WORK
BLEND_JSON = "blend.json"
REASON = "blend:not_sampled"
KEY = "shuffle_key"
SCATTER_SCHEMA = dataset.DOC_SCHEMA.append(pa.field(KEY, pa.uint64(), nullable=False))
PARTIAL_BY = "partial-pass:tokens"
"""In the fingerprint: outputs of a selene that chose partial passes by document count are not reused."""
SHUFFLE_MEMORY_FACTOR = 2.25
"""Peak RSS of a shuffle task per byte of string data in its bucket: the Arrow tables (1.1×), what
the Parquet reader and the allocator keep around them, the key order. Measured 1.65 (jemalloc),
1.95 (mimalloc, pyarrow's default) and 2.25 (system malloc) on 100 MiB buckets of ~3 KB documents."""
SHUFFLE_MEMORY_FIXED = 64 << 20
"""Plus what does not grow with the bucket: the row group being taken and written (4 MiB of strings,
a few copies) and the Parquet writer's pages (measured: ~55 MiB over 2 × bucket on 30 MiB buckets)."""
_TOKENIZERS: dict[str, Tokenizer] = {}


BlendResult = dataset.StageResult[BlendManifest]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "blend")


def _tokenizer_digest(cfg: BlendConfig) -> str | None:
    """What fixes the token counts: the tokenizer's identity (a sentencepiece model: sha256 of its
    file, as before any other kind was accepted); loading it here refuses a bad one before any work."""
    if cfg.tokenizer is None:
        return None
    if not cfg.tokenizer.startswith("tiktoken:") and not fs.exists(cfg.tokenizer):
        raise ConfigError(
            f"blend.tokenizer: {cfg.tokenizer!r} does not exist; give a sentencepiece .model, a Hugging Face "
            "tokenizer.json (or its directory), a .tiktoken file or tiktoken:NAME, or unset it to estimate "
            f"tokens as bytes / bytes_per_token ({cfg.bytes_per_token})"
        )
    return _tokenizer(cfg.tokenizer).identity


def _tokenizer(path: str) -> Tokenizer:
    """The tokenizer at `path`, loaded once per process by the tokenize stage's loader (the same kinds
    and errors). Counting appends no end-of-document token, so one without an EOD is accepted."""
    if path not in _TOKENIZERS:
        _TOKENIZERS.clear()
        _TOKENIZERS[path] = load_tokenizer(path, require_eod=False)
    return _TOKENIZERS[path]


def _sources_of(table: pa.Table) -> tuple[list[str], np.ndarray]:
    """The distinct sources of a shard and, per row, the index of its source in that list."""
    enc = table.column("source").combine_chunks().dictionary_encode()
    return enc.dictionary.to_pylist(), enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _byte_lengths(table: pa.Table) -> np.ndarray:
    return pc.binary_length(table.column("text")).to_numpy().astype(np.int64)


def _done(root: str, kind: str, i: int) -> str:
    return fs.join(root, kind, f"{i:05d}.json")


def _finish(marker: str, result: Any) -> Any:
    fs.atomic_write(marker, json.dumps(result))
    return result


# ------------------------------------------------------------------------------- 1-2. sizes


def lengths_path(root: str, k: int) -> str:
    return fs.join(root, "lengths", f"s{k:05d}.npy")


def scan_shard(root: str, k: int, shard: str) -> dict[str, list[int]]:
    """Source → [documents, bytes] of input shard `k`. Also writes the UTF-8 bytes of each document,
    grouped by source (in sorted order, as the result), in row order within a source."""
    marker = _done(root, "scan", k)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    out: dict[str, list[int]] = {}
    sources: list[pa.Array] = []
    lengths: list[np.ndarray] = []
    for batch in dataset.open_parquet(shard).iter_batches(batch_size=8192, columns=["source", "text"]):
        n = pc.fill_null(pc.binary_length(batch.column(1)), 0)
        t = pa.table({"source": batch.column(0), "n": n})
        agg = t.group_by("source").aggregate([("n", "count"), ("n", "sum")]).to_pydict()
        for src, docs, nbytes in zip(agg["source"], agg["n_count"], agg["n_sum"], strict=True):
            acc = out.setdefault(src, [0, 0])
            acc[0] += int(docs)
            acc[1] += int(nbytes or 0)
        sources.append(batch.column(0))
        lengths.append(n.to_numpy(zero_copy_only=False).astype(np.int64))
    by_source = np.empty(0, dtype=np.int64)
    if lengths:
        enc = pa.chunked_array(sources).combine_chunks().dictionary_encode()
        names = enc.dictionary.to_pylist()
        rank = np.argsort(np.argsort(np.array(names, dtype=object)))  # each name's place in sorted order
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        by_source = np.concatenate(lengths)[np.argsort(rank[codes], kind="stable")]
    fs.save_npy(lengths_path(root, k), by_source)
    return _finish(marker, dict(sorted(out.items())))


def token_shard(
    root: str, k: int, shard: str, picks: dict[str, int], cfg: BlendConfig
) -> dict[str, list[int]]:
    """Source → [documents, bytes, tokens] of shard `k`'s part of each source's token sample."""
    marker = _done(root, "tokens", k)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    assert cfg.tokenizer is not None
    tok = _tokenizer(cfg.tokenizer)
    table = dataset.open_parquet(shard).read(columns=["source", "text"])
    names, codes = _sources_of(table)
    out: dict[str, list[int]] = {}
    for src, n in sorted(picks.items()):
        rows = np.flatnonzero(codes == names.index(src))
        gen = mix.rng(mix.source_seed(cfg.seed, src, mix.TOKENS, k))
        chosen = rows[np.sort(gen.choice(rows.size, size=n, replace=False))]
        texts = table.column("text").take(pa.array(chosen))
        tokens = sum(len(ids) for ids in tok.encode_batch(texts.to_pylist(), threads=1))
        out[src] = [int(n), int(pc.sum(pc.binary_length(texts)).as_py() or 0), int(tokens)]
    return _finish(marker, out)


def partial_path(root: str, r: int, k: int) -> str:
    return fs.join(root, "partial", f"r{r:02d}-s{k:05d}.npy")


def partial_shard(
    root: str, k: int, r: int, queries: dict[str, tuple[int, int, int, int, int]], bins: int, seed: int
) -> dict[str, Any]:
    """Shard `k`'s answers to round `r` of the partial-pass search (`mix.partial_passes`).

    `queries[source]` is (offset and count of the source's documents in the lengths file, lo, hi,
    width). Histograms (bins × [bytes, documents]) go to ``partial/r<round>-s<shard>.npy`` (many
    shards' histograms are summed one at a time); listed documents come back as (indices, keys, bytes).
    """
    lengths = fs.load_npy(lengths_path(root, k))
    hist_sources, hists, listed = [], [], {}
    for src, (off, n, lo, hi, width) in sorted(queries.items()):
        answer = mix.partial_query(
            mix.partial_keys(seed, src, k, n), lengths[off : off + n], (lo, hi, width), bins
        )
        if width:
            hist_sources.append(src)
            hists.append(answer)
        else:
            listed[src] = answer
    if hists:
        fs.save_npy(partial_path(root, r, k), np.stack(hists))
    return {"hist": hist_sources, "listed": listed}


def _partial_passes(
    root: str,
    scans: Sequence[Mapping[str, list[int]]],
    sizes: Mapping[str, mix.SourceSize],
    epochs: Mapping[str, float],
    cfg: BlendConfig,
    mapper: Mapper,
) -> dict[str, mix.Partial]:
    """`mix.partial_passes` over the shards through `mapper`; kept in ``partial.json`` for a resumed run."""
    marker = fs.join(root, "partial.json")
    if fs.exists(marker):
        return {s: mix.Partial.from_json(v) for s, v in json.loads(fs.read_text(marker)).items()}
    offsets: list[dict[str, tuple[int, int]]] = []
    for sc in scans:  # each shard's lengths file: its sources in sorted order
        starts = itertools.accumulate((c[0] for c in sc.values()), initial=0)
        offsets.append({s: (o, c[0]) for (s, c), o in zip(sc.items(), starts, strict=False)})
    bins = mix.PARTIAL_BINS

    def rounds(r: int, queries: Mapping[str, mix.Query]) -> Iterator[tuple[int, dict[str, Any]]]:
        jobs = [
            (
                root,
                k,
                r,
                {s: (*offsets[k][s], *q) for s, q in queries.items() if s in offsets[k]},
                bins,
                cfg.seed,
            )
            for k in range(len(scans))
            if any(s in offsets[k] for s in queries)
        ]
        for job, res in zip(jobs, mapper("blend-partial", partial_shard, jobs), strict=True):
            answers = dict(res["listed"])
            if res["hist"]:
                answers.update(zip(res["hist"], fs.load_npy(partial_path(root, r, job[1])), strict=True))
            yield job[1], answers

    partial = mix.partial_passes(sizes, epochs, rounds, bins=bins)
    fs.atomic_write(marker, json.dumps({s: p.to_json() for s, p in partial.items()}))
    return partial


def _for_shard(part: mix.Partial, k: int) -> mix.Partial:
    """What shard `k`'s scatter task needs of a partial pass: the key bound and its own picks."""
    return mix.Partial(part.lo, {k: part.picks[k]} if k in part.picks else {}, part.documents, part.bytes)


def manifest_warnings(manifest: BlendManifest) -> list[str]:
    """The plan's warnings (`mix.warnings`), again, from a finished blend's manifest."""
    cfg = BlendConfig.model_validate(manifest.config)
    b = manifest.blend.sources
    return mix.warnings({s: v.documents for s, v in b.items()}, {s: v.epochs for s, v in b.items()}, cfg)


# ----------------------------------------------------------------------------- 4. scatter


def scatter_path(root: str, k: int) -> str:
    return fs.join(root, "scatter", f"s{k:05d}.parquet")


def scatter_shard(
    root: str, k: int, shard: str, spec: dict[str, tuple[float, mix.Partial]], buckets: int, cfg: BlendConfig
) -> dict[str, Any]:
    """Shard `k`'s sampled rows into `buckets` per-bucket files; its unsampled documents into removed rows.

    `spec[source]` is (epochs, the source's partial pass: `mix.partial_mask` says which of this
    shard's documents it takes). Returns, per bucket, the rows and the bytes of string data written to
    it (what a shuffle task will hold).
    """
    marker = _done(root, "scatter-done", k)
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    # one chunk per column: a take from a chunked column would join all its chunks on every call
    table = dataset.open_parquet(shard).read(columns=dataset.DOC_SCHEMA.names).combine_chunks()
    names, codes = _sources_of(table)
    nbytes = _byte_lengths(table)
    rows, passes, unsampled = [], [], []
    sources: dict[str, dict[str, int]] = {}
    for src in sorted(names):
        src_rows = np.flatnonzero(codes == names.index(src))
        ep, part = spec.get(src, (0.0, mix.NO_PARTIAL))
        chosen = None
        if ep != math.floor(ep):
            chosen = mix.partial_mask(mix.partial_keys(cfg.seed, src, k, src_rows.size), part, k)
        pairs = mix.sample_documents(src_rows.size, ep, chosen=chosen)
        picked = src_rows[pairs[:, 0]]
        rows.append(picked)
        passes.append(pairs[:, 1])
        hit = np.zeros(src_rows.size, dtype=bool)
        hit[pairs[:, 0]] = True
        unsampled.append(src_rows[~hit])
        sources[src] = {
            "in": int(src_rows.size),
            "kept": int(hit.sum()),
            "rows": int(picked.size),
            "bytes": int(nbytes[picked].sum()),
        }
    row = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    pas = np.concatenate(passes) if passes else np.empty(0, dtype=np.int64)
    # one stream per shard: its draws do not depend on how many workers run the other shards
    gen = mix.rng(mix.shard_seed(cfg.seed, mix.SHUFFLE, k))
    bucket = gen.integers(0, buckets, size=row.size)
    key = gen.integers(0, 2**64, size=row.size, dtype=np.uint64)
    counts = np.bincount(bucket, minlength=buckets)
    held = np.bincount(bucket, weights=dataset.row_bytes(table)[row], minlength=buckets)
    order = np.argsort(bucket, kind="stable")
    start = 0
    groups = [0]  # bucket b is row groups groups[b] .. groups[b + 1] of the scatter file
    sink = dataset.ParquetSink(scatter_path(root, k), SCATTER_SCHEMA)
    try:
        for n in counts.tolist():
            idx = order[start : start + n]
            start += n
            if n:
                sink.add_table(_rows_table(table, row[idx], pas[idx], key[idx]))
            groups.append(sink.groups)
    except BaseException:
        sink.abort()
        raise
    sink.close()
    gone = np.sort(np.concatenate(unsampled)) if unsampled else np.empty(0, dtype=np.int64)
    details = pa.array(
        [mix.not_sampled_detail(s, spec[s][0] if s in spec else 0.0, cfg) for s in names], pa.string()
    )
    removed = pa.table(
        {
            "id": table.column("id").take(pa.array(gone)),
            "source": table.column("source").take(pa.array(gone)),
            "reason": pa.repeat(pa.scalar(REASON, pa.string()), gone.size),
            "detail": details.take(pa.array(codes[gone])),
            "meta": table.column("meta").take(pa.array(gone)),
        },
        schema=dataset.REMOVED_SCHEMA,
    )
    dataset.write_table(fs.join(root, "removed", f"{k:05d}.parquet"), removed)
    result = {
        "buckets": counts.tolist(),
        "bucket_bytes": np.rint(held).astype(np.int64).tolist(),
        "groups": groups,
        "sources": sources,
        "removed": int(gone.size),
    }
    return _finish(marker, result)


def _rows_table(table: pa.Table, rows: np.ndarray, passes: np.ndarray, key: np.ndarray) -> pa.Table:
    """The rows (repeats included) with ids ``<id>`` on pass 0 and ``<id>@<pass>`` after, plus the key."""
    t = table.take(pa.array(rows))
    p = pa.array(passes)
    repeat_id = pc.binary_join_element_wise(t.column("id"), pa.scalar("@"), pc.cast(p, pa.string()), "")
    ids = pc.if_else(pc.equal(p, 0), t.column("id"), repeat_id)
    return t.set_column(0, "id", ids).append_column(KEY, pa.array(key, pa.uint64()))


# ----------------------------------------------------------------------------- 5. shuffle


def part_path(root: str, bucket: int, i: int) -> str:
    """Part `i` of `bucket` under its work name, until `publish` gives it its place in the output."""
    return fs.join(root, "parts", f"b{bucket:05d}-p{i:05d}.parquet")


def shuffle_bucket(
    root: str, b: int, shards: list[tuple[int, int, int]], shard_bytes: int, shard_docs: int | None
) -> list[dict[str, Any]]:
    """Bucket `b`'s rows in key order, as work parts of at most `shard_bytes` of text (`shard_docs` rows).
    `shards`: (shard, first row group, end row group) of the bucket in each scatter file that has it.

    Memory: the bucket (one single-chunk table per scatter file) plus the row group being written;
    the order is computed from the key column, and each row group takes its rows from the scatter tables.
    """
    marker = _done(root, "bucket-done", b)
    if fs.exists(marker):
        written: list[dict[str, Any]] = json.loads(fs.read_text(marker))
        return written
    names = [*dataset.DOC_SCHEMA.names, KEY]
    pieces = [
        _one_chunk(dataset.open_parquet(scatter_path(root, k)).read_row_groups(range(g0, g1), columns=names))
        for k, g0, g1 in shards
    ]
    # stable: equal keys (p ≈ n²/2^65) keep shard order, so the order is still fully determined
    order = np.argsort(np.concatenate([p.column(KEY).to_numpy() for p in pieces]), kind="stable")
    starts = np.cumsum([0, *(p.num_rows for p in pieces)])
    pieces = [p.select(dataset.DOC_SCHEMA.names) for p in pieces]
    text = np.concatenate([_byte_lengths(p) for p in pieces])[order]  # what parts are cut by
    strings = np.concatenate([dataset.row_bytes(p) for p in pieces])[order]  # what row groups are cut by
    written = []
    for i, (lo, hi) in enumerate(itertools.pairwise(dataset.byte_cuts(text, shard_bytes, shard_docs))):
        sink = dataset.ParquetSink(part_path(root, b, i), dataset.DOC_SCHEMA)
        try:
            # one row group at a time: a part is never whole in memory, only its Parquet pages
            cuts = dataset.byte_cuts(strings[lo:hi], dataset.ROW_GROUP_BYTES, dataset.ROW_GROUP_ROWS)
            for g0, g1 in itertools.pairwise(cuts):
                sink.add_table(_take(pieces, starts, order[lo + g0 : lo + g1]))
        except BaseException:
            sink.abort()
            raise
        written.append(sink.close().to_json())
    del pieces
    pa.default_memory_pool().release_unused()  # the next task in this worker starts from little
    return _finish(marker, written)


def _one_chunk(table: pa.Table) -> pa.Table:
    return table.combine_chunks() if any(c.num_chunks > 1 for c in table.columns) else table


def _take(pieces: list[pa.Table], starts: np.ndarray, rows: np.ndarray) -> pa.Table:
    """Rows `rows` (indices into the concatenation of `pieces`), in that order.

    Taken piece by piece from single-chunk tables and then put in order: Arrow's take on a chunked
    table would first join every chunk, a copy of the whole bucket for every part.
    """
    piece = np.searchsorted(starts, rows, side="right") - 1
    by_piece = np.argsort(piece, kind="stable")
    bounds = np.searchsorted(piece[by_piece], np.arange(len(pieces) + 1))
    taken = [
        pieces[j].take(pa.array(rows[by_piece[lo:hi]] - starts[j]))
        for j, (lo, hi) in enumerate(itertools.pairwise(bounds.tolist()))
        if hi > lo
    ]
    grouped = pa.concat_tables(taken).combine_chunks() if taken else pieces[0].schema.empty_table()
    inverse = np.empty_like(by_piece)
    inverse[by_piece] = np.arange(by_piece.size)
    return grouped.take(pa.array(inverse))


def _move(src: str, dst: str) -> None:
    f, p = fs.get_fs(src)
    _, q = fs.get_fs(dst)
    if fs.is_local(src):
        os.replace(p, q)  # atomic on POSIX, also over an earlier run's part of the same name
    else:
        f.mv(p, q)


def publish(out: str, root: str, buckets: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rename each bucket's work parts ``part-NNNNN.parquet``, numbered in bucket order, then part order.

    Resumable: a part whose work file is gone was renamed by an earlier, killed attempt of this run
    (`run_blend` deletes other configurations' work files first); its final file must then be there.
    """
    written: list[dict[str, Any]] = []
    for parts in buckets:
        for w in parts:
            entry = {**w, "name": dataset.shard_name(len(written))}
            src, dst = fs.join(root, "parts", w["name"]), fs.join(out, entry["name"])
            if fs.exists(src):
                _move(src, dst)
            elif not fs.exists(dst) or fs.size(dst) != w["bytes"]:
                raise InputError(
                    f"{dst}: missing, and its work file {src} is gone; rerun with --force to blend again"
                )
            written.append(entry)
        if parts:
            failpoint("blend:bucket-published")  # crash tests: killed between two buckets' renames
    return written


# ---------------------------------------------------------------------------------- stage


def run_blend(
    inp: str, out: str, cfg: BlendConfig, *, mapper: Mapper | None = None, force: bool = False
) -> BlendResult:
    mapper = mapper or serial_map
    mix.check_config(cfg)
    m_in = input_dataset(inp)
    settings = executor.settings(cfg, "max_epochs")  # a limit: it changes whether a run goes, not its output
    fp = executor.fingerprint([s.sha256 for s in m_in.shards], settings, _tokenizer_digest(cfg), PARTIAL_BY)
    if (done := dataset.open_output(out, fp, force, BlendManifest)) is not None:
        if done.manifest is not None:  # the limit holds for a finished blend too
            b = done.manifest.blend.sources
            mix.check_max_epochs(
                {
                    s: mix.SourceSize(v.documents, v.bytes, v.tokens, v.tokens_method, v.tokens_per_byte)
                    for s, v in b.items()
                },
                {s: v.epochs for s, v in b.items()},
                cfg,
            )
        return done
    root = fs.join(out, WORK, fp)
    for other in fs.ls(fs.join(out, WORK)):  # a killed run of another config: its parts are not ours
        if other.rstrip("/").rsplit("/", 1)[-1] != fp:
            fs.rm(other, recursive=True)
    # a mix refused once the sources are counted (a source it lacks, too many epochs, buckets too
    # big for the memory) leaves no work folder this run made in an output that existed before
    with fs.undone_on_refusal(fs.join(out, WORK)), fs.undone_on_refusal(root):
        manifest = _blend(inp, out, m_in, root, cfg, fp, mapper)
    fs.rm(fs.join(out, WORK), recursive=True)
    return BlendResult(out, skipped=False, manifest=manifest)


def _blend(
    inp: str, out: str, m_in: DocumentManifest, root: str, cfg: BlendConfig, fp: str, mapper: Mapper
) -> BlendManifest:
    """Count, plan, sample, scatter and shuffle into `out`, with work files under `root`."""
    shards = [fs.join(inp, s.name) for s in m_in.shards]

    scans = mapper("blend-scan", scan_shard, [(root, k, p) for k, p in enumerate(shards)])
    sources = sorted({s for sc in scans for s in sc})
    per_shard = {s: [sc.get(s, [0, 0])[0] for sc in scans] for s in sources}
    totals = {s: (sum(per_shard[s]), sum(sc.get(s, [0, 0])[1] for sc in scans)) for s in sources}
    if sum(d for d, _ in totals.values()) != sum(s.rows for s in m_in.shards):
        raise InputError(f"{inp}: the documents in its shards differ from the counts in its manifest")
    mix.check_sources(cfg, sources)
    samples = _token_samples(root, shards, per_shard, cfg, mapper) if cfg.tokenizer else None
    sizes = mix.source_sizes(totals, samples, cfg)
    epochs = mix.plan_epochs(sizes, cfg)
    for warning in mix.warnings({s: sizes[s].documents for s in sources}, epochs, cfg):
        print(f"warning: blend: {warning}", file=sys.stderr)
    buckets = mix.shuffle_buckets(sizes, epochs, cfg)
    check_bucket_memory(mix.planned_bytes(sizes, epochs) // buckets, buckets, cfg)  # before any work
    partial = _partial_passes(root, scans, sizes, epochs, cfg, mapper)
    mix.check_sampled(sizes, epochs, partial)
    specs = [
        {s: (epochs[s], _for_shard(partial[s], k)) for s in sources if per_shard[s][k]}
        for k in range(len(shards))
    ]
    scattered = mapper(
        "blend-scatter",
        scatter_shard,
        [(root, k, p, specs[k], buckets, cfg) for k, p in enumerate(shards)],
    )

    # shards × buckets counts: small next to the corpus (thousands × hundreds of integers)
    counts = np.array([r["buckets"] for r in scattered], dtype=np.int64).reshape(len(shards), buckets)
    held = np.array([r["bucket_bytes"] for r in scattered], dtype=np.int64).reshape(len(shards), buckets)
    check_bucket_memory(int(held.sum(axis=0).max()), buckets, cfg)
    filled = [b for b in range(buckets) if counts[:, b].any()]
    groups = [r["groups"] for r in scattered]
    jobs = [
        (root, b, [(k, groups[k][b], groups[k][b + 1]) for k in np.flatnonzero(counts[:, b]).tolist()],
         cfg.shard_bytes, cfg.shard_docs)
        for b in filled
    ]  # fmt: skip
    written = publish(out, root, mapper("blend-shuffle", shuffle_bucket, jobs))
    return finalize(out, inp, m_in, root, scattered, written, sizes, epochs, buckets, cfg, fp)


def check_bucket_memory(largest: int, buckets: int, cfg: BlendConfig) -> None:
    """Stop before the shuffle when its largest bucket (`largest` bytes of string data) would not fit
    one task's share of the memory budget. Only a check: the budget never changes the output, so
    nothing is adjusted here; the message names the settings that would make it fit.

    The estimate is SHUFFLE_MEMORY_FACTOR × bucket + SHUFFLE_MEMORY_FIXED: the peak RSS of
    `shuffle_bucket` above its worker's idle process, measured on buckets of 30 and 100 MiB.
    """
    need = SHUFFLE_MEMORY_FACTOR * largest + SHUFFLE_MEMORY_FIXED
    have = executor.task_memory()
    if need <= have:
        return
    gib, mib = 1 << 30, 1 << 20
    how = (
        f"blend.shuffle_buckets is {cfg.shuffle_buckets}: raise it"
        if cfg.shuffle_buckets is not None
        else f"lower blend.shuffle_bucket_bytes (now {cfg.shuffle_bucket_bytes // mib} MiB) for more buckets"
    )
    raise ConfigError(
        f"blend: the largest of {buckets} shuffle buckets holds {largest / mib:,.0f} MiB and a shuffle task "
        f"needs about {need / gib:.2f} GiB, more than its share of the memory budget ({have / gib:.2f} GiB: "
        f"executor.memory_gb {executor.memory_budget() / gib:g} GiB over the workers). Either {how}, "
        "give more memory (--memory-gb) or run fewer workers (--workers)"
    )


def _token_samples(
    root: str, shards: Sequence[str], per_shard: dict[str, list[int]], cfg: BlendConfig, mapper: Mapper
) -> dict[str, mix.TokenSample]:
    assert cfg.tokenizer is not None
    _tokenizer(cfg.tokenizer)  # a bad tokenizer fails here, once, with its path
    split = mix.token_sample_split(per_shard, cfg)
    picks = [{s: int(split[s][k]) for s in split if split[s][k]} for k in range(len(shards))]
    jobs = [(root, k, p, picks[k], cfg) for k, p in enumerate(shards) if picks[k]]
    acc: dict[str, list[int]] = {}
    for res in mapper("blend-tokens", token_shard, jobs):
        for src, v in res.items():
            acc[src] = [a + b for a, b in zip(acc.get(src, [0, 0, 0]), v, strict=True)]
    return {s: mix.TokenSample(*v) for s, v in acc.items()}


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    root: str,
    scattered: Sequence[dict[str, Any]],
    written: list[dict[str, Any]],
    sizes: dict[str, mix.SourceSize],
    epochs: dict[str, float],
    buckets: int,
    cfg: BlendConfig,
    fp: str,
) -> BlendManifest:
    removed = dataset.merge_removed(
        out, [fs.join(root, "removed", f"{k:05d}.parquet") for k in range(len(scattered))]
    )
    sampled: dict[str, dict[str, int]] = {s: {"in": 0, "kept": 0, "rows": 0, "bytes": 0} for s in sizes}
    for r in scattered:
        for src, c in r["sources"].items():
            for key, v in c.items():
                sampled[src][key] += v
    n_in = sum(s.rows for s in m_in.shards)
    n_out = sum(w["rows"] for w in written)
    if (
        any(sampled[s]["in"] != sizes[s].documents for s in sizes)
        or n_out != sum(c["rows"] for c in sampled.values())
        or removed.rows != n_in - sum(c["kept"] for c in sampled.values())
    ):
        raise InternalError("accounting: sampled + not sampled differs from the input")
    blend = mix.summarize(sizes, epochs, sampled, cfg, buckets)
    names = {w["name"] for w in written}
    for path in fs.ls(out):  # parts of an earlier, larger blend into the same directory
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith("part-") and name.endswith(".parquet") and name not in names:
            fs.rm(path)
    manifest = BlendManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=cfg.model_dump(mode="json"),
        inputs=BlendInputs(
            dataset=inp,
            fingerprint=m_in.fingerprint,
            shards=[s.sha256 for s in m_in.shards],
            tokenizer=cfg.tokenizer,
        ),
        shards=[ShardEntry.model_validate(w) for w in written],
        removed=removed.entry(),
        blend=blend,
        stats=Stats(
            documents_in=n_in,
            documents_out=n_out,
            documents_removed=removed.rows,
            per_source=mix.per_source_stats(sampled, REASON),
        ),
    )
    fs.atomic_write(fs.join(out, BLEND_JSON), json.dumps(blend.to_json(), indent=2) + "\n")
    dataset.write_manifest(out, manifest)
    return manifest
