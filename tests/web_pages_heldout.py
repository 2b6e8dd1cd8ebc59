"""A held-out set of realistic web pages, with their main text marked, for checking that an extractor
generalises beyond the layouts of `tests/web_pages.py`.

Same API as `tests/web_pages.py` (`pages(n_per_type, seed) -> list[Page]`; `Page`, `shingle_counts` and
`shingle_scores` are that module's, re-exported here). The layouts are written independently of the
extractor, modelled on how real platforms emit their HTML (their class names, ids, `data-` attributes,
ARIA roles, inline scripts, JSON-LD, `__NEXT_DATA__`, styles and deep wrapper nesting). Kinds in `KINDS`:

- `news-react`: React/Next.js news sites: an NYT-like page (emotion `css-xxxx` classes, `data-testid`,
  the body split into "companion column" `div`s, "SKIP ADVERTISEMENT" slots), a Guardian-like one
  (`dcr-` classes, `gu-island`s, rich links, the contributions epic, "Most viewed"), a BBC-like one
  (`ssrcss-...-Paragraph` classes, `data-component="text-block"`, media players, "Related topics"),
  a CNN-like one (`vossi-paragraph`, `data-editable`, `data-component-name`); pages 5, 6, 10, 11, 15, 16, ...
  (index % 5 in 0, 1) are live blogs of timestamped updates;
- `blog-platforms`: Ghost (Casper), Medium, Substack, Blogger and WordPress (Astra + Jetpack, Gutenberg
  footnotes, comment form);
- `qa`: Stack Exchange question pages, the 2023+ Stacks markup and the older table layout;
- `recipe`: WP Recipe Maker in a Genesis/Feast theme, Tasty Recipes, and a Dotdash-Meredith-like
  (`mntl-`) recipe page;
- `press-gov`: PR Newswire-like and GlobeNewswire-like releases, GOV.UK, a USWDS US-agency page, a
  Drupal university news page;
- `docs-other`: Docusaurus 3, GitBook (Next.js), Javadoc (JDK 17+ markup) and rustdoc API pages.

Edge pages: index 0 has a very short main text under heavy boilerplate; index 1 has large boilerplate
(a "most popular"/newsletter/related block, a notice or an ad) inside the main container between main
blocks; index 2 declares `<meta charset="windows-1252">` and index 9 declares, in a `<meta http-equiv>`,
`iso-8859-1` (even kinds) or `windows-1251` with a Russian paragraph (odd kinds); both have non-ASCII
main text, and characters the charset lacks are sent as numeric character references. Lengths vary
from one short paragraph to a few thousand words.

Conventions of `Page.truth`: those of `tests/web_pages.py` (blocks separated by one blank line, in
document order; a block is a heading, paragraph, blockquote paragraph, list with one item per line,
code block verbatim, table with one row per line and tab-separated cells, or admonition with its
label line; inline markup kept as its text; site chrome is never main text), plus:
- articles (news, blog, press release, recipe, gov/university page): the title (`<h1>`, or Blogger's
  `h3.post-title`), the headline package around it (kicker, standfirst/dek/subtitle/excerpt, GOV.UK's
  lead paragraph, byline, dates, reading time) and captions/credits are NOT main text; in-body
  adverts, newsletter/subscribe boxes, "Read more:"/"Related:" link lines, rich-link cards, video
  players (and their captions), "Most popular" rails, support-us epics are NOT;
- live blogs: every update's timestamp (the time as shown, e.g. "10.42 GMT"), its heading and its
  body ARE main text, in page order; "Key events" link lists, "Updated at", share buttons are not;
- footnotes (Ghost/WordPress/Substack): each footnote's text is its own block, after the body, in
  order; the reference markers in the text and the numbers/back-links "↩" are not main text;
- Ghost callout cards are main text (their emoji is not); Medium claps, Substack likes/restacks,
  "Share this post" dialogs, author cards, "Written by", "More from", comments and comment forms
  are not;
- qa: the question body, then every answer body in page order (text, lists, code); not the title,
  votes, accepted marks, tags, user cards, "asked/answered/edited" lines, "Share / Improve this
  answer / Follow" menus, comments under posts, post notices ("This question already has answers
  here", "Highly active question"), the "N Answers" header, sort controls, "Your Answer" form,
  "Linked", "Related", "Hot Network Questions";
- recipe: the intro story (its paragraphs, subheadings and lists), then the recipe card's section
  headings ("Ingredients", "Instructions"/"Directions", "Notes"), ingredient group names, the
  ingredients (one per line, amount, unit, name and note as shown), the steps (one per line) and
  the notes; not the card's repeated title, "Jump to Recipe"/"Print"/"Pin" buttons, ratings, times,
  servings and scaling controls (1x 2x 3x), unit toggles, nutrition facts and their disclaimer,
  "Tried this recipe?" calls to action, ads between steps, step photos, comments, reviews;
- press releases: the body including its dateline, quotes, "Notes to editors" and the
  "About <company>" heading and paragraph (they are part of the release as issued); not the media
  contacts, "SOURCE ..." line, "###", "View original content", wire-service sidebars;
- gov/university pages: the body (USWDS's `usa-intro` paragraph is the body's first paragraph and IS
  main text); not skip links, official-site banners, cookie banners, mega-menus, breadcrumbs,
  side navigation, "Share this page", "Last updated"/"Published" lines, "Was this page helpful?"/
  "Is this page useful?" forms, "Related content", acknowledgement/identifier footers, contacts;
- docs (Docusaurus, GitBook): the `<h1>` and the document (GitBook's page description under the
  title is part of it); admonitions with their label as rendered ("note"); GitBook hints have no
  label; not sidebars, navbars, announcement/version banners, version badges, breadcrumbs,
  "On this page" TOCs, "Edit this page", "Last updated", "Was this helpful?", previous/next cards,
  "Copy" buttons, "#"/"§" anchors;
- API pages: Javadoc: the `<h1>`, the type signature, the class description, each summary's `<h2>`
  and table (the table's header row first), "Method Details" and every member's `<h3>` name,
  signature, description and `<dl>` notes (one line per `dt` and per `dd`); not the module/package
  sub-titles, inheritance tree, "All Implemented Interfaces", "Methods inherited from ...", nav bars,
  footer; rustdoc: the `<h1>` as text ("Struct Name", without "Copy item path"), the item
  declaration, the top docblock, the "Implementations" heading, every `impl` and method header and
  its docblock; not "Expand description", since/"Source" links, the sidebar, search, "§" anchors,
  the "Trait Implementations", "Auto Trait Implementations" and "Blanket Implementations" sections.
"""

from __future__ import annotations

import functools
import html as _html
import importlib
import inspect
import json
import random
import re
import string
import warnings
from collections.abc import Callable

from tests.web_pages import (
    COMMENT_SENTENCES,
    CP1252_EXTRA,
    FIRST,
    LAST,
    MONTHS,
    RELATED_TEASERS,
    USERS,
    Block,
    Page,
    _article_blocks,
    _code_snippets,
    _doc_blocks,
    _documents,
    _inline,
    _prose,
    _trim_words,
    block_truth,
    build_pages,
    esc,
    shingle_counts,
    shingle_scores,
)

__all__ = ["KINDS", "Page", "pages", "shingle_counts", "shingle_scores"]

KINDS = ("news-react", "blog-platforms", "qa", "recipe", "press-gov", "docs-other")

RU_EXTRA = [
    "Критики назвали это решение «наивным прочтением фасада», но владельцы кафе приветствовали новый декор и сбор в 12 евро.",
    "По словам Зои Лефевр, история этого вопроса — настоящее «дежавю» для всех, кто следил за сагой с самого начала.",
    "Кооператив, как рассказал Юрген Гроссман, работал безупречно — по крайней мере, пока не закончился шведский стол.",
]


# ------------------------------------------------------------------------------------------------ helpers


def _h(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def _css(rng: random.Random) -> str:
    """An emotion-style hashed class, e.g. `css-1r7ky0e e1lmdhsb0`."""
    return f"css-{rng.randint(1, 9)}{_h(rng, 6)} e{_h(rng, 7)}{rng.randint(0, 3)}"


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2018, 2025)}"


def _iso(rng: random.Random) -> str:
    return f"{rng.randint(2018, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _charset(i: int, kind_index: int) -> str:
    if i == 2:
        return "windows-1252"
    if i == 9:
        return "iso-8859-1" if kind_index % 2 == 0 else "windows-1251"
    return "utf-8"


def _extra(charset: str, rng: random.Random) -> str:
    return rng.choice(RU_EXTRA if charset == "windows-1251" else CP1252_EXTRA)


def _document(head: str, body: str, charset: str, title: str, *, lang: str = "en", html_attrs: str = "", body_attrs: str = "") -> str:
    if charset == "utf-8":
        meta = '<meta charset="utf-8">'
    elif charset == "windows-1252":
        meta = '<meta charset="windows-1252">'
    else:
        meta = f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">'
    page = (
        f'<!DOCTYPE html>\n<html lang="{lang}"{html_attrs}><head>{meta}<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title>{head}</head>\n<body{body_attrs}>{body}</body></html>\n"
    )
    if charset != "utf-8":
        page = page.encode(charset, "xmlcharrefreplace").decode(charset)
    return page


def _attr(cls: dict[str, str | Callable[[], str]] | None, tag: str) -> str:
    c = (cls or {}).get(tag)
    if callable(c):
        c = c()
    if not c:
        return ""
    return c if c.startswith(" ") else f' class="{c}"'


