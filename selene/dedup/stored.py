"""The MinHash signatures a dedup output keeps of its documents, and the earlier outputs a new crawl
is deduplicated against (``selene dedup --against``).

Every dedup output holds, next to its shards, ``minhash/``: per output shard ``NNNNN.sig.npy`` (the
signatures of its documents, row for row) and ``NNNNN.len.npy`` (text lengths); per band and key
partition ``keys/bBBBB-pPPPPP.npy``, the LSH keys of that band and key range of the whole output,
sorted (key, shard, row), so a later run finds the old documents sharing a key with its own by binary
search, reading a few pages of the old index rather than all of it; per band and key partition
``links/bBBBB-pPPPPP.npy``, the verified pairs between two documents it kept (numbered in output
order), which a later run adds to its own pairs so that its components join old documents as one
run over everything would; and ``minhash.json``: the format
version, the settings that made them (a signature is only comparable with one of the same
permutations, shingles and banding), the key partitions and the sha256 of each shard they belong to.
An incremental run reads them instead of hashing the old corpus again, and refuses, before any work,
an output that is not a finished dedup output, that stored no signatures, that was made with other
MinHash settings or by an older format, or whose shards changed since.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from selene.dedup.config import DedupConfig
from selene.dedup.manifest import DedupManifest
from selene.errors import ConfigError, PathError
from selene.io import dataset, fs

__all__ = [
    "FORMAT",
    "READABLE",
    "STORED_KINDS",
    "EarlierOutput",
    "MinhashSettings",
    "Prior",
    "SignatureIndex",
    "load_priors",
    "settings_of",
    "write_index",
]

DIR = "minhash"
INDEX = "minhash.json"
FORMAT = 3
# 1: band keys per shard, band-major (no index; refused with what to do); 2: no cross links (read:
# an incremental output of format 2 joins no earlier outputs' documents with each other, and says so)
READABLE = (2, 3)
STORED_KINDS = ("sig", "len")
INDEX_DTYPE = np.dtype([("key", "<u8"), ("shard", "<u4"), ("row", "<u4")])
# a verified pair of two kept documents, as their places in the output (all shards in order, from 0)
LINK_DTYPE = np.dtype([("a", "<i8"), ("b", "<i8"), ("j", "<f4")])
# a verified pair of a kept document (`b`, its place in the output) and a document of the earlier
# output number `prior` of minhash.json's `against` list (`a`, its place in that output)
CROSS_DTYPE = np.dtype([("prior", "<u4"), ("a", "<i8"), ("b", "<i8"), ("j", "<f4")])


class MinhashSettings(BaseModel):
    """What must be equal for two runs' signatures and band keys to be compared (in this order in
    ``minhash.json``)."""

    # keys a newer selene may add are not this one's to compare
    model_config = ConfigDict(extra="ignore", frozen=True)

    num_perm: int
    seed: int
    ngram: int
    shingle: str
    bands: int
    rows: int
    band_sets: int
    dtype: str  # the signatures' numpy dtype (the permutation scheme's)


class EarlierOutput(BaseModel):
    """An output a dedup output was itself deduplicated against: its directory then, its fingerprint."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    dataset: str
    fingerprint: str


class SignatureIndex(BaseModel):
    """``minhash/minhash.json``, in this field order: the format, the settings that made the stored
    signatures and keys, the key partitions of the key index, each output shard's sha256, and the
    earlier outputs its `cross` pairs link to."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    format: int
    settings: MinhashSettings
    key_partitions: int = 0  # format 1 kept no key index
    shards: list[str]
    against: list[EarlierOutput] = []  # formats before 3 kept no cross links


def settings_of(cfg: DedupConfig, bands: int, rows: int, dtype: str) -> MinhashSettings:
    """What must be equal for two runs' signatures and band keys to be compared."""
    return MinhashSettings(
        num_perm=cfg.num_perm,
        seed=cfg.seed,
        ngram=cfg.ngram,
        shingle=cfg.shingle,
        bands=bands,
        rows=rows,
        band_sets=cfg.band_sets,
        dtype=dtype,
    )


def path(out: str, kind: str, shard: int) -> str:
    """The stored file `kind` (sig, len) of output shard `shard`."""
    return fs.join(out, DIR, f"{shard:05d}.{kind}.npy")


def key_index(out: str, band: int, part: int) -> str:
    """The sorted keys (INDEX_DTYPE) of band `band`, key partition `part`, of output `out`."""
    return fs.join(out, DIR, "keys", f"b{band:04d}-p{part:05d}.npy")


def links(out: str, band: int, part: int) -> str:
    """The verified pairs between kept documents (LINK_DTYPE) found in band `band`, key partition `part`."""
    return fs.join(out, DIR, "links", f"b{band:04d}-p{part:05d}.npy")


def cross(out: str, band: int, part: int) -> str:
    """The verified pairs (CROSS_DTYPE) between a kept document and one of an earlier output's."""
    return fs.join(out, DIR, "cross", f"b{band:04d}-p{part:05d}.npy")


