"""Word counts as datatrove's English word tokenizer makes them (spaCy's ``blank("en")`` tokens,
punctuation included, whitespace not): what `min_doc_words` and `min_words_to_remove` compare.

One regular expression (`_WORDS`: numbers with their separators, a quote and the word after it
("don" + "'t" counts as spaCy's "do" + "n't"), dotted abbreviations, words, runs of dots, every
other non-space character on its own) gives the tokens, in C; the full stops that
spaCy keeps in the word before them ("Mr.", "M.", "y." of "x,y.": `sentences.stop_is_token`) are taken
off. What still differs is inside chunks of code and paths ("os.path", "--flag", "C++", "and/or"),
which spaCy keeps whole: docs/stages/spans.md gives the measured difference. Following
spaCy's tokenizer chunk by chunk in Python, tried, was 5.5 times slower and still counted two thirds
as many documents differently.
"""

from __future__ import annotations

import re

from selene.spans.sentences import stop_is_token

# as spaCy: a number with its sign when the sign starts it ("-624.1"), dotted abbreviations ("U.S",
# "p.m", "e.g": their last stop is `_WORD_STOP`'s) one token each
_WORDS = re.compile(
    r"(?:(?<![\w-])-)?\d+(?:[.,:/]\d+)*|'\w+|[^\W\d_](?:\.[^\W\d_])+(?!\w)"
    r"|\w+|\.\.+|[^\w\s]"
)
# a full stop right after a word, at the end of its chunk (only punctuation after it): spaCy may keep it
_WORD_STOP = re.compile(r"(?<=\w)\.(?![.\w])(?=[^\w\s]*(?:\s|\Z))")


def count_words(text: str) -> int:
    n = len(_WORDS.findall(text))
    for m in _WORD_STOP.finditer(text):
        n -= not stop_is_token(text, m.start())
    return n
