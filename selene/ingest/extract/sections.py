"""Rule 4, boilerplate sections: a heading such as "12 Comments", "Customer reviews", "Related posts",
"See also" and what it opens (its section, or up to the next heading or paragraph of prose); a
consent banner (a block with an Accept / Reject button).

Headings and buttons are found in the source with regexes, and only the elements they found are
looked up in the tree (`_nth_in_source`): a page with a thousand headings costs no more than one
with ten.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Callable
from typing import Any

from selene.ingest.extract.dom import _TAG, PROSE_CHARS, _text_len

# headings of sections that are not the page's content (whole heading, case-insensitive)
_BOILER_HEADING = re.compile(
    r"^\s*(?:\d+\s+)?(?:comments?|responses?|replies|discussion|leave a (?:reply|comment)|join the conversation|"
    r"(?:customer |user )?reviews?|ratings? (?:and|&) reviews|questions (?:and|&) answers|"
    r"related(?: posts| articles| stories| products| content)?|you (?:may|might) also like|more (?:from|in|on) .{1,40}|"
    r"recommended(?: for you)?|read (?:next|more)|trending(?: now)?|most (?:read|popular|viewed)|popular(?: posts)?|"
    r"(?:customers|people) (?:also|who) .{1,40}|frequently bought together|"
    r"shipping(?: (?:and|&) returns)?|delivery(?: (?:and|&) returns)?|returns(?: policy)?|"
    r"share(?: this(?: \w+)?)?|follow us|newsletter|subscribe.{0,40}|sign up.{0,40}|about the author|"
    r"tags|categories|archives|advertisement|references|notes|citations|footnotes|sources|bibliography|"
    r"external links|further reading|see also)\s*[:.!]?\s*(?:\(\d+\))?\s*$",
    re.I,
)
_HEADING_TEXT = re.compile(r"<(h[2-6])\b[^>]*>((?:(?!</h[2-6]).){1,200})</h[2-6]>", re.I | re.S)
_CONSENT = re.compile(
    r"<button\b[^>]*>\s*(?:accept(?: all)?(?: cookies)?|agree|i agree|reject(?: all)?|customi[sz]e|allow all|"
    r"manage (?:preferences|settings|options))\s*</button>",
    re.I,
)


def _nth_in_source(body: Any, html: str, tag: str, pos: int, wanted: Callable[[Any], bool]) -> Any:
    """The element `tag` whose start tag is at `pos` in the page source, found by its index among the
    `tag` elements (one item of a resiliparse collection, never the whole), and checked with `wanted`.

    Start tags the parser does not make into elements (inside scripts, comments, textareas) put the
    index ahead of the element's: the three before it are tried too. None when nothing checks out."""
    k = len(re.findall(rf"<{tag}\b", html[:pos], re.I))
    found = body.get_elements_by_tag_name(tag)
    for i in range(min(k, len(found) - 1), max(-1, k - 4), -1):
        el = found.item(i)
        if wanted(el):
            return el
    return None


def _boiler_sections(body: Any, html: str, total: Callable[[], int]) -> list[Any]:
    """Sections under a boilerplate heading ("12 Comments", "Customer reviews", "Related posts",
    "Shipping & Returns"), and consent banners (a block with an Accept / Reject button).

    The page source is searched with regexes, and only the elements they found are looked up in the
    tree (`_nth_in_source`): a page with a thousand headings costs no more than one with ten."""
    out: list[Any] = []
    for m in _HEADING_TEXT.finditer(html):
        text = _TAG.sub("", m.group(2))
        if not _BOILER_HEADING.match(html_lib.unescape(text) if "&" in text else text):
            continue
        h = _nth_in_source(
            body, html, m.group(1).lower(), m.start(), lambda el: bool(_BOILER_HEADING.match(el.text or ""))
        )
        if h is None:
            continue
        parent = h.parent
        if (
            parent is not None
            and parent.type == 1
            and parent.first_element_child is h
            and parent.tag not in ("body", "html", "main", "article")
            and _text_len(parent) < 0.5 * total()
        ):
            out.append(parent)  # the section the heading opens
        else:  # the heading and what follows it up to the next heading or paragraph of prose
            out.append(h)
            sib = h.next_element_sibling
            while sib is not None and sib.tag not in ("h1", "h2", "h3", "h4", "h5", "h6"):
                if sib.tag == "p" and _text_len(sib) >= PROSE_CHARS:
                    break  # a "Related" box in the middle of an article: the article goes on here
                out.append(sib)
                sib = sib.next_element_sibling
    for m in _CONSENT.finditer(html):
        b = _nth_in_source(body, html, "button", m.start(), lambda el: bool(_CONSENT.match(el.outer_html)))
        if b is None or b.parent is None or b.parent.type != 1:
            continue
        box = b.parent
        while box.tag in ("div", "span", "form") and box.parent is not None and _text_len(box) < 40:
            box = box.parent  # up from a row of buttons to the banner
        if box.tag not in ("body", "html", "main", "article") and _text_len(box) < 1500:
            out.append(box)
    return out
