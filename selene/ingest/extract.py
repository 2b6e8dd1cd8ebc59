"""Main text of a web page: boilerplate removal by structure and density on resiliparse's DOM.

resiliparse's main-content mode is fast (C++) and keeps nearly all of an article, but also much
around it: reader comments, "related posts" blocks, rows of share buttons, newsletter boxes, polls,
the keyboard help and chapter navigation of documentation sites; and it drops every `<ul>`, content
lists too. `extract_main_text` marks boilerplate elements before resiliparse walks the tree (it
skips marked elements), then drops link blocks and boilerplate lines from what it returns. Every
rule is generic, no rule names a site:

1. **Tags and roles.** `nav`, `aside`, `header`, `footer`, `dialog`, `figcaption`, form controls,
   iframes, ARIA roles that are not content (navigation, complementary, contentinfo, banner, search,
   dialog, menus, alerts), hidden elements (``hidden``, ``aria-hidden``, inline ``display: none``),
   ad slots (``data-ad``).
2. **Class and id words.** Elements whose class or id has a word of the boilerplate vocabulary
   (comments, related, share, newsletter, sidebar, widget, advert, poll, breadcrumb, cookie, popup,
   teasers ...), as readability and trafilatura do; words are split on ``-``, ``_``, spaces and case
   changes, so ``related-posts`` and ``shareButtons`` match while ``entry-content`` and
   ``shared-memory`` do not; a few whole class tokens too (``hidden``, ``sr-only``,
   ``screen-reader-text``, ``search``). Not boilerplate names: syntax highlighters' token classes
   (``hljs-comment``), ids of four words or more (slugs of a title: ``faster-search-across-...``),
   and any name on a heading. The values are judged once per page and marked in the source.
3. **Repeated user posts.** A container of three or more sibling blocks of the same shape that carry
   the marks of user posts (a ``<time>``, or Reply / Like / Report / Quote controls): reader comments.
   Kept when they are answers (named so, or mostly several paragraphs or code), and when removing
   them leaves almost nothing (a forum thread).
4. **Boilerplate sections.** A heading such as "12 Comments", "Customer reviews", "Related posts",
   "See also" and what it opens (up to the next heading or paragraph of prose); a consent banner (a
   block with an Accept / Reject button).
5. **Link density,** on resiliparse's output: blocks (paragraphs, lists, table rows) mostly of link
   text: menus, tag rows, tables of contents; and teaser lists, three or more distinct titles that
   link to other pages (or pictures that do), each with a short unlinked blurb. Lists are parsed as
   ``<ol>`` so that resiliparse keeps them; headings that are their own anchor links stay.
6. **Lines,** outside code blocks: controls and labels ("Share", "Advertisement", "Read more: ...",
   the common German, French and Spanish ones), bylines, datelines and reading times, copyright and
   view counts, calls to action in short blocks (newsletter, paywall, consent, affiliate text), post
   and profile metadata ("Posts: 303", "11mo ago", breadcrumbs), shop widgets (prices, ratings,
   stock lines), and repeats of short label-like lines (gallery captions).
7. **Headline.** On an article page (Open Graph ``og:type`` article, JSON-LD Article or
   BlogPosting) the headline block is dropped, as article-extraction ground truth and trafilatura
   do; a documentation page keeps its ``<h1>``.

Protection, the content root: the page's longest paragraphs of prose (``<p>``, or a block of text in
``<br>`` lines) vote for the element that holds them, unless they sit in a nav, aside, footer,
comment section or a box with a strong boilerplate name. The root (the deepest element holding half
their text) and its ancestors are kept whatever their names (``c-fixed-sidebar-layout``,
``l-sidebar-fixed``); below it, wrappers with only weak names (a page builder's ``elementor-widget``,
a ``section--has-ads`` modifier); a boilerplate class that the root's own paragraphs carry
(``<p class="paywall">`` around a metered article) names prose on that page. When resiliparse's own
main-content rules drop most of the root's prose (a ``permalink`` class on a post), the region of the
prose is extracted whole, unless that loses the prose they kept. Elements that are or hold the
page's content by markup (`main`, `article`, ARIA `main`, schema.org ``articleBody``, ``h-entry``)
are kept too, an ``<aside>`` among them (a site that wraps its article in one: asides are renamed in
the source, since resiliparse's own rules drop every one, and skipped by selene's rule instead); and
when the result is short, the class-word element that holds the most text. Inside
a paragraph of prose, an element a boilerplate word names that holds most of its text stays (a
``<span class="...ContentTags">`` around all of it). An embedded post (``<blockquote
class="twitter-tweet">``) is quoted content: its class word is renamed in the source, since
resiliparse's own rules drop it.

The text comes out NFC-normalized (a page may spell "ü" as u + U+0308: one word, not two, for a
tokenizer or a metric).

Speed: the contents of scripts, styles and svgs are cut before anything reads the source (half the
bytes of a typical page), from the raw bytes before they are decoded when the page comes as bytes
(`main_text_of_bytes`, what `html_to_text` calls), in the same pass that renames the lists; regexes
over the source use literal prefixes, and each pass over the source costs about the same whatever
its pattern, so passes are shared (class, id, role and hiding attributes in one, found from their
"=" rather than from every space of an indented page; paragraphs and double ``<br>`` in another);
a selector part costs a match against every element, so what can be judged in the source is marked
there (one selector part instead of one per role, style or class value; the candidates for the
content elements too); a resiliparse collection indexed (``c[i]``) or iterated costs a walk of the
tree per element (listing 2,700 elements takes seconds) while ``c.item(i)`` and ``c.values()`` cost
microseconds, and every node object costs microseconds, so collections are read only with those,
no rule lists a large one, and ancestors are walked once per page: boilerplate names, paragraphs,
headings and consent buttons are found in the source and marked there or looked up one by one.
"""

