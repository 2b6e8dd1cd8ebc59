"""Text → normalised words → 64-bit hashes of the distinct shingles (word or character n-grams).

Everything after tokenisation is numpy over whole arrays: one C call per word hashes it (xxh3), and
the n-gram hashes are combined for all positions at once, so the cost per document is a handful of
numpy calls, not a Python loop per shingle. Hashes are deterministic across processes, machines and
runs (xxh3 with seed 0 and fixed mixing constants; Python's salted `hash()` is never used).
"""

from __future__ import annotations

import codecs
import functools
import itertools
import json
import os
import re
import string
import sys
import unicodedata
from typing import Literal

import numpy as np
import xxhash

from selene.hashing import GOLDEN, fmix64
from selene.procs import home

ShingleKind = Literal["word", "char"]

# ASCII: upper → lower; punctuation (string.punctuation, '_' included) and control bytes → space.
# On ASCII text, bytes.translate + split run at memory speed (~15 µs for 5 KB, 5x the regex path).
_ASCII_FOLD = bytes(
    0x20 if b < 0x20 or b == 0x7F or chr(b) in string.punctuation else (b + 32 if 65 <= b <= 90 else b)
    for b in range(256)
)
_NON_BMP = re.compile("[\U00010000-\U0010ffff]")
_CHAR_SALT = np.uint64(0x243F6A8885A308D3)  # keeps a code point's hash away from its small value


@functools.cache
def _fold_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Regexes of the Unicode punctuation (P*), symbols (S*), separators (Z*) and controls (Cc).

    Built on first use from `unicodedata`; the ranges take ~0.3 s to find, so they are kept in the
    selene home per Unicode version (`_fold_ranges`). The BMP and the other planes get separate
    character classes: `re` keeps a class of BMP ranges as a bitmap (~80 µs for 5 KB), while a class
    that also holds astral ranges is scanned range by range (10x slower).
    """
    ranges = _fold_ranges()

    def cls(lo: int, hi: int) -> str:
        parts = [
            re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
            for a, b in ((max(a, lo), min(b, hi)) for a, b in ranges)
            if a <= b
        ]
        return f"[{''.join(parts)}]+"

    return re.compile(cls(0, 0xFFFF)), re.compile(cls(0x10000, sys.maxunicode))


def _fold_ranges() -> list[list[int]]:
    """[first, last] code point runs of categories P*, S*, Z* and Cc, cached on disk by Unicode version."""
    cache = home() / "cache" / f"fold-ranges-unicode-{unicodedata.unidata_version}.json"
    try:
        return list(json.loads(cache.read_text()))
    except (OSError, ValueError):
        pass
    ranges: list[list[int]] = []
    for cp in range(sys.maxunicode + 1):
        cat = unicodedata.category(chr(cp))
        if cat[0] in "PSZ" or cat == "Cc":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    try:  # a cache only: a read-only home just means the next process finds them again
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(ranges))
        os.replace(tmp, cache)
    except OSError:
        pass
    return ranges


@functools.lru_cache(maxsize=1 << 14)
def _fold_run(run: str) -> bytes:
    """UTF-8 of a run of non-ASCII characters, its punctuation, symbols and separators → spaces."""
    bmp, astral = _fold_patterns()
    return astral.sub(" ", bmp.sub(" ", run)).encode("utf-8", "surrogatepass")


def _fold_error(err: UnicodeError) -> tuple[bytes, int]:
    """`str.encode` error handler: folds each run of non-ASCII characters as `_fold_run` does."""
    assert isinstance(err, UnicodeEncodeError)
    return _fold_run(err.object[err.start : err.end]), err.end


codecs.register_error("selene.dedup.fold", _fold_error)


def _words(text: str) -> list[bytes]:
    """UTF-8 words of the normalised text (see `normalise`)."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_FOLD).split()
    low = text.lower()
    if len(low.encode("utf-8", "surrogatepass")) - len(low) < len(low) >> 5:
        # Mostly ASCII (English with curly quotes, dashes, an accent): the encoder copies the ASCII
        # and calls `_fold_error` on each of the few non-ASCII runs (cached: the same "’" or "é"
        # recurs); the table then folds the ASCII. 3x cheaper than the regex over every character.
        data = low.encode("ascii", "selene.dedup.fold").translate(_ASCII_FOLD)
    else:
        bmp, astral = _fold_patterns()
        low = bmp.sub(" ", low)
        data = (astral.sub(" ", low) if _NON_BMP.search(low) else low).encode("utf-8", "surrogatepass")
    # Every separator is now an ASCII space or control byte, so splitting the bytes splits the words.
    return data.split()


def normalise(text: str) -> str:
    """The text as the shingles see it: words in lower case separated by single spaces.

    - case: `str.lower()` (ASCII text: the same, on bytes);
    - punctuation, symbols, separators and control characters (Unicode categories P*, S*, Z*, Cc;
      on ASCII text exactly `string.punctuation` and bytes < 0x20 or 0x7F) become spaces, so
      "end." and "end" are one word and "state-of-the-art" is four; '_' is punctuation too;
    - runs of whitespace become one space; leading and trailing whitespace is removed.

    Letters, digits, combining marks (Indic vowel signs, decomposed accents) and format characters
    (ZWJ/ZWNJ) are kept, so words of non-Latin scripts stay whole. No Unicode normal form is applied
    (ingest's cleaning already ran ftfy). Category data comes from the running Python's `unicodedata`.
    """
    return b" ".join(_words(text)).decode("utf-8", "surrogatepass")


