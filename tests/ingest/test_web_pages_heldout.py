"""The held-out evaluation pages (`tests/web_pages_heldout.py`): lengths and declared charsets. The
checks both sets share (deterministic, every kind, truth visible in the page) are in test_web_pages."""

from __future__ import annotations

import re

import pytest

from tests.web_pages_heldout import KINDS, pages


@pytest.fixture(scope="module")
def default_pages():
    return pages()


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