def _render(b: Block, rng: random.Random, cls: dict[str, str | Callable[[], str]] | None = None) -> str:
    """HTML of a block, with per-tag attributes from `cls` (a class name, or a string starting with a
    space: raw attributes)."""
    kind, v = b
    if kind in ("h1", "h2", "h3", "h4"):
        return f"<{kind}{_attr(cls, kind)}>{esc(str(v))}</{kind}>"
    if kind == "p":
        return f"<p{_attr(cls, 'p')}>{_inline(str(v), rng)}</p>"
    if kind in ("ul", "ol"):
        return f"<{kind}{_attr(cls, kind)}>" + "".join(f"<li{_attr(cls, 'li')}>{_inline(it, rng)}</li>" for it in v) + f"</{kind}>"
    if kind == "quote":
        return f"<blockquote{_attr(cls, 'blockquote')}><p{_attr(cls, 'p')}>{esc(str(v))}</p></blockquote>"
    if kind == "code":
        return f"<pre{_attr(cls, 'pre')}><code{_attr(cls, 'code')}>{esc(str(v))}</code></pre>"
    if kind == "table":
        rows = list(v)
        head = "".join(f"<th>{esc(c)}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
        return f"<table{_attr(cls, 'table')}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    raise ValueError(kind)


def _truth(blocks: list[Block]) -> str:
    return "\n\n".join(block_truth(b) for b in blocks)


def _body_blocks(rng: random.Random, i: int, charset: str, short_words: int = 70) -> list[Block]:
    """Article body blocks: index 0 short, others of varied length; the charset pages get a non-ASCII
    paragraph and typographic apostrophes."""
    words = rng.randint(short_words - 20, short_words + 20) if i == 0 else rng.choice([120, 250, 400, 600, 900, 1500, 2500])
    blocks = _article_blocks(rng, words, rich=rng.random() < 0.6)
    if charset != "utf-8":
        blocks.insert(1 if len(blocks) > 1 else 0, ("p", _extra(charset, rng)))
        blocks = [(k, v.replace("'", "’")) if k == "p" and isinstance(v, str) else (k, v) for k, v in blocks]
    return blocks


def _hl(code: str, kw: str) -> str:
    """Escaped code with keywords wrapped in spans of class `kw` (the text is unchanged)."""
    return re.sub(r"\b(def|return|if|else|for|in|import|from|class|while|not|and|or|None|True|False)\b", rf'<span class="{kw}">\1</span>', esc(code))


def _teasers(rng: random.Random, k: int) -> list[str]:
    return rng.sample(RELATED_TEASERS, k)


def _json_ld(data: dict) -> str:
    return f'<script type="application/ld+json">{json.dumps(data, ensure_ascii=False)}</script>'


def _title(rng: random.Random) -> str:
    return rng.choice([*RELATED_TEASERS, *(t.capitalize() for t, _ in _documents()[:30])])


# -------------------------------------------------------------------------------------------- news-react

NEWS_SITES = ["The Daily Ledger", "Northwind Post", "Harbor Times", "Metro Wire", "Kestrel News", "Morning Dispatch"]
NEWS_SECTIONS = ["World", "U.S.", "Politics", "New York", "Business", "Opinion", "Tech", "Science", "Health", "Sports", "Arts", "Books", "Style", "Food", "Travel", "Magazine", "Real Estate", "Video"]


def _live_updates(rng: random.Random, i: int, charset: str, clock: str) -> list[tuple[str, str | None, list[Block]]]:
    """Live-blog updates, newest first: (timestamp as shown, heading or None, body blocks)."""
    prose = _prose()
    n = rng.randint(4, 12)
    minute = rng.randint(8 * 60, 20 * 60)
    out = []
    for k in range(n):
        t = minute - k * rng.randint(4, 40)
        stamp = {"guardian": f"{t // 60:02d}.{t % 60:02d} GMT", "bbc": f"{t // 60:02d}:{t % 60:02d} GMT",
                 "nyt": f"{(t // 60 - 1) % 12 + 1}:{t % 60:02d} {'a' if t < 720 else 'p'}.m. ET", "cnn": f"{(t // 60 - 1) % 12 + 1}:{t % 60:02d} {'am' if t < 720 else 'pm'} ET"}[clock]
        blocks: list[Block] = [("p", _trim_words(rng.choice(prose), rng.randint(20, 70))) for _ in range(rng.choice([1, 1, 2, 3]))]
        if rng.random() < 0.15:
            blocks.append(("quote", _trim_words(rng.choice(prose), 25)))
        if k == 1 and charset != "utf-8":
            blocks.insert(0, ("p", _extra(charset, rng)))
        head = _trim_words(rng.choice(RELATED_TEASERS), 4) if rng.random() < 0.6 else None
        out.append((stamp, head, blocks))
    return out


def _readmore(rng: random.Random, cls: str = "") -> str:
    label = rng.choice(["Read more:", "Related:", "READ MORE:", "See also:"])
    return f'<p{cls}><strong>{label}</strong> <a href="/{rng.randint(2019, 2025)}/{_slug(rng.choice(RELATED_TEASERS))}">{esc(rng.choice(RELATED_TEASERS))}</a></p>'


def _news_react(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("nyt", "guardian", "bbc", "cnn")[i % 4] if i >= 3 else rng.choice(["nyt", "guardian", "bbc", "cnn"])
    live = i >= 4 and i % 5 in (0, 1)
    site = rng.choice(NEWS_SITES)
    title = _title(rng)
    dek = _trim_words(rng.choice(_prose()), rng.randint(12, 25))
    author = _name(rng)
    updates = _live_updates(rng, i, charset, variant) if live else []
    blocks = [] if live else _body_blocks(rng, i, charset)
    truth_blocks: list[Block] = []
    for stamp, head, bl in updates:
        truth_blocks += [("p", stamp), *([("h2", head)] if head else []), *bl]
    truth_blocks += blocks
    sections = rng.sample(NEWS_SECTIONS, rng.randint(8, 16))
    slug = _slug(title)
    url = f"https://www.{_slug(site).replace('-', '')}.example.com/{rng.randint(2019, 2025)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/{'live/' if live else ''}{slug}.html"
    popular = "".join(f"<li><a href=\"/{_slug(t)}\"><span>{k + 1}</span><h3>{esc(t)}</h3></a></li>" for k, t in enumerate(_teasers(rng, rng.randint(5, 10))))
    next_data = {"props": {"pageProps": {"article": {"headline": title, "summary": dek, "url": url, "body": [b[1] for b in truth_blocks[:3] if b[0] == "p"]}}}, "page": "/article/[...slug]", "buildId": _h(rng, 21), "isFallback": False}
    head_scripts = (
        _json_ld({"@context": "https://schema.org", "@type": "LiveBlogPosting" if live else "NewsArticle", "headline": title, "description": dek, "datePublished": _iso(rng), "author": [{"@type": "Person", "name": author}], "isAccessibleForFree": rng.random() < 0.5})
        + f'<style data-emotion="css {_h(rng, 6)}">.css-{_h(rng, 6)}{{margin:0 auto;max-width:600px}}</style>'
        + '<script>window.dataLayer=window.dataLayer||[];window.__loadAds=function(){};</script>'
    )
    tail_scripts = f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(next_data, ensure_ascii=False)}</script><script src="/_next/static/chunks/main-{_h(rng, 16)}.js" defer></script>'

    if variant == "nyt":
        c = functools.partial(_css, rng)
        p_cls = "css-at9mc1 evys1bk0"
        def ad(k: int) -> str:
            return (f'<div id="mid{k}-wrapper" class="ad mid{k}-wrapper {c()}"><div class="{c()}" data-testid="StandardAd"><div class="{c()}"><p class="{c()}">Advertisement</p></div>'
                    f'<div id="mid{k}" class="place-ad" data-position="mid{k}" data-size-key="mid{k}"></div></div><a href="#after-mid{k}" class="{c()}">SKIP ADVERTISEMENT</a></div><div id="after-mid{k}" class="{c()}"></div>')
        def promo() -> str:
            return (f'<div class="{c()}" data-testid="inline-newsletter-signup"><div class="{c()}"><h3 class="{c()}">The Morning: Make sense of the news</h3><p class="{c()}">{esc(rng.choice(["Sign up for our daily newsletter to get the biggest stories delivered to your inbox.", "Get the best of our journalism in your inbox every weekday."]))}</p>'
                    f'<form class="{c()}"><label for="email-{rng.randint(1, 99)}" class="{c()}">Email Address</label><input type="email" placeholder="Email Address" class="{c()}"><button type="submit" class="{c()}">Sign Up</button></form><p class="{c()}">By signing up, you agree to receive updates and special offers. You may opt out anytime.</p></div></div>')
        def video() -> str:
            return (f'<div class="{c()}" data-testid="video-container"><div class="{c()}" data-testid="vhs-container"><video preload="none" playsinline="" class="{c()}"></video><button aria-label="Play Video" class="{c()}"><span class="{c()}">Play Video</span></button>'
                    f'<div class="{c()}"><span class="{c()}">{rng.randint(0, 4)}:{rng.randint(10, 59)}</span></div></div><figcaption class="{c()}"><span class="{c()}">{esc(_trim_words(rng.choice(_prose()), 10))}</span><span class="{c()}">Credit...Video by Staff</span></figcaption></div>')
        cols, col, count = [], [], 0
        for k, b in enumerate(blocks):
            col.append(_render(b, rng, {"p": p_cls, "h2": c, "h3": c, "ul": c, "li": c, "blockquote": c, "table": c}))
            if b[0] == "p" and (len(col) >= rng.randint(2, 5) or k == len(blocks) - 1):
                cols.append(f'<div class="{c()} StoryBodyCompanionColumn" data-testid="companionColumn-{count}"><div class="{c()}">{"".join(col)}</div></div>')
                col, count = [], count + 1
                if k < len(blocks) - 1:
                    x = rng.random()
                    cols.append(ad(count) if x < 0.35 else promo() if (x < 0.5 or (i == 1 and count == 1)) else _readmore(rng, f' class="{p_cls}"') if x < 0.65 else video() if x < 0.72 else "")
        if col:
            cols.append(f'<div class="{c()} StoryBodyCompanionColumn" data-testid="companionColumn-{count}"><div class="{c()}">{"".join(col)}</div></div>')
        if i in (0, 1):
            cols.insert(1, f'<div class="{c()}" data-testid="most-popular-inline"><h2 class="{c()}">Most Popular</h2><ol class="{c()}">{popular}</ol></div>')
        live_html = ""
        for k, (stamp, head, bl) in enumerate(updates):
            live_html += (
                f'<div class="live-blog-post {c()}" data-testid="live-blog-post" id="{_h(rng, 8)}"><div class="{c()}"><div class="live-blog-post-timestamp {c()}"><time datetime="{_iso(rng)}" class="{c()}">{stamp}</time></div>'
                + (f'<h2 class="live-blog-post-headline {c()}"><a href="#{_h(rng, 6)}" class="{c()}">{esc(head)}</a></h2>' if head else "")
                + f'<div class="{c()}"><p class="{c()}">{esc(_name(rng))}</p></div>'
                + "".join(_render(b, rng, {"p": p_cls, "blockquote": c}) for b in bl)
                + f'<div class="{c()}"><button aria-label="Share" class="{c()}">Share</button></div></div></div>'
                + (ad(k) if k % 3 == 2 else "")
            )
        if live:
            body_html = f'<div class="{c()}" data-testid="live-blog-content"><div class="{c()}"><h2 class="{c()}">Here’s the latest.</h2><ul class="{c()}">' + "".join(f'<li><a href="#k{k}">{esc(t)}</a></li>' for k, t in enumerate(_teasers(rng, 3))) + f'</ul></div>{live_html}</div>'
        else:
            body_html = f'<section name="articleBody" class="meteredContent {c()}">{"".join(cols)}</section>'
        nav = "".join(f'<li class="{c()}" data-testid="nav-item-{s}"><a class="{c()}" href="/section/{_slug(s)}">{esc(s)}</a></li>' for s in sections)
        body = (
            f'<div id="app"><div><div class="NYTAppHideMasthead {c()}"><a href="#site-content" class="{c()}">Skip to content</a><a href="#site-index" class="{c()}">Skip to site index</a>'
            f'<header class="{c()}" data-testid="masthead-container"><div class="{c()}"><button aria-label="Sections Navigation &amp; Search" class="{c()}"></button><a href="/" aria-label="{esc(site)} Logo" data-testid="masthead-mobile-logo" class="{c()}">{esc(site)}</a>'
            f'<div class="{c()}"><a class="{c()}" href="/subscription" data-testid="masthead-subscribe">Subscribe for €1/week</a><a class="{c()}" data-testid="login-link">Log in</a></div></div>'
            f'<div data-testid="masthead-desktop-nav"><nav aria-label="Main" data-testid="desktop-nested-nav"><ul class="{c()}">{nav}</ul></nav></div></header></div>'
            f'<main id="site-content" role="main"><div class="{c()}"><article id="story" class="story {c()}"><header class="{c()}"><div class="{c()}"><p class="{c()}" data-testid="kicker"><a href="/section/x">{esc(sections[0])}</a></p></div>'
            f'<div class="{c()}"><h1 id="link-{_h(rng, 8)}" class="{c()}" data-testid="headline">{esc(title)}</h1></div><p id="article-summary" class="{c()}">{esc(dek)}</p>'
            f'<div class="{c()}" data-testid="photoviewer-wrapper"><figure aria-label="media" role="group" class="{c()}"><div data-testid="photoviewer-children-figure" class="{c()}"><picture><img alt="" class="{c()}" src="/images/{_h(rng)}.jpg"></picture></div>'
            f'<figcaption class="{c()}"><span class="{c()}">{esc(_trim_words(rng.choice(_prose()), 12))}</span><span class="{c()}"><span class="{c()}">Credit...</span><span>{esc(_name(rng))} for {esc(site)}</span></span></figcaption></figure></div>'
            f'<div class="{c()}" data-testid="byline-container"><p class="{c()}">By <a href="/by/{_slug(author)}" class="{c()}">{esc(author)}</a></p><ul class="{c()}"><li><time class="{c()}" datetime="{_iso(rng)}"><span>Published {_date(rng)}</span></time></li></ul></div>'
            f'<div class="{c()}" data-testid="share-tools"><ul class="{c()}"><li><button aria-label="Share full article" class="{c()}"><span>Share full article</span></button></li><li><button class="{c()}" aria-label="Save article for reading later"><span>Save</span></button></li><li><a data-testid="comments-speech-bubble-header" class="{c()}"><span>{rng.randint(10, 3000)}</span></a></li></ul></div></header>'
            f'{body_html}<div class="bottom-of-article {c()}"><div class="{c()}"><p class="{c()}">A version of this article appears in print on {_date(rng)}, Section A, Page {rng.randint(1, 24)} of the New York edition with the headline: {esc(title)}. <a href="/reprints">Order Reprints</a> | <a href="/todayspaper">Today’s Paper</a> | <a href="/subscribe">Subscribe</a></p></div></div></article></div>'
            f'<div class="{c()}" data-testid="more-in-section"><h2 class="{c()}">More in {esc(sections[0])}</h2><ol class="{c()}">' + "".join(f'<li><a href="/{_slug(t)}"><h3 class="{c()}">{esc(t)}</h3><p class="{c()}">{esc(_trim_words(rng.choice(_prose()), 14))}</p></a></li>' for t in _teasers(rng, 4)) + "</ol></div>"
            f'<div class="{c()}" data-testid="trending-module"><h2 class="{c()}">Trending in {esc(site)}</h2><ol class="{c()}">{popular}</ol></div></main>'
            f'<footer role="contentinfo" class="{c()}"><nav id="site-index" aria-labelledby="site-index-label" class="{c()}"><h2 id="site-index-label" class="{c()}">Site Index</h2><ul>{nav}</ul></nav><div class="{c()}"><span>© {rng.randint(2019, 2025)} {esc(site)} Company</span> <ul>'
            + "".join(f"<li><a>{x}</a></li>" for x in ["Contact Us", "Accessibility", "Work with us", "Advertise", "Your Ad Choices", "Privacy Policy", "Terms of Service", "Terms of Sale", "Site Map", "Help", "Subscriptions"])
            + f"</ul></div></footer></div>{tail_scripts}</div>"
        )
        return _document(head_scripts, body, charset, f"{title} - {site}", body_attrs=f' class="{_css(rng)}"'), _truth(truth_blocks), url

    if variant == "guardian":
        d = lambda: f"dcr-{_h(rng, 6)}"  # noqa: E731
        def epic() -> str:
            return (f'<div data-gu-name="epic" class="{d()}"><div class="{d()}"><h2 class="{d()}">{esc(rng.choice(["Before you move on…", "We have a small favour to ask", "Can you spare a minute?"]))}</h2>'
                    f'<p class="{d()}">Millions of readers come to {esc(site)} for open, independent journalism. Unlike many others, we have no shareholders and no billionaire owner, so our reporting is free from commercial and political influence.</p>'
                    f'<p class="{d()}">Support us from as little as €1 – it only takes a minute. Thank you.</p><div class="{d()}"><a class="{d()}" href="/contribute">Support us</a><a class="{d()}" href="/contribute">Remind me in May</a></div></div></div>')
        def rich() -> str:
            t = rng.choice(RELATED_TEASERS)
            return (f'<gu-island name="RichLinkComponent" priority="feature" deferuntil="idle" props="{esc(json.dumps({"url": "/" + _slug(t)}))}"><aside data-spacefinder-role="richLink" class="{d()}"><div data-print-layout="hide" data-link-name="rich-link-1 | 1" data-component="rich-link" class="{d()}"><a class="{d()}" href="/{_slug(t)}" aria-label="{esc(t)}"><div class="{d()}"><div class="{d()}">{esc(t)}</div></div></a></div></aside></gu-island>')
        def signup() -> str:
            return (f'<figure class="element element-newsletter-signup {d()}" data-spacefinder-role="inline"><div data-component="newsletter-signup" class="{d()}"><div class="{d()}"><span class="{d()}">Sign up to</span><p class="{d()}">First Edition</p></div>'
                    f'<p class="{d()}">Our morning email breaks down the key stories of the day, telling you what’s happening and why it matters</p><p class="{d()}"><strong>Privacy Notice: </strong>Newsletters may contain info about charities, online ads, and content funded by outside parties.</p>'
                    f'<gu-island name="SecureSignup" priority="feature" deferuntil="visible"><form class="{d()}"><input type="email" aria-label="Enter your email address" class="{d()}"><button type="submit" class="{d()}">Sign up</button></form></gu-island><p class="{d()}">after newsletter promotion</p></div></figure>')
        paras = []
        for k, b in enumerate(blocks):
            paras.append(_render(b, rng, {"p": d, "h2": d, "h3": d, "ul": d, "li": d, "blockquote": lambda: f"{d()} quoted", "table": d}))
            if b[0] == "p" and k < len(blocks) - 1:
                x = rng.random()
                paras.append(rich() if x < 0.1 else signup() if x < 0.16 or (i == 1 and k == 0) else _readmore(rng, f' class="{d()}"') if x < 0.22 else "")
        keyev = "".join(f'<li class="{d()}"><a href="#block-{_h(rng, 24)}" class="{d()}"><time class="{d()}">{esc(u[0])}</time><span class="{d()}">{esc(u[1] or _trim_words(u[2][0][1], 6))}</span></a></li>' for u in updates[:5] if u[2] and u[2][0][0] == "p")
        live_html = ""
        for k, (stamp, head, bl) in enumerate(updates):
            bid = _h(rng, 24)
            live_html += (
                f'<article id="block-{bid}" data-block-contributor="{esc(_name(rng))}" class="block {d()}"><header class="{d()}"><div class="{d()}"><a href="?page=with:block-{bid}#block-{bid}" data-link-name="timestamp" class="{d()}"><time datetime="{_iso(rng)}" class="{d()}">{stamp}</time></a></div></header>'
                + (f'<h2 class="{d()}">{esc(head)}</h2>' if head else "")
                + "".join(_render(b, rng, {"p": d, "blockquote": d}) for b in bl)
                + f'<footer class="{d()}"><div class="{d()}"><span class="{d()}">Updated at {stamp}</span></div><gu-island name="ShareButton" priority="feature" deferuntil="visible"><button class="{d()}">Share</button></gu-island></footer></article>'
                + (epic() if k == 2 else "")
            )
        if live:
            main_html = (f'<div data-gu-name="key-events" class="{d()}"><details open class="{d()}"><summary class="{d()}"><h2 class="{d()}">Key events</h2></summary><ul class="{d()}">{keyev}</ul></details></div>'
                         f'<div id="liveblog-body" class="js-liveblog-body {d()}" data-module="liveblog">{live_html}</div><div class="{d()}"><a class="{d()}" href="?page=older">Older posts</a></div>')
        else:
            main_html = f'<div id="maincontent" class="{d()}"><div class="article-body-commercial-selector article-body-viewer-selector {d()}" data-gu-name="body">{"".join(paras)}</div>{epic() if rng.random() < 0.7 else ""}</div>'
        nav = "".join(f'<li class="{d()}"><a class="{d()}" data-link-name="nav3 : primary : {esc(s)}" href="/{_slug(s)}">{esc(s)}</a></li>' for s in sections)
        most = f'<aside data-gu-name="most-viewed" class="{d()}"><gu-island name="MostViewedRightWrapper" priority="feature" deferuntil="visible"><div class="{d()}"><h2 class="{d()}">Most viewed</h2><ol data-link-name="Most viewed" class="{d()}">{popular}</ol></div></gu-island></aside>'
        body = (
            f'<a href="#maincontent" class="{d()}">Skip to main content</a><a href="#navigation" class="{d()}">Skip to navigation</a>'
            f'<div id="bannerandheader"><div class="{d()}"><gu-island name="SupportTheG" priority="feature" deferuntil="idle"><div class="{d()}"><a class="{d()}" href="/contribute">Support us</a><p class="{d()}">Available for everyone, funded by readers</p></div></gu-island>'
            f'<a href="/" class="{d()}"><span class="{d()}">{esc(site)} - Back to home</span></a></div><nav id="navigation" aria-label="Guardian sections" data-component="nav2" class="{d()}"><ul class="{d()}" role="menubar">{nav}</ul></nav></div>'
            f'<main data-layout="{"LiveLayout" if live else "StandardLayout"}"><article class="{d()}"><div class="{d()}"><div data-gu-name="title" class="{d()}"><a href="/{_slug(sections[0])}" class="{d()}"><span>{esc(sections[0])}</span></a></div>'
            f'<div data-gu-name="headline" class="{d()}"><h1 class="{d()}">{esc(title)}</h1></div><div data-gu-name="standfirst" class="{d()}"><div class="{d()}"><p>{esc(dek)}</p></div></div>'
            f'<div data-gu-name="media" class="{d()}"><figure class="{d()}"><picture class="{d()}"><img alt="" src="/img/{_h(rng)}.jpg"></picture><figcaption class="{d()}"><span class="{d()}">{esc(_trim_words(rng.choice(_prose()), 10))}</span> Photograph: {esc(_name(rng))}/Reuters</figcaption></figure></div>'
            f'<div data-gu-name="meta" class="{d()}"><address aria-label="Contributor info" class="{d()}"><a rel="author" class="{d()}" href="/profile/{_slug(author)}">{esc(author)}</a></address><details class="{d()}"><summary class="{d()}"><span class="{d()}">{_date(rng)}</span></summary></details>'
            f'<gu-island name="ShareButton" priority="feature" deferuntil="visible"><button class="{d()}">Share</button></gu-island></div>'
            f'<div data-gu-name="body" class="{d()}">{main_html}</div><div class="{d()}"><div class="{d()}"><span class="{d()}">Explore more on these topics</span><ul class="{d()}">'
            + "".join(f'<li class="{d()}"><a class="{d()}" href="/{_slug(s)}">{esc(s)}</a></li>' for s in sections[:5])
            + f'</ul></div><gu-island name="ShareButton" priority="feature" deferuntil="visible"><button class="{d()}">Share</button></gu-island><a class="{d()}" href="/reuse">Reuse this content</a></div></div>'
            + (most if rng.random() < 0.8 else "")
            + f'</article><section data-component="more-on-this-story" class="{d()}"><h2 class="{d()}">More on this story</h2><ul class="{d()}">' + "".join(f'<li><a href="/{_slug(t)}">{esc(t)}</a></li>' for t in _teasers(rng, 4)) + "</ul></section>"
            + f'<section data-component="comments" class="{d()}"><gu-island name="DiscussionLayout" priority="feature" deferuntil="visible"><h2 class="{d()}">comments ({rng.randint(0, 2000)})</h2><p class="{d()}">Sign in or create your {esc(site)} account to join the discussion.</p></gu-island></section></main>'
            + f'<footer data-link-name="footer" data-component="footer" class="{d()}"><ul class="{d()}">' + "".join(f"<li><a>{x}</a></li>" for x in ["About us", "Contact us", "Complaints &amp; corrections", "SecureDrop", "Work for us", "Privacy policy", "Cookie policy", "Terms &amp; conditions", "Help"]) + f"</ul><small class=\"{d()}\">© {rng.randint(2019, 2025)} {esc(site)} News &amp; Media Limited or its affiliated companies. All rights reserved.</small></footer>{tail_scripts}"
        )
        return _document(head_scripts, body, charset, f"{title} | {site}"), _truth(truth_blocks), url

    if variant == "bbc":
        s = lambda role: f"ssrcss-{_h(rng, 7)}-{role} e{_h(rng, 7)}0"  # noqa: E731
        def text_block(html: str) -> str:
            return f'<div data-component="text-block" class="{s("RichTextComponentWrapper")}"><div class="{s("RichTextContainer")}">{html}</div></div>'
        def media() -> str:
            return (f'<div data-component="video-block" class="{s("BlockComponentWrapper")}"><figure class="{s("Figure")}"><div data-testid="media-player" class="{s("MediaPlayerWrapper")}"><div class="{s("PlaceholderWrapper")}"><img alt="" src="/ic/{_h(rng)}.jpg"><button class="{s("PlayButton")}" aria-label="Play video, {esc(_trim_words(rng.choice(RELATED_TEASERS), 5))}, Duration {rng.randint(0, 3)} minutes {rng.randint(1, 59)} seconds"><span class="{s("Duration")}" aria-hidden="true">{rng.randint(0, 3)}:{rng.randint(10, 59)}</span></button></div></div>'
                    f'<figcaption class="{s("Caption")}"><span class="visually-hidden {s("VisuallyHidden")}">Media caption, </span><p>{esc(_trim_words(rng.choice(_prose()), 9))}</p></figcaption></figure></div>')
        parts = []
        for k, b in enumerate(blocks):
            if b[0] in ("h2", "h3"):
                parts.append(f'<div data-component="subheadline-block" class="{s("StyledHeading")}"><h2 id="{_slug(str(b[1]))}" tabindex="-1" class="{s("StyledHeading")}">{esc(str(b[1]))}</h2></div>')
            else:
                parts.append(text_block(_render(b, rng, {"p": lambda: s("Paragraph"), "ul": lambda: s("BulletList"), "li": lambda: s("ListItem"), "blockquote": lambda: s("Quote"), "table": lambda: s("Table")})))
            if b[0] == "p" and k < len(blocks) - 1:
                x = rng.random()
                parts.append(media() if x < 0.12 else text_block(_readmore(rng, f' class="{s("Paragraph")}"')) if x < 0.2 else "")
        if i in (0, 1):
            parts.insert(1, f'<div data-component="links-block" class="{s("LinksBlock")}"><h2 class="{s("Heading")}">Most read</h2><ol class="{s("OrderedList")}">{popular}</ol></div>')
        live_html = ""
        for stamp, head, bl in updates:
            live_html += (
                f'<li class="{s("ListItem")}"><div data-testid="content-post" id="asset:{_h(rng, 8)}-{_h(rng, 4)}" class="{s("ContentPost")}"><article class="{s("Article")}"><header class="{s("HeaderContainer")}">'
                f'<span class="visually-hidden {s("VisuallyHidden")}">posted at </span><span class="{s("TimestampContainer")}"><time datetime="{_iso(rng)}" class="{s("Timestamp")}"><span class="{s("TimestampText")}">{stamp}</span></time></span>'
                + (f'<h3 class="{s("StyledHeading")}"><span role="text">{esc(head)}</span></h3>' if head else "")
                + f'</header><div class="{s("RichTextContainer")}">' + "".join(_render(b, rng, {"p": lambda: s("Paragraph"), "blockquote": lambda: s("Quote")}) for b in bl)
                + f'</div><footer class="{s("Footer")}"><button class="{s("ShareButton")}" aria-label="Share this post">Share</button></footer></article></div></li>'
            )
        main_html = (f'<div data-testid="live-summary" class="{s("Summary")}"><h2 class="{s("Heading")}">Summary</h2><ul>' + "".join(f"<li>{esc(t)}</li>" for t in _teasers(rng, 3)) + f'</ul></div><ol class="{s("StreamList")}" data-testid="live-stream">{live_html}</ol>'
                     f'<nav aria-label="Page" data-testid="pagination" class="{s("Pagination")}"><a>1</a> <a>2</a> <a>3</a> <a>Next Page</a></nav>') if live else "".join(parts)
        nav = "".join(f'<li class="{s("StyledMenuItem")}"><a href="/news/{_slug(x)}" class="{s("StyledLink")}">{esc(x)}</a></li>' for x in sections)
        body = (
            f'<div id="__next"><div class="{s("Wrapper")}"><a href="#main-content" class="{s("SkipLink")}">Skip to content</a>'
            f'<header data-testid="header-container" class="{s("HeaderWrapper")}"><nav aria-label="{esc(site)}" class="{s("Nav")}"><a href="/" class="{s("BrandLink")}">{esc(site)}</a><ul role="list" class="{s("StyledList")}">{nav}</ul></nav>'
            f'<div class="{s("AccountWrapper")}"><a class="{s("SignIn")}" href="/signin">Sign in</a><button class="{s("SearchButton")}">Search {esc(site)}</button></div></header>'
            f'<div id="main-wrapper" data-testid="main-wrapper" class="{s("MainWrapper")}"><div class="{s("StyledWrapper")}"><main id="main-content" data-testid="main-content" class="{s("Main")}"><article class="{s("Article")}">'
            f'<header data-component="headline-block" class="{s("HeadingWrapper")}"><h1 id="main-heading" type="headline" tabindex="-1" class="{s("StyledHeading")}"><span role="text">{esc(title)}</span></h1></header>'
            f'<div data-component="byline-block" class="{s("BylineBlock")}"><div data-testid="byline-new" class="{s("BylineWrapper")}"><time type="LastUpdated" datetime="{_iso(rng)}" class="{s("DateTime")}">{rng.randint(1, 23)} hours ago</time><div class="{s("Contributors")}"><span>{esc(author)}</span><div>{esc(rng.choice(["Technology reporter", "Political correspondent", "BBC News"]))}</div></div></div></div>'
            f'<div data-component="image-block" class="{s("ComponentWrapper")}"><figure class="{s("Figure")}"><div class="{s("ImageWrapper")}"><img alt="" src="/ic/{_h(rng)}.jpg"><span role="text" class="{s("Copyright")}"><span class="visually-hidden">Image source, </span>Getty Images</span></div><figcaption class="{s("Caption")}"><span class="visually-hidden">Image caption, </span><p>{esc(_trim_words(rng.choice(_prose()), 9))}</p></figcaption></figure></div>'
            f'{main_html}<div data-component="tag-list" class="{s("TagList")}"><h2 class="{s("Heading")}">Related topics</h2><ul>' + "".join(f'<li><a href="/topics/{_slug(x)}">{esc(x)}</a></li>' for x in sections[:4]) + "</ul></div>"
            f'<div data-component="links-block" class="{s("LinksBlock")}"><h2>More on this story</h2><ul>' + "".join(f'<li><a href="/news/{rng.randint(10**7, 10**8)}">{esc(t)}</a></li>' for t in _teasers(rng, 3)) + "</ul></div></article></main>"
            f'<section data-testid="top-stories" aria-labelledby="top-stories-heading" class="{s("Rail")}"><h2 id="top-stories-heading">Top stories</h2><ul>' + "".join(f'<li><a>{esc(t)}</a><span>{rng.randint(1, 59)} minutes ago</span></li>' for t in _teasers(rng, 3)) + "</ul></section>"
            f'<section data-testid="features" class="{s("Rail")}"><h2>Features</h2><ul>' + "".join(f"<li><a>{esc(t)}</a></li>" for t in _teasers(rng, 5)) + "</ul></section>"
            f'<section data-testid="most-read" class="{s("Rail")}"><h2>Most read</h2><ol>{popular}</ol></section></div></div>'
            f'<footer data-testid="footer" class="{s("FooterWrapper")}"><ul>' + "".join(f"<li><a>{x}</a></li>" for x in ["Terms of Use", "About the site", "Privacy Policy", "Cookies", "Accessibility Help", "Parental Guidance", "Contact us", "Get Personalised Newsletters", "Why you can trust us", "Advertise with us"])
            + f'</ul><p>Copyright {rng.randint(2020, 2025)} {esc(site)}. All rights reserved. {esc(site)} is not responsible for the content of external sites. <a>Read about our approach to external linking.</a></p></footer></div></div>{tail_scripts}'
        )
        return _document(head_scripts, body, charset, f"{title} - {site}", html_attrs=' class="no-js"'), _truth(truth_blocks), url

    # cnn
    parts = []
    for k, b in enumerate(blocks):
        if b[0] == "p":
            parts.append(f'<p class="paragraph inline-placeholder vossi-paragraph" data-component-name="paragraph" id="{_h(rng, 25)}" data-editable="text" data-article-gutter="true">{_inline(str(b[1]), rng)}</p>')
        elif b[0] in ("h2", "h3"):
            parts.append(f'<h2 class="subheader" data-editable="text" data-component-name="subheader" id="{_h(rng, 25)}">{esc(str(b[1]))}</h2>')
        else:
            parts.append(f'<div class="{ {"ul": "list", "quote": "pull-quote", "table": "table"}.get(b[0], "list") }" data-component-name="{b[0]}">{_render(b, rng)}</div>')
        if b[0] == "p" and k < len(blocks) - 1:
            x = rng.random()
            if x < 0.12 or (i == 1 and k == 0):
                parts.append('<div class="ad-slot-dynamic ad-slot-dynamic--in-article" data-ad-slot-mode="article" data-unselectable="true"><div class="ad-slot-header"><span class="ad-slot-header__text">Advertisement</span></div><div class="ad-slot__ad-wrapper"><div class="ad-feedback-link-container"><button class="ad-feedback-link">Ad Feedback</button></div></div></div>')
            elif x < 0.2:
                parts.append(f'<div class="related-content related-content--article" data-component-name="related-content"><div class="related-content__container"><span class="related-content__label">Related article</span><a href="/{_slug(rng.choice(RELATED_TEASERS))}" class="related-content__link"><span class="related-content__headline-text">{esc(rng.choice(RELATED_TEASERS))}</span></a></div></div>')
            elif x < 0.27:
                parts.append(f'<div data-component-name="video-inline-placement" class="video-resource"><div class="video-resource__wrapper"><div class="video-resource__image"><img alt=""></div><div class="video-resource__details"><div class="video-resource__headline">Video <span class="video-resource__duration">{rng.randint(1, 5)}:{rng.randint(10, 59)}</span></div><div class="video-resource__headline-text">{esc(rng.choice(RELATED_TEASERS))}</div></div><div class="video-resource__action">Now playing</div></div></div>')
    live_html = ""
    for stamp, head, bl in updates:
        live_html += (
            f'<article class="live-story-post" data-post-id="{_h(rng, 10)}"><header class="live-story-post__header"><span class="live-story-post__timestamp"><time class="timestamp" datetime="{_iso(rng)}">{stamp}</time></span>'
            + (f'<h2 class="live-story-post__headline inline-placeholder" data-editable="headline">{esc(head)}</h2>' if head else "")
            + '</header><div class="live-story-post__content">' + "".join(_render(b, rng, {"p": "paragraph inline-placeholder vossi-paragraph"}) for b in bl)
            + f'</div><footer class="live-story-post__footer"><div class="byline byline--avatar"><span class="byline__name">From {esc(_name(rng))}</span></div><button class="live-story-post__link-copy">Link Copied!</button></footer></article>'
        )
    content = f'<div class="live-story__items-container">{live_html}</div>' if live else "".join(parts)
    nav = "".join(f'<a class="header__nav-item-link" data-analytics-header="main-menu_{_slug(x)}" href="/{_slug(x)}">{esc(x)}</a>' for x in sections)
    body = (
        f'<div class="header__wrapper-outer"><header class="header" data-editable="header" data-analytics-aggregate-events="true"><div class="header__container"><nav class="header__nav-container" aria-label="Main navigation"><div class="header__nav">{nav}</div>'
        '<div class="header__right"><button class="header__menu-icon" aria-label="Open Menu Icon" data-analytics-header="main-menu">Menu</button><a class="header__watch">Watch</a><a class="header__listen">Listen</a><a class="user-account-nav__link">Log In</a></div></nav></div></header></div>'
        f'<section class="layout__wrapper layout-with-rail__wrapper"><section class="layout__top layout-with-rail__top"><div class="headline headline--has-lowertext" data-editable="headline"><div class="headline__wrapper"><h1 data-editable="headlineText" class="headline__text inline-placeholder" id="maincontent">{esc(title)}</h1></div>'
        f'<div class="headline__footer"><div class="headline__sub-container"><div class="byline vossi-byline" data-editable="byline"><div class="byline__names"><span class="byline__name">{esc(author)}</span>, {esc(site)}</div></div><div class="timestamp vossi-timestamp" data-editable="timestamp">{"Updated" if rng.random() < 0.5 else "Published"} {rng.randint(1, 12)}:{rng.randint(10, 59)} PM EDT, {_date(rng)}</div></div>'
        '<div class="social-share" data-component-name="social-share"><button class="social-share__button">Facebook</button><button class="social-share__button">Tweet</button><button class="social-share__button">Email</button><button class="social-share__button">Link Copied!</button><button class="social-share__button" data-action="follow">Follow</button></div></div></div></section>'
        f'<section class="layout__wrapper layout-with-rail__wrapper"><section class="layout__main-wrapper layout-with-rail__main-wrapper"><section class="layout__main layout-with-rail__main"><article class="article" data-uri="/_components/article/instances/{_h(rng, 25)}@published" role="main">'
        f'<div class="image image__hide-placeholder" data-component-name="image"><div class="image__container"><picture><img alt="" src="/media/{_h(rng)}.jpg"></picture></div><div class="image__metadata"><div class="image__caption attribution"><span data-editable="metaCaption" class="inline-placeholder">{esc(_trim_words(rng.choice(_prose()), 10))}</span></div><figcaption class="image__credit">{esc(_name(rng))}/AP</figcaption></div></div>'
        f'<div class="article__content-container"><div class="article__content" data-editable="content" itemprop="articleBody" data-reorderable="content">'
        + ('<p class="editor-note" data-component-name="editor-note"><em>Sign up for our Wonder Theory science newsletter. Explore the universe with news on fascinating discoveries, scientific advancements and more.</em></p>' if rng.random() < 0.4 else "")
        + f'{content}</div><div class="source inline-placeholder"><cite class="source__cite"><span class="source__location">{esc(site)}</span></cite></div>'
        '<div class="footnote"><p class="footnote__text">Copyright 2025. All rights reserved. This material may not be published, broadcast, rewritten, or redistributed.</p></div></div></article></section></section>'
        '<section class="layout__right layout-with-rail__right"><div class="zone zone--t-light" data-zone-label="Paid Partner Content"><h2 class="zone__title-text">Paid Partner Content</h2>' + "".join(f'<div class="card"><span class="container__headline-text">{esc(t)}</span></div>' for t in _teasers(rng, 3))
        + f'</div><div class="zone" data-zone-label="Most read"><h2 class="zone__title-text">Most read</h2><ol>{popular}</ol></div></section></section></section>'
        '<footer class="footer" data-editable="footer"><div class="footer__inner"><nav class="footer__links">' + "".join(f'<a class="footer__links-item">{x}</a>' for x in ["Terms of Use", "Privacy Policy", "Ad Choices", "Accessibility &amp; CC", "About", "Newsletters", "Transcripts"])
        + f'</nav><p class="footer__copyright-text">© {rng.randint(2020, 2025)} {esc(site)}. All Rights Reserved.</p></div></footer>{tail_scripts}'
    )
    return _document(head_scripts, body, charset, f"{title} | {site}", body_attrs=' class="layout layout-with-rail article" data-page-type="article"'), _truth(truth_blocks), url


# ---------------------------------------------------------------------------------------- blog-platforms

BLOG_NAMES = ["Notes from the Shed", "Byte Sized", "Slow Code Journal", "The Refactoring Diaries", "Lambda Lounge", "Tidy Bits", "Field Notes", "Half-Open Interval"]


def _comments_wp(rng: random.Random, n: int, title: str) -> str:
    items = "".join(
        f'<li id="comment-{rng.randint(100, 9999)}" class="comment {"even" if k % 2 else "odd"} thread-{"even" if k % 2 else "odd"} depth-1"><article id="div-comment-{k}" class="comment-body">'
        f'<footer class="comment-meta"><div class="comment-author vcard"><img alt="" src="/avatar/{_h(rng)}?s=56&amp;d=mm&amp;r=g" class="avatar avatar-56 photo" height="56" width="56" loading="lazy" decoding="async"><b class="fn">{rng.choice(USERS)}</b> <span class="says">says:</span></div>'
        f'<div class="comment-metadata"><a href="#comment-{k}"><time datetime="{_iso(rng)}">{_date(rng)} at {rng.randint(1, 12)}:{rng.randint(10, 59)} pm</time></a></div></footer>'
        f'<div class="comment-content"><p>{esc(" ".join(rng.sample(COMMENT_SENTENCES, rng.randint(1, 3))))}</p></div><div class="reply"><a rel="nofollow" class="comment-reply-link" href="?replytocom={k}#respond" data-commentid="{k}" data-postid="1" aria-label="Reply to comment">Reply</a></div></article></li>'
        for k in range(n)
    )
    head = f'<h2 class="comments-title">{n} thoughts on “<span>{esc(title)}</span>”</h2><ol class="comment-list">{items}</ol>' if n else ""
    return (
        f'<div id="comments" class="comments-area">{head}<div id="respond" class="comment-respond"><h3 id="reply-title" class="comment-reply-title">Leave a Reply <small><a rel="nofollow" id="cancel-comment-reply-link" href="#respond" style="display:none;">Cancel reply</a></small></h3>'
        '<form action="/wp-comments-post.php" method="post" id="commentform" class="comment-form" novalidate><p class="comment-notes"><span id="email-notes">Your email address will not be published.</span> <span class="required-field-message">Required fields are marked <span class="required">*</span></span></p>'
        '<p class="comment-form-comment"><label for="comment">Comment <span class="required">*</span></label> <textarea id="comment" name="comment" cols="45" rows="8" maxlength="65525" required></textarea></p><p class="comment-form-author"><label for="author">Name <span class="required">*</span></label> <input id="author" name="author" type="text" size="30" required></p>'
        '<p class="comment-form-email"><label for="email">Email <span class="required">*</span></label> <input id="email" name="email" type="email" size="30" required></p><p class="comment-form-cookies-consent"><input id="wp-comment-cookies-consent" name="wp-comment-cookies-consent" type="checkbox" value="yes"> <label for="wp-comment-cookies-consent">Save my name, email, and website in this browser for the next time I comment.</label></p>'
        '<p class="form-submit"><input name="submit" type="submit" id="submit" class="submit" value="Post Comment"></p></form></div></div>'
    )


def _blog(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("ghost", "medium", "substack", "blogger", "wordpress")[i % 5] if i >= 3 else rng.choice(["ghost", "medium", "substack", "blogger", "wordpress"])
    blog = rng.choice(BLOG_NAMES)
    title = _title(rng)
    subtitle = _trim_words(rng.choice(_prose()), rng.randint(10, 20))
    author = _name(rng)
    blocks = _body_blocks(rng, i, charset, 60)
    notes = [_trim_words(rng.choice(_prose()), rng.randint(8, 30)) for _ in range(rng.randint(1, 4))] if variant in ("ghost", "substack", "wordpress") and rng.random() < 0.5 and i != 0 else []
    para_idx = [k for k, b in enumerate(blocks) if b[0] == "p"]
    marked = sorted(rng.sample(para_idx, min(len(notes), len(para_idx))))
    notes = notes[: len(marked)]
    truth = _truth(blocks) + "".join(f"\n\n{n}" for n in notes)
    slug = _slug(title)
    n_comments = rng.randint(25, 40) if i == 0 else rng.choice([0, 0, 2, 5, 12])
    tags = rng.sample(["python", "programming", "essays", "engineering", "notes", "open source", "careers", "tools"], 3)

    def body_html(cls: dict, marker: Callable[[int], str], between: Callable[[int], str]) -> str:
        out = []
        for k, b in enumerate(blocks):
            h = _render(b, rng, cls)
            if k in marked:
                n = marked.index(k) + 1
                h = h[: h.rindex("</p>")] + marker(n) + "</p>"
            out.append(h)
            if b[0] == "p" and k < len(blocks) - 1:
                out.append(between(k))
        return "".join(out)

    if variant == "ghost":
        def between(k: int) -> str:
            x = rng.random()
            if (i == 1 and k == 0) or x < 0.05:
                return (f'<div class="kg-card kg-signup-card kg-width-regular" data-lexical-signup-form style="background-color: #F0F0F0; display: none;"><div class="kg-signup-card-content"><div class="kg-signup-card-text"><h2 class="kg-signup-card-heading">Sign up for {esc(blog)}</h2>'
                        f'<p class="kg-signup-card-subheading">{esc(rng.choice(["Thoughts on software, delivered weekly.", "New posts straight to your inbox. No spam."]))}</p><form class="kg-signup-card-form" data-members-form="signup"><div class="kg-signup-card-fields"><input class="kg-signup-card-input" id="email" data-members-email type="email" required placeholder="Your email"><button class="kg-signup-card-button kg-style-accent" type="submit"><span class="kg-signup-card-button-default">Subscribe</span><span class="kg-signup-card-button-loading">Loading...</span></button></div>'
                        '<div class="kg-signup-card-success">Email sent! Check your inbox to complete your signup.</div></form><p class="kg-signup-card-disclaimer">No spam. Unsubscribe anytime.</p></div></div></div>')
            if x < 0.1:
                t = rng.choice(RELATED_TEASERS)
                return f'<figure class="kg-card kg-bookmark-card"><a class="kg-bookmark-container" href="https://example.org/{_slug(t)}"><div class="kg-bookmark-content"><div class="kg-bookmark-title">{esc(t)}</div><div class="kg-bookmark-description">{esc(_trim_words(rng.choice(_prose()), 14))}</div><div class="kg-bookmark-metadata"><img class="kg-bookmark-icon" src="/favicon.ico" alt=""><span class="kg-bookmark-author">{esc(blog)}</span></div></div></a></figure>'
            return ""
        callout = ""
        content = body_html({}, lambda n: f'<sup class="footnote-ref"><a href="#fn{n}" id="fnref{n}">[{n}]</a></sup>', between)
        if rng.random() < 0.4 and i != 0:
            ctext = _trim_words(rng.choice(_prose()), 20)
            callout = f'<div class="kg-card kg-callout-card kg-callout-card-blue"><div class="kg-callout-emoji">💡</div><div class="kg-callout-text">{esc(ctext)}</div></div>'
            truth = truth.replace(_truth(blocks), _truth(blocks) + f"\n\n{ctext}", 1) if truth.startswith(_truth(blocks)) else truth
        fn = ('<div class="footnotes"><hr class="footnotes-sep"><ol class="footnotes-list">' + "".join(f'<li id="fn{k + 1}" class="footnote-item"><p>{esc(n)} <a href="#fnref{k + 1}" class="footnote-backref">↩︎</a></p></li>' for k, n in enumerate(notes)) + "</ol></div>") if notes else ""
        feed = "".join(f'<article class="post-card post"><a class="post-card-image-link" href="/{_slug(t)}/"><img class="post-card-image" src="/content/images/{_h(rng)}.jpg" alt="{esc(t)}" loading="lazy"></a><div class="post-card-content"><a class="post-card-content-link" href="/{_slug(t)}/"><header class="post-card-header"><h2 class="post-card-title">{esc(t)}</h2></header><div class="post-card-excerpt">{esc(_trim_words(rng.choice(_prose()), 18))}</div></a><footer class="post-card-meta"><time class="post-card-meta-date">{_date(rng)}</time><span class="post-card-meta-length">{rng.randint(2, 12)} min read</span></footer></div></article>' for t in _teasers(rng, 3))
        body = (
            f'<div class="viewport"><header id="gh-head" class="gh-head outer"><div class="gh-head-inner inner"><div class="gh-head-brand"><a class="gh-head-logo" href="/">{esc(blog)}</a><button class="gh-search gh-icon-btn" aria-label="Search this site" data-ghost-search></button><button class="gh-burger" aria-label="Toggle menu"></button></div>'
            '<nav class="gh-head-menu"><ul class="nav"><li class="nav-home"><a href="/">Home</a></li><li class="nav-about"><a href="/about/">About</a></li><li class="nav-archive"><a href="/archive/">Archive</a></li></ul></nav><div class="gh-head-actions"><a class="gh-head-link" href="#/portal/signin" data-portal="signin">Sign in</a><a class="gh-head-button" href="#/portal/signup" data-portal="signup">Subscribe</a></div></div></header>'
            f'<div class="site-content"><main id="site-main" class="site-main"><article class="article post tag-{_slug(tags[0])} {"image-small" if rng.random() < 0.5 else ""}"><header class="article-header gh-canvas"><div class="article-tag post-card-tags"><span class="post-card-primary-tag"><a href="/tag/{_slug(tags[0])}/">{esc(tags[0])}</a></span></div>'
            f'<h1 class="article-title">{esc(title)}</h1><p class="article-excerpt">{esc(subtitle)}</p><div class="article-byline"><section class="article-byline-content"><ul class="author-list instapaper_ignore"><li class="author-list-item"><a href="/author/{_slug(author)}/" class="author-avatar"><img class="author-profile-image" src="/content/images/{_h(rng)}.png" alt="{esc(author)}"></a></li></ul>'
            f'<div class="article-byline-meta"><h4 class="author-name"><a href="/author/{_slug(author)}/">{esc(author)}</a></h4><div class="byline-meta-content"><time class="byline-meta-date" datetime="{_iso(rng)[:10]}">{_date(rng)}</time><span class="byline-reading-time"><span class="bull">&bull;</span> {rng.randint(2, 14)} min read</span></div></div></section></div>'
            f'<figure class="article-image"><img src="/content/images/{_h(rng)}.jpg" alt="{esc(title)}"><figcaption><span style="white-space: pre-wrap;">Photo by {esc(_name(rng))} / Unsplash</span></figcaption></figure></header>'
            f'<section class="gh-content gh-canvas">{content}{callout}{fn}</section>'
            + ('<aside class="gh-post-upgrade-cta"><div class="gh-post-upgrade-cta-content" style="background-color: #15171a"><h2>This post is for paying subscribers only</h2><a class="gh-btn" data-portal="signup" href="#/portal/signup">Subscribe now</a><p><small>Already have an account? <a data-portal="signin" href="#/portal/signin">Sign in</a></small></p></div></aside>' if rng.random() < 0.2 else "")
            + f'<section class="article-comments gh-canvas"><script defer src="https://cdn.jsdelivr.net/ghost/comments-ui@~0.17/umd/comments-ui.min.js" data-ghost-comments="/" data-api="/ghost/api/content/" data-admin="/ghost/" data-key="{_h(rng, 26)}" data-title="" data-count="true" data-post-id="{_h(rng, 24)}" data-color-scheme="auto" data-avatar-saturation="60" data-accent-color="#FF1A75" crossorigin="anonymous"></script></section></article></main>'
            f'<aside class="read-more-wrap outer"><div class="read-more inner"><div class="post-card-wrap"><h3 class="read-more-title">Read more</h3>{feed}</div></div></aside></div>'
            f'<footer class="site-footer outer"><div class="inner"><section class="copyright"><a href="/">{esc(blog)}</a> &copy; {rng.randint(2019, 2025)}</section><nav class="site-footer-nav"><ul class="nav"><li><a href="/privacy/">Privacy</a></li><li><a href="#/portal/">Sign up</a></li></ul></nav><div class="gh-powered-by"><a href="https://ghost.org/" target="_blank" rel="noopener">Powered by Ghost</a></div></div></footer></div>'
            + ('<div class="gh-portal-triggerbtn-container"><div class="gh-portal-triggerbtn-wrapper"><span>Subscribe</span></div></div>' if rng.random() < 0.5 else "")
        )
        head = f'<link rel="stylesheet" type="text/css" href="/assets/built/screen.css?v={_h(rng, 10)}"><meta name="generator" content="Ghost 5.{rng.randint(40, 99)}">' + _json_ld({"@context": "https://schema.org", "@type": "Article", "headline": title, "author": {"@type": "Person", "name": author}})
        return _document(head, body, charset, f"{title}", body_attrs=f' class="post-template tag-{_slug(tags[0])} is-head-left-logo has-cover"'), truth, f"https://{_slug(blog)}.ghost.io/{slug}/"

    if variant == "medium":
        m = lambda: " ".join(rng.choice(string.ascii_lowercase) + rng.choice(string.ascii_lowercase + ""*1) for _ in range(rng.randint(3, 8)))  # noqa: E731
        pcls = lambda: f"pw-post-body-paragraph {m()}"  # noqa: E731
        out = []
        for k, b in enumerate(blocks):
            pid = _h(rng, 4)
            if b[0] == "p":
                out.append(f'<p id="{pid}" class="{pcls()}" data-selectable-paragraph="">{_inline(str(b[1]), rng)}</p>')
            elif b[0] in ("h2", "h3"):
                out.append(f'<h2 id="{pid}" class="{m()}" data-selectable-paragraph="">{esc(str(b[1]))}</h2>')
            elif b[0] == "ul":
                out.append('<ul class="">' + "".join(f'<li id="{_h(rng, 4)}" class="{m()}" data-selectable-paragraph="">{esc(it)}</li>' for it in b[1]) + "</ul>")
            elif b[0] == "quote":
                out.append(f'<blockquote class="{m()}"><p id="{pid}" class="{m()}" data-selectable-paragraph="">{esc(str(b[1]))}</p></blockquote>')
            else:
                out.append(f'<div class="{m()}">{_render(b, rng)}</div>')
            if k in (len(blocks) // 2,) and len(blocks) > 6:
                out.append(f'</div></div></section><section><div class="{m()}"><div class="{m()}"><hr class="{m()}">')
        claps = f'<div class="pw-multi-vote-icon {m()}"><div class="{m()}"><button data-testid="headerClapButton" class="{m()}" aria-label="clap"><svg width="24" height="24" aria-label="clap"><path fill-rule="evenodd" d="M11.37.828"></path></svg></button></div></div><div class="pw-multi-vote-count {m()}"><p class="{m()}"><button class="{m()}">{rng.randint(1, 40)}.{rng.randint(1, 9)}K</button></p></div>'
        actions = f'<div class="{m()}"><div class="{m()}">{claps}<div class="{m()}"><button class="{m()}" aria-label="responses"><span class="pw-responses-count {m()}">{rng.randint(1, 300)}</span></button></div></div><div class="{m()}"><button aria-label="Add to list bookmark button" data-testid="headerBookmarkButton" class="{m()}"></button><button data-testid="audioPlayButton" class="{m()}"><p class="{m()}">Listen</p></button><button data-testid="headerSocialShareButton" class="{m()}"><p class="{m()}">Share</p></button></div></div>'
        more = "".join(f'<div class="{m()}"><a href="/@x/{_slug(t)}-{_h(rng, 12)}"><h2 class="{m()}">{esc(t)}</h2><h3 class="{m()}">{esc(_trim_words(rng.choice(_prose()), 12))}</h3></a><span class="{m()}">{rng.randint(1, 9)}.{rng.randint(1, 9)}K</span></div>' for t in _teasers(rng, 4))
        body = (
            f'<div id="root"><div class="a b c"><div class="d e f g h i j k"></div><script>document.domain = document.domain;</script><div class="l c"><div class="l m n o c"><div class="p q r s t u v w x y z ab ac ae af"><div class="ag ah ai aj ak al am an ao ap"><a data-testid="headerMediumLogo" href="/" aria-label="Homepage">Medium</a><div class="ar h"><input role="combobox" aria-label="search" placeholder="Search" data-testid="headerSearchInput"></div></div>'
            f'<div class="h k w fg fh"><a href="/new-story" class="{m()}" data-testid="headerWriteButton"><div class="{m()}">Write</div></a><a class="{m()}" data-testid="headerSignUpButton">Sign up</a><a class="{m()}" data-testid="headerSignInButton">Sign in</a></div></div></div>'
            f'<div class="l"><article><div class="l"><div class="l"><span class="l"></span><section><div><div class="fs ft fu fv fw"></div><div class="gn go gp gq gr"><div class="ab cb"><div class="ci bh ev ew ex ey">'
            f'<div><h1 id="{_h(rng, 4)}" class="pw-post-title {m()}" data-testid="storyTitle" data-selectable-paragraph="">{esc(title)}</h1></div><div><h2 id="{_h(rng, 4)}" class="pw-subtitle-paragraph {m()}">{esc(subtitle)}</h2></div>'
            f'<div class="speechify-ignore ab cp"><div class="speechify-ignore bh l"><div class="{m()}"><div class="{m()}"><a rel="noopener follow" href="/@{_slug(author)}"><img alt="{esc(author)}" class="l ep by dd de cx" src="/fit/c/88/88/{_h(rng)}.jpeg" width="44" height="44" loading="lazy" data-testid="authorPhoto"></a></div>'
            f'<div class="{m()}"><span class="{m()}"><a class="{m()}" data-testid="authorName" href="/@{_slug(author)}">{esc(author)}</a></span><span><button class="{m()}">Follow</button></span></div><div class="{m()}"><span class="{m()}" data-testid="storyReadTime">{rng.randint(2, 15)} min read</span><span class="{m()}">·</span><span data-testid="storyPublishDate">{_date(rng)}</span></div></div>{actions}</div></div>'
            f'{"".join(out)}</div></div></div></section></div></div></div><div class="{m()}"><div class="{m()}">' + "".join(f'<a href="/tag/{_slug(t)}" class="{m()}"><div class="{m()}">{esc(t.title())}</div></a>' for t in tags) + f'</div>{actions}</div></article></div>'
            f'<div class="{m()}"><div class="{m()}"><h2 class="pw-author-name {m()}"><a href="/@{_slug(author)}"><span class="{m()}">Written by {esc(author)}</span></a></h2><div class="{m()}"><span class="pw-follower-count {m()}"><a>{rng.randint(1, 90)}K Followers</a></span></div>'
            f'<p class="{m()}"><span class="{m()}">{esc(_trim_words(rng.choice(_prose()), 12))}</span></p><button class="{m()}">Follow</button></div></div>'
            f'<div class="{m()}"><h2 class="{m()}">Responses ({rng.randint(1, 80)})</h2><div class="{m()}"><p>What are your thoughts?</p><button>Respond</button></div></div>'
            f'<div class="{m()}"><h2 class="{m()}">More from {esc(author)}</h2>{more}</div><div class="{m()}"><h2 class="{m()}">Recommended from Medium</h2>{more}</div>'
            f'<div class="{m()}"><a href="https://help.medium.com">Help</a><a>Status</a><a>About</a><a>Careers</a><a>Press</a><a>Blog</a><a>Privacy</a><a>Rules</a><a>Terms</a><a>Text to speech</a></div></div></div></div>'
            f'<script>window.__APOLLO_STATE__ = {json.dumps({"Post:" + _h(rng, 12): {"title": title, "previewContent": {"subtitle": subtitle}}}, ensure_ascii=False)}</script><script>window.__BUILD_ID__="main-{_h(rng, 20)}"</script>'
        )
        return _document('<style type="text/css" data-fela-rehydration="573" data-fela-type="STATIC">html{box-sizing:border-box;-webkit-text-size-adjust:100%}*, *:before, *:after{box-sizing:inherit}</style>', body, charset, f"{title} | by {author} | Medium"), truth, f"https://medium.com/@{_slug(author)}/{slug}-{_h(rng, 12)}"

    if variant == "substack":
        def sub_widget() -> str:
            return (f'<div class="subscription-widget-wrap-editor" data-attrs="{esc(json.dumps({"url": "https://" + _slug(blog) + ".substack.com/subscribe?", "text": "Subscribe", "language": "en"}))}" data-component-name="SubscribeWidgetToDOM"><div class="subscription-widget show-subscribe"><div class="preamble"><p class="cta-caption">Thanks for reading {esc(blog)}! Subscribe for free to receive new posts and support my work.</p></div>'
                    '<form class="subscription-widget-subscribe"><input type="email" class="email-input" name="email" placeholder="Type your email…" tabindex="-1"><input type="submit" class="button primary" value="Subscribe"><div class="fake-input-wrapper"><div class="fake-input"></div><div class="fake-button"></div></div></form></div></div>')
        def between(k: int) -> str:
            x = rng.random()
            if (i == 1 and k == 0) or x < 0.07:
                return sub_widget()
            if x < 0.12:
                return f'<p class="button-wrapper" data-attrs="{esc(json.dumps({"url": "https://x.substack.com/p/" + slug + "?utm_source=substack&utm_medium=email&utm_content=share&action=share", "text": "Share"}))}" data-component-name="ButtonCreateButton"><a class="button primary" href="?action=share"><span>Share</span></a></p>'
            return ""
        content = body_html({}, lambda n: f'<a class="footnote-anchor" data-component-name="FootnoteAnchorToDOM" id="footnote-anchor-{n}" href="#footnote-{n}" target="_self">{n}</a>', between)
        fn = "".join(f'<div class="footnote" data-component-name="FootnoteToDOM"><a id="footnote-{k + 1}" href="#footnote-anchor-{k + 1}" class="footnote-number" contenteditable="false" target="_self">{k + 1}</a><div class="footnote-content"><p>{esc(n)}</p></div></div>' for k, n in enumerate(notes))
        likes = f'<div class="post-ufi style-large"><div class="like-button-container post-ufi-button style-large"><button tabindex="0" type="button" aria-label="Like ({rng.randint(1, 900)})" aria-pressed="false" class="pencraft pc-reset"><svg role="img" width="20" height="20" viewBox="0 0 24 24"><g><title></title><path d="M20.84 4.61a5.5"></path></g></svg><div class="label">{rng.randint(1, 900)}</div></button></div><a role="button" href="/p/{slug}/comments" class="post-ufi-button style-large post-ufi-comment-button"><div class="label">{rng.randint(0, 90)}</div></a><button class="post-ufi-button style-large" aria-label="Restack"><div class="label">{rng.randint(0, 40)}</div></button><button class="post-ufi-button style-large has-label" aria-label="Share"><div class="label">Share</div></button></div>'
        dialog = ('<div role="dialog" aria-label="Share this post" aria-modal="true" class="modal share-dialog" style="display:none"><div class="modal-content"><h3 class="modal-title">Share this post</h3><div class="share-preview"><div class="share-preview-title">' + esc(title) + f'</div><div class="share-preview-pub">{esc(blog)}</div></div>'
                  '<div class="share-actions"><button>Copy link</button><button>Facebook</button><button>Email</button><button>Notes</button><button>More</button></div></div></div>')
        body = (
            f'<div id="entry"><div id="main" class="main typography use-theme-bg"><div class="topbar"><div class="navbar-logo-container"><a href="/">{esc(blog)}</a></div><div class="navbar-buttons"><button class="button primary subscribe-btn">Subscribe</button><button class="button sign-in-link">Sign in</button></div></div>'
            f'<div class="container"><div class="single-post-container"><div class="container"><div class="single-post"><div class="post-header"><h1 dir="auto" class="post-title published title-{_h(rng, 6)}">{esc(title)}</h1><h3 dir="auto" class="subtitle">{esc(subtitle)}</h3>'
            f'<div class="post-meta"><div class="profile-hover-card-target"><a href="https://substack.com/@{_slug(author)}" class="pencraft frontend-pencraft-Text-module__decoration-hover-underline">{esc(author)}</a></div><div class="pencraft pc-display-flex">{_date(rng)}</div></div>{likes}</div>'
            f'<div class="available-content"><div dir="auto" class="body markup">{content}{fn}</div></div>'
            + (sub_widget() if rng.random() < 0.7 else "")
            + f'{likes}{dialog}</div></div></div>'
            f'<div class="post-footer"><div class="single-post-section comments-section"><div class="container"><div class="comments-heading"><h4>Discussion about this post</h4><div class="comments-tabs"><button>Comments</button><button>Restacks</button></div></div>'
            + "".join(f'<div class="comment"><div class="comment-meta"><a class="commenter-name">{rng.choice(USERS)}</a><span>{_date(rng)}</span></div><div class="comment-body"><p>{esc(" ".join(rng.sample(COMMENT_SENTENCES, 2)))}</p></div><div class="comment-actions"><button>Like ({rng.randint(0, 30)})</button><button>Reply</button><button>Share</button></div></div>' for _ in range(n_comments))
            + f'</div></div><div class="single-post-section"><h4>Ready for more?</h4>{sub_widget()}</div></div></div>'
            f'<div class="footer-wrap publication-footer"><div class="footer"><div class="copyright">© {rng.randint(2020, 2025)} {esc(author)}</div><div class="footer-links"><a>Privacy</a> ∙ <a>Terms</a> ∙ <a>Collection notice</a></div><div class="footer-substack-cta"><a>Start writing</a><a>Get the app</a></div><p>Substack is the home for great culture</p></div></div></div></div>'
            f'<script>window._preloads = JSON.parse({json.dumps(json.dumps({"post": {"title": title, "subtitle": subtitle, "slug": slug}}, ensure_ascii=False), ensure_ascii=False)})</script>'
        )
        return _document('<link rel="preconnect" href="https://substackcdn.com">', body, charset, f"{title} - {blog}"), truth, f"https://{_slug(blog).replace('-', '')}.substack.com/p/{slug}"

    if variant == "blogger":
        parts = []
        for k, b in enumerate(blocks):
            if b[0] == "p":
                style = rng.choice(["", ' style="text-align: justify;"', ' style="text-align: left;"'])
                parts.append(f"<div{style}>{_inline(str(b[1]), rng)}</div><div><br /></div>")
            elif b[0] in ("h2", "h3"):
                parts.append(f'<h3 style="text-align: left;">{esc(str(b[1]))}</h3>')
            else:
                parts.append(_render(b, rng))
            if i == 1 and k == 0:
                parts.append('<div class="separator" style="clear: both; text-align: center;"><a href="/ads" style="margin-left: 1em; margin-right: 1em;"><img border="0" data-original-height="250" data-original-width="300" src="https://blogger.googleusercontent.com/img/b/R29vZ2xl/ad.png" /></a></div><div style="text-align: center;"><b>Sponsored: get 20% off your first order with code BLOG20</b></div>')
        pid = rng.randint(10**17, 10**18)
        archive = "".join(f'<li class="archivedate collapsed"><a class="toggle" href="javascript:void(0)"><span class="zippy">►&nbsp;</span></a><a class="post-count-link" href="/{y}/">{y}</a> <span class="post-count" dir="ltr">({rng.randint(1, 40)})</span></li>' for y in range(2025, 2015, -1))
        body = (
            f'<div class="content"><div class="content-outer"><header><div class="header-outer"><div class="header-inner"><div class="section" id="header"><div class="widget Header" data-version="1" id="Header1"><div id="header-inner"><div class="titlewrapper"><h1 class="title"><a href="/">{esc(blog)}</a></h1></div><div class="descriptionwrapper"><p class="description"><span>{esc(_trim_words(rng.choice(_prose()), 8))}</span></p></div></div></div></div></div></div></header>'
            '<div class="tabs-outer"><div class="tabs-inner"><div class="tabs section" id="crosscol"><div class="widget PageList" data-version="1" id="PageList1"><h2>Pages</h2><div class="widget-content"><ul><li class="selected"><a href="/">Home</a></li><li><a href="/p/about.html">About me</a></li><li><a href="/p/contact.html">Contact</a></li></ul></div></div></div></div></div>'
            '<div class="main-outer"><div class="main-cap-top cap-top"><div class="cap-left"></div><div class="cap-right"></div></div><div class="fauxcolumns"></div><div class="region-inner main-inner"><div class="columns fauxcolumns"><div class="columns-inner"><div class="column-center-outer"><div class="column-center-inner"><div class="main section" id="main"><div class="widget Blog" data-version="1" id="Blog1"><div class="blog-posts hfeed">'
            f'<div class="date-outer"><h2 class="date-header"><span>{rng.choice(["Monday", "Tuesday", "Friday", "Sunday"])}, {_date(rng)}</span></h2><div class="date-posts"><div class="post-outer"><div class="post hentry uncustomized-post-template" itemprop="blogPost" itemscope="itemscope" itemtype="http://schema.org/BlogPosting">'
            f'<meta content="{pid}" itemprop="postId"><a name="{pid}"></a><h3 class="post-title entry-title" itemprop="name">{esc(title)}</h3><div class="post-header"><div class="post-header-line-1"></div></div>'
            f'<div class="post-body entry-content" id="post-body-{pid}" itemprop="description articleBody">{"".join(parts)}<div style="clear: both;"></div></div>'
            f'<div class="post-footer"><div class="post-footer-line post-footer-line-1"><span class="post-author vcard">Posted by <span class="fn" itemprop="author" itemscope="itemscope" itemtype="http://schema.org/Person"><a class="g-profile" href="https://www.blogger.com/profile/{rng.randint(10**17, 10**18)}" rel="author" title="author profile"><span itemprop="name">{esc(author)}</span></a></span></span>'
            f' <span class="post-timestamp">at <a class="timestamp-link" href="#" rel="bookmark" title="permanent link"><abbr class="published" itemprop="datePublished" title="{_iso(rng)}">{rng.randint(1, 12)}:{rng.randint(10, 59)} PM</abbr></a></span> <span class="post-comment-link"><a class="comment-link" href="#comment-form">{n_comments or "No"} comments:</a></span></div>'
            '<div class="post-footer-line post-footer-line-2"><div class="post-share-buttons goog-inline-block"><a class="goog-inline-block share-button sb-email" href="#" title="Email This"><span class="share-button-link-text">Email This</span></a><a class="goog-inline-block share-button sb-blog" title="BlogThis!"><span class="share-button-link-text">BlogThis!</span></a><a class="goog-inline-block share-button sb-twitter" title="Share to X"><span class="share-button-link-text">Share to X</span></a><a class="goog-inline-block share-button sb-facebook" title="Share to Facebook"><span class="share-button-link-text">Share to Facebook</span></a><a class="goog-inline-block share-button sb-pinterest" title="Share to Pinterest"><span class="share-button-link-text">Share to Pinterest</span></a></div></div>'
            '<div class="post-footer-line post-footer-line-3"><span class="post-labels">Labels: ' + ", ".join(f'<a href="/search/label/{t}" rel="tag">{esc(t)}</a>' for t in tags) + "</span></div></div></div>"
            f'<div class="comments" id="comments"><a name="comments"></a><h4>{n_comments or "No"} comments:</h4><div id="Blog1_comments-block-wrapper"><dl class="avatar-comment-indent" id="comments-block">'
            + "".join(f'<dt class="comment-author " id="c{rng.randint(10**8, 10**9)}"><a name="c1"></a>{rng.choice(USERS)} said...</dt><dd class="comment-body" id="Blog1_cmt-1"><p>{esc(" ".join(rng.sample(COMMENT_SENTENCES, 2)))}</p></dd><dd class="comment-footer"><span class="comment-timestamp"><a href="#c1" title="comment permalink">{_date(rng)} at {rng.randint(1, 12)}:{rng.randint(10, 59)} AM</a></span></dd>' for _ in range(n_comments))
            + '</dl></div><p class="comment-footer"><a href="https://www.blogger.com/comment/fullpage/post/1/2" onclick="">Post a Comment</a></p></div></div></div></div></div>'
            '<div class="blog-pager" id="blog-pager"><span id="blog-pager-newer-link"><a class="blog-pager-newer-link" href="/newer.html" title="Newer Post">Newer Post</a></span><span id="blog-pager-older-link"><a class="blog-pager-older-link" href="/older.html" title="Older Post">Older Post</a></span><a class="home-link" href="/">Home</a></div><div class="clear"></div>'
            '<div class="post-feeds"><div class="feed-links">Subscribe to: <a class="feed-link" href="/feeds/1/comments/default" target="_blank" type="application/atom+xml">Post Comments (Atom)</a></div></div></div></div></div></div>'
            f'<div class="column-right-outer"><div class="column-right-inner"><aside><div class="sidebar section" id="sidebar-right-1"><div class="widget Profile" data-version="1" id="Profile1"><h2>About Me</h2><div class="widget-content"><a href="#"><img alt="My photo" class="profile-img" height="80" src="/photo.jpg" width="60"></a><dl class="profile-datablock"><dt class="profile-data"><a class="profile-name-link g-profile" href="#">{esc(author)}</a></dt><dd class="profile-textblock">{esc(_trim_words(rng.choice(_prose()), 15))}</dd></dl><a class="profile-link" href="#" rel="author">View my complete profile</a></div></div>'
            f'<div class="widget PopularPosts" data-version="1" id="PopularPosts1"><h2>Popular Posts</h2><div class="widget-content popular-posts"><ul>' + "".join(f'<li><div class="item-content"><div class="item-title"><a href="/{_slug(t)}.html">{esc(t)}</a></div><div class="item-snippet">{esc(_trim_words(rng.choice(_prose()), 16))}</div></div></li>' for t in _teasers(rng, 4)) + "</ul></div></div>"
            f'<div class="widget BlogArchive" data-version="1" id="BlogArchive1"><h2>Blog Archive</h2><div class="widget-content"><div id="ArchiveList"><div id="BlogArchive1_ArchiveList"><ul class="hierarchy">{archive}</ul></div></div></div></div></div></aside></div></div></div></div></div></div>'
            f'<footer><div class="footer-outer"><div class="foot section" id="footer-3"><div class="widget Attribution" data-version="1" id="Attribution1"><div class="widget-content" style="text-align: center;">Simple theme. Powered by <a href="https://www.blogger.com" target="_blank">Blogger</a>.</div></div></div></div></footer></div></div>'
        )
        head = "<script type=\"text/javascript\">(function() { var b = window, f = \"chrome\", g = \"tick\", k = \"jstiming\"; })();</script><style id='page-skin-1' type='text/css'>body { font: normal normal 12px Arial; }</style>"
        return _document(head, body, charset, f"{blog}: {title}", html_attrs=" dir='ltr' xmlns='http://www.w3.org/1999/xhtml' xmlns:b='http://www.google.com/2005/gml/b'", body_attrs=' class="loading variant-simplysimple"'), truth, f"https://{_slug(blog).replace('-', '')}.blogspot.com/{rng.randint(2010, 2025)}/{rng.randint(1, 12):02d}/{slug[:40]}.html"

    # wordpress (Astra theme, Jetpack, Gutenberg)
    def between(k: int) -> str:
        x = rng.random()
        if (i == 1 and k == 0) or x < 0.06:
            return f'<div class="wp-block-jetpack-subscriptions__supports-newline wp-block-jetpack-subscriptions"><div class="wp-block-jetpack-subscriptions__container"><form action="#" method="post" accept-charset="utf-8" data-blog="{rng.randint(10**7, 10**8)}" data-post_access_level="everybody" id="subscribe-blog"><p id="subscribe-email"><label id="subscribe-field-label" for="subscribe-field" class="screen-reader-text">Type your email…</label><input type="email" name="email" required="required" class="no-border-radius" value="" id="subscribe-field" placeholder="Type your email…"></p><p id="subscribe-submit"><button type="submit" class="wp-block-button__link no-border-radius" name="jetpack_subscriptions_widget">Subscribe</button></p></form></div></div>'
        if x < 0.12:
            return f'<div class="ast-article-inside-ad"><ins class="adsbygoogle" style="display:block; text-align:center;" data-ad-layout="in-article" data-ad-format="fluid" data-ad-client="ca-pub-{rng.randint(10**15, 10**16)}" data-ad-slot="{rng.randint(10**9, 10**10)}"></ins><script>(adsbygoogle = window.adsbygoogle || []).push({{}});</script></div>'
        return ""
    ids = [f"{_h(rng, 8)}-{_h(rng, 4)}-{_h(rng, 4)}" for _ in notes]
    content = body_html({"h2": "wp-block-heading", "h3": "wp-block-heading", "ul": "wp-block-list", "blockquote": "wp-block-quote", "table": "has-fixed-layout"},
                        lambda n: f'<sup data-fn="{ids[n - 1]}" class="fn"><a href="#{ids[n - 1]}" id="{ids[n - 1]}-link">{n}</a></sup>', between)
    fn = ('<ol class="wp-block-footnotes">' + "".join(f'<li id="{ids[k]}">{esc(n)} <a href="#{ids[k]}-link" aria-label="Jump to footnote reference {k + 1}">↩︎</a></li>' for k, n in enumerate(notes)) + "</ol>") if notes else ""
    sharing = ('<div class="sharedaddy sd-sharing-enabled"><div class="robots-nocontent sd-block sd-social sd-social-icon-text sd-sharing"><h3 class="sd-title">Share this:</h3><div class="sd-content"><ul><li class="share-twitter"><a rel="nofollow noopener noreferrer" data-shared="sharing-twitter-1" class="share-twitter sd-button share-icon" href="?share=twitter" target="_blank" title="Click to share on X"><span>X</span></a></li><li class="share-facebook"><a class="share-facebook sd-button share-icon" href="?share=facebook" title="Click to share on Facebook"><span>Facebook</span></a></li><li class="share-end"></li></ul></div></div></div>'
               '<div class="sharedaddy sd-block sd-like jetpack-likes-widget-wrapper jetpack-likes-widget-unloaded" id="like-post-wrapper-1" data-src="https://widgets.wp.com/likes/#blog_id=1" data-name="like-post-frame-1"><h3 class="sd-title">Like this:</h3><div class="likes-widget-placeholder post-likes-widget-placeholder" style="height: 55px;"><span class="button"><span>Like</span></span> <span class="loading">Loading...</span></div><span class="sd-text-color"></span><a class="sd-link-color"></a></div>')
    related = '<div id="jp-relatedposts" class="jp-relatedposts"><h3 class="jp-relatedposts-headline"><em>Related</em></h3>' + "".join(f'<div class="jp-relatedposts-post"><h4 class="jp-relatedposts-post-title"><a class="jp-relatedposts-post-a" href="/{_slug(t)}/">{esc(t)}</a></h4><p class="jp-relatedposts-post-date">{_date(rng)}</p><p class="jp-relatedposts-post-context">In "{esc(tags[0])}"</p></div>' for t in _teasers(rng, 3)) + "</div>"
    menu = "".join(f'<li id="menu-item-{k}" class="menu-item menu-item-type-post_type menu-item-object-page menu-item-{k}"><a href="/{_slug(x)}/" class="menu-link">{esc(x)}</a></li>' for k, x in enumerate(["Home", "Blog", "About", "Projects", "Contact"]))
    body = (
        f'<a class="skip-link screen-reader-text" href="#content" title="Skip to content">Skip to content</a><div class="hfeed site" id="page"><header class="site-header header-main-layout-1 ast-primary-menu-enabled ast-logo-title-inline ast-hide-custom-menu-mobile ast-builder-menu-toggle-icon ast-mobile-header-inline" id="masthead" itemtype="https://schema.org/WPHeader" itemscope="itemscope" itemid="#masthead">'
        f'<div id="ast-desktop-header" data-toggle-type="dropdown"><div class="ast-main-header-wrap main-header-bar-wrap"><div class="ast-primary-header-bar ast-primary-header main-header-bar site-header-focus-item" data-section="section-primary-header-builder"><div class="site-primary-header-wrap ast-builder-grid-row-container site-header-focus-item ast-container" data-section="section-primary-header-builder"><div class="ast-builder-grid-row ast-builder-grid-row-has-sides ast-builder-grid-row-no-center">'
        f'<div class="site-header-primary-section-left site-header-section ast-flex site-header-section-left"><div class="ast-builder-layout-element ast-flex site-header-focus-item" data-section="title_tagline"><div class="site-branding ast-site-identity" itemtype="https://schema.org/Organization" itemscope="itemscope"><span class="site-title" itemprop="name"><a href="/" rel="home" itemprop="url">{esc(blog)}</a></span></div></div></div>'
        f'<div class="site-header-primary-section-right site-header-section ast-flex ast-grid-right-section"><div class="ast-builder-menu-1 ast-builder-menu ast-flex ast-builder-menu-1-focus-item ast-builder-layout-element site-header-focus-item" data-section="section-hb-menu-1"><div class="ast-main-header-bar-alignment"><div class="main-header-bar-navigation"><nav class="site-navigation ast-flex-grow-1 navigation-accessibility site-header-focus-item" id="primary-site-navigation-desktop" aria-label="Site Navigation" itemtype="https://schema.org/SiteNavigationElement" itemscope="itemscope"><div class="main-navigation ast-inline-flex"><ul id="ast-hf-menu-1" class="main-header-menu ast-menu-shadow ast-nav-menu ast-flex submenu-with-border stack-on-mobile">{menu}</ul></div></nav></div></div></div></div></div></div></div></div></div></header>'
        f'<div id="content" class="site-content"><div class="ast-container"><div id="primary" class="content-area primary"><main id="main" class="site-main">'
        f'<article class="post-{rng.randint(10, 9999)} post type-post status-publish format-standard has-post-thumbnail hentry category-{_slug(tags[0])} ast-article-single" id="post-1" itemtype="https://schema.org/CreativeWork" itemscope="itemscope"><div class="ast-post-format- single-layout-1">'
        f'<header class="entry-header"><div class="post-thumb-img-content post-thumb"><img width="1024" height="576" src="/wp-content/uploads/{_h(rng)}.jpg" class="attachment-large size-large wp-post-image" alt="" itemprop="image" decoding="async" fetchpriority="high"></div><h1 class="entry-title" itemprop="headline">{esc(title)}</h1>'
        f'<div class="entry-meta"><span class="posted-by vcard author" itemtype="https://schema.org/Person" itemscope="itemscope" itemprop="author"><a title="View all posts by {esc(author)}" href="/author/{_slug(author)}/" rel="author" class="url fn n" itemprop="url"><span class="author-name" itemprop="name">{esc(author)}</span></a></span> / <span class="posted-on"><span class="published" itemprop="datePublished">{_date(rng)}</span></span> / <span class="cat-links"><a href="/category/{_slug(tags[0])}/" rel="category tag">{esc(tags[0])}</a></span></div></header>'
        f'<div class="entry-content clear" data-ast-blocks-layout="true" itemprop="text">{content}{fn}{sharing}{related}</div></div></article>'
        f'<nav class="navigation post-navigation" aria-label="Posts"><div class="nav-links"><div class="nav-previous"><a title="{esc(rng.choice(RELATED_TEASERS))}" href="/prev/" rel="prev"><span class="ast-left-arrow">&larr;</span> Previous Post</a></div><div class="nav-next"><a href="/next/" rel="next">Next Post <span class="ast-right-arrow">&rarr;</span></a></div></div></nav>'
        f'{_comments_wp(rng, n_comments, title)}</main></div>'
        f'<div class="widget-area secondary" id="secondary" role="complementary" aria-label="Primary Sidebar" itemtype="https://schema.org/WPSideBar" itemscope="itemscope"><div class="sidebar-main"><aside id="search-2" class="widget widget_search"><form role="search" method="get" class="search-form" action="/"><label><span class="screen-reader-text">Search for:</span><input type="search" class="search-field" placeholder="Search …" value="" name="s"></label><input type="submit" class="search-submit" value="Search"></form></aside>'
        f'<aside id="recent-posts-2" class="widget widget_recent_entries"><h2 class="widget-title">Recent Posts</h2><nav aria-label="Recent Posts"><ul>' + "".join(f'<li><a href="/{_slug(t)}/">{esc(t)}</a></li>' for t in _teasers(rng, 5)) + "</ul></nav></aside>"
        '<aside id="archives-2" class="widget widget_archive"><h2 class="widget-title">Archives</h2><nav aria-label="Archives"><ul>' + "".join(f'<li><a href="/{y}/">{m} {y}</a></li>' for m, y in zip(rng.sample(MONTHS, 4), [2025, 2025, 2024, 2024], strict=True)) + "</ul></nav></aside></div></div></div></div>"
        f'<footer class="site-footer" id="colophon" itemtype="https://schema.org/WPFooter" itemscope="itemscope" itemid="#colophon"><div class="site-below-footer-wrap ast-builder-grid-row-container site-footer-focus-item ast-builder-grid-row-full ast-builder-grid-row-tablet-full ast-builder-grid-row-mobile-full ast-footer-row-stack ast-footer-row-tablet-stack ast-footer-row-mobile-stack" data-section="section-below-footer-builder"><div class="ast-builder-grid-row-container-inner"><div class="site-footer-below-section-1 site-footer-section site-footer-section-1"><div class="ast-builder-layout-element ast-flex site-footer-focus-item ast-footer-copyright" data-section="section-footer-builder"><div class="ast-footer-copyright"><p>Copyright &copy; {rng.randint(2019, 2025)} {esc(blog)} | Powered by {esc(blog)}</p></div></div></div></div></div></footer></div>'
        '<script id="astra-theme-js-js-extra">var astra = {"break_point":"921","isRtl":"","is_scroll_to_id":"","is_scroll_to_top":"","is_header_footer_builder_active":"1"};</script>'
    )
    head = ("<link rel='stylesheet' id='astra-theme-css-css' href='/wp-content/themes/astra/assets/css/minified/main.min.css?ver=4.6.4' media='all' /><style id='astra-theme-css-inline-css'>:root{--ast-container-default-xlg-padding:3em;}</style>"
            + _json_ld({"@context": "https://schema.org", "@graph": [{"@type": "Article", "headline": title, "author": {"name": author}}, {"@type": "BreadcrumbList", "itemListElement": [{"@type": "ListItem", "position": 1, "name": "Home"}]}]}))
    return _document(head, body, charset, f"{title} – {blog}", body_attrs=' itemtype="https://schema.org/Blog" itemscope class="post-template-default single single-post postid-1 single-format-standard wp-custom-logo ast-desktop ast-separate-container ast-right-sidebar astra-4.6.4 ast-blog-single-style-1 ast-single-post ast-inherit-site-logo-transparent ast-hfb-header"'), truth, f"https://{_slug(blog)}.example.net/{rng.randint(2016, 2025)}/{rng.randint(1, 12):02d}/{slug}/"



# -------------------------------------------------------------------------------------------------- qa

SE_SITES = [("Stack Overflow", "stackoverflow.com"), ("Super User", "superuser.com"), ("Ask Ubuntu", "askubuntu.com"), ("Unix &amp; Linux Stack Exchange", "unix.stackexchange.com"), ("Software Engineering Stack Exchange", "softwareengineering.stackexchange.com")]
SE_TAGS = ["python", "python-3.x", "string", "list", "dictionary", "regex", "parsing", "subprocess", "json", "unicode", "performance", "bash", "linux", "git", "sql"]


def _post_blocks(rng: random.Random, short: bool) -> list[Block]:
    prose = _prose()
    if short:
        return [("p", _trim_words(rng.choice(prose), rng.randint(12, 25)))]
    blocks: list[Block] = [("p", _trim_words(rng.choice(prose), rng.randint(15, 70))) for _ in range(rng.choice([1, 1, 2, 3]))]
    if rng.random() < 0.45:
        blocks.insert(rng.randint(1, len(blocks)), ("code", rng.choice(_code_snippets())))
    if rng.random() < 0.15:
        blocks.append(("ul", [_trim_words(rng.choice(prose), rng.randint(5, 12)) for _ in range(rng.randint(2, 4))]))
    if rng.random() < 0.1:
        blocks.append(("quote", _trim_words(rng.choice(prose), 20)))
    return blocks


def _se_comments_stacks(rng: random.Random, pid: int, n: int) -> str:
    items = "".join(
        f'<li id="comment-{pid + k}" class="comment js-comment " data-comment-id="{pid + k}" data-comment-owner-id="{rng.randint(1000, 99999)}" data-comment-score="{rng.randint(0, 40)}"><div class="js-comment-actions comment-actions"><div class="comment-score js-comment-edit-hide">'
        + (f'<span title="number of &#39;useful comment&#39; votes received" class="cool">{rng.randint(1, 40)}</span>' if rng.random() < 0.5 else "")
        + f'</div></div><div class="comment-text  js-comment-text-and-form"><div class="comment-body js-comment-edit-hide"><span class="comment-copy">{esc(" ".join(rng.sample(COMMENT_SENTENCES, rng.randint(1, 3))))}</span>'
        f'<div class="d-inline-flex ai-center">&ndash;&nbsp;<a href="/users/{rng.randint(1000, 99999)}/{rng.choice(USERS)}" title="{rng.randint(1, 99)},{rng.randint(100, 999)} reputation" class="comment-user">{rng.choice(USERS)}</a><span class="comment-date" dir="ltr"><a class="comment-link" href="#comment{k}_{pid}"><span title="{_iso(rng)}" class="relativetime-clean">{rng.choice(MONTHS)[:3]} {rng.randint(1, 28)}, {rng.randint(2010, 2024)} at {rng.randint(0, 23)}:{rng.randint(10, 59)}</span></a></span></div></div></div></li>'
        for k in range(n)
    )
    return (f'<div class="post-layout--right js-post-comments-component"><div id="comments-{pid}" class="comments js-comments-container bt bc-black-075 mt12 " data-post-id="{pid}" data-min-length="15"><ul class="comments-list js-comments-list" data-remaining-comments-count="0" data-canpost="false" data-cansee="true" data-comments-unavailable="false" data-addlink-disabled="true">{items}</ul></div>'
            f'<div id="comments-link-{pid}" data-rep="50" data-anon="true"><a class="js-add-link comments-link disabled-link" title="Use comments to ask for more information or suggest improvements. Avoid answering questions in comments." href="#" role="button">Add a comment</a><span class="js-link-separator d-none">&nbsp;|&nbsp;</span><a class="js-show-link comments-link dno" title="Expand to show all comments on this post" href="#" onclick="" role="button"></a></div></div>')


def _se_vote(rng: random.Random, pid: int, score: int, accepted: bool) -> str:
    return (
        f'<div class="votecell post-layout--left"><div class="js-voting-container d-flex jc-center fd-column ai-center gs4 fc-black-300" data-post-id="{pid}" data-referrer="None">'
        f'<button class="js-vote-up-btn flex--item s-btn s-btn__unset c-pointer " data-controller="s-tooltip" data-s-tooltip-placement="right" aria-pressed="false" aria-label="Up vote" data-selected-classes="fc-theme-primary" aria-describedby="--stacks-s-tooltip-{_h(rng, 8)}"><svg aria-hidden="true" class="svg-icon iconArrowUp" width="18" height="18" viewBox="0 0 18 18"><path d="M1 12h16L9 4z"></path></svg></button>'
        f'<div id="--stacks-s-tooltip-{_h(rng, 8)}" class="s-popover s-popover__tooltip" role="tooltip">This question shows research effort; it is useful and clear<div class="s-popover--arrow"></div></div>'
        f'<div class="js-vote-count flex--item d-flex fd-column ai-center fc-theme-body-font fw-bold fs-subheading py4" itemprop="upvoteCount" data-value="{score}">{score}</div>'
        f'<button class="js-vote-down-btn flex--item s-btn s-btn__unset c-pointer " data-controller="s-tooltip" data-s-tooltip-placement="right" aria-pressed="false" aria-label="Down vote"><svg aria-hidden="true" class="svg-icon iconArrowDown" width="18" height="18" viewBox="0 0 18 18"><path d="M1 6h16l-8 8z"></path></svg></button>'
        f'<button class="js-saves-btn s-btn s-btn__unset c-pointer py4" type="button" id="saves-btn-{pid}" data-controller="s-tooltip" aria-pressed="false" data-post-id="{pid}" data-post-type-id="1" data-user-privilege-for-post-click="0" aria-controls="" data-s-popover-auto-show="false"><svg aria-hidden="true" class="fc-theme-primary-500 js-saves-btn-selected d-none svg-icon iconBookmark" width="18" height="18" viewBox="0 0 18 18"><path d="M3 17V3c0-1.1.9-2 2-2h8a2 2 0 0 1 2 2v14l-6-4z"></path></svg></button>'
        + ('<div class="js-accepted-answer-indicator flex--item fc-green-400 py6 mtn8" data-s-tooltip-placement="right" title="Loading when this answer was accepted…" tabindex="0" role="note" aria-label="Accepted"><div class="ta-center"><svg aria-hidden="true" class="svg-icon iconCheckmarkLg" width="36" height="36" viewBox="0 0 36 36"><path d="m6 14 8 8L30 6v8L14 30l-8-8z"></path></svg></div></div>' if accepted else "")
        + f'<a class="js-post-issue flex--item s-btn s-btn__unset c-pointer py6 mx-auto" href="/posts/{pid}/timeline" data-shortcut="T" aria-label="Timeline" data-controller="s-tooltip" data-s-tooltip-placement="right"><svg aria-hidden="true" class="mln2 mr0 svg-icon iconHistory" width="19" height="18" viewBox="0 0 19 18"><path d="M3 9a8 8 0 1 1 3.73 6.77"></path></svg></a></div></div>'
    )


def _se_signature(rng: random.Random, verb: str, owner: bool) -> str:
    user = rng.choice(USERS)
    uid = rng.randint(1000, 9_999_999)
    edited = (f'<div class="post-signature flex--item"><div class="user-info "><div class="d-flex "><div class="user-action-time fl-grow1"><a href="/posts/{uid}/revisions" title="show all edits to this post" class="js-gps-track">edited <span title="{_iso(rng)}" class="relativetime">{rng.choice(MONTHS)[:3]} {rng.randint(1, 28)}, {rng.randint(2015, 2024)} at {rng.randint(0, 23)}:{rng.randint(10, 59)}</span></a></div></div>'
              f'<div class="user-gravatar32"></div><div class="user-details"><a href="/users/{uid + 1}/{rng.choice(USERS)}">{rng.choice(USERS)}</a><div class="-flair"><span class="reputation-score" title="reputation score" dir="ltr">{rng.randint(1, 300)}k</span></div></div></div></div>') if rng.random() < 0.4 else ""
    return (
        f'{edited}<div class="post-signature{" owner" if owner else ""} flex--item"><div class="user-info user-hover"><div class="d-flex "><div class="user-action-time fl-grow1">{verb} <span title="{_iso(rng)}" class="relativetime">{rng.choice(MONTHS)[:3]} {rng.randint(1, 28)}, {rng.randint(2009, 2024)} at {rng.randint(0, 23)}:{rng.randint(10, 59)}</span></div></div>'
        f'<div class="user-gravatar32" data-s-popover-placement="bottom-start"><a href="/users/{uid}/{user}"><div class="gravatar-wrapper-32"><img src="https://i.sstatic.net/{_h(rng, 7)}.jpg?s=64" alt="{user}&#39;s user avatar" width="32" height="32" class="bar-sm"></div></a></div>'
        f'<div class="user-details" itemprop="author" itemscope itemtype="http://schema.org/Person"><a href="/users/{uid}/{user}">{user}</a><span class="d-none" itemprop="name">{user}</span><div class="-flair"><span class="reputation-score" title="reputation score {rng.randint(1000, 999999):,}" dir="ltr">{rng.randint(1, 999)}k</span>'
        f'<span title="{rng.randint(1, 90)} gold badges" aria-hidden="true"><span class="badge1"></span><span class="badgecount">{rng.randint(1, 90)}</span></span><span class="v-visible-sr">{rng.randint(1, 90)} gold badges</span><span title="{rng.randint(1, 300)} silver badges" aria-hidden="true"><span class="badge2"></span><span class="badgecount">{rng.randint(1, 300)}</span></span></div></div></div></div>'
    )


def _se_menu(rng: random.Random, pid: int, what: str) -> str:
    return (f'<div class="js-post-menu pt2" data-post-id="{pid}" data-post-type-id="{1 if what == "question" else 2}"><div class="d-flex gs8 s-anchors s-anchors__muted fw-wrap">'
            f'<div class="flex--item"><a href="/{what[0]}/{pid}" rel="nofollow" itemprop="url" class="js-share-link js-gps-track" title="Short permalink to this {what}" data-controller="se-share-sheet" data-se-share-sheet-title="Share a link to this {what}" data-se-share-sheet-subtitle="" data-se-share-sheet-post-type="{what}" data-se-share-sheet-social="facebook twitter " data-se-share-sheet-location="1" data-se-share-sheet-license-url="https%3a%2f%2fcreativecommons.org%2flicenses%2fby-sa%2f4.0%2f" data-se-share-sheet-license-name="CC BY-SA 4.0" data-s-popover-placement="bottom-start">Share</a></div>'
            f'<div class="flex--item"><a href="/posts/{pid}/edit" class="js-suggest-edit-post js-gps-track" data-gps-track="post.click({{ item: 6, priv: 0, post_type: 1 }})" title="">Improve this {what}</a></div>'
            f'<div class="flex--item"><button type="button" id="btnFollowPost-{pid}" class="s-btn s-btn__link js-follow-post js-follow-{what} js-gps-track" data-gps-track="post.click({{ item: 14, priv: 0, post_type: 1 }})" data-controller="s-tooltip " data-s-tooltip-placement="bottom" data-s-popover-placement="bottom" aria-controls="">Follow</button></div></div>'
            f'<div class="js-menu-popup-container"></div></div>')


def _qa(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    stacks = i % 2 == 0 if i >= 3 else rng.random() < 0.6
    site, domain = rng.choice(SE_SITES)
    title = rng.choice([t for t, _ in _documents()]).capitalize() + rng.choice(["?", " not working as expected", " - what is the difference?", ": how to avoid it?", " in Python 3"])
    qid = rng.randint(10**6, 8 * 10**7)
    tags = rng.sample(SE_TAGS, rng.randint(1, 5))
    question = _post_blocks(rng, i == 0)
    n_ans = 1 if i == 0 else rng.choice([1, 2, 3, 4, 6, 9])
    answers = [_post_blocks(rng, i == 0) for _ in range(n_ans)]
    if charset != "utf-8":
        question.insert(0, ("p", _extra(charset, rng)))
    truth = _truth([b for post in [question, *answers] for b in post])
    accepted = rng.random() < 0.6
    scores = sorted((rng.randint(-2, 3000) for _ in answers), reverse=True)
    pcls = {"pre": " class=\"lang-py s-code-block\"", "code": "hljs language-python"} if stacks else {}
    def render_post(blocks: list[Block]) -> str:
        return "".join(_render(b, rng, pcls) for b in blocks)
    notice = ""
    if i == 1 or rng.random() < 0.15:
        notice = ('<div class="s-notice s-notice__info post-notice js-post-notice mb16" role="status"><div class="d-flex fd-column fw-nowrap"><div class="d-flex fw-nowrap"><div class="flex--item mr8"><svg aria-hidden="true" class="svg-icon iconLightbulb" width="18" height="18" viewBox="0 0 18 18"><path d="M15 6.38A6.5"></path></svg></div>'
                  '<div class="flex--item wmn0 fl1 lh-lg"><div class="flex--item fl1 lh-lg"><div><b>This question already has answers here</b>:</div></div></div></div><div class="flex--item mb0 mt4"><div class="mt4"><a href="/questions/1/x" dir="ltr">' + esc(rng.choice(RELATED_TEASERS)) + f'</a> <span class="question-originals-answer-count">({rng.randint(2, 40)} answers)</span></div>'
                  f'<div class="flex--item mb0 mt8">Closed {rng.randint(2, 9)} years ago.</div></div></div></div>')
    protected = ('<div class="s-notice s-notice__warning mb16" role="status"><p><b>Highly active question</b>. Earn 10 reputation (not counting the association bonus) in order to answer this question. The reputation requirement helps protect this question from spam and non-answer activity.</p></div>') if rng.random() < 0.15 else ""
    linked = "".join(f'<div class="spacer js-gps-track"><a href="/q/{rng.randint(1000, 99999)}" title="Question score (highest is best)"><div class="answer-votes{" answered-accepted" if rng.random() < 0.5 else ""} default">{rng.randint(0, 900)}</div></a><a href="/questions/{rng.randint(1000, 99999)}/x" class="question-hyperlink">{esc(t)}</a></div>' for t in _teasers(rng, rng.randint(3, 8)))
    hot = "".join(f'<li><div class="favicon favicon-{rng.choice(["math", "physics", "english", "gaming", "travel", "cooking"])}" title="Stack Exchange"></div><a href="https://x.stackexchange.com/questions/{rng.randint(1000, 99999)}" class="js-gps-track question-hyperlink mb0" data-gps-track="site.switch({{ item_type:11,target_site:1 }}); posts_hot_network.click({{ item_type:2,location:11 }})">{esc(t)}</a></li>' for t in _teasers(rng, rng.randint(6, 12)))
    sidebar = (
        '<div id="sidebar" class="show-votes" role="complementary" aria-label="sidebar"><div class="s-sidebarwidget s-sidebarwidget__yellow s-anchors s-anchors__grayscale mb16" data-tracker="cb=1"><ul class="d-block p0 m0"><div class="s-sidebarwidget--header s-sidebarwidget__small-bold-text d-flex fc-black-600 d:fc-black-900 bb bbw1">The Overflow Blog</div>'
        + "".join(f'<li class="s-sidebarwidget--item d-flex px16"><div class="flex--item1 fl-shrink0"><svg aria-hidden="true" class="va-text-top svg-icon iconPencilSm" width="14" height="14" viewBox="0 0 14 14"><path d="m11.1 1.71"></path></svg></div><div class="flex--item wmn0 ow-break-word"><a href="https://stackoverflow.blog/{_slug(t)}/" class="js-gps-track" title="{esc(t)}">{esc(t)}</a></div></li>' for t in _teasers(rng, 2))
        + f'</ul></div><div class="module sidebar-linked"><h4 id="h-linked">Linked</h4><div class="linked" data-tracker="lq=1">{linked}</div></div>'
        f'<div class="module sidebar-related"><h4 id="h-related">Related</h4><div class="related js-gps-related-questions" data-tracker="rq=1">{linked}</div></div>'
        f'<div id="hot-network-questions" class="module tex2jax_ignore"><h4><a href="https://stackexchange.com/questions?tab=hot" class="js-gps-track s-link s-link__inherit" data-gps-track="posts_hot_network.click({{ item_type:1, location:11 }})">Hot Network Questions</a></h4><ul>{hot}</ul><a href="#" class="show-more js-show-more js-gps-track">more hot questions</a></div>'
        f'<div id="feed-link" class="js-feed-link"><a href="/feeds/question/{qid}" title="Feed of this question and its answers"><svg aria-hidden="true" class="fc-orange-400 svg-icon iconRss" width="18" height="18" viewBox="0 0 18 18"><path d="M1 3c0-1.1.9-2 2-2h12a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2H3a2 2 0 0 1-2-2z"></path></svg>Question feed</a></div></div>'
    )
    taglist = "<ul class='ml0 list-ls-none js-post-tag-list-wrapper d-inline'>" + "".join(f"<li class='d-inline mr4 js-post-tag-list-item'><a href=\"/questions/tagged/{t}\" class=\"post-tag\" title=\"show questions tagged &#39;{t}&#39;\" aria-label=\"show questions tagged &#39;{t}&#39;\" rel=\"tag\" aria-labelledby=\"tag-{t}-tooltip-container\" data-tag-menu-origin=\"Unknown\">{t}</a></li>" for t in tags) + "</ul>"
    answer_form = (f'<form id="post-form" action="/questions/{qid}/answer/submit" method="post" class="js-add-answer-component post-form"><h2 class="space" id="your-answer-header">Your Answer</h2><div class="js-post-editor"><textarea id="wmd-input" name="post-text" class="wmd-input s-input bar0 js-post-body-field" data-post-type-id="2" cols="92" rows="15" aria-labelledby="your-answer-header"></textarea></div>'
                   '<div class="js-general-error general-error d-none"></div><div id="sign-up-or-log-in"><h2>Sign up or log in</h2><button class="s-btn s-btn__icon s-btn__google">Sign up using Google</button><button class="s-btn">Sign up using Email and Password</button></div>'
                   '<div class="ps-relative"><h2>Post as a guest</h2><label for="display-name">Name</label><input id="display-name" type="text"><label for="m-address">Email</label><p>Required, but never shown</p><input id="m-address" type="text"></div>'
                   '<div class="form-submit clear-both d-flex gsx gs4"><button id="submit-button" class="flex--item s-btn s-btn__filled s-btn__icon ws-nowrap" type="submit">Post Your Answer</button><button class="flex--item s-btn s-btn__danger discard-answer dno">Discard</button></div>'
                   '<p class="privacy-policy-agreement">By clicking “Post Your Answer”, you agree to our <a href="https://stackoverflow.com/legal/terms-of-service/public" name="tos" target="_blank" class="-link">terms of service</a> and acknowledge you have read our <a href="https://stackoverflow.com/legal/privacy-policy" name="privacy" target="_blank" class="-link">privacy policy</a>.</p></form>')
    cookie = ('<div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk" class="otFlat" tabindex="0" role="region" aria-label="Cookie banner"><div class="ot-sdk-container"><div class="ot-sdk-row"><div id="onetrust-group-container" class="ot-sdk-eight ot-sdk-columns"><div class="banner_logo"></div><div id="onetrust-policy"><h2 id="onetrust-policy-title">Your privacy</h2>'
              '<div id="onetrust-policy-text">By clicking “Accept all cookies”, you agree Stack Exchange can store cookies on your device and disclose information in accordance with our <a href="https://stackoverflow.com/legal/cookie-policy">Cookie Policy</a>.</div></div></div>'
              '<div id="onetrust-button-group-parent" class="ot-sdk-three ot-sdk-columns"><div id="onetrust-button-group"><button id="onetrust-accept-btn-handler">Accept all cookies</button><button id="onetrust-reject-all-handler">Necessary cookies only</button><button id="onetrust-pc-btn-handler">Customize settings</button></div></div></div></div></div></div>') if rng.random() < 0.7 else ""
    left = ('<div id="left-sidebar" data-is-here-when="md lg" class="left-sidebar js-pinned-left-sidebar ps-relative"><div class="left-sidebar--sticky-container js-sticky-leftnav"><nav role="navigation"><ol class="nav-links"><li class="ps-relative"><a href="/" class="pl8 js-gps-track nav-links--link" aria-controls="" data-controller="" data-s-popover-placement="right" aria-current="false"><div class="d-flex ai-center"><div class="flex--item truncate">Home</div></div></a></li>'
            '<li><ol class="nav-links"><li class="fs-fine tt-uppercase ml8 mt16 mb4 fc-light">Public</li><li class="ps-relative youarehere" aria-current="true"><a id="nav-questions" href="/questions" class="pl8 js-gps-track nav-links--link -link__with-icon" aria-controls="" data-controller="" data-s-popover-placement="right" aria-current="true"><svg aria-hidden="true" class="svg-icon iconGlobe" width="18" height="18" viewBox="0 0 18 18"><path d="M9 1C4.64 1 1 4.64 1 9c0 4.36 3.64 8 8 8 4.36 0 8-3.64 8-8 0-4.36-3.64-8-8-8z"></path></svg><span class="-link--channel-name">Questions</span></a></li>'
            '<li class="ps-relative"><a id="nav-tags" href="/tags" class="js-gps-track nav-links--link" aria-controls="" data-controller="" data-s-popover-placement="right"><div class="d-flex ai-center"><div class="flex--item truncate">Tags</div></div></a></li><li class="ps-relative"><a id="nav-users" href="/users" class="js-gps-track nav-links--link"><div class="d-flex ai-center"><div class="flex--item truncate">Users</div></div></a></li><li class="ps-relative"><a id="nav-companies" href="/jobs/companies" class="js-gps-track nav-links--link"><div class="d-flex ai-center"><div class="flex--item truncate">Companies</div></div></a></li></ol></li>'
            '<li class="js-freemium-cta ps-relative mt32 mb8"><div class="fs-fine tt-uppercase ml8 mt16 mb8 fc-light">Collectives</div><a href="/collectives" class="s-link">Explore Collectives</a></li><li class="ps-relative"><div class="fs-fine tt-uppercase ml8 mt16 mb8 fc-light">Teams</div><div class="ba bc-black-225 p12 ml8 bar-sm"><p>Ask questions, find answers and collaborate at work with Stack Overflow for Teams.</p><a href="/teams" class="s-btn s-btn__filled">Try Teams for free</a> <a href="/teams/tour">Explore Teams</a></div></li></ol></nav></div></div>')
    header = (f'<header class="s-topbar ps-fixed t0 l0 js-top-bar"><div class="s-topbar--container"><a href="#" class="s-topbar--menu-btn js-left-sidebar-toggle" role="menuitem" aria-haspopup="true" aria-controls="left-sidebar" aria-expanded="false"><span></span></a><a class="s-topbar--logo js-gps-track" href="https://{domain}"><span class="-img _glyph">{site}</span></a>'
              '<ol class="s-navigation" role="presentation"><li class="md:d-none"><a href="https://stackoverflow.co/" class="s-navigation--item js-gps-track js-products-menu" aria-controls="products-popover" data-controller="s-popover" data-action="s-popover#toggle" data-s-popover-placement="bottom" data-s-popover-toggle-class="is-selected">Products</a></li></ol>'
              '<form id="search" role="search" action="/search" class="s-topbar--searchbar js-searchbar " autocomplete="off"><div class="s-topbar--searchbar--input-group"><input name="q" type="text" role="combobox" placeholder="Search…" value="" autocomplete="off" maxlength="240" class="s-input s-input__search js-search-field " aria-label="Search" aria-controls="top-search" data-controller="s-popover" data-action="focus->s-popover#show" data-s-popover-placement="bottom-start" aria-expanded="false"></div></form>'
              '<ol class="overflow-x-auto ml-auto -secondary grid ai-center list-reset h100 user-logged-out" role="menubar"><li class="-item searchbar-trigger"><a href="#" class="s-topbar--item js-searchbar-trigger" role="button" aria-label="Search" aria-haspopup="true" aria-controls="search" title="Click to show search"></a></li><li><a href="/users/login" class="s-topbar--item s-topbar--item__unset s-btn s-btn__filled ws-nowrap js-gps-track" rel="nofollow">Log in</a></li><li><a href="/users/signup" class="s-topbar--item s-topbar--item__unset ml4 s-btn s-btn__primary ws-nowrap" rel="nofollow">Sign up</a></li></ol></div></header>')
    footer = (f'<footer id="footer" class="site-footer js-footer theme-light__forced" role="contentinfo"><div class="site-footer--container"><nav class="site-footer--nav"><div class="site-footer--col"><h5 class="-title"><a href="https://{domain}">{site}</a></h5><ul class="-list js-primary-footer-links"><li class="-item"><a href="/questions" class="js-gps-track -link">Questions</a></li><li class="-item"><a href="/help" class="js-gps-track -link">Help</a></li><li class="-item"><a href="/chat" class="js-gps-track -link">Chat</a></li></ul></div>'
              '<div class="site-footer--col"><h5 class="-title">Company</h5><ul class="-list"><li><a class="-link">About</a></li><li><a class="-link">Press</a></li><li><a class="-link">Work Here</a></li><li><a class="-link">Legal</a></li><li><a class="-link">Privacy Policy</a></li><li><a class="-link">Terms of Service</a></li><li><a class="-link">Contact Us</a></li><li><button type="button" class="js-ccpa-show-dialog">Cookie Settings</button></li><li><a class="-link">Cookie Policy</a></li></ul></div></nav>'
              f'<div class="site-footer--copyright fs-fine md:mt24"><p class="md:mb0">Site design / logo © {rng.randint(2020, 2025)} Stack Exchange Inc; user contributions licensed under <span class="td-underline"><a href="https://stackoverflow.com/help/licensing">CC BY-SA</a></span>. <span id="svnrev">rev {rng.randint(2020, 2025)}.{rng.randint(1, 12)}.{rng.randint(1, 28)}.{rng.randint(10000, 99999)}</span></p></div></div></footer>')
    scripts = ('<script>StackExchange.ready(function () { StackExchange.using("postValidation", function () { StackExchange.postValidation.initOnBlurAndSubmit($("#post-form"), 2, "answer"); }); StackExchange.question.init({showAnswerHelp:true,totalCommentCount:5,shareSheetEnabled:true,questionId:'
               + str(qid) + '}); styleCode(); });</script>' + _json_ld({"@context": "https://schema.org", "@type": "QAPage", "mainEntity": {"@type": "Question", "name": title, "answerCount": n_ans}}))

    posts = []
    if stacks:
        posts.append(
            f'<div class="question js-question" data-questionid="{qid}" data-position-on-page="0" data-score="{rng.randint(0, 3000)}" id="question">{notice}<div class="js-zone-container zone-container-main"><div id="dfp-tlb" class="everyonelovesstackoverflow everyoneloves__top-leaderboard everyoneloves__leaderboard"></div><div class="js-report-ad-button-container " style="width: 728px"></div></div>'
            f'<div class="post-layout ">{_se_vote(rng, qid, rng.randint(0, 3000), False)}<div class="postcell post-layout--right"><div class="s-prose js-post-body" itemprop="text">{render_post(question)}</div>'
            f'<div class="mt24 mb12"><div class="post-taglist d-flex gs4 gsy fd-column"><div class="d-flex ps-relative fw-wrap">{taglist}</div></div></div>'
            f'<div class="mb0 "><div class="mt16 d-flex gs8 gsy fw-wrap jc-end ai-start pt4 mb16"><div class="flex--item mr16 fl1 w96">{_se_menu(rng, qid, "question")}</div>{_se_signature(rng, "asked", True)}</div></div></div>'
            f'<span class="d-none" itemprop="commentCount">{rng.randint(0, 9)}</span>{_se_comments_stacks(rng, qid, rng.choice([0, 2, 5, 11]))}</div></div>'
        )
        posts.append(
            f'<div id="answers"><a name="tab-top"></a><div id="answers-header"><div class="answers-subheader d-flex ai-center mb8"><div class="flex--item fl1"><h2 class="mb0" data-answercount="{n_ans}">{n_ans} Answer{"s" if n_ans > 1 else ""}<span style="display:none;" itemprop="answerCount">{n_ans}</span></h2></div>'
            '<div class="flex--item"><div class="d-flex g4 gsx ai-center sm:fd-column sm:ai-start"><div class="d-flex fd-column ai-end sm:ai-start"><label class="flex--item fs-caption" for="answer-sort-dropdown-select-menu">Sorted by:</label><a class="js-sort-preference-change s-link flex--item fs-fine d-none" data-value="ScoreDesc" href="?answertab=scoredesc#tab-top">Reset to default</a></div>'
            '<div class="flex--item s-select"><select id="answer-sort-dropdown-select-menu"><option value="scoredesc" selected="selected">Highest score (default)</option><option value="modifieddesc">Date modified (newest first)</option><option value="createdasc">Date created (oldest first)</option></select></div></div></div></div></div>'
        )
        for k, (ans, score) in enumerate(zip(answers, scores, strict=True)):
            aid = qid + 1 + k * rng.randint(10, 9999)
            acc = accepted and k == 0
            posts.append(
                f'<a name="{aid}"></a><div id="answer-{aid}" class="answer js-answer{" accepted-answer js-accepted-answer" if acc else ""}" data-answerid="{aid}" data-parentid="{qid}" data-score="{score}" data-position-on-page="{k + 1}" data-highest-scored="{int(k == 0)}" data-question-has-accepted-highest-score="{int(accepted)}" itemprop="{"acceptedAnswer" if acc else "suggestedAnswer"}" itemscope itemtype="https://schema.org/Answer">'
                f'<div class="post-layout">{_se_vote(rng, aid, score, acc)}<div class="answercell post-layout--right"><div class="s-prose js-post-body" itemprop="text">{render_post(ans)}</div>'
                f'<div class="mt24"><div class="d-flex fw-wrap ai-start jc-end gs8 gsy"><time itemprop="dateCreated" datetime="{_iso(rng)}"></time><div class="flex--item mr16" style="flex: 1 1 100px;">{_se_menu(rng, aid, "answer")}</div>{_se_signature(rng, "answered", False)}</div></div></div>'
                f'<span class="d-none" itemprop="commentCount">{rng.randint(0, 5)}</span>{_se_comments_stacks(rng, aid, rng.choice([0, 0, 1, 3, 6]))}</div></div>'
            )
            if k == 0 and n_ans > 1:
                posts.append('<div class="js-zone-container zone-container-main"><div id="dfp-mlb" class="everyonelovesstackoverflow everyoneloves__mid-leaderboard everyoneloves__leaderboard"></div><div class="js-report-ad-button-container " style="width: 728px"><button class="js-report-ad-button s-btn s-btn__link fs-fine">Report this ad</button></div></div>')
        posts.append(f"{protected}{answer_form}<h2 class=\"bottom-notice\" data-loc=\"1\">Not the answer you're looking for? Browse other questions tagged {taglist} or <a href=\"/questions/ask\">ask your own question</a>.</h2></div>")
        main = (
            f'<div id="content" class="snippet-hidden"><div itemprop="mainEntity" itemscope itemtype="https://schema.org/Question"><link itemprop="image" href="https://cdn.sstatic.net/Sites/stackoverflow/Img/apple-touch-icon.png">'
            f'<div class="inner-content clearfix"><div id="question-header" class="d-flex sm:fd-column"><h1 itemprop="name" class="fs-headline1 ow-break-word mb8 flex--item fl1"><a href="/questions/{qid}/{_slug(title)}" class="question-hyperlink">{esc(title)}</a></h1>'
            '<div class="ml12 aside-cta flex--item sm:ml0 sm:mb12 sm:order-first d-flex jc-end"><div class="ml12 aside-cta flex--item print:d-none sm:ml0 sm:mb12 sm:order-first sm:as-end"><a href="/questions/ask" class="ws-nowrap s-btn s-btn__filled">Ask Question</a></div></div></div>'
            f'<div class="d-flex fw-wrap pb8 mb16 bb bc-black-225"><div class="flex--item ws-nowrap mr16 mb8" title="{_iso(rng)}"><span class="fc-black-400 mr2">Asked</span><time itemprop="dateCreated" datetime="{_iso(rng)}">{rng.randint(2, 14)} years ago</time></div>'
            f'<div class="flex--item ws-nowrap mr16 mb8"><span class="fc-black-400 mr2">Modified</span><a href="?lastactivity" class="s-link s-link__inherit" title="{_iso(rng)}">{rng.randint(1, 11)} months ago</a></div><div class="flex--item ws-nowrap mb8" title="Viewed {rng.randint(100, 2_000_000):,} times"><span class="fc-black-400 mr2">Viewed</span>{rng.randint(1, 999)}k times</div></div>'
            f'<div id="mainbar" role="main" aria-label="question and answers">{"".join(posts)}</div>{sidebar}</div></div></div>'
        )
        body = f'{header}<div class="container">{left}{main}</div>{footer}{cookie}{scripts}'
        html = _document('<link rel="stylesheet" type="text/css" href="https://cdn.sstatic.net/Shared/stacks.css?v=' + _h(rng, 12) + '">', body, charset, f"{title} - {site}", html_attrs=' class="html__responsive html__unpinned-leftnav"', body_attrs=' class="question-page unified-theme"')
        return html, truth, f"https://{domain}/questions/{qid}/{_slug(title)}"

    # legacy table layout (2013-2018)
    def legacy_comments(n: int) -> str:
        rows = "".join(f'<tr id="comment-{rng.randint(10**6, 10**8)}" class="comment "><td class="comment-actions"><table><tbody><tr><td class=" comment-score"><span title="number of &#39;useful comment&#39; votes received" class="cool">{rng.randint(1, 50)}</span></td><td>&nbsp;</td></tr></tbody></table></td>'
                       f'<td class="comment-text"><div style="display: block;" class="comment-body"><span class="comment-copy">{esc(" ".join(rng.sample(COMMENT_SENTENCES, 2)))}</span> &ndash;&nbsp;<a href="/users/1/x" title="{rng.randint(100, 99999)} reputation" class="comment-user">{rng.choice(USERS)}</a> <span class="comment-date" dir="ltr"><span title="{_iso(rng)}" class="relativetime-clean">{rng.choice(MONTHS)[:3]} {rng.randint(1, 28)} \'{rng.randint(10, 18)} at {rng.randint(0, 23)}:{rng.randint(10, 59)}</span></span></div></td></tr>' for _ in range(n))
        return f'<div class="comments "><table><tbody data-remaining-comments-count="0" data-canpost="false" data-cansee="true">{rows}</tbody></table></div><div id="comments-link-1" data-rep="50" data-anon="true"><a class="js-add-link comments-link disabled-link " title="Use comments to ask for more information or suggest improvements. Avoid answering questions in comments." href="#">add a comment</a></div>'
    legacy_tags = "".join(f'<a href="/questions/tagged/{t}" class="post-tag" title="show questions tagged &#39;{t}&#39;" rel="tag">{t}</a> ' for t in tags)

    def legacy_post(blocks: list[Block], pid: int, score: int, verb: str, acc: bool) -> str:
        return (f'<table><tbody><tr><td class="votecell"><div class="vote"><input type="hidden" name="_id_" value="{pid}"><a class="vote-up-off" title="This answer is useful">up vote</a><span itemprop="upvoteCount" class="vote-count-post ">{score}</span><a class="vote-down-off" title="This answer is not useful">down vote</a>'
                + ('<span class="vote-accepted-on load-accepted-answer-date" title="loading when this answer was accepted...">accepted</span>' if acc else "")
                + f'</div></td><td class="{"postcell" if verb == "asked" else "answercell"}"><div><div class="post-text" itemprop="text">{render_post(blocks)}</div>'
                + (f'<div class="post-taglist">{legacy_tags}</div>' if verb == "asked" else "")
                + f'<table class="fw"><tbody><tr><td class="vt"><div class="post-menu"><a href="/{verb[0]}/{pid}" title="short permalink to this post" class="short-link" id="link-post-{pid}">share</a><span class="lsep">|</span><a href="/posts/{pid}/edit" class="suggest-edit-post" title="">improve this {"question" if verb == "asked" else "answer"}</a></div></td>'
                f'<td align="right" class="post-signature"><div class="user-info "><div class="user-action-time">{verb} <span title="{_iso(rng)}" class="relativetime">{rng.choice(MONTHS)[:3]} {rng.randint(1, 28)} \'{rng.randint(10, 18)} at {rng.randint(0, 23)}:{rng.randint(10, 59)}</span></div><div class="user-gravatar32"><a href="/users/1/x"><div class="gravatar-wrapper-32"><img src="https://www.gravatar.com/avatar/{_h(rng, 32)}?s=32&amp;d=identicon&amp;r=PG" alt="" width="32" height="32"></div></a></div>'
                f'<div class="user-details"><a href="/users/1/x">{rng.choice(USERS)}</a><div class="-flair"><span class="reputation-score" title="reputation score " dir="ltr">{rng.randint(1, 99)},{rng.randint(100, 999)}</span><span title="{rng.randint(1, 9)} gold badges"><span class="badge1"></span><span class="badgecount">{rng.randint(1, 9)}</span></span></div></div></div></td></tr></tbody></table></div></td></tr>'
                f'<tr><td class="votecell"></td><td>{legacy_comments(rng.choice([0, 1, 3, 5]))}</td></tr></tbody></table>')
    parts = [f'<div class="question" data-questionid="{qid}" id="question">{notice}{legacy_post(question, qid, rng.randint(0, 900), "asked", False)}</div>']
    parts.append(f'<div id="answers"><a name="tab-top"></a><div id="answers-header"><div class="subheader answers-subheader"><h2>{n_ans} Answer{"s" if n_ans > 1 else ""}</h2><div><div id="tabs"><a href="?answertab=active#tab-top" title="Answers with the latest activity first">active</a><a href="?answertab=oldest#tab-top" title="Answers in the order they were provided">oldest</a><a class="youarehere" href="?answertab=votes#tab-top" title="Answers with the highest score first">votes</a></div></div></div></div>')
    for k, (ans, score) in enumerate(zip(answers, scores, strict=True)):
        aid = qid + 1 + k * 37
        parts.append(f'<a name="{aid}"></a><div id="answer-{aid}" class="answer{" accepted-answer" if accepted and k == 0 else ""}" data-answerid="{aid}" itemscope itemtype="http://schema.org/Answer">{legacy_post(ans, aid, score, "answered", accepted and k == 0)}</div>')
        if k == 0 and i == 1:
            parts.append('<div class="everyonelovesstackoverflow" id="adzerk2"><a href="/jobs">Looking for a job? Find your next role on Stack Overflow Jobs. 2,400 companies hiring now.</a></div>')
    parts.append(f'{protected}{answer_form}<h2 class="bottom-notice" data-loc="1">Not the answer you\'re looking for? Browse other questions tagged {legacy_tags} or <a href="/questions/ask">ask your own question</a>.</h2></div>')
    body = (
        f'<div id="notify-container"></div><div id="custom-header"></div><div class="topbar"><div class="topbar-wrapper"><div class="js-topbar-dialog-corral"></div><div class="network-items"><a href="//stackexchange.com" class="topbar-icon icon-site-switcher yes-hover js-site-switcher-button js-gps-track" title="A list of all 170 Stack Exchange sites"><span class="hidden-text">Stack Exchange</span></a></div>'
        '<div class="topbar-links"><div class="links-container"><span class="topbar-menu-links"><a href="/users/signup" class="login-link">sign up</a> <a href="/users/login" class="login-link">log in</a> <a href="#" class="icon-help js-help-button" title="Help Center and other resources">help</a></span></div></div></div></div>'
        f'<div class="container"><div id="header"><div id="hlogo"><a href="/">{site}</a></div><div id="hmenus"><div class="nav mainnavs"><ul><li class="youarehere"><a id="nav-questions" href="/questions">Questions</a></li><li><a id="nav-tags" href="/tags">Tags</a></li><li><a id="nav-users" href="/users">Users</a></li><li><a id="nav-badges" href="/help/badges">Badges</a></li><li><a id="nav-unanswered" href="/unanswered">Unanswered</a></li></ul></div><div class="nav askquestion"><ul><li><a id="nav-askquestion" href="/questions/ask">Ask Question</a></li></ul></div></div></div>'
        f'<div id="content" class="snippet-hidden"><div itemscope itemtype="http://schema.org/Question"><div id="question-header"><h1 itemprop="name"><a href="/questions/{qid}/{_slug(title)}" class="question-hyperlink">{esc(title)}</a></h1></div>'
        f'<div id="mainbar">{"".join(parts)}</div>{sidebar}</div></div></div>'
        f'<div id="footer" class="categories"><div class="footerwrap"><div id="footer-menu"><div class="top-footer-links"><a href="/tour">tour</a> <a href="/help">help</a> <a href="https://stackexchange.com/legal">legal</a> <a href="https://stackexchange.com/legal/privacy-policy">privacy policy</a></div></div><div id="copyright">site design / logo &#169; 2018 Stack Exchange Inc; user contributions licensed under <a href="https://creativecommons.org/licenses/by-sa/3.0/" rel="license">cc by-sa 3.0</a> with <a href="https://stackoverflow.blog/2009/06/25/attribution-required/" rel="license">attribution required</a>.</div></div></div>{scripts}'
    )
    html = _document(f'<link rel="stylesheet" type="text/css" href="https://cdn.sstatic.net/Sites/{domain.split(".")[0]}/all.css?v={_h(rng, 12)}">', body, charset, f"{title} - {site}", body_attrs=' class="question-page new-topbar"')
    return html, truth, f"https://{domain}/questions/{qid}/{_slug(title)}"



# ---------------------------------------------------------------------------------------------- recipe

DISHES = ["Lemon Garlic Roast Chicken", "Classic Banana Bread", "One-Pot Chickpea Curry", "Crispy Smashed Potatoes", "Brown Butter Chocolate Chip Cookies", "Creamy Tomato Soup",
          "Sheet Pan Gnocchi", "Overnight Oats", "Shakshuka", "Blueberry Muffins", "Weeknight Beef Chili", "Mushroom Risotto", "Apple Crumble", "Garlic Butter Shrimp", "Lentil Bolognese"]
INGREDIENTS = [("2", "cups", "all-purpose flour", "spooned and leveled"), ("1", "teaspoon", "baking soda", ""), ("½", "teaspoon", "fine sea salt", ""), ("3", "tablespoons", "olive oil", "divided"),
               ("4", "cloves", "garlic", "minced"), ("1", "large", "yellow onion", "finely chopped"), ("1", "can (14 oz)", "crushed tomatoes", ""), ("2", "cups", "vegetable broth", "low sodium"),
               ("1", "cup", "whole milk", "room temperature"), ("2", "large", "eggs", ""), ("½", "cup", "unsalted butter", "melted and cooled"), ("¾", "cup", "brown sugar", "packed"),
               ("1", "tablespoon", "smoked paprika", ""), ("1", "teaspoon", "ground cumin", ""), ("2", "cups", "baby spinach", ""), ("1", "pound", "chicken thighs", "boneless, skinless"),
               ("1", "cup", "arborio rice", ""), ("8", "ounces", "cremini mushrooms", "sliced"), ("¼", "cup", "fresh parsley", "chopped"), ("1", "", "lemon", "zested and juiced"),
               ("3", "", "ripe bananas", "mashed"), ("1", "cup", "rolled oats", ""), ("1", "cup", "blueberries", "fresh or frozen"), ("½", "cup", "grated parmesan", "plus more to serve")]
STEPS = ["Preheat the oven to {t}°F ({c}°C) and line a baking sheet with parchment paper.", "In a large bowl, whisk together the {a} and the {b} until well combined.",
         "Heat the {a} in a large skillet over medium heat until shimmering, then add the {b}.", "Cook, stirring occasionally, for {n} to {m} minutes, until softened and lightly golden.",
         "Stir in the {a} and season generously with salt and pepper.", "Add the {a} and stir until just combined; do not overmix.",
         "Cover and simmer for {n} minutes, stirring every few minutes so nothing sticks to the bottom.", "Transfer to the prepared pan and bake for {n} to {m} minutes, until golden brown.",
         "Let cool for {n} minutes before slicing and serving.", "Taste and adjust the seasoning, adding more {a} if needed.", "Fold in the {a} and let it wilt for a minute or two.",
         "Serve warm, topped with the {a}."]
RECIPE_NOTES = ["Storage: Keep leftovers in an airtight container in the fridge for up to {n} days.", "Make ahead: The {a} can be prepared a day in advance and kept covered in the fridge.",
                "Substitutions: You can use {a} instead of {b}; the texture will be slightly different.", "Freezing: Freeze in portions for up to {n} months and thaw overnight in the fridge."]
RECIPE_HEADS = ["Why you’ll love this recipe", "Ingredient notes", "Tips for success", "What to serve with it", "Can I make it ahead?", "How to store leftovers"]


def _recipe_content(rng: random.Random, i: int, charset: str) -> tuple[str, list[Block], list[tuple[str | None, list[str]]], list[str], list[str]]:
    """(dish, intro story blocks, ingredient groups (name, lines), steps, notes)."""
    dish = rng.choice(DISHES)
    prose = _prose()
    story: list[Block] = []
    if i == 0:
        story = [("p", _trim_words(rng.choice(prose), 25))]
    else:
        for k in range(rng.randint(1, 6)):
            if k and rng.random() < 0.7:
                story.append(("h2", rng.choice(RECIPE_HEADS)))
            story += [("p", _trim_words(rng.choice(prose), rng.randint(20, 90))) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.25:
                story.append(("ul", [_trim_words(rng.choice(prose), rng.randint(6, 14)) for _ in range(rng.randint(2, 5))]))
    if charset != "utf-8":
        story.insert(0, ("p", _extra(charset, rng)))
    items = rng.sample(INGREDIENTS, rng.randint(4, 12) if i else 3)
    names = [x[2] for x in items]
    def line(x: tuple[str, str, str, str]) -> str:
        return " ".join(part for part in (x[0], x[1], x[2]) if part) + (f" {x[3]}" if x[3] else "")
    if len(items) > 6 and rng.random() < 0.5:
        cut = rng.randint(3, len(items) - 2)
        groups = [(rng.choice(["For the base", "For the dough", "For the filling"]), [line(x) for x in items[:cut]]), (rng.choice(["For the sauce", "For the topping", "To serve"]), [line(x) for x in items[cut:]])]
    else:
        groups = [(None, [line(x) for x in items])]
    def fill(t: str) -> str:
        a, b = rng.sample(names, 2)
        n = rng.randint(2, 12)
        f = rng.choice([350, 375, 400, 425])
        return t.format(a=a, b=b, n=n, m=n + rng.randint(2, 10), t=f, c=round((f - 32) / 1.8))
    steps = [fill(rng.choice(STEPS)) for _ in range(rng.randint(3, 10) if i else 2)]
    notes = [fill(t) for t in rng.sample(RECIPE_NOTES, rng.randint(0, 3))] if i else []
    return dish, story, groups, steps, notes


def _ingredient_blocks(groups: list[tuple[str | None, list[str]]]) -> list[Block]:
    out: list[Block] = []
    for name, lines in groups:
        if name:
            out.append(("h4", name))
        out.append(("ul", lines))
    return out


def _recipe(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("wprm", "tasty", "mntl")[i % 3] if i >= 3 else rng.choice(["wprm", "tasty", "mntl"])
    dish, story, groups, steps, notes = _recipe_content(rng, i, charset)
    site = rng.choice(["Sally’s Kitchen Table", "The Cozy Skillet", "Half Baked Home", "Pinch of Thyme", "Crumbs & Co"])
    author = _name(rng)
    rating = f"{rng.randint(3, 4)}.{rng.randint(0, 9)}{rng.randint(0, 9)}"
    votes = rng.randint(3, 2000)
    prep, cook = rng.choice([5, 10, 15, 20]), rng.choice([10, 20, 30, 45, 60])
    kcal = rng.randint(120, 800)
    notes_head = rng.choice(["Notes", "Recipe Notes"])
    slug = _slug(dish)
    ld = _json_ld({"@context": "https://schema.org/", "@type": "Recipe", "name": dish, "author": {"@type": "Person", "name": author}, "recipeYield": ["4"], "prepTime": f"PT{prep}M", "cookTime": f"PT{cook}M",
                   "recipeIngredient": [x for _, g in groups for x in g], "recipeInstructions": [{"@type": "HowToStep", "text": t} for t in steps], "aggregateRating": {"@type": "AggregateRating", "ratingValue": rating, "ratingCount": str(votes)}})
    if variant == "mntl":
        truth_blocks: list[Block] = [*story[:2]] if story else []
        truth_blocks += [("h2", "Ingredients"), *_ingredient_blocks(groups), ("h2", "Directions"), ("ol", steps)]
        if notes:
            truth_blocks += [("h2", "Cook’s Notes"), ("p", " ".join(notes))]
        intro_html = "".join(_render(b, rng, {"p": "comp mntl-sc-block mntl-sc-block-html", "h2": "comp mntl-sc-block mntl-sc-block-heading"}) for b in story[:2])
        ing = ""
        for name, lines in groups:
            if name:
                ing += f'<p class="mntl-structured-ingredients__list-heading text-title-200">{esc(name)}</p>'
            ing += '<ul class="mntl-structured-ingredients__list">' + "".join(f'<li class="mntl-structured-ingredients__list-item "><p><span data-ingredient-quantity="true">{esc(ln.split(" ")[0])}</span> <span data-ingredient-name="true">{esc(" ".join(ln.split(" ")[1:]))}</span></p></li>' for ln in lines) + "</ul>"
        stp = "".join(f'<li id="mntl-sc-block_{k + 2}-0" class="comp mntl-sc-block mntl-sc-block-startgroup mntl-sc-block-group--LI"><p class="comp mntl-sc-block mntl-sc-block-html">{esc(t)}</p>'
                      + (f'<figure id="mntl-sc-block_{k + 30}-0" class="comp figure-article mntl-sc-block mntl-sc-block-image figure-portrait figure-high-res"><div class="img-placeholder"><img src="/thmb/{_h(rng, 20)}.jpg" alt="" class="primary-image__image mntl-primary-image--blurry"></div></figure>' if rng.random() < 0.4 else "")
                      + "</li>" for k, t in enumerate(steps))
        ad = f'<div id="mntl-sc-block-adslot_{rng.randint(1, 9)}-0" class="comp mntl-sc-block-adslot mntl-block"><div id="mob-square-fixed-{rng.randint(1, 9)}" class="comp mntl-dynamic-billboard mntl-gpt-dynamic-adunit mntl-gpt-adunit gpt billboard dynamic" data-ad-width="300" data-ad-height="250" data-type="billboard"><div class="wrapper"></div></div></div>'
        if i == 1 and len(steps) > 1:
            parts = stp.split("</li>", 1)
            stp = parts[0] + "</li>" + ad + parts[1]
        nutrition = (f'<div id="mntl-nutrition-facts-summary_1-0" class="comp mntl-nutrition-facts-summary"><h2 class="mntl-nutrition-facts-summary__heading">Nutrition Facts <span class="mntl-nutrition-facts-summary__heading-aside">(per serving)</span></h2><table class="mntl-nutrition-facts-summary__table"><tbody>'
                     f'<tr class="mntl-nutrition-facts-summary__table-row"><td class="mntl-nutrition-facts-summary__table-cell type--dog-bold">{kcal}</td><td class="mntl-nutrition-facts-summary__table-cell type--dog">Calories</td></tr><tr class="mntl-nutrition-facts-summary__table-row"><td class="mntl-nutrition-facts-summary__table-cell type--dog-bold">{rng.randint(2, 40)}g</td><td class="mntl-nutrition-facts-summary__table-cell type--dog">Fat</td></tr>'
                     f'<tr class="mntl-nutrition-facts-summary__table-row"><td class="mntl-nutrition-facts-summary__table-cell type--dog-bold">{rng.randint(5, 90)}g</td><td class="mntl-nutrition-facts-summary__table-cell type--dog">Carbs</td></tr></tbody></table>'
                     '<button class="mntl-nutrition-facts-label__button">Show Full Nutrition Label</button><p class="mntl-nutrition-facts-label__disclaimer">* Percent Daily Values are based on a 2,000 calorie diet. Your daily values may be higher or lower depending on your calorie needs.</p><p>** Nutrient information is not available for all ingredients. Amount is based on available nutrient data.</p></div>')
        notes_html = f'<div class="comp mntl-sc-block mntl-sc-block-subheading"><h2 class="mntl-sc-block-subheading__text">Cook’s Notes</h2></div><p class="comp mntl-sc-block mntl-sc-block-html">{esc(" ".join(notes))}</p>' if notes else ""
        reviews = "".join(f'<div class="feedback__item"><div class="feedback__display-name">{rng.choice(USERS)}</div><div class="feedback__meta"><span class="feedback__stars">{"★" * rng.randint(3, 5)}</span><span class="feedback__meta-date">{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(2015, 2025)}</span></div><div class="feedback__text">{esc(" ".join(rng.sample(COMMENT_SENTENCES, 2)))}</div><button class="feedback__helpful-button">Helpful ({rng.randint(0, 90)})</button></div>' for _ in range(rng.randint(3, 25 if i == 0 else 8)))
        body = (
            f'<a href="#main" class="mntl-skip-to-content">Skip to content</a><header id="header_1-0" class="comp header mntl-header" role="banner"><div class="header__inner"><a class="header__logo" href="/">{esc(site)}</a><nav class="mntl-header__nav" aria-label="Main"><ul class="mntl-header__nav-list">'
            + "".join(f'<li class="mntl-header__nav-item"><a class="mntl-header__nav-link" href="/recipes/{_slug(x)}/">{esc(x)}</a></li>' for x in ["Dinners", "Meals", "Ingredients", "Occasions", "Cuisines", "Kitchen Tips", "News", "Features"])
            + '</ul></nav><a class="mntl-header__account" href="/account">Log In</a></div></header>'
            f'<main id="main" class="loc main"><article id="allrecipes-article_1-0" class="comp allrecipes-article mntl-article--two-column-right-rail article right-rail__offset lock-journey"><div class="loc article-header"><div id="mntl-breadcrumbs_1-0" class="comp mntl-breadcrumbs"><ol class="mntl-breadcrumbs"><li><a href="/recipes/">Recipes</a></li><li><a href="/recipes/{rng.randint(70, 99)}/">{esc(rng.choice(["Main Dishes", "Desserts", "Soups"]))}</a></li></ol></div>'
            f'<h1 id="article-heading_1-0" class="comp article-heading text-headline-400">{esc(dish)}</h1><div id="article-header--recipe_1-0" class="comp article-header--recipe mntl-block"><div id="mntl-recipe-review-bar_1-0" class="comp mntl-recipe-review-bar mntl-block"><div id="mntl-recipe-review-bar__rating_1-0" class="comp mntl-recipe-review-bar__rating mntl-text-block type--squirrel-bold">{rating[:3]}</div>'
            f'<div id="mntl-recipe-review-bar__rating-count_1-0" class="comp mntl-recipe-review-bar__rating-count mntl-text-block type--squirrel">({votes:,})</div><div class="comp mntl-recipe-review-bar__comment-count mntl-text-block type--squirrel-link">{rng.randint(1, 900)} Reviews</div><div class="comp mntl-recipe-review-bar__photo-count mntl-text-block">{rng.randint(1, 99)} Photos</div></div>'
            f'<div id="mntl-bylines_1-0" class="comp mntl-bylines"><div class="comp mntl-bylines__group mntl-bylines__group--author"><span class="mntl-bylines__item">Submitted by <a class="mntl-attribution__item-name" href="/cook/{rng.randint(1, 99999)}">{esc(author)}</a></span></div><div class="mntl-attribution__item-date">Updated on {_date(rng)}</div></div>'
            '<div class="comp mntl-recipe-actions"><button class="mntl-save-button">Save</button><button class="mntl-rate-button">Rate</button><button class="mntl-print-button">Print</button><button class="mntl-share-button">Share</button></div></div></div>'
            f'<div id="article-content_1-0" class="comp article-content mntl-block"><div id="article__photo-ribbon_1-0" class="comp article__photo-ribbon"><img alt="{esc(dish)}" src="/thmb/{_h(rng, 20)}.jpg"><div class="photo-ribbon__credit">{esc(_name(rng))}</div></div>'
            f'<div id="mntl-sc-page_1-0" class="comp mntl-sc-page mntl-block article-intro">{intro_html}</div>'
            f'<div id="mntl-recipe-details_1-0" class="comp mntl-recipe-details mntl-block"><div class="mntl-recipe-details__content"><div class="mntl-recipe-details__item"><div class="mntl-recipe-details__label">Prep Time:</div><div class="mntl-recipe-details__value">{prep} mins</div></div><div class="mntl-recipe-details__item"><div class="mntl-recipe-details__label">Cook Time:</div><div class="mntl-recipe-details__value">{cook} mins</div></div><div class="mntl-recipe-details__item"><div class="mntl-recipe-details__label">Servings:</div><div class="mntl-recipe-details__value">{rng.randint(2, 12)}</div></div></div></div>'
            f'<div id="mntl-structured-ingredients_1-0" class="comp mntl-structured-ingredients"><h2 id="mntl-sc-block_{rng.randint(1, 99)}-0" class="comp mntl-sc-block mntl-sc-block-heading"><span class="mntl-sc-block-heading__text">Ingredients</span></h2>'
            '<div class="mntl-recipe-serving-adjust"><button class="recipe-serving-adjust__button" data-multiplier="0.5">1/2x</button><button class="recipe-serving-adjust__button is-selected" data-multiplier="1">1x</button><button class="recipe-serving-adjust__button" data-multiplier="2">2x</button><p class="recipe-serving-adjust__note">Original recipe (1X) yields 4 servings</p></div>'
            f'{ing}</div><div id="recipe__steps_1-0" class="comp recipe__steps"><div id="recipe__steps-heading_1-0" class="comp recipe__steps-heading mntl-text-block"><h2>Directions</h2></div><div id="recipe__steps-content_1-0" class="comp recipe__steps-content mntl-sc-page mntl-block"><ol id="mntl-sc-block_1-0" class="comp mntl-sc-block mntl-sc-block-startgroup mntl-sc-block-group--OL">{stp}</ol>{notes_html}</div></div>'
            f'{ad}<div class="comp mntl-recipe-madeit"><button class="mntl-madeit-button">I Made It</button><button>Print</button></div>{nutrition}</div>'
            f'<div id="mntl-ugc-feedback_1-0" class="comp mntl-ugc-feedback"><h2 class="feedback-list__heading">Reviews ({rng.randint(10, 900)})</h2><div class="feedback-list__sort">Most helpful <button>Newest</button></div>{reviews}<button class="feedback-list__load-more">Load More Reviews</button></div></article>'
            '<aside class="right-rail"><div class="comp mntl-right-rail-ad"><div class="mntl-gpt-adunit gpt square"></div></div><div class="comp mntl-recirc"><h3 class="mntl-recirc__heading">You’ll Also Love</h3><ul>' + "".join(f'<li><a href="/recipe/{rng.randint(1000, 99999)}/{_slug(d)}/"><span class="card__title-text">{esc(d)}</span><span class="recipe-card-meta__rating-count-number">{rng.randint(10, 5000)} Ratings</span></a></li>' for d in rng.sample(DISHES, 4)) + "</ul></div></aside></main>"
            '<footer id="footer_1-0" class="comp footer mntl-footer" role="contentinfo"><div class="footer__inner"><ul class="footer__links">' + "".join(f"<li><a>{x}</a></li>" for x in ["About Us", "Editorial Process", "Anti-Racism Pledge", "Privacy Policy", "Product Vetting", "Terms of Service", "Advertise", "Careers", "Contact", "Your Privacy Choices"])
            + f'</ul><p class="footer__copyright">{esc(site)} is part of the Dotdash Meredith publishing family.</p></div></footer>'
        )
        head = ld + '<script>window.Mntl = window.Mntl || {}; Mntl.csm = {"docId":' + str(rng.randint(10**6, 10**7)) + "};</script>"
        return _document(head, body, charset, f"{dish} Recipe", body_attrs=' class="mntl-body recipe-sc"'), _truth(truth_blocks), f"https://www.{_slug(site).replace('-', '')}.example.com/recipe/{rng.randint(1000, 99999)}/{slug}/"

    truth_blocks = [*story, ("h3", "Ingredients"), *_ingredient_blocks(groups), ("h3", "Instructions"), ("ol", steps)]
    if notes:
        truth_blocks += [("h3", notes_head), *(("p", n) for n in notes)]
    # the intro story with ads between paragraphs (Raptive / Mediavine slots)
    story_html = []
    for k, b in enumerate(story):
        story_html.append(_render(b, rng, {"h2": "wp-block-heading", "ul": "wp-block-list"}))
        if b[0] == "p" and rng.random() < 0.4:
            story_html.append(f'<div class="adthrive-ad adthrive-content adthrive-content-{k + 1} adthrive-ad-cls" data-google-query-id="{_h(rng, 22)}" style="min-height: 250px;"><div id="cls-video-container-{_h(rng, 8)}"><span class="adthrive-ad-label">Advertisement</span></div></div>')
        if i == 1 and k == 0:
            story_html.append('<div class="feast-modern-category-layout"><h2 class="wp-block-heading">More Easy Weeknight Dinners</h2><ul class="fsri-list">' + "".join(f'<li class="listing-item"><a href="/{_slug(d)}/"><img src="/wp-content/uploads/{_h(rng)}.jpg" alt=""><div class="fsri-title">{esc(d)}</div></a></li>' for d in rng.sample(DISHES, 6)) + "</ul></div>")
    jump = (f'<div class="wprm-recipe-snippet wprm-recipe-snippet-container" data-recipe-id="{rng.randint(100, 99999)}"><a href="#recipe" data-recipe="1" style="color: #ffffff;background-color: #b75b32;border-color: #b75b32;border-radius: 0px;padding: 5px 8px;" class="wprm-recipe-jump wprm-recipe-link wprm-jump-to-recipe-shortcode wprm-block-text-normal wprm-recipe-jump-inline-button wprm-recipe-link-inline-button wprm-color-accent">Jump to Recipe</a> '
            '<a href="/wprm_print/1" style="color: #ffffff;background-color: #b75b32;" class="wprm-recipe-print wprm-recipe-link wprm-print-recipe-shortcode wprm-block-text-normal wprm-recipe-print-inline-button wprm-recipe-link-inline-button wprm-color-accent" data-recipe-id="1" data-template="" target="_blank" rel="nofollow">Print Recipe</a></div>') if variant == "wprm" else (
            f'<div class="tasty-recipes-quick-links"><a class="tasty-recipes-jump-link" href="#tasty-recipes-{rng.randint(10, 9999)}-jump-target">Jump to Recipe</a> <span>·</span> <a class="tasty-recipes-print-link" href="/tasty-recipes/print/1">Print Recipe</a></div>')
    disclosure = '<p class="disclosure"><em>This post may contain affiliate links. Please read our <a href="/disclosure/">disclosure policy</a>.</em></p>' if rng.random() < 0.7 else ""
    if variant == "wprm":
        ing = ""
        for name, lines in groups:
            ing += '<div class="wprm-recipe-ingredient-group">' + (f'<h4 class="wprm-recipe-group-name wprm-recipe-ingredient-group-name wprm-block-text-bold">{esc(name)}</h4>' if name else "") + '<ul class="wprm-recipe-ingredients">'
            for ln in lines:
                amt, rest = ln.split(" ", 1)
                ing += (f'<li class="wprm-recipe-ingredient" style="list-style-type: disc;" data-uid="{rng.randint(0, 99)}"><span class="wprm-checkbox-container"><input type="checkbox" id="wprm-checkbox-{rng.randint(0, 999)}" class="wprm-checkbox" aria-label="&nbsp;"><label for="wprm-checkbox-1" class="wprm-checkbox-label"></label></span>'
                        f'<span class="wprm-recipe-ingredient-amount">{esc(amt)}</span> <span class="wprm-recipe-ingredient-name">{esc(rest)}</span></li>')
            ing += "</ul></div>"
        stp = "".join(f'<li id="wprm-recipe-1-step-0-{k}" class="wprm-recipe-instruction" style="list-style-type: decimal;"><div class="wprm-recipe-instruction-text" style="margin-bottom: 5px;"><span style="display: block;">{esc(t)}</span></div></li>' for k, t in enumerate(steps))
        card = (
            f'<div id="recipe"></div><div id="wprm-recipe-container-1" class="wprm-recipe-container" data-recipe-id="1" data-servings="4"><div class="wprm-recipe wprm-recipe-template-feast-modern" style="display: block;"><div class="wprm-container-float-right"><div class="wprm-recipe-image wprm-block-image-normal"><img style="border-width: 0px;border-style: solid;border-color: #666666;" width="200" height="200" src="/wp-content/uploads/{_h(rng)}-200x200.jpg" class="attachment-200x200 size-200x200" alt=""></div></div>'
            f'<h2 class="wprm-recipe-name wprm-block-text-bold">{esc(dish)}</h2><div class="wprm-spacer" style="height: 5px"></div><style>#wprm-recipe-rating-0 .wprm-rating-star.wprm-rating-star-full svg * {{ fill: #343434; }}</style>'
            f'<div id="wprm-recipe-rating-0" class="wprm-recipe-rating wprm-recipe-rating-recipe-1 wprm-user-rating wprm-user-rating-allowed" data-recipe="1" data-average="{rating}" data-count="{votes}" data-total="{votes * 5}" data-user="0" data-decimals="2" data-modal-uid="user-rating"><span class="wprm-rating-star wprm-rating-star-1 wprm-rating-star-full" data-rating="1" data-color="#343434" role="button" tabindex="0" aria-label="Rate this recipe 1 out of 5 stars"><svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24"><polygon fill="#343434" stroke="#343434" stroke-width="2" points="12,2.6 15,9 21.4,9 16.7,13.9 18.6,21.4 12,17.6 5.4,21.4 7.3,13.9 2.6,9 9,9"/></svg></span>'
            f'<div class="wprm-recipe-rating-details wprm-block-text-normal"><span class="wprm-recipe-rating-average">{rating}</span> from <span class="wprm-recipe-rating-count">{votes}</span> votes</div></div>'
            f'<div class="wprm-recipe-meta-container wprm-recipe-times-container wprm-recipe-details-container wprm-recipe-details-container-inline wprm-block-text-normal"><div class="wprm-recipe-block-container wprm-recipe-block-container-inline wprm-block-text-normal wprm-recipe-time-container wprm-recipe-prep-time-container"><span class="wprm-recipe-details-label wprm-block-text-uppercase wprm-recipe-time-label wprm-recipe-prep-time-label">Prep Time </span><span class="wprm-recipe-time wprm-block-text-normal"><span class="wprm-recipe-details wprm-recipe-details-minutes wprm-recipe-prep_time wprm-recipe-prep_time-minutes">{prep}<span class="sr-only screen-reader-text wprm-screen-reader-text"> minutes</span></span> <span class="wprm-recipe-details-unit wprm-recipe-details-minutes wprm-recipe-prep_time-unit wprm-recipe-prep_timeunit-minutes" aria-hidden="true">mins</span></span></div>'
            f'<div class="wprm-recipe-block-container wprm-recipe-block-container-inline wprm-block-text-normal wprm-recipe-time-container wprm-recipe-cook-time-container"><span class="wprm-recipe-details-label wprm-block-text-uppercase wprm-recipe-time-label wprm-recipe-cook-time-label">Cook Time </span><span class="wprm-recipe-time wprm-block-text-normal">{cook} mins</span></div></div>'
            f'<div class="wprm-recipe-block-container wprm-recipe-block-container-inline wprm-block-text-normal wprm-recipe-servings-container"><span class="wprm-recipe-details-label wprm-block-text-uppercase wprm-recipe-servings-label">Servings </span><span class="wprm-recipe-servings-with-unit"><span class="wprm-recipe-servings wprm-recipe-details wprm-recipe-servings-1 wprm-recipe-servings-adjustable-tooltip wprm-block-text-normal" data-recipe="1" aria-label="Adjust recipe servings">4</span> <span class="wprm-recipe-servings-unit wprm-recipe-details-unit wprm-block-text-normal">people</span></span></div>'
            f'<div class="wprm-recipe-ingredients-container wprm-recipe-1-ingredients-container wprm-block-text-normal wprm-ingredient-style-regular" data-recipe="1" data-servings="4"><h3 class="wprm-recipe-header wprm-recipe-ingredients-header wprm-block-text-uppercase wprm-align-left wprm-header-decoration-none wprm-header-has-actions" style="">Ingredients</h3>'
            '<div class="wprm-recipe-adjustable-servings-container wprm-recipe-adjustable-servings-1-container wprm-toggle-container wprm-block-text-normal" style="background-color: #ffffff;border-color: #333333;color: #333333;border-radius: 3px;"><button href="#" class="wprm-recipe-adjustable-servings wprm-toggle wprm-toggle-active" data-multiplier="1" data-servings="4" data-recipe="1" aria-label="Adjust servings by 1x">1x</button><button href="#" class="wprm-recipe-adjustable-servings wprm-toggle" data-multiplier="2" data-servings="4" data-recipe="1" aria-label="Adjust servings by 2x">2x</button><button href="#" class="wprm-recipe-adjustable-servings wprm-toggle" data-multiplier="3" aria-label="Adjust servings by 3x">3x</button></div>'
            f'{ing}<div class="wprm-unit-conversion-container wprm-unit-conversion-container-1 wprm-unit-conversion-container-links wprm-block-text-normal"><a href="#" class="wprm-unit-conversion wprmpuc-active" data-system="1" data-recipe="1">US Customary</a> - <a href="#" class="wprm-unit-conversion" data-system="2" data-recipe="1">Metric</a></div></div>'
            f'<div class="wprm-recipe-instructions-container wprm-recipe-1-instructions-container wprm-block-text-normal" data-recipe="1"><h3 class="wprm-recipe-header wprm-recipe-instructions-header wprm-block-text-uppercase wprm-align-left wprm-header-decoration-none" style="">Instructions</h3><div class="wprm-recipe-instruction-group"><ul class="wprm-recipe-instructions">{stp}</ul></div></div>'
            + (f'<div id="recipe-video"></div><div class="wprm-recipe-video-container"><h3 class="wprm-recipe-header wprm-recipe-video-header wprm-block-text-uppercase">Video</h3><div class="wprm-recipe-video"><div class="adthrive-video-player in-post" data-video-id="{_h(rng, 8)}" data-player-type="static"><span class="adthrive-video-title">Watch: How to make {esc(dish)}</span></div></div></div>' if rng.random() < 0.4 else "")
            + (f'<div class="wprm-recipe-notes-container wprm-block-text-normal"><h3 class="wprm-recipe-header wprm-recipe-notes-header wprm-block-text-uppercase wprm-align-left wprm-header-decoration-none" style="">{notes_head}</h3><div class="wprm-recipe-notes">' + "".join(f'<span style="display: block;">{esc(n)}</span>' for n in notes) + "</div></div>" if notes else "")
            + f'<h3 class="wprm-recipe-header wprm-recipe-nutrition-header wprm-block-text-uppercase">Nutrition</h3><div class="wprm-nutrition-label-container wprm-nutrition-label-container-simple wprm-block-text-normal" style="text-align: left;"><span class="wprm-nutrition-label-text-nutrition-container wprm-nutrition-label-text-nutrition-container-calories"><span class="wprm-nutrition-label-text-nutrition-label wprm-block-text-normal" style="color: #777777">Calories: </span><span class="wprm-nutrition-label-text-nutrition-value" style="color: #333333">{kcal}</span><span class="wprm-nutrition-label-text-nutrition-unit" style="color: #333333">kcal</span></span><span style="color: #777777"> | </span><span class="wprm-nutrition-label-text-nutrition-container wprm-nutrition-label-text-nutrition-container-carbohydrates"><span class="wprm-nutrition-label-text-nutrition-label">Carbohydrates: </span><span class="wprm-nutrition-label-text-nutrition-value">{rng.randint(5, 90)}</span><span class="wprm-nutrition-label-text-nutrition-unit">g</span></span></div>'
            '<div class="wprm-recipe-meta-container wprm-recipe-tags-container wprm-recipe-details-container wprm-recipe-details-container-inline wprm-block-text-normal"><div class="wprm-recipe-block-container wprm-recipe-block-container-inline wprm-block-text-normal wprm-recipe-tag-container wprm-recipe-course-container"><span class="wprm-recipe-details-label wprm-block-text-uppercase wprm-recipe-tag-label wprm-recipe-course-label">Course </span><span class="wprm-recipe-course wprm-block-text-normal">Main Course</span></div></div>'
            f'<div class="wprm-call-to-action wprm-call-to-action-simple" style="color: #ffffff;background-color: #b75b32;margin: 0px;padding-top: 10px;padding-bottom: 10px;"><span class="wprm-recipe-icon wprm-call-to-action-icon"></span> <span class="wprm-call-to-action-text-container"><span class="wprm-call-to-action-header" style="color: #ffffff;">Tried this recipe?</span><span class="wprm-call-to-action-text">Mention <a href="https://www.instagram.com/{_slug(site).replace("-", "")}" target="_blank" rel="noreferrer noopener" style="color: #ffffff">@{_slug(site).replace("-", "")}</a> or tag <a href="https://www.instagram.com/explore/tags/{_slug(site).replace("-", "")}" target="_blank" rel="noreferrer noopener" style="color: #ffffff">#{_slug(site).replace("-", "")}</a>!</span></span></div></div></div>'
        )
    else:  # tasty recipes
        ing = ""
        for name, lines in groups:
            ing += (f"<h4>{esc(name)}</h4>" if name else "") + "<ul>" + "".join(f'<li data-tr-ingredient-checkbox=""><span class="tr-ingredient-checkbox-container"><input type="checkbox" name="" value="" aria-label="{esc(ln)}" data-tr-checkbox-listener-set="true"><span class="tr-ingredient-checkbox-custom" aria-hidden="true"></span></span><span data-amount="{esc(ln.split(" ")[0])}">{esc(ln.split(" ")[0])}</span> {esc(" ".join(ln.split(" ")[1:]))}</li>' for ln in lines) + "</ul>"
        card = (
            f'<span class="tasty-recipes-jump-target" id="tasty-recipes-1-jump-target" style="display:block;padding-top:2px;margin-top:-2px;"></span><div id="tasty-recipes-1" data-tr-id="1" class="tasty-recipes tasty-recipes-1 tasty-recipes-display tasty-recipes-has-image"><div class="tasty-recipe-image-container"><img width="225" height="225" src="/wp-content/uploads/{_h(rng)}-225x225.jpg" class="attachment-thumbnail size-thumbnail" alt="{esc(dish)}" data-pin-nopin="true"></div>'
            f'<div class="tasty-recipes-entry-header"><h2 class="tasty-recipes-title" data-tasty-recipes-customization="h2-color.color h2-transform.text-transform">{esc(dish)}</h2><div class="tasty-recipes-rating tasty-recipes-rating-stars" data-tasty-recipes-customization="detail-label-color.color"><span class="tasty-recipes-ratings-buttons" data-tr-default-rating="5"><span data-rating="5"><i class="checked" data-rating="5"></i></span></span>'
            f'<p class="tasty-recipes-ratings-buttons-label"><span class="tasty-recipes-rating-label" data-tasty-recipes-customization="detail-label-color.color"><span class="rating-label"><span class="average">{rating[:3]}</span> from <span class="count">{votes}</span> reviews</span></span></p></div>'
            '<div class="tasty-recipes-buttons"><div class="tasty-recipes-button-wrap"><a class="button tasty-recipes-print-button tasty-recipes-no-print" href="/tasty-recipes/print/1" target="_blank" data-tasty-recipes-customization="primary-color.background-color">Print Recipe</a></div><div class="tasty-recipes-button-wrap"><a class="share-pin button" data-pin-custom="true" href="https://www.pinterest.com/pin/create/bookmarklet/" target="_blank" data-tasty-recipes-customization="primary-color.background-color">Pin Recipe</a></div></div>'
            f'<div class="tasty-recipes-details"><ul><li class="author"><span class="tasty-recipes-label">Author:</span> <span class="tasty-recipes-author-name">{esc(author)}</span></li><li class="prep-time"><span class="tasty-recipes-label">Prep Time:</span> <span class="tasty-recipes-prep-time">{prep} minutes</span></li><li class="cook-time"><span class="tasty-recipes-label">Cook Time:</span> <span class="tasty-recipes-cook-time">{cook} minutes</span></li><li class="yield"><span class="tasty-recipes-label">Yield:</span> <span class="tasty-recipes-yield"><span data-amount="4">4</span> servings</span></li></ul></div></div>'
            f'<div class="tasty-recipes-entry-content"><div class="tasty-recipes-ingredients"><div class="tasty-recipes-ingredients-header"><h3 data-tasty-recipes-customization="h3-color.color h3-transform.text-transform">Ingredients</h3><div class="tasty-recipes-units-scale-container"><span class="tasty-recipes-scale-container"><span class="tasty-recipes-scale-label">Scale</span><button class="tasty-recipes-scale-button tasty-recipes-scale-button-active" data-amount="1" aria-label="Scale to 1x">1x</button><button class="tasty-recipes-scale-button" data-amount="2" aria-label="Scale to 2x">2x</button><button class="tasty-recipes-scale-button" data-amount="3" aria-label="Scale to 3x">3x</button></span></div></div>'
            f'<div class="tasty-recipes-ingredients-body" data-tasty-recipes-customization="body-color.color">{ing}</div></div>'
            '<div class="tasty-recipes-instructions"><div class="tasty-recipes-instructions-header"><h3 data-tasty-recipes-customization="h3-color.color h3-transform.text-transform">Instructions</h3></div><div class="tasty-recipes-instructions-body" data-tasty-recipes-customization="body-color.color"><ol>'
            + "".join(f'<li id="instruction-step-{k + 1}">{esc(t)}</li>' for k, t in enumerate(steps)) + "</ol></div></div>"
            + (f'<div class="tasty-recipes-notes"><h3 data-tasty-recipes-customization="h3-color.color h3-transform.text-transform">{notes_head}</h3><div class="tasty-recipes-notes-body" data-tasty-recipes-customization="body-color.color">' + "".join(f"<p>{esc(n)}</p>" for n in notes) + "</div></div>" if notes else "")
            + f'<div class="tasty-recipes-other-details"><ul><li class="category"><span class="tasty-recipes-label">Category:</span> Dinner</li><li class="method"><span class="tasty-recipes-label">Method:</span> Stovetop</li><li class="cuisine"><span class="tasty-recipes-label">Cuisine:</span> American</li></ul></div>'
            f'<div class="tasty-recipes-nutrition"><h3 data-tasty-recipes-customization="h3-color.color h3-transform.text-transform">Nutrition</h3><ul><li><span class="tasty-recipes-label">Serving Size:</span> <span class="tasty-recipes-serving-size">1 serving</span></li><li><span class="tasty-recipes-label">Calories:</span> <span class="tasty-recipes-calories">{kcal}</span></li></ul></div>'
            f'<div class="tasty-recipes-keywords"><p><span class="tasty-recipes-label">Keywords:</span> {esc(dish.lower())}, easy dinner</p></div></div>'
            f'<div class="tasty-recipes-entry-footer"><div class="tasty-recipes-footer-content"><svg class="tasty-recipes-footer-icon" viewBox="0 0 448 512"></svg><div class="tasty-recipes-footer-copy"><h3 data-tasty-recipes-customization="footer-heading-color.color">Did you make this recipe?</h3><p data-tasty-recipes-customization="footer-description-color.color">Tag <a href="https://www.instagram.com/x" target="_blank">@{_slug(site).replace("-", "")}</a> on Instagram and hashtag it <a href="#">#{_slug(site).replace("-", "")}</a></p></div></div></div></div>'
        )
    comments = _comments_wp(rng, rng.randint(20, 35) if i == 0 else rng.choice([0, 3, 9, 20]), dish).replace('<p class="comment-form-comment">', '<div class="comment-form-wprm-rating"><label for="wprm-comment-rating-1">Recipe Rating</label><span class="wprm-rating-stars"><fieldset class="wprm-comment-ratings-container" data-original-rating="0" data-current-rating="0"><legend>Recipe Rating</legend><input aria-label="Don&#039;t rate this recipe" name="wprm-comment-rating" value="0" type="radio" style="margin-left: -21px !important;"><span aria-hidden="true">&nbsp;</span><input aria-label="Rate this recipe 5 out of 5 stars" name="wprm-comment-rating" value="5" type="radio"></fieldset></span></div><p class="comment-form-comment">')
    feast_menu = "".join(f'<li id="menu-item-{k}" class="menu-item menu-item-type-taxonomy menu-item-object-category menu-item-{k}"><a href="/category/{_slug(x)}/" itemprop="url"><span itemprop="name">{esc(x)}</span></a></li>' for k, x in enumerate(["Recipes", "Dinner", "Dessert", "Breakfast", "Vegetarian", "About", "Shop"]))
    body = (
        f'<div class="site-container"><ul class="genesis-skip-link"><li><a href="#genesis-content" class="screen-reader-shortcut"> Skip to primary navigation</a></li><li><a href="#genesis-content" class="screen-reader-shortcut"> Skip to main content</a></li><li><a href="#genesis-sidebar-primary" class="screen-reader-shortcut"> Skip to primary sidebar</a></li></ul>'
        f'<header class="site-header" itemscope itemtype="https://schema.org/WPHeader"><div class="wrap"><div class="title-area"><p class="site-title" itemprop="headline"><a href="/">{esc(site)}</a></p></div><nav class="nav-primary" aria-label="Main" itemscope itemtype="https://schema.org/SiteNavigationElement" id="genesis-nav-primary"><div class="wrap"><ul id="menu-main" class="menu genesis-nav-menu menu-primary js-superfish">{feast_menu}</ul></div></nav></div></header>'
        f'<div class="site-inner"><div class="content-sidebar-wrap"><main class="content" id="genesis-content"><div class="breadcrumb" itemprop="breadcrumb" itemscope itemtype="https://schema.org/BreadcrumbList"><span class="breadcrumb-link-wrap"><a class="breadcrumb-link" href="/" itemprop="item"><span class="breadcrumb-link-text-wrap" itemprop="name">Home</span></a></span> <span aria-label="breadcrumb separator">»</span> <span class="breadcrumb-link-wrap"><a class="breadcrumb-link" href="/category/dinner/">Dinner</a></span> <span aria-label="breadcrumb separator">»</span> {esc(dish)}</div>'
        f'<article class="post-{rng.randint(100, 99999)} post type-post status-publish format-standard has-post-thumbnail category-dinner entry" aria-label="{esc(dish)}" itemscope itemtype="https://schema.org/CreativeWork"><header class="entry-header"><h1 class="entry-title" itemprop="headline">{esc(dish)}</h1>'
        f'<p class="entry-meta">By <span class="entry-author" itemprop="author" itemscope itemtype="https://schema.org/Person"><a href="/about/" class="entry-author-link" rel="author" itemprop="url"><span class="entry-author-name" itemprop="name">{esc(author)}</span></a></span> <span class="entry-modified-time">Updated: <time datetime="{_iso(rng)}">{_date(rng)}</time></span> <span class="entry-comments-link"><a href="#comments">{rng.randint(0, 300)} Comments</a></span></p></header>'
        f'<div class="entry-content" itemprop="text">{disclosure}{jump}{"".join(story_html)}<div class="wp-block-image"><figure class="aligncenter size-full"><img decoding="async" src="/wp-content/uploads/{_h(rng)}.jpg" alt="{esc(dish)} on a plate" class="wp-image-1"><figcaption class="wp-element-caption">{esc(dish)}, fresh from the oven.</figcaption></figure></div>{card}</div>'
        f'<footer class="entry-footer"><div class="feast-author-box"><img src="/wp-content/uploads/{_h(rng)}.jpg" alt=""><h3>About {esc(author)}</h3><p>{esc(_trim_words(rng.choice(_prose()), 20))}</p></div><div class="feast-subscribe"><h3>Get new recipes by email!</h3><form><input type="email" placeholder="Email address"><button>Subscribe</button></form></div></footer></article>'
        f'<h2 class="screen-reader-text">Reader Interactions</h2>{comments}</main>'
        f'<aside class="sidebar sidebar-primary widget-area" role="complementary" aria-label="Primary Sidebar" itemscope itemtype="https://schema.org/WPSideBar" id="genesis-sidebar-primary"><h2 class="genesis-sidebar-title screen-reader-text">Primary Sidebar</h2><section id="text-2" class="widget widget_text"><div class="widget-wrap"><div class="textwidget"><p><img src="/me.jpg" alt=""></p><p>Hi, I’m {esc(author.split()[0])}! Welcome to my kitchen, where I share easy recipes for busy families.</p><p><a href="/about/">More about me →</a></p></div></div></section>'
        '<section class="widget feast-popular"><div class="widget-wrap"><h3 class="widgettitle widget-title">Popular Recipes</h3><ul>' + "".join(f'<li><a href="/{_slug(d)}/">{esc(d)}</a></li>' for d in rng.sample(DISHES, 5)) + "</ul></div></section></aside></div></div>"
        f'<footer class="site-footer" itemscope itemtype="https://schema.org/WPFooter"><div class="wrap"><p>Copyright © {rng.randint(2018, 2025)} {esc(site)} • <a href="/privacy-policy/">Privacy Policy</a> • <a href="/accessibility/">Accessibility</a></p><p>As an Amazon Associate I earn from qualifying purchases.</p></div></footer></div>'
        '<div id="adthrive-sticky-outstream-container" class="adthrive-sticky-outstream"><div class="adthrive-ad adthrive-sticky-outstream adthrive-ad-cls"><button class="adthrive-close">Close</button></div></div>'
    )
    head = ld + "<script data-no-optimize=\"1\" data-cfasync=\"false\">(function(w, d) { w.adthrive = w.adthrive || {}; w.adthrive.cmd = w.adthrive.cmd || []; w.adthrive.plugin = 'adthrive-ads-3.5.4'; })(window, document);</script><style id='wprm-inline'>.wprm-recipe-template-feast-modern{margin:20px auto}</style>"
    return _document(head, body, charset, f"{dish} - {site}", body_attrs=' class="wp-singular post-template-default single single-post feast-plugin wp-custom-logo header-full-width content-sidebar genesis-breadcrumbs-visible"'), _truth(truth_blocks), f"https://{_slug(site).replace('-', '')}.example.com/{slug}/"



# ------------------------------------------------------------------------------------------- press-gov

COMPANIES = ["Northbay Robotics", "Kestrel Energy", "Lumen Health", "Orbital Freight", "Cobalt Analytics", "Willow Foods", "Summit Bank"]
AGENCIES = ["Department for Digital Infrastructure", "Office for Road Safety", "Ministry of Coastal Affairs", "National Archives Service", "Department of Energy Efficiency"]
UNIS = ["University of Northfield", "Eastbrook University", "Harbor State University", "Kingsmere College"]


def _press_content(rng: random.Random, i: int, charset: str) -> tuple[list[Block], str]:
    """Release body blocks (dateline in the first paragraph, quotes) and the company."""
    company = rng.choice(COMPANIES)
    prose = _prose()
    words = 60 if i == 0 else rng.choice([200, 350, 500, 800, 1200])
    blocks = _article_blocks(rng, words, rich=rng.random() < 0.3)
    city = rng.choice(["BERLIN", "AUSTIN, Texas", "LONDON", "TORONTO", "SAN FRANCISCO"])
    first = next(k for k, b in enumerate(blocks) if b[0] == "p")
    blocks[first] = ("p", f"{city}, {_date(rng)} /PRNewswire/ -- {company} today announced {str(blocks[first][1])[0].lower()}{str(blocks[first][1])[1:]}")
    if i != 0:
        for _ in range(rng.randint(1, 2)):
            blocks.insert(rng.randint(first + 1, len(blocks)), ("p", f"“{_trim_words(rng.choice(prose), rng.randint(15, 35))}” said {_name(rng)}, {rng.choice(['chief executive officer', 'head of research', 'president'])} of {company}."))
    if charset != "utf-8":
        blocks.insert(first + 1, ("p", _extra(charset, rng)))
    return blocks, company


def _press_gov(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("prnewswire", "govuk", "uswds", "university", "globenewswire")[i % 5] if i >= 3 else rng.choice(["prnewswire", "govuk", "uswds", "university", "globenewswire"])
    title = _title(rng)
    if variant in ("prnewswire", "globenewswire"):
        blocks, company = _press_content(rng, i, charset)
        if variant == "globenewswire":
            blocks = [(k, v.replace("/PRNewswire/", "(GLOBE NEWSWIRE)")) if k == "p" else (k, v) for k, v in blocks]
        about = [("h3" if variant == "globenewswire" else "p", f"About {company}"), ("p", f"{company} " + _trim_words(rng.choice(_prose()), rng.randint(25, 50)).lower())]
        truth_blocks = [*blocks, *about]
        contact = f'<p>Media Contact:<br>{esc(_name(rng))}<br>{_slug(company)}@example.com<br>+1 {rng.randint(200, 999)}-555-{rng.randint(1000, 9999)}</p>'
        if variant == "prnewswire":
            body_html = "".join(_render(b, rng) for b in blocks)
            about_html = f'<p><b>{esc(about[0][1])}</b></p><p>{esc(about[1][1])}</p>'
            if i == 1:
                body_html = body_html.replace("</p>", '</p><div class="pr-ad"><p>Explore more news releases in similar topics: <a href="/news-releases/">Technology</a></p></div>', 1)
            body = (
                '<a class="skip-to-content" href="#main">Skip to content</a><div class="pnr-header"><header class="container-fluid navbar-main" role="banner"><nav class="navbar" aria-label="Main"><a class="navbar-brand" href="/">PR Newswire</a><ul class="nav navbar-nav">'
                + "".join(f'<li class="dropdown"><a class="dropdown-toggle" data-toggle="dropdown" href="#">{x}</a><ul class="dropdown-menu">' + "".join(f"<li><a>{y}</a></li>" for y in rng.sample(["All News Releases", "Business &amp; Money", "Science &amp; Tech", "Lifestyle &amp; Health", "Policy &amp; Public Interest", "People &amp; Culture", "Multimedia Gallery", "Trending Topics"], 5)) + "</ul></li>" for x in ["News", "Products", "Contact"])
                + '</ul><div class="navbar-right"><a class="btn" href="/account/login">Login</a><a class="btn btn-primary" href="/contact-us">Send a Release</a></div></nav></header></div>'
                f'<main id="main"><article class="news-release inline-gallery-template"><header class="container release-header"><div class="row"><div class="col-sm-12 col-lg-10 col-lg-offset-1"><h1>{esc(title)}</h1><p class="subtitle">{esc(_trim_words(rng.choice(_prose()), 14))}</p></div></div>'
                f'<div class="row"><div class="col-lg-8 col-lg-offset-1"><div class="release-source"><p class="mb-no">News provided by</p><a href="/news/{_slug(company)}/" class="color-black"><strong>{esc(company)}</strong></a><p class="mb-no">{_date(rng)}, 08:00 ET</p></div>'
                '<div class="social-share-module"><ul class="social-share-list"><li><a class="share-facebook" href="#">Share this article</a></li><li><a class="share-twitter">X</a></li><li><a class="share-linkedin">LinkedIn</a></li><li><a class="share-email">Email</a></li></ul></div></div></div></header>'
                f'<section class="release-body container "><div class="row"><div class="col-lg-10 col-lg-offset-1">{body_html}{about_html}{contact}<p>SOURCE {esc(company)}</p>'
                '<img alt="" src="https://rt.prnewswire.com/rt.gif?NewsItemId=NY12345&amp;Transmission_Id=202501010800PR_NEWS_USPR_____NY12345&amp;DateId=20250101" style="border:0px; width:1px; height:1px;"></div></div></section>'
                f'<div class="container"><div class="row"><div class="col-lg-10 col-lg-offset-1"><p class="mb-no">View original content to download multimedia:<a href="https://www.prnewswire.com/news-releases/{_slug(title)}-30{rng.randint(1000000, 9999999)}.html">https://www.prnewswire.com/news-releases/{_slug(title)}.html</a></p></div></div></div>'
                f'<section class="release-sidebar"><h3>Also from this source</h3><ul>' + "".join(f'<li><a>{esc(t)}</a><p>{_date(rng)}</p></li>' for t in _teasers(rng, 3)) + "</ul><h3>Explore</h3><ul>" + "".join(f"<li><a>{x}</a></li>" for x in ["Computer &amp; Electronics", "Artificial Intelligence", "Product Launches"]) + "</ul></section></article></main>"
                '<footer class="pnr-footer"><div class="container"><ul>' + "".join(f"<li><a>{x}</a></li>" for x in ["Contact", "About Cision", "Terms of Use", "Privacy Policy", "Information Security Policy", "Site Map", "RSS", "Cookie Settings"]) + f"</ul><p>Copyright © {rng.randint(2020, 2025)} Cision US Inc.</p></div></footer>"
            )
        else:
            body_html = "".join(_render(b, rng) for b in blocks)
            about_html = f'<h3>{esc(about[0][1])}</h3><p>{esc(about[1][1])}</p>'
            if i == 1:
                body_html = body_html.replace("</p>", f'</p><div class="main-tags"><p>Tags</p><a>{esc(company)}</a><a>Earnings</a></div>', 1)
            body = (
                '<div id="skip-navigation"><a href="#maincontainer" class="skip-link">Skip to main content</a></div><header class="header-wrapper"><div class="header-container"><a class="logo" href="/">GlobeNewswire</a><nav class="main-nav" role="navigation" aria-label="main navigation"><ul><li><a>Newsroom</a></li><li><a>Organizations</a></li><li><a>Subjects</a></li><li><a>Search</a></li></ul></nav><a class="btn-sign-in">Sign In</a></div></header>'
                f'<div id="maincontainer" class="main-container" role="main"><div class="article-published-source"><span>Source: </span><a href="/en/search/organization/{_slug(company)}">{esc(company)}</a></div><h1 class="article-headline">{esc(title)}</h1>'
                f'<div class="main-header-container"><span class="article-published"><time datetime="{_iso(rng)}">{_date(rng)} 09:00 ET</time></span> | Source: <span class="article-source">{esc(company)}</span></div>'
                '<div class="main-scroll-container"><div class="social-media-share"><a title="Share on Twitter">Twitter</a><a title="Share on Facebook">Facebook</a><a title="Share on LinkedIn">LinkedIn</a></div>'
                f'<div id="main-body-container" class="main-body-container article-body" itemprop="articleBody">{body_html}{about_html}<p><strong>Contact</strong><br>{esc(_name(rng))}<br>press@example.com</p></div>'
                f'<div class="related-links"><h3>Related Links</h3><ul><li><a href="https://{_slug(company)}.example.com">{_slug(company)}.example.com</a></li></ul></div>'
                f'<div class="main-tags-attachments-container"><h2>Attachments</h2><ul><li><a>{esc(company)} logo</a></li></ul></div></div></div>'
                '<section class="news-release-list"><h2>Recent releases</h2><ul>' + "".join(f"<li><a>{esc(t)}</a> <span>{_date(rng)}</span></li>" for t in _teasers(rng, 4)) + "</ul></section>"
                f'<footer class="footer"><div class="footer-links"><a>Contact Us</a> <a>Privacy</a> <a>Terms of Service</a> <a>Cookie Policy</a></div><p>© {rng.randint(2020, 2025)} GlobeNewswire, Inc. All Rights Reserved.</p></footer>'
            )
        head = _json_ld({"@context": "https://schema.org", "@type": "NewsArticle", "headline": title, "publisher": {"@type": "Organization", "name": "PR Newswire" if variant == "prnewswire" else "GlobeNewswire"}})
        url = f"https://www.{variant}.example.com/news-releases/{_slug(title)}-{rng.randint(10**8, 10**9)}.html"
        return _document(head, body, charset, f"{title}"), _truth(truth_blocks), url

    prose = _prose()
    blocks = _body_blocks(rng, i, charset, 50)
    if variant == "govuk":
        agency = rng.choice(AGENCIES)
        lead = _trim_words(rng.choice(prose), rng.randint(12, 25))
        notes = [("h2", "Notes to editors"), ("ol", [_trim_words(rng.choice(prose), rng.randint(8, 20)) for _ in range(rng.randint(2, 4))])] if i != 0 and rng.random() < 0.5 else []
        truth_blocks = [*blocks, *notes]
        gov_html = "".join(_render(b, rng, {"h2": lambda: f' id="{_h(rng, 6)}"', "h3": lambda: f' id="{_h(rng, 6)}"', "blockquote": ""}) for b in truth_blocks)
        if i == 1:
            gov_html = gov_html.replace("</p>", '</p><div class="call-to-action"><div class="govuk-inset-text">Sign up to receive email alerts about this topic. <a class="govuk-link" href="/email-signup">Get emails about this page</a></div></div>', 1)
        topics = ["Benefits", "Births, death, marriages and care", "Business and self-employed", "Childcare and parenting", "Citizenship and living in the UK", "Crime, justice and the law", "Disabled people", "Driving and transport", "Education and learning", "Employing people", "Environment and countryside", "Housing and local services", "Money and tax", "Passports, travel and living abroad", "Visas and immigration", "Working, jobs and pensions"]
        body = (
            '<script>document.body.className += " js-enabled" + ("noModule" in HTMLScriptElement.prototype ? " govuk-frontend-supported" : "");</script>'
            '<div id="global-cookie-message" class="gem-c-cookie-banner govuk-clearfix" data-module="cookie-banner" data-nosnippet role="region" aria-label="Cookies on GOV.UK"><div class="govuk-cookie-banner js-banner-wrapper" role="region" aria-label="Cookies on GOV.UK"><div class="gem-c-cookie-banner__message govuk-cookie-banner__message govuk-width-container"><div class="govuk-grid-row"><div class="govuk-grid-column-two-thirds"><h2 class="govuk-cookie-banner__heading govuk-heading-m">Cookies on GOV.UK</h2><div tabindex="-1" class="govuk-cookie-banner__content gem-c-cookie-banner__content"><p class="govuk-body">We use some essential cookies to make this website work.</p><p class="govuk-body">We’d like to set additional cookies to understand how you use GOV.UK, remember your settings and improve government services.</p><p class="govuk-body">We also use cookies set by other sites to help us deliver content from their services.</p></div></div></div>'
            '<div class="js-confirmation-buttons govuk-button-group"><button class="govuk-button" type="submit" data-accept-cookies="true" data-cookie-types="all">Accept additional cookies</button><button class="govuk-button" type="submit" data-reject-cookies="true">Reject additional cookies</button><a class="govuk-link" href="/help/cookies">View cookies</a></div></div></div></div>'
            '<a href="#content" class="gem-c-skip-link govuk-skip-link govuk-!-display-none-print" data-module="govuk-skip-link">Skip to main content</a>'
            '<header role="banner" data-module="gem-header" class="gem-c-layout-super-navigation-header" data-ga4-header><div class="gem-c-layout-super-navigation-header__container govuk-width-container govuk-clearfix"><div class="gem-c-layout-super-navigation-header__header-logo"><a class="govuk-header__link govuk-header__link--homepage" href="https://www.gov.uk/" id="logo" aria-label="Go to the GOV.UK homepage"><svg xmlns="http://www.w3.org/2000/svg" focusable="false" role="img" viewBox="0 0 324 60" height="30" width="162" fill="currentcolor" class="govuk-header__logotype" aria-label="GOV.UK"><title>GOV.UK</title><path d="M22.6 10.4c-1 .4-2-.1-2.4-1"></path></svg></a></div>'
            '<nav aria-labelledby="super-navigation-menu-heading" class="gem-c-layout-super-navigation-header__content" data-module="super-navigation-mega-menu"><h2 id="super-navigation-menu-heading" class="govuk-visually-hidden">Navigation menu</h2><div class="gem-c-layout-super-navigation-header__navigation-item"><a class="gem-c-layout-super-navigation-header__navigation-item-link" href="/browse"><span class="gem-c-layout-super-navigation-header__navigation-item-link-inner">Menu</span></a><button aria-controls="super-navigation-menu" aria-expanded="false" aria-label="Show navigation menu" class="gem-c-layout-super-navigation-header__navigation-top-toggle-button" hidden="hidden" type="button"><span class="gem-c-layout-super-navigation-header__navigation-top-toggle-button-inner">Menu</span></button>'
            '<div id="super-navigation-menu" hidden class="gem-c-layout-super-navigation-header__navigation-dropdown-menu"><div class="govuk-grid-row gem-c-layout-super-navigation-header__navigation-items"><div class="govuk-grid-column-two-thirds-from-desktop gem-c-layout-super-navigation-header__column--services-and-information"><h3 class="govuk-heading-m gem-c-layout-super-navigation-header__column-header">Services and information</h3><ul class="gem-c-layout-super-navigation-header__navigation-second-items gem-c-layout-super-navigation-header__navigation-second-items--topics">'
            + "".join(f'<li class="gem-c-layout-super-navigation-header__dropdown-list-item"><a class="govuk-link gem-c-layout-super-navigation-header__navigation-second-item-link" href="/browse/{_slug(t)}">{esc(t)}</a></li>' for t in topics)
            + '</ul></div><div class="govuk-grid-column-one-third-from-desktop gem-c-layout-super-navigation-header__column--government-activity"><h3 class="govuk-heading-m gem-c-layout-super-navigation-header__column-header">Government activity</h3><ul class="gem-c-layout-super-navigation-header__navigation-second-items gem-c-layout-super-navigation-header__navigation-second-items--government-activity">'
            + "".join(f'<li class="gem-c-layout-super-navigation-header__dropdown-list-item"><a class="govuk-link gem-c-layout-super-navigation-header__navigation-second-item-link gem-c-layout-super-navigation-header__navigation-second-item-link--with-description" href="/{_slug(t)}">{t}</a><p class="gem-c-layout-super-navigation-header__navigation-second-item-description">{d}</p></li>' for t, d in [("Departments", "Departments, agencies and public bodies"), ("News", "News stories, speeches, letters and notices"), ("Guidance and regulation", "Detailed guidance, regulations and rules"), ("Research and statistics", "Reports, analysis and official statistics"), ("Policy papers and consultations", "Consultations and strategy"), ("Transparency", "Data, Freedom of Information releases and corporate reports")])
            + '</ul></div></div></div></div><div class="gem-c-layout-super-navigation-header__search-item"><button id="super-search-menu-toggle" class="gem-c-layout-super-navigation-header__search-toggle-button" aria-controls="super-search-menu" aria-expanded="true" aria-label="Hide search menu" type="button"><span class="govuk-visually-hidden">Search GOV.UK</span></button></div></nav></div></header>'
            f'<div class="govuk-width-container"><div class="gem-c-contextual-breadcrumbs govuk-!-display-none-print"><nav data-module="ga4-link-tracker" aria-label="Breadcrumb" class="gem-c-breadcrumbs govuk-breadcrumbs govuk-breadcrumbs--collapse-on-mobile"><ol class="govuk-breadcrumbs__list"><li class="govuk-breadcrumbs__list-item"><a class="govuk-breadcrumbs__link" href="/">Home</a></li><li class="govuk-breadcrumbs__list-item"><a class="govuk-breadcrumbs__link" href="/browse/{_slug(topics[4])}">{esc(rng.choice(topics))}</a></li></ol></nav></div>'
            f'<main role="main" id="content" class="govuk-main-wrapper govuk-main-wrapper--auto-spacing" lang="en"><span id="Top"></span><div class="govuk-grid-row gem-print-columns-none"><div class="govuk-grid-column-two-thirds"><div class="gem-c-heading govuk-!-margin-bottom-8"><span class="govuk-caption-xl gem-c-heading__context">Press release</span><h1 class="gem-c-heading__text govuk-heading-l">{esc(title)}</h1></div></div>'
            f'<div class="govuk-grid-column-two-thirds"><p class="gem-c-lead-paragraph">{esc(lead)}</p></div></div>'
            f'<div class="govuk-grid-row gem-print-columns-none"><div class="govuk-grid-column-two-thirds"><div class="gem-c-metadata gem-c-metadata--inverse-padded" data-module="gem-toggle metadata"><dl><dt class="gem-c-metadata__term">From:</dt><dd class="gem-c-metadata__definition"><a href="/government/organisations/{_slug(agency)}" class="govuk-link">{esc(agency)}</a></dd><dt class="gem-c-metadata__term">Published</dt><dd class="gem-c-metadata__definition">{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2018, 2025)}</dd></dl></div></div></div>'
            f'<div class="govuk-grid-row gem-print-columns-none"><div class="govuk-grid-column-two-thirds"><div class="responsive-bottom-margin"><figure class="gem-c-figure"><img class="gem-c-figure__image" src="/media/{_h(rng)}.jpg" alt=""><figcaption class="gem-c-figure__figcaption"><p class="gem-c-figure__figcaption-text">{esc(_trim_words(rng.choice(prose), 8))}</p></figcaption></figure>'
            f'<div data-module="govspeak" class="gem-c-govspeak govuk-govspeak govuk-!-margin-bottom-0"><div class="govspeak">{gov_html}</div></div>'
            f'<div data-module="ga4-link-tracker" class="gem-c-published-dates gem-c-published-dates--history" id="full-publication-update-history" lang="en" data-module="gem-toggle"><p class="gem-c-published-dates__published">Published {rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2018, 2025)}</p>'
            + (f'<p class="gem-c-published-dates__last-updated">Last updated {rng.randint(1, 28)} {rng.choice(MONTHS)} 2025 <br><a href="#full-history" class="govuk-link">+ show all updates</a></p>' if rng.random() < 0.5 else "")
            + '</div></div><div class="gem-c-share-links govuk-!-display-none-print" data-module="ga4-link-tracker"><h2 class="gem-c-share-links__title govuk-heading-s">Share this page</h2><ul class="gem-c-share-links__list"><li class="gem-c-share-links__list-item"><a class="govuk-link govuk-link--no-underline gem-c-share-links__link" target="_blank" rel="noopener noreferrer external" href="https://www.facebook.com/sharer/sharer.php?u=x"><span class="gem-c-share-links__link-icon"><span class="govuk-visually-hidden">Share on </span>Facebook</span></a></li><li class="gem-c-share-links__list-item"><a class="govuk-link gem-c-share-links__link" href="https://twitter.com/share?url=x"><span class="govuk-visually-hidden">Share on </span>Twitter</a></li></ul></div></div>'
            '<div class="govuk-grid-column-one-third"><div class="gem-c-contextual-sidebar govuk-!-display-none-print"><div class="gem-c-related-navigation govuk-!-display-none-print" data-module="ga4-link-tracker"><h2 id="related-nav-related_items" class="gem-c-related-navigation__main-heading" data-track-count="sidebarRelatedItemSection">Related content</h2><nav class="gem-c-related-navigation__nav-section" aria-labelledby="related-nav-related_items" data-module="gem-toggle"><ul class="gem-c-related-navigation__link-list">'
            + "".join(f'<li class="gem-c-related-navigation__link"><a class="govuk-link gem-c-related-navigation__section-link gem-c-related-navigation__section-link--sidebar gem-c-related-navigation__section-link--other" href="/{_slug(t)}">{esc(t)}</a></li>' for t in _teasers(rng, 4))
            + '</ul></nav><h3 class="gem-c-related-navigation__sub-heading gem-c-related-navigation__sub-heading--sidebar">Explore the topic</h3><ul class="gem-c-related-navigation__link-list"><li class="gem-c-related-navigation__link"><a class="govuk-link gem-c-related-navigation__section-link">' + esc(rng.choice(topics)) + "</a></li></ul></div></div></div></div></main></div>"
            '<div class="govuk-width-container"><div class="gem-c-feedback govuk-!-display-none-print" data-module="feedback ga4-event-tracker"><div class="gem-c-feedback__prompt gem-c-feedback__js-show js-prompt" tabindex="-1"><div class="gem-c-feedback__prompt-content"><div class="gem-c-feedback__prompt-questions js-prompt-questions"><div class="gem-c-feedback__prompt-question-answer"><h2 class="gem-c-feedback__prompt-question">Is this page useful?</h2><ul class="gem-c-feedback__option-list"><li class="gem-c-feedback__option-list-item govuk-visually-hidden" hidden><a class="gem-c-feedback__prompt-link" role="button" hidden="hidden" aria-hidden="true" href="/contact/govuk">Maybe</a></li>'
            '<li class="gem-c-feedback__option-list-item"><button class="govuk-button gem-c-feedback__prompt-link js-page-is-useful" aria-expanded="false">Yes <span class="govuk-visually-hidden">this page is useful</span></button></li><li class="gem-c-feedback__option-list-item"><button class="govuk-button gem-c-feedback__prompt-link js-toggle-form js-page-is-not-useful" aria-controls="page-is-not-useful" aria-expanded="false">No <span class="govuk-visually-hidden">this page is not useful</span></button></li></ul></div></div>'
            '<div class="gem-c-feedback__prompt-questions gem-c-feedback__prompt-questions--something-is-wrong js-prompt-questions"><button class="govuk-button gem-c-feedback__prompt-link js-toggle-form js-something-is-wrong" aria-expanded="false" aria-controls="something-is-wrong">Report a problem with this page</button></div></div></div>'
            '<form action="/contact/govuk/problem_reports" id="something-is-wrong" class="gem-c-feedback__form js-feedback-form" data-track-category="Onsite Feedback" data-track-action="GOV.UK Send Form" method="post" hidden><div class="govuk-grid-row"><div class="govuk-grid-column-two-thirds"><div class="gem-c-feedback__error-summary gem-c-feedback__js-show js-errors" tabindex="-1" hidden></div><h3 class="gem-c-feedback__form-heading">Help us improve GOV.UK</h3><p id="feedback_explanation" class="gem-c-feedback__form-paragraph">Don’t include personal or financial information like your National Insurance number or credit card details.</p>'
            '<div class="govuk-form-group"><label for="input-what-doing" class="gem-c-label govuk-label">What were you doing?</label><input class="gem-c-input govuk-input" id="input-what-doing" name="what_doing" type="text"></div><div class="govuk-form-group"><label for="input-what-wrong" class="gem-c-label govuk-label">What went wrong?</label><input class="gem-c-input govuk-input" id="input-what-wrong" name="what_wrong" type="text"></div><button class="gem-c-button govuk-button" type="submit">Send</button><button class="govuk-button govuk-button--secondary gem-c-feedback__close js-close-form" aria-controls="something-is-wrong" aria-expanded="true">Cancel</button></div></div></form></div></div>'
            '<footer class="gem-c-layout-footer govuk-footer" role="contentinfo"><div class="govuk-width-container"><div class="govuk-footer__navigation"><div class="govuk-grid-column-two-thirds govuk-!-display-none-print"><h2 class="govuk-footer__heading govuk-heading-m">Services and information</h2><ul class="govuk-footer__list govuk-footer__list--columns-2">'
            + "".join(f'<li class="govuk-footer__list-item"><a class="govuk-footer__link" href="/browse/{_slug(t)}">{esc(t)}</a></li>' for t in topics)
            + '</ul></div></div><hr class="govuk-footer__section-break govuk-!-display-none-print"><div class="govuk-footer__meta"><div class="govuk-footer__meta-item govuk-footer__meta-item--grow"><h2 class="govuk-visually-hidden">Support links</h2><ul class="govuk-footer__inline-list govuk-!-display-none-print">'
            + "".join(f'<li class="govuk-footer__inline-list-item"><a class="govuk-footer__link" href="/{_slug(x)}">{x}</a></li>' for x in ["Help", "Privacy", "Cookies", "Accessibility statement", "Contact", "Terms and conditions", "Rhestr o Wasanaethau Cymraeg", "Government Digital Service"])
            + '</ul><svg aria-hidden="true" focusable="false" class="govuk-footer__licence-logo" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 483.2 195.7" height="17" width="41"><path fill="currentColor" d="M421.5 142.8V.1l-50.7 32.3v161.1h112.4v-50.7z"/></svg><span class="govuk-footer__licence-description">All content is available under the <a class="govuk-footer__link" href="https://www.nationalarchives.gov.uk/doc/open-government-licence/version/3/" rel="license">Open Government Licence v3.0</a>, except where otherwise stated</span></div>'
            '<div class="govuk-footer__meta-item"><a class="govuk-footer__link govuk-footer__copyright-logo" href="https://www.nationalarchives.gov.uk/information-management/re-using-public-sector-information/uk-government-licensing-framework/crown-copyright/">© Crown copyright</a></div></div></div></footer>'
        )
        head = '<meta name="govuk:format" content="press_release"><meta name="govuk:schema-name" content="news_article"><link rel="stylesheet" href="/assets/static/application.css" media="all">' + _json_ld({"@context": "http://schema.org", "@type": "NewsArticle", "headline": title, "description": lead})
        url = f"https://www.gov.uk/government/news/{_slug(title)}"
        return _document(head, body, charset, f"{title} - GOV.UK", html_attrs=' class="govuk-template govuk-template--rebranded"', body_attrs=' class="govuk-template__body gem-c-layout-for-public--draft"'), _truth(truth_blocks), url

    if variant == "uswds":
        agency = rng.choice(AGENCIES).replace("Department for", "Department of").replace("Ministry of", "Office of")
        intro = _trim_words(rng.choice(prose), rng.randint(15, 30))
        truth_blocks = [("p", intro), *blocks]
        content = f'<p class="usa-intro">{esc(intro)}</p>' + "".join(_render(b, rng, {"table": "usa-table", "ul": "usa-list"}) for b in blocks)
        if i == 1:
            content = content.replace("</p>", '</p><div class="usa-alert usa-alert--info usa-alert--slim" role="region" aria-label="Informative status"><div class="usa-alert__body"><p class="usa-alert__text">Stay informed: <a class="usa-link" href="/subscribe">Sign up for email updates</a> from this office. We will never share your email address.</p></div></div>', 2)
        megamenu = "".join(
            f'<li class="usa-nav__primary-item"><button type="button" class="usa-accordion__button usa-nav__link" aria-expanded="false" aria-controls="extended-mega-nav-section-{k}"><span>{x}</span></button><div id="extended-mega-nav-section-{k}" class="usa-nav__submenu usa-megamenu" hidden><div class="grid-row grid-gap-4">'
            + "".join('<div class="usa-col"><ul class="usa-nav__submenu-list">' + "".join(f'<li class="usa-nav__submenu-item"><a href="/{_slug(y)}"><span>{esc(y)}</span></a></li>' for y in rng.sample(["Grants", "Regulations", "Data", "Newsroom", "Careers", "Contact us", "FOIA", "Programs", "Reports", "Budget", "Leadership", "History", "Field offices", "Events"], 4)) + "</ul></div>" for _ in range(3))
            + "</div></div></li>" for k, x in enumerate(["About", "Programs", "Resources", "Newsroom"]))
        cur = ' class="usa-current"'
        sidenav = "".join(f'<li class="usa-sidenav__item"><a href="/{_slug(t)}"{cur if k == 1 else ""}>{esc(t)}</a></li>' for k, t in enumerate(_teasers(rng, 6)))
        domain = _slug(agency).replace("-", "")[:14] + ".gov"
        body = (
            '<a class="usa-skipnav" href="#main-content">Skip to main content</a><section class="usa-banner" aria-label="Official website of the United States government"><div class="usa-accordion"><header class="usa-banner__header"><div class="usa-banner__inner"><div class="grid-col-auto"><img aria-hidden="true" class="usa-banner__header-flag" src="/assets/img/us_flag_small.png" alt=""></div>'
            '<div class="grid-col-fill tablet:grid-col-auto" aria-hidden="true"><p class="usa-banner__header-text">An official website of the United States government</p><p class="usa-banner__header-action">Here’s how you know</p></div><button type="button" class="usa-accordion__button usa-banner__button" aria-expanded="false" aria-controls="gov-banner-default"><span class="usa-banner__button-text">Here’s how you know</span></button></div></header>'
            '<div class="usa-banner__content usa-accordion__content" id="gov-banner-default" hidden><div class="grid-row grid-gap-lg"><div class="usa-banner__guidance tablet:grid-col-6"><img class="usa-banner__icon usa-media-block__img" src="/assets/img/icon-dot-gov.svg" role="img" alt="" aria-hidden="true"><div class="usa-media-block__body"><p><strong>Official websites use .gov</strong><br>A <strong>.gov</strong> website belongs to an official government organization in the United States.</p></div></div>'
            '<div class="usa-banner__guidance tablet:grid-col-6"><img class="usa-banner__icon usa-media-block__img" src="/assets/img/icon-https.svg" role="img" alt="" aria-hidden="true"><div class="usa-media-block__body"><p><strong>Secure .gov websites use HTTPS</strong><br>A <strong>lock</strong> (<span class="icon-lock"><svg xmlns="http://www.w3.org/2000/svg" width="52" height="64" viewBox="0 0 52 64" class="usa-banner__lock-image" role="img" aria-labelledby="banner-lock-description" focusable="false"><title id="banner-lock-title">Lock</title><desc id="banner-lock-description">Locked padlock icon</desc><path fill="#000000" fill-rule="evenodd" d="M26 0c10.493 0 19 8.507 19 19v9h3a4 4 0 0 1 4 4v28a4 4 0 0 1-4 4H4a4 4 0 0 1-4-4V32a4 4 0 0 1 4-4h3v-9C7 8.507 15.507 0 26 0z"/></svg></span>) or <strong>https://</strong> means you’ve safely connected to the .gov website. Share sensitive information only on official, secure websites.</p></div></div></div></div></div></section>'
            f'<div class="usa-overlay"></div><header class="usa-header usa-header--extended"><div class="usa-navbar"><div class="usa-logo"><em class="usa-logo__text"><a href="/" title="{esc(agency)}">{esc(agency)}</a></em></div><button type="button" class="usa-menu-btn">Menu</button></div>'
            f'<nav aria-label="Primary navigation" class="usa-nav"><div class="usa-nav__inner"><button type="button" class="usa-nav__close"><img src="/assets/img/usa-icons/close.svg" role="img" alt="Close"></button><ul class="usa-nav__primary usa-accordion">{megamenu}</ul>'
            '<div class="usa-nav__secondary"><ul class="usa-nav__secondary-links"><li class="usa-nav__secondary-item"><a href="/contact">Contact us</a></li><li class="usa-nav__secondary-item"><a href="/es">Español</a></li></ul><section aria-label="Search component"><form class="usa-search usa-search--small" role="search"><label class="usa-sr-only" for="search-field">Search</label><input class="usa-input" id="search-field" type="search" name="search"><button class="usa-button" type="submit"><img src="/assets/img/usa-icons-bg/search--white.svg" class="usa-search__submit-icon" alt="Search"></button></form></section></div></div></nav></header>'
            f'<div class="usa-section"><div class="grid-container"><div class="grid-row grid-gap"><div class="usa-layout-docs__sidenav desktop:grid-col-3"><nav aria-label="Secondary navigation"><ul class="usa-sidenav">{sidenav}</ul></nav></div>'
            f'<main class="usa-layout-docs__main desktop:grid-col-9 usa-prose usa-layout-docs" id="main-content"><nav class="usa-breadcrumb" aria-label="Breadcrumbs,"><ol class="usa-breadcrumb__list"><li class="usa-breadcrumb__list-item"><a href="/" class="usa-breadcrumb__link"><span>Home</span></a></li><li class="usa-breadcrumb__list-item"><a href="/programs" class="usa-breadcrumb__link"><span>Programs</span></a></li><li class="usa-breadcrumb__list-item usa-current" aria-current="page"><span>{esc(title)}</span></li></ol></nav>'
            f'<h1>{esc(title)}</h1>{content}<p class="page-updated"><em>Last reviewed/updated: {_date(rng)}</em></p>'
            '<div id="touchpoints-form-embed" class="touchpoints-form-wrapper"><form class="usa-form usa-form--large margin-bottom-2"><fieldset class="usa-fieldset"><legend class="usa-legend usa-legend--large">Was this page helpful?</legend><div class="usa-radio"><input class="usa-radio__input" id="yes" type="radio" name="helpful" value="yes"><label class="usa-radio__label" for="yes">Yes</label></div><div class="usa-radio"><input class="usa-radio__input" id="no" type="radio" name="helpful" value="no"><label class="usa-radio__label" for="no">No</label></div></fieldset><p class="usa-hint">This survey is authorized under OMB control number 1234-5678. Do not enter personal information.</p><button type="submit" class="usa-button">Submit</button></form></div></main></div></div></div>'
            '<footer class="usa-footer usa-footer--slim"><div class="grid-container usa-footer__return-to-top"><a href="#">Return to top</a></div><div class="usa-footer__primary-section"><div class="usa-footer__primary-container grid-row"><div class="mobile-lg:grid-col-8"><nav class="usa-footer__nav" aria-label="Footer navigation,"><ul class="grid-row grid-gap">'
            + "".join(f'<li class="mobile-lg:grid-col-6 desktop:grid-col-auto usa-footer__primary-content"><a class="usa-footer__primary-link" href="/{_slug(x)}">{x}</a></li>' for x in ["Programs", "Newsroom", "Careers", "Contact us"])
            + f'</ul></nav></div><div class="mobile-lg:grid-col-4"><address class="usa-footer__address"><div class="grid-row grid-gap"><div class="grid-col-auto mobile-lg:grid-col-12 desktop:grid-col-auto"><div class="usa-footer__contact-info"><a href="tel:1-800-555-5555">(800) 555-{rng.randint(1000, 9999)}</a></div></div><div class="grid-col-auto"><div class="usa-footer__contact-info"><a href="mailto:info@{domain}">info@{domain}</a></div></div></div></address></div></div></div></footer>'
            f'<div class="usa-identifier"><section class="usa-identifier__section usa-identifier__section--masthead" aria-label="Agency identifier,"><div class="usa-identifier__container"><section class="usa-identifier__identity" aria-label="Agency description,"><p class="usa-identifier__identity-domain">{domain}</p><p class="usa-identifier__identity-disclaimer"><span aria-hidden="true">An </span>official website of the <a href="/">{esc(agency)}</a></p></section></div></section>'
            '<nav class="usa-identifier__section usa-identifier__section--required-links" aria-label="Important links,"><div class="usa-identifier__container"><ul class="usa-identifier__required-links-list">'
            + "".join(f'<li class="usa-identifier__required-links-item"><a href="/{_slug(x)}" class="usa-identifier__required-link usa-link">{x}</a></li>' for x in ["About", "Accessibility statement", "FOIA requests", "No FEAR Act data", "Office of the Inspector General", "Performance reports", "Privacy policy"])
            + '</ul></div></nav><section class="usa-identifier__section usa-identifier__section--usagov" aria-label="U.S. government information and services,"><div class="usa-identifier__container"><div class="usa-identifier__usagov-description">Looking for U.S. government information and services?</div> <a href="https://www.usa.gov/" class="usa-link">Visit USA.gov</a></div></section></div>'
            '<script src="/assets/js/uswds.min.js"></script><script async type="text/javascript" id="_fed_an_ua_tag" src="https://dap.digitalgov.gov/Universal-Federated-Analytics-Min.js?agency=GSA"></script>'
        )
        return _document('<script src="/assets/js/uswds-init.min.js"></script><link rel="stylesheet" href="/assets/css/styles.css">', body, charset, f"{title} | {agency}"), _truth(truth_blocks), f"https://www.{domain}/programs/{_slug(title)}"

    # university news (Drupal 10)
    uni = rng.choice(UNIS)
    truth_blocks = blocks
    body_html = "".join(_render(b, rng) for b in blocks)
    if i == 1:
        body_html = body_html.replace("</p>", '</p><div class="paragraph paragraph--type--related-stories"><h2 class="field__label">You might also like</h2><div class="field__items">' + "".join(f'<div class="field__item"><a href="/news/{_slug(t)}">{esc(t)}</a></div>' for t in _teasers(rng, 4)) + "</div></div>", 1)
    body = (
        '<a href="#main-content" class="visually-hidden focusable skip-link">Skip to main content</a><div class="dialog-off-canvas-main-canvas" data-off-canvas-main-canvas><div class="layout-container">'
        + (f'<div class="region region-alert"><div id="block-emergencyalert" class="block block-uni-alerts"><div class="alert alert--warning" role="alert"><p><strong>Campus update:</strong> {esc(rng.choice(["The library will close early on Friday for maintenance.", "Parking lot C is closed until further notice.", "Spring registration opens Monday."]))} <a href="/alerts">More information</a></p></div></div></div>' if rng.random() < 0.5 else "")
        + f'<header role="banner" class="site-header"><div class="region region-header"><div id="block-sitebranding" class="block block-system block-system-branding-block"><a href="/" rel="home" class="site-logo">{esc(uni)}</a></div>'
        '<nav role="navigation" aria-labelledby="block-mainnavigation-menu" id="block-mainnavigation" class="block block-menu navigation menu--main"><h2 class="visually-hidden" id="block-mainnavigation-menu">Main navigation</h2><ul class="menu menu--level-1">'
        + "".join(f'<li class="menu-item menu-item--expanded"><a href="/{_slug(x)}">{x}</a><ul class="menu menu--level-2">' + "".join(f'<li class="menu-item"><a href="/{_slug(y)}">{y}</a></li>' for y in rng.sample(["Undergraduate", "Graduate", "Financial aid", "Visit", "Research centers", "Libraries", "Athletics", "Alumni", "Give", "Calendar", "Directory", "Careers"], 4)) + "</ul></li>" for x in ["Admissions", "Academics", "Research", "Campus life", "About"])
        + '</ul></nav><div class="search-block-form block block-search" data-drupal-selector="search-block-form" id="block-searchform" role="search"><form action="/search/node" method="get" id="search-block-form" accept-charset="UTF-8"><div class="js-form-item form-item js-form-type-search form-type-search"><label for="edit-keys" class="visually-hidden">Search</label><input title="Enter the terms you wish to search for." data-drupal-selector="edit-keys" type="search" id="edit-keys" name="keys" size="15" maxlength="128" class="form-search"></div></form></div></div></header>'
        f'<div class="region region-breadcrumb"><div id="block-breadcrumbs" class="block block-system block-system-breadcrumb-block"><nav class="breadcrumb" role="navigation" aria-labelledby="system-breadcrumb"><h2 id="system-breadcrumb" class="visually-hidden">Breadcrumb</h2><ol><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ol></nav></div></div>'
        f'<main role="main"><a id="main-content" tabindex="-1"></a><div class="layout-content"><div class="region region-content"><div data-drupal-messages-fallback class="hidden"></div><div id="block-uni-page-title" class="block block-core block-page-title-block"><h1 class="page-title"><span class="field field--name-title field--type-string field--label-hidden">{esc(title)}</span></h1></div>'
        f'<div id="block-uni-content" class="block block-system block-system-main-block"><article role="article" about="/news/{rng.randint(2019, 2025)}/{_slug(title)}" class="node node--type-news node--promoted node--view-mode-full"><div class="node__meta"><span class="field field--name-field-byline">By {esc(_name(rng))}, University Communications</span> <span class="field field--name-created">{_date(rng)}</span></div>'
        f'<div class="field field--name-field-hero-image field--type-image field--label-hidden field__item"><img loading="lazy" src="/sites/default/files/{_h(rng)}.jpg" alt=""><div class="field field--name-field-caption">{esc(_trim_words(rng.choice(prose), 9))} (Photo: {esc(_name(rng))})</div></div>'
        f'<div class="node__content"><div class="clearfix text-formatted field field--name-body field--type-text-with-summary field--label-hidden field__item">{body_html}</div>'
        '<div class="field field--name-field-media-contact field--type-entity-reference field--label-above"><div class="field__label">Media contact</div><div class="field__item"><p>' + esc(_name(rng)) + '<br>news@example.edu<br>555-0100</p></div></div>'
        '<div class="field field--name-field-tags field--type-entity-reference field--label-inline clearfix"><div class="field__label">Tags</div><div class="field__items">' + "".join(f'<div class="field__item"><a href="/taxonomy/term/{rng.randint(1, 999)}" hreflang="en">{x}</a></div>' for x in rng.sample(["Research", "Students", "Faculty", "Awards", "Community", "Sustainability"], 3)) + "</div></div>"
        f'<div class="a2a_kit a2a_kit_size_32 addtoany_list" data-a2a-url="https://www.example.edu/news/{_slug(title)}" data-a2a-title="{esc(title)}"><a class="a2a_button_facebook"></a><a class="a2a_button_x"></a><a class="a2a_button_linkedin"></a><a class="a2a_button_email"></a><a class="a2a_dd addtoany_share" href="https://www.addtoany.com/share#url=x">Share</a></div></div></article></div>'
        '<div class="views-element-container block block-views" id="block-views-block-news-related"><h2>Related news</h2><div class="view view-news view-id-news view-display-id-related"><div class="view-content">' + "".join(f'<div class="views-row"><div class="views-field views-field-title"><span class="field-content"><a href="/news/{_slug(t)}" hreflang="en">{esc(t)}</a></span></div><div class="views-field views-field-created">{_date(rng)}</div></div>' for t in _teasers(rng, 3)) + "</div></div></div></div></div></main>"
        f'<footer role="contentinfo" class="site-footer"><div class="region region-footer"><div id="block-acknowledgement" class="block block-block-content"><div class="clearfix text-formatted field field--name-body"><p>{esc(uni)} acknowledges the traditional custodians of the land on which our campuses stand, and pays respect to their elders past and present. We are committed to reconciliation and to building a university where everyone belongs.</p></div></div>'
        f'<div id="block-footercontact" class="block"><p>{esc(uni)}<br>1 University Way, Northfield<br>Phone: 555-0100</p></div><nav role="navigation" class="block block-menu menu--footer"><ul class="menu">' + "".join(f'<li class="menu-item"><a href="/{_slug(x)}">{x}</a></li>' for x in ["Accessibility", "Privacy", "Non-discrimination statement", "Emergency information", "Careers", "Contact"]) + f'</ul></nav><p class="copyright">© {rng.randint(2020, 2025)} {esc(uni)}</p></div></footer></div></div>'
        '<script type="application/json" data-drupal-selector="drupal-settings-json">{"path":{"baseUrl":"\\/","pathPrefix":"","currentPath":"node\\/1234"},"pluralDelimiter":"\\u0003","ajaxPageState":{"libraries":"addtoany\\/addtoany.front,system\\/base"}}</script><script src="/core/misc/drupal.js?v=10.2.4"></script>'
    )
    return _document('<meta name="Generator" content="Drupal 10 (https://www.drupal.org)"><link rel="stylesheet" media="all" href="/themes/custom/uni/css/style.css">', body, charset, f"{title} | {uni}", html_attrs=' dir="ltr" prefix="content: http://purl.org/rss/1.0/modules/content/"', body_attrs=' class="path-node page-node-type-news"'), _truth(truth_blocks), f"https://www.{_slug(uni).replace('-', '')}.edu/news/{rng.randint(2019, 2025)}/{_slug(title)}"



# ------------------------------------------------------------------------------------------ docs-other

_API_MODULES = ["collections", "pathlib", "json", "argparse", "logging", "threading", "queue", "decimal", "fractions", "datetime", "textwrap", "difflib", "configparser", "csv", "zipfile", "tarfile", "email.message", "http.client", "string", "random", "shlex", "calendar"]


@functools.lru_cache(maxsize=1)
def _api_items() -> tuple[tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]], ...]:
    """(module, class, description paragraphs, ((method, parameter names, description paragraphs), ...))
    from the standard library's classes."""
    def paras(doc: str | None) -> tuple[str, ...]:
        out = []
        for para in re.split(r"\n\s*\n", inspect.cleandoc(doc or "")):
            p = " ".join(para.split())
            if p and not para.startswith(" ") and len(p.split()) >= 4 and not re.search(r"[`*#|<>{}\[\]]|>>>|::|-{3,}|={3,}", p):
                out.append(p)
        return tuple(out)
    items = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in _API_MODULES:
            try:
                mod = importlib.import_module(name)
            except ImportError:
                continue
            for cname, cls in sorted(vars(mod).items()):
                if cname.startswith("_") or not inspect.isclass(cls) or cls.__module__ != mod.__name__ or not paras(cls.__doc__):
                    continue
                methods = []
                for mname, fn in sorted(vars(cls).items()):
                    if mname.startswith("_") or not inspect.isfunction(fn) or not paras(fn.__doc__):
                        continue
                    try:
                        params = tuple(p for p in inspect.signature(fn).parameters if p not in ("self", "cls"))
                    except (TypeError, ValueError):
                        continue
                    methods.append((mname, params, paras(fn.__doc__)))
                if len(methods) >= 2:
                    items.append((mod.__name__, cname, paras(cls.__doc__), tuple(methods)))
    return tuple(items)


def _docs_site_blocks(rng: random.Random, i: int, charset: str) -> tuple[str, list[Block]]:
    title, blocks = _doc_blocks(rng, short=i == 0)
    blocks = list(blocks)
    if i != 0 and rng.random() < 0.5:
        blocks.insert(rng.randrange(1, len(blocks) + 1), ("code", rng.choice(_code_snippets())))
    if i != 0 and rng.random() < 0.3:
        blocks.insert(rng.randrange(1, len(blocks) + 1), ("table", [["Option", "Default", "Description"]] + [[w, rng.choice(["None", "true", "0", "\"auto\""]), _trim_words(rng.choice(_prose()), 6)] for w in rng.sample(["strict", "encoding", "timeout", "verbose", "retries", "cache"], 3)]))
    if charset != "utf-8":
        blocks.insert(0, ("p", _extra(charset, rng)))
    return title, blocks


def _docs_other(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("docusaurus", "gitbook", "javadoc", "rustdoc")[i % 4] if i >= 3 else rng.choice(["docusaurus", "gitbook", "javadoc", "rustdoc"])
    project = rng.choice(["Selene", "Pipewise", "Widgetry", "Netkit", "Lumen"])
    if variant in ("docusaurus", "gitbook"):
        title, blocks = _docs_site_blocks(rng, i, charset)
        note = (rng.choice(["note", "tip", "warning", "info"]), _trim_words(rng.choice(_prose()), 18)) if i != 0 and rng.random() < 0.5 else None
        pos = rng.randrange(1, len(blocks) + 1) if blocks else 0
        heads = [str(b[1]) for b in blocks if b[0] in ("h2", "h3")]
        sidebar_items = [t for t, _ in rng.sample(_documents(), rng.randint(8, 20))]
        if variant == "docusaurus":
            truth_blocks: list[Block] = [("h1", title), *blocks[:pos], *([("p", f"{note[0]}\n{note[1]}")] if note else []), *blocks[pos:]]
            parts = []
            for k, b in enumerate(blocks):
                if k == pos and note:
                    parts.append(f'<div class="theme-admonition theme-admonition-{note[0]} admonition_xJq3 alert alert--{ {"note": "secondary", "tip": "success", "warning": "warning", "info": "info"}[note[0]] }"><div class="admonitionHeading_Gvgb"><span class="admonitionIcon_Rf37"><svg viewBox="0 0 14 16"><path fill-rule="evenodd" d="M6.3 5.69a.942.942 0 0 1-.28-.7c0-.28.09-.52.28-.7"></path></svg></span>{note[0]}</div><div class="admonitionContent_BuS1"><p>{esc(note[1])}</p></div></div>')
                if b[0] in ("h2", "h3"):
                    a = _slug(str(b[1]))
                    parts.append(f'<{b[0]} class="anchor anchorWithStickyNavbar_LWe7" id="{a}">{esc(str(b[1]))}<a href="#{a}" class="hash-link" aria-label="Direct link to {esc(str(b[1]))}" title="Direct link to {esc(str(b[1]))}">\u200b</a></{b[0]}>')
                elif b[0] == "code":
                    empty, nl = '<span class="token plain"> </span>', "\n"
                    lines = "".join(f'<span class="token-line" style="color:#393A34">{_hl(ln, "token keyword") or empty}<br></span>' for ln in str(b[1]).split(nl))
                    parts.append(f'<div class="language-python codeBlockContainer_Ckt0 theme-code-block" style="--prism-color:#393A34;--prism-background-color:#f6f8fa"><div class="codeBlockContent_biex"><pre tabindex="0" class="prism-code language-python codeBlock_bY9V thin-scrollbar" style="color:#393A34;background-color:#f6f8fa"><code class="codeBlockLines_e6Vv">{lines}</code></pre>'
                                 '<div class="buttonGroup__atx"><button type="button" aria-label="Copy code to clipboard" title="Copy" class="clean-btn"><span class="copyButtonIcons_eSgA" aria-hidden="true"><svg viewBox="0 0 24 24" class="copyButtonIcon_y97N"><path fill="currentColor" d="M19,21H8V7H19M19,5H8A2,2 0 0,0 6,7V21"></path></svg></span></button></div></div></div>')
                else:
                    parts.append(_render(b, rng))
            if pos == len(blocks) and note:
                parts.append(f'<div class="theme-admonition theme-admonition-{note[0]} admonition_xJq3 alert alert--info"><div class="admonitionHeading_Gvgb">{note[0]}</div><div class="admonitionContent_BuS1"><p>{esc(note[1])}</p></div></div>')
            old = i % 3 == 1
            body = (
                '<svg xmlns="http://www.w3.org/2000/svg" style="display: none;"><defs><symbol id="theme-svg-external-link" viewBox="0 0 24 24"><path fill="currentColor" d="M21 13v10h-21v-19h12v2h-10v15h17v-8h2z"></path></symbol></defs></svg><script>!function(){var t=localStorage.getItem("theme");document.documentElement.setAttribute("data-theme",t||"light")}()</script>'
                '<div id="__docusaurus"><div role="region" aria-label="Skip to main content"><a class="skipToContent_fXgn" href="#__docusaurus_skipToContent_fallback">Skip to main content</a></div>'
                + (f'<div class="theme-announcement-bar announcementBar_mb4j" style="background-color:#fafbfc;color:#091E42" role="banner"><div class="announcementBarPlaceholder_vyr4"></div><div class="content_knG7 announcementBarContent_xLdY">⭐️ If you like {project}, give it a star on <a target="_blank" rel="noopener noreferrer" href="https://github.com/example/{project.lower()}">GitHub</a>! ⭐️</div><button type="button" aria-label="Close" class="clean-btn close closeButton_CVFx announcementBarClose_gvF7"><svg viewBox="0 0 15 15" width="14" height="14"><g stroke="currentColor" stroke-width="3.1"><path d="M.75.75l13.5 13.5M14.25.75L.75 14.25"></path></g></svg></button></div>' if rng.random() < 0.5 else "")
                + f'<nav aria-label="Main" class="navbar navbar--fixed-top"><div class="navbar__inner"><div class="navbar__items"><button aria-label="Toggle navigation bar" aria-expanded="false" class="navbar__toggle clean-btn" type="button"></button><a class="navbar__brand" href="/"><div class="navbar__logo"><img src="/img/logo.svg" alt="{project} Logo" class="themedComponent_mlkZ themedComponent--light_NVdE"></div><b class="navbar__title text--truncate">{project}</b></a>'
                '<a aria-current="page" class="navbar__item navbar__link navbar__link--active" href="/docs/intro">Docs</a><a class="navbar__item navbar__link" href="/docs/api">API</a><a class="navbar__item navbar__link" href="/blog">Blog</a></div>'
                f'<div class="navbar__items navbar__items--right"><div class="navbar__item dropdown dropdown--hoverable dropdown--right"><a href="#" aria-haspopup="true" aria-expanded="false" role="button" class="navbar__link">{"2.x" if old else "3.x"}</a><ul class="dropdown__menu"><li><a class="dropdown__link" href="/docs/next/intro">Next</a></li><li><a class="dropdown__link" href="/docs/intro">3.x</a></li><li><a class="dropdown__link" href="/docs/2.x/intro">2.x</a></li></ul></div>'
                '<a href="https://github.com/example" target="_blank" rel="noopener noreferrer" class="navbar__item navbar__link header-github-link" aria-label="GitHub repository"></a><div class="navbarSearchContainer_Bca1"><button type="button" class="DocSearch DocSearch-Button" aria-label="Search (Ctrl+K)"><span class="DocSearch-Button-Container"><span class="DocSearch-Button-Placeholder">Search</span></span><span class="DocSearch-Button-Keys"><kbd class="DocSearch-Button-Key">Ctrl</kbd><kbd class="DocSearch-Button-Key">K</kbd></span></button></div></div></div><div role="presentation" class="navbar-sidebar__backdrop"></div></nav>'
                '<div id="__docusaurus_skipToContent_fallback" class="main-wrapper mainWrapper_z2l0"><div class="docsWrapper_hBAB"><button aria-label="Scroll back to top" class="clean-btn theme-back-to-top-button backToTopButton_sjWU" type="button"></button><div class="docRoot_UBD9">'
                '<aside class="theme-doc-sidebar-container docSidebarContainer_YfHR"><div class="sidebarViewport_aRkj"><div class="sidebar_njMd"><nav aria-label="Docs sidebar" class="menu thin-scrollbar menu_SIkG"><ul class="theme-doc-sidebar-menu menu__list">'
                + "".join(f'<li class="theme-doc-sidebar-item-link theme-doc-sidebar-item-link-level-1 menu__list-item"><a class="menu__link{" menu__link--active" if c == title else ""}" href="/docs/{_slug(c)}">{esc(c)}</a></li>' for c in sidebar_items)
                + '</ul></nav><button type="button" title="Collapse sidebar" aria-label="Collapse sidebar" class="button button--secondary button--outline collapseSidebarButton_PEFL"></button></div></div></aside>'
                '<main class="docMainContainer_TBSr"><div class="container padding-top--md padding-bottom--lg"><div class="row"><div class="col docItemCol_VOVn">'
                + (f'<div class="theme-doc-version-banner alert alert--warning margin-bottom--md" role="alert"><div>This is documentation for {project} <b>2.x</b>, which is no longer actively maintained.</div><div class="margin-top--md">For up-to-date documentation, see the <b><a href="/docs/intro">latest version</a></b> (3.x).</div></div>' if old else "")
                + '<div class="docItemContainer_c0TR"><article><nav class="theme-doc-breadcrumbs breadcrumbsContainer_Z_bl" aria-label="Breadcrumbs"><ul class="breadcrumbs" itemscope="" itemtype="https://schema.org/BreadcrumbList"><li class="breadcrumbs__item"><a aria-label="Home page" class="breadcrumbs__link" href="/"><svg viewBox="0 0 24 24" class="breadcrumbHomeIcon_YNFT"><path d="M10 19v-5h4v5c0 .55.45 1 1 1h3c.55 0 1-.45 1-1v-7h1.7c.46 0 .68-.57.33-.87L12.67 3.6c-.38-.34-.96-.34-1.34 0l-8.36 7.53c-.34.3-.13.87.33.87H5v7c0 .55.45 1 1 1h3c.55 0 1-.45 1-1z" fill="currentColor"></path></svg></a></li>'
                f'<li itemscope="" itemprop="itemListElement" itemtype="https://schema.org/ListItem" class="breadcrumbs__item"><span class="breadcrumbs__link" itemprop="name">Guides</span><meta itemprop="position" content="1"></li><li itemscope="" itemprop="itemListElement" itemtype="https://schema.org/ListItem" class="breadcrumbs__item breadcrumbs__item--active"><span class="breadcrumbs__link" itemprop="name">{esc(title)}</span><meta itemprop="position" content="2"></li></ul></nav>'
                + (f'<span class="theme-doc-version-badge badge badge--secondary">Version: {"2.x" if old else "3.x"}</span>' if rng.random() < 0.6 else "")
                + '<div class="tocCollapsible_ETCw theme-doc-toc-mobile tocMobile_ITEo"><button type="button" class="clean-btn tocCollapsibleButton_TO0P">On this page</button></div>'
                f'<div class="theme-doc-markdown markdown"><header><h1>{esc(title)}</h1></header>{"".join(parts)}</div>'
                f'<footer class="theme-doc-footer docusaurus-mt-lg"><div class="row margin-top--sm theme-doc-footer-edit-meta-row"><div class="col"><a href="https://github.com/example/{project.lower()}/edit/main/docs/{_slug(title)}.md" target="_blank" rel="noopener noreferrer" class="theme-edit-this-page"><svg fill="currentColor" height="20" width="20" viewBox="0 0 40 40" class="iconEdit_Z9Sw" aria-hidden="true"><g><path d="m34.5 11.7l-3 3.1-6.3-6.3 3.1-3q0.5-0.5 1.2-0.5t1.1 0.5l3.9 3.9q0.5 0.4 0.5 1.1t-0.5 1.2z"></path></g></svg>Edit this page</a></div>'
                f'<div class="col lastUpdated_JAkA"><span class="theme-last-updated">Last updated<!-- --> on <b><time datetime="{_iso(rng)}" itemprop="dateModified">{_date(rng)}</time></b> by <b>{esc(_name(rng))}</b></span></div></div></footer></article>'
                f'<nav class="pagination-nav docusaurus-mt-lg" aria-label="Docs pages"><a class="pagination-nav__link pagination-nav__link--prev" href="/docs/{_slug(sidebar_items[0])}"><div class="pagination-nav__sublabel">Previous</div><div class="pagination-nav__label">{esc(sidebar_items[0])}</div></a><a class="pagination-nav__link pagination-nav__link--next" href="/docs/{_slug(sidebar_items[1])}"><div class="pagination-nav__sublabel">Next</div><div class="pagination-nav__label">{esc(sidebar_items[1])}</div></a></nav></div></div>'
                '<div class="col col--3"><div class="tableOfContents_bqdL thin-scrollbar theme-doc-toc-desktop"><ul class="table-of-contents table-of-contents__left-border">' + "".join(f'<li><a href="#{_slug(h)}" class="table-of-contents__link toc-highlight">{esc(h)}</a></li>' for h in heads) + "</ul></div></div></div></div></main></div></div></div>"
                '<footer class="footer footer--dark"><div class="container container-fluid"><div class="row footer__links">' + "".join(f'<div class="col footer__col"><div class="footer__title">{t}</div><ul class="footer__items clean-list">' + "".join(f'<li class="footer__item"><a class="footer__link-item" href="/{_slug(x)}">{x}</a></li>' for x in xs) + "</ul></div>" for t, xs in [("Docs", ["Tutorial", "API reference"]), ("Community", ["Stack Overflow", "Discord", "X"]), ("More", ["Blog", "GitHub"])])
                + f'</div><div class="footer__bottom text--center"><div class="footer__copyright">Copyright © {rng.randint(2020, 2025)} {project}, Inc. Built with Docusaurus.</div></div></div></footer></div>'
            )
            head = f'<meta name="generator" content="Docusaurus v3.{rng.randint(0, 7)}.{rng.randint(0, 3)}"><link rel="stylesheet" href="/assets/css/styles.{_h(rng, 8)}.css"><script src="/assets/js/runtime~main.{_h(rng, 8)}.js" defer="defer"></script><script src="/assets/js/main.{_h(rng, 8)}.js" defer="defer"></script>'
            return _document(head, body, charset, f"{title} | {project}", html_attrs=' dir="ltr" class="docs-wrapper plugin-docs plugin-id-default docs-version-current docs-doc-page" data-has-hydrated="false"'), _truth(truth_blocks), f"https://{project.lower()}.example.io/docs/{_slug(title)}"

        # gitbook
        desc = _trim_words(rng.choice(_prose()), rng.randint(8, 18)) if rng.random() < 0.7 else None
        truth_blocks = [("h1", title), *([("p", desc)] if desc else []), *blocks[:pos], *([("p", note[1])] if note else []), *blocks[pos:]]
        mx = "max-w-3xl w-full mx-auto decoration-primary/6 page-api-block:ml-0"
        parts = []
        for k, b in enumerate([*blocks, ("end", "")]):
            if k == pos and note:
                parts.append(f'<div class="hint hint-{note[0]} {mx} px-4 py-4 transition-colors rounded-md straight-corners:rounded-none bg-gradient-to-b from-{note[0]}/4 to-{note[0]}/3 ring-1 ring-inset ring-{note[0]}/6 flex flex-row gap-3"><div class="mt-0.5"><svg class="gb-icon size-4"><path></path></svg></div><div class="flex-1 space-y-4"><p class="text-base">{esc(note[1])}</p></div></div>')
            if b[0] == "end":
                break
            if b[0] in ("h2", "h3"):
                a = _slug(str(b[1]))
                parts.append(f'<{b[0]} id="{a}" class="flex items-baseline gap-3 scroll-m-12 text-2xl font-semibold {mx} mt-8"><div class="hash grid grid-area-1-1 relative -ml-6 w-7 border-0 opacity-0 group-hover/hash:opacity-[0] group-focus/hash:opacity-[0] md:group-hover/hash:opacity-[1]"><a href="#{a}" class="inline-flex h-full items-start leading-tight" aria-label="Direct link to heading"><svg class="gb-icon size-3"><path></path></svg></a></div><div class="flex-1 z-1 justify-self-start max-w-full break-words text-start">{esc(str(b[1]))}</div></{b[0]}>')
            elif b[0] == "code":
                nl = "\n"
                lines = "".join(f'<span class="highlight-line block ml-5"><span class="highlight-line-number text-sm text-transparent absolute -ml-7 w-[calc(0.25rem*7)] text-right select-none"></span><span class="highlight-line-content">{_hl(ln, "text-[#d73a49]")}</span></span>{nl}' for ln in str(b[1]).split(nl))
                parts.append(f'<div class="group/codeblock grid grid-flow-col {mx}"><div class="flex items-center justify-start gap-1 text-xs px-3 py-2"><div class="text-xs tracking-wide text-tint leading-none">example.py</div></div><div class="relative"><pre class="flex overflow-auto border rounded-md straight-corners:rounded-sm"><code spellcheck="false" class="text-sm w-full overflow-x-auto p-2 whitespace-pre" data-language="python">{lines}</code></pre><button class="group-hover/codeblock:opacity-[1] opacity-0 text-xs absolute top-2 right-2">Copy</button></div></div>')
            else:
                parts.append(_render(b, rng, {"p": f"text-base {mx}", "ul": f"{mx} list-disc", "table": f"{mx} border"}))
        toc = "".join(f'<li class="flex flex-col"><a href="#{_slug(h)}" class="flex flex-row items-baseline gap-3 text-sm py-1 pl-4 text-tint hover:text-tint-strong">{esc(h)}</a></li>' for h in heads)
        rsc = json.dumps([1, json.dumps({"page": {"title": title, "description": desc or ""}}, ensure_ascii=False)], ensure_ascii=False)
        body = (
            f'<div class="scroll-nojump"><header id="site-header" class="flex flex-col h-[64px] sticky top-0 pt-[env(safe-area-inset-top)] z-30 w-full flex-none shadow-[0px_1px_0px] shadow-tint-12/2 bg-tint-base/9 backdrop-blur-lg"><div class="flex w-full items-center justify-between px-4 sm:px-6 md:px-8 max-w-screen-2xl mx-auto"><a class="group/headerlogo flex flex-row items-center shrink-0 gap-3" href="/"><div class="text-pretty line-clamp-2 tracking-tight max-w-[18ch] lg:max-w-[24ch] font-semibold text-base/tight lg:text-lg/tight">{project}</div></a>'
            '<div class="flex grow-0 shrink-0 md:basis-56 justify-self-end items-center gap-2"><div class="flex-1"><button type="button" class="flex flex-1 flex-row items-center gap-2 px-3 py-2 rounded-lg"><svg class="gb-icon size-4"><path></path></svg><div class="hidden md:block text-tint-subtle truncate">Search...</div><div class="hidden md:flex text-xs"><kbd>Ctrl</kbd><kbd>K</kbd></div></button></div></div></div></header>'
            '<div class="flex flex-col lg:flex-row max-w-screen-2xl mx-auto site-width-wide:max-w-full"><aside data-testid="table-of-contents" class="group text-sm grow-0 shrink-0 basis-full lg:basis-72 page-no-toc:lg:basis-56 relative z-[1] lg:sticky lg:top-16 lg:h-[calc(100vh_-_4rem)] pt-6 pb-4 flex flex-col"><div class="flex-1 overflow-y-auto"><ul class="flex flex-col gap-y-0.5">'
            + "".join(f'<li class="flex flex-col"><a class="flex flex-row justify-between items-center gap-2 pl-5 rounded-md straight-corners:rounded-none text-sm py-1.5 {"font-semibold text-primary" if c == title else "text-tint"}" href="/{_slug(c)}">{esc(c)}</a></li>' for c in sidebar_items)
            + '</ul></div><div class="mt-4"><a target="_blank" href="https://www.gitbook.com/?utm_source=content&amp;utm_medium=trademark" class="text-sm font-semibold flex flex-row items-center px-5 py-4 rounded-lg"><svg class="gb-icon size-5"><path></path></svg><div class="text-xs">Powered by GitBook</div></a></div></aside>'
            '<div class="flex flex-row flex-1 site-width-wide:max-w-screen-2xl"><main class="relative min-w-0 flex-1 py-8 lg:px-12 break-anywhere page-api-block:xl:max-2xl:pr-0 page-api-block:max-w-[1654px] page-api-block:mx-auto"><header class="max-w-3xl page-api-block:max-w-[1654px] mx-auto mb-6 space-y-3 page-api-block:ml-0">'
            f'<nav aria-label="Breadcrumb" class="text-sm"><ol class="flex flex-wrap items-center gap-2 text-tint"><li class="flex items-center gap-2"><a href="/guides" class="text-xs tracking-wide font-semibold uppercase">Guides</a></li></ol></nav><h1 class="text-4xl font-bold flex items-center gap-4 text-tint-strong">{esc(title)}</h1>'
            + (f'<p class="text-lg text-tint">{esc(desc)}</p>' if desc else "")
            + f'</header><div class="whitespace-pre-wrap grid [&amp;>*+*]:mt-5 whitespace-normal">{"".join(parts)}</div>'
            f'<div class="flex flex-col md:flex-row mt-6 gap-2 max-w-3xl mx-auto page-api-block:ml-0"><a class="group text-sm p-2.5 flex gap-4 flex-1 flex-row-reverse items-center pl-4 border rounded-md" href="/{_slug(sidebar_items[0])}"><svg class="gb-icon size-4"><path></path></svg><span class="flex flex-col flex-1 text-right"><span class="text-xs">Previous</span><span class="text-tint-strong line-clamp-2">{esc(sidebar_items[0])}</span></span></a>'
            f'<a class="group text-sm p-2.5 flex gap-4 flex-1 flex-row items-center pr-4 border rounded-md" href="/{_slug(sidebar_items[1])}"><span class="flex flex-col flex-1"><span class="text-xs">Next</span><span class="text-tint-strong line-clamp-2">{esc(sidebar_items[1])}</span></span><svg class="gb-icon size-4"><path></path></svg></a></div>'
            f'<div class="flex flex-row items-center mt-6 max-w-3xl mx-auto page-api-block:ml-0 text-sm text-tint"><p>Last updated {rng.randint(2, 11)} months ago</p></div>'
            '<div class="flex flex-col gap-3 max-w-3xl mx-auto mt-6"><p class="text-sm text-tint">Was this helpful?</p><div class="flex flex-row gap-2" role="radiogroup"><button type="button" aria-label="Bad" class="p-2 rounded-full">😞</button><button type="button" aria-label="Ok" class="p-2 rounded-full">😐</button><button type="button" aria-label="Good" class="p-2 rounded-full">😀</button></div></div></main>'
            f'<aside class="group/aside order-last hidden xl:flex flex-col basis-56 shrink-0 sticky top-16 h-[calc(100vh_-_4rem)] py-8 page-no-toc:hidden"><div class="flex flex-col gap-3"><div class="text-xs tracking-wide font-semibold uppercase text-tint-strong flex flex-row items-center gap-2"><svg class="gb-icon size-3"><path></path></svg>On this page</div><ul class="flex flex-col border-l border-tint-subtle">{toc}</ul></div></aside></div></div></div>'
            f'<script>(self.__next_f=self.__next_f||[]).push([0])</script><script>self.__next_f.push({rsc})</script>'
        )
        head = f'<link rel="stylesheet" href="/_next/static/css/{_h(rng, 16)}.css" data-precedence="next"><meta name="generator" content="GitBook ({_h(rng, 7)})"><style>:root{{--primary-color-500:52 109 219}}</style>'
        return _document(head, body, charset, f"{title} | {project}", html_attrs=' class="sidebar-default theme-clean no-tint sidebar-filled links-default depth-subtle __variable_main"'), _truth(truth_blocks), f"https://docs.{project.lower()}.example.com/guides/{_slug(title)}"

    # API pages: a standard-library class dressed as a Java or Rust type
    modname, cname, cdesc, methods = rng.choice(_api_items())
    methods = methods[: rng.randint(2, 8)] if i != 0 else methods[:1]
    cdesc = cdesc[:1] if i == 0 else cdesc[:4]
    extra = [_extra(charset, rng)] if charset != "utf-8" else []
    if variant == "javadoc":
        pkg = "org.example." + modname.replace(".", "")
        typ = [rng.choice(["void", "String", "boolean", "int", "Object"]) for _ in methods]
        ptyp = [[rng.choice(["String", "int", "boolean", "Object", "long"]) for _ in params] for _, params, _ in methods]
        sig_cls = f"public class {cname} extends Object"
        truth_blocks = [("h1", f"Class {cname}"), ("p", sig_cls), *(("p", d) for d in [*extra, *cdesc]), ("h2", "Method Summary"),
                        ("table", [["Modifier and Type", "Method", "Description"]] + [[t, f"{m}({', '.join(f'{pt} {p}' for pt, p in zip(pts, params, strict=True))})", _trim_words(d[0], 12) if len(d[0].split()) <= 14 else d[0].split(". ")[0] + "."] for (m, params, d), t, pts in zip(methods, typ, ptyp, strict=True)]),
                        ("h2", "Method Details")]
        table = truth_blocks[-2][1]
        detail = ""
        summary_rows = ""
        for k, ((m, params, d), t, pts) in enumerate(zip(methods, typ, ptyp, strict=True)):
            sig = f"public {t} {m}({', '.join(f'{pt} {p}' for pt, p in zip(pts, params, strict=True))})"
            first = table[k + 1][2]
            notes: list[str] = []
            if params:
                notes += ["Parameters:", *(f"{p} - the {p.replace('_', ' ')} to use" for p in params)]
            if t != "void":
                notes += ["Returns:", f"the resulting {t.lower()}"]
            truth_blocks += [("h3", m), ("p", sig), *(("p", x) for x in d[:3]), *([("ul", notes)] if notes else [])]
            row = "even-row-color" if k % 2 == 0 else "odd-row-color"
            summary_rows += (f'<div class="col-first {row} method-summary-table method-summary-table-tab2 method-summary-table-tab4"><code>{t}</code></div><div class="col-second {row} method-summary-table method-summary-table-tab2 method-summary-table-tab4"><code><a href="#{m}()" class="member-name-link">{m}</a>({", ".join(f"{pt}&nbsp;{p}" for pt, p in zip(pts, params, strict=True))})</code></div>'
                             f'<div class="col-last {row} method-summary-table method-summary-table-tab2 method-summary-table-tab4"><div class="block">{esc(first)}</div></div>')
            dl = ""
            if notes:
                dl = '<dl class="notes">' + "".join(f"<dt>{esc(x)}</dt>" if x.endswith(":") else (f"<dd><code>{esc(x.split(' - ')[0])}</code> - {esc(x.split(' - ', 1)[1])}</dd>" if " - " in x else f"<dd>{esc(x)}</dd>") for x in notes) + "</dl>"
            detail += (f'<li><section class="detail" id="{m}()"><h3>{esc(m)}</h3><div class="member-signature"><span class="modifiers">public</span>&nbsp;<span class="return-type">{t}</span>&nbsp;<span class="element-name">{m}</span><wbr><span class="parameters">({", ".join(f"{pt}&nbsp;{p}" for pt, p in zip(pts, params, strict=True))})</span></div>'
                       f'<div class="block">{"".join(f"<p>{esc(x)}</p>" for x in d[:3])}</div>{dl}</section></li>')
        body = (
            '<script type="text/javascript">var pathtoroot = "../../../";loadScripts(document, "script");</script><noscript><div>JavaScript is disabled on your browser.</div></noscript>'
            '<div class="flex-box"><header role="banner" class="flex-header"><nav role="navigation"><div class="top-nav" id="navbar-top"><button id="navbar-toggle-button" aria-controls="navbar-top" aria-expanded="false" aria-label="Toggle navigation links"><span class="nav-bar-toggle-icon">&nbsp;</span></button><div class="skip-nav"><a href="#skip-navbar-top" title="Skip navigation links">Skip navigation links</a></div>'
            f'<div class="about-language"><strong>{project} {rng.randint(1, 9)}.{rng.randint(0, 9)} API</strong></div><ul id="navbar-top-firstrow" class="nav-list" title="Navigation"><li><a href="../../../module-summary.html">Module</a></li><li><a href="package-summary.html">Package</a></li><li class="nav-bar-cell1-rev">Class</li><li><a href="class-use/{cname}.html">Use</a></li><li><a href="package-tree.html">Tree</a></li><li><a href="../../../deprecated-list.html">Deprecated</a></li><li><a href="../../../index-all.html">Index</a></li><li><a href="../../../help-doc.html#class">Help</a></li></ul></div>'
            '<div class="sub-nav"><div id="navbar-sub-list"><ul class="sub-nav-list"><li>Summary:&nbsp;</li><li>Nested&nbsp;|&nbsp;</li><li>Field&nbsp;|&nbsp;</li><li><a href="#constructor-summary">Constr</a>&nbsp;|&nbsp;</li><li><a href="#method-summary">Method</a></li></ul><ul class="sub-nav-list"><li>Detail:&nbsp;</li><li>Field&nbsp;|&nbsp;</li><li><a href="#constructor-detail">Constr</a>&nbsp;|&nbsp;</li><li><a href="#method-detail">Method</a></li></ul></div>'
            '<div class="nav-list-search"><a href="../../../search.html">SEARCH</a><input type="text" id="search-input" disabled placeholder="Search"><input type="reset" id="reset-button" disabled value="reset"></div></div><span class="skip-nav" id="skip-navbar-top"></span></nav></header>'
            f'<div class="flex-content"><main role="main"><div class="header"><div class="sub-title"><span class="module-label-in-type">Module</span>&nbsp;<a href="../../../module-summary.html">{pkg.rsplit(".", 1)[0]}</a></div><div class="sub-title"><span class="package-label-in-type">Package</span>&nbsp;<a href="package-summary.html">{pkg}</a></div><h1 title="Class {cname}" class="title">Class {cname}</h1></div>'
            f'<div class="inheritance" title="Inheritance Tree"><a href="https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/lang/Object.html" class="external-link">java.lang.Object</a><div class="inheritance">{pkg}.{cname}</div></div>'
            f'<section class="class-description" id="class-description"><dl class="notes"><dt>All Implemented Interfaces:</dt><dd><code><a href="https://docs.oracle.com/java/io/Serializable.html" class="external-link">Serializable</a></code>, <code>Cloneable</code></dd></dl><hr><div class="type-signature"><span class="modifiers">public class </span><span class="element-name type-name-label">{cname}</span> <span class="extends-implements">extends Object</span></div>'
            f'<div class="block">{"".join(f"<p>{esc(x)}</p>" for x in [*extra, *cdesc])}</div><dl class="notes"><dt>Since:</dt><dd>{rng.randint(1, 3)}.{rng.randint(0, 9)}</dd></dl></section>'
            f'<section class="summary"><ul class="summary-list"><li><section class="method-summary" id="method-summary"><h2>Method Summary</h2><div id="method-summary-table"><div class="table-tabs" role="tablist" aria-orientation="horizontal"><button id="method-summary-table-tab0" role="tab" aria-selected="true" aria-controls="method-summary-table.tabpanel" tabindex="0" onkeydown="switchTab(event)" onclick="show(\'method-summary-table\', \'method-summary-table\', 3)" class="active-table-tab">All Methods</button><button id="method-summary-table-tab2" role="tab" aria-selected="false" tabindex="-1" class="table-tab">Instance Methods</button><button id="method-summary-table-tab4" role="tab" aria-selected="false" tabindex="-1" class="table-tab">Concrete Methods</button></div>'
            f'<div id="method-summary-table.tabpanel" role="tabpanel" aria-labelledby="method-summary-table-tab0"><div class="summary-table three-column-summary"><div class="table-header col-first">Modifier and Type</div><div class="table-header col-second">Method</div><div class="table-header col-last">Description</div>{summary_rows}</div></div></div>'
            '<div class="inherited-list"><h3 id="methods-inherited-from-class-java.lang.Object">Methods inherited from class&nbsp;java.lang.<a href="https://docs.oracle.com/java/lang/Object.html" class="external-link">Object</a></h3><code>clone, equals, finalize, getClass, hashCode, notify, notifyAll, toString, wait, wait, wait</code></div></section></li></ul></section>'
            f'<section class="details"><ul class="details-list"><li><section class="method-details" id="method-detail"><h2>Method Details</h2><ul class="member-list">{detail}</ul></section></li></ul></section></main>'
            f'<footer role="contentinfo"><hr><p class="legal-copy"><small><a href="https://bugs.example.org">Report a bug or suggest an enhancement</a><br>For further API reference and developer documentation see the {project} Documentation. Copyright &copy; {rng.randint(2010, 2025)}, {project} contributors. All rights reserved.</small></p></footer></div></div>'
        )
        head = f'<meta name="generator" content="javadoc/ClassWriter"><meta name="keywords" content="{pkg}.{cname} class"><link rel="stylesheet" type="text/css" href="../../../stylesheet.css" title="Style"><script type="text/javascript" src="../../../script.js"></script>'
        return _document(head, body, charset, f"{cname} ({project} API)", body_attrs=' class="class-declaration-page"'), _truth(truth_blocks), f"https://javadoc.example.io/{pkg.replace('.', '/')}/{cname}.html"

    # rustdoc
    crate = project.lower()
    rtypes = ["&amp;str", "usize", "bool", "Option&lt;T&gt;", "&amp;[u8]", "f64"]
    def sig(m: str, params: tuple[str, ...], ret: str) -> tuple[str, str]:
        ps = [rng.choice(rtypes) for _ in params]
        text = f"pub fn {m}(&self{''.join(f', {p}: {_html.unescape(t)}' for p, t in zip(params, ps, strict=True))}){' -> ' + _html.unescape(ret) if ret else ''}"
        html = f'pub fn <a href="#method.{m}" class="fn">{m}</a>(&amp;self{"".join(f", {p}: {t}" for p, t in zip(params, ps, strict=True))}){" -&gt; " + ret if ret else ""}'
        return text, html
    decl = f"pub struct {cname} {{ /* private fields */ }}"
    example = rng.choice(_code_snippets()) if i != 0 and rng.random() < 0.5 else None
    truth_blocks = [("h1", f"Struct {cname}"), ("code", decl), *(("p", d) for d in [*extra, *cdesc]), *([("h2", "Examples"), ("code", example)] if example else []), ("h2", "Implementations"), ("h3", f"impl {cname}")]
    impl_items = ""
    for m, params, d in methods:
        ret = rng.choice(["", "bool", "usize", "Self", "Option&lt;&amp;str&gt;"])
        text, html_sig = sig(m, params, ret)
        truth_blocks += [("h4", text), *(("p", x) for x in d[:3])]
        impl_items += (f'<details class="toggle method-toggle" open><summary><section id="method.{m}" class="method"><a class="src rightside" href="../src/{crate}/lib.rs.html#{rng.randint(10, 999)}">Source</a><h4 class="code-header">{html_sig}</h4></section></summary>'
                       f'<div class="docblock">{"".join(f"<p>{_inline(x, rng)}</p>" for x in d[:3])}</div></details>')
    traits = ["Clone", "Debug", "Default", "PartialEq", "Eq", "Hash"]
    auto = ["Freeze", "RefUnwindSafe", "Send", "Sync", "Unpin", "UnwindSafe"]
    blanket = ["Any", "Borrow&lt;T&gt;", "BorrowMut&lt;T&gt;", "From&lt;T&gt;", "Into&lt;U&gt;", "ToOwned", "TryFrom&lt;U&gt;", "TryInto&lt;U&gt;"]
    def impl_list(names: list[str], ident: str) -> str:
        return f'<div id="{ident}-list">' + "".join(f'<details class="toggle implementors-toggle"><summary><section id="impl-{_slug(_html.unescape(t))}-for-{cname}" class="impl"><a class="src rightside" href="#">Source</a><a href="#impl-{t}" class="anchor">§</a><h3 class="code-header">impl{"&lt;T&gt;" if "T" in t else ""} {t} for {cname}</h3></section></summary><div class="impl-items"><details class="toggle method-toggle" open><summary><section class="method trait-impl"><h4 class="code-header">fn <a class="fn">{rng.choice(["clone", "fmt", "eq", "hash", "from", "into", "type_id"])}</a>(&amp;self) -&gt; Self</h4></section></summary><div class="docblock"><p>{esc(_trim_words(rng.choice(_prose()), 8))} <a href="#">Read more</a></p></div></details></div></details>' for t in names) + "</div>"
    example_html = f'<h2 id="examples"><a class="doc-anchor" href="#examples">§</a>Examples</h2><div class="example-wrap"><pre class="rust rust-example-rendered"><code>{_hl(example, "kw")}</code></pre></div>' if example else ""
    body = (
        '<!--[if lte IE 11]><div class="warning">This old browser is unsupported and will most likely display funky things.</div><![endif]-->'
        f'<nav class="mobile-topbar"><button class="sidebar-menu-toggle" title="show sidebar"></button><a class="logo-container" href="../{crate}/index.html"><img class="rust-logo" src="../static.files/rust-logo-151179464ae7ed46.svg" alt=""></a><h2><a href="#">{cname}</a></h2></nav>'
        f'<nav class="sidebar"><div class="sidebar-crate"><a class="logo-container" href="../{crate}/index.html"><img class="rust-logo" src="../static.files/rust-logo-151179464ae7ed46.svg" alt="logo"></a><h2><a href="../{crate}/index.html">{crate}</a><span class="version">{rng.randint(0, 2)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}</span></h2></div>'
        f'<div class="sidebar-elems"><section id="rustdoc-toc"><h2 class="location"><a href="#">{cname}</a></h2><h3><a href="#implementations">Methods</a></h3><ul class="block method">' + "".join(f'<li><a href="#method.{m}">{m}</a></li>' for m, _, _ in methods)
        + '</ul><h3><a href="#trait-implementations">Trait Implementations</a></h3><ul class="block trait-implementation">' + "".join(f'<li><a href="#impl-{t}">{t}</a></li>' for t in traits)
        + '</ul><h3><a href="#synthetic-implementations">Auto Trait Implementations</a></h3><ul class="block synthetic-implementation">' + "".join(f"<li><a>{t}</a></li>" for t in auto)
        + f'</ul></section><div id="rustdoc-modnav"><h2><a href="index.html">In crate {crate}</a></h2></div></div></nav><div class="sidebar-resizer"></div>'
        f'<main><div class="width-limiter"><rustdoc-search></rustdoc-search><section id="main-content" class="content"><div class="main-heading"><div class="rustdoc-breadcrumbs"><a href="index.html">{crate}</a></div><h1>Struct <span class="struct">{cname}</span><button id="copy-path" title="Copy item path to clipboard">Copy item path</button></h1>'
        f'<rustdoc-toolbar></rustdoc-toolbar><span class="sub-heading"><a class="src" href="../src/{crate}/lib.rs.html#{rng.randint(10, 500)}-{rng.randint(501, 900)}">Source</a> </span></div>'
        f'<pre class="rust item-decl"><code>pub struct {cname} {{ /* private fields */ }}</code></pre><details class="toggle top-doc" open><summary class="hideme"><span>Expand description</span></summary><div class="docblock">{"".join(f"<p>{_inline(x, rng)}</p>" for x in [*extra, *cdesc])}{example_html}</div></details>'
        f'<h2 id="implementations" class="section-header">Implementations<a href="#implementations" class="anchor">§</a></h2><div id="implementations-list"><details class="toggle implementors-toggle" open><summary><section id="impl-{cname}" class="impl"><a class="src rightside" href="../src/{crate}/lib.rs.html#{rng.randint(10, 500)}">Source</a><a href="#impl-{cname}" class="anchor">§</a><h3 class="code-header">impl <a class="struct" href="struct.{cname}.html" title="struct {crate}::{cname}">{cname}</a></h3></section></summary><div class="impl-items">{impl_items}</div></details></div>'
        f'<h2 id="trait-implementations" class="section-header">Trait Implementations<a href="#trait-implementations" class="anchor">§</a></h2>{impl_list(traits, "trait-implementations")}'
        f'<h2 id="synthetic-implementations" class="section-header">Auto Trait Implementations<a href="#synthetic-implementations" class="anchor">§</a></h2>{impl_list(auto, "synthetic-implementations")}'
        f'<h2 id="blanket-implementations" class="section-header">Blanket Implementations<a href="#blanket-implementations" class="anchor">§</a></h2>{impl_list(blanket, "blanket-implementations")}</section></div></main>'
    )
    head = (f'<meta name="generator" content="rustdoc"><meta name="description" content="API documentation for the Rust `{cname}` struct in crate `{crate}`."><link rel="stylesheet" href="../static.files/rustdoc-{_h(rng, 16)}.css">'
            f'<meta name="rustdoc-vars" data-root-path="../" data-static-root-path="../static.files/" data-current-crate="{crate}" data-themes="" data-resource-suffix="" data-rustdoc-version="1.84.0 (9fc6b4312 2025-01-07)" data-channel="1.84.0" data-search-js="search-{_h(rng, 16)}.js" data-settings-js="settings-{_h(rng, 16)}.js">'
            '<script src="../static.files/storage-59e33391.js"></script><script defer src="sidebar-items.js"></script><script defer src="../static.files/main-5f194d8c.js"></script><noscript><link rel="stylesheet" href="../static.files/noscript-893ab5e7.css"></noscript>')
    return _document(head, body, charset, f"{cname} in {crate} - Rust", body_attrs=' class="rustdoc struct"'), _truth(truth_blocks), f"https://docs.rs/{crate}/latest/{crate}/struct.{cname}.html"


# ------------------------------------------------------------------------------------------------ pages

_BUILDERS: dict[str, Callable[[int, random.Random, str], tuple[str, str, str]]] = {
    "news-react": _news_react,
    "blog-platforms": _blog,
    "qa": _qa,
    "recipe": _recipe,
    "press-gov": _press_gov,
    "docs-other": _docs_other,
}


def pages(n_per_type: int = 20, seed: int = 0) -> list[Page]:
    """`n_per_type` pages of each kind in `KINDS`, deterministic for `seed` (and a Python version)."""
    return build_pages({k: _BUILDERS[k] for k in KINDS}, n_per_type, f"heldout:{seed}", _charset)
