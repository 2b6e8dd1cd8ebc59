"""Megatron-LM's mmap indexed dataset (``<prefix>.bin`` + ``<prefix>.idx``), byte-compatible.

Layout of ``.idx`` (all little-endian), as ``megatron/core/datasets/indexed_dataset.py`` writes it:
magic ``b"MMIDIDX\\x00\\x00"`` (9 bytes), version u64 = 1, dtype code u8, sequence count u64 ``N``,
document count u64 ``D``, then ``int32[N]`` sequence lengths (tokens), ``int64[N]`` byte pointers into
``.bin``, ``int64[D]`` document indices (sequence index where each document starts, plus a final
``N``). Megatron's multimodal variant appends ``int8[N]`` modes after that; readers ignore extra bytes.
``.bin`` holds the tokens of every sequence back to back in the dtype. selene writes one document per
sequence, so ``D = N + 1`` and the document indices are ``0..N``.

Writers stream tokens to a temporary ``.bin`` and write ``.idx`` last, the completion marker: a killed
writer never leaves a pair that looks complete. The reader memory-maps both files (local paths only),
so a sample is a view into the page cache, not a copy.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import os
import struct
from collections.abc import Iterator, Sequence
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from selene.errors import InputError
from selene.io import fs

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
HEADER_SIZE = len(MAGIC) + 8 + 1 + 8 + 8  # magic, version, dtype code, sequence count, document count

# Megatron's `DType` enum (megatron/core/datasets/indexed_dataset.py): the codes are on disk, so they
# must be exactly these. Code 6 is float64 and 7 float32 (fairseq's old table had 6 = np.float,
# 7 = np.double, both 8 bytes; Megatron renamed them and made 7 a 4-byte float).
_NAMES = {1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float64", 7: "float32", 8: "uint16"}
DTYPES: dict[int, np.dtype[Any]] = {code: np.dtype(name) for code, name in _NAMES.items()}
_CODES = {dt: code for code, dt in DTYPES.items()}


def choose_dtype(vocab_size: int) -> np.dtype[Any]:
    """The token dtype for a vocabulary, as Megatron's ``DType.optimal_dtype`` picks it.

    uint16 because vocab < 65500 fits in two bytes and halves the ``.bin`` (and the page cache it
    needs); the margin below 65536 is Megatron's. Larger vocabularies need int32 (Megatron has no
    uint32 code).
    """
    return np.dtype(np.uint16) if vocab_size < 65500 else np.dtype(np.int32)


def dtype_code(dtype: npt.DTypeLike) -> int:
    """Megatron's on-disk code of `dtype`; ValueError for a dtype Megatron cannot store."""
    dt = np.dtype(dtype).newbyteorder("=")
    if dt not in _CODES:
        names = ", ".join(f"{c}={d.name}" for c, d in DTYPES.items())
        raise ValueError(f"dtype {dt.name} has no Megatron code; supported: {names}")
    return _CODES[dt]


def idx_path(prefix: str) -> str:
    return f"{prefix}.idx"


def bin_path(prefix: str) -> str:
    return f"{prefix}.bin"


def _parse_header(path: str, head: bytes, size: int) -> tuple[np.dtype[Any], int, int]:
    """Validate the fixed header of the ``.idx`` at `path` (`size` bytes long): (dtype, N, D)."""
    found = head[: len(MAGIC)]
    if found != MAGIC[: len(found)]:
        raise InputError(f"{path}: not a Megatron index: starts with {found!r}, expected {MAGIC!r}")
    if len(head) < HEADER_SIZE:
        raise InputError(f"{path}: truncated index: {size} bytes, the header alone needs {HEADER_SIZE}")
    version, code, n, d = struct.unpack("<QBQQ", head[len(MAGIC) : HEADER_SIZE])
    if version != VERSION:
        raise InputError(f"{path}: unsupported index version {version}; only version {VERSION} is known")
    if code not in DTYPES:
        known = ", ".join(f"{c} ({dt.name})" for c, dt in DTYPES.items())
        raise InputError(f"{path}: unknown dtype code {code}; Megatron's codes are {known}")
    if d == 0:
        raise InputError(f"{path}: no document indices (even an empty dataset has the single index 0)")
    need = HEADER_SIZE + n * 4 + n * 8 + d * 8
    if size < need:
        raise InputError(
            f"{path}: truncated index: {size} bytes, but its counts ({n} sequences, {d} document "
            f"indices) need {need}"
        )
    return DTYPES[code], n, d


def _header_bytes(dtype: np.dtype[Any], n: int, d: int) -> bytes:
    return MAGIC + struct.pack("<QBQQ", VERSION, dtype_code(dtype), n, d)


