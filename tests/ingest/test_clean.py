"""Text cleaning: our ftfy fast path equals ftfy, and the whitespace rules."""

from __future__ import annotations

import random
from pydoc_data.topics import topics

import ftfy
import pytest

from selene.ingest import clean
from selene.ingest.clean import clean_text, fix_text
from selene.ingest.config import CleanConfig

# Fragments that exercise every ftfy fixer that can touch ASCII text, and the segmentation rules:
# HTML entities (known, unknown, numeric, upper case, nested), "<" (switches unescaping off from
# its line on), terminal escapes, CR / CRLF, and every C0 control character.
ASCII_PIECES = [
    "word", "the", " ", "  ", "\t", "\n", "\n", "\r\n", "\r", "&amp;", "&lt;", "&gt;", "&quot;",
    "&#39;", "&#x41;", "&#65", "&AMP;", "&amp;lt;", "&nosuch;", "&", ";", "#", "<b>", "</b>", "<",
    "\x1b[31m", "\x1b[0m", "\x1b", "\x7f", "\x0c", "\x0b", "R&D", "AT&T", "a&b;", ".", "'", '"',
]  # fmt: skip
CONTROLS = [chr(c) for c in range(0x20)] + ["\x7f"]

# Non-ASCII fragments: mojibake, curly quotes, ligatures, full width, odd line breaks, C1 controls,
# surrogate-free astral characters, combining accents, BOM.
UNICODE_PIECES = [
    "sÃ³", "Ã©tÃ©", "â€™", "â€œquotedâ€\x9d", "voilÃ  le", "\u2019", "\u201c", "\u201d", "ﬁ", "ﬂ",
    "ＬＯＵＤ", "\u3000", "\u2028", "\u2029", "\x85", "\x92", "\x80", "\xa0", "é", "e\u0301", "日本",
    "😀", "\ufeff", "\u200b", "—", "…", "ß", "°", "Ã", "Â",
]  # fmt: skip


def _random_text(rng: random.Random, pieces: list[str], n: int) -> str:
    """Up to n random pieces; one time in 40 a random control character instead."""
    return "".join(
        rng.choice(CONTROLS) if rng.random() < 1 / 40 else rng.choice(pieces)
        for _ in range(rng.randint(0, n))
    )


