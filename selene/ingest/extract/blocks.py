"""Rule 5, link density, on resiliparse's output (its minimal HTML): blocks (paragraphs, lists, table
rows) mostly of link text are dropped (menus, tag rows, tables of contents), and so are teaser
lists, three or more distinct titles that link to other pages (or pictures that do), each with a
short unlinked blurb. Headings that are their own anchor links stay. Code blocks come out whole,
marked with `CODE` so that no line rule touches them.
"""

from __future__ import annotations

import html as html_lib
import re

from selene.ingest.extract.dom import _TAG, CODE

_LINK = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S | re.I)
_HEADING_BLOCK = re.compile(r"\s*<h[1-6]\b[^>]*>.*</h[1-6]>\s*$", re.S | re.I)
_PRE = re.compile(r"(<pre\b[^>]*>.*?</pre>)", re.S | re.I)


def _blocks(markup: str) -> list[str]:
    """resiliparse's minimal HTML → plain text, without the blocks that are mostly link text.

    A block is a run of non-blank lines (a paragraph, a list, a table's rows). Dropped: a block of
    several lines whose text is more than half links (menus, teaser lists, tag rows, tables of
    contents), a one-line block that is a link and little else (a "Read more" or a lone teaser), and
    teaser lists whose items are a linked title and a short unlinked blurb (`_teasers`).
    Code blocks (``<pre>``) stay whole and are marked with CODE, so that no line rule touches them."""
    items: list[tuple[str, str]] = []  # (kind, text): kind "code", "title" (a one-line link), "blurb", "text"
    for i, segment in enumerate(_PRE.split(markup)):
        if i % 2:  # a <pre> block
            code = html_lib.unescape(_TAG.sub("", segment)).strip("\n")
            if code.strip():
                items.append(("code", CODE + code))
            continue
        for block in re.split(r"\n[ \t]*\n", segment):
            if not block.strip():
                continue
            text = html_lib.unescape(_TAG.sub("", block)).strip("\n")
            if "<a" not in block:
                short = len(text) <= BLURB_CHARS and text.count("\n") < 2
                items.append(("blurb" if short else "text", text))
                continue
            lines = [share for share in map(_linked_share, block.split("\n")) if share[0]]  # lines with text
            if not lines:
                continue  # links without text: pictures
            n = sum(chars for chars, _ in lines)
            linked = sum(chars * share for chars, share in lines)
            heading = bool(_HEADING_BLOCK.match(block))
            if len(lines) == 1 and linked > 0.8 * n and n < 300:
                # a heading may be its own anchor link: kept unless it titles a teaser, which links
                # to another page (a post's "Re: ..." permalink within the page does not)
                kind = "title" if _ELSEWHERE.search(block) else "anchor"
                items.append((kind, text) if heading else ("title-dropped", text))
                continue
            # a link to another page without text is an image's: a teaser card's picture
            pictures = len(_PICTURE.findall(block))
            if n and len(lines) > 1 and (linked > 0.5 * n or _teaser_lines(lines, pictures)):
                lead = _lead_paragraphs(block)  # the article's last paragraphs, run into the list
                if lead:
                    items.append(("text", lead))
                continue
            blurb = not linked and len(text) <= BLURB_CHARS and len(lines) <= 2  # beside a picture's link
            items.append(("blurb" if blurb else "text", text))
    return _teasers(items)


_ELSEWHERE = re.compile(r"""<a\b[^>]*\bhref=["']?(?!#)[^"'\s>]""", re.I)  # a link to another page
BLURB_CHARS = 250  # an unlinked block at most this long may be a teaser's blurb
TEASER_ITEMS = 3  # linked titles with blurbs in a row that make a teaser list


_PICTURE = re.compile(r"""<a\b[^>]*\bhref=["']?(?!#)[^"'\s>][^>]*>\s*</a>""", re.I)
_P_LINE = re.compile(r"\s*<p\b[^>]*>(?:(?!<a\b).)*</p>\s*$", re.S | re.I)


def _lead_paragraphs(block: str) -> str:
    """The text of the whole, unlinked ``<p>`` lines that open `block` (resiliparse puts no blank line
    between an article's last paragraph and a list of links after it), or ""."""
    lead = []
    for line in block.split("\n"):
        if not _P_LINE.match(line):
            break
        lead.append(html_lib.unescape(_TAG.sub("", line)).strip())
    return "\n".join(x for x in lead if x)


def _linked_share(line: str) -> tuple[int, float]:
    """(characters of text, share of them in links) of a line of minimal HTML."""
    n = len(" ".join(_TAG.sub("", line).split()))
    linked = sum(len(_TAG.sub("", m.group(1)).strip()) for m in _LINK.finditer(line))
    return n, (min(1.0, linked / n) if n else 0.0)


def _teaser_lines(lines: list[tuple[int, float]], pictures: int = 0) -> bool:
    """A block of teasers: TEASER_ITEMS or more lines that are links (a title, or a picture: a link
    without text), the other lines short and unlinked (blurbs, dates)."""
    titles = sum(1 for _, share in lines if share > 0.8) + pictures
    return titles >= TEASER_ITEMS and all(
        share > 0.8 or (share == 0 and n <= BLURB_CHARS) for n, share in lines
    )


def _teasers(items: list[tuple[str, str]]) -> list[str]:
    """The kept texts of `items`, without teaser lists: TEASER_ITEMS or more (linked title, blurb)
    pairs in a row lose their blurbs and titles; a linked title outside such a list is kept only when
    it is a heading."""
    drop = [kind == "title-dropped" for kind, _ in items]
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j][0].startswith("title") and items[j + 1][0] == "blurb":
            j += 2
        titles = [items[k][1].strip().lower() for k in range(i, j, 2)]
        # distinct titles: teasers have titles of their own
        if len(titles) >= TEASER_ITEMS and len(set(titles)) == len(titles):
            for k in range(i, j):
                drop[k] = True
            i = j
        else:
            i += 1
    return [text for (_, text), dropped in zip(items, drop, strict=True) if not dropped]


def _chars(blocks: list[str]) -> int:
    return sum(len(b) for b in blocks)
