"""Small tiktoken encodings built offline for the tests: the 256 single bytes plus merges learned
from a few lines of text, written as a ``.tiktoken`` file with its ``.tiktoken.json`` beside it."""

from __future__ import annotations

import base64
import itertools
import json
from collections import Counter
from pathlib import Path

import regex

# cl100k_base's split pattern (tiktoken_ext.openai_public), so the tests split text as a real encoding does
PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
EOS = "<|endoftext|>"


def learn_ranks(lines: list[str], n_merges: int) -> dict[bytes, int]:
    """Byte-level BPE ranks: the 256 bytes, then up to `n_merges` merges of the most frequent adjacent
    pair within the pieces `PATTERN` cuts (ties: the smallest pair), each new token the next rank."""
    ranks = {bytes([b]): b for b in range(256)}
    words = Counter(
        tuple(bytes([b]) for b in p.encode()) for line in lines for p in regex.findall(PATTERN, line)
    )
    for _ in range(n_merges):
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for w, n in words.items():
            for a, b in itertools.pairwise(w):
                pairs[a, b] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        ranks.setdefault(best[0] + best[1], len(ranks))
        merged: Counter[tuple[bytes, ...]] = Counter()
        for w, n in words.items():
            out: list[bytes] = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return ranks


def tiktoken_bytes(ranks: dict[bytes, int]) -> bytes:
    return b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in sorted(ranks.items(), key=lambda x: x[1]))


def write_encoding(path: Path, ranks: dict[bytes, int], special: dict[str, int] | None = None) -> str:
    """`path` (a ``.tiktoken`` file) and its ``.json`` with `PATTERN` and the special tokens (default:
    `EOS` right after the ranks); returns the path as a string."""
    path.write_bytes(tiktoken_bytes(ranks))
    special = {EOS: len(ranks)} if special is None else special
    Path(f"{path}.json").write_text(
        json.dumps({"name": "tiny", "pat_str": PATTERN, "special_tokens": special})
    )
    return str(path)