def _check_files(prefix: str) -> None:
    for p in (idx_path(prefix), bin_path(prefix)):
        if not fs.exists(p):
            raise InputError(f"{p}: not found (an indexed dataset needs both {prefix}.idx and .bin)")


class IndexedWriter:
    """Stream documents into ``<prefix>.bin`` / ``<prefix>.idx``, one document per sequence.

    Tokens go through a fixed-size buffer to a temporary ``.bin``; only lengths stay in memory (4 bytes
    per document). `finalize` renames the ``.bin`` into place and writes the ``.idx`` last; `abort` (or
    an exception inside ``with``) removes the temporary, so no final name is left behind.
    """

    def __init__(self, prefix: str, dtype: npt.DTypeLike, buffer_tokens: int = 1 << 20) -> None:
        self.prefix = prefix
        self.dtype = np.dtype(dtype)
        dtype_code(self.dtype)  # fail before creating anything
        self._lengths = array.array("i")
        self._buffer = np.empty(max(1, buffer_tokens), dtype=self.dtype)
        self._filled = self._tokens = 0
        self._stack = contextlib.ExitStack()
        self._bin: IO[Any] = self._stack.enter_context(fs.atomic_open(bin_path(prefix), "wb"))
        self._open = True

    def __enter__(self) -> IndexedWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        elif self._open:
            self.finalize()

    def add_document(self, tokens: npt.ArrayLike) -> None:
        """Append one document (a 1-D sequence of token ids) as one sequence."""
        arr = np.asarray(tokens)
        if arr.ndim != 1:
            raise ValueError(f"{self.prefix}: a document must be 1-D, got shape {arr.shape}")
        self.add_documents(arr, [len(arr)])

    def add_documents(self, tokens: np.ndarray, lengths: npt.ArrayLike) -> None:
        """Append several documents at once: their tokens back to back and each one's length.

        One buffer copy for a whole batch instead of one call per document: the encoder hands
        over hundreds of short documents at a time.
        """
        lens = np.asarray(lengths, dtype=np.int64)
        if not self._open:
            raise ValueError(f"{self.prefix}: writer is already finalized or aborted")
        arr = np.asarray(tokens)
        if arr.ndim != 1 or int(lens.sum()) != len(arr) or (lens < 0).any():
            raise ValueError(
                f"{self.prefix}: lengths (sum {int(lens.sum())}) do not split {arr.shape} tokens"
            )
        if len(lens) and int(lens.max()) > np.iinfo(np.int32).max:
            raise ValueError(f"{self.prefix}: a document of {int(lens.max())} tokens exceeds int32 lengths")
        if arr.dtype != self.dtype:
            arr = self._convert(arr)
        self._lengths.frombytes(lens.astype(np.int32).tobytes())
        self._tokens += len(arr)
        if self._filled + len(arr) > len(self._buffer):
            self._flush()
        if len(arr) >= len(self._buffer):
            self._bin.write(np.ascontiguousarray(arr).data)
        else:
            self._buffer[self._filled : self._filled + len(arr)] = arr
            self._filled += len(arr)

    def _convert(self, arr: np.ndarray) -> np.ndarray:
        if arr.size == 0:
            return arr.astype(self.dtype)
        if self.dtype.kind in "iu":
            if arr.dtype.kind not in "iub":
                raise ValueError(f"{self.prefix}: token ids must be integers, got {arr.dtype}")
            info = np.iinfo(self.dtype)
            lo, hi = int(arr.min()), int(arr.max())
            if lo < info.min or hi > info.max:
                bad = lo if lo < info.min else hi
                raise ValueError(
                    f"{self.prefix}: token id {bad} does not fit {self.dtype.name} "
                    f"[{info.min}, {info.max}]; choose the dtype with choose_dtype(vocab_size)"
                )
        return arr.astype(self.dtype)

    def _flush(self) -> None:
        if self._filled:
            self._bin.write(self._buffer[: self._filled].data)
            self._filled = 0

    def finalize(self) -> IndexedStats:
        """Close the ``.bin``, write the ``.idx`` last; returns counts and paths for a manifest."""
        if not self._open:
            raise ValueError(f"{self.prefix}: writer is already finalized or aborted")
        self._flush()
        self._open = False
        lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
        try:
            # an older .idx would pair with the new .bin for a moment: drop it before the rename
            fs.rm(idx_path(self.prefix))
            self._stack.close()  # renames the .bin into place
            _write_index(idx_path(self.prefix), self.dtype, lengths)
        except BaseException:
            with contextlib.suppress(Exception):
                fs.rm(bin_path(self.prefix))
            raise
        return _stats(self.prefix, self.dtype, len(lengths), len(lengths) + 1, self._tokens)

    def abort(self) -> None:
        """Drop everything written so far; neither final name is created."""
        if self._open:
            self._open = False
            with contextlib.suppress(Exception):
                self._stack.__exit__(RuntimeError, RuntimeError("aborted"), None)


