"""Realistic web pages with their main text marked, and the shingle metric that scores extractors on them.

`pages(n_per_type, seed)` builds, deterministically for a seed (and a Python version: the prose comes
from the standard library), `n_per_type` pages of each kind in `KINDS`: news, blog, forum, three docs
generators (mdBook, Sphinx, MkDocs), e-commerce and encyclopedia. Each kind has several markup
variants: semantic class names (several CMS vocabularies), obfuscated CSS-in-JS classes, plain `<div>`
soup and HTML5 sectioning tags, with randomised boilerplate (menus, cookie banners, comments, related
links, share rows, polls, newsletter boxes, adverts, author bios, tags, pagination, footers, galleries,
trending lists; the docs chrome of each generator). Body prose is the Python reference
(`pydoc_data.topics`) and standard-library docstrings; code blocks come from the reference's examples
and stdlib source. Edge pages (first three of each kind): index 0 has a very short main text under a
large boilerplate (for news/blog a comment section longer than the article), index 1 has a
newsletter/notice box between main paragraphs, index 2 declares `<meta charset="windows-1252">` and
has non-ASCII text (`Page.charset` reads it; encode `html` with it).

Conventions of `Page.truth` (plain text, blocks separated by one blank line, in document order):
- a block is one heading, paragraph, blockquote paragraph, list (one item per line), code block
  (its text verbatim, lines kept), table (one row per line, cells separated by a tab) or admonition
  (its label, e.g. "Note", on the first line, then its text);
- inline markup (links, emphasis, inline code) is kept as its text;
- news, blog, e-commerce, forum and encyclopedia pages: the page title (`<h1>`: headline, product
  name, thread title, article title) is NOT main text, nor are bylines, dates, captions, image
  credits, in-body adverts and signup boxes, "Read more" link lines, or any site chrome;
- docs pages: the `<h1>` IS main text (it is the first heading of the rendered source document);
  Sphinx's "¶" header links, mdBook's dialogs and navigation, Material's tabs/TOC/footer are not;
- forum: the bodies of all posts, in order (not usernames, ranks, join dates, post counts,
  signatures, buttons, like counts, "Similar topics");
- e-commerce: the product description and the specification table (not price, cart, ratings,
  reviews, recommendations, shipping/returns text);
- encyclopedia: lead and section paragraphs, section headings and lists (not the infobox, the
  contents box, "[edit]" links, hatnotes, reference/citation-needed markers, "See also", references,
  navboxes, categories, "Retrieved from").

`shingle_counts` / `shingle_scores` compare an extraction with the truth as multisets of word 4-grams
(``\\w+`` tokens, case kept; a text shorter than n words is one shingle), the way the scrapinghub
article-extraction-benchmark does.
"""

from __future__ import annotations

import functools
import html as _html
import importlib
import inspect
import random
import re
import string
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pydoc_data.topics import topics
from typing import Any, ClassVar

KINDS = ("news", "blog", "forum", "docs-mdbook", "docs-sphinx", "docs-mkdocs", "ecommerce", "encyclopedia")
STYLES = ("semantic", "obfuscated", "soup", "html5")


@dataclass
class Page:
    name: str
    kind: str
    url: str
    html: str
    truth: str

    @property
    def charset(self) -> str:
        m = re.search(r"<meta[^>]+charset=[\"']?([\w-]+)", self.html[:2000], re.I)
        return m.group(1).lower() if m else "utf-8"

    def body(self) -> bytes:
        """The page as a server would send it: `html` encoded with its declared charset."""
        return self.html.encode(self.charset)


# ----------------------------------------------------------------------------------------------- metric

_TOKEN = re.compile(r"\w+")


