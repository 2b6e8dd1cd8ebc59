"""Protection by prose, the content root: the page's longest paragraphs of prose (``<p>``, or a block
of text in ``<br>`` lines; found and marked in the source by `_mark_paragraphs`) vote for the element
that holds them, unless they sit in a nav, aside, footer, comment section or a box with a strong
boilerplate name (`_strong_boiler`). The root (the deepest element holding half their text) and its
ancestors are kept whatever their names; below it, wrappers with only weak names (`_weak_name`); a
boilerplate class that the root's own paragraphs carry names prose on that page; inside a paragraph,
an element a boilerplate word names that holds most of its text stays (`_keep_named_inside`).

When resiliparse's own main-content rules drop most of the root's prose (`_lost_prose`), the region
of the prose is extracted whole, unless that loses the prose they kept (`_holds_prose`).
"""

from __future__ import annotations

import bisect
import heapq
import html as html_lib
import re
from typing import Any

from selene.ingest.extract.dom import (
    _MARK_TEXT,
    _TAG,
    ASIDE_ATTR,
    KEEP_ATTR,
    LONE_PROSE_CHARS,
    NAME_ATTR,
    PROSE_CHARS,
    _text_len,
)
from selene.ingest.extract.names import (
    _BOILER_WORDS,
    _SKIP_ROLES,
    _SKIP_TAGS,
    SLUG_WORDS,
    _words,
    _would_skip,
)

TOP_PARAGRAPHS = 8  # the longest paragraphs of the source that vote for the content's container


# a paragraph's start (group 1), or a paragraph break of text without <p> (a double <br>): one pass
# over the source finds both (each pass over a page costs about as much, whatever the pattern)
_P_OR_BREAK = re.compile(r"<(?:([pP])(?=[\s>])|(?:br|BR|Br)\s*/?>\s*<(?:br|BR|Br))")
_P_END = re.compile(r"<(?:/?[pP][\s>]|/(?:div|td|li|section|article|body)\b)")
_BLOCK_BOUNDARY = re.compile(r"</?(?:div|td|p|section|article|body|table)\b", re.I)
MARK_ATTR = "data-selene-p"  # marks, in the source, the paragraphs that vote for the content


def _mark_paragraphs(html: str) -> tuple[str, int]:
    """The source with the TOP_PARAGRAPHS longest paragraphs of prose marked ``data-selene-p="rank"``
    (found with a regex; a paragraph ends at the next paragraph or block end), and how many.

    A paragraph's text is no longer than its markup: they are measured longest markup first, and
    no more once the markup left is shorter than the texts already found (a page may have hundreds)."""
    # (markup length, tag start, its name's end, text from, to)
    candidates: list[tuple[int, int, int, int, int]] = []
    breaks = []
    for m in _P_OR_BREAK.finditer(html):
        if not m.group(1):
            breaks.append(m)
            continue
        after = m.end()
        end = _P_END.search(html, after, after + 20000)
        stop = end.start() if end else after + 20000
        if stop - after >= PROSE_CHARS:  # else less markup than the text a paragraph of prose needs
            candidates.append((stop - after, after - 2, after, after, stop))
    # text in <br> lines (older pages): the first <br> of a double one stands for the block it is in,
    # measured from the block boundary before it to the one after it
    blocks: set[int] = set()
    bounds = [b.start() for b in _BLOCK_BOUNDARY.finditer(html)] if breaks else []
    for m in breaks:
        k = bisect.bisect_left(bounds, m.start())
        before = bounds[k - 1] if k else -1
        if before in blocks:
            continue
        blocks.add(before)
        end = _BLOCK_BOUNDARY.search(html, m.end(), m.end() + 20000)
        stop = end.start() if end else m.end() + 20000
        candidates.append((stop - max(before, 0), m.start(), m.start() + 3, max(before, 0), stop))
    # a min-heap of the longest: (text length, start of the tag, end of its name)
    best: list[tuple[int, int, int]] = []
    for size, start, name_end, lo, hi in sorted(candidates, reverse=True):
        if len(best) == TOP_PARAGRAPHS and size < best[0][0]:
            break
        n = _inner_text_len(html[lo:hi])
        if n >= PROSE_CHARS:
            heapq.heappush(best, (n, start, name_end))
            if len(best) > TOP_PARAGRAPHS:
                heapq.heappop(best)
    top = sorted((start, name_end) for _, start, name_end in best)
    if not top:
        return html, 0
    parts, last = [], 0
    for rank, (_, name_end) in enumerate(top):
        parts += [html[last:name_end], f' {MARK_ATTR}="{rank}"']
        last = name_end
    parts.append(html[last:])
    return "".join(parts), len(top)


