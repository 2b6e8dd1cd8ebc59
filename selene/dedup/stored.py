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
from dataclasses import dataclass
from typing import Any

import numpy as np

from selene.dedup.config import DedupConfig
from selene.dedup.manifest import DedupManifest
from selene.errors import ConfigError, InputError
from selene.io import dataset, fs

__all__ = ["FORMAT", "STORED_KINDS", "Prior", "load_priors", "settings_of", "write_index"]

DIR = "minhash"
INDEX = "minhash.json"
FORMAT = 2  # 1: band keys per shard, band-major (no index; refused with what to do)
STORED_KINDS = ("sig", "len")
INDEX_DTYPE = np.dtype([("key", "<u8"), ("shard", "<u4"), ("row", "<u4")])
# a verified pair of two kept documents, as their places in the output (all shards in order, from 0)
LINK_DTYPE = np.dtype([("a", "<i8"), ("b", "<i8"), ("j", "<f4")])


def settings_of(cfg: DedupConfig, bands: int, rows: int, dtype: str) -> dict[str, Any]:
    """What must be equal for two runs' signatures and band keys to be compared."""
    return {
        "num_perm": cfg.num_perm,
        "seed": cfg.seed,
        "ngram": cfg.ngram,
        "shingle": cfg.shingle,
        "bands": bands,
        "rows": rows,
        "band_sets": cfg.band_sets,
        "dtype": dtype,
    }


def path(out: str, kind: str, shard: int) -> str:
    """The stored file `kind` (sig, len) of output shard `shard`."""
    return fs.join(out, DIR, f"{shard:05d}.{kind}.npy")


def key_index(out: str, band: int, part: int) -> str:
    """The sorted keys (INDEX_DTYPE) of band `band`, key partition `part`, of output `out`."""
    return fs.join(out, DIR, "keys", f"b{band:04d}-p{part:05d}.npy")


def links(out: str, band: int, part: int) -> str:
    """The verified pairs between kept documents (LINK_DTYPE) found in band `band`, key partition `part`."""
    return fs.join(out, DIR, "links", f"b{band:04d}-p{part:05d}.npy")


def write_index(out: str, settings: dict[str, Any], shard_sha256: list[str], key_partitions: int) -> None:
    fs.atomic_write(
        fs.join(out, DIR, INDEX),
        json.dumps(
            {
                "format": FORMAT,
                "settings": settings,
                "key_partitions": key_partitions,
                "shards": shard_sha256,
            },
            indent=1,
        ),
    )


@dataclass(frozen=True)
class Prior:
    """An earlier dedup output: its shards (paths), their rows, where their stored signatures are."""

    out: str
    fingerprint: str
    shards: tuple[str, ...]
    rows: tuple[int, ...]
    key_partitions: int


def load_priors(against: list[str], inp: str, out: str, settings: dict[str, Any]) -> list[Prior]:
    """The earlier outputs `against`, checked: finished dedup outputs with stored signatures of the
    same settings, shards unchanged since, none of them the input or the output of this run."""
    priors = []
    for prev in against:
        where = f"dedup --against {prev}"
        if fs.join(prev, "") in (fs.join(inp, ""), fs.join(out, "")):
            raise ConfigError(f"{where}: an earlier output must not be this run's input or output")
        if not fs.exists(prev):
            raise InputError(f"{where}: no such directory")
        m = dataset.read_manifest(prev)
        if m is None:
            raise InputError(f"{where}: no manifest.json: not a finished output (an unfinished run?)")
        if not isinstance(m, DedupManifest):
            raise InputError(
                f"{where}: the output of `{m.stage}`, not of `dedup`; give an earlier dedup output"
            )
        index_path = fs.join(prev, DIR, INDEX)
        if not fs.exists(index_path):
            raise InputError(
                f"{where}: it holds no stored signatures ({DIR}/{INDEX}); run that dedup again with "
                "store_signatures: true (the default)"
            )
        try:
            index = json.loads(fs.read_text(index_path))
            fmt, theirs, shas = index["format"], index["settings"], index["shards"]
            parts = int(index.get("key_partitions", 0))
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"{index_path}: corrupt signature index ({type(e).__name__}: {e})") from None
        if fmt != FORMAT:
            raise InputError(
                f"{where}: stored signatures of format {fmt}; this selene reads format {FORMAT} (band keys "
                "in a sorted index): run that dedup again with this selene (its output stays the same)"
            )
        diff = [f"{k}={theirs.get(k)!r} (this run: {v!r})" for k, v in settings.items() if theirs.get(k) != v]
        if diff:
            raise ConfigError(
                f"{where}: its signatures were made with other MinHash settings: {', '.join(diff)}; "
                "run with the same num_perm, seed, ngram, shingle and bands × rows"
            )
        if shas != [s.sha256 for s in m.shards]:
            raise InputError(f"{where}: its shards changed since their signatures were stored")
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
            for b in range(settings["bands"] * settings["band_sets"])
            for p in range(parts)
            for f in (key_index(prev, b, p), links(prev, b, p))
            if not fs.exists(f)
        ]
        if bad:
            raise InputError(f"{where}: missing or changed since it was written: {', '.join(bad[:5])}")
        priors.append(
            Prior(
                prev,
                m.fingerprint,
                tuple(fs.join(prev, s.name) for s in m.shards),
                tuple(s.rows for s in m.shards),
                parts,
            )
        )
    return priors
