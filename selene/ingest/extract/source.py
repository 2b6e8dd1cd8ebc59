"""Source preparation: the page's source as every rule reads it, from a str or from the raw bytes.

The contents of scripts, styles and svgs are cut before anything reads the source (half the bytes
of a typical page, which no rule reads), in the same pass that renames the tags resiliparse's
main-content mode would drop whole (each ``<ul>`` an ``<ol>``, each ``<aside>`` a marked
``<section>``) and marks ``<main>`` and ``<article>`` as candidates for the content. When the page
comes as bytes in a charset that writes ASCII as ASCII (`_ascii_bytes`), the cut is made on the
bytes, before decoding: decoding a large page's scripts costs more than the extraction.
"""

from __future__ import annotations

import re
from typing import AnyStr

from selene.ingest.extract.dom import ASIDE_ATTR, CONTENT_ATTR

# a start or end tag of an element whose contents are cut (script, style, svg) or that is renamed
# (`_RENAMES`): "<script>", "<style ", "</SCRIPT>", "</ul>"; not a custom "<styled-box>"
_RAW_TAG = re.compile(r"<(/?)(script|style|svg|ul|aside|main|article)(?=[\s/>])", re.I)
_RAW_TAG_BYTES = re.compile(_RAW_TAG.pattern.encode(), re.I)
_RENAMES = {  # new name in a start tag, in an end tag
    "ul": ("ol", "ol"),
    "aside": (f"section {ASIDE_ATTR}", "section"),
    "main": (f"main {CONTENT_ATTR}", "main"),
    "article": (f"article {CONTENT_ATTR}", "article"),
}
_RENAMES_BYTES = {k.encode(): (start.encode(), end.encode()) for k, (start, end) in _RENAMES.items()}


def _prepare_source(html: AnyStr) -> AnyStr:
    """`html` (str or bytes) as the rules read it: without the contents of its script, style and
    svg elements (half the bytes of a typical page, which no rule reads), and with the tags of
    `_RENAMES` renamed: each <ul> an <ol> (resiliparse's main-content mode drops every <ul>, content
    lists too; as <ol> they stay, and the link-density rule removes the menus among them), each
    <aside> a marked <section> (resiliparse drops every aside; selene's rule skips them but the one
    that holds the content), <main> and <article> marked as candidates for the content.

    Each cut element runs from its start tag's ">" to the first end tag of its name, as the parser
    reads it ("<style>" inside a script is script; an svg inside an svg ends the cut early, which
    leaves markup), and an svg's start tag may close it ("<svg .../>"). Neither scripts nor styles
    are text; an svg's text is an icon's label or a chart's ticks. One pass of a regex whose search
    runs in C from one "<" to the next: string searches (one per element name, then one for each end
    tag) read a page twice, and renaming the lists in the decoded text a third time."""
    if isinstance(html, str):
        pattern, gt, slash, svg, renames = _RAW_TAG, ">", "/", "svg", _RENAMES
    else:
        pattern, gt, slash, svg, renames = _RAW_TAG_BYTES, b">", b"/", b"svg", _RENAMES_BYTES
    out: list[AnyStr] = []
    pos = 0  # the source kept from here
    inside: AnyStr | None = None  # the name of the element whose contents are being cut
    content = 0  # where its contents start
    for m in pattern.finditer(html):
        if m.start() < content:
            continue  # in the start tag's attributes
        name = m.group(2).lower()
        if inside is None and name in renames:
            out += [html[pos : m.start(2)], renames[name][1 if m.group(1) else 0]]
            pos = m.end(2)
        elif inside is None:
            if not m.group(1):
                close = html.find(gt, m.end())
                if close < 0:
                    break
                if name != svg or html[close - 1 : close] != slash:
                    inside, content = name, close + 1
        elif m.group(1) and name == inside:
            out += [html[pos:content]]
            pos, inside = m.start(), None
    if not out and inside is None:
        return html
    out.append(html[pos:] if inside is None else html[pos:content])  # an unclosed one runs to the end
    return html[:0].join(out)


def _ascii_bytes(charset: str) -> bool:
    """Whether `charset` writes ASCII as one byte each and no other character with ASCII bytes (not
    UTF-16/32, nor ISO-2022 or HZ, where ASCII bytes stand for other characters after an escape)."""
    name = charset.lower().replace("_", "-")
    if name.startswith(("utf-16", "utf-32", "utf-7", "iso-2022", "hz", "ucs")):
        return False
    try:
        return "</script>".encode(charset) == b"</script>"
    except (LookupError, UnicodeError):
        return False
