"""English sentence boundaries as datatrove finds them (spaCy's ``blank("en")`` tokenizer followed by
its ``sentencizer``), in plain Python and regular expressions, without spaCy.

spaCy's sentencizer ends a sentence at a token that is one of its sentence-final characters
(`FINAL`), then lets every following token made only of punctuation (closing quotes and brackets,
more ``!?``) join that sentence; the next token that is not punctuation (a word, or whitespace other
than the one space a token carries) starts the next sentence. So the decisions that matter are the
tokenizer's: when is a ``.`` a token of its own? These rules follow its English suffix and infix
patterns and its tokenizer exceptions:

- a ``.`` at the end of a whitespace-delimited chunk (only punctuation after it) is split off when the
  character before it is a digit, a lower-case or uncased letter, one of ``%²-+``, a quote or a
  punctuation mark, or two upper-case letters ("USA." ends a sentence, "A." does not);
- unless the chunk (less its leading and trailing punctuation) is an exception: "Mr.", "e.g.",
  "p.m.", single lower-case letters "a." ... (`ABBREVIATIONS`, spaCy's English list);
- a ``.`` between a lower-case letter or a quote and an upper-case letter or a quote inside a chunk
  is split too ("end.Next");
- ``..`` and longer runs and ``…`` are one token that is not sentence-final;
- ``!``, ``?`` and the other final characters end a sentence when only punctuation follows them in
  their chunk ("Yahoo!Inc" does not).

A sentence's text ends after its last token; the whitespace after it belongs to the next sentence
(datatrove's `split_into_parts` and its filter slice the text at the sentences' ends). The remaining
differences from spaCy are listed in docs/stages/spans.md.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# spaCy's sentencizer's default sentence-final characters
FINAL = (
    "!.?։؟۔܀܁܂߹।॥၊။።፧፨᙮᜵᜶᠃᠉᥄᥅᪨᪩᪪᪫᭚᭛᭞᭟᰻᰼᱾᱿‼‽⁇⁈⁉⸮⸼꓿꘎꘏꛳꛷꡶꡷꣎꣏꤯꧈꧉꩝꩞꩟꫰꫱꯫﹒﹖﹗！．？"
    "𐩖𐩗𑁇𑁈𑂾𑂿𑃀𑃁𑅁𑅂𑅃𑇅𑇆𑇍𑇞𑇟𑈸𑈹𑈻𑈼𑊩𑑋𑑌𑗂𑗃𑗉𑗊𑗋𑗌𑗍𑗎𑗏𑗐𑗑𑗒𑗓𑗔𑗕𑗖𑗗𑙁𑙂𑜼𑜽𑜾𑩂𑩃𑪛𑪜𑱁𑱂𖩮𖩯𖫵𖬷𖬸𖭄𛲟𝪈｡。"
)
# spaCy's English tokenizer exceptions whose last token keeps the full stop (so it ends no sentence)
_ABBREVIATIONS = (
    "._. 10a.m. 10p.m. 11a.m. 11p.m. 12a.m. 12p.m. 1a.m. 1p.m. 2a.m. 2p.m. 3a.m. 3p.m. 4a.m. 4p.m. 5a.m. "
    "5p.m. 6a.m. 6p.m. 7a.m. 7p.m. 8a.m. 8p.m. 9a.m. 9p.m. Adm. Ak. Ala. Apr. Ariz. Ark. Aug. Bros. Calif. "
    "Co. Colo. Conn. Corp. D.C. Dec. Del. Dr. E.G. E.g. Feb. Fla. Ga. Gen. Gov. I.E. I.e. Ia. Id. Ill. Inc. "
    "Ind. Jan. Jr. Jul. Jun. Kan. Kans. Ky. La. Ltd. Mar. Mass. Md. Messrs. Mich. Minn. Miss. Mo. Mont. "
    "Mr. Mrs. Ms. Mt. N.C. N.D. N.H. N.J. N.M. N.Y. Neb. Nebr. Nev. Nov. Oct. Okla. Ore. Pa. Ph.D. Prof. "
    "Rep. Rev. S.C. Sen. Sep. Sept. St. Tenn. Va. Wash. Wis. a. a.m. b. c. co. d. e. e.g. f. g. h. i. i.e. "
    "j. k. l. m. n. o. p. p.m. q. r. s. t. u. v. v.s. vs. w. x. y. z. °C. °F. °K. °c. °f. °k. ä. ö. ü."
)
# words that spaCy's exceptions split so that their last piece and a following full stop are one of
# the exceptions above ("id." is "i" + "d."): no sentence ends after them either
_NO_STOP_AFTER = (
    "Hed Hes Howd Hows I'ma Id Im Ima Itd I’ma Shes Thatd Thats Thered Theres Thesed Theyd Thisd Thiss "
    "Thosed Wed Whatd Whats Whend Whens Whered Wheres Whod Whos Whyd Whys Youd hed hes howd hows i'ma id "
    "im ima itd i’ma shes thatd thats thered theres thesed theyd thisd thiss thosed wed whatd whats whend "
    "whens whered wheres whod whos whyd whys xD youd"
)
# spaCy's exceptions with a full stop inside: one token, never split at it
_DOTTED = "(._.) 0.0 0.o <.< >.< >.> O.O O.o V.V o.0 o.O o.o v.v"
NO_STOP_AFTER = frozenset(_NO_STOP_AFTER.split())
DOTTED = frozenset(_DOTTED.split())
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())
# characters spaCy's English tokenizer splits off the front of a chunk (its prefixes, one character each)
PREFIXES = frozenset(
    "§%=—–+…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧$£€¥฿"
)
# characters that may stand before a full stop that spaCy splits off a chunk's end (besides digits
# and lower-case or uncased letters): its suffix rule's `%²-+`, punctuation and quotes
_BEFORE_STOP = frozenset(
    "%²-+|…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧"
)
_SUFFIXES = frozenset(
    "…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪—–'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧"
)
_QUOTES = frozenset("'\"”“`‘´’‚,„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧")


def _candidates(finals: str) -> re.Pattern[str]:
    """Where a sentence may end, a superset that `_final` settles: a final character not followed by a
    letter or digit (the end of its chunk, or punctuation after it), one at the front of its chunk
    (after whitespace or prefixes only), or a full stop between a letter or quote that may be
    lower-case and one that may be upper-case. Code's dots ("os.path", "3.14") are not candidates."""
    f, pre, q = re.escape(finals), re.escape("".join(sorted(PREFIXES))), re.escape("".join(sorted(_QUOTES)))
    # one class first, the conditions after it: re then skips to the next final character in C
    return re.compile(
        rf"[{f}](?:(?![^\W_])|(?<![^\s{pre}].)|(?<=[a-z{q}\u0080-\uffff]\.)(?=[A-Z{q}\u0080-\uffff]))"
    )


