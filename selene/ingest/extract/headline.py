"""Rule 7, the headline: on an article page (Open Graph ``og:type`` article, JSON-LD Article or
BlogPosting) the headline block (the page's first ``<h1>``, its ``og:title`` or a part of its
``<title>``, among the first blocks) is dropped, as article-extraction ground truth and trafilatura
do; a documentation page keeps its ``<h1>``. Whether a page is an article is read from the source
before its scripts are cut (JSON-LD is a script).
"""

from __future__ import annotations

import html as html_lib
import re
from typing import AnyStr

from selene.ingest.extract.dom import _TAG, CODE, PROSE_CHARS

# an article by its metadata (Open Graph, JSON-LD): its <h1> is the headline, not body text. Not by an
# <article> element or microdata alone: documentation themes use those, and a doc's <h1> is its text
_ARTICLE_PAGE = re.compile(
    r"<meta\s[^>]*(?:property|name)=[\"']og:type[\"'][^>]*content=[\"']article[\"']"
    r'|"@type"\s*:\s*"(?:(?:News|Reportage|Analysis|Opinion)?Article|BlogPosting|Report)"',
    re.I,
)
_H1 = re.compile(r"<h1\b[^>]*>(.*?)</h1\s*>", re.I | re.S)
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.I | re.S)
_OG_TITLE = re.compile(r"""<meta\s[^>]*property=["']og:title["'][^>]*content=["']([^"']*)["']""", re.I)
_TITLE_SPLIT = re.compile(r"\s+[|–—:-]\s+|\s+::\s+")
HEADLINE_BLOCKS = 4  # the headline is looked for among the first blocks, before any paragraph of prose


_ARTICLE_PAGE_BYTES = re.compile(_ARTICLE_PAGE.pattern.encode(), re.I)


def _article_page(html: str | bytes) -> bool:
    """Whether the page declares itself an article (`_ARTICLE_PAGE`, in its first 200,000
    characters or bytes): the pattern is tried only around the places that name a type (found by a
    literal search; the pattern itself, case-insensitive, would be tried at every character)."""
    if isinstance(html, bytes):
        return _declares_article(html, (b"og:type", b'"@type"'), _ARTICLE_PAGE_BYTES)
    return _declares_article(html, ("og:type", '"@type"'), _ARTICLE_PAGE)


def _declares_article(html: AnyStr, needles: tuple[AnyStr, ...], pattern: re.Pattern[AnyStr]) -> bool:
    for needle in needles:
        at = html.find(needle, 0, 200000)
        while at >= 0:
            if pattern.search(html, max(0, at - 400), min(at + 400, 200000)):
                return True
            at = html.find(needle, at + 1, 200000)
    return False


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", html_lib.unescape(text)).lower().split())


def _drop_headline(blocks: list[str], html: str) -> list[str]:
    """The blocks of an article page (`_article_page`) minus the headline: among the first blocks,
    before a paragraph of prose, one that is the page's first <h1>, its og:title or a part of its
    <title>."""
    names: set[str] = set()
    for pattern in (_H1, _OG_TITLE, _TITLE):
        m = pattern.search(html, 0, len(html) if pattern is _H1 else 200000)  # titles: in the head
        if m:
            text = _TAG.sub(" ", m.group(1))
            names.update(_norm(t) for t in [text, *_TITLE_SPLIT.split(text)] if len(t.split()) >= 2)
    names.discard("")
    for i, block in enumerate(blocks[:HEADLINE_BLOCKS]):
        if len(block) >= PROSE_CHARS * 2 or block.startswith(CODE):
            break
        if _norm(block) in names:
            return blocks[:i] + blocks[i + 1 :]
    return blocks
