"""GPT training samples over an indexed dataset, with Megatron-LM's ``GPTDataset`` semantics.

Same inputs and seed give the same document, sample and shuffle indices as Megatron
(``megatron/core/datasets/gpt_dataset.py`` and ``build_sample_idx`` of ``helpers.cpp``), so a run can
switch between the two stacks without changing which tokens each step sees. The sample index is built
from a cumulative sum and a histogram in a few linear numpy passes instead of helpers.cpp's document
loop, so no compiled helper is needed and it builds faster than that helper (benchmarks/sample_index.py).

A sample is ``seq_length + 1`` tokens (inputs plus the shifted label) taken from the document stream;
consecutive samples overlap by that one token, exactly as in Megatron.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from selene.errors import ConfigError, InputError
from selene.io import fs
from selene.tokenize.indexed import HEADER_SIZE, IndexedDataset

CACHE_FORMAT = 1  # part of every cache key: bump when the cached arrays change meaning
_INDEX_NAMES = ("document_index", "sample_index", "shuffle_index")


def num_epochs(tokens_per_epoch: int, seq_length: int, num_samples: int | None, extra: int) -> int:
    """Fewest passes over the documents that yield `num_samples` samples (Megatron's ``_get_num_epochs``)."""
    if num_samples is None:
        return 1
    need = num_samples * seq_length + extra
    return max(1, -(-need // tokens_per_epoch))


def build_sample_index(
    sequence_lengths: npt.ArrayLike, document_index: np.ndarray, seq_length: int, add_extra_token: bool = True
) -> np.ndarray:
    """``(num_samples + 1, 2)`` rows of (position in `document_index`, token offset) where samples start.

    Same array as helpers.cpp ``build_sample_idx`` (with drop_last_partial_sequence), dtype included:
    sample ``r`` ends at stream token ``r * seq_length + extra``, and the C++ loop stays on a document
    while that end fits in it, so the row is the first document ``k`` whose cumulative length reaches
    it, with offset ``r * seq_length - start[k]``. Instead of a binary search per sample, document
    ``k`` holds the ends of samples ``c[k-1] + 1 .. c[k]`` with ``c = (cumsum - extra) // seq_length``,
    so a histogram of ``c`` and its running sum give every row's ``k`` in a few linear passes.
    """
    extra = int(add_extra_token)
    lengths = np.asarray(sequence_lengths)
    n = len(document_index)
    # helpers.cpp is instantiated for int32 and int64; Megatron takes int32 whenever the values fit
    biggest = max(n, int(lengths.max()) if lengths.size else 0)
    dtype = np.int32 if biggest <= np.iinfo(np.int32).max else np.int64
    if n == 0:
        return np.zeros((1, 2), dtype=dtype)
    document_index = np.asarray(document_index)
    if int(document_index.min()) < 0 or int(document_index.max()) >= len(lengths):
        lo, hi = document_index.min(), document_index.max()
        raise ValueError(f"document_index must lie in [0, {len(lengths)}), got [{lo}, {hi}]")
    # take with mode="clip" skips the per-element bounds check (done above once): 2-3x a fancy index
    doc_lengths = np.take(lengths, document_index, mode="clip")
    if doc_lengths.dtype.kind != "i":  # unsigned lengths cannot take the -extra below
        doc_lengths = doc_lengths.astype(np.int64)
    # shifted[k + 1] = tokens up to the end of document k, minus extra; shifted[k] = start[k] - extra
    shifted = np.empty(n + 1, dtype=np.int64)  # int64: the stream of a multi-epoch index passes 2**31
    shifted[0] = -extra
    doc_lengths[0] -= extra  # a fresh array: the gather copied it
    np.cumsum(doc_lengths, dtype=np.int64, out=shifted[1:])
    del doc_lengths
    count = max(0, int(shifted[-1]) // seq_length)
    last = np.floor_divide(shifted[1:], seq_length)  # last sample ending in each document
    last[: np.searchsorted(last, 0)] = 0  # empty leading documents with add_extra_token: -1
    # documents before the one holding the end of sample r + 1 (those whose last sample is < r + 1)
    marks = np.bincount(last, minlength=count + 1)[:count]
    del last
    before = np.cumsum(marks, out=marks)
    out = np.empty((count + 1, 2), dtype=dtype)
    out[0] = 0
    out[1:, 0] = before
    # offsets in blocks that stay in cache: r * seq_length - start[k] = ends of samples - extra - shifted[k]
    block = max(1, min(count, 1 << 16))
    ends = np.arange(1, block + 1, dtype=np.int64) * seq_length - extra
    buf = np.empty(block, dtype=np.int64)
    for a in range(0, count, block):
        k = before[a : a + block]
        m = len(k)
        starts = np.take(shifted, k, out=buf[:m], mode="clip")  # k < n always: no bounds check needed
        np.subtract(ends[:m], starts, out=starts)
        np.add(starts, a * seq_length, out=out[a + 1 : a + 1 + m, 1], casting="same_kind")
    return out


def _document_index(docs: np.ndarray, epochs: int, rng: np.random.RandomState, separate: bool) -> np.ndarray:
    if not separate or epochs == 1:
        index = np.tile(docs.astype(np.int32), epochs)  # Megatron casts to int32 before the shuffle
        rng.shuffle(index)
        return index
    first = _document_index(docs, epochs - 1, rng, False)
    return np.concatenate((first, _document_index(docs, 1, rng, False)))


def _shuffle_index(first: int, total: int, rng: np.random.RandomState) -> np.ndarray:
    dtype = np.uint32 if total < np.iinfo(np.uint32).max - 1 else np.int64
    head = np.arange(first, dtype=dtype)
    rng.shuffle(head)
    if first == total:
        return head
    tail = np.arange(first, total, dtype=dtype)
    rng.shuffle(tail)
    return np.concatenate((head, tail))


def _checked_documents(documents: npt.ArrayLike, count: int) -> np.ndarray:
    docs = np.asarray(documents)
    if docs.ndim != 1 or (docs.size and docs.dtype.kind not in "iu"):
        raise ValueError(f"documents must be a 1-D array of sequence ids, got {docs.dtype} {docs.shape}")
    if docs.size and (int(docs.min()) < 0 or int(docs.max()) >= count):
        raise ValueError(f"document ids must lie in [0, {count}), got [{docs.min()}, {docs.max()}]")
    return docs.astype(np.int64)


def build_indices(
    sequence_lengths: npt.ArrayLike,
    documents: npt.ArrayLike,
    seq_length: int,
    num_samples: int | None,
    seed: int,
    add_extra_token: bool = True,
    separate_final_epoch_threshold: float = 0.80,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Megatron's (document_index, sample_index, shuffle_index) for `documents` of a dataset.

    The documents are repeated for as many epochs as `num_samples` needs and shuffled with
    ``RandomState(seed)``. When the last epoch contributes fewer than `separate_final_epoch_threshold`
    of an epoch's samples, its documents are shuffled apart from the full epochs and its samples are
    shuffled apart too, so the truncated epoch is a uniform subset rather than a biased tail. The
    sample index covers every sample of all epochs (at least ``num_samples``), as Megatron's does.
    `num_samples` None means one epoch.
    """
    extra = int(add_extra_token)
    lengths = np.asarray(sequence_lengths)
    docs = _checked_documents(documents, len(lengths))
    if seq_length < 1 or (num_samples is not None and num_samples < 0):
        raise ValueError(f"need seq_length >= 1 and num_samples >= 0, got {seq_length} and {num_samples}")
    tokens_per_epoch = int(lengths[docs].sum(dtype=np.int64))
    if tokens_per_epoch <= 0:
        raise ValueError(f"the {len(docs)} selected documents hold no tokens")
    epochs = num_epochs(tokens_per_epoch, seq_length, num_samples, extra)
    separate, sans_final = False, 0
    if epochs > 1 and num_samples is not None:
        sans_final = ((epochs - 1) * tokens_per_epoch - extra) // seq_length
        per_epoch = (tokens_per_epoch - extra) // seq_length
        separate = num_samples - sans_final < int(separate_final_epoch_threshold * per_epoch)
    rng = np.random.RandomState(seed)
    document_index = _document_index(docs, epochs, rng, separate)
    sample_index = build_sample_index(lengths, document_index, seq_length, add_extra_token)
    rows = len(sample_index) - 1
    return document_index, sample_index, _shuffle_index(sans_final if separate else rows, rows, rng)


class SampleDataset(Protocol):
    """What `BlendedDataset` and `iterate` need of a dataset."""

    fingerprint: str
    seq_length: int
    seed: int

    def __len__(self) -> int: ...

    def __getitem__(self, i: int) -> np.ndarray: ...


def _sha256(data: Any) -> str:
    return hashlib.sha256(data).hexdigest()


class GPTDataset:
    """Fixed-length samples drawn from an indexed dataset in Megatron's order.

    The three indices are cached as ``.npy`` in `cache_dir` (default: next to the prefix) under names
    keyed by a hash of the data's identity (path, ``.idx`` size, header, sequence lengths), the
    selected `documents` and every parameter, so a changed parameter can never reuse a stale index.
    A ``description.json`` written last marks a complete cache entry. `documents` (sequence ids, one
    document per sequence in selene's shards) selects a train/validation split.
    """

    def __init__(
        self,
        prefix_or_dataset: str | IndexedDataset,
        seq_length: int,
        num_samples: int | None,
        seed: int,
        cache_dir: str | None = None,
        *,
        documents: npt.ArrayLike | None = None,
        add_extra_token: bool = True,
        separate_final_epoch_threshold: float = 0.80,
    ) -> None:
        ds = prefix_or_dataset
        self.dataset = ds if isinstance(ds, IndexedDataset) else IndexedDataset(ds)
        self.seq_length, self.seed, self.add_extra_token = seq_length, seed, add_extra_token
        n = len(self.dataset)
        docs = np.arange(n) if documents is None else _checked_documents(documents, n)
        prefix = self.dataset.prefix
        if docs.size == 0 or int(self.dataset.sequence_lengths[docs].sum(dtype=np.int64)) == 0:
            raise InputError(f"{prefix}: the {docs.size} selected documents hold no tokens to sample from")
        self.description = self._describe(docs, num_samples, separate_final_epoch_threshold)
        self.fingerprint = _sha256(json.dumps(self.description, sort_keys=True).encode())
        if cache_dir is None:
            cache_dir = os.path.dirname(prefix) or "."
        stem = fs.join(cache_dir, f"{os.path.basename(prefix)}.gpt-{self.fingerprint[:20]}")
        self.cache_paths = {name: f"{stem}.{name}.npy" for name in _INDEX_NAMES}
        marker = f"{stem}.description.json"
        self.cache_hit = fs.exists(marker) and all(fs.exists(p) for p in self.cache_paths.values())
        if self.cache_hit:
            arrays = [self._load(self.cache_paths[name]) for name in _INDEX_NAMES]
        else:
            arrays = list(
                build_indices(
                    self.dataset.sequence_lengths, docs, seq_length, num_samples, seed,
                    add_extra_token, separate_final_epoch_threshold,
                )
            )  # fmt: skip
            for name, array in zip(_INDEX_NAMES, arrays, strict=True):
                with fs.atomic_open(self.cache_paths[name], "wb") as f:
                    np.save(f, array)
            fs.atomic_write(marker, json.dumps(self.description, indent=1, sort_keys=True))
        self.document_index, self.sample_index, self.shuffle_index = arrays
        self.num_epochs = self.description["num_epochs"]
        self.num_samples = len(self.sample_index) - 1 if num_samples is None else num_samples
        self._extra = int(add_extra_token)

    def _describe(self, docs: np.ndarray, num_samples: int | None, threshold: float) -> dict[str, Any]:
        """Everything the indices depend on; its hash keys the cache and is the dataset fingerprint."""
        filesystem, idx = fs.get_fs(self.dataset.idx_path)
        with filesystem.open(idx, "rb") as f:
            header = f.read(HEADER_SIZE)
        lengths = self.dataset.sequence_lengths
        tokens = int(lengths[docs].sum(dtype=np.int64))
        extra = int(self.add_extra_token)
        return {"format": CACHE_FORMAT, "class": "GPTDataset", "path": os.path.abspath(idx),
                "idx_size": fs.size(self.dataset.idx_path), "idx_header_sha256": _sha256(header),
                "sequence_lengths_sha256": _sha256(np.ascontiguousarray(lengths).data),
                "documents_sha256": _sha256(np.ascontiguousarray(docs, dtype=np.int64).data),
                "documents": int(docs.size), "tokens_per_epoch": tokens,
                "num_epochs": num_epochs(tokens, self.seq_length, num_samples, extra),
                "seq_length": self.seq_length, "num_samples": num_samples, "seed": self.seed,
                "add_extra_token": self.add_extra_token, "separate_final_epoch_threshold": threshold}  # fmt: skip

    @staticmethod
    def _load(path: str) -> np.ndarray:
        try:
            if fs.is_local(path):
                return np.load(fs.get_fs(path)[1], mmap_mode="r")  # shared page cache across ranks
            return np.load(io.BytesIO(fs.read_bytes(path)))
        except (OSError, ValueError) as e:
            raise InputError(f"{path}: cached GPT index is unreadable ({e}); delete it to rebuild") from None

    def __len__(self) -> int:
        return self.num_samples

    def __getitem__(self, i: int) -> np.ndarray:
        """Sample `i` (after the shuffle): ``seq_length + 1`` token ids as int64."""
        if not 0 <= i < self.num_samples:
            raise IndexError(f"sample {i} out of range for a dataset of {self.num_samples} samples")
        j = int(self.shuffle_index[i])
        k0, o0 = (int(x) for x in self.sample_index[j])
        k1, o1 = (int(x) for x in self.sample_index[j + 1])
        out = np.empty(self.seq_length + self._extra, dtype=np.int64)
        doc, get = self.document_index, self.dataset.get
        if k0 == k1:
            out[:] = get(int(doc[k0]), o0, o1 - o0 + self._extra)
            return out
        pos = 0
        for k in range(k0, k1 + 1):
            part = get(int(doc[k]), o0 if k == k0 else 0, None if k < k1 else o1 + self._extra)
            out[pos : pos + len(part)] = part
            pos += len(part)
        return out


def normalize_weights(weights: Sequence[float]) -> list[float]:
    """Weights summing to 1, computed as Megatron's ``normalize`` does (numpy sum, then divide)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or not len(w) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ConfigError(f"blend weights must be finite, non-negative and not all zero, got {list(weights)}")
    return [float(x) for x in w / np.sum(w)]


def build_blending_indices(weights: Sequence[float], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Megatron's greedy blend: (dataset of each sample, its sample number within that dataset).

    Sample ``i`` goes to the dataset with the largest error ``w_d * max(i, 1) - taken_d`` (ties to the
    lowest index), as helpers.cpp ``build_blending_indices`` computes it: so every prefix of the blend
    follows the weights, not just the whole. The greedy step depends on all earlier ones, so it stays
    a loop; with plain floats it does 10M samples of a 3-way blend in about 2 s.
    """
    w = [float(x) for x in weights]
    taken = [0] * len(w)
    choice = [0] * size
    rest = range(1, len(w))
    for i in range(size):
        t = float(i) if i > 1 else 1.0
        best, best_error = 0, w[0] * t - taken[0]
        for d in rest:
            error = w[d] * t - taken[d]
            if error > best_error:
                best, best_error = d, error
        choice[i] = best
        taken[best] += 1
    dataset_index = np.array(choice, dtype=np.int16)
    sample_index = np.empty(size, dtype=np.int64)
    for d in range(len(w)):
        mask = dataset_index == d
        sample_index[mask] = np.arange(int(mask.sum()), dtype=np.int64)
    return dataset_index, sample_index


class BlendedDataset:
    """`size` samples drawn from `datasets` in proportion to `weights` (``--data-path w1 p1 w2 p2``).

    Sample ``i`` is the next unused sample of the dataset chosen by Megatron's greedy rule. Each
    component must hold at least the samples the blend takes from it (Megatron builds each with
    ``ceil(size * weight * 1.005)``); the error says how many are needed.
    """

    def __init__(self, datasets: Sequence[SampleDataset], weights: Sequence[float], size: int) -> None:
        if not datasets or len(datasets) != len(weights) or len(datasets) > np.iinfo(np.int16).max:
            raise ConfigError(
                f"a blend needs one weight per dataset: {len(datasets)} datasets, {len(weights)} weights"
            )
        if len({d.seq_length for d in datasets}) != 1:
            raise ConfigError(f"blended datasets differ in seq_length: {[d.seq_length for d in datasets]}")
        self.datasets, self.size = list(datasets), size
        self.weights = normalize_weights(weights)
        self.dataset_index, self.dataset_sample_index = build_blending_indices(self.weights, size)
        taken = np.bincount(self.dataset_index, minlength=len(datasets))
        for d, ds in enumerate(datasets):
            if taken[d] > len(ds):
                raise ConfigError(
                    f"blend component {d} has {len(ds)} samples but the blend takes {int(taken[d])}; "
                    f"build it with num_samples >= {int(taken[d])}"
                )
        self.seq_length, self.seed = datasets[0].seq_length, datasets[0].seed
        parts = {"class": "BlendedDataset", "datasets": [d.fingerprint for d in datasets]}
        self.fingerprint = _sha256(json.dumps({**parts, "weights": self.weights, "size": size}).encode())

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> np.ndarray:
        return self.datasets[int(self.dataset_index[i])][int(self.dataset_sample_index[i])]


class CursorMismatchError(ConfigError):
    """A saved data cursor belongs to a different dataset (data, split or parameters changed)."""


@dataclass(frozen=True)
class Cursor:
    """Where training stands in a dataset: the next sample `position` in pass `epoch` over it.

    Saved in the checkpoint so a resumed run reads exactly the samples an uninterrupted one would; the
    `fingerprint` ties it to the dataset (data, split and parameters) it was made for.
    """

    position: int
    epoch: int
    seed: int
    seq_length: int
    num_samples: int
    fingerprint: str

    @classmethod
    def start(cls, dataset: SampleDataset) -> Cursor:
        return cls(0, 0, dataset.seed, dataset.seq_length, len(dataset), dataset.fingerprint)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cursor:
        names = {f.name: f.type for f in fields(cls)}
        missing = sorted(set(names) - set(data))
        if missing:
            raise InputError(f"data cursor lacks {missing}; got keys {sorted(data)}")
        for name in names:
            want = str if name == "fingerprint" else int
            if not isinstance(data[name], want) or isinstance(data[name], bool):
                raise InputError(f"data cursor field {name!r} must be {want.__name__}, got {data[name]!r}")
        return cls(**{name: data[name] for name in names})


def iterate(
    dataset: SampleDataset, cursor: Cursor | None, batch_size: int
) -> Iterator[tuple[np.ndarray, Cursor]]:
    """Endless batches ``(batch_size, seq_length + 1)`` from `cursor` on, each with the cursor after it.

    After the last sample the next pass starts again at sample 0 (`epoch` + 1) in the same order; a
    batch may straddle the wrap. Pass None to start at the beginning.
    """
    n = len(dataset)
    if batch_size < 1 or n == 0:
        raise ValueError(f"need batch_size >= 1 and a non-empty dataset, got {batch_size} and {n} samples")
    if cursor is None:
        cursor = Cursor.start(dataset)
    elif cursor.fingerprint != dataset.fingerprint:
        raise CursorMismatchError(
            f"the data cursor was saved for dataset {cursor.fingerprint[:16]} (seq_length {cursor.seq_length}, "
            f"{cursor.num_samples} samples, seed {cursor.seed}) but this dataset is {dataset.fingerprint[:16]} "
            f"(seq_length {dataset.seq_length}, {n} samples, seed {dataset.seed}): the data, split, "
            "seq_length, num_samples or seed changed; restore the original data config, or start a fresh cursor"
        )
    if not 0 <= cursor.position <= n:
        raise CursorMismatchError(f"data cursor position {cursor.position} is outside [0, {n}]")
    while True:
        rows, cursor = take(dataset, cursor, batch_size)
        yield rows, cursor


def take(dataset: SampleDataset, cursor: Cursor, size: int) -> tuple[np.ndarray, Cursor]:
    """The next `size` samples from `cursor` (wrapping into a new epoch), and the cursor after them."""
    n = len(dataset)
    position, epoch = cursor.position, cursor.epoch
    rows = []
    for _ in range(size):
        if position == n:
            position, epoch = 0, epoch + 1
        rows.append(dataset[position])
        position += 1
    return np.stack(rows), replace(cursor, position=position, epoch=epoch)
