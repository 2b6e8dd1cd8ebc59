"""Text cleaning: ftfy repair, whitespace and control-character normalisation, Unicode normal form.

``clean_text`` runs on every document of every corpus, so each step first checks, with one C-speed
scan, whether it has anything to do. ftfy is by far the most expensive step (about 10 µs per line,
because ``ftfy.fix_text`` handles each line in Python), so :func:`fix_text` reproduces its line
segmentation and hands ftfy only the segments whose change needs ftfy's judgement; everything
else is copied (with curly quotes straightened, as ftfy would). The result is identical to
``ftfy.fix_text`` (tests compare the two on random and real text).
"""

from __future__ import annotations

import operator
import re
import unicodedata

import ftfy
from ftfy.chardata import HTML_ENTITY_RE

from selene.ingest.config import CleanConfig

__all__ = ["clean_text", "fix_text"]

# ---------------------------------------------------------------------------------------- ftfy

# ftfy's default fixers, read off ftfy 6.x (`fix_and_explain`), and what each does to ASCII text:
#   unescape_html          "&amp;" -> "&" ... (HTML_ENTITY_RE), unless a "<" was seen (see below)
#   fix_encoding           ASCII is returned as is (`possible_encoding(text, "ascii")`)
#   fix_c1_controls, fix_latin_ligatures, fix_character_width, uncurl_quotes, fix_surrogates:
#                          act on non-ASCII characters only
#   fix_line_breaks        "\r\n" and "\r" -> "\n" (the other breaks it handles are non-ASCII)
#   remove_terminal_escapes  "\x1b[...m"; \x1b is a control character anyway
#   remove_control_chars   U+00-08, U+0B, U+0E-1F, U+7F (keeps \t \n \x0c \r)
#   NFC normalisation      ASCII is always NFC
# So an ASCII segment without "\r", those control characters and (while unescaping is on) HTML
# entities comes out of ftfy unchanged.
#
# The same holds, but for `uncurl_quotes`, when the segment also has the commonest non-ASCII
# characters of English text, `_PLAIN_EXTRA`: curly quotes, en and em dash, ellipsis, NBSP. No
# fixer but uncurl_quotes touches them, none is changed by NFC, uncurling cannot create an HTML
# entity, and each alternative of ftfy's mojibake detector (`badness.BADNESS_RE`) needs a character
# outside ASCII + `_PLAIN_EXTRA` (Ã, Â, €, accented letters, C1 controls, Cyrillic ...), so
# `fix_encoding` leaves such a segment alone. ftfy then returns ``uncurl_quotes(segment)``.
# The tests compare `fix_text` with ftfy on random mixtures of all these (and of mojibake): an ftfy
# release that changed any of this would fail them.
_PLAIN_EXTRA = "\xa0\u2013\u2014\u2018\u2019\u201c\u201d\u2026"
_FTFY_SUSPECT = re.compile(f"[^\\t\\n\\x0c\\x20-\\x7e{_PLAIN_EXTRA}]")
_CURLY = (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'))
# On ASCII text, deleting the harmless bytes (C speed) finds suspects several times faster.
_FTFY_HARMLESS = bytes(range(0x20, 0x7F)) + b"\t\n\x0c"

# fix_text's own defaults; ftfy without explanations, as `ftfy.fix_text` itself uses.
_FTFY_CONFIG = ftfy.TextFixerConfig(explain=False)


def fix_text(text: str, config: ftfy.TextFixerConfig = _FTFY_CONFIG) -> str:
    """``ftfy.fix_text(text, config)``, calling ftfy only on the segments it could change.

    ``ftfy.fix_text`` splits the text into segments (lines, cut every ``max_decode_length``
    characters when longer) and fixes each on its own, with HTML unescaping ("auto") switched off
    from the first segment that contains a "<" onwards. We keep that segmentation exactly: a segment
    with a suspect character (`_FTFY_SUSPECT`) or, while unescaping is on, an HTML entity goes to
    ``ftfy.fix_and_explain`` with the config ftfy would use for it; in the rest only curly quotes
    change. Configs that differ from ftfy's defaults in more than `unescape_html`,
    `max_decode_length` and `explain` go to ``ftfy.fix_text`` unchanged.
    """
    defaults = _FTFY_CONFIG._replace(
        unescape_html=config.unescape_html, max_decode_length=config.max_decode_length
    )
    if config._replace(explain=False) != defaults:
        return ftfy.fix_text(text, config)
    n = len(text)
    seg_len = config.max_decode_length
    auto_html = config.unescape_html == "auto"
    # From the segment holding the first "<" on, "auto" unescaping is off (ftfy treats it as HTML).
    lt = text.find("<") if auto_html else -1
    html_off_from = n if lt < 0 else _segment_bounds(text, lt, seg_len)[0]
    entities_until = html_off_from if config.unescape_html else 0
    entity = _next_entity(text, 0, entities_until)
    if entity == n and text.isascii() and not text.encode("ascii").translate(None, _FTFY_HARMLESS):
        return text  # the common case: plain ASCII text
    off_config = config._replace(unescape_html=False) if auto_html else config

    out: list[str] = []
    pos, suspect = 0, -1
    while pos < n:
        # Both searches only move forward: each part of the text is scanned once.
        if entity < pos:
            entity = _next_entity(text, pos, entities_until)
        if suspect < pos:
            m = _FTFY_SUSPECT.search(text, pos)
            suspect = m.start() if m else n
        start = min(entity, suspect)
        if start >= n:
            break
        seg_start, seg_end = _segment_bounds(text, start, seg_len)
        out.append(_uncurl(text[pos:seg_start]))
        seg_config = off_config if seg_start >= html_off_from else config
        out.append(ftfy.fix_and_explain(text[seg_start:seg_end], seg_config).text)
        pos = seg_end
    out.append(_uncurl(text[pos:]))
    return "".join(out)


def _uncurl(plain: str) -> str:
    """ftfy's ``uncurl_quotes`` on text whose only non-ASCII characters are `_PLAIN_EXTRA`: there
    only these four quotes need replacing, and ``str.replace`` beats its regex several times."""
    if plain.isascii():
        return plain
    for curly, straight in _CURLY:
        if curly in plain:
            plain = plain.replace(curly, straight)
    return plain


def _next_entity(text: str, pos: int, until: int) -> int:
    """Start of the first HTML entity in text[pos:until], or len(text)."""
    if pos < until and text.find("&", pos, until) >= 0:
        m = HTML_ENTITY_RE.search(text, pos, until)
        if m:
            return m.start()
    return len(text)


def _segment_bounds(text: str, i: int, seg_len: int) -> tuple[int, int]:
    """The [start, end) of the ftfy segment holding index `i`: its line, cut in `seg_len` pieces."""
    line_start = text.rfind("\n", 0, i) + 1
    start = line_start + (i - line_start) // seg_len * seg_len
    line_end = text.find("\n", i) + 1 or len(text)
    return start, min(line_end, start + seg_len)


# ---------------------------------------------------------------------------------- whitespace

# Line breaks other than "\n": CR LF, CR, U+2028/2029 and NEL (U+85). ftfy reads a NEL as the
# Windows-1252 "…" it usually is, so NEL is only a line break when ftfy is off or left it.
_BREAKS = re.compile("\r\n?|[\x85\u2028\u2029]")
_BREAKS_BUT_NEL = re.compile("\r\n?|[\u2028\u2029]")
# Spaces that render as a plain space: NBSP, ogham space, en/em/thin... spaces, narrow NBSP,
# medium mathematical space, ideographic space.
_SPACES = re.compile("[\xa0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# Invisible characters that only split words for a tokenizer: soft hyphen, zero-width space, word
# joiner, BOM / zero-width no-break space; and C0/C1 controls except \t and \n. (ZWJ/ZWNJ U+200C/D
# are kept: they carry meaning in Persian, Indic scripts and emoji sequences.)
_DROP = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f\xad\u200b\u2060\ufeff]+")
# One scan that tells whether any of the three substitutions above has work to do.
_ANY_WS_WORK = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xa0\xad\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]"
)
# In ASCII text, only control characters (\r included) need the substitutions.
_WS_HARMLESS = bytes(range(0x20, 0x7F)) + b"\t\n"
# A regex for trailing spaces tries a match at every space of the text; splitting is 4x faster.
_RSTRIP_LINE = operator.methodcaller("rstrip", " \t")
_MAX_ROUNDS = 3


