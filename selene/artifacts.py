"""What a stage shows on the Prefect dashboard, as plain data: stages build these without Prefect,
the Prefect runtime publishes them (`selene.flows.stage.publish`). Without a Prefect API they are
not published; the same numbers are in the stage's manifest and the run's report.md."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Table:
    key: str
    rows: list[dict[str, Any]]
    description: str = ""


@dataclass(frozen=True)
class Markdown:
    key: str
    markdown: str
    description: str = ""


Artifact = Table | Markdown


def svg_image(svg: str | bytes, alt: str) -> str:
    """Markdown that shows an SVG inline (artifacts cannot link to files on the machine that ran)."""
    data = svg.encode() if isinstance(svg, str) else svg
    return f"![{alt}](data:image/svg+xml;base64,{base64.b64encode(data).decode()})"