def _shingles(text: str, n: int) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(unicodedata.normalize("NFC", text or ""))  # "ü" written as u + U+0308 is one letter
    if not tokens:
        return Counter()
    if len(tokens) <= n:
        return Counter([tuple(tokens)])
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def shingle_counts(pred: str, truth: str, n: int = 4) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) over the multisets of word n-grams."""
    p, t = _shingles(pred, n), _shingles(truth, n)
    tp = sum((p & t).values())
    return tp, sum(p.values()) - tp, sum(t.values()) - tp


def shingle_scores(pred: str, truth: str, n: int = 4) -> tuple[float, float]:
    """(precision, recall) of `pred` against `truth`; both 1.0 when both are empty, 0.0 for the side
    that has nothing to divide by otherwise (an empty prediction has precision 0 here; the benchmark
    leaves such pages out of the precision mean, as scrapinghub's evaluate.py does)."""
    tp, fp, fn = shingle_counts(pred, truth, n)
    if fp == fn == 0:
        return 1.0, 1.0
    return (tp / (tp + fp) if tp + fp else 0.0), (tp / (tp + fn) if tp + fn else 0.0)


# ------------------------------------------------------------------------------------------ text sources

Block = tuple[str, Any]
_UNDERLINE = re.compile(r"^([*=\-~^])\1{2,}$")


def _clean(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"\*{1,2}([^*\s][^*]*?)\*{1,2}", r"\1", text)
    text = text.replace("::", ":")
    return text


@functools.lru_cache(maxsize=1)
def _documents() -> tuple[tuple[str, tuple[Block, ...]], ...]:
    """The Python reference topics as (title, blocks) with h2/h3/p/ul/code blocks."""
    docs = []
    for key in sorted(topics):
        chunks = re.split(r"\n[ \t]*\n", topics[key].strip("\n"))
        title = key
        blocks: list[Block] = []
        for raw in chunks:
            lines = raw.strip("\n").rstrip().split("\n")
            if len(lines) > 2 and _UNDERLINE.match(lines[1].strip()) and not lines[0].startswith(" "):
                blocks.append(("h2" if lines[1][0] in "*=" else "h3", lines[0].strip()))
                lines = lines[2:]
            chunk = "\n".join(lines)
            if re.search(r"^\s*(\+-|={3,} )", chunk, re.M):  # reST grid/simple tables: left out
                continue
            if len(lines) == 2 and _UNDERLINE.match(lines[1].strip()):
                head = lines[0].strip()
                if lines[1][0] == "*" and not blocks:
                    title = head
                else:
                    blocks.append(("h2" if lines[1][0] in "*=" else "h3", head))
            elif all(ln.startswith("   ") or not ln.strip() for ln in lines):
                code = inspect.cleandoc("\n".join(lines)) if len(lines) > 1 else lines[0].strip()
                if blocks and blocks[-1][0] == "code":
                    blocks[-1] = ("code", f"{blocks[-1][1]}\n\n{code}")
                else:
                    blocks.append(("code", code))
            elif lines[0].startswith(("* ", "- ")):
                items = re.split(r"\n(?=[*-] )", chunk)
                items = [_clean(it[2:]) for it in items if it.strip()]
                if blocks and blocks[-1][0] == "ul" and isinstance(blocks[-1][1], list):
                    blocks[-1][1].extend(items)
                else:
                    blocks.append(("ul", items))
            elif not lines[0].startswith(" "):
                para = _clean(chunk)
                if len(para.split()) >= 4:
                    blocks.append(("p", para))
        if sum(1 for b in blocks if b[0] == "p") >= 3:
            docs.append((title, tuple(blocks)))
    return tuple(docs)


_DOC_MODULES = ["argparse", "collections", "json", "logging", "subprocess", "threading", "email.message", "http.client", "urllib.request", "pathlib", "shutil", "tarfile", "zipfile", "csv", "decimal", "fractions", "random", "statistics", "textwrap", "string", "difflib", "heapq", "bisect", "functools", "itertools", "contextlib", "dataclasses", "unittest.case", "doctest", "pickle", "copy", "datetime", "calendar", "sched", "tempfile", "glob", "fnmatch", "configparser", "optparse", "gettext", "locale", "codecs", "base64", "hashlib", "hmac", "secrets", "uuid", "ipaddress", "mimetypes", "smtplib", "ftplib", "xml.dom.minidom", "html.parser", "wave", "graphlib", "queue"]


@functools.lru_cache(maxsize=1)
def _prose() -> tuple[str, ...]:
    """Prose paragraphs (>= 20 words, no markup) from the reference and stdlib docstrings."""
    paras = [b[1] for _, blocks in _documents() for b in blocks if b[0] == "p" and len(str(b[1]).split()) >= 20]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _DOC_MODULES:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            docs = [mod.__doc__ or ""]
            for attr, value in sorted(vars(mod).items()):
                public = not attr.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
                if public and getattr(value, "__module__", "") == mod.__name__:
                    docs.append(value.__doc__ or "")
            for doc in docs:
                for para in re.split(r"\n\s*\n", inspect.cleandoc(doc)):
                    p = " ".join(para.split())
                    if para.startswith(" ") or len(p.split()) < 20:
                        continue
                    if not re.search(r"[`*#|<>{}\[\]]|>>>|https?:|::|-{3,}|={3,}", p):
                        paras.append(p)
    return tuple(dict.fromkeys(str(p) for p in paras))


@functools.lru_cache(maxsize=1)
def _code_snippets() -> tuple[str, ...]:
    import fnmatch
    import posixpath
    import shlex
    import textwrap

    out = []
    for mod in (textwrap, fnmatch, posixpath, shlex, string):
        for _attr, value in sorted(vars(mod).items()):
            if inspect.isfunction(value) and value.__module__ == mod.__name__:
                try:
                    src = inspect.getsource(value)
                except (OSError, TypeError):
                    continue
                src = re.sub(r'\n\s*"""[\s\S]*?"""\n', "\n", src, count=1)
                if 3 <= src.count("\n") <= 25 and '"""' not in src:
                    out.append(src.rstrip())
    return tuple(out)


# -------------------------------------------------------------------------------------- boilerplate lists

FIRST = ["Anna", "Ben", "Carla", "David", "Elif", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kiri", "Liam", "Maya", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wei", "Yuki", "Zoe"]
LAST = ["Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova", "Jensen", "Kowalski", "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Silva", "Tanaka", "Vogel", "Weber"]
USERS = ["pixelfox", "dev_null42", "marta.k", "quietstorm", "old_timer", "bytewise", "gardenia99", "rustacean", "kettle_b", "nightowl", "sam_r", "lurker2010", "blue_heron", "tinkerer", "jkl88", "coffee_first", "mossy", "vandal_not", "frostbyte", "p_moreau"]
SITES = ["The Daily Ledger", "Northwind Post", "Harbor Times", "Metro Wire", "The Civic Record", "Kestrel News", "Morning Dispatch", "Tech Current"]
BLOGS = ["Notes from the Shed", "Byte Sized", "Slow Code Journal", "The Refactoring Diaries", "Elif Writes", "Lambda Lounge", "Tidy Bits"]
SECTIONS = ["Home", "World", "Politics", "Business", "Tech", "Science", "Health", "Sport", "Culture", "Opinion", "Travel", "Video", "Podcasts", "Local", "Weather", "Markets", "Climate", "Lifestyle"]
COMMENT_SENTENCES = [
    "Great article, thanks for sharing.", "I have been saying this for years.", "Not sure I agree with the second half.",
    "Does anyone have a source for this?", "This is exactly what happened at my company last year.",
    "Well written, but it misses the bigger picture.", "First!", "Came here to say the same thing.",
    "The comments are always better than the article.", "Can you do a follow-up on this?",
    "My grandfather would have loved this.", "Interesting take, but the numbers don't add up.",
    "Bookmarked for later.", "Why is nobody talking about the cost?", "Finally someone explains it properly.",
    "I tried this and it did not work for me.", "Thanks, this cleared things up.", "Hard pass.",
    "This aged well.", "Typo in the third paragraph, by the way.", "Who else is reading this in the morning?",
    "The editor should have caught that.", "Sharing this with my team.", "Excellent reporting as usual.",
    "Could not disagree more.", "Same thing happened to my neighbour.", "Love the photos.",
    "Is there a podcast version?", "Subscribed just for this.", "Where are the regulators in all of this?",
]
RELATED_TEASERS = [
    "Ten things you did not know about your morning coffee", "How one small town rebuilt its high street",
    "The hidden cost of free shipping", "Why everyone is talking about four-day weeks",
    "Inside the race to build a better battery", "What the new rules mean for renters",
    "A beginner's guide to sourdough", "The quiet comeback of the paper notebook",
    "Five apps that will change how you work", "Meet the volunteers saving old railway lines",
    "How to read a nutrition label properly", "The best budget laptops this year, tested",
    "Is remote work here to stay?", "The science of a good night's sleep", "Why prices at the pump keep rising",
    "A weekend in the mountains on a shoestring", "The surprising history of the humble spreadsheet",
    "Experts warn about a looming skills gap", "What we learned from a month without social media",
]
TAGS = ["python", "programming", "open source", "tutorial", "opinion", "analysis", "tech", "software", "data", "language design", "performance", "tips", "news", "community", "release"]
COOKIE = [
    ("We use cookies to improve your experience on our site. By continuing to browse, you agree to our use of cookies.", ["Accept all", "Manage preferences"]),
    ("This website uses cookies and similar technologies to personalise content and ads and to analyse our traffic.", ["I agree", "Reject", "Cookie settings"]),
    ("We and our partners store and access information on your device, such as cookies, for measurement and personalised advertising.", ["Accept", "Customise"]),
    ("Your privacy matters. We use essential cookies and, with your consent, analytics cookies.", ["OK", "Learn more"]),
]
NEWSLETTER = [
    ("Get the morning briefing", "Sign up for our free newsletter and get the day's most important stories delivered to your inbox."),
    ("Stay in the loop", "Join 120,000 readers who get our weekly roundup every Friday. No spam, unsubscribe at any time."),
    ("Read the e-paper", "Subscribers can read the full print edition online every day from 5 am. Try it free for 30 days."),
    ("Never miss a post", "Enter your email address to subscribe to this blog and receive notifications of new posts by email."),
    ("Newsletter", "The best of our journalism, hand-picked by our editors, every weekday evening."),
]
POLLS = [
    ("Do you work from home?", ["Yes, full time", "Some days", "No", "I am retired"]),
    ("Should the city ban cars from the centre?", ["Yes", "No", "Only at weekends"]),
    ("Which language do you use most?", ["Python", "JavaScript", "Java", "Something else"]),
    ("How do you get your news?", ["Website", "App", "Print", "Social media"]),
]
SHARE = [["Share", "Tweet", "Email", "Copy link"], ["Facebook", "X", "LinkedIn", "WhatsApp", "Email"], ["Share on Facebook", "Share on Twitter", "Pin it", "Print"], ["Share", "Save", "Comment"]]
FOOTER_COLS = [
    ("About us", ["About", "Careers", "Contact", "Advertise", "Press"]),
    ("Help", ["FAQ", "Accessibility", "Subscriptions", "Corrections", "Complaints"]),
    ("Legal", ["Terms of use", "Privacy policy", "Cookie policy", "Do not sell my info", "Imprint"]),
    ("Follow us", ["Facebook", "Instagram", "YouTube", "RSS", "Newsletter"]),
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
CP1252_EXTRA = [
    "Critics called it “a naïve reading of the façade”, while the café owners’ association welcomed the décor – and the €12 fee.",
    "According to Zoë Lefèvre, the résumé of the Señor’s career is “déjà vu” for anyone who followed the saga… twice.",
    "The coöperative’s rôle, says Jürgen Großmann, was “crème de la crème” – at least until the smörgåsbord ran out.",
]


# ------------------------------------------------------------------------------------------------ naming


class Namer:
    """Class names (and tags) for the roles of one page, in one markup style."""

    SEMANTIC: ClassVar[dict[str, list[str]]] = {
        "header": ["site-header", "masthead", "header", "top-bar"],
        "nav": ["main-navigation", "primary-menu", "nav-menu", "menu-main"],
        "main": ["site-main", "content-area", "main-content", "page-wrap"],
        "article": ["post", "hentry", "article", "story", "type-post"],
        "content": ["entry-content", "article-body", "post-content", "story-body", "td-post-content", "article__body"],
        "title": ["entry-title", "headline", "post-title", "article-title"],
        "meta": ["entry-meta", "byline", "post-meta", "article-meta"],
        "comments": ["comments-area", "comments", "comment-section", "discussion"],
        "comment": ["comment", "comment-body", "comment-item"],
        "related": ["related-posts", "you-may-also-like", "more-stories", "read-next"],
        "share": ["share-buttons", "social-share", "sharing", "share-bar"],
        "sidebar": ["sidebar", "widget-area", "secondary", "rail"],
        "widget": ["widget", "sidebar-widget", "module", "box"],
        "footer": ["site-footer", "footer", "colophon", "page-footer"],
        "ad": ["advertisement", "ad-slot", "adsbygoogle", "dfp-ad"],
        "newsletter": ["newsletter-signup", "subscribe-box", "optin", "newsletter"],
        "cookie": ["cookie-banner", "cookie-notice", "gdpr-consent", "cc-window"],
        "bio": ["author-bio", "about-author", "author-box", "byline-block"],
        "tags": ["tags", "tag-links", "post-tags", "topics"],
        "crumbs": ["breadcrumbs", "breadcrumb", "crumbs"],
        "gallery": ["gallery", "photo-gallery", "slideshow"],
        "trending": ["trending", "most-read", "popular-posts", "hot-now"],
        "pager": ["pagination", "nav-links", "pager"],
        "figure": ["wp-caption", "figure", "media"],
        "poll": ["poll", "widget-poll", "survey"],
    }
    TAGS5: ClassVar[dict[str, str]] = {"header": "header", "nav": "nav", "main": "main", "article": "article", "sidebar": "aside",
             "footer": "footer", "comments": "section", "related": "aside", "crumbs": "nav", "figure": "figure",
             "trending": "aside", "bio": "aside", "pager": "nav", "gallery": "section"}

    def __init__(self, style: str, rng: random.Random) -> None:
        self.style, self.rng, self._cache = style, rng, dict[str, str]()
        self.article_tag = style == "html5" or (style == "semantic" and rng.random() < 0.5)

    def _obf(self) -> str:
        r = self.rng
        if r.random() < 0.5:
            return "css-" + "".join(r.choice(string.ascii_lowercase + string.digits) for _ in range(r.randint(5, 7)))
        a = "".join(r.choice(string.ascii_letters) for _ in range(5))
        b = "".join(r.choice(string.ascii_letters) for _ in range(r.randint(5, 6)))
        return f"sc-{a} {b}"

    def cls(self, role: str) -> str:
        if role not in self._cache:
            r = self.rng
            if self.style in ("semantic", "html5") and (self.style == "semantic" or r.random() < 0.6):
                name = r.choice(self.SEMANTIC.get(role, [role]))
            elif self.style == "obfuscated":
                name = self._obf()
            elif self.style == "soup":
                name = r.choice(["", "", "box", "row", "col", "wrap", "inner", "c" + str(r.randint(1, 99)), "blk", "col-md-4", "container"])
            else:
                name = ""
            self._cache[role] = name
        return f' class="{self._cache[role]}"' if self._cache[role] else ""

    def tag(self, role: str) -> str:
        if self.style == "html5" or (self.article_tag and role == "article"):
            return self.TAGS5.get(role, "div")
        return "div"

    def wrap(self, role: str, inner: str) -> str:
        t = self.tag(role)
        return f"<{t}{self.cls(role)}>{inner}</{t}>"


# ------------------------------------------------------------------------------------------------ helpers

esc = functools.partial(_html.escape, quote=False)


def _inline(text: str, rng: random.Random, rate: float = 0.04) -> str:
    """HTML of `text` with a few words wrapped in links/emphasis/code (visible text unchanged)."""
    words = text.split(" ")
    out = []
    for w in words:
        e = esc(w)
        if rng.random() < rate and re.fullmatch(r"[A-Za-z]{3,}", w):
            tag = rng.choice(["a", "a", "em", "strong", "code"])
            e = f'<a href="/wiki/{w.lower()}">{e}</a>' if tag == "a" else f"<{tag}>{e}</{tag}>"
        out.append(e)
    return " ".join(out)


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2016, 2025)}"