# Python's re scans a class holding characters beyond U+FFFF some 20 times slower than one without:
# texts without such characters (nearly all) are scanned with the finals of the Basic Multilingual Plane
_CANDIDATE = _candidates("".join(c for c in FINAL if ord(c) <= 0xFFFF))
_CANDIDATE_ALL = _candidates(FINAL)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# the longest chunk, less its prefixes, that can be an exception ("Messrs.") looked at before a stop
_WORD_WINDOW = 16
_TAIL = re.compile(r"\S*\Z")  # searched up to a stop: the non-space characters before it
# spaCy's English infixes (where it splits inside a chunk before it looks its exceptions up): hyphens
# and ~ after a letter or digit before a letter, a comma between letters, :<>=/ after a letter or
# digit before a letter, + - * ^ between digits, ellipses
INFIX = re.compile(
    r"(?<=[^\W_])(?:---|--|——|-|–|—|~)(?=[^\W\d_])|(?<=[^\W\d_]),(?=[^\W\d_])"
    r"|(?<=[^\W_])[:<>=/](?=[^\W\d_])|(?<=\d)[+\-*^](?=[\d-])|\.\.+|…"
    r"|(?<=[a-z'\"])\.(?=[A-Z'\"])"
)
_FINAL = frozenset(FINAL)
# spaCy's URL match (less its IP-address branch): a chunk like this is one token, never split inside
_URL = re.compile(
    r"^(?:[\w+\-.]{2,}://)?(?:\S+(?::\S*)?@)?"
    r"(?:(?:[A-Za-z0-9\u00a1-\uffff][A-Za-z0-9\u00a1-\uffff_-]{0,62})?[A-Za-z0-9\u00a1-\uffff]\.)+"
    r"(?P<tld>[^\W\d_]{2,63})(?::\d{2,5})?(?:[/?#]\S*)?$"
)


