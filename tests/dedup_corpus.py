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

import numpy as np

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


# ------------------------------------------------------------------------------- real text

REAL_MAX_CHARS = 20_000  # a document is at most this many characters of its file (changelogs run to MB)


def _read_text(path: str) -> str:
    import gzip

    try:
        with gzip.open(path) if path.endswith(".gz") else open(path, "rb") as f:
            raw = f.read(REAL_MAX_CHARS * 4)
    except (OSError, EOFError):
        return ""
    return raw.decode("utf-8", errors="replace")[:REAL_MAX_CHARS]


def _spread(paths: list[str], count: int) -> list[str]:
    """`count` of the sorted `paths`, evenly spaced (all of them when there are fewer)."""
    paths = sorted(paths)
    if len(paths) <= count:
        return paths
    return [paths[i * len(paths) // count] for i in range(count)]


def real_documents(per_source: int = 150) -> list[tuple[str, str]]:
    """Real text of this machine, as (id, text) in a fixed order: Debian's common licences, package
    copyright files and changelogs, man pages (troff source), and the Python reference (pydoc topics).
    Up to `per_source` files of each kind (evenly spaced over the sorted paths; copyright files get
    twice as many, they hold the most near-duplicates: licences pasted with small changes), each cut to
    REAL_MAX_CHARS characters. Empty texts are left out. What exists depends on the machine: callers skip
    when too few are found."""
    import glob

    sources = [
        ("licence", sorted(glob.glob("/usr/share/common-licenses/*"))),
        ("copyright", _spread(glob.glob("/usr/share/doc/*/copyright"), 2 * per_source)),
        ("changelog", _spread(glob.glob("/usr/share/doc/*/changelog*.gz"), per_source)),
        ("man", _spread(glob.glob("/usr/share/man/man1/*.gz"), per_source)),
    ]
    docs: list[tuple[str, str]] = []
    for kind, paths in sources:
        for p in paths:
            if (text := _read_text(p)).strip():
                docs.append((f"{kind}:{p}", text))
    for name in sorted(topics)[:per_source]:
        if topics[name].strip():
            docs.append((f"pydoc:{name}", topics[name][:REAL_MAX_CHARS]))
    return docs


def stage_shingles(texts: list[str], ngram: int = 5, kind: str = "word") -> list[np.ndarray]:
    """The shingle hashes the dedup stage uses (`selene.dedup.shingle`), sorted and distinct, per text."""
    from selene.dedup import shingle

    return [np.unique(shingle.shingle_hashes(t, ngram, kind)) for t in texts]  # type: ignore[arg-type]


def set_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted distinct hash arrays; 0.0 when both are empty."""
    inter = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - inter
    return inter / union if union else 0.0


def exact_pairs(sets: list[np.ndarray], min_j: float) -> dict[tuple[int, int], float]:
    """Every pair (i < j) with exact Jaccard >= min_j (> 0), with its Jaccard: a set-similarity join
    with prefix filtering, exact (no pair is missed). Each set's tokens are ordered rarest first; two
    sets with J >= t share a token among the first |s| - ceil(t·|s|) + 1 of each, so only pairs sharing
    such a prefix token (and of sizes within a ratio t) are verified."""
    if not 0.0 < min_j <= 1.0:
        raise ValueError("min_j must be in (0, 1]")
    flat = np.concatenate(sets) if sets else np.empty(0, np.uint64)
    vocab, freq = np.unique(flat, return_counts=True)
    owners: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(sets):
        if not s.size:
            continue
        rank = freq[np.searchsorted(vocab, s)]
        order = np.lexsort((s, rank))  # rarest first, ties by hash: one global order of tokens
        keep = s.size - int(np.ceil(min_j * s.size - 1e-9)) + 1
        for tok in s[order[:keep]].tolist():
            owners[tok].append(i)
    cands: set[tuple[int, int]] = set()
    for docs in owners.values():
        for x in range(len(docs)):
            for y in range(x + 1, len(docs)):
                cands.add((docs[x], docs[y]))
    out = {}
    for i, j in sorted(cands):
        small, large = sorted((sets[i].size, sets[j].size))
        if small < min_j * large * (1 - 1e-12):
            continue
        if (jac := set_jaccard(sets[i], sets[j])) >= min_j:
            out[(i, j)] = jac
    return out


def removal_quality(
    sets: list[np.ndarray], removed: dict[int, int], threshold: float, num_perm: int = 128
) -> dict[str, float]:
    """How removals (removed document index → index of the document kept for it) fare against exact
    Jaccard on `sets` (`stage_shingles`) at `threshold`:

    - precision: share of removed documents whose exact J to their kept copy is >= threshold;
    - recall: share of the pairs with exact J >= threshold that are no longer both in the output (one
      of the two, or both, removed);
    - min_j: the least exact J of a removed document to its kept copy; below_noise: removed documents
      whose exact J is under threshold - 3σ, σ = sqrt(J(1 - J)/num_perm) at the threshold (the
      estimator's standard deviation);
    - needed: removals of a greedy pass with exact J (corpus order, a document goes when it has
      J >= threshold to an earlier kept one), for scale."""
    pairs = exact_pairs(sets, threshold)
    js = [set_jaccard(sets[r], sets[k]) for r, k in removed.items()]
    sigma = (threshold * (1 - threshold) / num_perm) ** 0.5
    gone: set[int] = set()
    partners: dict[int, list[int]] = defaultdict(list)
    for i, j in pairs:
        partners[j].append(i)
    for j in range(len(sets)):  # pairs are (i < j): the partners of j are earlier documents
        if any(i not in gone for i in partners[j]):
            gone.add(j)
    return {
        "removed": len(removed),
        "needed": len(gone),
        "pairs": len(pairs),
        "precision": sum(j >= threshold for j in js) / max(len(js), 1),
        "recall": sum(i in removed or j in removed for i, j in pairs) / max(len(pairs), 1),
        "min_j": min(js, default=1.0),
        "below_noise": sum(j < threshold - 3 * sigma for j in js),
    }