class CountingFtfy:
    """Counts the calls into ftfy (ours and ftfy.fix_text's own), to show the fast path is taken."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = ftfy.fix_and_explain

        def counting(text: str, config: ftfy.TextFixerConfig) -> ftfy.ExplainedText:
            self.calls += 1
            return real(text, config)

        monkeypatch.setattr(clean.ftfy, "fix_and_explain", counting)

    def ours(self, text: str, config: ftfy.TextFixerConfig | None = None) -> tuple[str, int]:
        """(our fix_text(text), the number of segments it handed to ftfy)."""
        before = self.calls
        fixed = fix_text(text) if config is None else fix_text(text, config)
        return fixed, self.calls - before


def test_fast_path_equals_ftfy_on_random_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = CountingFtfy(monkeypatch)
    rng = random.Random(1234)
    skipped = 0
    for _ in range(3000):
        text = _random_text(rng, ASCII_PIECES, 12)
        fixed, calls = counter.ours(text)
        assert fixed == ftfy.fix_text(text), repr(text)
        skipped += calls == 0
    # Not vacuous: many texts were settled without calling ftfy at all, and many were not.
    assert 300 < skipped < 2700


def test_fast_path_equals_ftfy_on_clean_ascii_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = CountingFtfy(monkeypatch)
    rng = random.Random(7)
    pieces = ["word", "the", " ", "\t", "\n", "R&D", "AT&T", "a&b", "#", ".", "&", "x < y", "\x0c"]
    for _ in range(500):
        text = "".join(rng.choice(pieces) for _ in range(60))
        fixed, calls = counter.ours(text)
        assert calls == 0
        assert fixed == ftfy.fix_text(text) == text


# The non-ASCII characters our fast path settles without ftfy (only curly quotes change).
PLAIN_EXTRA = ["\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u2026", "\xa0"]


def test_fast_path_equals_ftfy_on_english_punctuation(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = CountingFtfy(monkeypatch)
    rng = random.Random(11)
    pieces = ["word", "the", " ", "\t", "\n", "R&D", "a&b", "#", ".", "x < y", "\x0c", *PLAIN_EXTRA]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        fixed, calls = counter.ours(text)
        assert calls == 0
        assert fixed == ftfy.fix_text(text), repr(text)
    # Next to the characters ftfy's mojibake detector keys on, they go to ftfy (and still agree).
    neighbours = ["Â", "Ã", "€", "é", "Ø", "√", "‚", "„", "В", "β", "ā", "°", "™", "¢", "Œ", "\x85"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces + neighbours) for _ in range(rng.randint(0, 12)))
        assert fix_text(text) == ftfy.fix_text(text), repr(text)


def test_fix_text_equals_ftfy_on_random_unicode() -> None:
    rng = random.Random(99)
    for _ in range(2000):
        text = _random_text(rng, ASCII_PIECES + UNICODE_PIECES + PLAIN_EXTRA, 30)
        assert fix_text(text) == ftfy.fix_text(text), repr(text)


@pytest.mark.parametrize(
    "config",
    [
        ftfy.TextFixerConfig(explain=False, max_decode_length=7),  # lines cut into segments
        ftfy.TextFixerConfig(explain=False, max_decode_length=7, unescape_html=True),
        ftfy.TextFixerConfig(explain=False, unescape_html=False),
        ftfy.TextFixerConfig(uncurl_quotes=False),  # handed to ftfy.fix_text as is
    ],
    ids=["short-segments", "unescape-always", "unescape-never", "no-uncurl"],
)
def test_fix_text_equals_ftfy_with_other_configs(config: ftfy.TextFixerConfig) -> None:
    rng = random.Random(5)
    for _ in range(1500):
        text = _random_text(rng, ASCII_PIECES + UNICODE_PIECES[:8] + PLAIN_EXTRA, 30)
        assert fix_text(text, config) == ftfy.fix_text(text, config), repr(text)


def test_fix_text_equals_ftfy_on_real_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n\n".join(topics[k] for k in sorted(topics))
    counter = CountingFtfy(monkeypatch)
    fixed, calls = counter.ours(text)
    assert fixed == ftfy.fix_text(text)
    # Only the few lines with accented letters, "°" ... went to ftfy.
    assert 0 < calls < 10
    mangled = text.replace("\u2019", "â€™").replace("\n", "\r\n")[:200_000] + "&amp; <p>&amp;</p>"
    assert fix_text(mangled) == ftfy.fix_text(mangled)


CFG = CleanConfig()


@pytest.mark.parametrize(
    ("raw", "fixed"),
    [
        ("sÃ³", "só"),
        ("The cafÃ© is open", "The café is open"),
        ("doesnâ€™t", "doesn't"),
        ("Broken text&hellip; it&#x2019;s ﬂubberiﬁc!", "Broken text… it's flubberific!"),
        ("ＬＯＵＤ　ＮＯＩＳＥＳ", "LOUD NOISES"),
        ("\x1b[31mred\x1b[0m", "red"),
    ],
)
def test_mojibake_and_oddities_are_repaired(raw: str, fixed: str) -> None:
    assert clean_text(raw, CFG) == fixed


def test_ftfy_can_be_switched_off() -> None:
    assert clean_text("sÃ³", CleanConfig(ftfy=False)) == "sÃ³"


def test_normal_forms() -> None:
    assert clean_text("cafe\u0301", CFG) == "café"
    assert clean_text("cafe\u0301", CleanConfig(ftfy=False)) == "café"
    assert clean_text("cafe\u0301", CleanConfig(ftfy=False, normalization="none")) == "cafe\u0301"
    assert clean_text("ﬁne x²", CleanConfig(ftfy=False, normalization="NFKC")) == "fine x2"
    assert clean_text("ﬁne x²", CleanConfig(ftfy=False)) == "ﬁne x²"


NO_FTFY = CleanConfig(ftfy=False)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\r\nb\rc\u2028d\u2029e", "a\nb\nc\nd\ne"),
        ("a\xa0b\u2003c\u202fd\u3000e\u205ff\u2009g", "a b c d e f g"),
        ("zero\u200bwidth\ufeff soft\xadhyphen word\u2060joiner", "zerowidth softhyphen wordjoiner"),
        ("ctrl\x00\x01\x07\x08\x0b\x0c\x1b\x7fchars", "ctrlchars"),
        ("keeps\ttabs\tinside", "keeps\ttabs\tinside"),
        ("ZWJ 👩\u200d💻 and ZWNJ \u200c kept", "ZWJ 👩\u200d💻 and ZWNJ \u200c kept"),
        ("trailing   \nspaces\t\t\nend \xa0 ", "trailing\nspaces\nend"),
        ("a\n\n\n\n\n\nb\n \n\t\n \nc", "a\n\n\nb\n\n\nc"),
        ("\n\n  \n\nfirst\n\nlast\n\n\n", "first\n\nlast"),
        ("   ", ""),
        ("", ""),
    ],
)
def test_whitespace_rules(raw: str, expected: str) -> None:
    assert clean_text(raw, NO_FTFY) == expected
    assert clean_text(raw, CFG) == expected


def test_c1_controls() -> None:
    # Without ftfy, NEL is a line break and the other C1 controls go; ftfy reads them as the
    # Windows-1252 characters they almost always are.
    assert clean_text("a\x85b\x80\x9fc", NO_FTFY) == "a\nbc"
    assert clean_text("a\x85b\x80\x9fc", CFG) == "a…b€Ÿc"
    assert clean_text("a\x85b\r\nc", CFG) == "a…b\nc"


def test_line_breaks_are_unified_before_ftfy() -> None:
    # ftfy stops unescaping entities from the first line with a "<"; lines are those of the output.
    assert clean_text("&gt; x\r<b>", CFG) == "> x\n<b>"
    assert clean_text("&gt; x\u2028<b>", CFG) == "> x\n<b>"


def test_max_blank_lines() -> None:
    text = "a\n\n\n\n\nb\n\nc"
    assert clean_text(text, CleanConfig(max_blank_lines=0)) == "a\nb\nc"
    assert clean_text(text, CleanConfig(max_blank_lines=1)) == "a\n\nb\n\nc"
    assert clean_text(text, CleanConfig(max_blank_lines=10)) == text


def test_indentation_is_kept() -> None:
    code = "\n\n    def f(x):   \n\tif x:\n            return 1  \n\n\n\n\n    return 0\n"
    assert clean_text(code, CFG) == "    def f(x):\n\tif x:\n            return 1\n\n\n    return 0"


def test_whitespace_can_be_switched_off() -> None:
    text = "  a  \n\n\n\n\nb\u200b\xa0 "
    assert clean_text(text, CleanConfig(ftfy=False, whitespace=False)) == text


# Noise of the kinds real documents carry, to be sprinkled over real text.
NOISE = [
    "cafÃ©", "doesnâ€™t", "â€œquotedâ€\x9d", "Ã¼ber", "&amp;", "&quot;", "&eacute;", "<b>", "\r\n",
    "\r\n\r\n\r\n\r\n", "\xa0", "\u200b", "\xad", "   ", "\t", "  \n", "\x07", "\ufeff", "\u2019",
    "\u201c", "\u201d", "…", "—", "😀", "naïve", "Straße", "e\u0301", "\x1b[1m", "\u2028", "\n\n\n\n\n",
]  # fmt: skip


def _noisy_document(rng: random.Random) -> str:
    words = rng.choice(REAL_TEXTS).split(" ")
    for _ in range(rng.randint(0, 20)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(NOISE))
    return " ".join(words)


REAL_TEXTS = [topics[k] for k in ("assignment", "assert", "while", "lambda", "truth", "numbers")]


@pytest.mark.parametrize(
    "cfg",
    [CFG, NO_FTFY, CleanConfig(normalization="NFKC", max_blank_lines=0)],
    ids=["default", "no-ftfy", "nfkc"],
)
def test_idempotent_on_noisy_real_text(cfg: CleanConfig) -> None:
    rng = random.Random(3)
    for _ in range(300):
        once = clean_text(_noisy_document(rng), cfg)
        assert clean_text(once, cfg) == once, repr(once)


def test_idempotent_on_random_fragments() -> None:
    # Without ftfy idempotence follows from the rules; with it, on mixtures of mojibake, entities and
    # controls, ftfy alone is not idempotent (about 3% of these inputs), clean_text very nearly is:
    # it re-runs ftfy when the whitespace step changed characters ftfy judged in context.
    rng = random.Random(3)
    pieces = ASCII_PIECES + UNICODE_PIECES + ["\n\n\n", "   ", "    indented", "e\u200b\u0301"]
    for _ in range(2000):
        once = clean_text(_random_text(rng, pieces, 30), NO_FTFY)
        assert clean_text(once, NO_FTFY) == once, repr(once)
    unstable = 0
    for _ in range(2000):
        once = clean_text(_random_text(rng, pieces, 30), CFG)
        unstable += clean_text(once, CFG) != once
    assert unstable <= 2