def _combine(tokens: np.ndarray, n: int) -> np.ndarray:
    """Hash of every run of `n` consecutive uint64 token hashes (one run of all when fewer than `n`).

    Rotate-xor-multiply over the n positions, vectorised across all runs: the rotation and the
    multiplication make the result depend on order ("a b" ≠ "b a"), the finaliser spreads it.
    """
    n = min(n, len(tokens))
    count = len(tokens) - n + 1
    h = np.full(count, (n * int(GOLDEN)) & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64)
    for k in range(n):
        h ^= tokens[k : k + count]
        h *= GOLDEN
        h = (h << np.uint64(31)) | (h >> np.uint64(33))
    return fmix64(h)


def shingle_hashes(text: str, ngram: int, kind: ShingleKind = "word") -> np.ndarray:
    """Sorted, distinct 64-bit hashes of the shingles of the normalised text (uint64 array).

    `kind="word"`: a shingle is `ngram` consecutive words; `kind="char"`: `ngram` consecutive
    characters of the normalised text (spaces included). A document shorter than `ngram` has one
    shingle, the whole of it, so that it still gets a signature. An empty (or all-punctuation)
    document has no shingles and gives an empty array: its MinHash signature is the "empty" row and
    it must not be compared with other documents as if it were text (the dedup stage skips it).
    """
    if ngram < 1:
        raise ValueError(f"ngram must be >= 1, got {ngram}")
    if kind == "word":
        words = _words(text)
        if not words:
            return np.empty(0, dtype=np.uint64)
        h3 = xxhash.xxh3_64_intdigest
        tokens = np.fromiter([h3(w) for w in words], dtype=np.uint64, count=len(words))
    elif kind == "char":
        norm = normalise(text)
        if not norm:
            return np.empty(0, dtype=np.uint64)
        # UTF-32 gives one uint32 per code point: the characters as an array without a Python loop.
        tokens = np.frombuffer(norm.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)
        tokens = fmix64(tokens ^ _CHAR_SALT)
    else:
        raise ValueError(f"shingle kind must be 'word' or 'char', got {kind!r}")
    return distinct(_combine(tokens, ngram))


def batch_hashes(texts: list[str], ngram: int, kind: ShingleKind = "word") -> tuple[np.ndarray, np.ndarray]:
    """The shingle hashes of many documents at once: (values, counts), the hashes of document i being
    ``values[sum(counts[:i]) : sum(counts[:i + 1])]``. Per document the same *set* as `shingle_hashes`
    (not sorted, repeats kept: a MinHash does not care), for a fraction of the cost: words are hashed
    in one pass over the batch and the n-gram combination runs once over all documents' tokens, so
    the per-document numpy overhead is gone."""
    if ngram < 1:
        raise ValueError(f"ngram must be >= 1, got {ngram}")
    if kind == "word":
        words = [_words(t) for t in texts]
        sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        tokens = np.fromiter(
            map(xxhash.xxh3_64_intdigest, itertools.chain.from_iterable(words)),
            dtype=np.uint64,
            count=int(sizes.sum()),
        )
    elif kind == "char":
        norms = [normalise(t) for t in texts]
        sizes = np.fromiter(map(len, norms), dtype=np.int64, count=len(norms))
        tokens = np.frombuffer("".join(norms).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(
            np.uint64
        )
        tokens = fmix64(tokens ^ _CHAR_SALT)
    else:
        raise ValueError(f"shingle kind must be 'word' or 'char', got {kind!r}")
    ends = np.cumsum(sizes)
    starts = ends - sizes
    counts = np.where(sizes >= ngram, sizes - ngram + 1, np.minimum(sizes, 1))
    if tokens.size >= ngram:
        # every run of `ngram` tokens, across document boundaries; the runs inside a document are kept
        combined = _combine(tokens, ngram)
        doc = np.repeat(np.arange(len(texts)), sizes)[: combined.size]
        inside = np.arange(combined.size) + ngram <= ends[doc]
        values = combined[inside]
    else:
        values = np.empty(0, dtype=np.uint64)
    short = np.flatnonzero((sizes > 0) & (sizes < ngram))
    if short.size:  # shorter than one shingle: one hash of the whole document, put in its place
        pieces = np.split(values, np.cumsum(np.where(sizes >= ngram, counts, 0))[:-1])
        for i in short.tolist():
            pieces[i] = _combine(tokens[starts[i] : ends[i]], ngram)
        values = np.concatenate(pieces) if pieces else values
    return values, counts


def distinct(h: np.ndarray) -> np.ndarray:
    """Sorted distinct values, sorting `h` in place; sort + mask, as numpy 2's `np.unique` is ~10x
    slower on uint64 here."""
    h.sort()
    keep = np.empty(len(h), dtype=bool)
    keep[:1] = True
    np.not_equal(h[1:], h[:-1], out=keep[1:])
    return h[keep]