from __future__ import annotations

import bisect
import heapq
import html as html_lib
import re
import unicodedata
from collections.abc import Callable
from typing import Any, AnyStr

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import bytes_to_str
from resiliparse.parse.html import HTMLTree

SKIP_ATTR = "data-selene-skip"  # marks an element resiliparse skips
KEEP_ATTR = "data-selene-keep"  # marks an element a skip rule must not remove (see "Protection")

_SKIP_TAGS = (
    "nav", "header", "footer", "dialog", "button", "select", "textarea", "label", "menu", "iframe",
    "figcaption",
)  # fmt: skip  (asides too: renamed in the source, they are skipped by ASIDE_ATTR)
_SKIP_ROLES = {
    "navigation", "complementary", "contentinfo", "banner", "search", "dialog", "alertdialog",
    "menu", "menubar", "menuitem", "toolbar", "tablist", "tooltip", "alert", "img", "checkbox", "radio",
}  # fmt: skip
# what else hides an element or marks it as chrome: inline styles and ad attributes
_HIDDEN_STYLES = ("display:none", "display: none", "visibility:hidden", "visibility: hidden")
_AD_ATTRS = ("data-ad", "data-text-ad", "data-advertisment")
# words of class / id values that mark boilerplate (matched as whole words after splitting)
_BOILER_WORDS = {
    "comment", "comments", "commentlist", "disqus", "respond", "replies",
    "related", "relatedposts", "recommended", "recommendations", "recirc", "outbrain", "taboola",
    "share", "sharing", "sharebar", "sharer", "social", "socials",
    "newsletter", "subscribe", "subscription", "signup", "paywall", "epaper",
    "sidebar", "widget", "widgets", "promo", "promotion", "advert", "advertisement", "ads", "ad",
    "adslot", "sponsor", "sponsored", "banner",
    "poll", "polls", "survey", "breadcrumb", "breadcrumbs", "pagination", "pager",
    "cookie", "cookies", "consent", "gdpr", "modal", "popup", "overlay", "lightbox",
    "trending", "popular", "mostread", "toc", "navbox", "navbar", "menu", "nav", "navigation",
    "footer", "masthead", "skip", "skiplink",
    "byline", "author", "authors", "bio", "tags", "tag", "taglist", "categories", "meta", "postmeta",
    "caption", "credit", "credits", "gallery", "slideshow", "carousel", "rating", "ratings",
    "thumbnails", "teaser", "teasers",
    "reviews", "infobox", "references", "reflist", "footnotes", "catlinks", "editsection",
    "profile", "postprofile", "userinfo", "usercard", "signature", "sig", "avatar", "badges",
    "searchbox", "searchform", "searchbar", "dropdown", "promoted", "widead", "feedback", "socialmedia",
}  # fmt: skip
# whole class tokens (not words of them) that hide an element or name a social box: "hidden" and
# "sr-only" text is not shown, while "hidden-contents-menu" or a "twitter-tweet" embed may be content
_BOILER_TOKENS = {
    "hidden", "is-hidden", "invisible", "display-none", "d-none", "sr-only", "visually-hidden",
    "screen-reader-text", "screen-reader-only", "facebook", "twitter", "social-links", "share-links",
    "search", "search-form", "search-box", "site-search",
}  # fmt: skip
# stems of boilerplate words that names run together with another ("cookiemsg", "newsletterbox")
# a value names boilerplate only if one of its words is one of these (a boilerplate word, or a word
# of a boilerplate token) or starts with a stem: most values are passed over with one set lookup
_CANDIDATE_WORDS = _BOILER_WORDS | {word for token in _BOILER_TOKENS for word in token.split("-")}
_BOILER_STEMS = ("cookie", "gdpr", "newsletter", "disqus", "taboola", "outbrain", "advert", "byline")
SLUG_WORDS = 4  # an id of this many words or more is a slug of a heading or title, not a name
# syntax highlighters' token classes ("hljs-comment", "token comment", "cm-comment"): code, not chrome
_HIGHLIGHTER_WORDS = {"hljs", "token", "tok", "cm", "pl", "pygments", "highlight", "sourcecode", "shiki", "prism"}
_POST_CONTROLS = re.compile(r"^\s*(reply|like|likes|report|quote|flag|upvote|downvote|permalink|share)\s*$", re.I)
# the page's content by its markup: HTML5, ARIA, schema.org microdata, microformats (h-entry, hentry)
_CONTENT_SELECTOR = (
    "main, article, [role=main], [itemprop=articleBody], [itemprop=blogPost], [itemprop=mainEntity], "
    "[itemtype*=Article], [itemtype*=BlogPosting], .h-entry, .hentry, .entry-content, .post-content"
)