def is_url(chunk: str) -> bool:
    m = _URL.match(chunk)
    return m is not None and not any(c.isupper() for c in m["tld"])  # spaCy's TLD: lower-case letters


@lru_cache(maxsize=4096)
def _is_suffix(c: str) -> bool:
    """A character spaCy's English tokenizer splits off the end of a chunk (one of its suffixes: its
    punctuation list, quotes, dashes, symbols such as "™", a further full stop), not every punctuation
    mark: a stop followed by ``-`` or ``/`` stays inside its token."""
    return c in _SUFFIXES or c == "." or _icon(c)


def _icon(c: str) -> bool:
    """spaCy's icons (its LIST_ICONS): symbols of category So other than the degree sign."""
    return c != "°" and unicodedata.category(c) == "So"


@lru_cache(maxsize=4096)
def is_punct(c: str) -> bool:
    """spaCy's `is_punct` of a one-character token: a Unicode punctuation character (category P*)."""
    return unicodedata.category(c).startswith("P")


def _lowerish(c: str) -> bool:
    """spaCy's ALPHA_LOWER: a lower-case letter, or a letter of a script without case."""
    return c.isalpha() and not c.isupper()


def sentence_ends(text: str) -> list[int]:
    """The end offset of each sentence of `text` (spaCy's ``sent.end_char``), the last one being
    ``len(text)``; sentence k is ``text[ends[k-1]:ends[k]]`` (from 0 for the first): whitespace after a
    sentence starts the next one. Trailing whitespace that spaCy makes a token of (anything but a
    single space) after a sentence-final mark is a sentence of its own, as in datatrove's split."""
    n = len(text)
    ends: list[int] = []
    done = 0  # offsets before this are already part of a sentence ending
    astral = not text.isascii() and _ASTRAL.search(text) is not None
    for m in (_CANDIDATE_ALL if astral else _CANDIDATE).finditer(text):
        i = m.start()
        if i < done:
            continue
        kind = _final(text, i)
        if kind is None:
            continue
        end = _closing(text, i + 1, suffix=kind == "suffix") if kind != "infix" else i + 1
        done = end
        # a sentence follows when a token follows: anything but the one space the last token carries
        if end < n and not (end == n - 1 and text[end] == " "):
            ends.append(end)
    ends.append(n)
    return ends


