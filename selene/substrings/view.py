"""What the substrings stage shows (`selene.view`): the documents table, what was cut per source
and, on the dashboard and in the report, the most repeated substrings."""

from __future__ import annotations

from selene.io.results import StageResult
from selene.substrings.config import SubstringsConfig
from selene.substrings.manifest import SubstringsManifest
from selene.view import View, documents, edits, repeats


def view(result: StageResult[SubstringsManifest]) -> View:
    m = result.manifest
    if m is None:
        return View()
    cfg = SubstringsConfig.model_validate(m.config)
    return View(blocks=(
        *documents(result),
        *edits(m.stats, "substrings", key="substrings-edits"),
        *repeats(m.repeats, key="substrings-repeats", what=f"substrings (>= {cfg.min_length} {cfg.unit})"),
    ))  # fmt: skip