def _pointers(lengths: np.ndarray, dtype: np.dtype[Any], start: int = 0) -> np.ndarray:
    """Byte offset of each sequence when they are stored back to back from byte `start`."""
    ptr = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], dtype=np.int64, out=ptr[1:])
    return ptr * dtype.itemsize + start


def _write_index(path: str, dtype: np.dtype[Any], lengths: np.ndarray) -> None:
    n = len(lengths)
    with fs.atomic_open(path, "wb") as f:
        f.write(_header_bytes(dtype, n, n + 1))
        f.write(np.ascontiguousarray(lengths, dtype="<i4").data)
        f.write(_pointers(lengths, dtype).astype("<i8").data)
        f.write(np.arange(n + 1, dtype="<i8").data)


@dataclasses.dataclass(frozen=True)
class IndexedStats:
    """What a manifest records about a written dataset: its files, dtype, sequences, documents and
    tokens, and the sha256 of both files when they were hashed as written (`merge`)."""

    prefix: str
    bin: str
    idx: str
    dtype: str
    dtype_code: int
    sequences: int
    documents: int
    tokens: int
    sha256: dict[str, str] | None = None  # "bin" / "idx" -> hex digest


def _stats(prefix: str, dtype: np.dtype[Any], n: int, d: int, tokens: int) -> IndexedStats:
    return IndexedStats(
        prefix, bin_path(prefix), idx_path(prefix), dtype.name, dtype_code(dtype), n, d - 1, tokens
    )


def _sections(path: str, offset: int, count: int, dtype: str, chunk: int) -> Iterator[np.ndarray]:
    """Read `count` items of `dtype` from byte `offset` of `path` in chunks (bounded memory)."""
    filesystem, p = fs.get_fs(path)
    itemsize = np.dtype(dtype).itemsize
    with filesystem.open(p, "rb") as f:
        f.seek(offset)
        for start in range(0, count, chunk):
            k = min(chunk, count - start)
            yield np.frombuffer(f.read(k * itemsize), dtype=dtype, count=k)


def _read_header(prefix: str) -> tuple[np.dtype[Any], int, int]:
    path = idx_path(prefix)
    _check_files(prefix)
    filesystem, p = fs.get_fs(path)
    with filesystem.open(p, "rb") as f:
        head = f.read(HEADER_SIZE)
    return _parse_header(path, head, fs.size(path))


