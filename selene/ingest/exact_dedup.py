"""Exact deduplication across the whole dataset, through files.

Each document's normalised text is hashed (xxh3-128) while its input file is processed. Hashes are
split into buckets by hash value; each bucket is sorted on its own (memory: one bucket), and in every
group of equal hashes the first document in the global order (input file, then row) is kept. The
global order is fixed by the inputs, so the result is the same on any number of workers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import xxhash

from selene.executor.mappers import Budget
from selene.io import dataset, fs

# ASCII punctuation and control bytes → space; letters, digits, '_', whitespace and UTF-8 bytes kept.
# On bytes, translate + split run at memory speed; a Unicode regex over the text costs 3x the rest.
_FOLD = bytes(
    b if b >= 0x80 or chr(b).isalnum() or chr(b) == "_" or chr(b) in " \t\n\r\x0b\x0c" else 0x20
    for b in range(256)
)
DUP_DTYPE = np.dtype([("file", "<u4"), ("row", "<u4"), ("kept_file", "<u4"), ("kept_row", "<u4")])
DUP_SCHEMA = pa.schema([("row", pa.uint32()), ("kept_id", pa.string())])


def normalise(text: str) -> bytes:
    """UTF-8 of the text with case, ASCII punctuation and whitespace folded, so that copies which
    differ only there are one document. Non-ASCII punctuation is kept: cleaning has already turned
    curly quotes and exotic spaces into ASCII ones, and folding the rest needs a Unicode-aware pass
    that would triple the cost of this step."""
    return b" ".join(text.lower().encode("utf-8").translate(_FOLD).split())


def text_hash(text: str) -> tuple[int, int]:
    """128-bit hash of the normalised text as two uint64 halves (collisions: ~2^-64 per pair)."""
    d = xxhash.xxh3_128_intdigest(normalise(text))
    return d >> 64, d & 0xFFFFFFFFFFFFFFFF


BYTES_PER_DOC = 96  # a bucket task per document of its bucket: hashes, ids, sort scratch


def buckets_for(n_docs: int, budget: Budget) -> int:
    """Buckets so that one fits a task's memory budget (`Budget.task_memory`); at least 16."""
    return max(16, -(-n_docs * BYTES_PER_DOC // max(1, budget.task_memory // 2)))


def dedup_bucket(
    bucket: int,
    buckets: int,
    docs_pattern: str,
    n_files: int,
    out_path: str,
    columns: tuple[str, str] = ("h1", "h2"),
    skip_pattern: str | None = None,
) -> str:
    """Find the duplicates whose hash falls in `bucket` among the candidate files
    ``docs_pattern.format(i)`` for i < n_files (a pattern, not a list: a task's parameters stay small
    however many files there are); write them as a DUP_DTYPE .npy file. The hash is the two uint64
    `columns` (the text's; `ids` passes the id's); rows listed in ``skip_pattern.format(i)``, where
    that file exists, are left out (the exact duplicates, when ids are checked)."""
    if fs.exists(out_path):
        return out_path
    parts = []
    for file_idx in range(n_files):
        t = dataset.open_parquet(docs_pattern.format(file_idx)).read(columns=list(columns))
        h1 = t.column(0).to_numpy()
        h2 = t.column(1).to_numpy()
        hit = h2 % np.uint64(buckets) == np.uint64(bucket)
        if skip_pattern is not None and fs.exists(skip := skip_pattern.format(file_idx)):
            hit[dataset.open_parquet(skip).read(columns=["row"]).column("row").to_numpy()] = False
        rows = np.nonzero(hit)[0]
        if rows.size:
            rec = np.empty(rows.size, dtype=[("h1", "<u8"), ("h2", "<u8"), ("file", "<u4"), ("row", "<u4")])
            rec["h1"], rec["h2"], rec["file"], rec["row"] = h1[rows], h2[rows], file_idx, rows
            parts.append(rec)
    dups = np.empty(0, dtype=DUP_DTYPE)
    if parts:
        a = np.concatenate(parts)
        a = a[np.lexsort((a["row"], a["file"], a["h2"], a["h1"]))]
        same = (a["h1"][1:] == a["h1"][:-1]) & (a["h2"][1:] == a["h2"][:-1])
        # index of the first member of each run of equal hashes
        first = np.maximum.accumulate(np.where(np.concatenate([[True], ~same]), np.arange(a.size), 0))
        is_dup = np.concatenate([[False], same])
        dups = np.empty(int(is_dup.sum()), dtype=DUP_DTYPE)
        dups["file"], dups["row"] = a["file"][is_dup], a["row"][is_dup]
        dups["kept_file"], dups["kept_row"] = a["file"][first[is_dup]], a["row"][first[is_dup]]
    fs.save_npy(out_path, dups)
    return out_path


def resolve(bucket_files: list[str], docs_paths: dict[int, str], out_dir: str) -> dict[int, str]:
    """Group the duplicates by the file they are in, with the id of the document each duplicates.

    Writes ``<out_dir>/NNNNN.parquet`` (row, kept_id) for every file with duplicates.
    """
    arrays = []
    for p in bucket_files:
        arrays.append(fs.load_npy(p))
    dups = np.concatenate(arrays) if arrays else np.empty(0, dtype=DUP_DTYPE)
    # the kept documents' ids, read one file's id column at a time, held as Arrow strings (compact
    # buffers), never as a Python object per duplicate
    pieces, where = [], []
    for kf in np.unique(dups["kept_file"]).tolist():
        sel = np.flatnonzero(dups["kept_file"] == kf)
        ids = dataset.open_parquet(docs_paths[kf]).read(columns=["id"]).column("id")
        pieces.append(ids.take(pa.array(dups["kept_row"][sel])))
        where.append(sel)
    kept_ids = pa.chunked_array([c for p in pieces for c in p.chunks], pa.string())
    kept_ids = kept_ids.take(pa.array(np.argsort(np.concatenate(where)) if where else np.empty(0, np.int64)))
    out: dict[int, str] = {}
    for f_idx in np.unique(dups["file"]).tolist():
        sel = np.flatnonzero(dups["file"] == f_idx)
        sel = sel[np.argsort(dups["row"][sel], kind="stable")]
        path = fs.join(out_dir, f"{f_idx:05d}.parquet")
        table = pa.table(
            {"row": dups["row"][sel], "kept_id": kept_ids.take(pa.array(sel))}, schema=DUP_SCHEMA
        )
        dataset.write_table(path, table)
        out[f_idx] = path
    return out
