"""Megatron indexed dataset: byte layout, round trips, merge, bad input, atomic writes."""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selene.errors import InputError
from selene.tokenize.indexed import DTYPES, IndexedDataset, IndexedStats, IndexedWriter, choose_dtype, merge

MAGIC = b"MMIDIDX\x00\x00"
STRUCT_CODES = {1: "B", 2: "b", 3: "h", 4: "i", 5: "q", 6: "d", 7: "f", 8: "H"}


def read_megatron(prefix: str) -> dict[str, Any]:
    """An independent reader straight from Megatron's byte layout: struct only, no selene code."""
    with open(prefix + ".idx", "rb") as f:
        data = f.read()
    assert data[:9] == MAGIC
    version, code, n, d = struct.unpack_from("<QBQQ", data, 9)
    off = 34
    lengths = list(struct.unpack_from(f"<{n}i", data, off))
    off += 4 * n
    pointers = list(struct.unpack_from(f"<{n}q", data, off))
    off += 8 * n
    docs = list(struct.unpack_from(f"<{d}q", data, off))
    off += 8 * d
    with open(prefix + ".bin", "rb") as f:
        raw = f.read()
    char = STRUCT_CODES[code]
    seqs = [list(struct.unpack_from(f"<{ln}{char}", raw, p)) for ln, p in zip(lengths, pointers, strict=True)]
    return {"version": version, "code": code, "n": n, "d": d, "lengths": lengths, "pointers": pointers,
            "docs": docs, "seqs": seqs, "idx_end": off, "idx_size": len(data), "bin_size": len(raw)}  # fmt: skip


def random_docs(rng: np.random.Generator, count: int, vocab: int) -> list[np.ndarray]:
    docs = [rng.integers(0, vocab, size=int(rng.integers(0, 40))) for _ in range(count)]
    docs[3] = np.zeros(0, dtype=np.int64)  # an empty document is legal
    return docs


def write(prefix: str, docs: list[np.ndarray], dtype: Any, **kw: Any) -> IndexedStats:
    w = IndexedWriter(prefix, dtype, **kw)
    for d in docs:
        w.add_document(d)
    return w.finalize()


@pytest.mark.parametrize(("dtype", "code", "vocab"), [(np.uint16, 8, 65500), (np.int32, 4, 200_000)])
def test_writer_matches_megatron_layout(tmp_path: Path, dtype: Any, code: int, vocab: int) -> None:
    docs = random_docs(np.random.default_rng(0), 50, vocab)
    docs[7] = np.array([0, vocab - 1])  # the extremes survive
    stats = write(str(tmp_path / "ds"), docs, dtype, buffer_tokens=64)  # small buffer: many flushes
    m = read_megatron(str(tmp_path / "ds"))
    assert (m["version"], m["code"], m["n"], m["d"]) == (1, code, 50, 51)
    assert m["idx_size"] == m["idx_end"]  # nothing after the document indices
    assert m["lengths"] == [len(d) for d in docs]
    itemsize = np.dtype(dtype).itemsize
    assert m["pointers"] == [itemsize * sum(len(d) for d in docs[:i]) for i in range(50)]
    assert m["docs"] == list(range(51))
    assert m["seqs"] == [d.tolist() for d in docs]
    assert m["bin_size"] == itemsize * sum(len(d) for d in docs)
    assert stats.sequences == 50 and stats.documents == 50 and stats.dtype_code == code
    assert stats.tokens == sum(len(d) for d in docs)


@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
def test_round_trip(tmp_path: Path, dtype: Any) -> None:
    docs = random_docs(np.random.default_rng(1), 30, 60000)
    write(str(tmp_path / "ds"), docs, dtype)
    ds = IndexedDataset(str(tmp_path / "ds"))
    assert len(ds) == 30 and ds.dtype == np.dtype(dtype)
    assert ds.num_tokens == sum(len(d) for d in docs)
    for i, d in enumerate(docs):
        assert ds[i].tolist() == d.tolist()
        assert ds[i].dtype == np.dtype(dtype)
    assert ds[-1].tolist() == docs[-1].tolist()
    view = ds[0]
    assert not view.flags.owndata and not view.flags.writeable  # a view into the mmap, not a copy
    big = max(range(30), key=lambda i: len(docs[i]))
    assert ds.get(big, 2, 3).tolist() == docs[big][2:5].tolist()
    assert ds.get(big, 4).tolist() == docs[big][4:].tolist()
    assert ds.sequence_lengths.tolist() == [len(d) for d in docs]
    assert ds.document_indices.tolist() == list(range(31))
    with pytest.raises(IndexError):
        ds.get(big, len(docs[big]) - 1, 2)
    with pytest.raises(IndexError):
        ds[30]
    again = pickle.loads(pickle.dumps(ds))  # DataLoader workers get a reopened reader
    assert again[5].tolist() == docs[5].tolist()


