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
    esc,
    shingle_counts,
    shingle_scores,
)
from tests.web_pages_heldout import _document, _h, _iso, _json_ld, _render, _slug, _truth

__all__ = ["KINDS", "Page", "pages", "shingle_counts", "shingle_scores"]

KINDS = ("news-local", "magazine", "personal-blog")

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


# ---------------------------------------------------------------------------------------------- pages

_BUILDERS: dict[str, Callable[[int, random.Random, str], tuple[str, str, str]]] = {
    "news-local": _news_local,
    "magazine": _magazine,
    "personal-blog": _personal_blog,
}


def pages(n_per_type: int = 20, seed: int = 0) -> list[Page]:
    """`n_per_type` pages of each kind in `KINDS`, deterministic for `seed` (and a Python version)."""
    out = []
    for k, kind in enumerate(KINDS):
        for i in range(n_per_type):
            rng = random.Random(f"third:{seed}:{kind}:{i}")
            html, truth, url = _BUILDERS[kind](i, rng, _charset(i, k))
            out.append(Page(name=f"{kind}-{i:03d}", kind=kind, url=url, html=html, truth=truth))
    return out
