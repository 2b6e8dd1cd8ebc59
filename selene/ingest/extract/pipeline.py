"""The entry points, and the order the rule families run in: the source is prepared (`source`), its
names and paragraphs marked (`names`, `prose`), the tree parsed; the content is protected (`content`,
`prose`), user posts and boilerplate sections marked to skip (`posts`, `sections`); resiliparse
walks the tree with the skip selectors; then its output loses link blocks (`blocks`), the headline
(`headline`) and boilerplate lines (`lines`). A short result undoes the rule that emptied it (user
posts that were the content, a class word on the content's wrapper).

The text comes out NFC-normalized (a page may spell "ü" as u + U+0308: one word, not two, for a
tokenizer or a metric).
"""

from __future__ import annotations

import unicodedata

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import bytes_to_str
from resiliparse.parse.html import HTMLTree

from selene.ingest.extract.blocks import _blocks, _chars
from selene.ingest.extract.content import _content, _keep_big_wrappers, _protect_content
from selene.ingest.extract.dom import _MARK_TEXT, SKIP_ATTR, _text_len
from selene.ingest.extract.headline import _article_page, _drop_headline
from selene.ingest.extract.lines import _clean_lines
from selene.ingest.extract.names import _mark_names, _skip_selectors
from selene.ingest.extract.posts import ARTICLE_CHARS, _user_post_containers
from selene.ingest.extract.prose import _holds_prose, _lost_prose, _mark_paragraphs, _protect_prose
from selene.ingest.extract.sections import _boiler_sections
from selene.ingest.extract.source import _ascii_bytes, _prepare_source

FALLBACK_CHARS = 500  # a result shorter than this may have lost the content's wrapper to a class word


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


def main_text_of_bytes(body: bytes, charset: str) -> str:
    """`extract_main_text` of the page `body` in `charset` (decoded as resiliparse's `bytes_to_str`
    does, falling back to UTF-8 then Windows-1252), with the contents of scripts and styles cut from
    the bytes before decoding when the charset allows: a news page of 2.6 MB is 0.4 MB without them,
    and decoding all of it (to four bytes a character, for one emoji in a script) costs more than the
    extraction."""
    if not _ascii_bytes(charset):
        return extract_main_text(bytes_to_str(body, charset))
    article = _article_page(body)  # before the scripts go: JSON-LD is a script
    cut = _prepare_source(body)
    return _main_text(bytes_to_str(cut, charset), article)


def extract_main_text(html: str) -> str:
    """The main text of an HTML page (see the package doc): headings, paragraphs, lists, code blocks
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
    return (
        text
        if text.isascii() or unicodedata.is_normalized("NFC", text)
        else unicodedata.normalize("NFC", text)
    )