def test_reads_a_file_built_as_megatron_writes_it(tmp_path: Path) -> None:
    # Megatron's builder with add_item/end_document: documents of several sequences, int32 tokens,
    # then the multimodal mode bytes after the document indices (which a text reader ignores)
    seqs = [[5, 6, 7], [8], [9, 10], [11, 12, 13, 14]]
    doc_indices = [0, 2, 3, 4]
    n = len(seqs)
    lengths = [len(s) for s in seqs]
    pointers = [4 * sum(lengths[:i]) for i in range(n)]
    idx = MAGIC + struct.pack("<Q", 1) + struct.pack("<B", 4) + struct.pack("<Q", n) + struct.pack("<Q", 4)
    idx += (
        struct.pack(f"<{n}i", *lengths) + struct.pack(f"<{n}q", *pointers) + struct.pack("<4q", *doc_indices)
    )
    idx += struct.pack(f"<{n}b", *([0] * n))
    (tmp_path / "meg.idx").write_bytes(idx)
    (tmp_path / "meg.bin").write_bytes(b"".join(struct.pack(f"<{len(s)}i", *s) for s in seqs))
    ds = IndexedDataset(str(tmp_path / "meg"))
    assert [ds[i].tolist() for i in range(n)] == seqs
    assert ds.document_indices.tolist() == doc_indices
    assert ds.sequence_pointers.tolist() == pointers
    assert ds.dtype == np.int32 and ds.num_tokens == 10


def test_dtype_table_and_choice() -> None:
    assert {c: d.name for c, d in DTYPES.items()} == {
        1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float64", 7: "float32", 8: "uint16",
    }  # fmt: skip
    assert choose_dtype(32000) == np.uint16 and choose_dtype(65499) == np.uint16
    assert choose_dtype(65500) == np.int32 and choose_dtype(128256) == np.int32


def test_merge_equals_one_write(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    parts = [random_docs(rng, 20, 1000), [], random_docs(rng, 15, 1000)]
    for i, docs in enumerate(parts):
        write(str(tmp_path / f"p{i}"), docs, np.uint16)
    everything = [d for docs in parts for d in docs]
    write(str(tmp_path / "one"), everything, np.uint16)
    stats = merge([str(tmp_path / f"p{i}") for i in range(3)], str(tmp_path / "merged"), chunk_bytes=40)
    for ext in (".idx", ".bin"):
        assert (tmp_path / f"merged{ext}").read_bytes() == (tmp_path / f"one{ext}").read_bytes()
    assert stats.sequences == 35 and stats.documents == 35
    assert stats.tokens == sum(len(d) for d in everything)
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
def test_merge_of_many_parts_with_tiny_buffers_equals_one_write(tmp_path: Path, dtype: Any) -> None:
    rng = np.random.default_rng(7)
    parts = [random_docs(rng, int(rng.integers(4, 30)), 60000) if i % 9 else [] for i in range(60)]
    for i, docs in enumerate(parts):
        write(str(tmp_path / f"p{i:02d}"), docs, dtype, buffer_tokens=5)
    write(str(tmp_path / "one"), [d for docs in parts for d in docs], dtype)
    # 24 bytes: every copy and every index section is split, across part boundaries too
    stats = merge([str(tmp_path / f"p{i:02d}") for i in range(60)], str(tmp_path / "merged"), chunk_bytes=24)
    for ext in (".idx", ".bin"):
        assert (tmp_path / f"merged{ext}").read_bytes() == (tmp_path / f"one{ext}").read_bytes()
    assert stats.sequences == sum(len(docs) for docs in parts)


def test_merge_shifts_multi_sequence_documents(tmp_path: Path) -> None:
    test_reads_a_file_built_as_megatron_writes_it(tmp_path)  # meg: 4 sequences in 3 documents
    write(str(tmp_path / "ours"), [np.array([1, 2]), np.array([3])], np.int32)
    merge([str(tmp_path / "meg"), str(tmp_path / "ours")], str(tmp_path / "m"))
    ds = IndexedDataset(str(tmp_path / "m"))
    assert ds.document_indices.tolist() == [0, 2, 3, 4, 5, 6]  # Megatron's add_index rule
    assert [ds[i].tolist() for i in range(6)] == [[5, 6, 7], [8], [9, 10], [11, 12, 13, 14], [1, 2], [3]]
    assert ds.sequence_pointers.tolist() == [0, 12, 16, 24, 40, 48]


def test_merge_rejects_mixed_dtypes(tmp_path: Path) -> None:
    write(str(tmp_path / "a"), [np.array([1])], np.uint16)
    write(str(tmp_path / "b"), [np.array([1])], np.int32)
    with pytest.raises(InputError, match=r"b\.idx: dtype int32 differs from uint16"):
        merge([str(tmp_path / "a"), str(tmp_path / "b")], str(tmp_path / "c"))
    assert not (tmp_path / "c.idx").exists() and not (tmp_path / "c.bin").exists()


def _corrupt(tmp_path: Path, case: str) -> str:
    prefix = str(tmp_path / "ds")
    write(prefix, [np.arange(10), np.arange(5)], np.uint16)
    idx, bin_ = Path(prefix + ".idx"), Path(prefix + ".bin")
    data = bytearray(idx.read_bytes())
    if case == "missing_idx":
        idx.unlink()
    elif case == "missing_bin":
        bin_.unlink()
    elif case == "magic":
        idx.write_bytes(b"NOTMEGAT!" + data[9:])
    elif case == "version":
        idx.write_bytes(data[:9] + struct.pack("<Q", 2) + data[17:])
    elif case == "dtype":
        data[17] = 9
        idx.write_bytes(bytes(data))
    elif case == "idx_truncated":
        idx.write_bytes(bytes(data[:-5]))
    elif case == "header_truncated":
        idx.write_bytes(bytes(data[:20]))
    elif case == "empty_idx":
        idx.write_bytes(b"")
    elif case == "bin_short":
        bin_.write_bytes(bin_.read_bytes()[:-4])
    elif case == "doc_end":
        idx.write_bytes(bytes(data[:-8]) + struct.pack("<q", 7))
    return prefix


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing_idx", r"ds\.idx: not found"),
        ("missing_bin", r"ds\.bin: not found"),
        ("magic", r"ds\.idx: not a Megatron index: starts with b'NOTMEGAT!'"),
        ("version", r"ds\.idx: unsupported index version 2"),
        ("dtype", r"ds\.idx: unknown dtype code 9; Megatron's codes are 1 \(uint8\)"),
        (
            "idx_truncated",
            r"ds\.idx: truncated index: 77 bytes, but its counts \(2 sequences, 3 document indices\) need 82",
        ),
        ("header_truncated", r"ds\.idx: truncated index: 20 bytes, the header alone needs 34"),
        ("empty_idx", r"ds\.idx: truncated index: 0 bytes"),
        ("bin_short", r"ds\.bin: data file is 26 bytes but .*ds\.idx says at least 30"),
        ("doc_end", r"ds\.idx: document indices end at 7 but there are 2 sequences"),
    ],
)
def test_bad_input_names_the_file(tmp_path: Path, case: str, message: str) -> None:
    prefix = _corrupt(tmp_path, case)
    with pytest.raises(InputError, match=message):
        IndexedDataset(prefix)
    if case not in ("bin_short", "doc_end"):  # merge reads headers only, then copies
        with pytest.raises(InputError, match=message):
            merge([prefix], str(tmp_path / "out"))