def _final(text: str, i: int) -> str | None:
    """Whether the final character at i is a token of its own that ends a sentence: "suffix" (only
    punctuation follows it in its chunk), "prefix" (only prefixes before it), "infix" (a full stop
    between a lower-case letter and an upper-case one, in a chunk that is no URL), or None."""
    n = len(text)
    c = text[i]
    j = i + 1  # spaCy's suffixes after it: punctuation, ``<>`` ...
    if j < n and text[j] != " " and text[j] != "\n":
        while j < n and _is_suffix(text[j]):
            j += 1
    suffix = j == n or text[j].isspace()
    if c != ".":
        if suffix:
            return "suffix"
        # split off the front of its chunk ("!=", "![image]"), after other prefixes only
        k = i
        while k > 0 and text[k - 1] in PREFIXES:
            k -= 1
        return "prefix" if c in PREFIXES and (k == 0 or text[k - 1].isspace()) else None
    if (i + 1 < n and text[i + 1] == ".") or (i > 0 and text[i - 1] == "."):
        return None  # an ellipsis: one token, not sentence-final
    if not suffix:
        before = text[i - 1] if i > 0 else ""
        after = text[i + 1]
        if not ((_lowerish(before) or before in _QUOTES) and (after.isupper() or after in _QUOTES)):
            return None
        s, e = _chunk(text, i)
        while s < i and text[s] in PREFIXES:  # prefixes split first: "'.Z'" is "'" + ".Z", no infix
            s += 1
        token = _stripped(text, s, e)
        if s >= i or token in DOTTED or is_url(token):
            return None
        # spaCy looks its exceptions up again in the piece before the split: "c." of "c.Emin" stays
        piece = text[s : i + 1]
        for m in INFIX.finditer(text, s, i):
            piece = text[m.end() : i + 1]
        return None if piece in ABBREVIATIONS or piece[:-1] in NO_STOP_AFTER else "infix"
    # the chunk before the stop, as far back as an exception could reach, less its prefixes
    start = _TAIL.search(text, max(0, i - _WORD_WINDOW), i).start()  # type: ignore[union-attr]
    while start < i and text[start] in PREFIXES:
        start += 1
    if not text[start:i].isalnum():
        for m in INFIX.finditer(text, start, i):  # the last piece of the chunk is what spaCy looks up
            start = m.end()
    word = text[start : i + 1]
    if word == ".":
        return "suffix"
    if word in ABBREVIATIONS or word[:-1] in NO_STOP_AFTER:
        return None
    b = text[i - 1]
    if b.islower() or b.isdigit() or _lowerish(b) or b in _BEFORE_STOP or _icon(b):  # "™." is "™" "."
        return "suffix"
    if b.isupper() and i - 2 >= start and text[i - 2].isupper():
        return "suffix"
    return None


def stop_is_token(text: str, i: int) -> bool:
    """Whether spaCy makes the full stop at offset i a token of its own (not kept by "Mr.", "M.", "y."
    of "x,y."): what word counts need besides sentence ends."""
    return _final(text, i) is not None


def _chunk(text: str, i: int) -> tuple[int, int]:
    """The whitespace-delimited chunk around offset i: [start, end)."""
    s, e, n = i, i + 1, len(text)
    while s > 0 and not text[s - 1].isspace():
        s -= 1
    while e < n and not text[e].isspace():
        e += 1
    return s, e


def _stripped(text: str, s: int, e: int) -> str:
    """The chunk text[s:e] less its leading prefix characters and its trailing punctuation."""
    while s < e and text[s] in PREFIXES:
        s += 1
    while e > s and (is_punct(text[e - 1]) or text[e - 1] in PREFIXES):
        e -= 1
    return text[s:e]


def _closing(text: str, p: int, *, suffix: bool) -> int:
    """Where the sentence ending at p ends: after the punctuation tokens that follow the final mark
    (the rest of its chunk, then further chunks' leading punctuation, each after one space)."""
    n = len(text)
    if suffix:  # the punctuation tokens split off the chunk's end (not ``>``: a symbol starts a sentence)
        while p < n and is_punct(text[p]):
            p += 1
    else:  # a prefix: the prefixes after it split off too ("![" of "![image]")
        while p < n and text[p] in PREFIXES and is_punct(text[p]):
            p += 1
        q = p  # and a rest of the chunk made only of punctuation is punctuation tokens ("--" of "<!--")
        while q < n and not text[q].isspace() and is_punct(text[q]):
            q += 1
        if q == n or text[q].isspace():
            p = q
    while p + 1 < n and text[p] == " " and is_punct(text[p + 1]):
        q = p + 1
        while q < n and not text[q].isspace() and is_punct(text[q]):
            q += 1
        if q < n and not text[q].isspace():  # a word follows in the chunk: only its prefixes split off
            q = p + 1
            while q < n and text[q] in PREFIXES and is_punct(text[q]):  # "<" (a symbol) starts the next
                q += 1
            if q == p + 1:
                break
        p = q
    return p