def _inner_text_len(markup: str) -> int:
    """Length of the text of `markup` (a start tag's attributes, then content), spaces collapsed."""
    return len(" ".join(_TAG.sub(" ", markup[markup.find(">") + 1 :]).split()))


_COMMENT_WORDS = {"comment", "comments", "commentlist", "disqus", "respond", "replies", "reply"}


def _protect_prose(body: Any, marked: int) -> tuple[Any, list[str], set[str]]:
    """Keep the wrappers of the page's prose that a skip rule would remove: a layout class
    (``c-fixed-sidebar-layout``), a page builder's ``elementor-widget`` around each paragraph, a
    ``section--has-ads`` around the lead. Returns the region of the prose (the deepest element that
    holds every voting paragraph, the root or above it), the texts of the root's marked paragraphs,
    and the boilerplate class values that the root's marked paragraphs themselves carry
    (``<p class="paywall">`` around a metered article's text): on this page they name prose.
    (None, [], set()) when there is no root.

    The marked paragraphs (the longest of the page) are looked up; the content root is the deepest
    ancestor of the longest one that holds at least half of their text. The root and its ancestors
    are kept whatever their names; between the root and a marked paragraph inside it only wrappers
    named by weak words (`_weak_name`). Paragraphs outside the root (a long "about me" in a sidebar)
    keep nothing; nor do paragraphs in a comment section (a class or id word such as "comments"), and
    a root with fewer than two paragraphs is no root."""
    # (text, ancestors from the parent up to <body>, element)
    paragraphs: list[tuple[str, list[Any], Any]] = []
    names: dict[int, set[str]] = {}  # the boilerplate class value a paragraph carries
    seen: set[Any] = set()
    strong: dict[Any, bool] = {}  # _strong_boiler of the ancestors, which the paragraphs share
    above: dict[Any, list[Any]] = {}  # an ancestor and its own ancestors up to <body>
    # in document order, the order of their ranks; a mark inside a comment or a textarea is no element
    for p in body.query_selector_all(f"[{MARK_ATTR}]").values() if marked else ():
        if p.tag == "br":  # text in <br> lines: the block they are in
            p = p.parent
            if p is None or p.type != 1 or p.tag in ("body", "html") or p.hasattr(MARK_ATTR) or p in seen:
                continue
        seen.add(p)
        chain, node = [], p.parent
        while node is not None and node.type == 1 and node.tag not in ("body", "html"):
            if node in above:  # the rest of the way is known (a parent costs microseconds)
                chain += above[node]
                break
            chain.append(node)
            node = node.parent
        for i in range(len(chain)):
            if chain[i] in above:
                break
            above[chain[i]] = chain[i:]
        for n in chain:
            if n not in strong:
                strong[n] = _strong_boiler(n)
        if chain and not any(strong[n] for n in chain):
            value = p.getattr("class")
            named = p.hasattr(NAME_ATTR) and value and _COMMENT_WORDS.isdisjoint(_words(value))
            names[len(paragraphs)] = {value} if named else set()
            text = p.text or ""
            paragraphs.append(
                (" ".join((_MARK_TEXT.sub("", text) if "data-selene-" in text else text).split()), chain, p)
            )
    if not paragraphs:
        return None, [], set()
    held: dict[Any, int] = {}  # text of the paragraphs inside, each counted up to LONE_PROSE_CHARS
    depth: dict[Any, int] = {}
    for text, chain, _ in paragraphs:
        for i, node in enumerate(chain):
            held[node] = held.get(node, 0) + min(len(text), LONE_PROSE_CHARS)
            depth[node] = len(chain) - i
    total = sum(min(len(text), LONE_PROSE_CHARS) for text, _, _ in paragraphs)
    roots = [node for node, n in held.items() if n * 2 >= total]
    root = max(roots, key=lambda node: depth[node]) if roots else None
    inside = [(text, chain, p) for text, chain, p in paragraphs if root is not None and root in chain]
    if len(inside) < 2 and sum(len(text) for text, _, _ in inside) < LONE_PROSE_CHARS:
        return None, [], set()  # one paragraph is no evidence (an author box, a teaser) unless it is long
    prose_names = {part for i, (_, chain, _) in enumerate(paragraphs) if root in chain for part in names[i]}
    skipped: dict[Any, bool] = {}  # _would_skip of the ancestors, which the paragraphs share
    for text, chain, p in inside:
        _keep_named_inside(p, len(text))
        below = True
        for node in chain:
            below = below and node != root
            if node not in skipped:
                skipped[node] = _would_skip(node)
            # below the root only a wrapper named by a weak word (a page builder's "widget", an
            # "--has-ads" modifier) is kept: a "related" or "promo" box inside an article still goes
            if skipped[node] and (not below or _weak_name(node)):
                node.setattr(KEEP_ATTR, "")
    region = max((node for node, n in held.items() if n == total), key=lambda node: depth[node], default=root)
    return region, [text for text, _, _ in inside], prose_names


