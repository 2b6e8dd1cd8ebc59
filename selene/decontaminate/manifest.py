"""What `selene decontaminate` records in its manifest."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from selene.manifest import DatasetInputs, DocumentManifest, Record, Stats


class DecontaminateInputs(DatasetInputs):
    """The document dataset decontaminate read, and the tasks it looked for."""

    tasks: list[str] = Field(description="The evaluation task files or directories.")


class DecontaminateTask(Record):
    """decontaminate: one evaluation task, its n-grams and what matched them."""

    n: int = Field(description="n-gram length (words).")
    examples: int = Field(description="Examples in the task.")
    indexed_examples: int = Field(description="Examples long enough to index.")
    task_ngrams: int = Field(description="Distinct n-grams indexed.")
    matched_ngrams: int = Field(description="n-gram matches in the corpus.")
    documents_touched: int = Field(description="Documents with a match.")
    documents_split: int = Field(description="Of those, cut into pieces.")
    documents_dropped: int = Field(description="Of those, dropped (no piece long enough).")
    matched_examples: list[str] = Field(description="A few matched n-grams, as text.")


class DecontaminateStats(Stats):
    """decontaminate's stats: with the documents split and the pieces written."""

    documents_split: int = Field(description="Documents cut into pieces.")
    pieces_out: int = Field(description="Pieces written.")


class DecontaminateManifest(DocumentManifest):
    """decontaminate: documents with evaluation-task n-grams cut out."""

    stage: Literal["decontaminate"] = "decontaminate"
    inputs: DecontaminateInputs = Field(description="The dataset read and the task files.")
    tasks: dict[str, DecontaminateTask] = Field(description="Per task: its n-grams and what matched them.")
    stats: DecontaminateStats = Field(description="Documents per source (kept, split, pieces, dropped by task).")