def _links(rng: random.Random, items: list[str], cls: str = "") -> str:
    return f"<ul{cls}>" + "".join(f'<li><a href="/{re.sub(r"[^a-z]+", "-", i.lower())}">{esc(i)}</a></li>' for i in items) + "</ul>"


def block_truth(block: Block) -> str:
    kind, value = block
    if kind in ("ul", "ol"):
        return "\n".join(value)
    if kind == "table":
        return "\n".join("\t".join(row) for row in value)
    if kind == "note":
        label, text = value
        return f"{label}\n{text}"
    return str(value)


def render_block(block: Block, rng: random.Random, code_style: str = "plain") -> str:
    kind, value = block
    if kind in ("h1", "h2", "h3", "h4"):
        return f"<{kind}>{esc(str(value))}</{kind}>"
    if kind == "p":
        return f"<p>{_inline(str(value), rng)}</p>"
    if kind in ("ul", "ol"):
        return f"<{kind}>" + "".join(f"<li>{_inline(it, rng)}</li>" for it in value) + f"</{kind}>"
    if kind == "quote":
        return f"<blockquote><p>{esc(str(value))}</p></blockquote>"
    if kind == "code":
        code = esc(str(value))
        if code_style == "spans":  # token highlighting, as Pygments does
            code = re.sub(r"\b(def|return|if|else|for|in|import|class|while|not|and|or)\b", r'<span class="k">\1</span>', code)
        return f"<pre><code>{code}</code></pre>"
    if kind == "table":
        rows = list(value)
        head = "".join(f"<th>{esc(c)}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if kind == "note":
        label, text = value
        return f'<div class="admonition {label.lower()}"><p class="admonition-title">{esc(label)}</p><p>{esc(text)}</p></div>'
    raise ValueError(kind)


def _trim_words(text: str, n: int) -> str:
    """At least n words, cut at a sentence end when there is one."""
    words = text.split(" ")
    if len(words) <= n:
        return text
    cut = " ".join(words[:n])
    rest = " ".join(words[n:])
    m = re.search(r"[.;:!?](\s|$)", rest)
    return cut + (" " + rest[: m.start() + 1] if m else " " + rest)


def _article_blocks(rng: random.Random, words: int, rich: bool) -> list[Block]:
    """Body blocks of a news/blog article of about `words` words: prose paragraphs, some subheadings,
    and (if `rich`) a list, a blockquote and a table."""
    prose = _prose()
    start = rng.randrange(len(prose))
    blocks: list[Block] = []
    total = 0
    i = start
    while total < words:
        p = prose[i % len(prose)]
        if words < 120:
            p = _trim_words(p, words)
        blocks.append(("p", p))
        total += len(p.split())
        i += rng.choice([1, 1, 1, 2, 7])
    if rich and len(blocks) >= 5:
        heads = [t for t, _ in rng.sample(_documents(), 3)]
        for k, pos in enumerate(sorted(rng.sample(range(2, len(blocks)), min(3, len(blocks) - 2)), reverse=True)):
            blocks.insert(pos, ("h2" if k % 2 == 0 else "h3", heads[k]))
        extras: list[Block] = [("quote", rng.choice(prose))]
        lists = [b for _, bl in _documents() for b in bl if b[0] == "ul" and 2 <= len(b[1]) <= 6]
        if lists:
            extras.append(rng.choice(lists))
        if rng.random() < 0.5:
            extras.append(("table", _data_table(rng)))
        for b in extras:
            blocks.insert(rng.randrange(1, len(blocks)), b)
    return blocks


def _data_table(rng: random.Random) -> list[list[str]]:
    head = rng.choice([["Year", "Revenue", "Change"], ["Version", "Released", "Supported until"], ["District", "Turnout", "Votes cast"]])
    rows = [head]
    for k in range(rng.randint(3, 6)):
        rows.append([str(2015 + k), f"{rng.randint(10, 999)} million", f"{rng.choice('+-')}{rng.randint(1, 30)}.{rng.randint(0, 9)}%"])
    return rows


def _doc_blocks(rng: random.Random, short: bool) -> tuple[str, list[Block]]:
    title, blocks = rng.choice(_documents())
    bl = list(blocks)
    if short:
        first_p = next(b for b in bl if b[0] == "p")
        bl = [("p", _trim_words(str(first_p[1]), 60))]
    elif len(bl) > 40:
        start = rng.randrange(0, len(bl) - 30)
        bl = bl[start : start + rng.randint(15, 40)]
        while bl and bl[0][0] in ("h2", "h3"):
            bl.pop(0)
    return title, bl


def _slug(text: str) -> str:
    return re.sub(r"\W+", "-", text.lower()).strip("-")


def _document(head: str, body: str, charset: str, title: str, lang: str = "en") -> str:
    meta = '<meta charset="windows-1252">' if charset == "windows-1252" else '<meta charset="utf-8">'
    page = (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head>{meta}<title>{esc(title)}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{head}</head>\n<body>{body}</body></html>\n'
    )
    if charset != "utf-8":  # what a server in that charset sends for characters it lacks
        page = page.encode(charset, "xmlcharrefreplace").decode(charset)
    return page


def _scripts(rng: random.Random) -> str:
    s = [
        '<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag("js",new Date());</script>',
        '<script async src="https://cdn.example.net/ads.js"></script>',
        '<style>.hidden{display:none}.btn{padding:4px 8px}</style>',
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle"}</script>',
    ]
    return "".join(rng.sample(s, rng.randint(1, len(s))))


# ------------------------------------------------------------------------------------- boilerplate parts


def _cookie(n: Namer) -> str:
    text, buttons = n.rng.choice(COOKIE)
    return f"<div{n.cls('cookie')}><p>{esc(text)} <a href=\"/privacy\">Privacy policy</a></p>" + "".join(f"<button>{b}</button>" for b in buttons) + "</div>"


def _header(n: Namer, site: str) -> str:
    r = n.rng
    nav = _links(r, r.sample(SECTIONS, r.randint(5, 12)))
    extra = r.choice(["", '<a href="/subscribe">Subscribe</a> <a href="/login">Sign in</a>', '<form><input type="search" placeholder="Search"><button>Search</button></form>'])
    return n.wrap("header", f'<a href="/"{n.cls("logo")}>{esc(site)}</a>{extra}' + n.wrap("nav", nav))


def _crumbs(n: Namer, section: str) -> str:
    return n.wrap("crumbs", f'<a href="/">Home</a> &rsaquo; <a href="/{section.lower()}">{section}</a> &rsaquo; <span>Article</span>')


def _share(n: Namer) -> str:
    return f"<div{n.cls('share')}>" + "".join(f'<a href="#" role="button">{b}</a>' for b in n.rng.choice(SHARE)) + "</div>"


def _newsletter(n: Namer) -> str:
    head, text = n.rng.choice(NEWSLETTER)
    return f'<div{n.cls("newsletter")}><h3>{head}</h3><p>{text}</p><form><input type="email" placeholder="Your email address"><button>Sign up</button></form></div>'


def _ad(n: Namer) -> str:
    label = n.rng.choice(["Advertisement", "ADVERTISEMENT", "Sponsored", "Anzeige", "Advertisement - Continue reading below"])
    return f'<div{n.cls("ad")}><span>{label}</span><div id="div-gpt-ad-{n.rng.randint(100, 999)}"></div></div>'


def _comments(n: Namer, count: int) -> str:
    r = n.rng
    heading = r.choice([f"{count} Comments", f"Comments ({count})", "Join the discussion", "Reader comments", f"{count} thoughts on this"])
    parts = [f"<h2>{heading}</h2>"]
    if r.random() < 0.5:
        parts.append(f"<div{n.cls('comment-tabs')}><a>Top rated comments</a> <a>Newest</a> <a>Oldest</a></div>")
    for _ in range(count):
        text = " ".join(r.sample(COMMENT_SENTENCES, r.randint(1, 3)))
        vote = r.randint(0, 250)
        item = (
            f'<div{n.cls("comment-author")}><a href="/u/{r.choice(USERS)}">{r.choice(USERS)}</a>'
            f" <time>{r.randint(1, 23)} hours ago</time></div><p>{esc(text)}</p>"
            f'<div{n.cls("comment-actions")}><a>Reply</a> <span>▲ {vote}</span> <span>▼ {r.randint(0, 30)}</span> <a>Report</a></div>'
        )
        parts.append(f"<div{n.cls('comment')}>{item}</div>")
    if count > 10:
        parts.append("<button>Load more comments</button>")
    parts.append('<form><textarea placeholder="Write a comment..."></textarea><button>Post comment</button></form>')
    return n.wrap("comments", "".join(parts))


def _related(n: Namer) -> str:
    r = n.rng
    head = r.choice(["Related posts", "You may also like", "Read more", "More from this section", "Recommended for you"])
    items = "".join(
        f'<li><a href="/story/{r.randint(1000, 99999)}">{esc(t)}</a><p>{esc(r.choice(_prose())[:r.randint(60, 140)])}...</p></li>'
        if r.random() < 0.5 else f'<li><a href="/story/{r.randint(1000, 99999)}">{esc(t)}</a></li>'
        for t in r.sample(RELATED_TEASERS, r.randint(3, 6))
    )
    return n.wrap("related", f"<h3>{head}</h3><ul>{items}</ul>")


def _trending(n: Namer) -> str:
    r = n.rng
    items = "".join(f"<li><span>{k + 1}</span> <a href=\"/t/{k}\">{esc(t)}</a></li>" for k, t in enumerate(r.sample(RELATED_TEASERS, 5)))
    return f"<div{n.cls('trending')}><h3>{r.choice(['Trending now', 'Most read', 'Popular'])}</h3><ol>{items}</ol></div>"


def _poll(n: Namer) -> str:
    q, opts = n.rng.choice(POLLS)
    return f"<div{n.cls('poll')}><h4>Poll</h4><p>{esc(q)}</p>" + "".join(f'<label><input type="radio" name="p"> {esc(o)}</label>' for o in opts) + "<button>Vote</button> <a>View results</a></div>"


def _bio(n: Namer, author: str) -> str:
    r = n.rng
    text = f"{author} is a {r.choice(['senior reporter', 'staff writer', 'software engineer', 'freelance journalist', 'contributing editor'])} covering {r.choice(['technology', 'politics', 'science', 'business'])}. {r.choice(['Previously worked at a regional paper.', 'Lives with two cats and too many books.', 'Follow on social media for more.'])}"
    return n.wrap("bio", f'<img src="/avatars/{r.randint(1, 99)}.jpg" alt=""><h4>About the author</h4><p>{esc(text)}</p><a>View all posts</a>')


def _tags(n: Namer) -> str:
    return f"<div{n.cls('tags')}><span>Tags:</span> " + " ".join(f'<a href="/tag/{t}">{t}</a>' for t in n.rng.sample(TAGS, n.rng.randint(2, 6))) + "</div>"


def _pager(n: Namer) -> str:
    return n.wrap("pager", '<a href="?p=1">« Previous</a> <a>1</a> <a>2</a> <a>3</a> <a href="?p=3">Next »</a>')


def _gallery(n: Namer) -> str:
    r = n.rng
    cap = r.choice(["Photo: Staff photographer", "Image courtesy of the city archive", "Credit: Press Association"])
    figs = "".join(f'<figure><img src="/img/{r.randint(1, 999)}.jpg" alt=""><figcaption>{esc(cap)} ({k + 1}/6)</figcaption></figure>' for k in range(6))
    return n.wrap("gallery", f"<h3>In pictures</h3>{figs}")


def _figure(n: Namer) -> str:
    r = n.rng
    cap = r.choice(["The site as it looked last spring.", "Officials at the press conference on Tuesday.", "A view of the harbour.", "Screenshot of the new interface."])
    credit = r.choice(["Photo: Reuters", "Image: Getty", "Credit: the author", "AP Photo"])
    return f'<figure{n.cls("figure")}><img src="/img/{r.randint(1, 999)}.jpg" alt="{esc(cap)}"><figcaption>{esc(cap)} <span>{credit}</span></figcaption></figure>'


def _footer(n: Namer, site: str) -> str:
    r = n.rng
    cols = "".join(f"<div><h4>{h}</h4>{_links(r, items)}</div>" for h, items in r.sample(FOOTER_COLS, r.randint(2, 4)))
    return n.wrap("footer", f"{cols}<p>&copy; {r.randint(2018, 2025)} {esc(site)}. All rights reserved.</p>")


def _sidebar(n: Namer) -> str:
    r = n.rng
    widgets = [_trending(n), _poll(n), _newsletter(n), _ad(n),
               f"<div{n.cls('widget')}><h3>Categories</h3>{_links(r, r.sample(SECTIONS, 6))}</div>",
               f"<div{n.cls('widget')}><h3>Archives</h3>{_links(r, [f'{m} 2024' for m in r.sample(MONTHS, 5)])}</div>"]
    return n.wrap("sidebar", "".join(r.sample(widgets, r.randint(2, 5))))


# ------------------------------------------------------------------------------------------- page kinds


def _news_or_blog(kind: str, i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    n = Namer(STYLES[i % 4] if i >= 3 else rng.choice(STYLES), rng)
    site = rng.choice(SITES if kind == "news" else BLOGS)
    author = _name(rng)
    words = rng.randint(60, 90) if i == 0 else rng.choice([80, 150, 300, 500, 800, 1200, 2000])
    blocks = _article_blocks(rng, words, rich=rng.random() < 0.7)
    if charset != "utf-8":
        blocks.insert(1 if len(blocks) > 1 else 0, ("p", rng.choice(CP1252_EXTRA)))
        blocks = [(k, v.replace("'", "’")) if isinstance(v, str) and k == "p" else (k, v) for k, v in blocks]
    title = rng.choice(RELATED_TEASERS + [t for t, _ in _documents()[:20]])
    # body: blocks with interleaved boilerplate that is not truth
    body_parts = []
    inserted_box = False
    for k, b in enumerate(blocks):
        body_parts.append(render_block(b, rng))
        if k < len(blocks) - 1 and b[0] == "p":
            x = rng.random()
            if (i == 1 and not inserted_box) or x < 0.06:
                body_parts.append(_newsletter(n))
                inserted_box = True
            elif x < 0.12:
                body_parts.append(_ad(n))
            elif x < 0.16:
                body_parts.append(_figure(n))
            elif x < 0.19:
                body_parts.append(f'<p><strong>Read more:</strong> <a href="/story/{rng.randint(1, 9999)}">{esc(rng.choice(RELATED_TEASERS))}</a></p>')
    if i == 1 and not inserted_box:  # single-paragraph article: the box goes after it
        body_parts.append(_newsletter(n))
    content = f"<div{n.cls('content')}>{''.join(body_parts)}</div>"
    meta = f'<div{n.cls("meta")}>By <a href="/author/{author.split()[0].lower()}">{esc(author)}</a> <time>{_date(rng)}</time> · {rng.randint(2, 15)} min read</div>'
    head = f"<h1{n.cls('title')}>{esc(title)}</h1>{meta}"
    lead_fig = _figure(n) if rng.random() < 0.5 else ""
    n_comments = rng.randint(30, 45) if i == 0 else rng.choice([0, 0, 3, 8, 15, 35])
    comments = _comments(n, n_comments) if n_comments else ""
    after = [_share(n) if rng.random() < 0.8 else "", _tags(n) if rng.random() < 0.6 else "", _bio(n, author) if rng.random() < 0.5 else ""]
    comments_inside = rng.random() < 0.4
    art_inner = head + (_share(n) if rng.random() < 0.4 else "") + lead_fig + content + "".join(after) + (comments if comments_inside else "")
    article = n.wrap("article", art_inner)
    below = [_related(n) if rng.random() < 0.8 else "", _gallery(n) if rng.random() < 0.2 else "", "" if comments_inside else comments, _pager(n) if kind == "blog" and rng.random() < 0.5 else ""]
    main = n.wrap("main", (_crumbs(n, rng.choice(SECTIONS)) if rng.random() < 0.5 else "") + article + "".join(below))
    layout = [_cookie(n) if rng.random() < 0.6 else "", _header(n, site)]
    if rng.random() < 0.3:
        layout.append(_ad(n))
    sidebar = _sidebar(n) if rng.random() < 0.75 else ""
    layout += [main, sidebar] if rng.random() < 0.7 else [sidebar, main]
    layout.append(_footer(n, site))
    truth = "\n\n".join(block_truth(b) for b in blocks)
    url = f"https://{re.sub(r'[^a-z]', '', site.lower())}.example.com/{rng.randint(2016, 2025)}/{rng.randint(1, 12):02d}/story-{rng.randint(1000, 99999)}"
    return _document(_scripts(rng), "".join(layout), charset, f"{title} | {site}"), truth, url


def _forum(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ["discourse", "phpbb", "obfuscated"][i % 3]
    n = Namer("obfuscated" if variant == "obfuscated" else "semantic", rng)
    prose = _prose()
    n_posts = 1 if i == 0 else rng.randint(2, 14)
    bodies: list[list[Block]] = []
    for _ in range(n_posts):
        paras = [("p", _trim_words(rng.choice(prose), rng.randint(15, 60))) for _ in range(rng.choice([1, 1, 2, 3]))]
        if rng.random() < 0.15:
            paras.append(("code", rng.choice(_code_snippets())))
        bodies.append(paras)
    if i == 0:
        bodies = [[("p", _trim_words(rng.choice(prose), 25))]]
    if charset != "utf-8":
        bodies[0].insert(0, ("p", rng.choice(CP1252_EXTRA)))
    title = rng.choice([t for t, _ in _documents()]) + rng.choice(["?", " - help needed", " not working as expected", " question", ""])
    site = rng.choice(["Python Forum", "DevTalk", "Community Board", "Linux Questions", "Maker Forum"])
    posts_html = []
    for k, post_blocks in enumerate(bodies):
        user = rng.choice(USERS)
        content = "".join(render_block(b, rng) for b in post_blocks)
        sig = f"<div{n.cls('signature')}>{esc(rng.choice(['-- Sent from my phone', 'Running Arch btw', 'Python 3.12 on Debian', 'If it is not broken, refactor it.']))}</div>" if rng.random() < 0.4 else ""
        if variant == "discourse":
            posts_html.append(
                f'<article class="topic-post" id="post_{k + 1}"><div class="topic-avatar"><img alt="" src="/u/{user}.png"></div>'
                f'<div class="topic-body"><div class="topic-meta-data"><span class="username"><a href="/u/{user}">{user}</a></span>'
                f'<span class="user-title">{rng.choice(["Regular", "Member", "Leader", ""])}</span><div class="post-infos"><a class="post-date">{rng.choice(MONTHS)[:3]} {rng.randint(1, 28)}</a></div></div>'
                f'<div class="cooked">{content}</div><section class="post-menu-area"><button>{rng.randint(0, 40) or ""} ♥</button><button>Share</button><button>Reply</button></section></div></article>'
            )
            if i == 1 and k == 0:
                posts_html.append('<div class="topic-map"><h3>Welcome!</h3><p>Sign up to join the discussion, follow topics and get notified when someone replies.</p><button>Sign Up</button></div>')
        elif variant == "phpbb":
            posts_html.append(
                f'<div id="p{rng.randint(10000, 99999)}" class="post bg{k % 2 + 1}"><div class="inner"><dl class="postprofile"><dt><a class="username">{user}</a></dt>'
                f"<dd>{rng.choice(['Posts', 'Beiträge'])}: {rng.randint(1, 5000)}</dd><dd><strong>Joined:</strong> {_date(rng)}</dd></dl>"
                f'<div class="postbody"><h3><a href="#p">Re: {esc(title)}</a></h3><ul class="post-buttons"><li><a>Quote</a></li><li><a>Report</a></li></ul>'
                f'<p class="author">by <strong>{user}</strong> » {_date(rng)}</p><div class="content">{content}</div>{sig}</div></div></div>'
            )
            if i == 1 and k == 0:
                posts_html.append(f'<div class="post bg3"><div class="inner"><p>{esc(rng.choice(NEWSLETTER)[1])}</p><a>Register</a></div></div>')
        else:
            posts_html.append(
                f'<div{n.cls("post")}><div{n.cls("post-head")}><a>{user}</a><span>{rng.randint(1, 11)}mo ago</span></div>'
                f'<div{n.cls("post-body")}>{content}</div><div{n.cls("post-actions")}><button>▲</button><span>{rng.randint(0, 300)}</span><button>▼</button><button>Reply</button><button>Award</button></div></div>'
            )
            if i == 1 and k == 0:
                posts_html.append(_ad(n))
    similar = f"<div{n.cls('similar')}><h3>{rng.choice(['Similar topics', 'Suggested Topics', 'Related threads'])}</h3>" + _links(rng, rng.sample(RELATED_TEASERS, 5)) + "</div>"
    if i == 0:
        similar *= 3
    header = f'<header class="d-header"><a class="logo">{site}</a><button>Log In</button><button>Sign Up</button></header>' if variant == "discourse" else _header(n, site)
    body = (
        (_cookie(n) if rng.random() < 0.5 else "") + header
        + f"<div{n.cls('crumbs')}>Board index » {rng.choice(['General', 'Help', 'Off topic'])}</div><h1>{esc(title)}</h1>"
        + f"<div{n.cls('thread')}>{''.join(posts_html)}</div>" + _pager(n) + similar
        + f"<div{n.cls('online')}>Users browsing this forum: {rng.randint(0, 9)} registered users and {rng.randint(1, 80)} guests</div>" + _footer(n, site)
    )
    truth = "\n\n".join(block_truth(b) for post in bodies for b in post)
    url = f"https://forum.example.org/t/{re.sub(r'[^a-z]+', '-', title.lower()).strip('-')}/{rng.randint(100, 99999)}"
    return _document(_scripts(rng), body, charset, f"{title} - {site}"), truth, url


def _ecommerce(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    style = STYLES[i % 4]
    n = Namer(style, rng)
    prose = _prose()
    product = rng.choice(["Aurora", "Nimbus", "Vector", "Summit", "Cobalt", "Willow", "Orbit"]) + " " + rng.choice(["Desk Lamp", "Backpack 28L", "Wireless Headphones", "Coffee Grinder", "Trail Shoes", "Mechanical Keyboard", "Cast Iron Pan"])
    n_par = 1 if i == 0 else rng.randint(1, 4)
    desc: list[Block] = [("p", _trim_words(rng.choice(prose), 30 if i == 0 else rng.randint(30, 90))) for _ in range(n_par)]
    if charset != "utf-8":
        desc.insert(0, ("p", rng.choice(CP1252_EXTRA)))
    if rng.random() < 0.5 and i != 0:
        desc.append(("ul", [rng.choice(["Durable", "Lightweight", "Water-resistant", "Recycled"]) + " " + rng.choice(["materials", "construction", "finish", "design"]) + f" rated for {rng.randint(2, 10)} years of use" for _ in range(rng.randint(2, 5))]))
    spec = [["Specification", "Value"]] + [[k, v] for k, v in rng.sample([
        ["Weight", f"{rng.randint(100, 3000)} g"], ["Dimensions", f"{rng.randint(10, 60)} x {rng.randint(10, 60)} x {rng.randint(2, 30)} cm"],
        ["Material", rng.choice(["Aluminium", "Recycled polyester", "Oak", "Stainless steel"])], ["Colour", rng.choice(["Black", "Forest green", "Sand", "Slate grey"])],
        ["Warranty", f"{rng.randint(1, 5)} years"], ["Model number", f"{rng.choice('ABCX')}{rng.randint(100, 999)}-{rng.randint(10, 99)}"],
        ["Country of origin", rng.choice(["Portugal", "Vietnam", "Germany", "Mexico"])], ["Power", f"{rng.randint(5, 1500)} W"]], rng.randint(3, 7))]
    truth_blocks = [*desc, ("table", spec)]
    price = f"{rng.randint(9, 399)}.{rng.choice(['00', '99', '49'])}"
    buy = (
        f'<div{n.cls("price")}><span>€{price}</span> <s>€{int(float(price) * 1.2)}.00</s> <span>Save 20%</span></div>'
        f'<div{n.cls("rating")}>★★★★☆ {rng.randint(3, 4)}.{rng.randint(0, 9)} out of 5 ({rng.randint(5, 3000)} reviews)</div>'
        f'<select><option>Size S</option><option>Size M</option></select><button{n.cls("cart")}>Add to cart</button><button>Buy now</button>'
        f"<a>Add to wishlist</a><p>{rng.choice(['Free delivery on orders over €50.', 'In stock. Ships within 24 hours.', 'Only 3 left in stock - order soon.'])}</p>"
    )
    desc_html = "".join(render_block(b, rng) for b in desc)
    if i == 1 and len(desc) > 1:
        desc_html = render_block(desc[0], rng) + _newsletter(n) + "".join(render_block(b, rng) for b in desc[1:])
    spec_html = render_block(("table", spec), rng)
    reviews = "".join(
        f"<div{n.cls('review')}><strong>{rng.choice(['Great value', 'Does the job', 'Disappointed', 'Love it!', 'Would buy again'])}</strong> <span>{'★' * rng.randint(1, 5)}</span>"
        f"<p>{esc(' '.join(rng.sample(COMMENT_SENTENCES, 2)))}</p><span>{rng.choice(USERS)}, {_date(rng)}</span> <a>Helpful ({rng.randint(0, 50)})</a></div>"
        for _ in range(rng.randint(2, 30 if i == 0 else 8))
    )
    also = f"<div{n.cls('also')}><h3>{rng.choice(['Customers also bought', 'You might also like', 'Frequently bought together'])}</h3>" + "".join(
        f"<div><a>{rng.choice(['Nimbus', 'Orbit', 'Willow'])} {rng.choice(['Case', 'Stand', 'Refill pack', 'Cable'])}</a><span>€{rng.randint(5, 60)}.99</span><button>Add to cart</button></div>" for _ in range(rng.randint(3, 8))) + "</div>"
    shipping = f"<div{n.cls('shipping')}><h3>Shipping &amp; Returns</h3><p>Free standard shipping on orders over €50. Returns accepted within 30 days of delivery in original packaging. See our returns policy for details.</p></div>"
    desc_title = rng.choice(["Description", "Product details", "About this item", "Overview"])
    spec_title = rng.choice(["Specifications", "Technical details", "Product information"])
    main = (
        f"<div{n.cls('crumbs')}><a>Home</a> / <a>{rng.choice(['Home & Garden', 'Electronics', 'Outdoor', 'Kitchen'])}</a></div>"
        f"<div{n.cls('gallery')}>" + "".join(f'<img src="/p/{rng.randint(1, 999)}.jpg" alt="{esc(product)}">' for _ in range(rng.randint(2, 6))) + "</div>"
        f"<h1>{esc(product)}</h1>{buy}"
        f"<div{n.cls('tabs')}><h2>{desc_title}</h2><div{n.cls('description')}>{desc_html}</div><h2>{spec_title}</h2>{spec_html}</div>"
        f"{shipping}<div{n.cls('reviews')}><h2>Customer reviews</h2>{reviews}</div>{also}"
    )
    shop = rng.choice(["Northbay Goods", "Kettle & Co", "Gearhouse", "Maple Market"])
    body = (_cookie(n) if rng.random() < 0.7 else "") + _header(n, shop) + n.wrap("main", main) + _footer(n, shop)
    truth = "\n\n".join(block_truth(b) for b in truth_blocks)
    url = f"https://shop.example.com/products/{re.sub(r'[^a-z0-9]+', '-', product.lower())}-{rng.randint(100, 9999)}"
    return _document(_scripts(rng), body, charset, f"{product} | {shop}"), truth, url


def _encyclopedia(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    vector2022 = i % 2 == 1
    title, blocks = _doc_blocks(rng, short=i == 0)
    blocks = [b for b in blocks if b[0] != "code" or rng.random() < 0.3]
    if charset != "utf-8":
        blocks.insert(0, ("p", rng.choice(CP1252_EXTRA)))
    parts = []
    toc: list[str] = []
    edit = '<span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="?action=edit">edit</a><span class="mw-editsection-bracket">]</span></span>'
    ref = 0
    for k, b in enumerate(blocks):
        if b[0] in ("h2", "h3"):
            anchor = re.sub(r"\W+", "_", str(b[1]))
            toc.append(f'<li><a href="#{anchor}"><span class="tocnumber">{len(toc) + 1}</span> <span class="toctext">{esc(str(b[1]))}</span></a></li>')
            if vector2022:
                parts.append(f'<div class="mw-heading mw-heading{b[0][1]}"><{b[0]} id="{anchor}">{esc(str(b[1]))}</{b[0]}>{edit}</div>')
            else:
                parts.append(f'<{b[0]}><span class="mw-headline" id="{anchor}">{esc(str(b[1]))}</span>{edit}</{b[0]}>')
        elif b[0] == "p":
            ref += 1
            marker = rng.choice([
                f'<sup class="reference"><a href="#cite_note-{ref}">[{ref}]</a></sup>',
                '<sup class="noprint Inline-Template Template-Fact">[<i><a href="/wiki/Wikipedia:Citation_needed" title="Wikipedia:Citation needed">citation needed</a></i>]</sup>',
                "",
            ])
            parts.append(f"<p>{_inline(str(b[1]), rng, 0.06)}{marker}</p>")
        else:
            parts.append(render_block(b, rng))
        if i == 1 and k == 1:
            parts.append('<div role="note" class="hatnote navigation-not-searchable">Main article: <a href="/wiki/Main">Details of this topic</a></div>')
    infobox = (
        f'<table class="infobox vcard"><caption>{esc(title)}</caption><tbody>'
        + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in [("Paradigm", "Multi-paradigm"), ("Designed by", _name(rng)), ("First appeared", str(rng.randint(1985, 2010))), ("Typing discipline", rng.choice(["Duck, dynamic, strong", "Static"])), ("License", rng.choice(["PSF License", "MIT"]))])
        + "</tbody></table>"
    )
    toc_html = f'<div id="toc" class="toc" role="navigation"><div class="toctitle"><h2 id="mw-toc-heading">Contents</h2></div><ul>{"".join(toc)}</ul></div>' if len(toc) >= 3 and not vector2022 else ""
    body_html = infobox + (parts[0] if parts else "") + toc_html + "".join(parts[1:])
    refs = "".join(f'<li id="cite_note-{k}"><span class="mw-cite-backlink"><b><a>^</a></b></span> <span class="reference-text"><cite>{esc(_name(rng))} ({rng.randint(1990, 2024)}). "{esc(rng.choice(RELATED_TEASERS))}". Retrieved {_date(rng)}.</cite></span></li>' for k in range(1, ref + 1))
    see_also = '<h2><span class="mw-headline" id="See_also">See also</span></h2><ul>' + "".join(f"<li><a>{esc(t)}</a></li>" for t, _ in rng.sample(_documents(), 4)) + "</ul>"
    navbox = '<div role="navigation" class="navbox"><table class="nowraplinks"><tr><th>Python topics</th></tr><tr><td class="navbox-list">' + " · ".join(f"<a>{esc(t)}</a>" for t, _ in rng.sample(_documents(), 12)) + "</td></tr></table></div>"
    content = (
        f'<div id="mw-content-text" class="mw-body-content"><div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">{body_html}{see_also}'
        f'<h2><span class="mw-headline" id="References">References</span>{edit}</h2><div class="reflist"><ol class="references">{refs}</ol></div>{navbox}</div></div>'
        f'<div class="printfooter">Retrieved from "<a href="https://wiki.example.org/w/index.php?title={esc(title)}">https://wiki.example.org/w/index.php?title={esc(title)}</a>"</div>'
        f'<div id="catlinks" class="catlinks"><div id="mw-normal-catlinks"><a>Categories</a>: ' + " | ".join(f"<a>{c}</a>" for c in rng.sample(["Python (programming language)", "Programming constructs", "Articles with short description", "All articles with unsourced statements", "Computer science"], 3)) + "</div></div>"
    )
    heading = f'<h1 id="firstHeading" class="firstHeading mw-first-heading"><span class="mw-page-title-main">{esc(title)}</span></h1>'
    sitesub = '<div id="siteSub" class="noprint">From WikiExample, the free encyclopedia</div>'
    nav = (
        '<div id="mw-navigation"><h2>Navigation menu</h2><div id="p-personal"><ul><li><a>Create account</a></li><li><a>Log in</a></li></ul></div>'
        '<div id="p-views"><ul><li><a>Read</a></li><li><a>Edit</a></li><li><a>View history</a></li></ul></div>'
        '<div id="mw-panel"><div id="p-navigation"><ul><li><a>Main page</a></li><li><a>Contents</a></li><li><a>Current events</a></li><li><a>Random article</a></li><li><a>About Wikipedia</a></li><li><a>Donate</a></li></ul></div>'
        '<div id="p-lang"><h3>Languages</h3><ul><li><a lang="de">Deutsch</a></li><li><a lang="fr">Français</a></li><li><a lang="es">Español</a></li></ul></div></div></div>'
    )
    footer = f'<footer id="footer"><ul><li id="footer-info-lastmod"> This page was last edited on {_date(rng)}, at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}.</li><li>Text is available under the Creative Commons Attribution-ShareAlike License 4.0; additional terms may apply.</li></ul><ul><li><a>Privacy policy</a></li><li><a>About WikiExample</a></li><li><a>Disclaimers</a></li><li><a>Contact</a></li></ul></footer>'
    if vector2022:
        body = f'<div class="mw-page-container"><header class="vector-header mw-header"><a class="mw-logo">WikiExample</a><form id="searchform"><input placeholder="Search WikiExample"></form></header><div class="vector-column-start"><nav id="vector-toc" class="vector-toc"><div class="vector-toc-title">Contents</div><ul>{"".join(toc)}</ul></nav></div><main id="content" class="mw-body">{heading}{sitesub}{content}</main>{nav}{footer}</div>'
    else:
        body = f'<div id="mw-page-base"></div><div id="content" class="mw-body" role="main">{heading}<div id="bodyContent" class="vector-body">{sitesub}<div id="contentSub"></div>{content}</div></div>{nav}{footer}'
    truth = "\n\n".join(block_truth(b) for b in blocks)
    return _document("", body, charset, f"{title} - WikiExample"), truth, "https://wiki.example.org/wiki/" + re.sub(r"\W+", "_", title)


def _docs_blocks(rng: random.Random, i: int, charset: str) -> tuple[str, list[Block]]:
    title, blocks = _doc_blocks(rng, short=i == 0)
    blocks = [("h1", title), *blocks]
    if rng.random() < 0.5 and i != 0:
        blocks.insert(rng.randrange(2, len(blocks) + 1), ("code", rng.choice(_code_snippets())))
    if rng.random() < 0.4 and i != 0:
        blocks.insert(rng.randrange(2, len(blocks) + 1), ("note", (rng.choice(["Note", "Warning", "Tip"]), _trim_words(rng.choice(_prose()), 20))))
    if rng.random() < 0.3 and i != 0:
        blocks.insert(rng.randrange(2, len(blocks) + 1), ("table", [["Option", "Default", "Meaning"]] + [[w, rng.choice(["None", "True", "0", "''"]), _trim_words(rng.choice(_prose()), 6)] for w in rng.sample(["strict", "encoding", "timeout", "verbose", "indent", "newline"], 3)]))
    if charset != "utf-8":
        blocks.insert(1, ("p", rng.choice(CP1252_EXTRA)))
    return title, blocks


def _chapters(rng: random.Random, current: str) -> list[str]:
    names = [t for t, _ in rng.sample(_documents(), rng.randint(8, 20))]
    names.insert(rng.randrange(len(names)), current)
    return names


def _mdbook(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    title, blocks = _docs_blocks(rng, i, charset)
    book = rng.choice(["The Selene Book", "Python Language Notes", "The Interpreter Guide", "Cookbook"])
    chapters = _chapters(rng, title)
    new = i % 2 == 0
    active = ' class="active"'
    items = "".join(
        f'<li class="chapter-item expanded "><a href="ch{k}.html"{active if c == title else ""}><strong aria-hidden="true">{k + 1}.</strong> {esc(c)}</a></li>'
        for k, c in enumerate(chapters)
    )
    sidebar_tag = "nav" if new else "div"
    sidebar = f'<{sidebar_tag} id="sidebar" class="sidebar" aria-label="Table of contents"><div class="sidebar-scrollbox"><ol class="chapter">{items}</ol></div><div id="sidebar-resize-handle" class="sidebar-resize-handle"></div></{sidebar_tag}>'
    help_dialog = (
        '<div id="help-container" class="hidden"><div id="mdbook-help-popup"><h2 class="mdbook-help-title">Keyboard shortcuts</h2><div>'
        "<p>Press <kbd>←</kbd> or <kbd>→</kbd> to navigate between chapters</p><p>Press <kbd>S</kbd> or <kbd>/</kbd> to search in the book</p>"
        "<p>Press <kbd>?</kbd> to show this help</p><p>Press <kbd>Esc</kbd> to hide this help</p></div></div></div>"
    )
    if charset != "utf-8":
        help_dialog = help_dialog.replace("←", "Left").replace("→", "Right")
    theme = '<ul id="theme-list" class="theme-popup" aria-label="Themes" role="menu">' + "".join(f'<li role="none"><button role="menuitem" class="theme" id="{t.lower()}">{t}</button></li>' for t in ["Light", "Rust", "Coal", "Navy", "Ayu"]) + "</ul>"
    menu = (
        f'<div id="menu-bar" class="menu-bar sticky"><div class="left-buttons"><label id="sidebar-toggle" class="icon-button" title="Toggle Table of Contents"><i class="fa fa-bars"></i></label>'
        f'<button id="theme-toggle" class="icon-button" title="Change theme"><i class="fa fa-paint-brush"></i></button>{theme}<button id="search-toggle" class="icon-button" title="Search. (Shortkey: s)"><i class="fa fa-search"></i></button></div>'
        f'<h1 class="menu-title">{esc(book)}</h1><div class="right-buttons"><a href="print.html" title="Print this book"><i id="print-button" class="fa fa-print"></i></a>'
        f'<a href="https://github.com/example/book" title="Git repository"><i id="git-repository-button" class="fa fa-github"></i></a></div></div>'
        '<div id="search-wrapper" class="hidden"><form id="searchbar-outer" class="searchbar-outer"><input type="search" id="searchbar" placeholder="Search this book ..."></form><div id="searchresults-outer" class="searchresults-outer hidden"><div id="searchresults-header" class="searchresults-header"></div><ul id="searchresults"></ul></div></div>'
    )
    content = "".join(render_block(b, rng) for b in blocks)
    nav = '<nav class="nav-wrapper" aria-label="Page navigation"><a rel="prev" href="prev.html" class="mobile-nav-chapters previous" title="Previous chapter" aria-label="Previous chapter"><i class="fa fa-angle-left"></i></a><a rel="next" href="next.html" class="mobile-nav-chapters next" title="Next chapter"><i class="fa fa-angle-right"></i></a><div style="clear: both"></div></nav>'
    wide = '<nav class="nav-wide-wrapper" aria-label="Page navigation"><a rel="prev" href="prev.html" class="nav-chapters previous" title="Previous chapter"><i class="fa fa-angle-left"></i></a><a rel="next" href="next.html" class="nav-chapters next" title="Next chapter"><i class="fa fa-angle-right"></i></a></nav>'
    body = (
        help_dialog + '<div id="body-container"><script>var path_to_root = "";</script>' + sidebar
        + f'<div id="page-wrapper" class="page-wrapper"><div class="page">{menu}<div id="content" class="content"><main>{content}</main>{nav}</div></div>{wide}</div></div>'
    )
    truth = "\n\n".join(block_truth(b) for b in blocks)
    return _document('<link rel="stylesheet" href="css/chrome.css"><script src="book.js"></script>', body, charset, f"{title} - {book}"), truth, f"https://book.example.org/ch{rng.randint(1, 30)}.html"


def _sphinx(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    title, blocks = _docs_blocks(rng, i, charset)
    project = rng.choice(["selene", "pyfoo", "Widgetry", "netkit"])
    pilcrow = "¶"
    parts = []
    for b in blocks:
        if b[0] in ("h1", "h2", "h3"):
            anchor = re.sub(r"\W+", "-", str(b[1]).lower())
            parts.append(f'<{b[0]}>{esc(str(b[1]))}<a class="headerlink" href="#{anchor}" title="Link to this heading">{pilcrow}</a></{b[0]}>')
        elif b[0] == "code":
            parts.append(f'<div class="highlight-python notranslate"><div class="highlight">{render_block(b, rng, "spans").replace("<pre><code>", "<pre>").replace("</code></pre>", "</pre>")}</div></div>')
        elif b[0] == "table":
            parts.append(render_block(b, rng).replace("<table>", '<table class="docutils align-default">'))
        else:
            parts.append(render_block(b, rng))
    body_html = f'<section id="{_slug(title)}">{"".join(parts)}</section>'
    toctree = "".join(f'<li class="toctree-l1{" current" if c == title else ""}"><a class="reference internal" href="{k}.html">{esc(c)}</a></li>' for k, c in enumerate(_chapters(rng, title)))
    rtd = i % 2 == 0
    if rtd:
        body = (
            '<div class="wy-grid-for-nav"><nav data-toggle="wy-nav-shift" class="wy-nav-side"><div class="wy-side-scroll"><div class="wy-side-nav-search">'
            f'<a href="index.html" class="icon icon-home">{project}</a><div class="version">{rng.randint(1, 5)}.{rng.randint(0, 20)}</div>'
            '<div role="search"><form id="rtd-search-form" class="wy-form" action="search.html" method="get"><input type="text" name="q" placeholder="Search docs" aria-label="Search docs"></form></div></div>'
            f'<div class="wy-menu wy-menu-vertical" data-spy="affix" role="navigation" aria-label="Navigation menu"><p class="caption" role="heading"><span class="caption-text">Contents:</span></p><ul class="current">{toctree}</ul></div></div></nav>'
            f'<section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><nav class="wy-nav-top" aria-label="Mobile navigation menu"><a href="index.html">{project}</a></nav><div class="wy-nav-content"><div class="rst-content">'
            f'<div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li><a href="index.html" class="icon icon-home" aria-label="Home"></a></li><li class="breadcrumb-item active">{esc(title)}</li>'
            f'<li class="wy-breadcrumbs-aside"><a href="https://github.com/example/{project}/blob/main/docs/x.rst" class="fa fa-github"> Edit on GitHub</a></li></ul><hr/></div>'
            f'<div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article"><div itemprop="articleBody">{body_html}</div></div>'
            '<footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer"><a href="prev.html" class="btn btn-neutral float-left" title="Previous" accesskey="p" rel="prev"><span class="fa fa-arrow-circle-left" aria-hidden="true"></span> Previous</a>'
            '<a href="next.html" class="btn btn-neutral float-right" title="Next" accesskey="n" rel="next">Next <span class="fa fa-arrow-circle-right" aria-hidden="true"></span></a></div><hr/>'
            f'<div role="contentinfo"><p>&#169; Copyright {rng.randint(2015, 2025)}, {esc(_name(rng))}.</p></div>'
            'Built with <a href="https://www.sphinx-doc.org/">Sphinx</a> using a <a href="https://github.com/readthedocs/sphinx_rtd_theme">theme</a> provided by <a href="https://readthedocs.org">Read the Docs</a>.'
            "</footer></div></div></section></div>"
        )
    else:  # alabaster (Sphinx's default theme)
        body = (
            f'<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">{body_html}</div></div></div>'
            f'<div class="sphinxsidebar" role="navigation" aria-label="Main"><div class="sphinxsidebarwrapper"><h1 class="logo"><a href="index.html">{project}</a></h1>'
            f'<h3>Navigation</h3><ul class="current">{toctree}</ul><div class="relations"><h3>Related Topics</h3><ul><li><a href="index.html">Documentation overview</a><ul><li>Previous: <a href="prev.html">Previous topic</a></li><li>Next: <a href="next.html">Next topic</a></li></ul></li></ul></div>'
            '<search id="searchbox" role="search"><h3 id="searchlabel">Quick search</h3><div class="searchformwrapper"><form class="search" action="search.html" method="get"><input type="text" name="q"><input type="submit" value="Go"></form></div></search>'
            f'</div></div><div class="clearer"></div></div><div class="footer">&#169;{rng.randint(2015, 2025)}, {esc(_name(rng))}. | Powered by <a href="https://www.sphinx-doc.org/">Sphinx {rng.randint(5, 8)}.{rng.randint(0, 4)}.0</a> &amp; <a href="https://alabaster.readthedocs.io">Alabaster 0.7.16</a> | <a href="_sources/x.rst.txt" rel="nofollow">Page source</a></div>'
        )
    truth = "\n\n".join(block_truth(b) for b in blocks)
    return _document('<link rel="stylesheet" href="_static/pygments.css"><script src="_static/doctools.js"></script>', body, charset, f"{title} — {project} documentation".replace("—", "-" if charset != "utf-8" else "—")), truth, f"https://{project}.readthedocs.io/en/latest/{rng.randint(1, 50)}.html"


def _mkdocs(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    title, blocks = _docs_blocks(rng, i, charset)
    site = rng.choice(["Selene docs", "FastThing", "Pipeline Handbook", "Toolkit"])
    chapters = _chapters(rng, title)
    parts = []
    toc_items = []
    for b in blocks:
        if b[0] in ("h2", "h3"):
            anchor = re.sub(r"\W+", "-", str(b[1]).lower()).strip("-")
            toc_items.append(f'<li class="md-nav__item"><a href="#{anchor}" class="md-nav__link"><span class="md-ellipsis">{esc(str(b[1]))}</span></a></li>')
            parts.append(f'<{b[0]} id="{anchor}">{esc(str(b[1]))}<a class="headerlink" href="#{anchor}" title="Permanent link">&para;</a></{b[0]}>')
        elif b[0] == "note":
            label, text = b[1]
            parts.append(f'<div class="admonition {label.lower()}"><p class="admonition-title">{esc(label)}</p><p>{esc(text)}</p></div>')
        elif b[0] == "code":
            parts.append(f'<div class="language-python highlight"><pre><span></span><code>{esc(str(b[1]))}</code></pre></div>')
        else:
            parts.append(render_block(b, rng))
    material = i % 3 != 2
    if material:
        tabs = '<nav class="md-tabs" aria-label="Tabs"><div class="md-grid"><ul class="md-tabs__list">' + "".join(f'<li class="md-tabs__item"><a href="/{t.lower()}/" class="md-tabs__link">{t}</a></li>' for t in rng.sample(["Home", "Getting started", "User guide", "Reference", "Blog", "About", "Changelog"], 5)) + "</ul></div></nav>"
        leftnav = '<div class="md-sidebar md-sidebar--primary" data-md-component="sidebar" data-md-type="navigation"><div class="md-sidebar__scrollwrap"><div class="md-sidebar__inner"><nav class="md-nav md-nav--primary" aria-label="Navigation"><label class="md-nav__title">' + esc(site) + '</label><ul class="md-nav__list">' + "".join(f'<li class="md-nav__item"><a href="/{k}/" class="md-nav__link">{esc(c)}</a></li>' for k, c in enumerate(chapters)) + "</ul></nav></div></div></div>"
        rightnav = f'<div class="md-sidebar md-sidebar--secondary" data-md-component="sidebar" data-md-type="toc"><div class="md-sidebar__scrollwrap"><div class="md-sidebar__inner"><nav class="md-nav md-nav--secondary" aria-label="Table of contents"><label class="md-nav__title" for="__toc"><span class="md-nav__icon md-icon"></span>Table of contents</label><ul class="md-nav__list" data-md-component="toc">{"".join(toc_items)}</ul></nav></div></div></div>'
        edit = '<a href="https://github.com/example/docs/edit/main/docs/page.md" title="Edit this page" class="md-content__button md-icon">Edit this page</a>'
        updated = f'<aside class="md-source-file"><span class="md-source-file__fact"><span class="md-icon" title="Last update"></span> Last update: {_date(rng)}</span></aside>' if rng.random() < 0.7 else ""
        body = (
            f'<header class="md-header" data-md-component="header"><nav class="md-header__inner md-grid" aria-label="Header"><a href="/" class="md-header__button md-logo">{esc(site)}</a>'
            '<div class="md-header__title"><span class="md-ellipsis">' + esc(title) + '</span></div><form class="md-search__form" name="search"><input type="text" class="md-search__input" placeholder="Search" aria-label="Search"></form>'
            '<div class="md-header__source"><a href="https://github.com/example/docs" class="md-source"><div class="md-source__repository">example/docs</div></a></div></nav></header>'
            f'<div class="md-container" data-md-component="container">{tabs}<main class="md-main" data-md-component="main"><div class="md-main__inner md-grid">{leftnav}{rightnav}'
            f'<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">{edit}{"".join(parts)}{updated}</article></div></div></main>'
            '<footer class="md-footer"><nav class="md-footer__inner md-grid" aria-label="Footer"><a href="/prev/" class="md-footer__link md-footer__link--prev"><div class="md-footer__title"><span class="md-footer__direction">Previous</span><div class="md-ellipsis">Installation</div></div></a>'
            '<a href="/next/" class="md-footer__link md-footer__link--next"><div class="md-footer__title"><span class="md-footer__direction">Next</span><div class="md-ellipsis">Configuration</div></div></a></nav>'
            f'<div class="md-footer-meta md-typeset"><div class="md-footer-meta__inner md-grid"><div class="md-copyright"><div class="md-copyright__highlight">Copyright &copy; {rng.randint(2019, 2025)} {esc(_name(rng))}</div> Made with <a href="https://squidfunk.github.io/mkdocs-material/" target="_blank" rel="noopener">Material for MkDocs</a></div></div></div></footer></div>'
        )
    else:  # mkdocs' built-in "mkdocs" theme (bootstrap)
        body = (
            f'<div class="navbar fixed-top navbar-expand-lg navbar-dark bg-primary"><div class="container"><a class="navbar-brand" href="/">{esc(site)}</a><ul class="nav navbar-nav">'
            + "".join(f'<li class="navitem"><a href="/{k}/" class="nav-link">{esc(c)}</a></li>' for k, c in enumerate(chapters[:8]))
            + '</ul><ul class="nav navbar-nav ml-auto"><li class="nav-item"><a href="#" data-toggle="modal" data-target="#mkdocs_search_modal" class="nav-link"><i class="fa fa-search"></i> Search</a></li><li class="nav-item"><a rel="prev" href="/prev/" class="nav-link"><i class="fa fa-arrow-left"></i> Previous</a></li><li class="nav-item"><a rel="next" href="/next/" class="nav-link">Next <i class="fa fa-arrow-right"></i></a></li><li class="nav-item"><a href="https://github.com/example/docs/edit/master/docs/x.md" class="nav-link">Edit on GitHub</a></li></ul></div></div>'
            f'<div class="container"><div class="row"><div class="col-md-3"><div class="navbar-light navbar-expand-md bs-sidebar hidden-print affix" role="complementary"><div class="navbar-header"><button type="button" class="navbar-toggler collapsed">Table of Contents</button></div><ul class="nav flex-column">{"".join(toc_items)}</ul></div></div>'
            f'<div class="col-md-9" role="main">{"".join(parts)}</div></div></div>'
            '<footer class="col-md-12"><hr><p>Documentation built with <a href="https://www.mkdocs.org/">MkDocs</a>.</p></footer>'
            '<div class="modal" id="mkdocs_search_modal" tabindex="-1" role="dialog"><div class="modal-dialog"><div class="modal-content"><div class="modal-header"><h4 class="modal-title">Search</h4><button type="button" class="close" data-dismiss="modal"><span aria-hidden="true">&times;</span><span class="sr-only">Close</span></button></div>'
            '<div class="modal-body"><p>From here you can search these documents. Enter your search terms below.</p><form><input type="search" class="form-control" placeholder="Search..." title="Type search term here"></form></div></div></div></div>'
            '<div class="modal" id="mkdocs_keyboard_modal" tabindex="-1" role="dialog"><div class="modal-dialog"><div class="modal-content"><div class="modal-header"><h4 class="modal-title">Keyboard Shortcuts</h4></div><div class="modal-body"><table class="table"><thead><tr><th>Keys</th><th>Action</th></tr></thead><tbody><tr><td class="help shortcut"><kbd>?</kbd></td><td>Open this help</td></tr><tr><td class="next shortcut"><kbd>n</kbd></td><td>Next page</td></tr><tr><td class="prev shortcut"><kbd>p</kbd></td><td>Previous page</td></tr><tr><td class="search shortcut"><kbd>s</kbd></td><td>Search</td></tr></tbody></table></div></div></div></div>'
        )
    truth = "\n\n".join(block_truth(b) for b in blocks)
    return _document('<link rel="stylesheet" href="/assets/stylesheets/main.css">', body, charset, f"{title} - {site}"), truth, f"https://docs.example.dev/{_slug(title)}/"


_BUILDERS = {
    "news": lambda i, r, c: _news_or_blog("news", i, r, c),
    "blog": lambda i, r, c: _news_or_blog("blog", i, r, c),
    "forum": _forum,
    "docs-mdbook": _mdbook,
    "docs-sphinx": _sphinx,
    "docs-mkdocs": _mkdocs,
    "ecommerce": _ecommerce,
    "encyclopedia": _encyclopedia,
}


Builder = Callable[[int, random.Random, str], tuple[str, str, str]]  # (index, rng, charset) -> html, truth, url


def build_pages(
    builders: dict[str, Builder], n_per_type: int, seed: str, charset: Callable[[int, int], str]
) -> list[Page]:
    """`n_per_type` pages of each kind of `builders` (in its order), deterministic for `seed`: page i
    of kind k gets its own seeded generator and the charset `charset(i, k)`. Every page set uses it."""
    out = []
    for k, (kind, build) in enumerate(builders.items()):
        for i in range(n_per_type):
            rng = random.Random(f"{seed}:{kind}:{i}")
            html, truth, url = build(i, rng, charset(i, k))
            out.append(Page(name=f"{kind}-{i:03d}", kind=kind, url=url, html=html, truth=truth))
    return out


def pages(n_per_type: int = 20, seed: int = 0) -> list[Page]:
    """`n_per_type` pages of each kind in `KINDS`, deterministic for `seed`."""
    return build_pages(
        {k: _BUILDERS[k] for k in KINDS}, n_per_type, str(seed),
        lambda i, k: "windows-1252" if i == 2 else "utf-8",
    )  # fmt: skip
