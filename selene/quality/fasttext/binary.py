"""fastText 0.9.2's model file (`.bin`/`.ftz`, version 12): its header read and checked before
fastText loads it (`read_info`), so that a wrong or damaged file is named, not a crash."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import IO

from selene.errors import InputError
from selene.io import fs

FILE_MAGIC = 793712314
FILE_VERSION = 12

_MODEL_NAMES = {1: "cbow", 2: "skipgram", 3: "supervised"}
_LOSS_NAMES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
_MODEL_SUPERVISED = 3

# Args::save: dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate (int32), t (double)
_ARGS = struct.Struct("<12id")
_DICT_HEAD = struct.Struct("<iiiqq")  # Dictionary::save: size nwords nlabels ntokens pruneidx_size
_ENTRY_TAIL = struct.Struct("<qb")  # an entry after its NUL-terminated word: count, type (0 word, 1 label)
_MATRIX_HEAD = struct.Struct("<qq")  # DenseMatrix::save: m n, then m*n float32 row-major


@dataclass(frozen=True)
class ModelInfo:
    """What a fastText `.bin`/`.ftz` header says: its arguments, dictionary sizes and labels."""

    version: int
    model: str
    loss: str
    dim: int
    epoch: int
    min_count: int
    word_ngrams: int
    bucket: int
    minn: int
    maxn: int
    nwords: int
    ntokens: int
    labels: tuple[str, ...]
    label_counts: tuple[int, ...]
    quantized: bool


class _Reader:
    """Sequential reads over a file object with a buffer; errors name the file."""

    def __init__(self, f: IO[bytes], path: str) -> None:
        self.f, self.path = f, path
        self.buf, self.pos, self.base = b"", 0, 0  # `base`: the file offset of buf[0]

    def _more(self, need: int) -> None:
        chunk = self.f.read(max(need, 1 << 20))
        if not chunk:
            raise InputError(
                f"{self.path}: the file ends inside its fastText header (truncated, or not a fastText model)"
            )
        self.base += self.pos
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0

    def take(self, n: int) -> bytes:
        while len(self.buf) - self.pos < n:
            self._more(n - (len(self.buf) - self.pos))
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def entry(self) -> tuple[bytes, int, int]:
        """One dictionary entry: its word, count and type."""
        while True:
            j = self.buf.find(b"\0", self.pos)
            if j >= 0 and j + 1 + _ENTRY_TAIL.size <= len(self.buf):
                word = self.buf[self.pos : j]
                count, kind = _ENTRY_TAIL.unpack_from(self.buf, j + 1)
                self.pos = j + 1 + _ENTRY_TAIL.size
                return word, count, kind
            self._more(1 << 20)

    def tell(self) -> int:
        return self.base + self.pos

    def skip(self, n: int) -> None:
        target = self.tell() + n
        self.f.seek(target)
        self.buf, self.pos, self.base = b"", 0, target


def read_info(path: str) -> ModelInfo:
    """The header of the fastText model at `path`, checked: an `InputError` names the file when it
    is missing, is not a fastText model, is a word-vector model rather than a classifier, or is
    shorter or longer than its header says (a truncated download)."""
    fsys, p = fs.get_fs(path)
    if not fsys.exists(p):
        raise InputError(f"{path}: no such file (expected a fastText classifier, .bin)")
    if fsys.isdir(p):
        raise InputError(f"{path} is a directory, not a fastText model file")
    try:
        with fsys.open(p, "rb") as f:
            return _read_info(_Reader(f, path), path)
    except OSError as e:
        raise InputError(f"{path}: cannot be read: {e.strerror or e}") from None


def _read_info(r: _Reader, path: str) -> ModelInfo:
    head = r.f.read(8)
    r.base = 8
    if len(head) < 8 or struct.unpack("<i", head[:4])[0] != FILE_MAGIC:
        raise InputError(f"{path} is not a fastText model: its first bytes are not fastText's magic number")
    version = struct.unpack("<i", head[4:])[0]
    if version > FILE_VERSION:  # fastText accepts every older version
        raise InputError(
            f"{path}: fastText file version {version}; fastText 0.9.2 reads versions up to {FILE_VERSION}"
        )
    (dim, _ws, epoch, min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn, _rate, _t) = (
        _ARGS.unpack(r.take(_ARGS.size))
    )
    if model != _MODEL_SUPERVISED:
        name = _MODEL_NAMES.get(model, f"unknown ({model})")
        raise InputError(f"{path} is a fastText {name} model (word vectors), not a supervised classifier")
    size, nwords, nlabels, ntokens, pruneidx_size = _DICT_HEAD.unpack(r.take(_DICT_HEAD.size))
    if not (0 <= nwords <= size and nlabels == size - nwords and dim > 0):
        raise InputError(
            f"{path}: its fastText dictionary header is inconsistent (size {size}, words {nwords}, labels {nlabels})"
        )
    labels, label_counts, kinds = [], [], [0, 0]
    for _ in range(size):
        word, count, kind = r.entry()
        if kind not in (0, 1):
            raise InputError(f"{path}: a fastText dictionary entry of unknown type {kind} (a damaged file)")
        kinds[kind] += 1
        if kind == 1:
            labels.append(word.decode("utf-8", "replace"))
            label_counts.append(count)
    if kinds != [nwords, nlabels]:
        raise InputError(
            f"{path}: its fastText dictionary holds {kinds[0]} words and {kinds[1]} labels, its header says {nwords} and {nlabels}"
        )
    if nlabels == 0:
        raise InputError(f"{path}: the fastText model has no labels, so it is not a classifier")
    if pruneidx_size > 0:
        r.take(8 * pruneidx_size)
    quantized = r.take(1) != b"\0"
    if not quantized:
        _check_matrices(r, path, nwords + bucket, nlabels, dim)
    return ModelInfo(
        version=version, model=_MODEL_NAMES[model], loss=_LOSS_NAMES.get(loss, str(loss)), dim=dim, epoch=epoch,
        min_count=min_count, word_ngrams=word_ngrams, bucket=bucket, minn=minn, maxn=maxn, nwords=nwords,
        ntokens=ntokens, labels=tuple(labels), label_counts=tuple(label_counts), quantized=quantized,
    )  # fmt: skip


def _check_matrices(r: _Reader, path: str, rows: int, nlabels: int, dim: int) -> None:
    """A dense model's matrices must have the shapes its header implies and end the file exactly:
    fastText itself would read a truncated file without complaint (zeros for the missing floats)."""
    m, n = _MATRIX_HEAD.unpack(r.take(_MATRIX_HEAD.size))
    if (m, n) != (rows, dim):
        raise InputError(
            f"{path}: its input matrix is {m}×{n}, its header implies {rows}×{dim} (a damaged file)"
        )
    r.skip(m * n * 4)
    r.take(1)  # qout: a dense input always comes with a dense output
    m, n = _MATRIX_HEAD.unpack(r.take(_MATRIX_HEAD.size))
    if (m, n) != (nlabels, dim):
        raise InputError(
            f"{path}: its output matrix is {m}×{n}, its header implies {nlabels}×{dim} (a damaged file)"
        )
    expected = r.tell() + m * n * 4
    actual = r.f.seek(0, os.SEEK_END)
    if actual != expected:
        raise InputError(
            f"{path}: {actual} bytes where its fastText header implies {expected} (truncated or damaged)"
        )