# lines that are controls or labels, not text (whole line, case-insensitive)
_BOILER_LINE = re.compile(
    r"^(?:"
    r"share(?: this| on \w+| via \w+)?|tweet|email|e-mail|print|copy link|pin it|whatsapp|facebook|twitter|linkedin|"
    r"advertisement(?: [-–—] .{0,40})?|sponsored(?: content| links| ads)?|ad|loading\.{0,3}|rss(?: feed)?|"
    r"text size.{0,80}|pages?:?(?: \d+)+|send (?:this )?to a friend|top|connect with us|"
    r"suggested (?:articles|stories|posts|reading)|editors?['’]?s? (?:picks|recommendations)|recommended reading|"
    r"keywords?:? .{0,200}|.{1,40} on digg|powered by .{1,40}|.{0,20}bloggers like this|"
    r"(?:related|more|read more|latest|also) (?:\w+ ){0,3}(?:on|from|in) .{1,40}:|the latest (?:on|from|in) .{1,40}|"
    r"weiterlesen|mehr lesen|anzeige|werbung|kommentare?(?: schreiben| geschlossen)?|ähnliche (?:beiträge|artikel)|"
    r"lade weitere \w+|mehr laden|weiterführende(?:r)? links?|"
    r"(?:read more|continue reading|weiterlesen|lire la suite|leer más) \d+ ?(?:min|mins|minutes?|minuten)|"
    r"related (?:topics|subjects|tags)\b.{0,200}|"
    r"[^.!?|]{1,30}(?: \| [^.!?|]{1,30}){2,}|"
    r"schlagworte:?.{0,200}|teilen|drucken|lire la suite|publicité|leer más|publicidad|"
    r"read more|continue reading|see more|show more|load more|view all|"
    r"(?:read more|read next|more on this|also read|see also|related|watch|listen|recommended)\s*:.{0,150}|"
    r"related(?: posts| articles| stories)?|you may also like|recommended(?: for you)?|more from .{1,40}|"
    r"\d+ comments?|comments?|leave a (?:reply|comment)|reply|add a comment|join the discussion|"
    r"subscribe(?: now)?|sign up|sign in|log in|follow us|newsletter|"
    r"(?:posted|filed|published) (?:in|under|on|by) .{0,80}|tags?:.{0,200}|categor(?:y|ies):.{0,200}|"
    r"(?:photo|image|picture|credit|source|getty images|reuters|ap photo)s?:? .{0,80}|"
    r"previous(?: post| article| page)?|next(?: post| article| page)?|back to top|skip to (?:main )?content|"
    r".{0,40}©.{0,160}|copyright .{0,120}|.{0,160}all rights reserved\.?|"
    r"(?:viewed|seen|read|visto|gelesen) (?:\d[\d,.]* )?(?:times|veces|mal)|\d[\d,.]*k? (?:views|reads|shares)|"
    r"a version of this article appears in print .{0,200}|"
    r"\*{0,2} ?(?:percent )?daily values? are based on .{0,200}|"
    r"(?:last )?(?:updated|published|posted|modified)(?: on)?:? (?:\w{3,9}\.? \d{1,2},? \d{4}|\d{1,2}\.? \w{3,9}\.? \d{4}|\d{4}-\d\d-\d\d).{0,30}|"
    r"add to (?:cart|basket|bag|wishlist|wish list|favourites|favorites)|buy (?:it )?now|"
    r"(?:in stock|out of stock|only \d+ left|ships (?:within|in|today)|free (?:delivery|shipping|returns)|"
    r"delivery (?:by|within|in)|usually dispatched).{0,80}|"
    r"[★☆✩✪⭐]+.{0,60}|\d(?:[.,]\d)? (?:out of|/) 5(?: stars?)?.{0,40}|"
    r"(?:(?:[€$£¥₹]|rs\.?|usd|eur|gbp)\s?\d[\d.,]*|\d[\d.,]*\s?(?:[€$£¥₹]|usd|eur|gbp)|save \d+%|"
    r"was|now|rrp|incl\. vat|excl\. vat|\s)+"
    r")[\s.:!»›→]*$",
    re.I,
)
_SHORT = 40  # characters: lines at most this long may be labels
SAMPLE_TIMES = 8  # <time> elements looked at for user posts, from the start and the end of the page
MAX_POST_SIBLINGS = 160  # a container of more children is not looked at as a run of user posts
ARTICLE_CHARS = 400  # text left after removing a run of user posts, below which they were the content
FALLBACK_CHARS = 500  # a result shorter than this may have lost the content's wrapper to a class word
MAX_MEASURED = 300  # elements whose text that fallback measures, at most (a page nested thousands deep)
PROSE_CHARS = 120  # a paragraph of at least this much text is prose, not a label or a teaser
LONE_PROSE_CHARS = 1000  # a single paragraph this long is a content root on its own (text in <br> lines)
TOP_PARAGRAPHS = 8  # the longest paragraphs of the source that vote for the content's container


# class and id attributes (in the spellings pages use), those that hide an element or give it a
# role, and schema.org's item properties and types: one pattern finds them all. Python's regex
# engine searches a literal prefix fast, so the pattern starts with the "=" and looks behind it for the name (white space, the name, at most one
# space): a pattern that started with the space before the name was tried at every space of the
# page, and pages indent their markup with hundreds of thousands of them. Values are quoted or not
# (minified pages). A value found where it is no attribute (text in a comment) gains a marker
# there, which nothing reads.
_ATTR_NAMES = ("class", "CLASS", "Class", "id", "ID", "Id", "style", "STYLE", "role", "aria-hidden", "itemprop", "itemtype")
_ATTR = re.compile(
    # first the letter before the "=": one a name ends with, or the space ("href=" fails here)
    f"(=(?<=[{''.join(sorted({name[-1] for name in _ATTR_NAMES}))} ]=)(?:"
    + "|".join(
        f"(?<=\\s(?:{'|'.join(n for n in _ATTR_NAMES if len(n) == width)}){gap}=)"
        for gap in ("", " ")
        for width in dict.fromkeys(len(n) for n in _ATTR_NAMES)
    )
    + r""")\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))"""
)
# the attribute a match is, by the last three letters of the text before its "=" (`_TAIL`
# characters, white space stripped): they tell the names apart
_TAIL = 4
_ATTR_OF_END = {name[-3:].strip(): name.lower() for name in _ATTR_NAMES}
_HEADINGS = ":not(h1):not(h2):not(h3):not(h4):not(h5):not(h6)"
NAME_ATTR = "data-selene-n"  # marks, in the source, an element whose class or id names boilerplate
HIDE_ATTR = "data-selene-h"  # marks, in the source, an element hidden or given a role that is not content
ASIDE_ATTR = "data-selene-aside"  # an <aside>, renamed a <section> so that resiliparse does not drop it
CONTENT_ATTR = "data-selene-c"  # marks, in the source, an element that may be the page's content by its markup
# what marks a candidate for `_CONTENT_SELECTOR` (lower-cased; the selector's parts then decide)
_CONTENT_CLASSES = {"h-entry", "hentry", "entry-content", "post-content"}
_CONTENT_ITEMPROPS = {"articlebody", "blogpost", "mainentity"}
_CONTENT_ITEMTYPES = ("article", "blogposting")
# an embedded post, the markup news sites quote a tweet with: quoted content, which resiliparse's
# main-content mode drops for a class word that starts with "twitter" (as it drops "social..." and
# "share..."): the word is renamed in the source
_EMBEDDED_POST = "twitter-tweet"
_EMBED_TOKEN = re.compile(r"(?<![\w-])twitter-tweet(?![\w-])")
EMBED_CLASS = "selene-embedded-post"


