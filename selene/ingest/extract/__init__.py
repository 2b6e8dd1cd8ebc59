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

Modules, one per rule family, each importing only modules listed before it (names with a leading
underscore are private to this package, not to their module):

- `dom`: the marker attributes, text measures and bounds every rule shares;
- `source`: source preparation (scripts, styles and svgs cut; lists, asides, main and article tags
  renamed), from str or bytes;
- `names`: rules 1 and 2, judged in the source and turned into resiliparse's skip selectors;
- `content`: protection by markup (main, article, articleBody ...) and the big-wrapper fallback;
- `prose`: protection by prose, the content root;
- `posts`: rule 3; `sections`: rule 4;
- `blocks`: rule 5, on resiliparse's output; `lines`: rule 6; `headline`: rule 7;
- `pipeline`: the entry points (`main_text_of_bytes`, `extract_main_text`), which run the families
  in order.
"""

from __future__ import annotations

from selene.ingest.extract.dom import NAME_ATTR
from selene.ingest.extract.names import _mark_names
from selene.ingest.extract.pipeline import extract_main_text, main_text_of_bytes
from selene.ingest.extract.source import _prepare_source

__all__ = ["NAME_ATTR", "_mark_names", "_prepare_source", "extract_main_text", "main_text_of_bytes"]
