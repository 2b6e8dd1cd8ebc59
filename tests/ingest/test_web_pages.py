"""The evaluation pages of benchmarks/extract.py: deterministic, every kind present, truth visible."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests import web_pages, web_pages_heldout, web_pages_third
from tests.web_pages import KINDS, pages, shingle_counts, shingle_scores

_BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "tr", "td", "th",
               "blockquote", "section", "article", "header", "footer", "nav", "aside", "main", "br", "figure",
               "figcaption", "dl", "dt", "dd", "form", "button", "label", "option", "select", "caption"}


class _Visible(HTMLParser):
    """Text a browser would render (CSS aside): no <head>, <script>, <style>; block tags separate."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head", "title"):
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head", "title"):
            self._skip -= 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())


SETS = {"main": web_pages, "heldout": web_pages_heldout, "third": web_pages_third}


@pytest.fixture(scope="module")
def default_pages():
    return pages()


@pytest.fixture(scope="module", params=sorted(SETS))
def page_set(request):  # type: ignore[no-untyped-def]
    """(generator module, its default pages), for the checks both evaluation sets must pass."""
    module = SETS[request.param]
    return module, module.pages()


def test_deterministic_for_a_seed(page_set) -> None:  # type: ignore[no-untyped-def]
    module, default = page_set
    again = module.pages()
    assert [(p.name, p.url, p.html, p.truth) for p in again] == [(p.name, p.url, p.html, p.truth) for p in default]
    other = module.pages(n_per_type=3, seed=1)
    assert [p.html for p in other] != [p.html for p in default if int(p.name[-3:]) < 3]


def test_every_kind_present_with_twenty_pages(page_set) -> None:  # type: ignore[no-untyped-def]
    module, default = page_set
    counts = {k: sum(p.kind == k for p in default) for k in module.KINDS}
    assert counts == dict.fromkeys(module.KINDS, 20)
    assert len({p.name for p in default}) == len(default)


def test_truth_is_visible_text_of_the_page(page_set) -> None:  # type: ignore[no-untyped-def]
    _, default = page_set
    for page in default:
        assert page.truth.strip(), page.name
        assert "\n\n\n" not in page.truth, page.name
        text = visible_text(page.body().decode(page.charset))  # encoded with the declared charset
        for block in page.truth.split("\n\n"):
            assert block.strip(), page.name
            assert " ".join(block.split()) in text, (page.name, block[:80])


def test_charset_edge_pages(default_pages) -> None:
    cp = [p for p in default_pages if p.charset == "windows-1252"]
    assert {p.kind for p in cp} == set(KINDS)
    for p in cp:
        assert re.search(r"[^\x00-\x7f]", p.truth), p.name
        assert p.body().decode("cp1252") == p.html


def test_metric_identical_disjoint_and_by_hand() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    assert shingle_scores(text, text) == (1.0, 1.0)
    assert shingle_scores("alpha beta gamma delta epsilon", text) == (0.0, 0.0)
    assert shingle_scores("", "") == (1.0, 1.0)
    assert shingle_scores("", text) == (0.0, 0.0)
    # truth a b c d e f: 3 shingles (abcd, bcde, cdef); prediction a b c d e x y: 4 (abcd, bcde, cdex, dexy)
    assert shingle_counts("a b c d e x y", "a b c d e f") == (2, 2, 1)
    p, r = shingle_scores("a b c d e x y", "a b c d e f")
    assert (p, r) == (pytest.approx(2 / 4), pytest.approx(2 / 3))
    # a repeated shingle counts as often as it occurs (multisets); punctuation is not a token
    assert shingle_counts("a, b c d. a b c d", "a b c d") == (1, 4, 0)
    # shorter than n words: the whole text is one shingle
    assert shingle_scores("Hello world", "hello world") == (0.0, 0.0)
    assert shingle_scores("hello world", "hello world") == (1.0, 1.0)
