"""Protection by markup: the elements that are or hold the page's content by their markup (`main`,
`article`, ARIA `main`, schema.org ``articleBody``, ``h-entry``) are kept whatever their names
and whatever wraps them (`_protect_content`); and, when the result is short, the elements skipped
for a class word that wrap most of the page's text are kept too (`_keep_big_wrappers`).

The candidates were marked in the source (`CONTENT_ATTR`, by `_prepare_source` and `_mark_names`):
one walk of the tree for a selector of one part finds them all.
"""

from __future__ import annotations

from typing import Any

from selene.ingest.extract.dom import CONTENT_ATTR, KEEP_ATTR, NAME_ATTR, _children, _text_len
from selene.ingest.extract.names import _would_skip

# the page's content by its markup: HTML5, ARIA, schema.org microdata, microformats (h-entry, hentry)
_CONTENT_SELECTOR = (
    "main, article, [role=main], [itemprop=articleBody], [itemprop=blogPost], [itemprop=mainEntity], "
    "[itemtype*=Article], [itemtype*=BlogPosting], .h-entry, .hentry, .entry-content, .post-content"
)


_CONTENT_PARTS = _CONTENT_SELECTOR.split(", ")
MAX_CONTENT_MATCHES = 16  # elements matched by the content selector that are listed, at most (a listing page)


def _content(body: Any, html: str) -> list[Any]:
    """The page's main/article elements (the first of each kind): the elements marked in the source
    `html` as candidates (CONTENT_ATTR: main and article tags, and the attributes of the selector's
    other parts), in one walk of the tree for a selector of one part, then each kind's first among
    them (a selector that matches nothing costs a walk of its own). No walk when none is marked."""
    if CONTENT_ATTR not in html:
        return []
    found = body.query_selector_all(f"[{CONTENT_ATTR}]")
    if len(found) > MAX_CONTENT_MATCHES:  # a listing page of many articles
        return [c for c in (body.query_selector(sel) for sel in _CONTENT_PARTS) if c is not None]
    first: dict[str, Any] = {}
    for el in found.values():
        for sel in _CONTENT_PARTS:
            if sel not in first and el.matches(sel):
                first[sel] = el
    return [first[sel] for sel in _CONTENT_PARTS if sel in first]


def _protect_content(content: list[Any]) -> None:
    """Mark the elements the skip selector would skip that are or hold the page's main/article
    elements: a class word on a wrapper (``<div class="page has-sidebar">``) must not remove the
    article inside it."""
    for node in content:
        while node is not None and node.type == 1 and node.tag not in ("body", "html"):
            if _would_skip(node):
                node.setattr(KEEP_ATTR, "")
            node = node.parent


# elements whose text `_keep_big_wrappers` measures, at most (a page nested thousands deep)
MAX_MEASURED = 300


def _keep_big_wrappers(body: Any, total: int, have: int) -> bool:
    """After a short result (`have` characters): mark the elements skipped for a class/id word that
    wrap the page's text to be kept (``<div class="widget Blog">`` around a blog's posts,
    ``<div class="wrapper sidebar-left">`` around everything): those holding most of the page's
    text, and the largest one when it holds much more than the result. True when one was marked.

    Found by a walk from <body> that goes down only into elements holding enough text to qualify (an
    element holds no more than its parent), not a list of all the named elements."""
    least = min(0.6 * total, 2 * have + 200)
    named: list[tuple[int, Any]] = []  # (text length, element), in document order
    stack = [(_text_len(child), child) for child in reversed(_children(body))]
    measured = len(stack)
    # in document order: of nested wrappers with the same text, max keeps the outer
    while stack and measured <= MAX_MEASURED:
        n, el = stack.pop()
        if n <= least:
            continue
        if el.hasattr(NAME_ATTR):
            named.append((n, el))
        children = _children(el)
        measured += len(children)
        stack += [(_text_len(child), child) for child in reversed(children)]
    if not named:
        return False
    kept = False
    for n, el in named:
        if n > 0.6 * total:
            el.setattr(KEEP_ATTR, "")
            kept = True
    n, largest = max(named, key=lambda x: x[0])
    if n > 2 * have + 200:
        largest.setattr(KEEP_ATTR, "")
        kept = True
    return kept
