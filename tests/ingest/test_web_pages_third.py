"""The third evaluation set (`tests/web_pages_third.py`): lengths and declared charsets. The checks
every set shares (deterministic, every kind, truth visible in the page) are in test_web_pages."""

from __future__ import annotations

import re

import pytest

from tests.web_pages_third import KINDS, pages


@pytest.fixture(scope="module")
def default_pages():
    return pages()


def test_lengths_vary_and_short_pages_are_short(default_pages) -> None:
    for kind in KINDS:
        words = [len(p.truth.split()) for p in default_pages if p.kind == kind]
        assert words[0] < 200, (kind, words[0])
        assert max(words) > 4 * min(words), kind


def test_charset_edge_pages(default_pages) -> None:
    declared = {p.name: p.charset for p in default_pages if p.charset != "utf-8"}
    assert len(declared) == 2 * len(KINDS)
    for k, kind in enumerate(KINDS):
        assert declared[f"{kind}-003"] == "windows-1252"
        assert declared[f"{kind}-011"] == ("iso-8859-15" if k % 2 == 0 else "windows-1250")
    for p in default_pages:
        if p.charset != "utf-8":
            assert re.search(r"[^\x00-\x7f]", p.truth), p.name
            assert p.body().decode(p.charset) == p.html


def test_every_page_has_scripts_and_chrome(default_pages) -> None:
    for p in default_pages:
        assert "<script" in p.html, p.name
        assert len(p.html) - len(p.truth) > 2000, p.name