def _content_markup(name: str, value: str) -> bool:
    """Whether a role, itemprop or itemtype attribute (its `value` lower-cased) may make its element
    the page's content (`_CONTENT_SELECTOR`)."""
    if name == "role":
        return value == "main"
    if name == "itemprop":
        return value in _CONTENT_ITEMPROPS
    return name == "itemtype" and any(t in value for t in _CONTENT_ITEMTYPES)


def _hides(name: str, value: str) -> bool:
    """Whether a role, style or aria-hidden attribute makes its element no content (`_SKIP_ROLES`,
    `_HIDDEN_STYLES`)."""
    if name == "role":
        return value in _SKIP_ROLES
    if name == "aria-hidden":
        return value == "true"
    return any(v in value for v in _HIDDEN_STYLES)


def _mark_names(html: str) -> tuple[str, int]:
    """The source with ``data-selene-n`` after every class or id attribute whose value names
    boilerplate (`_boiler_name`, judged once per distinct value), ``data-selene-h`` after every
    attribute that hides its element (`_hides`), and how many class or id attributes were marked.

    Marking the source costs one pass; selector parts instead (one per value, or one per role) are
    matched by the parser against every element: a page has a hundred such values, and the roles
    and styles alone cost a fifth of the extraction. The source is split at the attributes (in C)
    and joined again only when one was marked."""
    parts = _ATTR.split(html)  # text, "=value", "value", 'value', value, text, ... (None if not so)
    if len(parts) == 1:
        return html, 0
    keys = [  # (the end of the text before, which names the attribute; the value)
        (text[-_TAIL:], d if d is not None else q if q is not None else u)
        for text, d, q, u in zip(parts[0:-1:5], parts[2::5], parts[3::5], parts[4::5], strict=True)
    ]
    marks: dict[tuple[str, str], str] = {}  # what is written after the attribute: " data-selene-..."
    classes: list[tuple[str, str]] = []
    ids: list[tuple[str, str]] = []
    for key in set(keys):
        tail, value = key
        if not value:
            continue
        name = _ATTR_OF_END.get(tail.rstrip()[-3:].lstrip())
        if name is None:  # the name was in the last match ("class= id=")
            continue
        if name == "class":
            classes.append(key)
            if not _CONTENT_CLASSES.isdisjoint(value.lower().split()):
                marks[key] = f" {CONTENT_ATTR}"
        elif name == "id":
            ids.append(key)
        elif _content_markup(name, value.strip().lower()):
            marks[key] = f" {CONTENT_ATTR}"
        elif _hides(name, value):
            marks[key] = f" {HIDE_ATTR}"
    for attr, named_values in (("class", classes), ("id", ids)):
        for k in _boiler_values([value for _, value in named_values], attr):
            marks[named_values[k]] = marks.get(named_values[k], "") + f" {NAME_ATTR}"
    for key in classes:
        if _EMBEDDED_POST in key[1].split():  # the token itself, not "twitter-tweet-button"
            marks[key] = _EMBEDDED_POST
    if not marks:
        return html, 0
    named = 0
    for k in [k for k, key in enumerate(keys) if key in marks]:
        mark = marks[keys[k]]
        if mark is _EMBEDDED_POST:  # renamed: resiliparse's own rule drops it
            parts[1 + 5 * k] = _EMBED_TOKEN.sub(EMBED_CLASS, parts[1 + 5 * k], count=1)
        else:
            parts[1 + 5 * k] += mark
            named += NAME_ATTR in mark
    del parts[2::5]  # the captured values: text, "=value", "v", 'v', v, text, ...
    del parts[2::4]
    del parts[2::3]  # text, "=value", text, ...
    return "".join(parts), named


_JOIN = "\x1e"  # joins values judged together: no class or id has it (checked), and str.split splits at it


