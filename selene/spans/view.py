"""What the spans stage shows (`selene.view`): the documents table and what was cut per source; on
the dashboard and in the report, the most repeated spans (what was boilerplate)."""

from __future__ import annotations

from selene.io.results import StageResult
from selene.spans.manifest import SpansManifest
from selene.view import Text, View, documents, edits, repeats


def view(result: StageResult[SpansManifest]) -> View:
    m = result.manifest
    if m is None:
        return View()
    c = m.spans
    what = f"{c.span}-{c.unit} spans"
    earlier = f", {c.in_earlier:,} held by earlier outputs" if m.inputs.against else ""
    return View(blocks=(
        *documents(result),
        *edits(m.stats, f"{c.unit}s", key="spans-edits"),
        Text(f"{c.spans:,} {what} hashed, {c.duplicate_spans:,} copies cut{earlier}"),
        *repeats(m.repeats, key="spans-repeats", what=what),
    ))  # fmt: skip