def merge(prefixes: Sequence[str], out_prefix: str, chunk_bytes: int = 1 << 24) -> IndexedStats:
    """Concatenate indexed datasets of one dtype into `out_prefix`, as Megatron's ``add_index`` does.

    Sequences keep their order; pointers are recomputed for the concatenated ``.bin``; each input's
    document indices lose their leading 0 and are shifted by the sequences before it. Everything is
    streamed in `chunk_bytes` pieces (any fsspec path), so memory does not grow with the inputs.
    """
    if not prefixes:
        raise ValueError("merge needs at least one input prefix")
    if out_prefix in prefixes:
        raise ValueError(f"merge output {out_prefix!r} is also one of its inputs")
    heads = [_read_header(p) for p in prefixes]
    dtype = heads[0][0]
    for p, (dt, _, _) in zip(prefixes, heads, strict=True):
        if dt != dtype:
            raise InputError(f"{idx_path(p)}: dtype {dt.name} differs from {dtype.name} of {prefixes[0]}.idx")
    n_total = sum(h[1] for h in heads)
    d_total = 1 + sum(h[2] - 1 for h in heads)
    chunk = max(1, chunk_bytes // 8)
    tokens = [0] * len(prefixes)

    def lengths(i: int) -> Iterator[np.ndarray]:
        return _sections(idx_path(prefixes[i]), HEADER_SIZE, heads[i][1], "<i4", chunk)

    with contextlib.ExitStack() as stack:
        # hashed as written (sequentially): the manifest's sha256 without reading the files back
        out_idx: Any = stack.enter_context(fs.atomic_open(idx_path(out_prefix), "wb", digest=True))
        out_bin: Any = stack.enter_context(fs.atomic_open(bin_path(out_prefix), "wb", digest=True))  # renamed first
        out_idx.write(_header_bytes(dtype, n_total, d_total))
        for i in range(len(prefixes)):
            for part in lengths(i):
                out_idx.write(part.data)
                tokens[i] += int(part.sum(dtype=np.int64))
        start = 0  # pointers are recomputed from the lengths, as Megatron's writer does
        for i in range(len(prefixes)):
            for part in lengths(i):
                out_idx.write(_pointers(part, dtype, start).data)
                start += int(part.sum(dtype=np.int64)) * dtype.itemsize
        seq_offset = 0
        out_idx.write(np.zeros(1, "<i8").data)
        for p, (_, n, d) in zip(prefixes, heads, strict=True):
            first, last = True, -1
            for part in _sections(idx_path(p), HEADER_SIZE + 12 * n, d, "<i8", chunk):
                if first and part[0] != 0:
                    raise InputError(f"{idx_path(p)}: document indices start at {part[0]}, not 0")
                out_idx.write(np.ascontiguousarray((part[1:] if first else part) + seq_offset).data)
                first, last = False, int(part[-1])
            if last != n:
                raise InputError(f"{idx_path(p)}: document indices end at {last} but there are {n} sequences")
            seq_offset += n
        for i, p in enumerate(prefixes):
            _copy_bytes(bin_path(p), tokens[i] * dtype.itemsize, out_bin, chunk_bytes)
        fs.rm(idx_path(out_prefix))  # an older .idx must not pair with the new .bin
    stats = _stats(out_prefix, dtype, n_total, d_total, sum(tokens))
    digests = {"bin": out_bin.hexdigest(), "idx": out_idx.hexdigest()}
    return dataclasses.replace(stats, sha256=digests) if all(digests.values()) else stats


def _copy_bytes(path: str, nbytes: int, out: IO[Any], chunk_bytes: int) -> None:
    have = fs.size(path)
    if have < nbytes:
        raise InputError(f"{path}: data file is {have} bytes but its index says {nbytes}")
    filesystem, p = fs.get_fs(path)
    with filesystem.open(p, "rb") as f:
        left = nbytes
        while left:
            buf = f.read(min(chunk_bytes, left))
            if not buf:
                raise InputError(f"{path}: data file ended early while copying ({left} bytes missing)")
            out.write(buf)
            left -= len(buf)


class IndexedDataset:
    """Zero-copy reader of a Megatron indexed dataset (local paths only: both files are mmapped).

    ``ds[i]`` is sequence `i` as a read-only view of the mapped ``.bin``. Opening validates the whole
    layout and raises `InputError` naming the file for anything a truncated or foreign file can cause.
    `sequence_lengths`, `sequence_pointers` and `document_indices` are read-only views of the ``.idx``.
    """

    sequence_lengths: np.ndarray
    sequence_pointers: np.ndarray
    document_indices: np.ndarray
    dtype: np.dtype[Any]

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._open()

    def _open(self) -> None:
        self.idx_path, self.bin_path = idx_path(self.prefix), bin_path(self.prefix)
        filesystem, local_prefix = fs.get_fs(self.prefix)
        if not fs.is_local(self.prefix):
            raise InputError(
                f"{self.prefix}: IndexedDataset memory-maps its files and needs a local path; copy the "
                f"dataset to local disk first (protocol {filesystem.protocol!r} is not local)"
            )
        _check_files(self.prefix)
        local_idx, local_bin = idx_path(local_prefix), bin_path(local_prefix)
        with open(local_idx, "rb") as f:
            head = f.read(HEADER_SIZE)
        self.dtype, n, d = _parse_header(self.idx_path, head, os.path.getsize(local_idx))
        idx = np.memmap(local_idx, dtype=np.uint8, mode="r")
        self.sequence_lengths = np.frombuffer(idx, dtype="<i4", count=n, offset=HEADER_SIZE)
        self.sequence_pointers = np.frombuffer(idx, dtype="<i8", count=n, offset=HEADER_SIZE + 4 * n)
        self.document_indices = np.frombuffer(idx, dtype="<i8", count=d, offset=HEADER_SIZE + 12 * n)
        if int(self.document_indices[-1]) != n:
            last = int(self.document_indices[-1])
            raise InputError(f"{self.idx_path}: document indices end at {last} but there are {n} sequences")
        bin_size = os.path.getsize(local_bin)
        need = (
            int(self.sequence_pointers[-1]) + int(self.sequence_lengths[-1]) * self.dtype.itemsize if n else 0
        )
        if bin_size < need:
            raise InputError(
                f"{self.bin_path}: data file is {bin_size} bytes but {self.idx_path} says at least {need}"
            )
        # mmap cannot map an empty file
        self._bin: Any = np.memmap(local_bin, dtype=np.uint8, mode="r") if bin_size else b""
        self._num_tokens: int | None = None

    def __getstate__(self) -> dict[str, str]:
        return {"prefix": self.prefix}  # mmaps do not pickle; DataLoader workers reopen the files

    def __setstate__(self, state: dict[str, str]) -> None:
        self.prefix = state["prefix"]
        self._open()

    def __repr__(self) -> str:
        return f"IndexedDataset({self.prefix!r}, sequences={len(self)}, dtype={self.dtype.name})"

    def __len__(self) -> int:
        return len(self.sequence_lengths)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.get(i)

    def get(self, i: int, offset: int = 0, length: int | None = None) -> np.ndarray:
        """Tokens ``[offset, offset + length)`` of sequence `i` (to its end when `length` is None)."""
        n = len(self.sequence_lengths)
        if not -n <= i < n:
            raise IndexError(f"sequence {i} out of range for {self.prefix} ({n} sequences)")
        size = int(self.sequence_lengths[i])
        if length is None:
            length = size - offset
        if offset < 0 or length < 0 or offset + length > size:
            raise IndexError(f"tokens [{offset}, {offset + length}) outside sequence {i} of {size} tokens")
        start = int(self.sequence_pointers[i]) + offset * self.dtype.itemsize
        return np.frombuffer(self._bin, dtype=self.dtype, count=length, offset=start)

    @property
    def num_tokens(self) -> int:
        if self._num_tokens is None:
            self._num_tokens = int(self.sequence_lengths.sum(dtype=np.int64))
        return self._num_tokens


def validate(prefix: str, vocab_size: int | None = None, sample_bytes: int = 1 << 20) -> IndexedDataset:
    """Open `prefix` and check what is cheap to check before a long job reads it (training does this
    before starting any rank): the ``.idx`` header and counts (`IndexedDataset`), pointers that follow
    from the lengths, document indices from 0 to N in order, a ``.bin`` of exactly the size the index
    describes (a ``.bin`` of another dataset, or a truncated or padded one, is refused), and, when
    `vocab_size` is given, token ids below it in up to three `sample_bytes` windows of the ``.bin``
    (start, middle, end). `InputError` naming the file and what to do; memory stays bounded."""
    ds = IndexedDataset(prefix)
    n, item = len(ds), ds.dtype.itemsize
    lengths, pointers, docs = ds.sequence_lengths, ds.sequence_pointers, ds.document_indices
    redo = "re-run `selene tokenize` to rewrite it"
    chunk, start = 1 << 20, 0
    for lo in range(0, n, chunk):
        part = lengths[lo : lo + chunk].astype(np.int64)
        if (part < 0).any():
            i = lo + int(np.argmax(part < 0))
            raise InputError(
                f"{ds.idx_path}: sequence {i} has negative length {int(lengths[i])}; the index is damaged; {redo}"
            )
        want = start + np.concatenate([[0], np.cumsum(part[:-1])]) * item
        bad = np.nonzero(pointers[lo : lo + chunk] != want)[0]
        if bad.size:
            i = lo + int(bad[0])
            raise InputError(
                f"{ds.idx_path}: sequence {i} starts at byte {int(pointers[i])} of the .bin, but the lengths "
                f"before it put it at {int(want[bad[0]])}; the index is damaged; {redo}"
            )
        start = int(want[-1]) + int(part[-1]) * item
    if int(docs[0]) != 0 or (docs.size > 1 and bool((np.diff(docs) < 0).any())):
        raise InputError(f"{ds.idx_path}: document indices do not run from 0 up to {n} in order; {redo}")
    size = os.path.getsize(fs.get_fs(ds.bin_path)[1])
    if size != start:
        raise InputError(
            f"{ds.bin_path}: {size} bytes, but {ds.idx_path} describes {start} ({ds.num_tokens} {ds.dtype.name} "
            f"tokens): the two files do not belong together; {redo}"
        )
    if vocab_size is not None and start:
        tokens = start // item
        window = max(1, sample_bytes // item)
        for lo in sorted({0, max(0, tokens // 2 - window // 2), max(0, tokens - window)}):
            part = np.frombuffer(ds._bin, dtype=ds.dtype, count=min(window, tokens - lo), offset=lo * item)
            if part.size and int(part.max()) >= vocab_size:
                at = int(np.argmax(part >= vocab_size))
                raise InputError(
                    f"{ds.bin_path}: token {lo + at} is id {int(part[at])}, outside the vocabulary of {vocab_size}: "
                    f"the data was made with another tokenizer or the file is damaged; {redo}"
                )
    return ds