def write_index(
    out: str,
    settings: MinhashSettings,
    shard_sha256: list[str],
    key_partitions: int,
    against: Sequence[Prior] = (),
) -> None:
    index = SignatureIndex(
        format=FORMAT,
        settings=settings,
        key_partitions=key_partitions,
        shards=shard_sha256,
        against=[EarlierOutput(dataset=p.out, fingerprint=p.fingerprint) for p in against],
    )
    # json.dumps, not model_dump_json: the bytes stay those of every earlier output (ASCII escapes)
    fs.atomic_write(fs.join(out, DIR, INDEX), json.dumps(index.model_dump(mode="json"), indent=1))


def read_index(index_path: str) -> SignatureIndex:
    """The stored signature index at `index_path`; `PathError` naming the file and the fields at fault
    when it cannot be read."""
    try:
        return SignatureIndex.model_validate_json(fs.read_text(index_path))
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'top level'}: {err['msg']}" for err in e.errors()
        )
        raise PathError(f"{index_path}: corrupt signature index ({problems})") from None


@dataclass(frozen=True)
class Prior:
    """An earlier dedup output: its shards (paths), their rows, where their stored signatures are."""

    out: str
    fingerprint: str
    shards: tuple[str, ...]
    rows: tuple[int, ...]
    key_partitions: int
    # the earlier outputs it was itself deduplicated against, (directory then, fingerprint): its
    # `cross` files link its documents to theirs
    against: tuple[tuple[str, str], ...] = ()

    def cross_to(self, priors: Sequence[Prior]) -> tuple[int, ...]:
        """For each output this one was deduplicated against, its number in `priors` (-1: absent)."""
        at = {p.fingerprint: i for i, p in enumerate(priors)}
        return tuple(at.get(fp, -1) for _, fp in self.against)


def load_priors(against: list[str], inp: str, out: str, settings: MinhashSettings) -> list[Prior]:
    """The earlier outputs `against`, checked: finished dedup outputs with stored signatures of the
    same settings, shards unchanged since, none of them the input or the output of this run."""
    priors = []
    for prev in against:
        where = f"dedup --against {prev}"
        m = dataset.earlier_output(prev, inp, out, "dedup", DedupManifest)
        index_path = fs.join(prev, DIR, INDEX)
        if not fs.exists(index_path):
            raise PathError(
                f"{where}: it holds no stored signatures ({DIR}/{INDEX}); run that dedup again with "
                "store_signatures: true (the default)"
            )
        index = read_index(index_path)
        fmt, parts = index.format, index.key_partitions
        linked_to = tuple((a.dataset, a.fingerprint) for a in index.against)
        if fmt not in READABLE:
            raise PathError(
                f"{where}: stored signatures of format {fmt}; this selene reads formats "
                f"{', '.join(map(str, READABLE))} (band keys in a sorted index): run that dedup again with "
                "this selene (its output stays the same)"
            )
        if fmt == 2 and m.inputs.against:
            warn(
                f"{where}: it was deduplicated against {', '.join(a.dataset for a in m.inputs.against)} "
                "by an older selene that kept no links to their documents: its documents and theirs are "
                "not joined as one run over all of them would join them (run that dedup again to chain exactly)"
            )
        theirs = index.settings.model_dump()
        diff = [
            f"{k}={theirs[k]!r} (this run: {v!r})" for k, v in settings.model_dump().items() if theirs[k] != v
        ]
        if diff:
            raise ConfigError(
                f"{where}: its signatures were made with other MinHash settings: {', '.join(diff)}; "
                "run with the same num_perm, seed, ngram, shingle and bands × rows"
            )
        if index.shards != [s.sha256 for s in m.shards]:
            raise PathError(f"{where}: its shards changed since their signatures were stored")
        # Sizes only: hashing every old shard would read the whole old corpus at each new crawl.
        bad = [
            s.name
            for s in m.shards
            if not fs.exists(fs.join(prev, s.name)) or fs.size(fs.join(prev, s.name)) != s.bytes
        ]
        bad += [
            f"{DIR}/{j:05d}.{kind}.npy"
            for j in range(len(m.shards))
            for kind in STORED_KINDS
            if not fs.exists(path(prev, kind, j))
        ]
        bad += [
            f[len(prev) :].lstrip("/")
            for b in range(settings.bands * settings.band_sets)
            for p in range(parts)
            for f in (key_index(prev, b, p), links(prev, b, p), *([cross(prev, b, p)] if linked_to else []))
            if not fs.exists(f)
        ]
        if bad:
            raise PathError(f"{where}: missing or changed since it was written: {', '.join(bad[:5])}")
        priors.append(
            Prior(
                prev,
                m.fingerprint,
                tuple(fs.join(prev, s.name) for s in m.shards),
                tuple(s.rows for s in m.shards),
                parts,
                linked_to,
            )
        )
    for p in priors:
        for (then, _), i in zip(p.against, p.cross_to(priors), strict=True):
            if i < 0:
                warn(
                    f"dedup --against {p.out}: it was deduplicated against {then}, which this run is not: "
                    "new documents that copy only documents of that output are kept (give every output "
                    "of the chain with --against)"
                )
    return priors


def warn(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr)