def _needs_ws_work(text: str) -> bool:
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _WS_HARMLESS))
    return _ANY_WS_WORK.search(text) is not None


def normalize_whitespace(text: str, max_blank_lines: int) -> tuple[str, bool]:
    """Unify line breaks and spaces, drop invisible and control characters, strip trailing spaces of
    each line and of the document, collapse runs of more than `max_blank_lines` blank lines and drop
    leading blank lines. Leading indentation, including the first line's, is kept (source code).

    Returns the text and whether a character was replaced or dropped (beyond trailing spaces and
    blank lines): ftfy may then see the text differently."""
    substituted = False
    if _needs_ws_work(text):
        before = text
        text = _BREAKS.sub("\n", text)
        text = _SPACES.sub(" ", text)
        text = _DROP.sub("", text)
        substituted = text != before
    if " \n" in text or "\t\n" in text:
        text = "\n".join(map(_RSTRIP_LINE, text.split("\n")))
    # Blank lines are empty now, so k blank lines are k + 1 consecutive newlines.
    too_many = "\n" * (max_blank_lines + 2)
    if too_many in text:
        text = re.sub(f"{too_many}+", "\n" * (max_blank_lines + 1), text)
    return text.rstrip(" \t\n").lstrip("\n"), substituted


def _layout_for_ftfy(text: str) -> str:
    """Line breaks unified and trailing spaces stripped, as the whitespace step will leave them.

    ftfy fixes each line on its own and judges mojibake from its context, so it must see the lines
    of the output: otherwise cleaning the output again could repair something more."""
    if "\r" in text or "\u2028" in text or "\u2029" in text:
        text = _BREAKS_BUT_NEL.sub("\n", text)
    if " \n" in text or "\t\n" in text:
        text = "\n".join(map(_RSTRIP_LINE, text.split("\n")))
    return text


