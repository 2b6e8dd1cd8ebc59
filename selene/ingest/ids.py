"""Document ids are unique in a document dataset (DESIGN.md): a source's `id_key` whose values repeat
would give two documents one name, and every later stage that names documents by id (dedup's
``dup_of:<id>``, decontamination, the blend's repeats) would confuse them.

Repeated ids are refused, not renamed: an `id_key` is the user's word that the field names a document,
a renamed id would be neither theirs nor stable when files are added, and the fix is theirs to choose
(repair the data, or unset `id_key`: selene names documents ``<source>/<file>#<record>`` and the field
goes to meta). Each candidate document's id is hashed (xxh3-128) as its file is read; the hashes are
bucketed like exact dedup's (`exact_dedup.dedup_bucket`, memory one bucket), leaving out the exact
duplicates that dedup removes anyway, so a record listed twice with its id is no repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from selene.errors import InputError
from selene.ingest.config import SourceSpec
from selene.io import dataset, fs


def needed(sources: Sequence[SourceSpec]) -> bool:
    """Whether ids are checked: only a source's `id_key` can repeat one (selene's own ids,
    ``<source>/<file>#<record>``, are unique as made); then every document's id is, across sources."""
    return any(s.id_key for s in sources)


def id_hash(doc_id: str) -> tuple[int, int]:
    """128-bit hash of an id as two uint64 halves (collisions: ~2^-64 per pair)."""
    d = xxhash.xxh3_128_intdigest(doc_id.encode("utf-8", "surrogatepass"))
    return d >> 64, d & 0xFFFFFFFFFFFFFFFF


def check_unique(
    bucket_files: Sequence[str],
    files: Sequence[tuple[str, str]],
    docs_pattern: str,
    sources: Sequence[SourceSpec],
) -> None:
    """An `InputError` when documents that would be kept share an id: how many, how many ids, and
    the first such document (in input order) with the files of both. `files`: (path, source) of each
    input file, by index."""
    repeats, distinct = 0, 0
    first: tuple[int, int, int] | None = None  # (file, row, file of the earlier document)
    for path in bucket_files:
        dups = fs.load_npy(path)
        if not dups.size:
            continue
        repeats += dups.size
        # one id hashes to one bucket: its documents are counted once, with memory one bucket
        distinct += np.unique((dups["kept_file"].astype(np.uint64) << np.uint64(32)) | dups["kept_row"]).size
        low = dups[np.lexsort((dups["row"], dups["file"]))[0]]
        cand = (int(low["file"]), int(low["row"]), int(low["kept_file"]))
        first = cand if first is None else min(first, cand)
    if first is None:
        return
    f, row, kf = first
    doc_id = dataset.take_rows(docs_pattern.format(f), np.array([row]), ["id"]).column("id")[0].as_py()
    where = files[f][0] if f == kf else f"{files[kf][0]} and {files[f][0]}"
    keyed = {s.name: s.id_key for s in sources if s.id_key}
    fields = ", ".join(
        f"{keyed[s]!r} of source {s!r}" for s in dict.fromkeys((files[kf][1], files[f][1])) if s in keyed
    )
    unset = sorted({keyed[s] for s in (files[kf][1], files[f][1]) if s in keyed})
    raise InputError(
        f"{repeats:,} documents that would be kept repeat the id of an earlier one ({distinct:,} ids repeated), e.g. {doc_id!r} "
        f"(the id_key {fields or 'of no source: a selene id'}) in {where}. Ids must be unique in a document "
        "dataset: dedup and decontamination name documents by them. Repair the data, or unset id_key so that "
        f"selene names documents <source>/<file>#<record> (the field goes to meta{'.' + unset[0] if unset else ''} like any other)"
    )
