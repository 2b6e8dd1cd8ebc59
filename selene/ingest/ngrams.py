"""Exact, vectorised statistics of the repeated token n-grams of one document.

Used by the Gopher repetition rules (:mod:`selene.ingest.filters`): the characters of the most
frequent n-gram, and the characters of the duplicated n-gram content. Everything is computed with
numpy over whole arrays (no Python loop per token or per n-gram) and exactly: n-grams are
identified by sorting packed integer keys, never by hashing, so there are no collisions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NGrams"]


def _group(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(leader, number of occurrences) of each key, where the leader of ``keys[i]`` is the smallest
    index j with ``keys[j] == keys[i]``. Like ``np.unique(keys, return_index=True,
    return_inverse=True, return_counts=True)`` without its wrapper overhead, which dominates on the
    small arrays here (and an unstable sort plus one ``minimum.reduceat`` beats a stable sort)."""
    order = keys.argsort()
    sorted_keys = keys[order]
    size = len(keys)
    first = np.empty(size, dtype=bool)  # first of its run of equal keys, in sorted order
    first[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=first[1:])
    run_starts = first.nonzero()[0]
    run_sizes = np.diff(run_starts, append=size)
    run_leaders = np.minimum.reduceat(order, run_starts)
    run = first.cumsum() - 1
    leaders = np.empty(size, dtype=np.int64)
    leaders[order] = run_leaders[run]
    counts = np.empty(size, dtype=np.int64)
    counts[order] = run_sizes[run]
    return leaders, counts


class NGrams:
    """Exact identities and counts of the repeated token n-grams of one document, level by level.

    Level n lists, in document order, the start positions of the n-grams that occur more than
    once, each with its number of occurrences and its *key*: the start position of the n-gram's
    first occurrence in the document. Equal n-grams have equal keys, and an occurrence is the first
    one exactly where its key equals its position. Every n-gram not listed occurs once.

    Keys chain exactly: an n-gram is the pair (key of its (n-1)-gram prefix, id of its last token),
    packed as ``key * id_bound + id`` in int64 (both < #tokens: no overflow below 3e9 tokens) and
    grouped by sorting, so there is no hash and no collision. Level 1's keys are the token ids,
    which are first-occurrence positions too (see ``DocView._index``). An n-gram can repeat only if
    the (n-1)-grams at its start and at the next position both repeat, so each level only groups
    those candidates and, for ordinary prose, the levels shrink fast.
    """

    def __init__(self, ids: np.ndarray, id_bound: int, token_lens: np.ndarray) -> None:
        """`ids`: token ids, all < `id_bound`, where a token's id is the position of its first
        occurrence; `token_lens`: characters of each token."""
        self.ids = ids
        self.id_bound = max(id_bound, 1)
        self.cum_chars = np.concatenate(([0], np.cumsum(token_lens)))
        self.total_chars = int(self.cum_chars[-1])
        counts = np.bincount(ids, minlength=id_bound)[ids]
        pos = (counts > 1).nonzero()[0]
        # (start positions, keys, occurrence counts) of the repeated n-grams, n = 1, 2, ...
        self._levels = [(pos, ids[pos], counts[pos])]
        self._dup: dict[int, float] = {}

    def level(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(start positions, keys, occurrence counts) of the n-grams that occur more than once;
        positions ascending, key = start of the n-gram's first occurrence."""
        while len(self._levels) < n:
            self._levels.append(self._next_level(len(self._levels) + 1))
        return self._levels[n - 1]

    def _next_level(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pos, keys, _ = self._levels[-1]
        # Candidates: starts i whose (n-1)-grams at i and i + 1 both repeat (positions are sorted).
        follow = (pos[1:] == pos[:-1] + 1).nonzero()[0]
        if not len(follow):
            return pos[:0], keys[:0], keys[:0]
        pos = pos[follow]
        leaders, counts = _group(keys[follow] * self.id_bound + self.ids[pos + (n - 1)])
        rep = counts > 1
        # `pos` ascends, so the leader (smallest index) of a group is its first occurrence.
        return pos[rep], pos[leaders[rep]], counts[rep]

    def top_char_frac(self, n: int) -> float:
        """Characters covered by the most frequent n-gram (occurrences × its characters) over all
        token characters. Only n-grams that repeat count; of tied ones, the longest wins."""
        pos, _, counts = self.level(n)
        if not len(counts):
            return 0.0
        top = int(counts.max())
        at = pos[counts == top]
        chars = int((self.cum_chars[at + n] - self.cum_chars[at]).max())
        return chars * top / self.total_chars

    def dup_char_frac(self, n: int) -> float:
        """Fraction of token characters that are duplicated n-gram content.

        For every n-gram that occurs more than once, its first occurrence in document order is the
        original and each later occurrence is a duplicate. The measure is the characters of the
        tokens inside at least one duplicate occurrence, over the characters of all tokens; a token
        inside several (overlapping) duplicate occurrences counts once, and a token counts whether
        or not it is also inside some first occurrence. So k copies of an n-token phrase, apart and
        with nothing else repeated, count k - 1 copies' characters, and so does a run of >= n tokens
        repeated k times back to back.

        datatrove's ``GopherRepetitionFilter`` (``find_all_duplicate``) scans left to right, and
        after a duplicate at i skips to i + n without checking or recording the n-grams in between;
        it adds up disjoint duplicate spans. Every span it counts is inside the union measured
        here, so on the same tokens this value is at least datatrove's (datatrove also compares
        n-grams as concatenated strings, where "ab c" equals "a bc"; here tokens are compared).
        """
        if n not in self._dup:
            self._dup[n] = self._dup_chars(n) / self.total_chars if self.total_chars else 0.0
        return self._dup[n]

    def dup_char_frac_bound(self, n: int) -> float:
        """An upper bound of ``dup_char_frac(n)`` that builds no new level: the fraction at the
        largest level m <= n built so far.

        The fraction can only shrink as n grows: if an n-gram at i repeats an earlier one at j < i,
        its (n-1)-gram prefix at i repeats the one at j and its (n-1)-gram suffix at i + 1 repeats
        the one at j + 1, so both are duplicate (non-first) occurrences, and together they cover
        the n-gram's tokens."""
        return self.dup_char_frac(min(n, len(self._levels)))

    def _dup_chars(self, n: int) -> int:
        pos, keys, _ = self.level(n)
        starts = pos[keys != pos]  # the duplicate occurrences, ascending
        if not len(starts):
            return 0
        # Starts are sorted and all spans have n tokens, so the spans' ends are sorted too: the
        # union of the spans is each span minus its overlap with the one before.
        ends = starts + n
        from_ = starts.copy()
        from_[1:] = np.maximum(starts[1:], ends[:-1])
        return int((self.cum_chars[ends] - self.cum_chars[from_]).sum())
