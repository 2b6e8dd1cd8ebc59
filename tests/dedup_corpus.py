"""A corpus with planted near-duplicates at controlled Jaccard levels, and brute-force ground truth.

Base documents are prose from the Python language reference (`pydoc_data.topics`, always installed):
consecutive paragraphs of one topic, 80-400 words. Each base gets variants whose word-5-gram Jaccard
with it spans 0.3-1.0, made by replacing, deleting and inserting words: as many edits as bring the exact Jaccard closest
to the target (one edit costs up to 5 shingles, so short documents reach it in coarser steps). Jaccard here is computed with Python sets of shingle
tuples from an independent regex tokeniser, never with selene's hashes, so it can judge them.
"""

from __future__ import annotations

import functools
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
    words = reference_words(text)
    return _shingles(list(" ".join(words)) if kind == "char" else words, ngram)


def _shingles(units: list[str], ngram: int) -> set[tuple[str, ...]]:
    if not units:
        return set()
    n = min(ngram, len(units))
    return {tuple(units[i : i + n]) for i in range(len(units) - n + 1)}


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when both are empty (empty documents are never duplicates)."""
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return inter / union if union else 0.0


def exact_jaccard(a_text: str, b_text: str, ngram: int = 5, kind: str = "word") -> float:
    return jaccard(shingle_set(a_text, ngram, kind), shingle_set(b_text, ngram, kind))


def pairs_at_least(
    docs: list[tuple[str, str]], min_j: float, ngram: int = 5, kind: str = "word"
) -> dict[tuple[int, int], float]:
    """Every pair (i < j, indices into `docs`) with exact Jaccard >= min_j, with its Jaccard.

    Brute force over all pairs that can qualify: for min_j > 0 only pairs sharing a shingle can (an
    inverted index lists exactly those) and only pairs whose set sizes are within a ratio of min_j:
    the answer of the O(n²) loop, in a fraction of its time.
    """
    sets = [shingle_set(text, ngram, kind) for _, text in docs]
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, s in enumerate(sets):
        for sh in s:
            index[sh].append(i)
    out = {}
    for i, s in enumerate(sets):
        others = range(i + 1, len(docs)) if min_j <= 0 else set().union(*(index[sh] for sh in s))
        for j in others:
            small, large = sorted((len(s), len(sets[j])))
            if j <= i or small < min_j * large * (1 - 1e-12):  # J <= |small|/|large|: cannot qualify
                continue
            if (jac := jaccard(s, sets[j])) >= min_j:
                out[(i, j)] = jac
    return out


def base_documents(count: int, min_words: int = 80, max_words: int = 400, seed: int = 0) -> list[str]:
    """Up to `count` distinct prose documents of min_words-max_words words (each with its own random
    length goal in that range): consecutive paragraphs of one topic, code examples left out."""
    rng = random.Random(seed)
    docs: list[str] = []
    for name in sorted(topics):
        current: list[str] = []
        sizes: list[int] = []
        goal = rng.randint(min_words, max_words)
        for para in topics[name].split("\n\n"):
            para = " ".join(para.split())
            if not para or para.startswith((">>>", "...")) or topics[name].count(para) > 1:
                continue
            size = len(reference_words(para))
            if size > max_words:
                continue
            if size + sum(sizes) > max_words:
                current, sizes = [], []
            current.append(para)
            sizes.append(size)
            if sum(sizes) >= goal:
                docs.append("\n\n".join(current))
                current, sizes, goal = [], [], rng.randint(min_words, max_words)
            if len(docs) == count:
                return docs
    return docs


def _edit_plan(words: list[str], rng: random.Random, vocab: list[str]) -> list[tuple[int, str, str]]:
    """Every position once, in random order, with an edit: replace (1/2), delete (1/4), insert (1/4)."""
    order = rng.sample(range(len(words)), len(words))
    ops = rng.choices(("replace", "replace", "delete", "insert"), k=len(words))
    return [(i, op, rng.choice(vocab)) for i, op in zip(order, ops, strict=True)]


def _apply(words: list[str], plan: list[tuple[int, str, str]]) -> list[str]:
    pieces = list(words)
    for i, op, new in plan:
        pieces[i] = new if op == "replace" else "" if op == "delete" else f"{new} {words[i]}"
    return " ".join(p for p in pieces if p).split()


def _restyle(text: str, rng: random.Random) -> str:
    """The same words with other case, spacing and punctuation: Jaccard 1.0 after normalisation."""
    words = text.split()
    styled = [w.upper() if rng.random() < 0.2 else w for w in words]
    return "  ".join(styled).replace(",", " ;").replace(".", "!")


def variant(base: str, target: float, rng: random.Random, vocab: list[str], ngram: int = 5) -> str:
    """A variant of `base` whose exact word-`ngram` Jaccard with it is close to `target` (see module doc)."""
    if target >= 1.0:
        return _restyle(base, rng)
    words = reference_words(base)
    base_set = shingle_set(base, ngram)
    plan = _edit_plan(words, rng, vocab)

    @functools.cache
    def jac(k: int) -> float:
        return jaccard(base_set, _shingles(_apply(words, plan[:k]), ngram))

    # The first k edits of one fixed plan: the Jaccard falls as k grows, so bisection finds the
    # smallest k at or below the target; k - 1 is the other candidate.
    lo, hi = 0, len(plan)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if jac(mid) > target else (lo, mid)
    k = min((lo, max(lo - 1, 0)), key=lambda k: abs(jac(k) - target))
    return " ".join(_apply(words, plan[:k]))


@dataclass
class PlantedCorpus:
    docs: list[tuple[str, str]]  # (id, text)
    planted: list[tuple[int, int, float]] = field(default_factory=list)  # (base, variant, exact J)


def planted_corpus(n_base: int = 100, targets: tuple[float, ...] = TARGETS, seed: int = 0) -> PlantedCorpus:
    """`n_base` base documents, each followed by one variant per target Jaccard (ids `b<k>` and
    `b<k>v<target>`); `planted` records each (base index, variant index, exact Jaccard)."""
    rng = random.Random(seed)
    bases = base_documents(n_base, seed=seed)
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