def _boiler_values(values: list[str], attr: str) -> list[int]:
    """The indices of the values of attribute `attr` that name boilerplate (`_boiler_name`).

    A page has a few hundred distinct values; their words are made all at once, in one string of
    them all (the per-value string calls cost more than the judging)."""
    joined = _JOIN.join(values)
    if joined.count(_JOIN) != len(values) - 1:
        return [k for k, v in enumerate(values) if _boiler_name(v, attr)]
    all_words = _camel_split(joined).lower().translate(_SEPARATORS)
    words = all_words.split(_JOIN)
    tokens = joined.lower().split(_JOIN)
    if len(words) != len(values) or len(tokens) != len(values):  # lower-casing made a joiner: never seen
        return [k for k, v in enumerate(values) if _boiler_name(v, attr)]
    stems = [stem for stem in _BOILER_STEMS if stem in all_words]  # looked for word by word only when present
    if not stems and _CANDIDATE_WORDS.isdisjoint(all_words.split()):  # the joiner is white space to split()
        return []
    return [
        k
        for k, (ws, lowered) in enumerate(zip(words, tokens, strict=True))
        if (not _CANDIDATE_WORDS.isdisjoint(ws.split()) or (stems and any(stem in ws for stem in stems)))
        and _boiler_words(ws.split(), lowered, attr, bool(stems))
    ]


def _skip_selectors(prose_names: set[str]) -> list[str]:
    """The selectors of the elements to skip: by tag, role, state, and by a boilerplate name
    (`NAME_ATTR`) except on headings (a heading's id is often a slug of its text, and a boilerplate
    box's heading goes with the box) and on the class values in `prose_names`; none that carries
    KEEP_ATTR."""
    named = f"[{NAME_ATTR}]{_HEADINGS}" + "".join(f":not([class={_css_string(v)}])" for v in sorted(prose_names))
    parts = [*_SKIP_TAGS, f"[{ASIDE_ATTR}]", f"[{HIDE_ATTR}]", "[hidden]", *(f"[{a}]" for a in _AD_ATTRS), named]
    return [f"{part}:not([{KEEP_ATTR}])" for part in parts] + [f"[{SKIP_ATTR}]"]


_CAMEL = re.compile(r"[A-Z](?<=[a-z][A-Z])")  # a capital after a small letter: capitals are rare, so searched first


def _camel_split(value: str) -> str:
    """`value` with a space before each capital that follows a small letter ("shareBar" -> "share Bar")."""
    return _CAMEL.sub(_space_before, value)


def _space_before(match: re.Match[str]) -> str:
    return " " + match.group()
_SEPARATORS = str.maketrans("-_\t\n\r\f\v", "       ")


def _words(value: str) -> set[str]:
    """The words of a class or id value: split on white space, "-", "_" and lower-to-upper case
    changes, lower-cased (string methods, no regex, unless the value has capitals)."""
    if not value.islower():
        value = _camel_split(value).lower()
    return set(value.translate(_SEPARATORS).split())


def _css_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ") + '"'


def _boiler_name(value: str, attr: str) -> bool:
    """Whether a class or id value names boilerplate (`_boiler_words`)."""
    return _boiler_words(list(_words(value)), value.lower(), attr)


def _boiler_words(words: list[str], lowered: str, attr: str, stems: bool = True) -> bool:
    """Whether a class or id value, as its `words` and lower-cased, names boilerplate: a word of
    _BOILER_WORDS or one that starts with a stem of _BOILER_STEMS ("cookiemsg"; looked for when
    `stems`), not in a syntax highlighter's token class nor in an id that is a slug
    ("faster-search-across-workspaces"); or a whole token of _BOILER_TOKENS."""
    if attr == "id" and len(words) >= SLUG_WORDS and len(set(words)) >= SLUG_WORDS:
        return False
    if _HIGHLIGHTER_WORDS.isdisjoint(words) and (
        not _BOILER_WORDS.isdisjoint(words) or (stems and any(w.startswith(_BOILER_STEMS) for w in words))
    ):
        return True
    return not _BOILER_TOKENS.isdisjoint(lowered.split())


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


def _would_skip(node: Any) -> bool:
    """Whether `_skip_selectors` match `node`, headings and KEEP_ATTR aside (the same rules, judged
    here)."""
    tag = node.tag
    if (
        tag in _SKIP_TAGS
        or node.hasattr(ASIDE_ATTR)
        or node.hasattr(HIDE_ATTR)
        or node.hasattr("hidden")
        or any(node.hasattr(a) for a in _AD_ATTRS)
    ):
        return True
    return tag not in ("h1", "h2", "h3", "h4", "h5", "h6") and node.hasattr(NAME_ATTR)  # names spare headings


def _protect_content(content: list[Any]) -> None:
    """Mark the elements the skip selector would skip that are or hold the page's main/article
    elements: a class word on a wrapper (``<div class="page has-sidebar">``) must not remove the
    article inside it."""
    for node in content:
        while node is not None and node.type == 1 and node.tag not in ("body", "html"):
            if _would_skip(node):
                node.setattr(KEEP_ATTR, "")
            node = node.parent


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
    candidates: list[tuple[int, int, int, int, int]] = []  # (markup length, tag start, its name's end, text from, to)
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
    best: list[tuple[int, int, int]] = []  # a min-heap of the longest: (text length, start of the tag, end of its name)
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
    paragraphs: list[tuple[str, list[Any], Any]] = []  # (text, ancestors from the parent up to <body>, element)
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
            paragraphs.append((" ".join((_MARK_TEXT.sub("", text) if "data-selene-" in text else text).split()), chain, p))
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


_WEAK_WORDS = {"widget", "widgets", "sidebar", "ad", "ads", "advert", "banner", "meta", "toc", "skip", "hidden"}


def _weak_name(node: Any) -> bool:
    """Whether `node` is skipped for its class or id only, by words of _WEAK_WORDS."""
    if node.tag in _SKIP_TAGS or node.getattr("role") in _SKIP_ROLES:
        return False
    words = _words(f"{node.getattr('class') or ''} {node.getattr('id') or ''}")
    return _BOILER_WORDS.intersection(words) <= _WEAK_WORDS