def test_merge_detects_short_bin(tmp_path: Path) -> None:
    prefix = _corrupt(tmp_path, "bin_short")
    with pytest.raises(InputError, match=r"ds\.bin: data file is 26 bytes but its index says 30"):
        merge([prefix], str(tmp_path / "out"))
    assert sorted(os.listdir(tmp_path)) == ["ds.bin", "ds.idx"]


def test_non_local_reader_says_so() -> None:
    write("memory://sel/ds", [np.arange(4)], np.uint16)  # writing goes through fsspec
    with pytest.raises(
        InputError, match=r"memory://sel/ds: IndexedDataset memory-maps .* needs a local path"
    ):
        IndexedDataset("memory://sel/ds")
    merge(["memory://sel/ds"], "memory://sel/copy")  # merge streams, so any fsspec path works


def test_abort_and_failures_leave_nothing(tmp_path: Path) -> None:
    w = IndexedWriter(str(tmp_path / "ds"), np.uint16)
    w.add_document([1, 2, 3])
    assert not (tmp_path / "ds.bin").exists()  # a killed writer has no final name yet
    w.abort()
    assert os.listdir(tmp_path) == []
    with pytest.raises(RuntimeError), IndexedWriter(str(tmp_path / "ds"), np.uint16) as w2:
        w2.add_document([1, 2, 3])
        raise RuntimeError("killed")
    assert os.listdir(tmp_path) == []
    w3 = IndexedWriter(str(tmp_path / "ds"), np.uint16)
    with pytest.raises(ValueError, match="token id 70000 does not fit uint16"):
        w3.add_document([1, 70000])
    with pytest.raises(ValueError, match="token ids must be integers"):
        w3.add_document([1.5])
    w3.abort()
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="already finalized or aborted"):
        w3.add_document([1])


def test_rewrite_replaces_an_older_dataset(tmp_path: Path) -> None:
    write(str(tmp_path / "ds"), [np.arange(100)], np.uint16)
    with IndexedWriter(str(tmp_path / "ds"), np.uint16) as w:
        w.add_document([7, 8])
    ds = IndexedDataset(str(tmp_path / "ds"))
    assert len(ds) == 1 and ds[0].tolist() == [7, 8]
    assert sorted(os.listdir(tmp_path)) == ["ds.bin", "ds.idx"]


def test_empty_dataset(tmp_path: Path) -> None:
    stats = write(str(tmp_path / "e"), [], np.uint16)
    ds = IndexedDataset(str(tmp_path / "e"))
    assert len(ds) == 0 and ds.num_tokens == 0 and ds.document_indices.tolist() == [0]
    assert stats.sequences == 0 and read_megatron(str(tmp_path / "e"))["d"] == 1
