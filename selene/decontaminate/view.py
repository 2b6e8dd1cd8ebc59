"""What the decontaminate stage shows (`selene.view`): the documents table (split and dropped); on
the dashboard, per task the n-grams found and what was cut."""

from __future__ import annotations

from typing import Any

from selene.decontaminate.manifest import DecontaminateManifest
from selene.io.results import StageResult
from selene.view import PREFECT, Table, View, columns, documents


def report_rows(manifest: DecontaminateManifest) -> list[tuple[Any, ...]]:
    """One row per task: n, task n-grams, matches, documents split and dropped, examples."""
    return [
        (task, t.n, t.task_ngrams, t.matched_ngrams, t.documents_split, t.documents_dropped,
         " | ".join(t.matched_examples[:3]))
        for task, t in manifest.tasks.items()
    ]  # fmt: skip


def view(result: StageResult[DecontaminateManifest]) -> View:
    m = result.manifest
    if m is None:
        return View()
    names = ("task", "n", "task n-grams", "matched n-grams", "documents split", "documents dropped", "examples")
    return View(blocks=(
        *documents(result),
        Table(columns(*names), report_rows(m), key="decontam-report", to=PREFECT,
              description=f"Task n-grams found in `{result.out}`'s input and what was cut (n = overlap length in words)"),
    ))  # fmt: skip