MAX_NAMED_INSIDE = 8  # named elements inside a paragraph of prose looked at, at most


def _keep_named_inside(p: Any, chars: int) -> None:
    """Keep an element inside the paragraph `p` of prose (`chars` of text) that a boilerplate word
    names but that holds most of its text: a Facebook note's ``<span class="...ContentTags">``
    around the whole paragraph. A share button or a tag link inside a paragraph still goes."""
    named = p.query_selector_all(f"[{NAME_ATTR}]")
    if len(named) > MAX_NAMED_INSIDE:  # a paragraph full of tag links
        return
    for el in named.values():
        if _text_len(el) * 2 >= chars:
            el.setattr(KEEP_ATTR, "")


# words of a layout wrapper's name: "o-row c-fixed-sidebar-layout", "l-sidebar-fixed l-segment",
# "post tag-climate-change" are wrappers, not a sidebar or a tag list
_STRUCTURAL_WORDS = {
    "layout", "wrap", "wrapper", "container", "grid", "row", "col", "column", "columns", "page", "main",
    "content", "body", "inner", "outer", "segment", "section", "site", "article", "post", "entry", "story",
    "hentry", "text", "zone",
}  # fmt: skip
_STRONG_ROLES = {"navigation", "complementary", "contentinfo", "banner", "menu", "menubar"}


def _strong_boiler(node: Any) -> bool:
    """Whether `node` is surely not content, so that paragraphs inside it do not vote for the content
    root: a nav, aside or footer, a landmark role, comments, or a name with a boilerplate word that is
    neither weak (`_WEAK_WORDS`) nor in a layout wrapper's name (`_STRUCTURAL_WORDS`)."""
    tag = node.tag
    if tag in ("nav", "footer") or node.hasattr(ASIDE_ATTR) or node.getattr("role") in _STRONG_ROLES:
        return True
    if tag in ("main", "article"):
        return False
    words = _words(node.getattr("class") or "")
    value = node.getattr("id")
    if value and len(_words(value)) < SLUG_WORDS:
        words |= _words(value)
    if not _COMMENT_WORDS.isdisjoint(words):
        return True
    return bool((_BOILER_WORDS & words) - _WEAK_WORDS) and _STRUCTURAL_WORDS.isdisjoint(words)


_WEAK_WORDS = {
    "widget", "widgets", "sidebar", "ad", "ads", "advert", "banner", "meta", "toc", "skip", "hidden",
}  # fmt: skip


def _weak_name(node: Any) -> bool:
    """Whether `node` is skipped for its class or id only, by words of _WEAK_WORDS."""
    if node.tag in _SKIP_TAGS or node.getattr("role") in _SKIP_ROLES:
        return False
    words = _words(f"{node.getattr('class') or ''} {node.getattr('id') or ''}")
    return _BOILER_WORDS.intersection(words) <= _WEAK_WORDS


LOST_PROSE = 0.3  # share of the content root's longest paragraphs missing from the result that undoes main-content mode


def _lost_prose(prose: list[str], raw: str) -> bool:
    """Whether more than LOST_PROSE of the text of `prose` (the longest paragraphs of the content
    root) is missing from `raw` (resiliparse's minimal HTML), each paragraph judged by its start."""
    if not prose:
        return False
    flat = " ".join(html_lib.unescape(_TAG.sub("", raw)).split())
    lost = [len(t) for t in prose if t[:80] not in flat]
    total = sum(len(t) for t in prose)
    # the root's prose must be a good part of the page: not the footer's paragraphs of a page whose
    # article has none (its text in <br> lines)
    return (
        (len(lost) >= 2 or total >= LONE_PROSE_CHARS)
        and sum(lost) > LOST_PROSE * total
        and len(flat) < 3 * total
    )


def _holds_prose(candidate: str, raw: str) -> bool:
    """Whether `candidate` holds at least half of the prose of `raw` (both minimal HTML): of the text
    of its lines of PROSE_CHARS or more, each line judged by its start."""
    flat = " ".join(html_lib.unescape(_TAG.sub("", candidate)).split())
    lines = [" ".join(line.split()) for line in html_lib.unescape(_TAG.sub("", raw)).split("\n")]
    prose = [line for line in lines if len(line) >= PROSE_CHARS]
    kept = sum(len(line) for line in prose if line[:80] in flat)
    return kept * 2 >= sum(len(line) for line in prose)
