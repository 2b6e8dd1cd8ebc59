"""Sentences of a line of English prose, counted the way Punkt (NLTK's sentence splitter, which
TensorFlow Datasets' C4 used) splits them, without its trained model file.

A sentence ends at ``?`` or ``!``, and at a ``.`` that closes a word which is not an abbreviation
("Mr.", "e.g.", "U.S.") nor a lone initial ("J. Smith"), when a word follows after whitespace
(closing quotes and brackets stay with the sentence they close). An ellipsis ends a sentence only
when the next word is capitalised. These are Punkt's first-pass rules with a fixed list of the
abbreviations its English model knows best. datatrove counts with spaCy's rule-based sentencizer
instead, which also splits at dots inside tokens (``io.StringIO``) and at every ``?`` token; the
difference is measured in ``benchmarks/filters_vs_datatrove.py``.
"""

from __future__ import annotations

import re

__all__ = ["count_sentences"]

# Abbreviations after which a period does not end a sentence (lowercase, without the final period).
_ABBREVIATIONS = """
    mr mrs ms dr prof sr jr st mt ft rev gen col lt sgt capt cmdr gov sen rep pres hon messrs mme mlle
    vs etc e.g i.e cf al viz approx dept est fig figs no nos vol vols ed eds pp pg ch sec art op
    inc ltd co corp llc bros assn univ
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    a.m p.m u.s u.k u.n u.s.a d.c ph.d b.a m.a b.sc m.sc
    ave blvd rd hwy
"""
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())
# A candidate end: terminal punctuation, closing quotes/brackets, then whitespace and what follows.
_END = re.compile(r"([.?!]+)[\"'”’)\]]*\s+(\S)")
_WORD_BEFORE = re.compile(r"(\S+)$")
_WORDY = re.compile(r"\w")


def count_sentences(line: str) -> int:
    """Sentences in `line` (at least 1 for a line with any non-space character)."""
    if not line.strip():
        return 0
    n = 1
    for m in _END.finditer(line):
        marks, nxt = m.group(1), m.group(2)
        if not line[: m.start(1)].strip() or not _WORDY.search(line, m.start(2)):
            continue  # nothing before it ("... and so"), or no word after it ('Done. "')
        if "?" in marks or "!" in marks:
            n += 1
            continue
        if len(marks) > 1:  # an ellipsis (or "..") ends a sentence before a capitalised word only
            n += nxt.isupper()
            continue
        word = _WORD_BEFORE.search(line, 0, m.start(1))
        token = word.group(1).lstrip("\"'“‘([").lower() if word else ""
        if not token or token in ABBREVIATIONS or token.split("-")[-1] in ABBREVIATIONS:
            continue
        if len(token) == 1 and token.isalpha():  # an initial
            continue
        if token.isdigit() and not nxt.isupper():  # "in 3. place" ordinals; "in 2019. The" ends
            continue
        n += 1
    return n
