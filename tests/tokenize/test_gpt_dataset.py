"""GPT sample index: equality with Megatron's loops, sample layout, caching, blending, resume."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selene.errors import ConfigError, InputError
from selene.tokenize import gpt_dataset
from selene.tokenize.gpt_dataset import (
    BlendedDataset,
    Cursor,
    CursorMismatchError,
    GPTDataset,
    build_blending_indices,
    build_indices,
    iterate,
)
from selene.tokenize.indexed import IndexedWriter

# ---------------------------------------------------------------------------------------------------
# Slow, obviously-correct references: line-by-line transcriptions of Megatron-LM's code.


def ref_build_sample_idx(
    sizes: Any, doc_idx: Any, seq_length: int, num_epochs: int, tpe: int, extra: int
) -> Any:
    """helpers.cpp build_sample_idx with drop_last_partial_sequence = true."""
    num_samples = (num_epochs * tpe - extra) // seq_length
    out = [(0, 0)]
    idx, offset = 0, 0
    while len(out) <= num_samples:
        remaining = seq_length + extra
        while remaining != 0:
            doc_length = int(sizes[doc_idx[idx]]) - offset
            remaining -= doc_length
            if remaining <= 0:
                offset += remaining + doc_length - extra
                remaining = 0
            else:
                if idx == len(doc_idx) - 1:
                    assert len(out) == num_samples
                    offset = int(sizes[doc_idx[idx]]) - extra
                    break
                idx += 1
                offset = 0
        out.append((idx, offset))
    return np.array(out, dtype=np.int64)


def ref_build(
    sizes: Any, documents: Any, seq: int, num_samples: Any, seed: int, extra: int, threshold: float
) -> Any:
    """GPTDataset._build_document_sample_shuffle_indices with its helpers, as Megatron writes them."""
    tpe = int(sum(int(sizes[d]) for d in documents))
    num_epochs, num_tokens = 1, tpe
    if num_samples is not None:
        while num_tokens < num_samples * seq + extra:
            num_epochs += 1
            num_tokens += tpe
    separate, sans = False, 0
    if num_epochs > 1:
        sans = ((num_epochs - 1) * tpe - extra) // seq
        from_final = num_samples - sans
        per_epoch = (tpe - extra) // seq
        assert 0 <= from_final <= per_epoch + 1
        separate = from_final < int(threshold * per_epoch)
    rng = np.random.RandomState(seed)

    def doc_index(epochs: int, sep: bool) -> Any:
        if not sep or epochs == 1:
            di = np.mgrid[0:epochs, 0 : len(documents)][1]
            di[:] = documents
            di = di.reshape(-1).astype(np.int32)
            rng.shuffle(di)
            return di
        return np.concatenate((doc_index(epochs - 1, False), doc_index(1, False)))

    def shuffle(first: int, total: int) -> Any:
        head = np.arange(0, first, dtype=np.uint32)
        rng.shuffle(head)
        if first == total:
            return head
        tail = np.arange(first, total, dtype=np.uint32)
        rng.shuffle(tail)
        return np.concatenate((head, tail))

    di = doc_index(num_epochs, separate)
    si = ref_build_sample_idx(sizes, di, seq, num_epochs, tpe, extra)
    return di, si, shuffle(sans if separate else len(si) - 1, len(si) - 1), separate


def ref_blend(weights: list[float], size: int) -> tuple[list[int], list[int]]:
    """helpers.cpp build_blending_indices."""
    current = [0] * len(weights)
    index, sample = [], []
    for i in range(size):
        t = max(float(i), 1.0)
        errors = [w * t - c for w, c in zip(weights, current, strict=True)]
        best = max(range(len(weights)), key=lambda d: (errors[d], -d))
        index.append(best)
        sample.append(current[best])
        current[best] += 1
    return index, sample


# ---------------------------------------------------------------------------------------------------


def random_lengths(rng: np.random.Generator, n: int, seq: int) -> np.ndarray:
    kind = rng.integers(0, 4)
    if kind == 0:
        return np.ones(n, dtype=np.int32)  # single-token documents
    if kind == 1:
        return rng.integers(1, 4 * seq, size=n).astype(np.int32)  # many longer than a sample
    if kind == 2:
        return (rng.integers(1, 4, size=n) * seq).astype(np.int32)  # exact fits at document ends
    lengths = rng.integers(0, 3, size=n).astype(np.int32)  # with empty documents
    lengths[0] = max(1, lengths[0])
    return lengths


def test_build_indices_equals_megatron_loops() -> None:
    rng = np.random.default_rng(0)
    seen = {"separate": 0, "joint": 0, "one_epoch": 0}
    for case in range(2000):
        seq = int(rng.integers(1, 12))
        lengths = random_lengths(rng, int(rng.integers(1, 25)), seq)
        docs = np.sort(rng.choice(len(lengths), size=int(rng.integers(1, len(lengths) + 1)), replace=False))
        if lengths[docs].sum() == 0:
            continue
        extra = int(rng.integers(0, 2))
        tpe = int(lengths[docs].sum())
        num_samples = None if case % 10 == 0 else int(rng.integers(0, 5 * tpe // seq + 3))
        threshold = [0.8, 0.8, 0.0, 1.0][case % 4]
        seed = int(rng.integers(0, 2**31))
        di, si, sh = build_indices(lengths, docs, seq, num_samples, seed, bool(extra), threshold)
        rdi, rsi, rsh, separate = ref_build(lengths, docs, seq, num_samples, seed, extra, threshold)
        np.testing.assert_array_equal(di, rdi)
        np.testing.assert_array_equal(si, rsi)
        np.testing.assert_array_equal(sh, rsh)
        assert di.dtype == np.int32 and sh.dtype == np.uint32 and si.dtype == np.int32
        assert num_samples is None or len(si) - 1 >= num_samples
        seen["separate" if separate else "one_epoch" if len(di) == len(docs) else "joint"] += 1
    assert min(seen.values()) >= 100, seen


def test_exact_fit_at_document_ends() -> None:
    # samples of 4 + 1 tokens over documents of 5 and 4: the next sample starts on the last token
    di, si, _ = build_indices(np.array([5, 4, 4]), np.arange(3), 4, None, 0)
    ref = ref_build_sample_idx(np.array([5, 4, 4]), di, 4, 1, 13, 1)
    np.testing.assert_array_equal(si, ref)
    _, si0, _ = build_indices(np.array([4, 4]), np.arange(2), 4, None, 0, add_extra_token=False)
    assert si0.tolist() == [[0, 0], [0, 4], [1, 4]]  # helpers.cpp keeps the offset at the end


@pytest.mark.parametrize("extra", [0, 1])
@pytest.mark.parametrize(
    ("lengths", "doc_idx", "seq"),
    [
        ([5], [0], 2),  # a single document
        ([1], [0], 1),  # a single one-token document: no sample with the extra token
        ([3, 1, 1, 200, 2], [0, 1, 2, 3, 4], 7),  # documents shorter and longer than a sample
        ([0, 0, 4, 0, 3, 0, 0], [0, 1, 2, 3, 4, 5, 6], 2),  # empty documents, leading and trailing
        ([4, 4, 4], [2, 0, 1, 1, 2, 0, 0, 1, 2], 4),  # three epochs, exact fits at document ends
        ([9, 2, 30], [1, 2, 0, 2, 1, 0], 64),  # fewer tokens than one sample
        ([2_000_000_000] * 3, [0, 1, 2, 1, 0], 999_999_937),  # the stream passes 2**31 and 2**32
        ([3_000_000_000, 7, 1], [1, 0, 2], 1_000_000_000),  # a length past int32: int64 rows
    ],
)
def test_sample_index_equals_the_cpp_loop_on_edge_cases(
    lengths: list[int], doc_idx: list[int], seq: int, extra: int
) -> None:
    sizes = np.array(lengths, dtype=np.int32 if max(lengths) < 2**31 else np.int64)
    di = np.array(doc_idx, dtype=np.int32)
    tokens = int(sizes[di].sum())
    got = gpt_dataset.build_sample_index(sizes, di, seq, bool(extra))
    np.testing.assert_array_equal(got, ref_build_sample_idx(sizes, di, seq, 1, tokens, extra))
    assert got.dtype == (np.int32 if max(len(di), max(lengths)) < 2**31 else np.int64)
    for unsigned in (sizes.astype(np.uint64), sizes.astype(np.int64)):  # same rows whatever the input dtype
        np.testing.assert_array_equal(gpt_dataset.build_sample_index(unsigned, di, seq, bool(extra)), got)


def test_sample_index_in_blocks_and_without_documents() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 60, size=3000).astype(np.int32)
    di = rng.permutation(np.tile(np.arange(3000, dtype=np.int32), 2))  # two epochs
    whole = ref_build_sample_idx(sizes, di, 2, 1, int(sizes[di].sum()), 1)
    assert len(whole) > 1 << 16  # more rows than one block of offsets
    np.testing.assert_array_equal(gpt_dataset.build_sample_index(sizes, di, 2), whole)
    empty = gpt_dataset.build_sample_index(sizes, np.array([], dtype=np.int32), 3)
    assert empty.tolist() == [[0, 0]] and empty.dtype == np.int32
    for bad in (-1, 3000):  # the gather skips per-element bounds checks: one check up front
        with pytest.raises(ValueError, match=r"document_index must lie in \[0, 3000\)"):
            gpt_dataset.build_sample_index(sizes, np.append(di, bad), 2)


def write_dataset(prefix: str, lengths: list[int]) -> list[np.ndarray]:
    """Documents whose tokens are unique (a running counter), so a token names its position."""
    docs, start = [], 0
    with IndexedWriter(prefix, np.int32) as w:
        for n in lengths:
            docs.append(np.arange(start, start + n))
            w.add_document(docs[-1])
            start += n
    return docs


def stream_of(ds: GPTDataset, docs: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([docs[int(d)] for d in ds.document_index])


def test_samples_overlap_and_cover_the_epoch(tmp_path: Path) -> None:
    lengths = [1, 50, 3, 17, 9, 1, 1, 30, 12]
    lengths.append(8 - (sum(lengths) - 1) % 8)  # one epoch splits into whole samples: nothing dropped
    docs = write_dataset(str(tmp_path / "d"), lengths)
    ds = GPTDataset(str(tmp_path / "d"), 8, None, seed=5)
    samples = [ds[i] for i in range(len(ds))]
    assert all(s.shape == (9,) and s.dtype == np.int64 for s in samples)
    order = np.argsort(ds.shuffle_index)  # back to stream order
    in_order = [samples[i] for i in order]
    for a, b in itertools.pairwise(in_order):
        assert a[-1] == b[0]  # consecutive samples overlap by one token
    assert sorted(np.unique(np.concatenate(samples)).tolist()) == list(range(sum(lengths)))
    assert (
        np.concatenate([s[:-1] for s in in_order] + [in_order[-1][-1:]]).tolist()
        == stream_of(ds, docs).tolist()
    )


def test_samples_follow_the_stream_over_epochs(tmp_path: Path) -> None:
    docs = write_dataset(str(tmp_path / "d"), [7, 1, 40, 2, 2, 19, 5])
    ds = GPTDataset(str(tmp_path / "d"), 6, 50, seed=1, documents=np.array([0, 2, 3, 5, 6]))
    assert ds.num_epochs == 5 and len(ds) == 50
    stream = stream_of(ds, docs)
    for i in range(len(ds)):
        j = int(ds.shuffle_index[i])
        assert ds[i].tolist() == stream[j * 6 : j * 6 + 7].tolist()
    used = np.unique(np.concatenate([ds[i] for i in range(len(ds))]))
    assert not set(used.tolist()) & set(docs[1].tolist() + docs[4].tolist())  # split honoured


def test_cache_is_keyed_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_dataset(str(tmp_path / "d"), [30, 20, 10, 40])
    cache = str(tmp_path / "cache")
    first = GPTDataset(str(tmp_path / "d"), 8, 30, seed=1, cache_dir=cache)
    assert not first.cache_hit and all(Path(p).exists() for p in first.cache_paths.values())
    monkeypatch.setattr(gpt_dataset, "build_indices", lambda *a, **k: pytest.fail("rebuilt a cached index"))
    second = GPTDataset(str(tmp_path / "d"), 8, 30, seed=1, cache_dir=cache)
    assert second.cache_hit and second.fingerprint == first.fingerprint
    assert isinstance(second.sample_index, np.memmap)  # loaded with mmap, not rebuilt
    assert all(np.array_equal(first[i], second[i]) for i in range(30))
    monkeypatch.undo()
    other = GPTDataset(str(tmp_path / "d"), 8, 30, seed=2, cache_dir=cache)
    assert not other.cache_hit and set(other.cache_paths.values()).isdisjoint(first.cache_paths.values())
    split = GPTDataset(str(tmp_path / "d"), 8, 30, seed=1, cache_dir=cache, documents=[0, 1])
    assert split.fingerprint != first.fingerprint
    assert len(list(Path(cache).glob("*.npy"))) == 9 and len(list(Path(cache).glob("*.json"))) == 3
    beside = GPTDataset(str(tmp_path / "d"), 8, 30, seed=1)
    assert Path(beside.cache_paths["sample_index"]).parent == tmp_path
    description = json.loads(next(Path(cache).glob("*.json")).read_text())
    assert description["seq_length"] == 8 and description["class"] == "GPTDataset"


def test_empty_selection_is_a_clear_error(tmp_path: Path) -> None:
    write_dataset(str(tmp_path / "d"), [3, 0])
    with pytest.raises(InputError, match=r"d: the 1 selected documents hold no tokens"):
        GPTDataset(str(tmp_path / "d"), 4, 10, seed=0, documents=[1])


@pytest.mark.parametrize("weights", [[0.5, 0.5], [0.7, 0.2, 0.1], [3.0, 1.0, 0.01, 2.5], [1e-3, 1.0]])
def test_blending_follows_megatron_and_the_weights(weights: list[float]) -> None:
    size = 5000
    w = gpt_dataset.normalize_weights(weights)
    index, sample = build_blending_indices(w, size)
    ref_index, ref_sample = ref_blend(w, size)
    assert index.tolist() == ref_index and sample.tolist() == ref_sample
    counts = np.bincount(index, minlength=len(w))
    assert np.all(np.abs(counts / size - np.array(w)) <= 1 / size)


class Fake:
    """A stand-in dataset: sample s of dataset d is [d, s]."""

    def __init__(self, d: int, n: int) -> None:
        self.d, self.n, self.seq_length, self.seed = d, n, 1, 0
        self.fingerprint = f"fake{d}-{n}"

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> np.ndarray:
        return np.array([self.d, i])


def test_blended_dataset_takes_each_datasets_next_sample() -> None:
    blend = BlendedDataset([Fake(0, 100), Fake(1, 100)], [3, 1], 80)
    got = [blend[i].tolist() for i in range(80)]
    assert [g[1] for g in got if g[0] == 0] == list(range(60))
    assert [g[1] for g in got if g[0] == 1] == list(range(20))
    with pytest.raises(ConfigError, match="blend component 1 has 10 samples but the blend takes 20"):
        BlendedDataset([Fake(0, 100), Fake(1, 10)], [3, 1], 80)
    with pytest.raises(ConfigError, match="weights must be finite"):
        BlendedDataset([Fake(0, 100)], [-1], 10)


def collect(dataset: Any, cursor: Cursor | None, batches: int) -> tuple[list[np.ndarray], Cursor]:
    out, it = [], iterate(dataset, cursor, 3)
    for _ in range(batches):
        batch, cursor = next(it)
        out.append(batch)
    assert cursor is not None
    return out, cursor


def test_cursor_resumes_exactly(tmp_path: Path) -> None:
    write_dataset(str(tmp_path / "d"), [13, 40, 5, 22])
    ds = GPTDataset(str(tmp_path / "d"), 5, 10, seed=3)
    whole, _ = collect(ds, None, 12)  # 36 samples: three passes and a bit, batches straddle the wrap
    assert all(b.shape == (3, 6) for b in whole)
    head, cursor = collect(ds, None, 5)
    saved = json.loads(json.dumps(cursor.to_dict()))  # as it travels in a checkpoint
    assert saved["position"] == 5 and saved["epoch"] == 1
    tail, end = collect(GPTDataset(str(tmp_path / "d"), 5, 10, seed=3), Cursor.from_dict(saved), 7)
    assert all(np.array_equal(a, b) for a, b in zip(whole, head + tail, strict=True))
    assert (end.position, end.epoch) == (6, 3)
    blend = BlendedDataset([ds, GPTDataset(str(tmp_path / "d"), 5, 10, seed=4)], [1, 1], 12)
    whole_b, _ = collect(blend, None, 6)
    head_b, cur_b = collect(blend, None, 2)
    assert all(
        np.array_equal(a, b) for a, b in zip(whole_b, head_b + collect(blend, cur_b, 4)[0], strict=True)
    )


def test_cursor_against_another_dataset_is_refused(tmp_path: Path) -> None:
    write_dataset(str(tmp_path / "d"), [13, 40, 5, 22])
    _, cursor = collect(GPTDataset(str(tmp_path / "d"), 5, 10, seed=3), None, 1)
    with pytest.raises(CursorMismatchError, match=r"seed 3.*seed 4.*restore the original data config"):
        next(iterate(GPTDataset(str(tmp_path / "d"), 5, 10, seed=4), cursor, 3))
    with pytest.raises(InputError, match=r"data cursor lacks \['epoch'\]"):
        Cursor.from_dict({k: v for k, v in cursor.to_dict().items() if k != "epoch"})