def _text_len(el: Any) -> int:
    return len(" ".join((el.text or "").split()))  # a frameset "body" has no text at all


def _post_like(el: Any) -> bool:
    if el.query_selector("time") is not None:
        return True
    for sel in ("a", "button", "span"):
        c = el.query_selector(sel)
        if c is not None and len(c.text or "") < 12 and _POST_CONTROLS.match(c.text or ""):
            return True
    return False


def _user_post_containers(body: Any) -> list[Any]:
    """Containers of >= 3 same-shaped sibling blocks that look like user posts (a <time>, or Reply /
    Like controls): comment sections, or a forum thread's posts."""
    times = body.query_selector_all("time")
    n = len(times)
    if n < 3 or n > 1000:
        return []
    # a sample of the <time>s, first and last
    sample = sorted(set(range(min(n, SAMPLE_TIMES))) | set(range(max(0, n - SAMPLE_TIMES // 2), n)))
    found: list[Any] = []
    looked: set[Any] = set()  # parents already judged (wrappers of one node are one object)
    for t in (times.item(i) for i in sample):
        node, depth = t.parent, 0
        while node is not None and node.type == 1 and node.tag not in ("body", "html") and depth < 8:
            parent = node.parent
            if parent is None or parent.type != 1 or parent in looked:
                break
            if parent.child_element_count > MAX_POST_SIBLINGS:
                break
            shape = (node.tag, node.class_name)
            same = [c for c in _children(parent) if (c.tag, c.class_name) == shape]
            if len(same) >= 3:
                looked.add(parent)
                if _at_least(same, _post_like, 3) and not _answers(parent, same):
                    found.append(parent)
                break
            node, depth = parent, depth + 1
    return found


_ANSWER_WORDS = {"answer", "answers", "question", "solution", "accepted"}


def _answers(container: Any, posts: list[Any]) -> bool:
    """Posts that are content, not comments: answers on a Q&A page (named so), or posts that are
    mostly rich (several paragraphs or a code block), which comments seldom are."""
    names = f"{container.class_name or ''} {container.id or ''} {posts[0].class_name or ''}"
    if not _ANSWER_WORDS.isdisjoint(_words(names)):
        return True
    return _at_least(posts, _rich, (len(posts) + 1) // 2)


def _rich(post: Any) -> bool:
    return post.query_selector("pre") is not None or len(post.query_selector_all("p")) >= 2


def _at_least(items: list[Any], holds: Callable[[Any], bool], n: int) -> bool:
    """Whether `holds` is true of at least `n` of `items`, judged no further than the answer needs
    (each judgement looks elements up in the tree)."""
    left = len(items)
    for item in items:
        if n <= 0 or n > left:
            break
        left -= 1
        n -= holds(item)
    return n <= 0


def _children(el: Any) -> list[Any]:
    """Element children, walked one sibling at a time (indexing resiliparse's collections costs a
    walk of the tree per item)."""
    out = []
    c = el.first_element_child
    while c is not None:
        out.append(c)
        c = c.next_element_sibling
    return out


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
        h = _nth_in_source(body, html, m.group(1).lower(), m.start(), lambda el: bool(_BOILER_HEADING.match(el.text or "")))
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


# a marker written into the source where an attribute pattern matched text, not a tag (a code sample
# or prose that shows `class="comments"`): the parser reads it as text, so it is taken out again
_MARK_TEXT = re.compile(f" (?:{NAME_ATTR}|{HIDE_ATTR}|{CONTENT_ATTR}|{ASIDE_ATTR})\\b")


def _extract(tree: HTMLTree, skip: list[str], main_content: bool = True) -> str:
    text = str(
        extract_plain_text(
            tree,
            preserve_formatting="minimal_html",
            main_content=main_content,
            list_bullets=False,
            alt_texts=False,
            links=True,
            form_fields=False,
            noscript=False,
            comments=False,
            post_meta=True,  # False drops whole WordPress articles (their classes read as post meta)
            skip_elements=skip,
        )
    )
    return _MARK_TEXT.sub("", text) if "data-selene-" in text else text


_MARKERS = re.compile(r"\[(?:\d{1,3}|[a-z]|citation needed|clarification needed|edit|update)\]", re.I)


# calls to action: a short block with two or more of these is a signup, paywall or consent box (matched
# on lower-cased text: a case-insensitive alternation is tried slowly at every character)
_CTA = re.compile(
    r"\b(?:subscrib\w*|unsubscrib\w*|newsletters?|sign(?:ing)? up|signup|inbox|no spam|free trial|"
    r"try (?:it )?free|e-?paper|print edition|log ?in|sign in|cookies?|consent|privacy (?:policy|settings)|"
    r"advertis\w+|personali[sz]ed? (?:ads|content)|premium|members?(?:hip)? only|delivered to your|"
    r"affiliate(?: links?)?|disclosure(?: policy)?|support us|donat\w+|funded by (?:our )?readers)\b"
)
_BYLINE = re.compile(
    r"^(?:by|written by|posted by|words by)\s+[^.!?]{2,80}$|^.{0,60}\b\d+\s*min(?:ute)?s? read\b.{0,40}$", re.I
)
_CODEISH = re.compile(r"[=(){}\[\];<>#]")
# a dateline: a date or time and at most two other words ("Case Study August 12, 2010, 5:00PM EST",
# "Thu, 14 May 2020 17:55 UTC", "Last Modified: 11/18/2011 4:06 AM", "Posted at 2013-12-30T14:42:01-0700")
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:{_MONTH})\.?,?\s+\d{{4}}|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    r"|\d{4}-\d\d-\d\d(?:t[\d:]+(?:[+-]\d{2}:?\d{2})?)?|\d{1,2}[/.]\d{1,2}[/.]\d{2,4})\b",
    re.I,
)
_DATE_REST = re.compile(
    rf"\b(?:{_MONTH}|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?|\b\d{{1,2}}:\d\d(?::\d\d)?(?:\s*[ap]\.?m\.?)?|\b[ap]\.?m\.?\b|"
    r"\b(?:utc|gmt|[ecmp][sd]?t|bst|cet|cest|ist|aest|ET|PT)\b|[+-]\d{2}:?\d{2}\b|\b\d+\b|"
    r"\b(?:at|as of|on|updated|published|posted|modified|last|created|date)\b|[,|:–—•·()/-]",
    re.I,
)
# post and profile metadata: "Posts: 303", "Joined: 9 April 2022", "nightowl 11mo ago", "267",
# "Board index » Help"
_META_LINE = re.compile(
    r"^(?:[^\W\d][\w .-]{1,24}:\s*(?:[\d.,]+|\d{1,2}\.? \w{3,10}\.? \d{4}|\w{3,10}\.? \d{1,2},? \d{4})"
    r"|.{0,40}?\b\d+\s*(?:s|m|h|d|w|mo|y|min|mins|hrs?|hours?|days?|weeks?|months?|years?)\s+ago"
    r"|[\d\s.,+%▲▼↑↓-]{1,10}"
    r"|[^.!?\n]{1,60}(?:\s+[»›]\s+[^.!?\n]{1,60})+)$",
    re.I,
)


# a picture's caption by its credit: "... (Getty/Kevork Djansezian)", "Stephen Chernin/Getty Images ...",
# "... (AP Photo/Evan Vucci)", "... Photo: Reuters"
_AGENCY = r"(?:getty(?: images)?|ap(?: photo)?|reuters|afp|epa(?:-efe)?|shutterstock|istock(?:photo)?|alamy|icon smi|icon sportswire|usa today sports|bloomberg|nurphoto)"
_CREDIT = re.compile(
    rf"\((?:[^()]{{0,60}}/)?{_AGENCY}\b[^()]{{0,60}}\)\s*\.?$|^[\w .'’-]{{2,40}}/{_AGENCY}\b|"
    r"(?:photo|image|picture|credit)s?:\s*[^.]{2,60}$|\b(?:getty images|ap photo|shutterstock|istock(?:photo)?|alamy)\s*$",
    re.I,
)


_BOILER_LINE_LC = re.compile(_BOILER_LINE.pattern)  # the same patterns, matched on lower-cased lines
_BYLINE_LC = re.compile(_BYLINE.pattern)
_DIGIT = re.compile(r"\d")
_READ_MORE = ("read more", "continue reading", "weiterlesen", "mehr lesen", "lire la suite", "leer más", "seguir leyendo")
_CREDIT_ENDS = ("images", "photo", "shutterstock", "istock", "istockphoto", "alamy")


# a word each call to action (`_CTA`) has in it: a block with none is not read by the pattern,
# which is tried at every character
_CTA_WORDS = (
    "subscrib", "newsletter", "sign", "inbox", "spam", "free", "paper", "edition", "log", "cookie",
    "consent", "privacy", "advertis", "personali", "premium", "member", "delivered", "affiliate",
    "disclosure", "support us", "donat", "funded",
)  # fmt: skip
_CREDIT_WORDS = ("photo", "image", "picture", "credit")


def _calls_to_action(lowered: str) -> int:
    """How many calls to action (`_CTA`) a lower-cased block has."""
    return len(_CTA.findall(lowered)) if any(w in lowered for w in _CTA_WORDS) else 0


def _credit(line: str, lowered: str) -> bool:
    """Whether a line is a caption with its picture's credit (`_CREDIT`): "(Jane Doe/AP)", "Photo:
    Reuters", "... Getty Images". Without a "/" only an agency in brackets, a "Photo:" label or an
    agency at the end can be one: the pattern (tried at every character) reads no other line."""
    if "/" in line:
        return bool(_CREDIT.search(line))
    ends = lowered.endswith(_CREDIT_ENDS)
    if ":" not in line and not ends:
        return False
    return (ends or "(" in line or any(w in lowered for w in _CREDIT_WORDS)) and bool(_CREDIT.search(line))


def _dateline(line: str) -> bool:
    """Whether `line` is a date or time with at most two other words, or a date among fields split
    by bars ("Patricio Candia | Palma de Mallorca | 08/01/2014")."""
    if not _DATE.search(line):
        return False
    return line.count("|") >= 2 or len(_DATE_REST.sub(" ", line).split()) <= 2


def _clean_lines(blocks: list[str]) -> str:
    """Drop label lines, bylines, calls to action and repeats of short label-like lines."""
    out: list[str] = []
    seen: set[str] = set()
    for block in blocks:
        if block.startswith(CODE):  # code: as it is
            out.append(block[1:])
            continue
        if "[" in block:
            block = _MARKERS.sub("", block)
        flat = " ".join(block.split())
        if 0 < len(flat) <= 300 and _calls_to_action(flat.lower()) >= 2:
            continue
        kept: list[str] = []
        for line in block.split("\n"):
            s = line.strip().strip("¶").strip()
            if not s:
                continue
            if len(s) <= 300:
                low = s.lower()  # the line patterns are lower-case: matching lowered text beats re.I
                bare = low.lstrip("•·-–*0123456789. ")
                if _BOILER_LINE_LC.match(bare) or _BYLINE_LC.match(bare):
                    continue
                if low.rstrip(" .…»›→>)]").endswith(_READ_MORE):
                    continue  # a teaser's excerpt, cut off by its "Read more" link
                flush = line[:1] not in (" ", "\t")
                if flush and len(s) <= 80 and (_META_LINE.match(s) or (_DIGIT.search(s) and _dateline(s))):
                    continue
                if flush and _credit(s, low):
                    continue  # a caption with its picture's credit
            if (
                len(s) <= _SHORT * 1.5
                and line[:1] not in (" ", "\t")
                and " " in s
                and not s.endswith(":")
                and not _CODEISH.search(s)
            ):
                key = s.lower()  # a short label-like line seen before: a repeated caption or control
                if key in seen:
                    continue
                seen.add(key)
            kept.append(line.rstrip().rstrip("¶").rstrip())
        if kept:
            out.append("\n".join(kept))
    return "\n\n".join(out).strip()


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


def main_text_of_bytes(body: bytes, charset: str) -> str:
    """`extract_main_text` of the page `body` in `charset` (decoded as resiliparse's `bytes_to_str`
    does, falling back to UTF-8 then Windows-1252), with the contents of scripts and styles cut from
    the bytes before decoding when the charset allows: a news page of 2.6 MB is 0.4 MB without them,
    and decoding all of it (to four bytes a character, for one emoji in a script) cost more than the
    extraction."""
    if not _ascii_bytes(charset):
        return extract_main_text(bytes_to_str(body, charset))
    article = _article_page(body)  # before the scripts go: JSON-LD is a script
    cut = _prepare_source(body)
    return _main_text(bytes_to_str(cut, charset), article)


def extract_main_text(html: str) -> str:
    """The main text of an HTML page (see the module doc): headings, paragraphs, lists, code blocks
    and table text in document order, blocks separated by blank lines."""
    return _main_text(_prepare_source(html), _article_page(html))  # JSON-LD is a script: read first


def _main_text(html: str, article: bool) -> str:
    """The main text of `html`, prepared by `_prepare_source` (scripts, styles and svgs cut, lists
    renamed); `article`: it declares itself an article (`_article_page`)."""
    named_html, named = _mark_names(html)
    marked_html, marked = _mark_paragraphs(named_html)
    tree = HTMLTree.parse(marked_html)
    body = tree.body
    if body is None:
        return ""
    content = _content(body, marked_html)
    _protect_content(content)
    region, prose, prose_names = _protect_prose(body, marked)
    skip = _skip_selectors(prose_names)
    posts = _user_post_containers(body)
    for c in posts:
        c.setattr(SKIP_ATTR, "")
    body_chars: list[int] = []  # the text length of <body>, measured when a rule first needs it

    def total() -> int:
        if not body_chars:
            body_chars.append(_text_len(body))
        return body_chars[0]

    for el in _boiler_sections(body, html, total):
        if not any(el.contains(c) or el is c for c in content):
            el.setattr(SKIP_ATTR, "")
    raw = _extract(tree, skip)
    if region is not None and _lost_prose(prose, raw):
        # resiliparse's own main-content rules dropped the page's prose: the region of the prose,
        # whole, unless that loses the prose they kept (the region was a list of teasers around a
        # short article)
        whole = _extract(HTMLTree.parse(region.html), skip, main_content=False)  # its marks go with it
        if _holds_prose(whole, raw):
            raw = whole
    blocks = _blocks(raw)
    if posts and _chars(blocks) < ARTICLE_CHARS:  # the posts were the content (a forum thread)
        for c in posts:
            c.delattr(SKIP_ATTR)
        blocks = _blocks(_extract(tree, skip))
    if _chars(blocks) < FALLBACK_CHARS and named and _keep_big_wrappers(body, total(), _chars(blocks)):
        blocks = _blocks(_extract(tree, skip))  # a class word hit a wrapper of the page's text
    text = _clean_lines(_drop_headline(blocks, html) if article else blocks)
    # one spelling of each letter: a page may write "ü" as u + U+0308, which splits words for a tokenizer
    return text if text.isascii() or unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


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
    return (len(lost) >= 2 or total >= LONE_PROSE_CHARS) and sum(lost) > LOST_PROSE * total and len(flat) < 3 * total


def _holds_prose(candidate: str, raw: str) -> bool:
    """Whether `candidate` holds at least half of the prose of `raw` (both minimal HTML): of the text
    of its lines of PROSE_CHARS or more, each line judged by its start."""
    flat = " ".join(html_lib.unescape(_TAG.sub("", candidate)).split())
    lines = [" ".join(line.split()) for line in html_lib.unescape(_TAG.sub("", raw)).split("\n")]
    prose = [line for line in lines if len(line) >= PROSE_CHARS]
    kept = sum(len(line) for line in prose if line[:80] in flat)
    return kept * 2 >= sum(len(line) for line in prose)


def _chars(blocks: list[str]) -> int:
    return sum(len(b) for b in blocks)


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
    while stack and measured <= MAX_MEASURED:  # in document order: of nested wrappers with the same text, max keeps the outer
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


_TAG = re.compile(r"<[^>]*>")
_LINK = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S | re.I)


CODE = "\ue000"  # marks a code block between _blocks and _clean_lines (a private-use character)
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
    return titles >= TEASER_ITEMS and all(share > 0.8 or (share == 0 and n <= BLURB_CHARS) for n, share in lines)


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
        if len(titles) >= TEASER_ITEMS and len(set(titles)) == len(titles):  # teasers have titles of their own
            for k in range(i, j):
                drop[k] = True
            i = j
        else:
            i += 1
    return [text for (_, text), dropped in zip(items, drop, strict=True) if not dropped]
