"""A tiktoken encoding as a Hugging Face ``tokenizer.json`` that gives the same ids (for the export).

tiktoken and a byte-level BPE ``tokenizer.json`` run the same algorithm in different terms:

- Pre-tokenization: tiktoken cuts the text with its pattern; so does a ``Split`` pre-tokenizer with
  the same regex (isolated pieces; one construct rewritten for Oniguruma, `onig_pattern`), followed by ``ByteLevel`` without its own regex, which only maps
  each UTF-8 byte to a printable character (GPT-2's table, `byte_chars`) as BPE vocabularies store them.
- A piece that is one token as a whole is that token in tiktoken (before any merging); ``ignore_merges``
  makes the BPE model do the same.
- Merging: tiktoken repeatedly joins the adjacent pair whose concatenation has the lowest rank; a BPE
  model joins the pair listed first in its merges. Listing, in rank order of the merged token, every
  way to cut each token into two tokens gives the same choice at every step. (Only when two different
  cuts of one token apply at overlapping places of one piece does tiktoken take the leftmost and the
  BPE model the cut listed first; no real vocabulary needs that.)
- Special tokens keep their ids as added tokens; the export sets ``split_special_tokens`` so that their
  text inside a document stays text, as in ``encode_ordinary``.
"""

from __future__ import annotations

import json
import re
from functools import cache

from selene.tokenize.tiktoken_encodings import Spec


@cache
def byte_chars() -> tuple[str, ...]:
    """The printable character that stands for each byte in a byte-level BPE vocabulary (GPT-2's
    table, which ``tokenizers``' ByteLevel uses): printable Latin-1 bytes stand for themselves, the
    other 68 take the code points from 256 up, in byte order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars: dict[int, str] = {b: chr(b) for b in keep}
    extra = 256
    for b in range(256):
        if b not in chars:
            chars[b] = chr(extra)
            extra += 1
    return tuple(chars[b] for b in range(256))


def token_text(token: bytes) -> str:
    """A token's bytes as its byte-level vocabulary entry."""
    table = byte_chars()
    return "".join(table[b] for b in token)


def merges(ranks: dict[bytes, int]) -> list[tuple[str, str]]:
    """Every (left, right) cut of every multi-byte token into two tokens, ordered by the rank of the
    token they make (then by where the cut is): the BPE merges that reproduce tiktoken's choices."""
    out: list[tuple[int, int, str, str]] = []
    for token, rank in ranks.items():
        for i in range(1, len(token)):
            left, right = token[:i], token[i:]
            if left in ranks and right in ranks:
                out.append((rank, i, token_text(left), token_text(right)))
    out.sort()
    return [(a, b) for _, _, a, b in out]


_INTERVAL_PLUS = re.compile(r"\{\d+(?:,\d*)?\}\+")


def _atom_start(pat: str, end: int) -> int:
    """Where the regex atom that ends just before `end` begins: a group, a class, ``\\p{..}``, an
    escape or one character."""
    close = pat[end - 1]
    if close == ")" or close == "]":
        depth, i = 0, end - 1
        while i >= 0:
            escaped = i > 0 and pat[i - 1] == "\\"
            if not escaped and pat[i] == close:
                depth += 1
            elif not escaped and pat[i] == {")": "(", "]": "["}[close]:
                depth -= 1
                if depth == 0:
                    return i
            i -= 1
        raise ValueError(f"unbalanced {close!r} in {pat!r}")
    if close == "}" and (p := pat.rfind("\\", 0, end)) >= 0 and pat[p + 1 : p + 2] in ("p", "P"):
        return p
    return end - 2 if end >= 2 and pat[end - 2] == "\\" else end - 1


def onig_pattern(pat: str) -> str:
    """tiktoken's pattern (Rust fancy-regex syntax) for the Oniguruma engine of ``tokenizers``.

    One construct reads differently there: a possessive interval ``X{1,3}+`` (cl100k_base's digits)
    is, in Oniguruma's Ruby syntax, ``(?:X{1,3})+``: any run of digits would be one piece. The atomic
    group ``(?>X{1,3})`` is the same possessive match in both engines. ``?+``, ``*+`` and ``++`` mean
    the same in both and stay."""
    while m := _INTERVAL_PLUS.search(pat):
        start = _atom_start(pat, m.start())
        pat = f"{pat[:start]}(?>{pat[start : m.start()]}{m.group()[:-1]}){pat[m.end() :]}"
    return pat


def tokenizer_json(ranks: dict[bytes, int], spec: Spec) -> str:
    """The ``tokenizer.json`` of the encoding (`ranks` as a ``.tiktoken`` file holds them, `spec`)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab = {token_text(t): r for t, r in ranks.items()}
    tok = Tokenizer(models.BPE(vocab, merges(ranks), ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(onig_pattern(spec.pat_str)), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    data = json.loads(tok.to_str())
    # written directly, not with add_special_tokens: that one numbers them after the vocabulary, and
    # tiktoken's ids have gaps (cl100k_base: 100257-100260 and 100276)
    data["added_tokens"] = [
        {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for t, i in sorted(spec.special_tokens.items(), key=lambda x: x[1])
    ]  # fmt: skip
    return json.dumps(data, ensure_ascii=False)
