"""Markdown pieces the reference pages share: table cells, code spans, values as YAML."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

GENERATED = (
    "<!-- Generated from the code by docs/hooks/reference.py ({module}); edit the code, not this page. -->"
)


def cell(text: str | None) -> str:
    """`text` as one table cell: one line, pipes escaped, code spans kept (`inline`)."""
    return inline(" ".join((text or "").split())).replace("|", "\\|")


def inline(text: str) -> str:
    """Plain text with `code spans` as markdown: outside the spans, what markdown would read as
    HTML or emphasis is escaped (`prose`); inside, nothing needs to be."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if i % 2 else prose(part) for i, part in enumerate(parts))


def prose(text: str) -> str:
    """Plain text as markdown: ``<`` and ``>`` would open HTML tags, ``*`` emphasis."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")


def code(text: str) -> str:
    """`text` as a code span (a backtick inside gets a longer fence)."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def yaml_value(value: Any) -> str:
    """`value` as it is written in a YAML file, on one line: ``0.8``, ``null``, ``[en]``."""
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def anchor(*parts: str) -> str:
    """A stable heading id: ``selene ingest`` → ``selene-ingest``, ``train.model`` → ``train-model``."""
    return re.sub(r"[^a-z0-9]+", "-", " ".join(parts).lower()).strip("-")
