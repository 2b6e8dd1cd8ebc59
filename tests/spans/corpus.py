"""Small random corpora with planted repeats for the spans tests, and a brute-force reference of the
stage's decisions: every document in corpus order, a set of the spans seen, plain Python."""

from __future__ import annotations

import random

from selene.spans.config import SpansConfig
from selene.spans.sentences import sentence_ends
from selene.spans.units import normalize, unit_ends, units
from selene.spans.words import count_words

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "stone",
    "cloud",
    "light",
    "paper",
    "garden",
    "window",
    "silver",
    "orange",
    "market",
]
JOIN = {"sentence": " ", "line": "\n", "paragraph": "\n\n"}


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(3, 9))
    end = rng.choice([".", ".", "!", "?", '."', ".)"])
    abbrev = rng.choice(["", "", " Mr. Smith", " e.g. this", " 3.5 units"])
    return " ".join(words).capitalize() + abbrev + end


def planted_corpus(unit: str, n_docs: int = 120, seed: int = 0) -> list[tuple[str, str]]:
    """(id, text) documents of 3-12 units drawn from a small pool (so spans repeat), some with a
    planted block of boilerplate, some exact copies, one empty."""
    rng = random.Random(seed)
    pool = [sentence(rng) for _ in range(40)]
    if unit == "paragraph":
        pool = [" ".join(rng.sample(pool, rng.randint(1, 3))) for _ in range(40)]
    boiler = [sentence(rng) for _ in range(4)]
    docs = []
    for i in range(n_docs):
        parts = [rng.choice(pool) for _ in range(rng.randint(3, 12))]
        if rng.random() < 0.3:
            at = rng.randint(0, len(parts))
            parts[at:at] = boiler
        docs.append((f"doc{i:04d}", JOIN[unit].join(parts)))
    docs[5] = ("doc0005", docs[3][1])  # an exact copy
    docs[7] = ("doc0007", "")
    return docs


def reference(docs: list[tuple[str, str]], cfg: SpansConfig) -> tuple[dict[str, str], dict[str, str]]:
    """What the stage must do, decided by brute force: (id → text kept, id → reason removed)."""
    assert cfg.unit is not None
    seen: set[str] = set()
    kept: dict[str, str] = {}
    removed: dict[str, str] = {}
    for doc_id, text in docs:
        parts = units(text, unit_ends(text, cfg.unit))
        hashed = list(parts)
        if cfg.unit != "line":
            while hashed and not hashed[-1].strip():
                hashed.pop()
        norm = [normalize(p, cfg) for p in hashed]
        drop = [False] * len(parts)
        for i in range(len(norm) - cfg.span + 1):
            key = " ".join(norm[i : i + cfg.span])
            if not key.strip() or len(key) < cfg.min_span_chars:
                continue
            if key in seen:
                for k in range(i, i + cfg.span):
                    drop[k] = True
            seen.add(key)
        if not any(drop):
            kept[doc_id] = text
            continue
        left = "".join(p for p, d in zip(parts, drop, strict=True) if not d).lstrip()
        short = (cfg.min_doc_words and count_words(left) < cfg.min_doc_words) or (
            cfg.min_sentences and len(sentence_ends(left)) < cfg.min_sentences
        )
        if not left or short:
            removed[doc_id] = "spans:too_short"
        else:
            kept[doc_id] = left
    return kept, removed
