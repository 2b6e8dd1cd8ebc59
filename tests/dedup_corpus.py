"""A corpus with planted near-duplicates at controlled Jaccard levels, and brute-force ground truth.

Base documents are prose from the Python language reference (`pydoc_data.topics`, always installed):
consecutive paragraphs of one topic, 80-400 words. Each base gets variants whose word-5-gram Jaccard
with it spans 0.3-1.0, made by replacing, deleting and inserting words at a rate calibrated until the
exact Jaccard is within 0.02 of the target. Jaccard here is computed with Python sets of shingle
tuples from an independent regex tokeniser, never with selene's hashes, so it can judge them.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field

from pydoc_data.topics import topics

TARGETS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3)
_SPLIT = re.compile(r"[\W_]+")


def reference_words(text: str) -> list[str]:
    """Lower case, every run of non-alphanumerics (and '_') a separator: selene's `normalise` on ASCII
    and on the pydoc prose, written independently of it."""
    return _SPLIT.sub(" ", text.lower()).split()


def shingle_set(text: str, ngram: int = 5, kind: str = "word") -> set[tuple[str, ...]]:
    """Shingles as tuples of words (or characters of the normalised text); the whole text if shorter."""
    units: list[str] = reference_words(text)
    if kind == "char":
        units = list(" ".join(units))
    if not units:
        return set()
    n = min(ngram, len(units))
    return {tuple(units[i : i + n]) for i in range(len(units) - n + 1)}


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when both are empty (empty documents are never duplicates)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def exact_jaccard(a_text: str, b_text: str, ngram: int = 5, kind: str = "word") -> float:
    return jaccard(shingle_set(a_text, ngram, kind), shingle_set(b_text, ngram, kind))


def pairs_at_least(
    docs: list[tuple[str, str]], min_j: float, ngram: int = 5, kind: str = "word"
) -> dict[tuple[int, int], float]:
    """Every pair (i < j, indices into `docs`) with exact Jaccard >= min_j, with its Jaccard.

    Brute force over all pairs that can qualify: for min_j > 0 only pairs sharing a shingle can, and
    an inverted index lists exactly those (the same answer as the O(n²) loop, in a fraction of the time).
    """
    sets = [shingle_set(text, ngram, kind) for _, text in docs]
    if min_j <= 0:
        candidates: set[tuple[int, int]] = set(itertools.combinations(range(len(docs)), 2))
    else:
        index: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i, s in enumerate(sets):
            for sh in s:
                index[sh].append(i)
        candidates = {pair for ids in index.values() if len(ids) > 1 for pair in itertools.combinations(ids, 2)}
    out = {}
    for i, j in candidates:
        jac = jaccard(sets[i], sets[j])
        if jac >= min_j:
            out[(i, j)] = jac
    return out


def base_documents(count: int, min_words: int = 80, max_words: int = 400) -> list[str]:
    """Up to `count` distinct prose documents: consecutive paragraphs of a topic, code left out."""
    docs: list[str] = []
    for name in sorted(topics):
        current: list[str] = []
        for para in topics[name].split("\n\n"):
            para = " ".join(para.split())
            if not para or para.startswith((">>>", "...")) or topics[name].count(para) > 1:
                continue
            if len(para.split()) + sum(len(p.split()) for p in current) > max_words:
                current = []
            current.append(para)
            if sum(len(p.split()) for p in current) >= min_words:
                docs.append("\n\n".join(current))
                current = []
            if len(docs) == count:
                return docs
    return docs


def _mutate(words: list[str], rate: float, rng: random.Random, vocab: list[str]) -> list[str]:
    """Each word, with probability `rate`: replaced (1/2), deleted (1/4) or preceded by a new word (1/4)."""
    out: list[str] = []
    for w in words:
        if rng.random() >= rate:
            out.append(w)
            continue
        op = rng.random()
        if op < 0.5:
            out.append(rng.choice(vocab))
        elif op < 0.75:
            out.extend((rng.choice(vocab), w))
    return out or [rng.choice(vocab)]


def _restyle(text: str, rng: random.Random) -> str:
    """The same words with other case, spacing and punctuation: Jaccard 1.0 after normalisation."""
    words = text.split()
    styled = [w.upper() if rng.random() < 0.2 else w for w in words]
    return "  ".join(styled).replace(",", " ;").replace(".", "!")


def variant(base: str, target: float, rng: random.Random, vocab: list[str], ngram: int = 5) -> str:
    """A variant of `base` whose exact word-`ngram` Jaccard with it is within ~0.02 of `target`."""
    if target >= 1.0:
        return _restyle(base, rng)
    words = reference_words(base)
    base_set = shingle_set(base, ngram)
    # Surviving shingle share s gives J = s / (2 - s); a shingle survives when its n words do.
    survive = 2 * target / (1 + target)
    lo, hi = 0.0, 1.0
    rate = 1 - survive ** (1 / ngram)
    best, best_err = " ".join(words), 1.0
    for _ in range(12):
        text = " ".join(_mutate(words, rate, rng, vocab))
        jac = jaccard(base_set, shingle_set(text, ngram))
        if abs(jac - target) < best_err:
            best, best_err = text, abs(jac - target)
        if best_err <= 0.02:
            break
        lo, hi = (rate, hi) if jac > target else (lo, rate)
        rate = (lo + hi) / 2
    return best


@dataclass
class PlantedCorpus:
    docs: list[tuple[str, str]]  # (id, text)
    planted: list[tuple[int, int, float]] = field(default_factory=list)  # (base, variant, exact J)


def planted_corpus(n_base: int = 100, targets: tuple[float, ...] = TARGETS, seed: int = 0) -> PlantedCorpus:
    """`n_base` base documents, each followed by one variant per target Jaccard (ids `b<k>` and
    `b<k>v<target>`); `planted` records each (base index, variant index, exact Jaccard)."""
    rng = random.Random(seed)
    bases = base_documents(n_base)
    vocab = sorted({w for b in bases for w in reference_words(b)})
    corpus = PlantedCorpus(docs=[])
    for k, base in enumerate(bases):
        b_index = len(corpus.docs)
        corpus.docs.append((f"b{k}", base))
        for t in targets:
            text = variant(base, t, rng, vocab)
            corpus.planted.append((b_index, len(corpus.docs), exact_jaccard(base, text)))
            corpus.docs.append((f"b{k}v{t:g}", text))
    return corpus
