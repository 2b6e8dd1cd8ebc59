"""What the substrings stage shows (`selene.view`): the documents table, what was cut per source
and, on the dashboard and in the report, the most repeated substrings."""

from __future__ import annotations

from selene.io.results import StageResult
from selene.substrings.config import SubstringsConfig
from selene.substrings.manifest import SubstringsManifest
from selene.view import TERMINAL, Block, Text, View, documents, edits, repeats


def view(result: StageResult[SubstringsManifest]) -> View:
    m = result.manifest
    if m is None:
        return View()
    cfg = SubstringsConfig.model_validate(m.config)
    work = m.work
    said: list[Block] = []
    if (
        "parts" in result.info
    ):  # how this run's budget cut the work (not in the manifest: any budget gives the same)
        said.append(
            Text(
                f"suffix arrays: {work.corpus_bytes:,} bytes in {result.info['parts']} part(s), "
                f"{result.info['buckets']} fingerprint bucket(s); {work.repeated_windows:,} of {work.windows:,} windows "
                f"repeated, {result.info['cross_part']:,} of them "
                + ("found in an earlier part" if cfg.keep == "first" else "held by another part too"),
                TERMINAL,
            )
        )
    return View(blocks=(
        *documents(result),
        *said,
        *edits(m.stats, "substrings", key="substrings-edits"),
        *repeats(m.repeats, key="substrings-repeats", what=f"substrings (>= {cfg.min_length} {cfg.unit})",
                 kept_first=cfg.keep == "first"),
    ))  # fmt: skip
