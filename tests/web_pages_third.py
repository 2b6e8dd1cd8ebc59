"""A third evaluation set of web pages, written without reading the extractor and never used to tune
it: a measure of how the extractor generalises to page kinds and platforms that neither
`tests/web_pages.py` nor `tests/web_pages_heldout.py` has.

Same API as those modules (`KINDS`, `pages(n_per_type, seed) -> list[Page]`; `Page`, `shingle_counts`
and `shingle_scores` are `tests/web_pages.py`'s, re-exported here). Prose comes from that module's
sources (the Python reference and stdlib docstrings); the layouts are this module's own, modelled on
the HTML real platforms emit (their class names, ids, `data-` attributes, ARIA roles, custom
elements, inline scripts, JSON-LD, hashed CSS-module / styled-components classes, deep nesting).
Kinds in `KINDS`, each with several markup variants (chosen by page index):

- `news-local`: regional newspapers on Arc XP (Fusion, `c-paragraph`, `b-` blocks), Brightspot
  (`RichTextArticleBody`, `Enhancement`s, `bsp-`/`ps-` elements) and BLOX/TownNews (`tncms-` regions,
  `asset-content`, `tnt-` classes): weather widgets, e-Edition links, obituary and classified rails,
  "Trending"/"Most read", in-body "RELATED:" lines and story boxes, ads, and (index % 4 == 2, from
  index 4) a subscriber wall after a teaser of the story;
- `magazine`: long-form features, a Conde-Nast-like page (`BaseWrap-sc-...` classes, `body__inner-
  container`), an Atlantic-like one (CSS-module `ArticleParagraph_root__xxxx` classes) and a WordPress
  block-theme magazine (`has-drop-cap`, `wp-block-pullquote`, `wp-block-footnotes`): drop caps, pull
  quotes that repeat a body sentence, section-break ornaments, endnotes, author bio, "More from this
  issue", print-edition lines;
- `personal-blog`: Hugo (PaperMod), Jekyll (Minima), Eleventy (eleventy-base-blog), Squarespace
  (`sqs-block`s) and Wix (`data-hook`, hashed classes): tag clouds, archives by month, "Posted by",
  webmentions, previous/next links, newsletter boxes, related posts, comments;
- `review`: a Future-plc-like review (hawk price widgets, "Reasons to buy/avoid", verdict box), a
  Wirecutter-like buying guide (emotion classes, several picks) and a WordPress affiliate review
  (Lasso-like boxes, review schema);
- `release-notes`: a GitHub releases list, a Sphinx (Read the Docs theme) changelog, a SaaS product
  changelog (entry cards with badges) and an App-Store-like version history;
- `wiki-other`: Fandom (portable infobox, ad slots, "Trending pages" rail, global navigation),
  MediaWiki Vector 2022 (new `mw-heading` markup, ambox notices) and MonoBook (site notice, portlets).

Edge pages: index 0 has a very short main text (one or two short blocks) under heavy boilerplate;
index 1 has large boilerplate (rails, newsletter boxes, ads, notices) inside the content container
between main blocks; index 8 is short too. Index 3 declares `<meta charset="windows-1252">`; index 11
declares, in a `<meta http-equiv>`, `iso-8859-15` (even kinds) or `windows-1250` with a Polish/Czech
paragraph (odd kinds); both have non-ASCII main text, characters the charset lacks are sent as numeric
character references. Main texts range from one short paragraph to a few thousand words.

Conventions of `Page.truth`: those of the two other modules (blocks separated by one blank line, in
document order; a block is a heading, paragraph, blockquote paragraph, list with one item per line,
code block verbatim, table with one row per line and tab-separated cells; inline markup kept as its
text; site chrome is never main text; for articles the title `<h1>`, kicker, dek/standfirst, byline,
dates, reading time, captions and credits are not main text), plus:
- news-local: the story body (subheadings, lists, tables, blockquotes included); on a subscriber-wall
  page only the teaser paragraphs present in the HTML; not the wall ("Subscribe to continue
  reading", offers, "Already a subscriber?"), "RELATED:"/"READ MORE:" lines, related-story boxes,
  ads and "Advertisement" labels, weather, e-Edition, obituaries, classifieds, "Trending"/"Most read",
  newsletter signups, "Copyright ... may not be republished" lines, tags, comments prompts;
- magazine: body paragraphs and subheadings (a drop cap is the first letter of its word, so the word
  is whole in the truth); pull quotes (they repeat body text), section-break ornaments ("◆", "* * *",
  `<hr>`), "Published in the print edition ...", author bio, "More from this issue", newsletter and
  subscription promos, affiliate notes are NOT; endnotes/footnotes: each note's text is its own
  block after the body, in order (the markers in the text, the numbers and "↩" back-links are not);
- personal-blog: the post body; not the post title, "Posted by"/date/reading-time lines, tags and tag
  clouds, categories, archives, webmentions, likes, comments and comment forms, previous/next post
  links, related posts, newsletter boxes, "Share this", author cards, site footers;
- review: intro, body paragraphs and subheadings, each product's name heading in a buying guide, the
  pros/cons boxes (each label such as "Pros", "Reasons to buy", "What we like" is a heading block,
  then its items as a list), the spec table (one row per line, label and value tab-separated) and the
  verdict heading and paragraph ARE main text; star ratings and scores, prices, "Check price at ..."
  / "View at ..." buttons, deal widgets, comparison carousels, affiliate disclosures, "How we test"
  links, newsletter boxes, author bios are NOT;
- release-notes: every version heading as shown ("v1.4.0", "Version 2.3.0", "6.12.0") and its notes
  (paragraphs, sub-headings such as "What's Changed"/"Fixed", lists, code blocks, "Full Changelog:
  ..." lines) ARE main text, in page order; on the Sphinx changelog (a docs page) the `<h1>` and the
  "Released ..." lines are main text as the document's own; on the SaaS changelog each entry's title
  (an `<h2>`) and body are; dates shown apart from the heading (`<time>`), "Latest"/"Pre-release" and
  "New"/"Improved"/"Fixed" badges, authors, assets, reactions, tag/commit widgets, "Was this helpful?",
  subscribe boxes, app ratings, screenshots, the app description are NOT; App-Store notes are a
  paragraph whose lines (split by `<br>`) are one block, one line each;
- wiki-other: the lead and section paragraphs, section headings and lists ("Trivia" included); not the
  page title, the portable infobox/infobox, table of contents, "[edit]"/"Edit" links, ad slots,
  notices (ambox, stubs, spoiler warnings, site notices), galleries, "See also", "References",
  navboxes, categories, "Trending pages"/"Popular pages" rails, "Community content is available
  under CC-BY-SA", "Retrieved from".
"""

from __future__ import annotations

import functools
import inspect
import json
import random
import re
from collections.abc import Callable

from tests.web_pages import (
    FIRST,
    LAST,
    MONTHS,
    RELATED_TEASERS,
    USERS,
    Block,
    Page,
    _article_blocks,
    _code_snippets,
    _documents,
    _inline,
    _prose,
    _trim_words,
    build_pages,
    esc,
    shingle_counts,
    shingle_scores,
)
from tests.web_pages_heldout import _document, _h, _iso, _json_ld, _render, _slug, _truth

__all__ = ["KINDS", "Page", "pages", "shingle_counts", "shingle_scores"]

KINDS = ("news-local", "magazine", "personal-blog", "review", "release-notes", "wiki-other")

EXTRA_LATIN = [
    "Le maire a promis que la fête du quartier, annulée l'an dernier, reviendrait « plus belle que jamais », avec un budget de 8 000 €.",
    "Für die Bürgerinitiative ist die Schließung der Bücherei ein großer Verlust, sagt Sprecherin Käthe Müller aus Oberhausen.",
    "La señora Núñez explicó que el año próximo la feria tendrá más puestos, una zona para niños y música en vivo.",
]
EXTRA_CE = [
    "Radna Zofia Wiśniewska powiedziała, że remont rynku w Łodzi zakończy się przed zimą, choć koszty wzrosły o 12 procent.",
    "Podle starosty Jiřího Dvořáka bude nová lávka přes řeku otevřena v září, pokud to počasí dovolí.",
    "Mieszkańcy gminy Żółkiewka zebrali ponad dwa tysiące podpisów pod petycją w sprawie nowego przystanku.",
]


# ------------------------------------------------------------------------------------------------ helpers


def _charset(i: int, kind_index: int) -> str:
    if i == 3:
        return "windows-1252"
    if i == 11:
        return "iso-8859-15" if kind_index % 2 == 0 else "windows-1250"
    return "utf-8"


def _extra(charset: str, rng: random.Random) -> str:
    return rng.choice(EXTRA_CE if charset == "windows-1250" else EXTRA_LATIN)


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2019, 2025)}"


def _words(rng: random.Random, i: int) -> int:
    if i == 0:
        return rng.randint(25, 60)
    if i == 8:
        return rng.randint(60, 110)
    return rng.choice([150, 300, 450, 700, 1000, 1500, 2200])


def _localise(blocks: list[Block], rng: random.Random, charset: str) -> list[Block]:
    """The charset pages: a non-ASCII paragraph and typographic apostrophes."""
    if charset == "utf-8":
        return blocks
    blocks = [(k, v.replace("'", "’")) if k == "p" and isinstance(v, str) else (k, v) for k, v in blocks]
    blocks.insert(1 if len(blocks) > 1 else 0, ("p", _extra(charset, rng)))
    return blocks


def _body(rng: random.Random, i: int, charset: str, rich: float = 0.6) -> list[Block]:
    return _localise(_article_blocks(rng, _words(rng, i), rich=rng.random() < rich), rng, charset)


def _teasers(rng: random.Random, k: int) -> list[str]:
    return rng.sample(RELATED_TEASERS, min(k, len(RELATED_TEASERS)))


def _headline(rng: random.Random) -> str:
    return rng.choice([*RELATED_TEASERS, *(t.capitalize() for t, _ in _documents()[:40])])


def _sentence(text: str) -> str:
    """The first sentence of a paragraph (a pull quote repeats one)."""
    m = re.search(r"^(.{40,}?[.!?])(\s|$)", text)
    return m.group(1) if m else _trim_words(text, 14)


def _li(items: list[str], cls: str = "", a: bool = True) -> str:
    c = f' class="{cls}"' if cls else ""
    return "".join(f'<li{c}><a href="/{_slug(t)}">{esc(t)}</a></li>' if a else f"<li{c}>{esc(t)}</li>" for t in items)


