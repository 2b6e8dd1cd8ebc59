"""The sha256 of every file of a checkpoint step: recorded in its meta.json when it is saved, checked
when it is loaded, and remembered per file (`_DigestCache`) so that an unchanged checkpoint is not
hashed again on every load."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import torch.distributed as dist

from selene.errors import InputError, OutputError
from selene.procs import home
from selene.train.checkpoint_files import DAMAGED, META, UNWRITTEN, short_error


def sha256_of(path: str) -> str:
    """sha256 of the file's bytes, read in 8 MiB blocks into one reused buffer (no allocation a block;
    hashlib releases the GIL while it hashes one, so threads hash several files at once)."""
    h = hashlib.sha256()
    buf = bytearray(8 << 20)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


FILES = "files"
"""meta.json's record of every file of the step: relative path -> [bytes, sha256]. DCP keeps no
checksums, so a flipped bit inside tensor bytes would load without a word."""


def _digests(path: str, names: list[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name in names:
        f = os.path.join(path, name)
        if os.path.isfile(f):
            out[name] = [os.path.getsize(f), sha256_of(f)]
    return out


def gather_digests(path: str, rank: int, group: dist.ProcessGroup | None = None) -> dict[str, list[Any]]:
    """The digests of the step's files, for rank 0's meta.json. Each rank hashes the files it has just
    written (still in the page cache: ``__<rank>_*.distcp`` and its RNG state), in parallel across
    ranks; rank 0 then hashes what no rank claimed (the index, and any file of another naming).
    `group`: the process group to gather over (None: the default one)."""
    own = sorted(n for n in os.listdir(path) if n.startswith(f"__{rank}_") and n.endswith(".distcp"))
    own.append(os.path.join("rng", f"rank-{rank:05d}.pt"))
    try:
        mine = _digests(path, own)
    except OSError as e:
        raise OutputError(f"{path}: cannot read back the checkpoint to record its sha256 ({short_error(e)}); {UNWRITTEN}") from None
    gathered: list[Any] = [mine]
    if dist.is_initialized():
        gathered = [None] * dist.get_world_size(group)
        dist.all_gather_object(gathered, mine, group=group)
    if rank != 0:
        return {}
    files = {k: v for d in gathered for k, v in (d or {}).items()}
    rest = [
        os.path.relpath(os.path.join(d, n), path)
        for d, _, names in os.walk(path)
        for n in names
        if not n.startswith(META)
    ]
    files.update(_digests(path, sorted(r for r in rest if r not in files)))
    return dict(sorted(files.items()))


def check_digests(path: str, meta: dict[str, Any]) -> None:
    """Every file meta.json records has its size and sha256 (checkpoints saved before the record
    existed are not checked). Files are hashed in parallel threads (hashlib releases the GIL).

    A file this user has verified before and that has not changed since is not read again: the
    sha256 it hashed to is remembered (`_DigestCache`) under its identity and change stamps, and a
    stamp that differs means a new hash. A 1.3B model's checkpoint (weights and optimizer state,
    ~16 GB) is then hashed once, not on every eval, export, generate and resume of every rank. A
    changed, truncated, replaced or corrupted-through-the-filesystem file is still caught on the
    next load; what a stamp cannot see is the disk rotting under unchanged metadata, so a
    remembered digest expires after `_DigestCache.MAX_AGE_S` and ``SELENE_DIGEST_CACHE=off`` hashes
    every file every time."""
    import concurrent.futures as cf

    files = meta.get(FILES)
    if not isinstance(files, dict) or not files:
        return
    where = os.path.join(path, META)
    cache = _DigestCache.load()

    def check(item: tuple[str, Any]) -> None:
        name, rec = item
        f = os.path.join(path, name)
        try:
            st = os.stat(f)
        except OSError:
            raise InputError(f"{f}: not found, but {where} records it; {DAMAGED}") from None
        if not (isinstance(rec, list) and len(rec) == 2):
            raise InputError(f"{where}: the record of {name} is not [bytes, sha256]; {DAMAGED}")
        if st.st_size != rec[0]:
            raise InputError(f"{f}: {st.st_size} bytes, but {where} records {rec[0]}; {DAMAGED}")
        if isinstance(rec[1], str) and cache.known(st) == rec[1]:
            return  # this very file, unchanged since it hashed to rec[1]
        started = _now_ns()
        if (digest := sha256_of(f)) != rec[1]:
            raise InputError(f"{f}: sha256 {digest[:16]}..., but {where} records {str(rec[1])[:16]}...; {DAMAGED}")
        cache.remember(f, st, digest, started)

    with cf.ThreadPoolExecutor(max_workers=min(8, len(files))) as pool:
        list(pool.map(check, sorted(files.items())))
    cache.save()


class _DigestCache:
    """sha256 digests of checkpoint files verified before, in ``<selene home>/cache/checkpoint-sha256.json``.

    An entry is keyed by the file's identity (device, inode) and holds its size, mtime_ns and
    ctime_ns at the time of the hash: a write to the file, a truncation, a replacement (a new inode)
    or a copy elsewhere changes one of them, and a changed stamp is a miss, never a digest taken on
    trust. ctime in particular cannot be set back by a user (``touch -d``, ``cp -p``, ``rsync -t`` set
    mtime only). Two guards keep a stamp meaningful:

    - a file changed within `SETTLE_NS` before its hash began is hashed but not remembered (git's
      "racily clean" rule): a filesystem stamps with a coarse clock, so a second write in the same
      tick as the hashed one would leave every stamp as it was;
    - the stamps are read before the hash and again after it; a file that changed meanwhile is not
      remembered.

    A hit also needs the digest meta.json records: the cache only ever saves re-reading a file,
    it never vouches for a file meta.json does not. Entries expire after `MAX_AGE_S` (bit rot under
    unchanged metadata is then caught within that time), the file keeps the `LIMIT` most recent ones,
    and every failure to read or write it (a read-only home, two processes saving at once) just
    means hashing again. On NFS, a change made on another client shows in the stamps here once the
    attribute cache lets it (``actimeo``, seconds).
    """

    SETTLE_NS = 2_000_000_000
    MAX_AGE_S = 7 * 24 * 3600
    LIMIT = 4096

    def __init__(self, entries: dict[str, list[Any]] | None, file: str | None) -> None:
        import threading

        self.entries = entries if entries is not None else {}
        self.file = file  # None: off (SELENE_DIGEST_CACHE=off)
        self.new: dict[str, list[Any]] = {}
        self.lock = threading.Lock()

    @classmethod
    def load(cls) -> _DigestCache:
        if os.environ.get("SELENE_DIGEST_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
            return cls(None, None)
        file = str(home() / "cache" / "checkpoint-sha256.json")
        return cls(cls._read(file), file)

    @staticmethod
    def _read(file: str) -> dict[str, list[Any]]:
        try:
            with open(file, "rb") as f:
                data = json.loads(f.read())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _key(st: os.stat_result) -> str:
        return f"{st.st_dev}:{st.st_ino}"

    @staticmethod
    def _stamps(st: os.stat_result) -> list[int]:
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]

    def known(self, st: os.stat_result) -> str | None:
        """The sha256 this file (as `st` finds it) hashed to when verified, if nothing changed since."""
        if self.file is None:
            return None
        entry = self.entries.get(self._key(st))
        if not (isinstance(entry, list) and len(entry) >= 5 and isinstance(entry[3], str)):
            return None
        if entry[:3] != self._stamps(st) or not isinstance(entry[4], int):
            return None
        if _now_ns() - entry[4] > self.MAX_AGE_S * 1_000_000_000:
            return None
        return entry[3]

    def remember(self, path: str, st: os.stat_result, digest: str, started_ns: int) -> None:
        """Keep `digest` of the file `path`, hashed from `started_ns` on, whose stamps before the hash
        were `st` — unless it changed within `SETTLE_NS` before the hash or while it ran."""
        if self.file is None or max(st.st_mtime_ns, st.st_ctime_ns) > started_ns - self.SETTLE_NS:
            return
        try:
            after = os.stat(path)
        except OSError:
            return
        if self._key(after) != self._key(st) or self._stamps(after) != self._stamps(st):
            return
        with self.lock:
            self.new[self._key(st)] = [*self._stamps(st), digest, started_ns, os.path.abspath(path)]

    def save(self) -> None:
        """Merge the new entries into the file as it is now (another process may have saved since),
        keep the `LIMIT` most recent, write it atomically. Nothing new: nothing written."""
        if self.file is None or not self.new:
            return
        merged = {**self._read(self.file), **self.new}

        def when(item: tuple[str, Any]) -> int:
            v = item[1]
            return v[4] if isinstance(v, list) and len(v) >= 5 and isinstance(v[4], int) else 0

        kept = dict(sorted(merged.items(), key=when)[-self.LIMIT :])
        tmp = f"{self.file}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.file), exist_ok=True)
            with open(tmp, "w") as f:
                json.dump(kept, f)
            os.replace(tmp, self.file)
        except OSError:
            import contextlib

            with contextlib.suppress(OSError):
                os.remove(tmp)


def _now_ns() -> int:
    import time

    return time.time_ns()
