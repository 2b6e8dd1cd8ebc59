"""The features of a line, exactly as fastText 0.9.2's `Dictionary` computes them: its tokens, their
hashes, the word n-gram buckets, and the labels.

A difference here would not fail loudly: fastText would silently average rows other than the
trained ones (`tests/quality/test_fasttext.py` compares fastText's probabilities with the forward pass).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

LABEL_PREFIX = "__label__"
EOS = "</s>"

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


def normalize(text: str) -> str:
    """The one line fastText scores for a document: newlines become spaces.

    fastText classifies a line (its `predict` refuses a newline), so a document is flattened first,
    as NeMo Curator (``text.replace("\\n", " ")``) does. datatrove's FastTextClassifierFilter
    replaces each newline with its `newline_replacement`, by default "" (the words either side of a
    line break become one token): give it ``newline_replacement=" "`` for selene's scores
    (`benchmarks/quality.py`: then its decisions and scores are selene's). DCLM's enricher joins ``text.strip().splitlines()``, which
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