def _hash(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") for _ in range(n))


def _sc(rng: random.Random, comp: str) -> str:
    """A styled-components class pair, e.g. `BaseWrap-sc-gjQpdd kbXkZs`."""
    return f"{comp}-sc-{_h(rng, 6)} {_hash(rng, 6)}"


def _mod(comp: str, part: str, rng: random.Random) -> str:
    """A CSS-modules class, e.g. `ArticleParagraph_root__4mszW`."""
    return f"{comp}_{part}__{_hash(rng, 5)}"


# ------------------------------------------------------------------------------------------- news-local

TOWNS = [("Millbrook", "OH"), ("Cedar Falls", "IA"), ("Ashford", "PA"), ("Port Landing", "OR"), ("Brackwater", "WI"), ("Elm Grove", "NC"), ("Harlan Springs", "KY"), ("Stony Creek", "MN")]
PAPERS = ["Gazette", "Courier", "Herald-Tribune", "Sentinel", "Journal", "Register", "Daily Star", "Record-Eagle"]
LOCAL_SECTIONS = ["News", "Local", "Crime", "Schools", "Business", "Sports", "High School Sports", "Opinion", "Obituaries", "Classifieds", "Weather", "Entertainment", "Lifestyle", "Faith", "Public Notices", "Jobs", "Real Estate", "e-Edition", "Contests", "Submit News"]
CLASSIFIEDS = [
    "Garage sale Saturday 8am to 2pm, 412 Oak St. Furniture, tools, kids clothes.",
    "Help wanted: part-time cashier, evenings and weekends. Apply in person.",
    "For rent: 2BR apartment near downtown, $950 a month, no pets.",
    "Firewood for sale, seasoned oak, $180 a cord delivered.",
    "Lost cat: grey tabby, answers to Milo, reward offered.",
    "2012 pickup, 148k miles, runs great, $6,500 OBO.",
    "Piano lessons for all ages, first lesson free.",
    "Estate auction Sunday 10am, antiques, glassware, farm equipment.",
]
WEATHER = ["Partly cloudy", "Mostly sunny", "Light rain", "Overcast", "Scattered showers", "Clear", "Snow showers"]


def _weather(rng: random.Random, town: str, st: str, variant: str) -> str:
    t = rng.randint(18, 92)
    w = rng.choice(WEATHER)
    if variant == "blox":
        return (f'<div class="tnt-weather-widget weather-current" data-location="{esc(town)}, {st}"><a href="/weather/"><span class="tnt-weather-location">{esc(town)}, {st}</span>'
                f'<span class="tnt-weather-temp">{t}°F</span><span class="tnt-weather-condition">{w}</span></a><ul class="list-inline"><li>Hi {t + rng.randint(3, 9)}°</li><li>Lo {t - rng.randint(5, 15)}°</li></ul></div>')
    return (f'<div class="weather-widget c-weather" data-component="weather"><span class="c-weather__temp">{t}°</span><span class="c-weather__cond">{w}</span>'
            f'<span class="c-weather__loc">{esc(town)}</span><a href="/weather/" class="c-weather__more">7-day forecast</a></div>')


def _obits(rng: random.Random, town: str, n: int) -> list[str]:
    return [f"{rng.choice(FIRST)} {rng.choice(LAST)}, {rng.randint(54, 101)}, of {town}" for _ in range(n)]


def _local_related_box(rng: random.Random, cls: str) -> str:
    return f'<div class="{cls}"><h4>Related stories</h4><ul>{_li(_teasers(rng, 3))}</ul></div>'


def _local_readmore(rng: random.Random, p_cls: str = "") -> str:
    label = rng.choice(["RELATED:", "READ MORE:", "MORE:", "ALSO READ:"])
    c = f' class="{p_cls}"' if p_cls else ""
    return f'<p{c}><strong>{label}</strong> <a href="/news/{_slug(rng.choice(RELATED_TEASERS))}">{esc(rng.choice(RELATED_TEASERS))}</a></p>'


def _wall(rng: random.Random, variant: str, paper: str) -> str:
    offer = rng.choice(["$1 for 3 months", "99¢ for your first month", "$2.99 a week"])
    if variant == "arc":
        return (f'<div class="b-paywall-wrapper" data-testid="paywall"><div class="c-stack"><h2 class="c-heading">Subscribe to continue reading</h2><p class="c-paragraph">You have reached your limit of free stories. Get unlimited digital access to {esc(paper)} for just {offer}.</p>'
                '<a class="c-button c-button--primary" href="/subscribe/">Subscribe now</a><p class="c-paragraph">Already a subscriber? <a href="/account/login/">Log in</a></p></div></div>')
    if variant == "brightspot":
        return (f'<ps-paywall class="Paywall" data-paywall-type="hard"><div class="Paywall-content"><div class="Paywall-title">This story is for subscribers</div><div class="Paywall-description">Support local journalism: unlimited access for {offer}. Cancel anytime.</div>'
                '<div class="Paywall-actions"><a class="Button" href="/subscribe">See offers</a><a class="Link" href="/login">Sign in</a></div></div></ps-paywall>')
    return (f'<div id="subscription-required" class="subscription-required tnt-subscription-wall"><div class="subscription-notice"><h3>Subscribe to keep reading</h3><p>To continue reading this story, subscribe for {offer}. Print subscribers get full digital access at no extra cost.</p>'
            '<a class="btn btn-primary" href="/users/signup/?referer_url=/">Subscribe</a> <a class="btn btn-link" href="/users/login/">Already a subscriber? Log in</a></div></div>')


def _news_local(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("arc", "brightspot", "blox")[i % 3]
    town, st = rng.choice(TOWNS)
    paper = f"The {town} {rng.choice(PAPERS)}"
    title = _headline(rng)
    dek = _trim_words(rng.choice(_prose()), rng.randint(12, 22))
    author = _name(rng)
    blocks = _body(rng, i, charset)
    paywalled = i >= 4 and i % 4 == 2
    if paywalled:
        cut = [k for k, b in enumerate(blocks) if b[0] == "p"][min(2, sum(b[0] == "p" for b in blocks) - 1)]
        blocks = blocks[: max(cut + 1, 2 if charset != "utf-8" else 1)]
    heavy = 3 if i == 0 else 1
    sections = rng.sample(LOCAL_SECTIONS, rng.randint(10, 18))
    host = _slug(paper).replace("-", "")
    url = f"https://www.{host}.com/news/local/{_slug(title)}/article_{_h(rng, 8)}-{_h(rng, 4)}.html"
    trending = _teasers(rng, 5 * heavy if heavy > 1 else rng.randint(4, 8))
    obits = _obits(rng, town, rng.randint(3, 6) * heavy)
    ads = ['<div class="ad-label">Advertisement</div>']

    def inbody(k: int, cls_p: str) -> str:
        x = rng.random()
        if i == 1 and k == 0:
            return (f'<div class="{"tnt-most-popular" if variant == "blox" else "most-read-inline"}"><h3>Most read</h3><ol>{_li(_teasers(rng, 8))}</ol></div>'
                    f'<div class="newsletter-inline"><h3>Sign up for our Daily Headlines</h3><p>Get the latest {esc(town)} news delivered to your inbox every morning. It is free.</p><form><input type="email" placeholder="Email address"><button>Sign up</button></form></div>'
                    f'<div class="obit-teaser"><h4>Recent obituaries</h4><ul>{_li(obits[:4])}</ul></div>')
        if x < 0.18:
            return _local_readmore(rng, cls_p)
        if x < 0.28:
            return _local_related_box(rng, "related-box" if variant != "brightspot" else "Enhancement")
        if x < 0.42:
            return ads[0]
        return ""

    ld = _json_ld({"@context": "https://schema.org", "@type": "NewsArticle", "headline": title, "description": dek, "datePublished": _iso(rng), "author": {"@type": "Person", "name": author},
                   "publisher": {"@type": "Organization", "name": paper}, "isAccessibleForFree": not paywalled, "hasPart": {"@type": "WebPageElement", "isAccessibleForFree": False, "cssSelector": ".paywall"}})
    nav_items = "".join(f'<li class="nav-item"><a href="/{_slug(s)}/">{esc(s)}</a></li>' for s in sections)

    if variant == "arc":
        parts = []
        for k, b in enumerate(blocks):
            if b[0] == "p":
                parts.append(f'<p class="c-paragraph" data-type="text">{_inline(str(b[1]), rng)}</p>')
            elif b[0] in ("h2", "h3"):
                parts.append(f'<h2 class="c-heading b-article-body__heading">{esc(str(b[1]))}</h2>')
            else:
                parts.append(_render(b, rng, {"ul": "c-list", "ol": "c-list", "blockquote": "c-blockquote", "table": "c-table"}))
            if b[0] == "p" and k < len(blocks) - 1:
                extra = inbody(k, "c-paragraph")
                if extra == ads[0]:
                    extra = f'<div class="b-ad-block" id="arcad_{_h(rng, 6)}" data-ad-name="ArcAd"><div class="arcad-label">Advertisement</div><div class="arcad" data-slot="inline_{k}"></div></div>'
                parts.append(extra)
        if paywalled:
            parts.append(_wall(rng, "arc", paper))
        fusion = {"_id": _h(rng, 26).upper(), "type": "story", "headlines": {"basic": title}, "description": {"basic": dek}, "credits": {"by": [{"name": author}]},
                  "content_elements": [{"type": "text", "content": str(b[1])[:200]} for b in blocks[:2] if b[0] == "p"]}
        rails = (f'<div class="b-right-rail"><div class="b-top-table-list"><h2 class="c-heading">Trending</h2><ol>{_li(trending)}</ol></div>'
                 f'<div class="b-obituaries"><h2 class="c-heading">Obituaries</h2><ul>{_li(obits)}</ul><a href="/obituaries/">View all obituaries</a> <a href="https://www.legacy.com/obituaries/{host}/place-an-obituary">Place an obituary</a></div>'
                 f'<div class="b-eedition"><a href="https://eedition.{host}.com/"><img src="/eedition-thumb.jpg" alt=""><span>Read today’s e-Edition</span></a></div>'
                 + (f'<div class="b-classifieds"><h2 class="c-heading">Classifieds</h2><ul>{_li(rng.sample(CLASSIFIEDS, 7 if heavy > 1 else 3), a=False)}</ul></div>' if rng.random() < 0.6 or heavy > 1 else "")
                 + "</div>")
        body = (
            f'<div id="fusion-app" class="layout-section"><a class="skip-main" href="#main">Skip to main content</a><div class="b-alert-bar"><span class="b-alert-bar__label">Breaking</span> <a href="/news/">{esc(rng.choice(RELATED_TEASERS))}</a></div>'
            f'<header class="b-header-nav-chain"><nav class="c-nav" aria-label="Sections Menu"><a class="b-header-nav-chain__logo" href="/"><img alt="{esc(paper)}" src="/logo.svg"></a><ul class="c-nav__list">{nav_items}</ul>'
            f'<div class="b-header-nav-chain__actions"><a href="https://eedition.{host}.com/" class="c-link">e-Edition</a><a href="/subscribe/" class="c-button">Subscribe</a><a href="/account/login/" class="c-link">Log In</a></div></nav>{_weather(rng, town, st, "arc")}</header>'
            f'<main id="main" class="b-single-column-regular"><div class="c-stack b-single-column-regular__main"><div class="b-overline"><a class="c-overline" href="/news/local/">Local News</a></div>'
            f'<h1 class="c-heading b-headline">{esc(title)}</h1><h2 class="c-heading b-subheadline">{esc(dek)}</h2>'
            f'<figure class="c-media-item b-lead-art"><img src="/resizer/{_h(rng, 20)}.jpg" alt=""><figcaption class="c-media-item__fig-caption"><span class="c-media-item__caption">{esc(_trim_words(rng.choice(_prose()), 10))}</span> <span class="c-media-item__credit">{esc(_name(rng))} / {esc(paper)}</span></figcaption></figure>'
            f'<div class="b-byline"><span class="c-attribution">By <a href="/people/{_slug(author)}/">{esc(author)}</a></span> <time class="c-date" datetime="{_iso(rng)}">{_date(rng)} at {rng.randint(1, 12)}:{rng.randint(10, 59)} p.m.</time></div>'
            f'<div class="b-share-bar"><button aria-label="Share on Facebook">Facebook</button><button aria-label="Share on X">X</button><button aria-label="Email">Email</button></div>'
            f'<article class="b-article-body">{"".join(parts)}</article>'
            f'<div class="b-tag-list"><a href="/tags/{_slug(town)}/" class="c-link">{esc(town)}</a> <a href="/tags/local-government/" class="c-link">Local government</a></div>'
            f'<div class="b-author-bio"><p class="c-paragraph">{esc(author)} covers {esc(rng.choice(["city hall", "schools", "courts", "county government"]))} for {esc(paper)}. Reach them at {_slug(author)}@{host}.com.</p></div>'
            f'<p class="c-paragraph b-copyright">Copyright {rng.randint(2020, 2025)} {esc(paper)}. All rights reserved. This material may not be published, broadcast, rewritten or redistributed.</p></div>{rails}</main>'
            f'<footer class="b-footer"><ul>{"".join(f"<li><a>{x}</a></li>" for x in ["Contact Us", "Advertise", "Terms of Use", "Privacy Policy", "Manage Subscription", "Careers", "Submit a Letter to the Editor", "Public Notices"])}</ul>'
            f'<p>© {rng.randint(2020, 2025)} {esc(paper)} | Powered by Arc XP</p></footer></div>'
            f'<script id="fusion-metadata" type="application/javascript">window.Fusion=window.Fusion||{{}};Fusion.arcSite="{host}";Fusion.deployment="{rng.randint(100, 999)}";Fusion.globalContent={json.dumps(fusion, ensure_ascii=False)};</script>'
        )
        head = ld + '<link rel="stylesheet" href="/pf/resources/dist/styles.css"><script async src="https://securepubads.g.doubleclick.net/tag/js/gpt.js"></script>'
        return _document(head, body, charset, f"{title} | {paper}"), _truth(blocks), url

    if variant == "brightspot":
        parts = []
        for k, b in enumerate(blocks):
            parts.append(_render(b, rng, {"table": "RichTextTable"}))
            if b[0] == "p" and k < len(blocks) - 1:
                extra = inbody(k, "")
                if extra == ads[0]:
                    extra = f'<div class="Enhancement" data-align-center><div class="Enhancement-item"><div class="GoogleDfpAd-wrap"><bsp-google-dfp-ad class="GoogleDfpAd" data-slot-name="inline{k}" data-ad-label="Advertisement"><div class="GoogleDfpAd-label">Advertisement</div></bsp-google-dfp-ad></div></div></div>'
                elif extra.startswith('<div class="Enhancement"'):
                    extra = f'<div class="Enhancement" data-align-left><div class="Enhancement-item"><div class="PromoList"><div class="PromoList-title">Related Stories</div><ul class="PromoList-items">{_li(_teasers(rng, 3), "PromoList-item")}</ul></div></div></div>'
                parts.append(extra)
        if paywalled:
            parts.append(_wall(rng, "brightspot", paper))
        aside = (f'<aside class="Page-aside"><div class="List" data-module-name="most-read"><h3 class="List-title">Most Read</h3><ol class="List-items">{_li(trending, "List-items-item")}</ol></div>'
                 f'<div class="GoogleDfpAd-wrap"><bsp-google-dfp-ad class="GoogleDfpAd" data-slot-name="rail1"></bsp-google-dfp-ad></div>'
                 f'<div class="List" data-module-name="obituaries"><h3 class="List-title">Obituaries</h3><ul class="List-items">{_li(obits, "List-items-item")}</ul></div>'
                 f'<div class="PromoEEdition"><a class="PromoEEdition-link" href="/e-edition">e-Edition</a><p class="PromoEEdition-description">Today’s paper, page by page, as it appeared in print.</p></div></aside>')
        trend_bar = "".join(f'<a class="TrendingBar-item" href="/{_slug(t)}">{esc(t)}</a>' for t in trending[:4])
        body = (
            f'<bsp-header class="Page-header"><div class="Page-header-bar"><button class="Page-header-menu-trigger" aria-label="Open menu"></button><a class="Page-header-logo" href="/"><img alt="{esc(paper)}" src="/logo.png"></a>'
            f'<div class="Page-header-end"><a class="Page-header-eedition" href="/e-edition">e-Edition</a><a class="Page-header-subscribe Button" href="/subscribe">Subscribe</a><bsp-sign-in class="SignIn">Sign In</bsp-sign-in></div>{_weather(rng, town, st, "brightspot")}</div>'
            f'<nav class="Page-header-navigation"><ul class="Navigation-items">{nav_items}</ul></nav></bsp-header>'
            f'<div class="Page-above"><ps-trending class="TrendingBar"><span class="TrendingBar-title">Trending:</span>{trend_bar}</ps-trending></div>'
            f'<div class="Page-content"><main class="Page-main"><div class="ArticlePage-mainContent"><div class="ArticlePage-breadcrumbs"><a class="Link" href="/news">News</a> <a class="Link" href="/news/local">Local</a></div>'
            f'<h1 class="ArticlePage-headline">{esc(title)}</h1><div class="ArticlePage-subHeadline">{esc(dek)}</div>'
            f'<div class="ArticlePage-authors"><div class="ArticlePage-authorName">By <a class="Link" href="/staff/{_slug(author)}">{esc(author)}</a></div><div class="ArticlePage-datePublished">Published {_date(rng)}</div></div>'
            f'<bsp-social-share class="ArticlePage-actions"><a class="SocialLink" data-social-service="facebook">Facebook</a><a class="SocialLink" data-social-service="twitter">Twitter</a><a class="SocialLink" data-social-service="email">Email</a></bsp-social-share>'
            f'<div class="ArticlePage-lede"><figure class="Figure"><img alt="" src="/dims4/{_h(rng, 12)}.jpg"><div class="Figure-content"><div class="Figure-caption">{esc(_trim_words(rng.choice(_prose()), 9))}</div><div class="Figure-credit">{esc(_name(rng))}</div></div></figure></div>'
            f'<div class="ArticlePage-articleBody"><div class="RichTextArticleBody RichTextBody">{"".join(parts)}</div></div>'
            f'<div class="ArticlePage-tags"><div class="ArticlePage-tags-title">Tags</div><ul>{_li(rng.sample(sections, 3))}</ul></div></div></main>{aside}</div>'
            f'<div class="Page-below"><div class="PromoList" data-module-name="more-local"><h2 class="PromoList-title">More Local News</h2><ul>{_li(_teasers(rng, 4))}</ul></div>'
            + (f'<div class="Classifieds"><h2>Marketplace</h2><ul>{_li(rng.sample(CLASSIFIEDS, 5), a=False)}</ul></div>' if heavy > 1 else "")
            + f'</div><footer class="Page-footer"><div class="Page-footer-navigation"><ul>{_li(["About Us", "Contact Us", "Advertise With Us", "Terms of Service", "Privacy Policy", "Do Not Sell My Personal Information", "Newsletters", "RSS"])}</ul></div>'
            f'<div class="Page-footer-disclaimer">© {rng.randint(2020, 2025)} {esc(paper)}. Powered by Brightspot.</div></footer>'
            '<script>window.brightspot = window.brightspot || {}; brightspot.dataLayer = {"pageType": "article", "section": "local"};</script>'
        )
        return _document(ld + '<link rel="stylesheet" href="/resource/00000170-0000-0000-0000-000000000000/styleguide/All.min.css">', body, charset, f"{title} – {paper}", body_attrs=' class="Page-body" data-content-type="article"'), _truth(blocks), url

    # BLOX / TownNews
    parts = []
    for k, b in enumerate(blocks):
        parts.append(_render(b, rng, {"table": "table table-striped"}))
        if b[0] == "p" and k < len(blocks) - 1:
            extra = inbody(k, "")
            if extra == ads[0]:
                extra = f'<div id="tncms-region-article_instory_{k}" class="tncms-region hidden-print"><div class="tnt-ads-container"><div class="tnt-ads"><span class="tnt-ad-label">Advertisement</span><div id="tncms-ad-{_h(rng, 6)}" class="tnt-ad" data-ad-pos="instory"></div></div></div></div>'
            parts.append(extra)
    body_html = "".join(parts)
    if paywalled:
        body_html += _wall(rng, "blox", paper)
    blocks_rail = (
        f'<aside class="col-md-4 col-lg-4 hidden-print" id="sidebar"><div id="tncms-region-sidebar" class="tncms-region"><section id="tncms-block-{rng.randint(10**5, 10**6)}" class="tncms-block"><header class="block-title"><h3 class="block-title-inner">Most Popular</h3></header>'
        f'<ul class="nav nav-tabs"><li class="active"><a>Stories</a></li><li><a>Videos</a></li></ul><div class="tnt-media-list"><ol>{_li(trending)}</ol></div></section>'
        f'<section class="tncms-block obituaries-block"><header class="block-title"><h3>Latest Obituaries</h3></header><ul class="list-unstyled">{_li(obits)}</ul><a href="/obituaries/">See all obituaries</a></section>'
        f'<section class="tncms-block"><header class="block-title"><h3>Today’s e-Edition</h3></header><a href="/eedition/"><img src="/eedition/page1.jpg" alt=""></a></section>'
        f'<section class="tncms-block classifieds-block"><header class="block-title"><h3>Local Classifieds</h3></header><ul>{_li(rng.sample(CLASSIFIEDS, 4 if heavy > 1 else 2), a=False)}</ul><a href="/classifieds/">Browse all classifieds</a></section></div></aside>'
    )
    body = (
        f'<div id="site-container"><div id="site-top-nav-container" class="hidden-print"><nav id="site-top-nav" class="navbar navbar-default"><ul class="nav navbar-nav">{_li(["e-Edition", "Subscribe", "Obituaries", "Classifieds", "Jobs", "Sign Up for Newsletters"])}</ul>'
        f'<ul class="nav navbar-nav navbar-right"><li><a href="/users/login/">Log In</a></li></ul></nav></div><header id="site-header" class="hidden-print"><a href="/" class="logo"><img src="/content/tncms/live/global/resources/images/logo.png" alt="{esc(paper)}"></a>{_weather(rng, town, st, "blox")}</header>'
        f'<nav id="main-navigation" class="navbar"><ul class="nav navbar-nav">{nav_items}</ul></nav>'
        f'<div id="main-body-container" class="container"><div class="row"><div class="col-md-8 col-lg-8 main-content"><article id="article_{_h(rng, 8)}" class="asset story" itemscope itemtype="http://schema.org/NewsArticle">'
        f'<header class="asset-header"><div class="meta"><span class="tnt-section-tag"><a href="/news/local/">Local News</a></span></div><h1 class="headline"><span class="tnt-headline" itemprop="headline">{esc(title)}</span></h1>'
        f'<h2 class="subhead"><span>{esc(dek)}</span></h2><ul class="list-inline"><li><span class="tnt-byline" itemprop="author">{esc(author)}</span></li><li><time datetime="{_iso(rng)}" class="tnt-date asset-date">{_date(rng)}</time></li></ul>'
        f'<div class="share-container"><ul class="list-inline"><li class="share facebook"><a>Facebook</a></li><li class="share twitter"><a>Twitter</a></li><li class="share email"><a>Email</a></li><li class="share print"><a>Print</a></li><li class="share comment-count"><a>{rng.randint(0, 80)} comments</a></li></ul></div></header>'
        f'<div class="asset-photo"><figure class="photo"><img src="/content/tncms/assets/v3/editorial/{_h(rng, 2)}/{_h(rng, 32)}.image.jpg" alt=""><figcaption class="caption-text"><p>{esc(_trim_words(rng.choice(_prose()), 10))}</p><span class="tnt-byline">{esc(_name(rng))}, Staff</span></figcaption></figure></div>'
        f'<div class="asset-content {"subscriber-premium" if paywalled else "subscriber-only"}" itemprop="articleBody"><div id="article-body" class="asset-body" data-load-type="article">{body_html}</div></div>'
        f'<div class="asset-tags"><ul class="list-inline">{_li(rng.sample(sections, 3))}</ul></div>'
        f'<div class="asset-comments"><h4>Comments</h4><p>Sign in to comment. Welcome to the discussion. Keep it clean. Please avoid obscene, vulgar, lewd, racist or sexually-oriented language.</p></div></article></div>{blocks_rail}</div></div>'
        f'<footer id="site-footer"><ul>{_li(["Contact Us", "Terms of Use", "Privacy Policy", "Submit an Obituary", "Place a Classified Ad", "Advertise"])}</ul><p>© {rng.randint(2020, 2025)} {esc(paper)}, {esc(town)}, {st}. Powered by BLOX Content Management System from TownNews.com.</p></footer></div>'
        '<script>var __tnt = __tnt || {}; __tnt.user = {"loggedIn": false}; __tnt.subscription = {"required": true};</script>'
    )
    return _document(ld + '<link rel="stylesheet" href="/shared-content/art/tncms/templates/libraries/flex/components/bootstrap/resources/styles/bootstrap.min.css">', body, charset, f"{title} | Local News | {host}.com", body_attrs=' class="fixed-nav lock-nav"'), _truth(blocks), url


# --------------------------------------------------------------------------------------------- magazine

MAGS = ["The Lantern Review", "Meridian Quarterly", "The Longhand", "Atlas Monthly", "Field Notes Magazine", "The Outer Harbor"]


def _endnotes(rng: random.Random, n: int) -> list[str]:
    return [_trim_words(rng.choice(_prose()), rng.randint(10, 30)) for _ in range(n)]


def _magazine(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("conde", "atlantic", "wp")[i % 3]
    mag = rng.choice(MAGS)
    title = _headline(rng)
    dek = _trim_words(rng.choice(_prose()), rng.randint(14, 26))
    author = _name(rng)
    words = _words(rng, i) if i in (0, 8) else rng.choice([900, 1500, 2500, 3500, 5000])
    blocks = _localise(_article_blocks(rng, words, rich=rng.random() < 0.5), rng, charset)
    notes = _endnotes(rng, rng.randint(1, 5)) if i not in (0,) and rng.random() < 0.5 else []
    paras = [k for k, b in enumerate(blocks) if b[0] == "p"]
    note_at = sorted(rng.sample(paras, min(len(notes), len(paras))))
    pulls = {k: _sentence(str(blocks[k][1])) for k in rng.sample(paras, min(len(paras), rng.randint(0, 3)))} if len(paras) > 2 else {}
    breaks = set(rng.sample(paras[2:-1], min(len(paras[2:-1]), rng.randint(0, 3)))) if len(paras) > 4 else set()
    issue = f"{rng.choice(MONTHS)} {rng.randint(2019, 2025)}"
    url = f"https://www.{_slug(mag).replace('-', '')}.example.com/magazine/{issue.split()[1]}/{rng.randint(1, 12):02d}/{_slug(title)}"
    more = _teasers(rng, rng.randint(3, 6) * (2 if i == 0 else 1))
    bio = f"{author} is a contributing writer at {mag}. {rng.choice(['Her', 'His', 'Their'])} most recent book is “{rng.choice(RELATED_TEASERS)}.”"
    truth = [*blocks, *(("p", n) for n in notes)]

    def marker(k: int) -> str:
        if k not in note_at:
            return ""
        n = note_at.index(k) + 1
        return {"conde": f'<sup><a href="#note-{n}" id="ref-{n}" class="footnote-ref">{n}</a></sup>', "atlantic": f'<a class="{_mod("ArticleFootnote", "ref", rng)}" href="#fn{n}" id="fnref{n}"><sup>{n}</sup></a>',
                "wp": f'<sup data-fn="{_h(rng, 8)}" class="fn"><a href="#fn-{n}" id="fn-{n}-link">{n}</a></sup>'}[variant]

    def para(k: int, text: str, cls: str, first: bool) -> str:
        inner = _inline(text, rng)
        if first and variant != "wp" and re.match(r"[A-Za-z]\w", text):
            cap = {"conde": "has-dropcap__first-letter", "atlantic": _mod("ArticleParagraph", "dropcap", rng)}[variant]
            inner = f'<span class="{cap}">{esc(text[0])}</span>{_inline(text[1:], rng)}'
        c = f' class="{cls}"' if cls else ""
        return f"<p{c}>{inner}{marker(k)}</p>"

    parts: list[str] = []
    first_done = False
    if variant == "conde":
        for k, b in enumerate(blocks):
            if b[0] == "p":
                parts.append(para(k, str(b[1]), "has-dropcap has-dropcap__lead-standard-heading" if not first_done else "", not first_done))
                first_done = True
            else:
                parts.append(_render(b, rng, {"h2": "", "h3": ""}))
            if k in pulls:
                parts.append(f'<aside class="{_sc(rng, "PullQuoteEmbedWrapper")} pullquote-embed"><p class="{_sc(rng, "PullQuoteEmbedContent")}">“{esc(pulls[k])}”</p></aside>')
            if k in breaks:
                parts.append(f'<hr class="{_sc(rng, "SectionBreak")}"><p class="{_sc(rng, "SectionBreakGlyph")}" aria-hidden="true">◆</p>')
            if i == 1 and k == paras[0]:
                parts.append(f'<div class="{_sc(rng, "ConsumerMarketingUnitThemedWrapper")} consumer-marketing-unit"><div class="{_sc(rng, "CMUHeadline")}">Get the best of {esc(mag)} in your inbox</div><p>Sign up for our daily newsletter: essays, fiction, cartoons and the week’s best long reads, picked by our editors.</p><button>Sign up</button>'
                             f'<p class="{_sc(rng, "CMUDisclaimer")}">By signing up, you agree to our User Agreement and Privacy Policy &amp; Cookie Statement.</p></div>'
                             f'<div class="{_sc(rng, "RecircMostPopularWrapper")}"><h3>Most Popular</h3><ol>{_li(_teasers(rng, 6))}</ol></div>')
        fn = (f'<div class="{_sc(rng, "Footnotes")} footnotes"><hr><ol>' + "".join(f'<li id="note-{k + 1}"><p>{esc(n)} <a href="#ref-{k + 1}" aria-label="Back to text">↩</a></p></li>' for k, n in enumerate(notes)) + "</ol></div>") if notes else ""
        body = (
            f'<div id="app-root"><div class="{_sc(rng, "StackWrapper")}"><header class="{_sc(rng, "NavigationWrapper")}" role="banner"><a href="/" class="{_sc(rng, "BrandLink")}">{esc(mag)}</a>'
            f'<nav aria-label="Main"><ul class="{_sc(rng, "NavigationList")}">{_li(["Newsletter", "The Latest", "News", "Books &amp; Culture", "Fiction &amp; Poetry", "Humor &amp; Cartoons", "Magazine", "Puzzles &amp; Games", "Video", "Podcasts", "Goings On"])}</ul></nav>'
            f'<a class="{_sc(rng, "SubscribeLink")}" href="/subscribe">Subscribe</a><a href="/account/sign-in" class="{_sc(rng, "SignInLink")}">Sign In</a></header>'
            f'<main id="main-content"><article class="article main-content" lang="en-US"><header class="{_sc(rng, "SplitScreenContentHeaderWrapper")}"><div class="{_sc(rng, "RubricWrapper")}"><a href="/magazine/a-reporter-at-large">A Reporter at Large</a></div>'
            f'<h1 data-testid="ContentHeaderHed" class="{_sc(rng, "BaseWrap")} {_sc(rng, "ContentHeaderHed")}">{esc(title)}</h1><div class="{_sc(rng, "ContentHeaderDek")}">{esc(dek)}</div>'
            f'<div class="{_sc(rng, "BylinesWrapper")}"><span>By <a href="/contributors/{_slug(author)}">{esc(author)}</a></span></div><time class="{_sc(rng, "ContentHeaderPublishDate")}">{_date(rng)}</time>'
            f'<figure class="{_sc(rng, "ResponsiveAssetFigure")}"><img alt="" src="/photos/{_h(rng, 24)}.jpg"><figcaption><span class="{_sc(rng, "CaptionText")}">{esc(_trim_words(rng.choice(_prose()), 8))}</span><span class="{_sc(rng, "CaptionCredit")}">Illustration by {esc(_name(rng))}</span></figcaption></figure></header>'
            f'<div class="{_sc(rng, "ArticlePageContentBackGround")}"><div class="{_sc(rng, "ArticlePageChunks")}"><div class="body body__container article__body"><div class="container container--body"><div class="container--body-inner">'
            f'<div class="body__inner-container" data-journey-hook="client-content">{"".join(parts)}</div></div></div></div>{fn}'
            f'<p class="{_sc(rng, "ContentFooterPrintEdition")}">Published in the print edition of the {issue} issue, with the headline “{esc(_trim_words(title, 3))}.”</p>'
            f'<div class="{_sc(rng, "ContributorBioWrapper")} contributor-bio"><p>{esc(bio)}</p></div>'
            f'<div class="{_sc(rng, "ContentFooterTags")}"><a>More:</a> {" ".join(f"<a>{esc(t)}</a>" for t in rng.sample(["Cities", "History", "Science", "Families", "Memory", "Architecture", "Rivers"], 3))}</div></div></div></article>'
            f'<section class="{_sc(rng, "SummaryCollectionGrid")}"><h2>More from this issue</h2><ul>{_li(more)}</ul></section>'
            f'<section class="{_sc(rng, "RecircMostPopular")}"><h2>Most Popular</h2><ol>{_li(_teasers(rng, 5))}</ol></section></main>'
            f'<footer class="{_sc(rng, "FooterWrapper")}"><ul>{_li(["About", "Careers", "Contact", "FAQ", "Media Kit", "Press", "Accessibility Help", "User Agreement", "Privacy Policy", "Your California Privacy Rights"])}</ul><p>© {rng.randint(2020, 2025)} Condé Nast. All rights reserved.</p></footer></div></div>'
            f'<script type="text/javascript">window.__PRELOADED_STATE__ = {json.dumps({"transformed": {"article": {"headline": title, "dek": dek, "issueDate": issue}}}, ensure_ascii=False)};</script>'
        )
        return _document(_json_ld({"@context": "http://schema.org", "@type": "NewsArticle", "headline": title, "description": dek, "author": [{"@type": "Person", "name": author}]}), body, charset, f"{title} | {mag}"), _truth(truth), url

    if variant == "atlantic":
        pcls = _mod("ArticleParagraph", "root", rng)
        for k, b in enumerate(blocks):
            if b[0] == "p":
                parts.append(para(k, str(b[1]), pcls, not first_done))
                first_done = True
            elif b[0] in ("h2", "h3"):
                parts.append(f'<h2 class="{_mod("ArticleHeading", "root", rng)}">{esc(str(b[1]))}</h2>')
            else:
                parts.append(_render(b, rng, {"blockquote": _mod("ArticleBlockquote", "root", rng), "ul": _mod("ArticleList", "root", rng), "table": _mod("ArticleTable", "root", rng)}))
            if k in pulls:
                parts.append(f'<figure class="{_mod("ArticlePullquote", "root", rng)}"><blockquote class="{_mod("ArticlePullquote", "pullquote", rng)}"><p>{esc(pulls[k])}</p></blockquote></figure>')
            if k in breaks:
                parts.append(f'<div class="{_mod("ArticleSectionBreak", "root", rng)}" role="separator"><span aria-hidden="true">* * *</span></div>')
            if (i == 1 and k == paras[0]) or (k in breaks and rng.random() < 0.5):
                parts.append(f'<div class="{_mod("ArticleInlineNewsletter", "root", rng)}" data-event-module="inline newsletter"><h3>Sign up for The Books Briefing</h3><p>Each week, editors recommend books to read, and explore the ideas worth thinking about.</p><form><input type="email" aria-label="Email Address"><button>Sign Up</button></form></div>')
                if i == 1:
                    parts.append(f'<div class="{_mod("ArticleRelatedContentModule", "root", rng)}"><h3>Read more from this issue</h3><ul>{_li(_teasers(rng, 5))}</ul></div><div class="{_mod("AdSlot", "root", rng)}" data-ad-slot="inline_1"><span>Advertisement</span></div>')
        fn = (f'<aside class="{_mod("ArticleFootnotes", "root", rng)}" aria-label="Footnotes"><ol>' + "".join(f'<li id="fn{k + 1}"><p>{esc(n)}</p><a href="#fnref{k + 1}">↩</a></li>' for k, n in enumerate(notes)) + "</ol></aside>") if notes else ""
        body = (
            f'<div id="__next"><a class="{_mod("SkipLink", "root", rng)}" href="#main-content">Skip to content</a><header class="{_mod("Header", "root", rng)}"><nav aria-label="Site Navigation"><a href="/" class="{_mod("Logo", "root", rng)}">{esc(mag)}</a>'
            f'<ul>{_li(["Popular", "Latest", "Newsletters", "Sections", "Politics", "Ideas", "Books", "Culture", "Science", "The Magazine"])}</ul><a href="/subscribe/" class="{_mod("Header", "subscribe", rng)}">Subscribe</a></nav></header>'
            f'<main id="main-content" class="{_mod("ArticleLayout", "main", rng)}"><article class="{_mod("ArticleLayout", "article", rng)}"><header class="{_mod("ArticleHero", "root", rng)}"><div class="{_mod("ArticleRubric", "root", rng)}"><a href="/magazine/">{issue} Issue</a></div>'
            f'<h1 class="{_mod("ArticleTitle", "root", rng)}">{esc(title)}</h1><p class="{_mod("ArticleDek", "root", rng)}">{esc(dek)}</p><div class="{_mod("ArticleBylines", "root", rng)}">By <a href="/author/{_slug(author)}/">{esc(author)}</a></div>'
            f'<figure class="{_mod("ArticleLeadArt", "root", rng)}"><img alt="" src="/thumbor/{_h(rng, 20)}/media/img/{_h(rng, 8)}.jpg"><figcaption class="{_mod("ArticleLeadFigure", "caption", rng)}">Illustration by {esc(_name(rng))}</figcaption></figure>'
            f'<div class="{_mod("ArticleTimestamp", "root", rng)}"><time datetime="{_iso(rng)}">{_date(rng)}</time></div><div class="{_mod("ArticleShare", "root", rng)}"><button>Share</button><button>Save</button></div></header>'
            f'<section class="{_mod("ArticleBody", "root", rng)}" data-event-module="article body">{"".join(parts)}</section>{fn}'
            f'<div class="{_mod("ArticleBio", "root", rng)}"><address class="{_mod("ArticleBio", "content", rng)}">{esc(bio)}</address></div>'
            f'<p class="{_mod("ArticleFooter", "note", rng)}">This article appears in the {issue} print edition with the headline “{esc(_trim_words(title, 3))}.” When you buy a book using a link on this page, we receive a commission. Thank you for supporting {esc(mag)}.</p>'
            f'<div class="{_mod("ArticleMagazineIssue", "root", rng)}"><h2>Explore the {issue} Issue</h2><p>Check out more from this issue and find your next story to read.</p><a href="/magazine/">View More</a><ul>{_li(more)}</ul></div></article></main>'
            f'<footer class="{_mod("Footer", "root", rng)}"><ul>{_li(["About", "Contact", "Podcasts", "Subscription", "Follow", "Privacy Policy", "Advertising Guidelines", "Terms Conditions", "Responsible Disclosure", "Site Map"])}</ul><p>{esc(mag)} © {rng.randint(2020, 2025)}. All Rights Reserved.</p></footer></div>'
            f'<script id="__NEXT_DATA__" type="application/json">{json.dumps({"props": {"pageProps": {"urqlState": {_h(rng, 10): {"data": json.dumps({"article": {"title": title, "dek": dek}})}}}}, "page": "/[...slug]"}, ensure_ascii=False)}</script>'
        )
        return _document(_json_ld({"@context": "https://schema.org", "@type": "NewsArticle", "headline": title, "author": {"@type": "Person", "name": author}}), body, charset, f"{title} - {mag}"), _truth(truth), url

    # WordPress block-theme magazine
    for k, b in enumerate(blocks):
        if b[0] == "p":
            c = "has-drop-cap" if not first_done else ""
            parts.append(para(k, str(b[1]), c, False))
            first_done = True
        else:
            parts.append(_render(b, rng, {"h2": "wp-block-heading", "h3": "wp-block-heading", "ul": "wp-block-list", "blockquote": "wp-block-quote", "table": ""}).replace("<table>", '<figure class="wp-block-table"><table>').replace("</table>", "</table></figure>"))
        if k in pulls:
            parts.append(f'<figure class="wp-block-pullquote has-border-color"><blockquote><p>{esc(pulls[k])}</p><cite>{esc(author)}</cite></blockquote></figure>')
        if k in breaks:
            parts.append('<hr class="wp-block-separator has-alpha-channel-opacity is-style-dots"/>')
        if i == 1 and k == paras[0]:
            parts.append(f'<div class="wp-block-group mag-inline-promo"><div class="wp-block-group__inner-container"><h3 class="wp-block-heading">From the archive</h3><ul class="wp-block-latest-posts__list wp-block-latest-posts">{_li(_teasers(rng, 6))}</ul>'
                         '<p class="has-small-font-size">Become a member to read every issue since 1998, and get the print magazine delivered four times a year.</p><div class="wp-block-buttons"><div class="wp-block-button"><a class="wp-block-button__link">Join now</a></div></div></div></div>')
    fn = ('<ol class="wp-block-footnotes">' + "".join(f'<li id="fn-{k + 1}">{esc(n)} <a href="#fn-{k + 1}-link" aria-label="Jump to footnote reference {k + 1}">↩︎</a></li>' for k, n in enumerate(notes)) + "</ol>") if notes else ""
    body = (
        f'<div class="wp-site-blocks"><header class="wp-block-template-part"><div class="wp-block-group site-header"><p class="wp-block-site-title"><a href="/">{esc(mag)}</a></p>'
        f'<nav class="wp-block-navigation" aria-label="Main menu"><ul class="wp-block-navigation__container">{_li(["Current Issue", "Archive", "Essays", "Fiction", "Poetry", "Reviews", "About", "Donate"], "wp-block-navigation-item")}</ul></nav></div></header>'
        f'<main class="wp-block-group"><div class="wp-block-group post-header"><div class="taxonomy-category wp-block-post-terms"><a href="/category/features/" rel="tag">Features</a></div><h1 class="wp-block-post-title">{esc(title)}</h1>'
        f'<p class="wp-block-post-excerpt__excerpt">{esc(dek)}</p><div class="wp-block-post-author"><div class="wp-block-post-author__content"><p class="wp-block-post-author__name">{esc(author)}</p></div></div><div class="wp-block-post-date"><time datetime="{_iso(rng)}">{_date(rng)}</time></div>'
        f'<p class="issue-label">From the {issue} issue</p></div>'
        f'<div class="entry-content wp-block-post-content is-layout-constrained">{"".join(parts)}{fn}</div>'
        f'<div class="wp-block-group author-bio"><h2 class="wp-block-heading">About the author</h2><p>{esc(bio)}</p></div>'
        f'<div class="wp-block-group more-from-issue"><h2 class="wp-block-heading">More from this issue</h2><ul class="wp-block-post-template">{_li(more, "wp-block-post")}</ul></div>'
        f'<div class="wp-block-group"><h2>Support independent writing</h2><p>{esc(mag)} is a non-profit magazine funded by its readers. A gift of any size keeps every essay free to read.</p><a class="wp-block-button__link">Donate</a></div></main>'
        f'<footer class="wp-block-template-part site-footer"><p>© {rng.randint(2015, 2025)} {esc(mag)}. ISSN {rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}.</p><p>Proudly powered by WordPress</p></footer></div>'
        "<script id=\"wp-emoji-settings\" type=\"application/json\">{\"baseUrl\":\"https://s.w.org/images/core/emoji/15.0.3/72x72/\"}</script>"
    )
    return _document('<link rel="stylesheet" id="wp-block-library-css" href="/wp-includes/css/dist/block-library/style.min.css">', body, charset, f"{title} – {mag}", body_attrs=' class="post-template-default single single-post wp-embed-responsive"'), _truth(truth), url


# ---------------------------------------------------------------------------------------- personal-blog

BLOG_NAMES = ["Notes from the Allotment", "Half-Finished Thoughts", "The Patient Compiler", "Marginalia", "Small Rooms", "Weeknotes by Kiri", "Lighthouse Log"]
BLOG_TAGS = ["python", "gardening", "weeknotes", "books", "cycling", "self-hosting", "photography", "cooking", "travel", "indieweb", "til", "music", "parenting", "homelab"]


def _archive(rng: random.Random) -> list[str]:
    year = rng.randint(2019, 2025)
    return [f"{m} {year} ({rng.randint(1, 9)})" for m in rng.sample(MONTHS, rng.randint(4, 9))]


def _webmentions(rng: random.Random, n: int) -> str:
    items = "".join(f'<li class="webmention h-cite"><a class="u-author h-card" href="https://{rng.choice(USERS).replace("_", "").replace(".", "")}.example.net/">{esc(rng.choice(USERS))}</a> '
                    f'<span class="wm-type">{rng.choice(["liked this", "reposted this", "replied:"])}</span> <span class="p-content">{esc(rng.choice(COMMENTS))}</span></li>' for _ in range(n))
    return f'<section id="webmentions" class="webmentions"><h2>Webmentions</h2><p class="wm-count">{n} likes and reposts</p><ol class="webmention-list">{items}</ol></section>'


COMMENTS = ["Lovely write-up, thank you.", "This is the post I needed this week.", "I had the same experience last spring.", "Great photos!", "Bookmarked, will try this weekend.",
            "Have you tried the other approach?", "Thanks for writing this down.", "Welcome back to blogging!", "Following along from Melbourne.", "This made me smile."]


def _newsletter_box(rng: random.Random, cls: str) -> str:
    return (f'<div class="{cls}"><h3>{rng.choice(["Get new posts by email", "Subscribe to the newsletter", "Like what you read?"])}</h3><p>{rng.choice(["One email a month, no tracking. Unsubscribe any time.", "Join 400 readers and get every new post in your inbox.", "I write about once a week. Drop your email below and I will send new posts your way."])}</p>'
            f'<form action="https://buttondown.email/api/emails/embed-subscribe/x" method="post"><input type="email" name="email" placeholder="you@example.com"><input type="submit" value="Subscribe"></form></div>')


def _personal_blog(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("hugo", "jekyll", "eleventy", "squarespace", "wix")[i % 5]
    blog = rng.choice(BLOG_NAMES)
    author = _name(rng)
    title = _headline(rng)
    blocks = _body(rng, i, charset, rich=0.5)
    if rng.random() < 0.25 and i not in (0, 8):
        snips = _code_snippets()
        blocks.insert(rng.randrange(1, len(blocks) + 1), ("code", snips[rng.randrange(len(snips))]))
    tags = rng.sample(BLOG_TAGS, rng.randint(2, 5))
    date = _date(rng)
    host = _slug(blog).replace("-", "") + ".example.net"
    url = f"https://{host}/{rng.randint(2019, 2025)}/{rng.randint(1, 12):02d}/{_slug(title)}/"
    prev_t, next_t = _teasers(rng, 2)
    heavy = i == 0
    nwm = rng.randint(8, 20) if heavy else rng.randint(0, 6)
    wm = _webmentions(rng, nwm) if nwm else ""
    tagcloud = " ".join(f'<a href="/tags/{t}/" style="font-size:{rng.randint(10, 24)}px">{t}</a>' for t in rng.sample(BLOG_TAGS, 10 if heavy else 6))
    arch = _archive(rng)
    posts_in = "" if i != 1 else _newsletter_box(rng, "newsletter-inline") + f'<aside class="related-inline"><h4>You might also like</h4><ul>{_li(_teasers(rng, 5))}</ul></aside>'

    def render_all(cls: dict | None = None, code: Callable[[Block], str] | None = None) -> str:
        out = []
        for k, b in enumerate(blocks):
            out.append(code(b) if code and b[0] == "code" else _render(b, rng, cls))
            if k == 0:
                out.append(posts_in)
        return "".join(out)

    if variant == "hugo":  # PaperMod
        content = render_all(code=lambda b: f'<div class="highlight"><pre tabindex="0" class="chroma"><code class="language-python" data-lang="python">{esc(str(b[1]))}</code></pre></div>')
        body = (
            f'<header class="header"><nav class="nav"><div class="logo"><a href="/" accesskey="h" title="{esc(blog)} (Alt + H)">{esc(blog)}</a><div class="logo-switches"><button id="theme-toggle" accesskey="t" title="(Alt + T)">🌓</button></div></div>'
            f'<ul id="menu"><li><a href="/archives/" title="Archive"><span>Archive</span></a></li><li><a href="/tags/" title="Tags"><span>Tags</span></a></li><li><a href="/search/" title="Search (Alt + /)" accesskey="/"><span>Search</span></a></li><li><a href="/about/"><span>About</span></a></li></ul></nav></header>'
            f'<main class="main"><article class="post-single"><header class="post-header"><div class="breadcrumbs"><a href="/">Home</a>&nbsp;»&nbsp;<a href="/posts/">Posts</a></div><h1 class="post-title entry-hint-parent">{esc(title)}</h1>'
            f'<div class="post-meta"><span title="{_iso(rng)}">{date}</span>&nbsp;·&nbsp;{rng.randint(2, 14)} min&nbsp;·&nbsp;{esc(author)}</div></header>'
            + ('<div class="toc"><details><summary accesskey="c" title="(Alt + C)"><span class="details">Table of Contents</span></summary><div class="inner"><ul>' + "".join(f'<li><a href="#{_slug(str(b[1]))}">{esc(str(b[1]))}</a></li>' for b in blocks if b[0] in ("h2", "h3")) + "</ul></div></details></div>" if any(b[0] in ("h2", "h3") for b in blocks) else "")
            + f'<div class="post-content">{content}</div>'
            f'<footer class="post-footer"><ul class="post-tags">{"".join(f"<li><a href=/tags/{t}/>{t}</a></li>" for t in tags)}</ul>'
            f'<nav class="paginav"><a class="prev" href="/posts/{_slug(prev_t)}/"><span class="title">« Prev</span><br><span>{esc(prev_t)}</span></a><a class="next" href="/posts/{_slug(next_t)}/"><span class="title">Next »</span><br><span>{esc(next_t)}</span></a></nav>'
            f'<ul class="share-buttons"><li><a target="_blank" rel="noopener noreferrer" aria-label="share on x" href="https://x.com/intent/tweet/">x</a></li><li><a aria-label="share on mastodon">mastodon</a></li></ul></footer>{wm}</article></main>'
            f'<footer class="footer"><span>© {rng.randint(2019, 2025)} <a href="/">{esc(blog)}</a></span> · <span>Powered by <a href="https://gohugo.io/">Hugo</a> &amp; <a href="https://github.com/adityatelange/hugo-PaperMod/">PaperMod</a></span></footer>'
            '<a href="#top" aria-label="go to top" title="Go to Top (Alt + G)" class="top-link" id="top-link" accesskey="g">↑</a>'
            '<script>let menu = document.getElementById("menu"); if (menu) { menu.scrollLeft = localStorage.getItem("menu-scroll-position"); }</script>'
        )
        return _document(f'<meta name="generator" content="Hugo 0.1{rng.randint(10, 40)}.0"><link crossorigin="anonymous" href="/assets/css/stylesheet.{_h(rng, 16)}.css" rel="preload stylesheet" as="style">', body, charset, f"{title} | {blog}", body_attrs=' class="list" id="top"'), _truth(blocks), url

    if variant == "jekyll":  # Minima
        content = render_all(code=lambda b: f'<div class="language-python highlighter-rouge"><div class="highlight"><pre class="highlight"><code>{esc(str(b[1]))}</code></pre></div></div>')
        body = (
            f'<header class="site-header" role="banner"><div class="wrapper"><a class="site-title" rel="author" href="/">{esc(blog)}</a><nav class="site-nav"><input type="checkbox" id="nav-trigger" class="nav-trigger"><label for="nav-trigger"><span class="menu-icon"></span></label>'
            '<div class="trigger"><a class="page-link" href="/about/">About</a><a class="page-link" href="/archive/">Archive</a><a class="page-link" href="/now/">Now</a></div></nav></div></header>'
            f'<main class="page-content" aria-label="Content"><div class="wrapper"><article class="post h-entry" itemscope itemtype="http://schema.org/BlogPosting"><header class="post-header"><h1 class="post-title p-name" itemprop="name headline">{esc(title)}</h1>'
            f'<p class="post-meta"><time class="dt-published" datetime="{_iso(rng)}" itemprop="datePublished">{date}</time> • <span itemprop="author" itemscope itemtype="http://schema.org/Person"><span class="p-author h-card" itemprop="name">{esc(author)}</span></span></p></header>'
            f'<div class="post-content e-content" itemprop="articleBody">{content}</div>'
            f'<p class="post-tags">Posted in {", ".join(f"<a href=/tags/#{t}>{t}</a>" for t in tags)}</p>'
            f'<div class="post-nav"><a class="prev" href="/{_slug(prev_t)}/">&laquo; {esc(prev_t)}</a> <a class="next" href="/{_slug(next_t)}/">{esc(next_t)} &raquo;</a></div>{wm}'
            f'<a class="u-url" href="{url}" hidden></a></article>'
            + (_newsletter_box(rng, "newsletter") if rng.random() < 0.5 else "")
            + f'<div id="disqus_thread"></div><script>var disqus_config = function () {{ this.page.url = "{url}"; }};</script><noscript>Please enable JavaScript to view the comments powered by Disqus.</noscript></div></main>'
            f'<footer class="site-footer h-card"><data class="u-url" href="/"></data><div class="wrapper"><h2 class="footer-heading">{esc(blog)}</h2><div class="footer-col-wrapper"><div class="footer-col footer-col-1"><ul class="contact-list"><li class="p-name">{esc(author)}</li><li><a class="u-email" href="mailto:me@{host}">me@{host}</a></li></ul></div>'
            f'<div class="footer-col footer-col-2"><ul class="social-media-list"><li><a href="https://github.com/x">github</a></li><li><a href="https://social.example/@x">mastodon</a></li></ul></div><div class="footer-col footer-col-3"><p>{esc(_trim_words(rng.choice(_prose()), 12))}</p></div></div>'
            f'<div class="archive-list"><h3>Archives</h3><ul>{_li(arch)}</ul></div><div class="tag-cloud">{tagcloud}</div></div></footer>'
        )
        return _document('<link rel="stylesheet" href="/assets/main.css"><link type="application/atom+xml" rel="alternate" href="/feed.xml">' + _json_ld({"@context": "https://schema.org", "@type": "BlogPosting", "headline": title, "author": {"@type": "Person", "name": author}, "datePublished": _iso(rng)}), body, charset, f"{title} | {blog}"), _truth(blocks), url

    if variant == "eleventy":
        content = render_all(code=lambda b: f'<pre class="language-python" tabindex="0"><code class="language-python">{esc(str(b[1]))}</code></pre>')
        body = (
            f'<a href="#skip" class="visually-hidden">Skip to main content</a><header><a href="/" class="home-link">{esc(blog)}</a><nav><h2 class="visually-hidden" id="top-level-navigation-menu">Top level navigation menu</h2>'
            f'<ul class="nav"><li class="nav-item"><a href="/">Home</a></li><li class="nav-item"><a href="/blog/" aria-current="page">Archive</a></li><li class="nav-item"><a href="/about/">About</a></li><li class="nav-item"><a href="/feed/feed.xml">Feed</a></li></ul></nav></header>'
            f'<main id="skip"><heading-anchors><h1 id="{_slug(title)}">{esc(title)}</h1><ul class="post-metadata"><li><time datetime="{_iso(rng)[:10]}">{date}</time></li>'
            + "".join(f'<li><a href="/tags/{t}/" class="post-tag">{t}</a>{"," if k < len(tags) - 1 else ""}</li>' for k, t in enumerate(tags))
            + f'</ul>{content}</heading-anchors>'
            f'<ul class="links-nextprev"><li class="links-nextprev-prev">← Previous<br> <a href="/blog/{_slug(prev_t)}/">{esc(prev_t)}</a></li><li class="links-nextprev-next">Next →<br><a href="/blog/{_slug(next_t)}/">{esc(next_t)}</a></li></ul>'
            f'{wm}</main><footer><p><em>Built with <a href="https://www.11ty.dev/">Eleventy v3.0.0</a></em></p><p>Posted by {esc(author)}. Reply via email or on the fediverse.</p></footer>'
            '<script type="module" src="/dist/heading-anchors.js"></script>'
        )
        return _document('<meta name="generator" content="Eleventy v3.0.0"><style>/* inlined */ :root{--color-gray-20:#e0e0e0}</style>', body, charset, f"{title} — {blog}".replace("—", "-")), _truth(blocks), url

    if variant == "squarespace":
        def sqs_block(html: str) -> str:
            return f'<div class="sqs-block html-block sqs-block-html" data-block-type="2" data-border-radii="&#123;&quot;topLeft&quot;:&#123;&quot;unit&quot;:&quot;px&quot;,&quot;value&quot;:0.0&#125;&#125;" id="block-yui_3_17_2_1_{rng.randint(10**12, 10**13)}_{rng.randint(1000, 99999)}"><div class="sqs-block-content"><div class="sqs-html-content" data-sqsp-text-block-content>{html}</div></div></div>'
        chunks, cur = [], []
        for k, b in enumerate(blocks):
            cur.append(_render(b, rng, {"p": ' style="white-space:pre-wrap;" class=""', "h2": "", "h3": ""}))
            if len(cur) >= rng.randint(2, 6) or k == len(blocks) - 1:
                chunks.append(sqs_block("".join(cur)))
                cur = []
                if k < len(blocks) - 1 and rng.random() < 0.3:
                    chunks.append(f'<div class="sqs-block image-block sqs-block-image" data-block-type="5"><div class="sqs-block-content"><figure class="sqs-block-image-figure intrinsic"><img data-src="https://images.squarespace-cdn.com/content/v1/{_h(rng, 24)}/{_h(rng, 8)}.jpg" alt=""><figcaption class="image-caption-wrapper"><div class="image-caption"><p>{esc(_trim_words(rng.choice(_prose()), 7))}</p></div></figcaption></figure></div></div>')
            if k == 0 and posts_in:
                chunks.append(f'<div class="sqs-block newsletter-block sqs-block-newsletter" data-block-type="51"><div class="sqs-block-content">{posts_in}</div></div>')
        body = (
            f'<div id="siteWrapper" class="clearfix site-wrapper"><header data-test="header" id="header" class="header theme-col--primary" data-section-theme="white" data-controller="Header"><div class="header-announcement-bar-wrapper">'
            f'<div class="header-title-text"><a href="/" class="header-title-logo">{esc(blog)}</a></div><div class="header-nav"><nav class="header-nav-list">{"".join(f"<div class=header-nav-item><a href=/{_slug(x)}>{x}</a></div>" for x in ["Home", "Blog", "Shop", "About", "Contact"])}</nav></div>'
            '<div class="header-actions"><a href="/cart" class="cart-link">Cart (0)</a></div></div></header>'
            f'<main id="page" class="container" role="main"><article class="sections" id="sections" data-page-sections="{_h(rng, 24)}"><section data-test="page-section" class="page-section layout-engine-section"><div class="content-wrapper"><div class="content"><div class="blog-item-wrapper">'
            f'<article class="entry h-entry hentry author-{_slug(author)} post-type-text article-index-1 tag-{tags[0]}" data-item-id="{_h(rng, 24)}"><div class="blog-item-top-wrapper"><div class="blog-item-title"><h1 class="entry-title entry-title--large p-name" data-content-field="title">{esc(title)}</h1></div>'
            f'<div class="blog-item-meta-wrapper"><div class="blog-meta-item blog-meta-item--date"><time class="dt-published date-highlight" datetime="{_iso(rng)[:10]}">{date}</time></div><div class="blog-meta-item blog-meta-item--author">Posted by <a href="/blog?author={_h(rng, 24)}">{esc(author)}</a></div></div></div>'
            f'<div class="blog-item-content-wrapper"><div class="blog-item-content e-content"><div class="sqs-layout sqs-grid-12 columns-12" data-type="item" data-updated-on="{rng.randint(10**12, 2 * 10**12)}" id="item-{_h(rng, 24)}"><div class="row sqs-row"><div class="col sqs-col-12 span-12">{"".join(chunks)}</div></div></div></div></div>'
            f'<div class="blog-item-bottom-wrapper"><div class="blog-meta-item blog-meta-item--tags">Tagged: {", ".join(f"<a href=/blog?tag={t}>{t}</a>" for t in tags)}</div>'
            f'<div class="blog-share-like"><span class="sqs-simple-like" data-item-id="x"><span class="like-count">{rng.randint(0, 40)} Likes</span></span><div class="squarespace-social-buttons" data-url="{url}">Share</div></div>'
            f'<section class="item-pagination item-pagination--prev-next" data-collection-type="blog-side-by-side"><a class="item-pagination-link item-pagination-link--prev" href="/blog/{_slug(prev_t)}"><div class="item-pagination-icon">←</div><div class="pagination-title-wrapper"><h2 class="item-pagination-title">{esc(prev_t)}</h2></div></a>'
            f'<a class="item-pagination-link item-pagination-link--next" href="/blog/{_slug(next_t)}"><div class="pagination-title-wrapper"><h2 class="item-pagination-title">{esc(next_t)}</h2></div><div class="item-pagination-icon">→</div></a></section>'
            f'<section id="comments-{_h(rng, 24)}" class="comments-wrapper"><div class="squarespace-comments"><h3>{rng.randint(0, 12)} Comments</h3><p>{esc(rng.choice(COMMENTS))}</p></div></section></div></article></div></div></div></section></article></main>'
            f'<footer class="sections" id="footer-sections" data-footer-sections><section class="page-section"><div class="content"><div class="sqs-block html-block"><div class="sqs-block-content"><p>© {rng.randint(2019, 2025)} {esc(blog)}. All photos and words by {esc(author)}.</p></div></div>'
            f'<div class="sqs-block archive-block"><div class="sqs-block-content"><h3>Archive</h3><ul class="archive-group-list">{_li(arch)}</ul></div></div>'
            f'<div class="sqs-block tag-cloud-block"><div class="sqs-block-content"><div class="sqs-tagcloud">{tagcloud}</div></div></div></div></section></footer></div>'
            '<script>Static.SQUARESPACE_CONTEXT = {"facebookAppId":"314192535267336","rollups":{},"pageType":50,"website":{"siteTitle":"blog"}};</script>'
        )
        return _document(f'<!-- This is Squarespace. --><!-- {_slug(blog)} --><script>SQUARESPACE_ROLLUPS = {{}};</script><link rel="stylesheet" type="text/css" href="https://static1.squarespace.com/static/versioned-site-css/{_h(rng, 24)}/site.css">', body, charset, f"{title} — {blog}".replace("—", "-")), _truth(blocks), url

    # Wix blog
    def wx() -> str:
        return f"{_hash(rng, 5)} {_hash(rng, 5)}"
    parts = []
    for k, b in enumerate(blocks):
        bid = f"rcv-block{k + 1}"
        if b[0] == "p":
            parts.append(f'<div type="paragraph" class="{wx()}"><p class="{wx()}" dir="auto" id="viewer-{_h(rng, 5)}" data-hook="{bid}"><span class="{wx()}">{_inline(str(b[1]), rng)}</span></p></div>')
        elif b[0] in ("h2", "h3"):
            parts.append(f'<div type="heading" class="{wx()}"><{b[0]} class="{wx()}" dir="auto" id="viewer-{_h(rng, 5)}" data-hook="{bid}"><span class="{wx()}">{esc(str(b[1]))}</span></{b[0]}></div>')
        elif b[0] == "code":
            parts.append(f'<div type="code-block" class="{wx()}"><pre class="{wx()}" data-hook="codeBlock"><code>{esc(str(b[1]))}</code></pre></div>')
        else:
            parts.append(f'<div class="{wx()}" data-hook="{bid}">{_render(b, rng, {"ul": wx, "ol": wx, "li": wx, "blockquote": wx, "table": wx})}</div>')
        if k == 0 and posts_in:
            parts.append(f'<div class="{wx()}" data-hook="html-component">{posts_in}</div>')
    body = (
        f'<div id="SITE_CONTAINER"><div id="main_MF" class="main_MF"><div id="SCROLL_TO_TOP" class="{wx()}" tabindex="-1" aria-label="top of page" role="region"></div><div id="site-root" class="site-root"><div id="masterPage" class="mesh-layout">'
        f'<header id="SITE_HEADER" class="{wx()}" tabindex="-1"><div class="{wx()}"><div data-testid="richTextElement" class="{wx()}"><h2 class="font_0 wixui-rich-text__text"><a href="/">{esc(blog)}</a></h2></div>'
        f'<nav aria-label="Site" class="{wx()}"><ul class="{wx()}">{"".join(f"<li class=wixui-horizontal-menu__item><a href=/{_slug(x)}>{x}</a></li>" for x in ["Home", "Blog", "Recipes", "About", "Contact"])}</ul></nav></div></header>'
        f'<main id="PAGES_CONTAINER" tabindex="-1" data-main-content="true"><div id="SITE_PAGES"><div class="{wx()}"><section class="{wx()}" data-hook="post-page"><div class="{wx()}" data-hook="post-page__content">'
        f'<article class="{wx()} blog-post-page-font" data-hook="post"><div class="{wx()}"><div class="{wx()}" data-hook="post-header"><div class="{wx()}" data-hook="avatar"><span class="{wx()}" data-hook="user-name">{esc(author)}</span></div>'
        f'<ul class="{wx()}" data-hook="post-metadata"><li data-hook="time-ago">{date}</li><li data-hook="time-to-read">{rng.randint(1, 9)} min read</li></ul><button data-hook="more-button" aria-label="More actions">⋯</button></div>'
        f'<h1 class="{wx()}" data-hook="post-title"><span class="{wx()} post-title blog-post-title-font">{esc(title)}</span></h1>'
        f'<div class="{wx()}" data-hook="post-description"><section class="{wx()}" data-hook="post-content"><div data-id="content-viewer" class="{wx()}"><div class="{wx()}" data-id="rich-content-viewer">{"".join(parts)}</div></div></section></div>'
        f'<div class="{wx()}" data-hook="post-footer"><nav aria-label="tags" data-hook="tag-list">{"".join(f"<a data-hook=tag href=/blog/tags/{t}>{t}</a>" for t in tags)}</nav>'
        f'<div class="{wx()}" data-hook="post-main-actions"><button data-hook="share-button">Share</button><span data-hook="views-count">{rng.randint(10, 999)} views</span><span data-hook="comment-count">{rng.randint(0, 9)} comments</span><button data-hook="like-button">{rng.randint(0, 60)}</button></div></div></div></article>'
        f'<div class="{wx()}" data-hook="recent-posts"><h2 data-hook="recent-posts-title">Recent Posts</h2><a data-hook="see-all-link" href="/blog">See All</a><ul>{_li(_teasers(rng, 3))}</ul></div>'
        f'<div class="{wx()}" data-hook="comments"><h2 data-hook="comments-title">Comments</h2><div data-hook="comment-box"><button>Write a comment...</button></div></div></div></section></div></div></main>'
        f'<footer id="SITE_FOOTER" class="{wx()}"><p class="font_9">© {rng.randint(2019, 2025)} by {esc(blog)}. Proudly created with Wix.com</p></footer></div></div></div></div>'
        f'<script type="application/json" id="wix-viewer-model">{json.dumps({"siteFeaturesConfigs": {"platform": {"bootstrapData": {"appsSpecData": {}}}}, "site": {"siteId": _h(rng, 8)}})}</script>'
    )
    return _document('<meta name="generator" content="Wix.com Website Builder"><script>window.viewerModel = {"fleetConfig": {"code": 0}};</script>', body, charset, f"{title}", html_attrs=' class="js"'), _truth(blocks), url



# ----------------------------------------------------------------------------------------------- review

PRODUCT_KINDS = {
    "headphones": (["Aurelia", "Brio", "Corvo", "Dunmore", "Eskra", "Fenwick"], ["X2 Wireless", "Studio 700", "Air Pro", "Buds 3", "Quiet One", "Arc ANC"],
                   [("Type", ["Over-ear", "In-ear", "On-ear"]), ("Battery life", ["30 hours", "8 hours (32 with case)", "45 hours"]), ("Noise cancelling", ["Yes, adaptive", "Yes", "No"]),
                    ("Bluetooth", ["5.3", "5.2", "5.0"]), ("Weight", ["250 g", "5.4 g per earbud", "312 g"]), ("Codecs", ["SBC, AAC, LDAC", "SBC, AAC", "SBC, aptX Adaptive"])]),
    "laptop": (["Kestrel", "Lumen", "Northway", "Orbis", "Pallas"], ["Pro 14", "Air 13", "Studio 16", "Book X", "Flex 2-in-1"],
               [("Display", ["14-inch 2880 x 1800 OLED", "13.3-inch 1920 x 1200 IPS", "16-inch 2560 x 1600 mini-LED"]), ("Processor", ["8-core, 4.8 GHz", "10-core, 5.0 GHz", "6-core, 4.2 GHz"]),
                ("Memory", ["16 GB", "32 GB", "8 GB"]), ("Storage", ["512 GB SSD", "1 TB SSD", "256 GB SSD"]), ("Battery", ["72 Wh", "58 Wh", "99.5 Wh"]), ("Weight", ["1.3 kg", "1.1 kg", "2.1 kg"])]),
    "vacuum": (["Tidewell", "Vantor", "Wrenly", "Zephyr"], ["S9 Cordless", "RoboClean 5", "Stick Lite", "Max Pet"],
               [("Type", ["Cordless stick", "Robot", "Upright"]), ("Run time", ["60 minutes", "180 minutes", "40 minutes"]), ("Bin capacity", ["0.76 L", "0.4 L", "1.2 L"]),
                ("Filter", ["HEPA", "Washable foam", "HEPA, sealed"]), ("Noise", ["78 dB", "64 dB", "82 dB"]), ("Weight", ["2.6 kg", "3.4 kg", "6.8 kg"])]),
    "coffee maker": (["Bramble", "Cortado", "Dewpoint", "Ember"], ["Brew 12", "Espresso One", "Pour Master", "Drip Classic"],
                     [("Type", ["Drip", "Espresso", "Pour-over"]), ("Capacity", ["12 cups", "1.8 L tank", "8 cups"]), ("Pressure", ["15 bar", "9 bar", "n/a"]),
                      ("Grinder", ["Built-in burr", "None", "Conical burr"]), ("Dimensions", ["30 x 20 x 38 cm", "25 x 33 x 40 cm", "18 x 28 x 35 cm"])]),
}
PROS = ["Excellent battery life", "Comfortable for long sessions", "Clear, balanced sound", "Solid build quality", "Easy setup in the app", "Great value for money",
        "Quiet in operation", "Compact and light", "Fast charging over USB-C", "Bright, sharp display", "Two-year warranty", "Simple, intuitive controls"]
CONS = ["Pricey for what you get", "No headphone jack", "Bulky charging case", "Mediocre microphone", "The app requires an account", "Fingerprint magnet",
        "Short power cable", "Loud at full power", "Limited colour options", "Slow to start up", "Filters are expensive to replace"]
RETAILERS = ["Amazon", "Best Buy", "Walmart", "Target", "B&amp;H Photo", "Currys", "John Lewis"]
REVIEW_SITES = ["Gadget Verdict", "The Test Bench", "Honest Kit", "Tested &amp; Trusted", "Buyer's Compass"]


def _product(rng: random.Random, cat: str) -> tuple[str, list[list[str]]]:
    brands, models, specs = PRODUCT_KINDS[cat]
    name = f"{rng.choice(brands)} {rng.choice(models)}"
    return name, [[k, rng.choice(v)] for k, v in specs]


def _pros_cons(rng: random.Random, labels: tuple[str, str]) -> list[Block]:
    return [("h3", labels[0]), ("ul", rng.sample(PROS, rng.randint(2, 4))), ("h3", labels[1]), ("ul", rng.sample(CONS, rng.randint(1, 3)))]


def _price_buttons(rng: random.Random, cls: str, verb: str = "Check price at") -> str:
    return "".join(f'<a class="{cls}" rel="sponsored nofollow noopener" href="https://go.redirectingat.com/?id={rng.randint(10**5, 10**6)}&amp;url=x" data-vendor="{r}">{verb} {r}</a> <span class="price">${rng.randint(49, 1999)}.{rng.choice(["00", "99", "95"])}</span>'
                   for r in rng.sample(RETAILERS, rng.randint(1, 3)))


def _stars(rng: random.Random) -> str:
    r = rng.choice([3, 3.5, 4, 4.5, 5])
    return f'<div class="star-rating" role="img" aria-label="Rated {r} out of 5"><span class="stars" style="--rating:{r}">★★★★★</span><span class="rating-text">{r} out of 5 stars</span></div>'


def _comparison(rng: random.Random, cat: str, cls: str) -> str:
    rows = "".join(f'<tr><td><img alt="" src="/p/{_h(rng)}.jpg"> {esc(_product(rng, cat)[0])}</td><td>{_stars(rng)}</td><td>${rng.randint(49, 1999)}</td><td><a class="btn" rel="sponsored">View at {rng.choice(RETAILERS)}</a></td></tr>' for _ in range(rng.randint(3, 5)))
    return f'<div class="{cls}" data-widget="comparison"><div class="widget-title">Compare similar {esc(cat)}s</div><table class="comparison-table"><tr><th>Product</th><th>Rating</th><th>Price</th><th></th></tr>{rows}</table></div>'


def _spec_html(rows: list[list[str]], cls: str) -> str:
    return f'<table class="{cls}"><tbody>' + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows) + "</tbody></table>"


def _review(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("future", "guide", "wp")[i % 3]
    site = rng.choice(REVIEW_SITES)
    cat = rng.choice(sorted(PRODUCT_KINDS))
    author = _name(rng)
    host = re.sub(r"[^a-z]", "", site.lower()) + ".example.com"
    disclosure = rng.choice(["When you purchase through links on our site, we may earn an affiliate commission. Here’s how it works.",
                             "We independently review everything we recommend. When you buy through our links, we may earn a commission.",
                             "This post contains affiliate links. As an Amazon Associate I earn from qualifying purchases, at no extra cost to you."])
    parts: list[str] = []
    truth: list[Block] = []

    def add(b: Block, cls: dict | None = None) -> None:
        parts.append(_render(b, rng, cls))
        truth.append(b)

    def prose_blocks(n_words: int) -> list[Block]:
        return _article_blocks(rng, n_words, rich=False)

    short = i in (0, 8)
    if variant in ("future", "wp"):
        name, spec = _product(rng, cat)
        title = f"{name} review"
        intro = _localise(prose_blocks(rng.randint(30, 60) if short else rng.choice([120, 250, 400])), rng, charset)
        sections = [] if short else [(t, prose_blocks(rng.choice([80, 150, 300]))) for t in rng.sample(["Design", "Performance", "Battery life", "Features", "Setup", "Value", "Comfort", "Sound quality", "Cleaning", "Build quality"], rng.randint(2, 5))]
        verdict = _trim_words(rng.choice(_prose()), rng.randint(25, 50))
        labels = ("Reasons to buy", "Reasons to avoid") if variant == "future" else rng.choice([("Pros", "Cons"), ("What we like", "What we don't like")])
        pc = _pros_cons(rng, labels)
        if variant == "future":
            v = "<div class=\"pretty-verdict\"><div class=\"pretty-verdict__heading-container\"><h4 class=\"pretty-verdict__heading\">Verdict</h4>" + _stars(rng) + f"</div><p class=\"pretty-verdict__verdict\">{esc(verdict)}</p>"
            v += f'<div class="pretty-verdict__pros"><h4>{pc[0][1]}</h4><ul>{_li(pc[1][1], "", a=False)}</ul></div><div class="pretty-verdict__cons"><h4>{pc[2][1]}</h4><ul>{_li(pc[3][1], "", a=False)}</ul></div></div>'
            truth += [("h4", "Verdict"), ("p", verdict), *pc]
            parts.append(v)
            parts.append(f'<div class="hawk-widget" data-widget-type="price" data-render-type="editorial"><div class="hawk-title">Today’s best {esc(name)} deals</div>{_price_buttons(rng, "hawk-button", "View at")}<p class="hawk-small">We check over 250 million products every day for the best prices</p><p class="hawk-powered">powered by</p></div>')
            if i == 1:
                parts.append(_comparison(rng, cat, "hawk-comparison-widget") + '<div class="newsletter-form__wrapper"><p class="newsletter-title">Get instant access to breaking news, the hottest reviews, great deals and helpful tips.</p><form><input type="email" placeholder="Your Email Address"><button>Sign me up</button></form></div>')
            for b in intro:
                add(b)
            if not short:
                parts.append(f'<div class="table__wrapper table__wrapper--inbodycontent"><h2 id="section-specs">{esc(name)}: Specs</h2>{_spec_html(spec, "table__container")}</div>')
                truth += [("h2", f"{name}: Specs"), ("table", spec)]
            for head, bl in sections:
                add(("h2", f"{name} review: {head}"))
                for k, b in enumerate(bl):
                    add(b)
                    if k == 0 and rng.random() < 0.3:
                        parts.append(f'<div class="hawk-widget" data-widget-type="deal"><a class="hawk-affiliate-link" rel="sponsored">View Deal</a> <span>{esc(name)} at {rng.choice(RETAILERS)} for ${rng.randint(49, 999)}</span></div>')
                    if k == 0 and rng.random() < 0.2:
                        parts.append(f'<p class="fancy-box"><strong>Read more:</strong> <a href="/best-picks/best-{_slug(cat)}s">The best {esc(cat)}s we have tested</a></p>')
            add(("h2", f"{name} review: Verdict"))
            v2 = _trim_words(rng.choice(_prose()), rng.randint(30, 70))
            add(("p", v2))
            content = "".join(parts)
            body = (
                f'<div id="main-container"><header class="header-main"><nav class="primary-nav"><a href="/" class="logo">{esc(site)}</a><ul class="menu">{_li(["Tech", "Reviews", "Best Picks", "Deals", "How to", "Versus", "Coupons"])}</ul><button class="search-toggle">Search</button></nav>'
                f'<div class="trending-bar"><span>Trending</span><ul>{_li(_teasers(rng, 4))}</ul></div></header>'
                f'<main id="main" class="main"><article class="review-article news-article" data-id="{_h(rng, 22)}"><header><nav class="breadcrumb"><ol><li><a>Home</a></li><li><a>Reviews</a></li><li><a>{esc(cat.title())}s</a></li></ol></nav>'
                f'<h1>{esc(title)}</h1><p class="strapline">{esc(_trim_words(verdict, 8))}</p><div class="byline"><span class="by-author">By <a rel="author">{esc(author)}</a></span> <span class="byline-article-time">published <time datetime="{_iso(rng)}">{_date(rng)}</time></span></div>'
                f'<div class="affiliate-disclaimer"><p>{esc(disclosure)}</p></div></header>'
                f'<div class="jump-to"><div class="jump-to__title">Jump to:</div><ul>{_li(["Specs", "Price", "Design", "Performance", "Verdict"])}</ul></div>'
                f'<div id="article-body" class="text-copy bodyCopy auto">{content}</div>'
                f'<div class="author-byline"><div class="author-byline__author-name">{esc(author)}</div><p class="author-byline__text">{esc(author)} is a senior editor at {esc(site)}, covering {esc(cat)}s, audio and smart home.</p></div>'
                f'{_comparison(rng, cat, "product-comparison-widget")}<div class="slice-container most-popular"><h2>Most Popular</h2><ol>{_li(_teasers(rng, 5))}</ol></div></article></main>'
                f'<footer class="footer"><p>{esc(site)} is part of Future US Inc, an international media group and leading digital publisher.</p><ul>{_li(["About us", "Contact Future experts", "Terms and conditions", "Privacy policy", "Cookies policy", "Accessibility Statement", "Advertise with us", "Web notifications", "Careers"])}</ul></footer></div>'
                '<script>window.hawk = window.hawk || {}; window.ffte = {"vanilla": {"affiliateLinks": true}};</script>'
            )
            ld = _json_ld({"@context": "https://schema.org", "@type": "Review", "name": title, "itemReviewed": {"@type": "Product", "name": name}, "reviewRating": {"@type": "Rating", "ratingValue": 4, "bestRating": 5}, "author": {"@type": "Person", "name": author}})
            return _document(ld, body, charset, f"{title} | {site}"), _truth(truth), f"https://www.{host}/{_slug(cat)}s/{_slug(name)}-review"
        # WordPress affiliate review
        parts.append(f'<div class="affiliate-disclosure wp-block-group"><p><em>Affiliate disclosure: {esc(disclosure)}</em></p></div>')
        for b in intro:
            add(b, {"h2": "wp-block-heading", "h3": "wp-block-heading"})
        parts.append(f'<div class="lasso-container"><div class="lasso-display lasso-classic"><div class="lasso-badge">Our Pick</div><a class="lasso-title" rel="sponsored">{esc(name)}</a><div class="lasso-price"><span class="latest-price">${rng.randint(49, 999)}.99</span></div>{_stars(rng)}'
                     f'<div class="lasso-description"><p>{esc(_trim_words(rng.choice(_prose()), 12))}</p></div><a class="lasso-button-1" rel="sponsored nofollow">Check Price at Amazon</a><div class="lasso-disclosure">We earn a commission if you make a purchase, at no additional cost to you.</div>'
                     f'<div class="lasso-date">Last updated on {_date(rng)}. Prices and images from Amazon Product Advertising API.</div></div></div>')
        if i == 1:
            parts.append(_comparison(rng, cat, "wp-block-table lasso-comparison") + _newsletter_box(rng, "wp-block-group newsletter-cta"))
        add(("h2", "Specifications"), {"h2": "wp-block-heading"})
        parts.append(f'<figure class="wp-block-table is-style-stripes">{_spec_html(spec, "has-fixed-layout")}</figure>')
        truth.append(("table", spec))
        parts.append(f'<div class="wp-block-kadence-column pros-cons-box"><div class="pros"><h3 class="wp-block-heading">{pc[0][1]}</h3><ul class="wp-block-list">{_li(pc[1][1], a=False)}</ul></div><div class="cons"><h3 class="wp-block-heading">{pc[2][1]}</h3><ul class="wp-block-list">{_li(pc[3][1], a=False)}</ul></div></div>')
        truth += pc
        for head, bl in sections:
            add(("h2", head), {"h2": "wp-block-heading"})
            for b in bl:
                add(b)
            if rng.random() < 0.4:
                parts.append(f'<div class="wp-block-buttons"><div class="wp-block-button"><a class="wp-block-button__link" rel="sponsored">Check price at {rng.choice(RETAILERS)}</a></div></div>')
        add(("h2", "Verdict"), {"h2": "wp-block-heading"})
        add(("p", verdict))
        parts.append(f'<div class="wp-review-box"><div class="review-total-wrapper"><span class="review-total-box">{rng.choice(["4.0", "4.5", "3.5"])}/5</span><span class="review-result-text">Overall score</span></div><div class="review-list"><ul><li>Design ★★★★☆</li><li>Value ★★★★★</li><li>Features ★★★☆☆</li></ul></div></div>')
        body = (
            f'<div id="page" class="site"><a class="skip-link screen-reader-text" href="#content">Skip to content</a><header id="masthead" class="site-header"><div class="site-branding"><p class="site-title"><a href="/">{esc(site)}</a></p><p class="site-description">Honest reviews, no fluff</p></div>'
            f'<nav id="site-navigation" class="main-navigation"><ul id="primary-menu" class="menu">{_li(["Home", "Reviews", "Buying Guides", "Deals", "About", "Contact"], "menu-item")}</ul></nav></header>'
            f'<div id="content" class="site-content"><main id="primary" class="site-main"><article id="post-{rng.randint(100, 9999)}" class="post type-post status-publish format-standard has-post-thumbnail hentry category-reviews">'
            f'<header class="entry-header"><h1 class="entry-title">{esc(title)}</h1><div class="entry-meta"><span class="posted-on">Posted on <time class="entry-date published">{_date(rng)}</time></span><span class="byline"> by <span class="author vcard"><a class="url fn n">{esc(author)}</a></span></span></div></header>'
            f'<div class="entry-content">{"".join(parts)}</div>'
            f'<footer class="entry-footer"><span class="cat-links">Posted in <a rel="category tag">Reviews</a></span><span class="tags-links">Tagged <a rel="tag">{esc(cat)}</a></span></footer></article>'
            f'<div class="author-box"><h4>About {esc(author)}</h4><p>{esc(author)} has been testing gadgets for over a decade.</p></div>'
            f'<div id="comments" class="comments-area"><div id="respond" class="comment-respond"><h3 id="reply-title" class="comment-reply-title">Leave a Reply</h3><form class="comment-form"><p class="comment-notes">Your email address will not be published. Required fields are marked *</p><textarea></textarea><input type="submit" value="Post Comment"></form></div></div></main>'
            f'<aside id="secondary" class="widget-area"><section class="widget widget_recent_entries"><h2 class="widget-title">Latest reviews</h2><ul>{_li(_teasers(rng, 5))}</ul></section><section class="widget">{_comparison(rng, cat, "sidebar-compare")}</section></aside></div>'
            f'<footer id="colophon" class="site-footer"><div class="site-info">© {rng.randint(2019, 2025)} {esc(site)}. {esc(site)} is a participant in the Amazon Services LLC Associates Program.</div></footer></div>'
        )
        ld = _json_ld({"@context": "https://schema.org", "@type": "Product", "name": name, "review": {"@type": "Review", "reviewRating": {"@type": "Rating", "ratingValue": "4.5"}, "author": {"@type": "Person", "name": author}}})
        return _document(ld, body, charset, f"{title} - {site}", body_attrs=' class="post-template-default single single-post"'), _truth(truth), f"https://{host}/{_slug(name)}-review/"

    # Wirecutter-like buying guide
    c = lambda: f"css-{_h(rng, 6)}"  # noqa: E731
    title = f"The Best {cat.title()}s"
    intro = _localise(prose_blocks(rng.randint(30, 60) if short else rng.choice([80, 150, 250])), rng, charset)
    picks = [(lab, *_product(rng, cat)) for lab in (["Our pick"] if short else rng.sample(["Our pick", "Budget pick", "Upgrade pick", "Also great"], rng.randint(2, 4)))]
    cards = "".join(f'<li class="{c()}"><div class="{c()}">{lab}</div><div class="{c()}">{esc(n)}</div>{_stars(rng)}<div class="{c()}">{_price_buttons(rng, c(), "")}</div></li>' for lab, n, _ in picks)
    parts.append(f'<div class="{c()}" data-testid="everything-we-recommend"><h2 class="{c()}">Everything we recommend</h2><ul class="{c()}">{cards}</ul></div>')
    for b in intro:
        add(b, {"p": c})
    if i == 1:
        parts.append(_comparison(rng, cat, c()) + f'<div class="{c()}" data-testid="newsletter"><h3>The best stuff, in your inbox</h3><p>Sign up for our newsletter to get expert recommendations every week.</p><form><input type="email"><button>Sign up</button></form></div>')
    for lab, name, spec in picks:
        add(("h2", f"{lab}: {name}"), {"h2": c})
        parts.append(f'<div class="{c()}" data-testid="product-card"><img alt="" src="/images/{_h(rng)}.jpg"><p class="{c()}">{esc(_trim_words(rng.choice(_prose()), 10))}</p>{_price_buttons(rng, c(), "")}<p class="{c()}">*At the time of publishing, the price was ${rng.randint(49, 999)}.</p></div>')
        for b in prose_blocks(rng.randint(30, 60) if short else rng.choice([100, 200, 350])):
            add(b, {"p": c})
        if not short or rng.random() < 0.5:
            pc = _pros_cons(rng, ("What we like", "Flaws but not dealbreakers"))
            parts.append(f'<div class="{c()}" data-testid="pros-cons"><div class="{c()}"><h3 class="{c()}">{pc[0][1]}</h3><ul class="{c()}">{_li(pc[1][1], a=False)}</ul></div><div class="{c()}"><h3 class="{c()}">{pc[2][1]}</h3><ul class="{c()}">{_li(pc[3][1], a=False)}</ul></div></div>')
            truth += pc
        if rng.random() < 0.6:
            parts.append(f'<div class="{c()}" data-testid="spec-table">{_spec_html(spec, c())}</div>')
            truth.append(("table", spec))
    if not short:
        add(("h2", "How we picked and tested"), {"h2": c})
        for b in prose_blocks(rng.choice([100, 200])):
            add(b, {"p": c})
    body = (
        f'<div id="app"><a class="{c()}" href="#main">Skip to main content</a><header class="{c()}" data-testid="header"><a href="/" class="{c()}" aria-label="{esc(site)} home">{esc(site)}</a><nav class="{c()}"><ul class="{c()}">{_li(["Audio", "Home &amp; Garden", "Kitchen", "Sleep", "Tech", "Deals", "Gifts"])}</ul></nav>'
        f'<a class="{c()}" href="/subscribe">Subscribe</a><a class="{c()}" href="/login">Log in</a></header>'
        f'<main id="main" class="{c()}"><article class="{c()}"><header class="{c()}"><h1 class="{c()}" data-testid="headline">{esc(title)}</h1><div class="{c()}"><p class="{c()}">By <a>{esc(author)}</a></p><p class="{c()}">Updated {_date(rng)}</p></div>'
        f'<p class="{c()}" data-testid="affiliate-disclosure">{esc(disclosure)} <a href="/about/">Learn more›</a></p></header><div class="{c()}" data-testid="article-body">{"".join(parts)}</div>'
        f'<div class="{c()}" data-testid="author-bio"><p>{esc(author)} is a staff writer reporting on {esc(cat)}s. Before that, {esc(rng.choice(["she", "he", "they"]))} spent years in retail.</p></div>'
        f'<div class="{c()}" data-testid="further-reading"><h2 class="{c()}">Further reading</h2><ul>{_li(_teasers(rng, 4))}</ul></div></article></main>'
        f'<footer class="{c()}"><ul>{_li(["About", "Contact", "Deals", "How we test", "Privacy policy", "Terms of service", "Accessibility"])}</ul><p>© {rng.randint(2020, 2025)} {esc(site)}</p></footer></div>'
        f'<script>window.__INITIAL_STATE__={json.dumps({"guide": {"title": title, "picks": [n for _, n, _ in picks]}})};</script>'
    )
    return _document(_json_ld({"@context": "https://schema.org", "@type": "Article", "headline": title}), body, charset, f"{title} | {site}"), _truth(truth), f"https://www.{host}/reviews/best-{_slug(cat)}s/"


# ---------------------------------------------------------------------------------------- release-notes

THINGS = ["empty strings", "negative offsets", "paths with spaces", "very large files", "Windows line endings", "nested mappings", "timezone-aware datetimes", "symbolic links", "unicode file names", "zero-length buffers"]
APP_LINES = ["Fixed a crash when opening shared links.", "Photos now upload in the background.", "Improved VoiceOver labels throughout the app.", "Widgets refresh more reliably.",
             "Fixed an issue where notifications arrived twice.", "Search results now appear as you type.", "Reduced battery use during sync.", "Fixed sign-in with passkeys on iPad.",
             "Added support for the latest iOS version.", "Dark mode colours are easier to read."]
SAAS_TITLES = ["Faster search across workspaces", "Dark mode for the mobile app", "Bulk editing for tasks", "New integrations with chat and issue trackers", "Custom fields on reports",
               "Keyboard shortcuts everywhere", "Sign in with passkeys", "Improved CSV import", "Audit log export", "Redesigned settings page", "Offline mode for notes", "Recurring reminders"]


@functools.lru_cache(maxsize=1)
def _api_names() -> tuple[str, ...]:
    import bisect
    import fnmatch
    import heapq
    import shlex
    import textwrap

    out = []
    for mod in (textwrap, shlex, fnmatch, heapq, bisect, json):
        for attr in sorted(vars(mod)):
            v = getattr(mod, attr)
            if not attr.startswith("_") and (inspect.isfunction(v) or inspect.isbuiltin(v) or inspect.isclass(v)) and not inspect.ismodule(v):
                out.append(f"{mod.__name__}.{attr}")
    return tuple(out)


def _change(rng: random.Random) -> tuple[str, str, str]:
    fn = rng.choice(_api_names())
    v = f"{rng.randint(2, 5)}.{rng.randint(0, 9)}"
    return rng.choice([
        ("Fix ", f"{fn}()", f" returning the wrong result for {rng.choice(THINGS)}."),
        ("Add ", f"{fn}()", " as a faster alternative for large inputs."),
        ("", f"{fn}()", f" is now about {rng.randint(5, 60)}% faster."),
        ("Deprecate ", f"{fn}()", f"; it will be removed in version {v}."),
        ("Document the behaviour of ", f"{fn}()", f" with {rng.choice(THINGS)}."),
        ("Improve the error message raised by ", f"{fn}()", " for invalid arguments."),
        ("Drop support for Python ", f"3.{rng.randint(7, 9)}", "."),
        ("Raise ", "ValueError", f" instead of crashing on {rng.choice(THINGS)}."),
    ])


def _change_html(ch: tuple[str, str, str], suffix_html: str = "") -> str:
    return f"{esc(ch[0])}<code>{esc(ch[1])}</code>{esc(ch[2])}{suffix_html}"


def _versions(rng: random.Random, n: int) -> list[str]:
    major, minor, patch = rng.randint(0, 5), rng.randint(0, 20), rng.randint(0, 6)
    out = []
    for _ in range(n):
        out.append(f"{major}.{minor}.{patch}")
        if patch:
            patch -= 1
        elif minor:
            minor, patch = minor - 1, rng.randint(0, 4)
        else:
            major, minor, patch = max(major - 1, 0), rng.randint(3, 12), rng.randint(0, 3)
    return out


def _release_notes(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("github", "sphinx", "saas", "appstore")[i % 4]
    project = rng.choice(["tidepool", "quillkit", "marshmallow-db", "pyrewire", "lintel", "stackwise", "hearth"])
    owner = rng.choice(USERS).replace(".", "-").replace("_", "-")
    n = 1 if i == 0 else rng.randint(1, 2) if i == 8 else rng.randint(2, 6)
    versions = _versions(rng, n)
    few = i in (0, 8)
    extra = _extra(charset, rng) if charset != "utf-8" else ""
    truth: list[Block] = []
    parts: list[str] = []

    if variant == "github":
        for k, ver in enumerate(versions):
            tag = f"v{ver}"
            md: list[str] = []
            tb: list[Block] = [("p", tag)]
            if k == 0 and extra:
                md.append(f"<p>{esc(extra)}</p>")
                tb.append(("p", extra))
            if not few and rng.random() < 0.4:
                p = _trim_words(rng.choice(_prose()), rng.randint(20, 40))
                md.append(f"<p>{_inline(p, rng)}</p>")
                tb.append(("p", p))
            for head in (["What's Changed"] if few else rng.sample(["What's Changed", "Breaking changes", "Bug fixes", "Documentation"], rng.randint(1, 3))):
                items = []
                html_items = []
                for _ in range(rng.randint(1, 2) if few else rng.randint(2, 9)):
                    ch = _change(rng)
                    u, num = rng.choice(USERS), rng.randint(100, 9999)
                    items.append(f"{''.join(ch)} by @{u} in #{num}")
                    html_items.append(f'<li>{_change_html(ch)} by <a class="user-mention notranslate" data-hovercard-type="user" href="/{u}">@{u}</a> in <a class="issue-link js-issue-link" data-error-text="Failed to load title" data-id="{rng.randint(10**9, 2 * 10**9)}" data-permission-text="Title is private" href="https://github.com/{owner}/{project}/pull/{num}">#{num}</a></li>')
                md.append(f'<h2 dir="auto">{esc(head)}</h2><ul dir="auto">{"".join(html_items)}</ul>')
                tb += [("h2", head), ("ul", items)]
            if not few and rng.random() < 0.35:
                code = f"pip install --upgrade {project}=={ver}"
                md.append(f'<div class="highlight highlight-source-shell notranslate position-relative overflow-auto" dir="auto"><pre>{esc(code)}</pre><div class="zeroclipboard-container"><clipboard-copy aria-label="Copy" class="ClipboardButton btn">Copy</clipboard-copy></div></div>')
                tb.append(("code", code))
            if not few and rng.random() < 0.5:
                u = rng.choice(USERS)
                num = rng.randint(100, 9999)
                md.append(f'<h2 dir="auto">New Contributors</h2><ul dir="auto"><li><a class="user-mention" href="/{u}">@{u}</a> made their first contribution in <a class="issue-link" href="/pull/{num}">#{num}</a></li></ul>')
                tb += [("h2", "New Contributors"), ("ul", [f"@{u} made their first contribution in #{num}"])]
            prev = versions[k + 1] if k + 1 < len(versions) else f"{ver.split('.')[0]}.0.0"
            md.append(f'<p dir="auto"><strong>Full Changelog</strong>: <a class="commit-link" href="https://github.com/{owner}/{project}/compare/v{prev}...{tag}"><tt>v{prev}...{tag}</tt></a></p>')
            tb.append(("p", f"Full Changelog: v{prev}...{tag}"))
            assets = "".join(f'<li class="Box-row d-flex flex-column flex-md-row"><div class="d-flex flex-justify-start col-12 col-lg-9"><a href="/{owner}/{project}/releases/download/{tag}/{f}" rel="nofollow" class="Truncate"><span class="Truncate-text text-bold">{f}</span></a></div><div class="d-flex flex-auto flex-justify-end col-md-4 ml-3 ml-md-0 mt-1 mt-md-0 pl-1 pl-md-0"><span class="color-fg-muted text-sm-left flex-auto ml-md-3 nowrap">{rng.randint(20, 900)} KB</span><span class="color-fg-muted text-right flex-shrink-0 flex-grow-0 ml-3"><relative-time datetime="{_iso(rng)}" class="no-wrap">{_date(rng)}</relative-time></span></div></li>'
                             for f in [f"{project}-{ver}-py3-none-any.whl", f"{project}-{ver}.tar.gz", "Source code (zip)", "Source code (tar.gz)"][: 4 if not few else 2] + (["checksums.txt", f"{project}-{ver}.sigstore.json"] if i == 0 else []))
            reactions = "".join(f'<button class="social-reaction-summary-item btn-link" aria-label="{r} reactions"><g-emoji>{e}</g-emoji> <span class="js-discussion-reaction-group-count">{rng.randint(1, 40)}</span></button>' for r, e in [("+1", "👍"), ("hooray", "🎉"), ("heart", "❤️"), ("rocket", "🚀")][: rng.randint(1, 4)])
            parts.append(
                f'<section aria-labelledby="hd-{_h(rng, 8)}"><div class="d-flex flex-column flex-md-row my-5 flex-justify-center"><div class="col-md-2 d-flex flex-md-column flex-row flex-wrap pr-md-6 mb-2 mb-md-0 flex-items-start pt-md-4">'
                f'<div class="mb-2 f4 mr-1 mr-md-0 color-fg-muted"><relative-time class="no-wrap" prefix="" datetime="{_iso(rng)}">{_date(rng)}</relative-time></div><div class="mr-3 mr-md-0 d-flex"><img class="avatar avatar-small circle" alt="@{owner}" src="/{owner}.png"><a class="color-fg-muted" href="/{owner}">{owner}</a></div>'
                f'<div class="mr-3 mr-md-0 d-flex"><svg aria-label="Tag" class="octicon octicon-tag"></svg><span class="ml-1 wb-break-all">{tag}</span></div><div class="mb-md-2 mr-3 mr-md-0"><a href="/{owner}/{project}/commit/{_h(rng, 40)}" class="Link Link--muted"><code class="f5 ml-1 wb-break-all">{_h(rng, 7)}</code></a></div>'
                f'<details class="details-reset details-overlay"><summary class="btn btn-sm">Compare</summary><div class="SelectMenu"><div class="SelectMenu-header"><span class="SelectMenu-title">Choose a tag to compare</span></div><input class="form-control" placeholder="Find a tag"></div></details></div>'
                f'<div class="col-md-9"><div class="Box"><div class="Box-body"><div class="d-flex flex-md-row flex-column"><div class="d-flex flex-row flex-1 mb-3 wb-break-word"><div class="flex-1"><span data-view-component="true" class="f1 text-bold d-inline mr-3"><a href="/{owner}/{project}/releases/tag/{tag}" data-view-component="true" class="Link--primary Link">{tag}</a></span></div>'
                + ('<div class="flex-shrink-0 mb-md-2 mr-2"><span data-view-component="true" class="Label Label--success Label--large">Latest</span></div>' if k == 0 else "")
                + f'</div></div><div data-pjax="true" data-test-selector="body-content" data-view-component="true" class="markdown-body my-3">{"".join(md)}</div></div>'
                f'<div data-view-component="true" class="Box-footer"><div class="mb-3"><details open class="details-reset Details-element"><summary><span class="f3 text-bold d-inline mr-2" role="heading" aria-level="2">Assets</span> <span title="4" class="Counter">4</span></summary><ul data-view-component="true">{assets}</ul></details></div>'
                f'<div class="d-flex flex-row flex-wrap flex-justify-between js-comment"><div class="comment-reactions-options d-flex flex-items-center flex-row flex-wrap">{reactions}</div><span class="color-fg-muted mt-1">{rng.randint(2, 90)} people reacted</span></div></div></div></div></div></section>'
            )
            truth += tb
        tabs = "".join(f'<li class="d-inline-flex"><a class="UnderlineNav-item" data-tab-item="{t.lower().replace(" ", "-")}-tab"><span data-content="{t}">{t}</span>' + (f'<span class="Counter">{rng.randint(1, 400)}</span>' if t in ("Issues", "Pull requests") else "") + "</a></li>" for t in ["Code", "Issues", "Pull requests", "Discussions", "Actions", "Projects", "Wiki", "Security", "Insights"])
        body = (
            f'<div class="logged-out env-production page-responsive"><div class="position-relative js-header-wrapper"><a href="#start-of-content" data-skip-target-assigned="false" class="px-2 py-4 color-bg-accent-emphasis color-fg-on-emphasis show-on-focus js-skip-to-content">Skip to content</a>'
            f'<header class="HeaderMktg header-logged-out js-details-container js-header Details f4 py-3" role="banner"><nav aria-label="Global" class="flex-1"><ul class="list-style-none">{_li(["Product", "Solutions", "Resources", "Open Source", "Enterprise", "Pricing"], "HeaderMenu-item")}</ul></nav>'
            '<div class="search-input"><button class="header-search-button">Search or jump to...</button></div><a href="/login" class="HeaderMenu-link">Sign in</a><a href="/signup" class="HeaderMenu-link">Sign up</a></header></div>'
            f'<div class="application-main" data-commit-hovercards-enabled data-discussion-hovercards-enabled><main id="js-repo-pjax-container"><div id="repository-container-header" class="pt-3 hide-full-screen" data-turbo-replace><div class="d-flex flex-nowrap flex-justify-end mb-3 px-3 px-lg-5"><div class="flex-auto min-width-0 width-fit">'
            f'<strong class="mr-2 flex-self-stretch" itemprop="name"><a href="/{owner}/{project}">{project}</a></strong><span class="Label Label--secondary v-align-middle mr-1">Public</span></div>'
            f'<ul class="pagehead-actions flex-shrink-0 d-none d-md-inline"><li><a class="btn-sm btn">Notifications</a></li><li><a class="btn-sm btn">Fork <span class="Counter">{rng.randint(5, 900)}</span></a></li><li><a class="btn-sm btn">Star <span class="Counter">{rng.randint(1, 40)}.{rng.randint(0, 9)}k</span></a></li></ul></div>'
            f'<nav data-pjax="#js-repo-pjax-container" aria-label="Repository" class="js-repo-nav js-sidenav-container-pjax js-responsive-underlinenav overflow-hidden UnderlineNav px-3 px-md-4 px-lg-5"><ul class="UnderlineNav-body list-style-none">{tabs}</ul></nav></div>'
            f'<turbo-frame id="repo-content-turbo-frame" target="_top"><div id="repo-content-pjax-container" class="repository-content"><h1 class="sr-only">Releases: {owner}/{project}</h1>'
            '<div class="d-flex flex-justify-center"><nav class="subnav"><a class="subnav-item selected" href="releases">Releases</a><a class="subnav-item" href="tags">Tags</a></nav><div class="subnav-search"><input class="form-control subnav-search-input" placeholder="Find a release" aria-label="Find a release"></div></div>'
            f'<div data-hpc>{"".join(parts)}</div><div class="paginate-container d-none d-sm-flex flex-sm-justify-center"><div role="navigation" aria-label="Pagination" class="pagination"><span class="previous_page disabled">Previous</span> <em class="current">1</em> <a href="?page=2">2</a> <a href="?page=3">3</a> <a class="next_page" rel="next" href="?page=2">Next</a></div></div></div></turbo-frame></main></div>'
            f'<footer class="footer pt-8 pb-6 f6 color-fg-muted p-responsive" role="contentinfo"><h2 class="sr-only">Footer</h2><div class="d-flex flex-items-center"><span>© {rng.randint(2022, 2025)} GitHub,&nbsp;Inc.</span></div><nav aria-label="Footer"><ul class="list-style-none d-flex flex-justify-center flex-wrap">{_li(["Terms", "Privacy", "Security", "Status", "Docs", "Contact", "Manage cookies", "Do not share my personal information"])}</ul></nav></footer></div>'
            '<script type="application/json" id="client-env">{"locale":"en","featureFlags":["copilot_new_references"]}</script>'
        )
        return _document('<link crossorigin="anonymous" media="all" rel="stylesheet" href="https://github.githubassets.com/assets/primer-' + _h(rng, 12) + '.css"><meta name="route-controller" content="releases">', body, charset, f"Releases · {owner}/{project}", html_attrs=' data-color-mode="auto" data-light-theme="light" data-dark-theme="dark"'), _truth(truth), f"https://github.com/{owner}/{project}/releases"

    if variant == "sphinx":
        truth.append(("h1", "Changelog"))
        secs = []
        for k, ver in enumerate(versions):
            vid = f"version-{ver.replace('.', '-')}"
            released = "Unreleased" if k == 0 and rng.random() < 0.3 else f"Released {rng.randint(2019, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            tb: list[Block] = [("h2", f"Version {ver}"), ("p", released)]
            html = f'<section id="{vid}"><h2>Version {ver}<a class="headerlink" href="#{vid}" title="Link to this heading">¶</a></h2><p>{released}</p>'
            if k == 0 and extra:
                html += f"<p>{esc(extra)}</p>"
                tb.append(("p", extra))
            items, hitems = [], []
            for _ in range(rng.randint(1, 2) if few else rng.randint(2, 10)):
                ch = _change(rng)
                num = rng.randint(100, 6000)
                items.append(f"{''.join(ch)} #{num}")
                hitems.append(f'<li><p>{_change_html(ch)} <a class="reference external" href="https://github.com/{owner}/{project}/issues/{num}">#{num}</a></p></li>')
            html += f'<ul class="simple">{"".join(hitems)}</ul>'
            tb.append(("ul", items))
            if not few and rng.random() < 0.25:
                snips = _code_snippets()
                code = snips[rng.randrange(len(snips))]
                p = "The old behaviour can be restored with a small helper:"
                html += f'<p>{esc(p)}</p><div class="highlight-python notranslate"><div class="highlight"><pre><span></span>{esc(code)}</pre></div></div>'
                tb += [("p", p), ("code", code)]
            html += "</section>"
            secs.append(html)
            truth += tb
        ad = ('<div id="readthedocs-ea" data-ea-publisher="readthedocs" data-ea-type="readthedocs-sidebar" class="ethical-rtd"><div class="ea-content"><a class="ea-link" rel="sponsored">Ship your side project faster: managed Postgres with branching, free for hobby projects.</a><p class="ea-callout"><small>Ads by EthicalAds</small></p></div></div>')
        toctree = _li(["Installation", "Quickstart", "User guide", "API reference", "Contributing", "Changelog", "License"], "toctree-l1")
        body = (
            f'<div class="wy-grid-for-nav"><nav data-toggle="wy-nav-shift" class="wy-nav-side"><div class="wy-side-scroll"><div class="wy-side-nav-search"><a href="index.html" class="icon icon-home">{project}</a><div class="version">{versions[0]}</div>'
            f'<div role="search"><form id="rtd-search-form" class="wy-form" action="search.html" method="get"><input type="text" name="q" placeholder="Search docs" aria-label="Search docs"></form></div></div>'
            f'<div class="wy-menu wy-menu-vertical" data-spy="affix" role="navigation" aria-label="Navigation menu"><p class="caption" role="heading"><span class="caption-text">Contents</span></p><ul class="current">{toctree}</ul></div>{ad if i != 1 else ""}</div></nav>'
            f'<section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><nav class="wy-nav-top" aria-label="Mobile navigation menu"><a href="index.html">{project}</a></nav><div class="wy-nav-content"><div class="rst-content">'
            f'<div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li><a href="index.html" class="icon icon-home" aria-label="Home"></a></li><li class="breadcrumb-item active">Changelog</li><li class="wy-breadcrumbs-aside"><a href="https://github.com/{owner}/{project}/blob/main/CHANGES.rst" class="fa fa-github"> Edit on GitHub</a></li></ul><hr/></div>'
            f'<div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article"><div itemprop="articleBody">{ad if i == 1 else ""}<section id="changelog"><h1>Changelog<a class="headerlink" href="#changelog" title="Link to this heading">¶</a></h1>{"".join(secs)}</section></div></div>'
            '<footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer"><a href="contributing.html" class="btn btn-neutral float-left" title="Contributing" accesskey="p" rel="prev"><span class="fa fa-arrow-circle-left" aria-hidden="true"></span> Previous</a>'
            '<a href="license.html" class="btn btn-neutral float-right" title="License" accesskey="n" rel="next">Next <span class="fa fa-arrow-circle-right" aria-hidden="true"></span></a></div><hr/>'
            f'<div role="contentinfo"><p>&#169; Copyright {rng.randint(2015, 2025)}, {esc(_name(rng))}.</p></div>Built with <a href="https://www.sphinx-doc.org/">Sphinx</a> using a <a href="https://github.com/readthedocs/sphinx_rtd_theme">theme</a> provided by <a href="https://readthedocs.org">Read the Docs</a>.</footer></div></div></section></div>'
            '<div class="rst-versions" data-toggle="rst-versions" role="note" aria-label="Versions"><span class="rst-current-version" data-toggle="rst-current-version"><span class="fa fa-book"> Read the Docs</span> v: latest <span class="fa fa-caret-down"></span></span>'
            '<div class="rst-other-versions"><dl><dt>Versions</dt><dd><a href="/en/latest/">latest</a></dd><dd><a href="/en/stable/">stable</a></dd></dl><dl><dt>Downloads</dt><dd><a>pdf</a></dd><dd><a>html</a></dd><dd><a>epub</a></dd></dl><dl><dt>On Read the Docs</dt><dd><a>Project Home</a></dd><dd><a>Builds</a></dd></dl></div></div>'
            '<script>jQuery(function () { SphinxRtdTheme.Navigation.enable(true); });</script>'
        )
        return _document('<link rel="stylesheet" href="_static/css/theme.css"><script data-url_root="./" id="documentation_options" src="_static/documentation_options.js"></script><script src="_static/doctools.js"></script>', body, charset, f"Changelog — {project} {versions[0]} documentation".replace("—", "-")), _truth(truth), f"https://{project}.readthedocs.io/en/latest/changelog.html"

    if variant == "saas":
        product = project.capitalize()
        entries = []
        for k, title in enumerate(rng.sample(SAAS_TITLES, len(versions))):
            bl = _article_blocks(rng, rng.randint(30, 60) if few else rng.choice([60, 120, 250]), rich=False)
            if not few and rng.random() < 0.5:
                bl.append(("ul", [f"{''.join(_change(rng))}" for _ in range(rng.randint(2, 5))]))
            if k == 0 and extra:
                bl.insert(0, ("p", extra))
            badge = rng.choice(["New", "Improved", "Fixed", "Beta"])
            html = "".join(_render(b, rng) for b in bl[:1])
            if len(bl) > 1 and rng.random() < 0.4:
                html += f'<figure class="changelog-media"><img src="https://cdn.{project}.example.com/changelog/{_h(rng, 10)}.png" alt=""><figcaption>{esc(_trim_words(rng.choice(_prose()), 6))}</figcaption></figure>'
            html += "".join(_render(b, rng) for b in bl[1:])
            entries.append(
                f'<article class="changelog-entry" id="{_slug(title)}"><div class="changelog-entry__meta"><time datetime="{_iso(rng)[:10]}" class="changelog-entry__date">{_date(rng)}</time><span class="badge badge--{badge.lower()}">{badge}</span></div>'
                f'<h2 class="changelog-entry__title"><a href="#{_slug(title)}">{esc(title)}</a></h2><div class="changelog-entry__body prose">{html}</div>'
                f'<div class="changelog-entry__footer"><div class="changelog-entry__authors"><img alt="" src="/a/{_h(rng)}.png"><span>{esc(_name(rng))}</span></div><div class="changelog-feedback">Was this update helpful? <button aria-label="Yes">👍</button><button aria-label="No">👎</button></div></div></article>'
            )
            if i == 1 and k == 0:
                entries.append(f'<div class="changelog-subscribe"><h3>Get product updates by email</h3><p>We ship improvements every week. Subscribe and we will send you a short digest once a month.</p><form><input type="email" placeholder="Work email"><button>Subscribe</button></form></div>'
                               f'<div class="changelog-promo"><h3>New to {esc(product)}?</h3><p>Start a free 14-day trial. No credit card required.</p><a class="btn">Start free trial</a><ul>{_li(["Plan projects", "Track issues", "Ship faster"], a=False)}</ul></div>')
            truth += [("h2", title), *bl]
        body = (
            f'<div id="__next"><header class="site-header"><a href="/" class="site-header__logo">{esc(product)}</a><nav class="site-header__nav"><ul>{_li(["Product", "Pricing", "Customers", "Changelog", "Docs", "Blog"])}</ul></nav><div class="site-header__cta"><a href="/login">Log in</a><a class="btn btn--primary" href="/signup">Get started</a></div></header>'
            f'<main class="changelog-page"><header class="changelog-hero"><h1 class="changelog-hero__title">Changelog</h1><p class="changelog-hero__subtitle">New updates and improvements to {esc(product)}.</p><div class="changelog-hero__actions"><a href="/changelog/rss.xml">RSS</a><a href="https://x.com/{project}">Follow us</a></div></header>'
            f'<div class="changelog-layout"><aside class="changelog-filters"><h3>Filter</h3><ul>{_li(["All updates", "New", "Improved", "Fixed", "Beta"], a=False)}</ul></aside><div class="changelog-entries">{"".join(entries)}</div></div>'
            f'<nav class="changelog-pagination"><a href="?page=2">Older updates →</a></nav></main>'
            f'<footer class="site-footer"><div class="site-footer__cols"><ul>{_li(["Features", "Integrations", "Security", "Status", "Careers", "Brand", "Terms", "Privacy"])}</ul></div><p>© {rng.randint(2020, 2025)} {esc(product)} Labs, Inc.</p></footer></div>'
            f'<script id="__NEXT_DATA__" type="application/json">{json.dumps({"props": {"pageProps": {"entries": len(entries)}}, "page": "/changelog"})}</script>'
        )
        return _document('<link rel="stylesheet" href="/_next/static/css/' + _h(rng, 16) + '.css">', body, charset, f"Changelog | {product}"), _truth(truth), f"https://{project}.example.com/changelog"

    # App-Store-like version history
    app = project.replace("-", " ").title()
    items = []
    for k, ver in enumerate(versions):
        lines = rng.sample(APP_LINES, rng.randint(1, 2) if few else rng.randint(1, 5))
        if k == 0 and extra:
            lines.insert(0, extra)
        if rng.random() < 0.3:
            lines = ["Bug fixes and performance improvements.", *lines]
        label = f"Version {ver}" if k == 0 else ver
        truth += [("p", label), ("p", "\n".join(lines))]
        notes = "<br>".join(esc(x) for x in lines)
        if k == 0:
            items.append(f'<section class="l-content-width section section--bordered whats-new"><div class="section__nav"><h2 class="section__headline">What’s New</h2><button class="we-modal__show link section__nav__see-all-link" aria-label="Version History">Version History</button></div>'
                         f'<div class="l-row whats-new__content"><div class="l-column small-12 medium-9 large-8 small-valign-top whats-new__notes"><div class="we-truncate we-truncate--multi-line we-truncate--interactive" dir=""><p dir="false" data-test-bidi>{notes}</p></div></div>'
                         f'<div class="l-column small-12 medium-3 large-4 small-valign-top whats-new__latest"><div class="l-row"><time data-test-we-datetime datetime="{_iso(rng)}" aria-label="{_date(rng)}" class="l-column small-6 medium-12 whats-new__latest__date">{_date(rng)}</time>'
                         f'<p class="l-column small-6 medium-12 whats-new__latest__version">{label}</p></div></div></div></section><div class="version-history" role="dialog" aria-label="Version History"><h1 class="version-history__headline">Version History</h1><ul class="version-history__items">')
        else:
            items.append(f'<li class="version-history__item"><h4 class="version-history__item__version-number">{ver}</h4><time data-test-we-datetime datetime="{_iso(rng)}" class="version-history__item__release-date">{_date(rng)}</time>'
                         f'<div class="we-truncate we-truncate--multi-line"><p dir="false" data-test-bidi>{notes}</p></div></li>')
    history = "".join(items) + "</ul></div>"
    # the latest version's notes come before its label in the page: reorder the truth to page order
    truth[0], truth[1] = truth[1], truth[0]
    desc = " ".join(_trim_words(rng.choice(_prose()), 30) for _ in range(2 if not few else 3))
    shots = "".join(f'<picture><img alt="" src="/s/{_h(rng)}.png"></picture>' for _ in range(4))
    body = (
        '<div class="we-banner"><p>This app is only available on the App Store for Apple devices.</p></div>'
        f'<nav class="localnav" aria-label="App Store"><div class="localnav-wrapper"><a class="localnav-title" href="/">App Store</a><ul>{_li(["Overview", "Apps", "Games", "Arcade", "Developers"], "localnav-menu-item")}</ul><a class="localnav-action">Open the Mac App Store</a></div></nav>'
        f'<main class="selfclear is-apps-theme"><div class="animation-wrapper is-visible"><section class="l-content-width section section--hero product-hero"><div class="l-row"><div class="product-hero__media l-column small-5 medium-4 large-3"><picture class="we-artwork"><img alt="" src="/icon/{_h(rng)}.png"></picture></div>'
        f'<header class="product-header app-header product-header--padded-start" aria-label="App info"><h1 class="product-header__title app-header__title">{esc(app)} <span class="badge badge--product-title">4+</span></h1><h2 class="product-header__subtitle app-header__subtitle">{esc(_trim_words(rng.choice(RELATED_TEASERS), 4))}</h2>'
        f'<h2 class="product-header__identity app-header__identity"><a class="link" href="/developer/x">{esc(app)} Labs, Inc.</a></h2><ul class="product-header__list app-header__list"><li class="product-header__list__item"><ul class="inline-list inline-list--mobile-compact"><li class="inline-list__item">#{rng.randint(1, 90)} in Productivity</li></ul></li>'
        f'<li class="product-header__list__item"><ul class="inline-list"><li class="inline-list__item"><figure class="we-star-rating" aria-label="{rng.randint(3, 4)}.{rng.randint(0, 9)} out of 5"><figcaption class="we-rating-count star-rating__count">{rng.randint(3, 4)}.{rng.randint(0, 9)} • {rng.randint(1, 99)}.{rng.randint(0, 9)}K Ratings</figcaption></figure></li></ul></li>'
        '<li class="product-header__list__item"><ul class="inline-list"><li class="inline-list__item inline-list__item--bulleted app-header__list__item--price">Free</li><li class="inline-list__item inline-list__item--bulleted app-header__list__item--in-app-purchase">Offers In-App Purchases</li></ul></li></ul></header></div></section>'
        f'<section class="l-content-width section section--bordered"><h2 class="section__headline">Screenshots</h2><div class="we-screenshot-viewer">{shots}</div></section>'
        f'<section class="l-content-width section section--bordered section--description"><div class="section__description"><h2 class="visuallyhidden">Description</h2><div class="we-truncate we-truncate--multi-line"><p dir="false" data-test-bidi>{esc(desc)}</p></div><button class="we-truncate__button link">more</button></div></section>'
        f'{history}'
        f'<section class="l-content-width section section--bordered"><div class="section__nav"><h2 class="section__headline">Ratings and Reviews</h2><a class="link section__nav__see-all-link">See All</a></div><div class="we-customer-ratings"><span class="we-customer-ratings__averages__display">4.{rng.randint(0, 9)}</span> out of 5 <div class="we-customer-ratings__count">{rng.randint(1, 99)}K Ratings</div></div>'
        f'<div class="we-customer-review"><h3 class="we-customer-review__title">{esc(rng.choice(COMMENTS))}</h3><p>{esc(rng.choice(COMMENTS))}</p></div></section>'
        f'<section class="l-content-width section section--bordered app-privacy"><h2 class="section__headline">App Privacy</h2><p>The developer, {esc(app)} Labs, Inc., indicated that the app’s privacy practices may include handling of data as described below.</p><h3>Data Linked to You</h3><ul>{_li(["Contact Info", "Identifiers", "Usage Data", "Diagnostics"], a=False)}</ul></section>'
        f'<section class="l-content-width section section--bordered section--information"><h2 class="section__headline">Information</h2><dl class="information-list"><dt>Seller</dt><dd>{esc(app)} Labs, Inc.</dd><dt>Size</dt><dd>{rng.randint(20, 400)} MB</dd><dt>Category</dt><dd>Productivity</dd><dt>Compatibility</dt><dd>Requires iOS 16.0 or later.</dd><dt>Languages</dt><dd>English, French, German, Japanese</dd><dt>Age Rating</dt><dd>4+</dd></dl></section>'
        f'<section class="l-content-width section section--bordered"><h2 class="section__headline">More By This Developer</h2><ul>{_li(_teasers(rng, 3))}</ul></section><section class="l-content-width section"><h2 class="section__headline">You Might Also Like</h2><ul>{_li(_teasers(rng, 6 if i == 0 else 4))}</ul></section></div></main>'
        f'<footer class="ac-gf-footer"><p>Copyright © {rng.randint(2022, 2025)} Apple Inc. All rights reserved.</p><ul>{_li(["Internet Service Terms", "App Store &amp; Privacy", "Cookie Warning", "Support"])}</ul></footer>'
        f'<script type="fastboot/shoebox" id="shoebox-media-api-cache-apps">{json.dumps({"d": [{"attributes": {"name": app}}]})}</script>'
    )
    return _document('<link rel="stylesheet" href="/assets/web-experience-app.css">' + _json_ld({"@context": "http://schema.org", "@type": "SoftwareApplication", "name": app, "operatingSystem": "iOS"}), body, charset, f"{app} on the App Store"), _truth(truth), f"https://apps.example.com/us/app/{_slug(app)}/id{rng.randint(10**8, 10**9)}"



# ------------------------------------------------------------------------------------------- wiki-other

WIKIS = ["Hollow Reaches Wiki", "Starwake Wiki", "Greyharbor Chronicles Wiki", "Ironvale Wiki", "Emberfall Wiki"]
INFO_FIELDS = [("Type", ["Character", "Location", "Item", "Faction"]), ("Status", ["Alive", "Deceased", "Unknown", "Active"]), ("First appearance", ["Episode 1", "Chapter 12", "Season 2", "The Long Night"]),
               ("Affiliation", ["The Wardens", "House Vell", "Free Traders", "None"]), ("Voiced by", [f"{f} {la}" for f, la in zip(FIRST[:6], LAST[:6], strict=True)]), ("Region", ["The Marches", "Saltmere", "Upper Reach"])]


def _wiki_blocks(rng: random.Random, i: int, charset: str) -> tuple[str, list[Block], list[Block]]:
    """(article title, lead blocks, section blocks) from a reference topic; code and tables left out."""
    title, blocks = rng.choice(_documents())
    bl = [b for b in blocks if b[0] in ("p", "h2", "h3", "ul")]
    if i in (0, 8):
        first = next(b for b in bl if b[0] == "p")
        lead: list[Block] = [("p", _trim_words(str(first[1]), 25 if i == 0 else 60))]
        rest: list[Block] = []
    else:
        if len(bl) > 40:
            start = rng.randrange(0, len(bl) - 30)
            bl = bl[start : start + rng.randint(15, 40)]
        while bl and bl[-1][0] in ("h2", "h3"):
            bl.pop()
        k = next((j for j, b in enumerate(bl) if b[0] in ("h2", "h3")), len(bl))
        lead, rest = bl[:k] or [("p", _trim_words(rng.choice(_prose()), 40))], bl[k:]
        if rest and rest[0][0] not in ("h2", "h3"):
            rest.insert(0, ("h2", "Overview"))
        lead = [b for b in lead if b[0] == "p"] or [("p", _trim_words(rng.choice(_prose()), 40))]
        if rng.random() < 0.4:
            rest += [("h2", "Trivia"), ("ul", [_trim_words(rng.choice(_prose()), 14) for _ in range(rng.randint(2, 5))])]
    lead = _localise(lead, rng, charset)
    return title.capitalize(), lead, rest


def _wiki_other(i: int, rng: random.Random, charset: str) -> tuple[str, str, str]:
    variant = ("fandom", "vector", "monobook")[i % 3]
    wiki = rng.choice(WIKIS)
    title, lead, rest = _wiki_blocks(rng, i, charset)
    host = re.sub(r"[^a-z]", "", wiki.lower().replace(" wiki", ""))
    url = f"https://{host}.fandom.com/wiki/{title.replace(' ', '_')}" if variant == "fandom" else f"https://{host}.wiki.example.org/wiki/{title.replace(' ', '_')}"
    heads = [str(b[1]) for b in rest if b[0] in ("h2", "h3")]
    refs = [_trim_words(rng.choice(_prose()), 10) for _ in range(rng.randint(0, 4))]
    nref = 0

    def para(b: Block) -> str:
        nonlocal nref
        h = _render(b, rng)
        if b[0] == "p" and refs and rng.random() < 0.3:
            nref += 1
            h = h[:-4] + f'<sup id="cite_ref-{nref}" class="reference"><a href="#cite_note-{nref}">[{nref}]</a></sup></p>'
        return h

    def heading(b: Block, k: int) -> str:
        t, lvl = esc(str(b[1])), b[0]
        edit = f'<span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/wiki/{_slug(title)}?action=edit&amp;section={k}" title="Edit section: {t}">edit</a><span class="mw-editsection-bracket">]</span></span>'
        if variant == "vector":
            return f'<div class="mw-heading mw-heading{lvl[1]}"><{lvl} id="{_slug(str(b[1]))}">{t}</{lvl}>{edit}</div>'
        return f'<{lvl}><span class="mw-headline" id="{_slug(str(b[1]))}">{t}</span>{edit}</{lvl}>'

    fields = [(k, rng.choice(v)) for k, v in rng.sample(INFO_FIELDS, rng.randint(3, 6))]
    if variant == "fandom":
        infobox = (f'<aside role="region" class="portable-infobox pi-background pi-border-color pi-theme-wikia pi-layout-default"><h2 class="pi-item pi-item-spacing pi-title pi-secondary-background" data-source="title">{esc(title)}</h2>'
                   f'<figure class="pi-item pi-image" data-source="image"><a href="/wiki/File:{_h(rng)}.png" class="image image-thumbnail" title=""><img src="https://static.wikia.nocookie.net/{host}/images/{_h(rng, 1)}/{_h(rng, 2)}/{_h(rng)}.png" class="pi-image-thumbnail" alt=""></a><figcaption class="pi-item-spacing pi-caption">{esc(_trim_words(rng.choice(_prose()), 5))}</figcaption></figure>'
                   f'<section class="pi-item pi-group pi-border-color"><h2 class="pi-item pi-header pi-secondary-font pi-item-spacing pi-secondary-background">General information</h2>'
                   + "".join(f'<div class="pi-item pi-data pi-item-spacing pi-border-color" data-source="{_slug(k)}"><h3 class="pi-data-label pi-secondary-font">{esc(k)}</h3><div class="pi-data-value pi-font">{esc(v)}</div></div>' for k, v in fields)
                   + "</section></aside>")
    else:
        infobox = f'<table class="infobox"><tbody><tr><th colspan="2" class="infobox-above">{esc(title)}</th></tr>' + "".join(f'<tr><th scope="row" class="infobox-label">{esc(k)}</th><td class="infobox-data">{esc(v)}</td></tr>' for k, v in fields) + "</tbody></table>"
    notice = rng.choice([
        f'<table class="notice spoiler-notice" role="presentation"><tbody><tr><td><b>Spoiler warning!</b> This article contains plot details about recent episodes of {esc(wiki.replace(" Wiki", ""))}.</td></tr></tbody></table>',
        f'<div class="notice stub-notice"><p>This article is a <a href="/wiki/Category:Stubs">stub</a>. You can help {esc(wiki)} by expanding it.</p></div>',
        '<table class="box-Unreferenced plainlinks metadata ambox ambox-content" role="presentation"><tbody><tr><td class="mbox-text"><div class="mbox-text-span">This article <b>does not cite any sources</b>. Please help improve this article by adding citations to reliable sources. Unsourced material may be challenged and removed.</div></td></tr></tbody></table>',
    ])
    toc = ("" if len(heads) < 3 else '<div id="toc" class="toc" role="navigation" aria-labelledby="mw-toc-heading"><input type="checkbox" role="button" id="toctogglecheckbox" class="toctogglecheckbox" style="display:none"><div class="toctitle" lang="en" dir="ltr"><h2 id="mw-toc-heading">Contents</h2><span class="toctogglespan"><label class="toctogglelabel" for="toctogglecheckbox"></label></span></div><ul>'
           + "".join(f'<li class="toclevel-1 tocsection-{k + 1}"><a href="#{_slug(h)}"><span class="tocnumber">{k + 1}</span> <span class="toctext">{esc(h)}</span></a></li>' for k, h in enumerate(heads)) + "</ul></div>")

    def ad(k: int) -> str:
        return f'<div id="incontent_boxad_{k}" class="incontent-boxad ad-slot-placeholder" data-slot-name="incontent_boxad_{k}"><div class="ad-slot__label">Advertisement</div></div>' if variant == "fandom" else ""

    parts = [notice if (rng.random() < 0.5 or i in (0, 1)) else "", infobox, *(para(b) for b in lead), toc]
    sec = 0
    for b in rest:
        if b[0] in ("h2", "h3"):
            sec += 1
            if b[0] == "h2" and sec > 1 and variant == "fandom":
                parts.append(ad(sec))
            parts.append(heading(b, sec))
            if i == 1 and sec == 1:
                parts.append(f'<div class="community-notice"><b>Community notice:</b> The {esc(wiki)} Discord server is now open! Join over 12,000 fans to discuss the latest episodes. <a href="/wiki/Discord">Join now</a></div>'
                             f'<table class="navbox"><tbody><tr><th class="navbox-title">{esc(wiki.replace(" Wiki", ""))} locations</th></tr><tr><td class="navbox-list">{" • ".join(f"<a>{esc(t)}</a>" for t in rng.sample([t for t, _ in _documents()], 10))}</td></tr></tbody></table>')
        else:
            parts.append(para(b))
    if rng.random() < 0.5 or i == 0:
        parts.append('<h2><span class="mw-headline" id="Gallery">Gallery</span></h2><div class="wikia-gallery gallery">' + "".join(f'<div class="wikia-gallery-item"><div class="thumb"><img src="/g/{_h(rng)}.jpg" alt=""></div><div class="lightbox-caption">{esc(_trim_words(rng.choice(_prose()), 5))}</div></div>' for _ in range(rng.randint(3, 6))) + "</div>")
    if refs:
        parts.append('<h2><span class="mw-headline" id="References">References</span></h2><div class="mw-references-wrap"><ol class="references">' + "".join(f'<li id="cite_note-{k + 1}"><span class="mw-cite-backlink"><a href="#cite_ref-{k + 1}">↑</a></span> <span class="reference-text">{esc(r)}</span></li>' for k, r in enumerate(refs)) + "</ol></div>")
    parts.append(f'<h2><span class="mw-headline" id="See_also">See also</span></h2><ul>{_li([t.capitalize() for t, _ in rng.sample(_documents(), 3)])}</ul>')
    parts.append(f'<table class="navbox"><tbody><tr><th class="navbox-title">{esc(wiki)} navigation</th></tr><tr><td class="navbox-list">{" · ".join(f"<a>{esc(t)}</a>" for t in rng.sample([t for t, _ in _documents()], 12))}</td></tr></tbody></table>')
    content = f'<div class="mw-parser-output">{"".join(parts)}</div>'
    cats = rng.sample(["Characters", "Locations", "Season 1", "Season 2", "Articles needing citations", "Stubs", "Items", "Factions", "Spoilers"], rng.randint(2, 5))
    truth = [*lead, *rest]

    if variant == "fandom":
        trending = _teasers(rng, 8 if i == 0 else 5)
        body = (
            f'<div class="global-navigation" data-theme="light"><div class="global-navigation__top"><a href="https://www.fandom.com/" class="global-navigation__logo">FANDOM</a><nav class="global-navigation__links">{_li(["Games", "Movies", "TV", "Video", "Wikis"], "global-navigation__link")}</nav>'
            '<div class="global-navigation__bottom"><a class="wds-button">Start a Wiki</a><a class="global-navigation__signin">Sign In</a><span>Don\'t have an account? <a>Register</a></span></div></div></div>'
            f'<div class="main-container"><div class="resizable-container"><div class="community-header-wrapper"><header class="fandom-community-header"><a class="fandom-community-header__community-name" href="/">{esc(wiki)}</a>'
            f'<div class="fandom-community-header__top-container"><div class="fandom-community-header__local-navigation"><ul class="wds-tabs">{_li(["Explore", "Main Page", "Discuss", "All Pages", "Community", "Interactive Maps", "Recent Blog Posts"], "wds-tabs__tab")}</ul></div></div>'
            f'<div class="wiki-tools wds-button-group"><a class="wds-button wds-is-secondary">{rng.randint(100, 9000)} pages</a></div></header></div>'
            f'<div class="page has-right-rail"><main class="page__main" lang="en"><div class="page-header" id="PageHeader"><div class="page-header__top"><div class="page-header__meta"><div class="page-header__categories"><span class="page-header__categories-in">in: </span>{", ".join(f"<a>{esc(c)}</a>" for c in cats[:3])}</div></div>'
            f'<div class="page-header__actions"><a class="wds-button wds-is-text page-header__action-button">Sign in to edit</a><a class="wds-button wds-is-text">History</a><a class="wds-button wds-is-text">Talk (0)</a></div></div>'
            f'<div class="page-header__title-wrapper"><h1 class="page-header__title" id="firstHeading"><span class="mw-page-title-main">{esc(title)}</span></h1></div></div>'
            f'<div id="content" class="page-content"><div id="mw-content-text" class="mw-body-content mw-content-ltr" lang="en" dir="ltr">{content}</div>'
            f'<div class="page-footer"><div class="page-footer__categories wds-is-collapsed"><div class="categories-link">Categories</div><ul>{_li(cats)}</ul><div class="page-footer__languages">Languages: <a>Español</a> <a>Deutsch</a></div></div>'
            '<div class="license-description">Community content is available under <a href="https://www.fandom.com/licensing">CC-BY-SA</a> unless otherwise noted.</div></div></div></main>'
            f'<aside class="page__right-rail"><div class="right-rail-wrapper"><div id="top_boxad" class="top-boxad ad-slot-placeholder"><div class="ad-slot__label">Advertisement</div></div><section class="rail-module trending-pages"><h2 class="rail-module__header">Trending pages</h2><ul>{_li(trending)}</ul></section>'
            f'<section class="rail-module recent-images-module"><h2 class="rail-module__header">Popular pages</h2><ul>{_li(_teasers(rng, 4))}</ul></section></div></aside></div></div></div>'
            f'<footer class="global-footer"><section class="global-footer__section"><h3>Explore properties</h3><ul>{_li(["Fandom", "Muthead", "Fanatical"])}</ul></section><section><h3>Follow Us</h3></section><section><h3>Overview</h3><ul>{_li(["What is Fandom?", "About", "Careers", "Press", "Contact", "Terms of Use", "Privacy Policy", "Digital Services Act", "Global Sitemap", "Local Sitemap"])}</ul></section>'
            '<section><h3>Community</h3><ul><li><a>Community Central</a></li><li><a>Support</a></li><li><a>Help</a></li></ul></section><div class="global-footer__bottom"><p>Fan Feed</p><p>More Fandoms</p></div></footer>'
            '<script>var fandomContext = {"site": {"wgArticleId": 1234, "wgIsArticle": true}}; window.RLQ = window.RLQ || [];</script>'
        )
        return _document('<link rel="stylesheet" href="/load.php?lang=en&amp;modules=skin.fandomdesktop.styles&amp;only=styles&amp;skin=fandomdesktop">', body, charset, f"{title} | {wiki} | Fandom", body_attrs=' class="skin-fandomdesktop mediawiki ltr sitedir-ltr ns-0 page-' + _slug(title) + ' rootpage-' + _slug(title) + ' theme-fandomdesktop-light"'), _truth(truth), url

    catlinks = f'<div id="catlinks" class="catlinks" data-mw="interface"><div id="mw-normal-catlinks" class="mw-normal-catlinks"><a href="/wiki/Special:Categories">Categories</a>: <ul>{_li(cats)}</ul></div></div>'
    printfooter = f'<div class="printfooter" data-nosnippet="">Retrieved from "<a dir="ltr" href="{url}">{url}</a>"</div>'
    if variant == "vector":
        body = (
            '<a class="mw-jump-link" href="#bodyContent">Jump to content</a><div class="vector-header-container"><header class="vector-header mw-header"><div class="vector-header-start"><nav class="vector-main-menu-landmark" aria-label="Site"><div id="vector-main-menu-dropdown" class="vector-dropdown vector-main-menu-dropdown"><label class="vector-dropdown-label">Main menu</label></div></nav>'
            f'<a href="/wiki/Main_Page" class="mw-logo"><span class="mw-logo-wordmark">{esc(wiki)}</span></a></div><div class="vector-header-end"><div id="p-search" role="search" class="vector-search-box-vue"><form action="/index.php" id="searchform"><input class="cdx-text-input__input" type="search" name="search" placeholder="Search {esc(wiki)}" aria-label="Search {esc(wiki)}"></form></div>'
            '<nav class="vector-user-links" aria-label="Personal tools"><ul><li><a href="/index.php?title=Special:CreateAccount">Create account</a></li><li><a href="/index.php?title=Special:UserLogin">Log in</a></li></ul></nav></div></header></div>'
            '<div class="mw-page-container"><div class="mw-page-container-inner"><div class="vector-main-menu-container"><div id="mw-navigation"><nav id="mw-panel" class="vector-main-menu-landmark"><div id="vector-main-menu" class="vector-main-menu vector-pinnable-element"><div class="vector-menu mw-portlet mw-portlet-navigation" id="p-navigation"><div class="vector-menu-heading">Navigation</div>'
            f'<ul class="vector-menu-content-list">{_li(["Main page", "Recent changes", "Random page", "Help about MediaWiki", "Community portal"], "mw-list-item")}</ul></div></div></nav></div></div>'
            f'<div class="vector-column-start"><div class="vector-sticky-pinned-container"><nav id="mw-panel-toc" aria-label="Contents" class="mw-table-of-contents-container vector-toc-landmark"><div id="vector-toc" class="vector-toc vector-pinnable-element"><div class="vector-pinnable-header vector-toc-pinnable-header"><div class="vector-pinnable-header-label">Contents</div></div>'
            f'<ul class="vector-toc-contents" id="mw-panel-toc-list"><li class="vector-toc-list-item vector-toc-level-1"><a href="#" class="vector-toc-link"><div class="vector-toc-text">(Top)</div></a></li>{_li(heads, "vector-toc-list-item vector-toc-level-1")}</ul></div></nav></div></div>'
            f'<div class="mw-content-container"><main id="content" class="mw-body"><header class="mw-body-header vector-page-titlebar"><h1 id="firstHeading" class="firstHeading mw-first-heading"><span class="mw-page-title-main">{esc(title)}</span></h1></header>'
            '<div class="vector-page-toolbar"><div class="vector-page-toolbar-container"><nav aria-label="Namespaces"><ul>' + _li(["Page", "Discussion"], "vector-tab-noicon mw-list-item") + '</ul></nav><nav aria-label="Views"><ul>' + _li(["Read", "Edit", "View history"], "vector-tab-noicon mw-list-item") + "</ul></nav></div></div>"
            f'<div id="bodyContent" class="vector-body" aria-labelledby="firstHeading" data-mw-ve-target-container><div class="vector-body-before-content"><div id="siteSub" class="noprint">From {esc(wiki)}</div></div><div id="contentSub"><div id="mw-content-subtitle"></div></div>'
            f'<div id="mw-content-text" class="mw-body-content"><div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">{"".join(parts)}</div></div>{printfooter}{catlinks}</div></main></div>'
            f'<div class="mw-footer-container"><footer id="footer" class="mw-footer"><ul id="footer-info"><li id="footer-info-lastmod"> This page was last edited on {_date(rng)}, at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}.</li><li id="footer-info-copyright">Content is available under <a>Creative Commons Attribution-ShareAlike</a> unless otherwise noted.</li></ul>'
            f'<ul id="footer-places">{_li(["Privacy policy", "About " + wiki, "Disclaimers", "Mobile view"])}</ul><ul id="footer-icons" class="noprint"><li id="footer-poweredbyico"><a href="https://www.mediawiki.org/"><img alt="Powered by MediaWiki" src="/resources/assets/poweredby_mediawiki.svg"></a></li></ul></footer></div></div></div>'
            '<script>(RLQ=window.RLQ||[]).push(function(){mw.config.set({"wgBackendResponseTime":120,"wgHostname":"mw1"});});</script>'
        )
        return _document('<link rel="stylesheet" href="/load.php?lang=en&amp;modules=skins.vector.styles&amp;only=styles&amp;skin=vector-2022"><script>document.documentElement.className="client-js vector-feature-toc-pinned-clientpref-1";</script>', body, charset, f"{title} - {wiki}", html_attrs=' class="client-nojs vector-feature-language-in-header-enabled skin-theme-clientpref-day"', body_attrs=' class="skin-vector skin-vector-search-vue mediawiki ltr sitedir-ltr ns-0 ns-subject page-' + _slug(title) + ' skin-vector-2022 action-view"'), _truth(truth), url

    # MonoBook
    site_notice = f'<div id="siteNotice"><div id="localNotice" data-nosnippet="" lang="en" dir="ltr"><p>Welcome to {esc(wiki)}! Please read the <a href="/wiki/Project:Editing_guidelines">editing guidelines</a> before contributing. The wiki is moving to a new server on {_date(rng)}: expect a short read-only period.</p></div></div>'
    portlets = "".join(f'<div class="portlet" id="p-{_slug(h)}" role="navigation"><h3>{h}</h3><div class="pBody"><ul>{_li(items)}</ul></div></div>' for h, items in [
        ("Navigation", ["Main page", "Community portal", "Current events", "Recent changes", "Random page", "Help"]), ("Tools", ["What links here", "Related changes", "Special pages", "Printable version", "Permanent link", "Page information"])])
    body = (
        f'<div id="globalWrapper"><div id="column-content"><div id="content" class="mw-body" role="main"><a id="top"></a>{site_notice}<div class="mw-indicators"></div><h1 id="firstHeading" class="firstHeading mw-first-heading" lang="en"><span class="mw-page-title-main">{esc(title)}</span></h1>'
        f'<div id="bodyContent" class="mw-body-content"><div id="siteSub">From {esc(wiki)}</div><div id="contentSub" lang="en" dir="ltr"></div><div id="jump-to-nav"></div><a class="mw-jump-link" href="#column-one">Jump to navigation</a><a class="mw-jump-link" href="#searchInput">Jump to search</a>'
        f'<div id="mw-content-text" class="mw-body-content mw-content-ltr" lang="en" dir="ltr">{content}</div>{printfooter}{catlinks}<div class="visualClear"></div></div></div></div>'
        f'<div id="column-one" lang="en" dir="ltr"><h2>Navigation menu</h2><div id="p-cactions" class="portlet" role="navigation"><h3>Page actions</h3><div class="pBody"><ul>{_li(["Page", "Discussion", "View source", "History"])}</ul></div></div>'
        f'<div class="portlet" id="p-personal" role="navigation"><h3>Personal tools</h3><div class="pBody"><ul>{_li(["Create account", "Log in"])}</ul></div></div><div class="portlet" id="p-logo" role="banner"><a href="/wiki/Main_Page" class="mw-wiki-logo" title="Visit the main page"></a></div>'
        f'{portlets}<div id="p-search" class="portlet" role="search"><h3><label for="searchInput">Search</label></h3><div id="searchBody" class="pBody"><form action="/index.php" id="searchform"><input type="search" name="search" placeholder="Search {esc(wiki)}" id="searchInput"><input type="submit" value="Go" class="searchButton"></form></div></div></div>'
        f'<div class="visualClear"></div><div id="footer" class="mw-footer" role="contentinfo" lang="en" dir="ltr"><div id="f-poweredbyico" class="footer-icons"><a href="https://www.mediawiki.org/">Powered by MediaWiki</a></div><ul id="f-list"><li id="lastmod"> This page was last edited on {_date(rng)}.</li>'
        f'<li id="viewcount">This page has been accessed {rng.randint(100, 90000):,} times.</li><li id="privacy"><a>Privacy policy</a></li><li id="about"><a>About {esc(wiki)}</a></li><li id="disclaimers"><a>Disclaimers</a></li></ul></div></div>'
        '<script>(RLQ=window.RLQ||[]).push(function(){mw.config.set({"wgPageParseReport":{"limitreport":{"cputime":"0.052"}}});});</script>'
    )
    return _document('<link rel="stylesheet" href="/load.php?lang=en&amp;modules=skins.monobook.styles&amp;only=styles&amp;skin=monobook">', body, charset, f"{title} - {wiki}", html_attrs=' class="client-nojs"', body_attrs=' class="mediawiki ltr sitedir-ltr mw-hide-empty-elt ns-0 ns-subject page-' + _slug(title) + ' skin-monobook action-view"'), _truth(truth), url


# ---------------------------------------------------------------------------------------------- pages

_BUILDERS: dict[str, Callable[[int, random.Random, str], tuple[str, str, str]]] = {
    "news-local": _news_local,
    "magazine": _magazine,
    "personal-blog": _personal_blog,
    "review": _review,
    "release-notes": _release_notes,
    "wiki-other": _wiki_other,
}


def pages(n_per_type: int = 20, seed: int = 0) -> list[Page]:
    """`n_per_type` pages of each kind in `KINDS`, deterministic for `seed` (and a Python version)."""
    return build_pages({k: _BUILDERS[k] for k in KINDS}, n_per_type, f"third:{seed}", _charset)