# ------------------------------------------------------------------------------------- public


def clean_text(text: str, cfg: CleanConfig) -> str:
    """Repair (ftfy), normalise whitespace, then apply the Unicode normal form of `cfg`.

    With ``cfg.whitespace``, line breaks are unified and trailing spaces stripped before ftfy too
    (`_layout_for_ftfy`), and ftfy gets another look when the whitespace step replaced characters:
    cleaning is idempotent, clean_text(clean_text(x)) == clean_text(x), on everything the tests
    throw at it (ftfy alone is not: its verdict on a line depends on the line's neighbourhood).

    The normal form comes last so that removing invisible characters (a zero-width space between a
    letter and its combining accent, say) cannot leave the text denormalised. With ``cfg.ftfy`` the
    lines ftfy repairs are also NFC-normalised by ftfy itself.
    """
    if cfg.whitespace:
        text = _layout_for_ftfy(text)
    if cfg.ftfy:
        text = fix_text(text)
    if cfg.whitespace:
        text, substituted = normalize_whitespace(text, cfg.max_blank_lines)
        # ftfy judges mojibake from context: "\xa0Ã©" is left alone, " Ã©" is repaired. Once the
        # whitespace step has replaced characters, give ftfy another look (rare, and cheap on ASCII),
        # so that cleaning twice gives what cleaning once gave.
        for _ in range(_MAX_ROUNDS):
            if not (cfg.ftfy and substituted):
                break
            refixed = fix_text(text)
            if refixed == text:
                break
            text, substituted = normalize_whitespace(refixed, cfg.max_blank_lines)
    form = cfg.normalization
    # is_normalized is a quick check (ASCII and most NFC text pass without building a new string).
    if form != "none" and not unicodedata.is_normalized(form, text):
        text = unicodedata.normalize(form, text)
    return text
