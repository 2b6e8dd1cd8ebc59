"""The spans stage's units: sentences as datatrove splits them (spaCy's sentencizer), paragraphs,
lines, the normalisation before hashing, spans and cuts."""

from __future__ import annotations

import pytest
import xxhash

from selene.spans.config import SpansConfig
from selene.spans.sentences import sentence_ends
from selene.spans.units import _LINE_BREAK, cut, normalize, spans, unit_ends, units
from selene.spans.words import count_words

# datatrove 0.10.1's split_into_parts(text, "SENTENCE") (spaCy 3.8 blank("en") + sentencizer) on
# each text, recorded from a run of it
SENTENCES = [
    (
        "Mr. Smith went to Washington. He arrived at 5 p.m. Then he left.",
        ["Mr. Smith went to Washington.", " He arrived at 5 p.m. Then he left."],
    ),
    (
        'He said "Stop." Then he left. "Why?" she asked.',
        ['He said "Stop."', ' Then he left. "', 'Why?"', " she asked."],
    ),
    ("Wait... what? Really?! (Yes.) ok.", ["Wait... what?", " Really?! (", "Yes.)", " ok."]),
    (
        "Pi is 3.14. It is not 3. It costs $3.50. Done!",
        ["Pi is 3.14.", " It is not 3.", " It costs $3.50.", " Done!"],
    ),
    (
        "The U.S. is big. NASA. launched it. Plan B. was fine. e.g. this works.",
        ["The U.S. is big.", " NASA.", " launched it.", " Plan B. was fine.", " e.g. this works."],
    ),
    (
        "See www.example.com. Mail a@b.com. Then end.Next one.",
        ["See www.example.com.", " Mail a@b.com.", " Then end.", "Next one."],
    ),
    ("Hello.\n\nWorld.  Two spaces.\n", ["Hello.", "\n\nWorld.", "  Two spaces.", "\n"]),
    ("No final stop", ["No final stop"]),
    ("", [""]),
]


@pytest.mark.parametrize(("text", "parts"), SENTENCES)
def test_sentences_as_datatrove_splits_them(text: str, parts: list[str]) -> None:
    assert units(text, sentence_ends(text)) == parts


def test_units_put_back_together_are_the_text() -> None:
    text = "A first line. Still one.\nSecond line!\n\n\nNew paragraph here.\n  indented line\n\n"
    for unit in ("sentence", "paragraph", "line"):
        assert "".join(units(text, unit_ends(text, unit))) == text
    assert units(text, unit_ends(text, "paragraph")) == [
        "A first line. Still one.\nSecond line!",
        "\n\n\nNew paragraph here.\n  indented line\n\n",
    ]
    # lines as str.splitlines sees them: the newline goes with the line after it, a final one ends none
    assert units("a\nb\n\nc\n", unit_ends("a\nb\n\nc\n", "line")) == ["a", "\nb", "\n", "\nc\n"]
    # every break str.splitlines knows, \r\n as one; without their breaks the lines are splitlines'
    odd = "a\r\nb\rc\x0bd\x0ce\x1cf\x1dg\x1eh\x85i\u2028j\u2029k\r\n\r\nl\r\n"
    lines = units(odd, unit_ends(odd, "line"))
    assert "".join(lines) == odd
    assert [_LINE_BREAK.sub("", u, count=1) if k else u for k, u in enumerate(lines)][:-1] == odd.splitlines()[:-1]
    assert lines[-1] == "\r\nl\r\n" and len(lines) == len(odd.splitlines())


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # datatrove's simplify_text on each, recorded from a run of it
        ("Hello, World! 123 Café", "hello world 0 cafe"),
        ("  Ça  coûte 3,50 €\tnow… ", "ca coute 0 € now"),
        ("Monday. January!", "monday january"),
    ],
)
def test_normalisation_is_datatrove_simplify_text(text: str, expected: str) -> None:
    assert normalize(text, SpansConfig(unit="sentence")) == expected


def test_normalisation_settings() -> None:
    cfg = SpansConfig(unit="line", lowercase=False, normalize_numbers=False, normalize_months=True)
    assert normalize("Born 3 march 1990, Paris", cfg) == "Born 3 MONTH 1990 Paris"


def test_span_hash_is_xxh64_of_the_joined_normalised_units() -> None:
    text = "One fine day. Two fine days! Three fine days? Four."
    cfg = SpansConfig(unit="sentence", span=3, min_span_chars=0)
    s = spans(text, cfg)
    assert s.first.tolist() == [0, 1]
    assert int(s.hashes[0]) == xxhash.xxh64_intdigest(b"one fine day two fine days three fine days")
    # a span shorter than min_span_chars (normalised) is never a candidate
    assert spans(text, cfg.model_copy(update={"min_span_chars": 42})).first.tolist() == [0]
    assert spans("Too. Few.", cfg).hashes.size == 0


def test_cut_joins_what_is_left_as_datatrove_does() -> None:
    text = "Keep this one. Cut me now. Cut me too. And me. Keep the end."
    cfg = SpansConfig(unit="sentence", span=2)
    res = cut(text, cfg, [1, 2])  # spans 1-2 and 2-3: units 1, 2, 3
    assert res.text == "Keep this one. Keep the end."
    assert (res.chars, res.units) == (len(text) - len(res.text), 3)
    assert cut(text, cfg, [0]).text == "Cut me too. And me. Keep the end."  # stripped on the left
    lines = "menu\nHome\nAbout\nbody text"
    assert cut(lines, SpansConfig(unit="line", span=3), [0]).text == "body text"
    # a run of cut units with fewer words than min_words_to_remove stays
    short = SpansConfig(unit="sentence", span=2, min_words_to_remove=9)
    assert cut(text, short, [1]).text == text


@pytest.mark.parametrize(
    ("text", "words"),
    [  # datatrove's word_tokenize (spaCy) on each, recorded from a run of it
        ("Hello, world! It's 3.14 - don't.", 11),  # Hello , world ! It 's 3.14 - do n't .
        (
            "Since These Files Had Become Very Large, And\n\nBy Tomas M. Larsen | Mar. 8, 1990 | 11 min read\n\n"
            "Output custom formatted tracebacks and errors. Items whose name begins with '!' become "
            "checkbuttons. Invert all the digits in the operand.",
            48,  # M. and Mar. one token each
        ),
        (
            "The Result Is A Named 5-tuple With Fields\n\nThe U.S. team beat Brazil 841-36 at 7:13 p.m. local "
            "time on Aug. 28. A reader MUST NOT depend on this. It can parse all examples from the specification.",
            44,  # U.S. p.m. Aug. one token each; 5 - tuple and 841 - 36 three
        ),
    ],
)
def test_words_are_counted_as_datatrove_counts_them(text: str, words: int) -> None:
    assert count_words(text) == words
