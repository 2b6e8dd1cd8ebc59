"""Rules 1 and 2, tags, roles and names: the elements skipped for their tag (``nav``, ``header``,
``footer``, form controls ...), an ARIA role that is not content, being hidden (``hidden``,
``aria-hidden``, inline ``display: none``), an ad attribute, or a class or id with a word of the
boilerplate vocabulary (comments, related, share, newsletter, sidebar, advert ...; words split on
``-``, ``_``, spaces and case changes).

The class, id, role, style, aria-hidden, itemprop and itemtype attributes are found in the source
by one regex pass and judged once per distinct value (`_mark_names`); the verdicts are written into
the source as marker attributes (`NAME_ATTR`, `HIDE_ATTR`, `CONTENT_ATTR`), so that resiliparse
matches one selector part per verdict (`_skip_selectors`), not one per value, role or style: a
selector part costs a match against every element. `_would_skip` judges the same rules on one
element, for the protection rules that must undo them.
"""

from __future__ import annotations

import re
from typing import Any

from selene.ingest.extract.dom import ASIDE_ATTR, CONTENT_ATTR, HIDE_ATTR, KEEP_ATTR, NAME_ATTR, SKIP_ATTR

# tags whose elements are skipped (asides too: renamed in the source, they are skipped by ASIDE_ATTR)
_SKIP_TAGS = (
    "nav", "header", "footer", "dialog", "button", "select", "textarea", "label", "menu", "iframe",
    "figcaption",
)  # fmt: skip
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
_HIGHLIGHTER_WORDS = {
    "hljs", "token", "tok", "cm", "pl", "pygments", "highlight", "sourcecode", "shiki", "prism",
}  # fmt: skip


# class and id attributes (in the spellings pages use), those that hide an element or give it a
# role, and schema.org's item properties and types: one pattern finds them all. Python's regex
# engine searches a literal prefix fast, so the pattern starts with the "=" and looks behind it for
# the name (white space, the name, at most one space): a pattern starting with the space before the
# name would be tried at every space of the page, and pages indent their markup with hundreds of
# thousands of them. Values are quoted or not
# (minified pages). A value found where it is no attribute (text in a comment) gains a marker
# there, which nothing reads.
_ATTR_NAMES = (
    "class", "CLASS", "Class", "id", "ID", "Id", "style", "STYLE", "role", "aria-hidden", "itemprop",
    "itemtype",
)  # fmt: skip
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
# what marks a candidate for `content._CONTENT_SELECTOR` (lower-cased; the selector's parts then decide)
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
    the page's content (`content._CONTENT_SELECTOR`)."""
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
    named = f"[{NAME_ATTR}]{_HEADINGS}" + "".join(
        f":not([class={_css_string(v)}])" for v in sorted(prose_names)
    )
    parts = [
        *_SKIP_TAGS,
        f"[{ASIDE_ATTR}]",
        f"[{HIDE_ATTR}]",
        "[hidden]",
        *(f"[{a}]" for a in _AD_ATTRS),
        named,
    ]
    return [f"{part}:not([{KEEP_ATTR}])" for part in parts] + [f"[{SKIP_ATTR}]"]


# a capital after a small letter: capitals are rare, so searched first
_CAMEL = re.compile(r"[A-Z](?<=[a-z][A-Z])")


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
