"""The held-out evaluation pages (`tests/web_pages_heldout.py`): deterministic, every kind present, the
truth visible in the page, the declared charsets honoured."""

from __future__ import annotations

import re

import pytest

from tests.test_web_pages import visible_text
from tests.web_pages_heldout import KINDS, pages


@pytest.fixture(scope="module")
def default_pages():
    return pages()


def test_deterministic_for_a_seed(default_pages) -> None:
    again = pages()
    assert [(p.name, p.url, p.html, p.truth) for p in again] == [(p.name, p.url, p.html, p.truth) for p in default_pages]
    other = pages(n_per_type=3, seed=1)
    assert [p.html for p in other] != [p.html for p in default_pages if int(p.name[-3:]) < 3]


def test_every_kind_present(default_pages) -> None:
    counts = {k: sum(p.kind == k for p in default_pages) for k in KINDS}
    assert counts == dict.fromkeys(KINDS, 20)
    assert len({p.name for p in default_pages}) == len(default_pages)


def test_truth_is_visible_text_of_the_page(default_pages) -> None:
    for page in default_pages:
        assert page.truth.strip(), page.name
        assert "\n\n\n" not in page.truth, page.name
        text = visible_text(page.body().decode(page.charset))
        for block in page.truth.split("\n\n"):
            assert block.strip(), page.name
            assert " ".join(block.split()) in text, (page.name, block[:80])


def test_lengths_vary_and_short_pages_are_short(default_pages) -> None:
    for kind in KINDS:
        words = [len(p.truth.split()) for p in default_pages if p.kind == kind]
        assert words[0] < 150, (kind, words[0])
        assert max(words) > 4 * min(words), kind


def test_charset_edge_pages(default_pages) -> None:
    declared = {p.name: p.charset for p in default_pages if p.charset != "utf-8"}
    for kind in KINDS:
        assert declared[f"{kind}-002"] == "windows-1252"
        assert declared[f"{kind}-009"] in ("iso-8859-1", "windows-1251")
    for p in default_pages:
        if p.charset != "utf-8":
            assert re.search(r"[^\x00-\x7f]", p.truth), p.name
            assert p.body().decode(p.charset) == p.html
