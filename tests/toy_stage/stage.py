"""The census stage: its config model, its run function and its view."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

from pydantic import Field

from selene.config import StageConfig
from selene.executor.mappers import Mapper
from selene.io import dataset, fs
from selene.io.results import StageResult
from selene.view import TERMINAL, Text, View


class CensusConfig(StageConfig):
    """`selene census`: documents and characters per source."""

    min_chars: int = Field(default=0, ge=0, description="Count only documents of at least this many characters.")


def count_shard(path: str, min_chars: int) -> dict[str, list[int]]:
    counts: dict[str, list[int]] = {}
    for table in dataset.iter_row_groups(path, ["source", "text"]):
        for source, text in zip(table.column("source").to_pylist(), table.column("text").to_pylist(), strict=True):
            if len(text) >= min_chars:
                c = counts.setdefault(source, [0, 0])
                c[0] += 1
                c[1] += len(text)
    return counts


def run_census(inp: str, out: str, cfg: CensusConfig, *, mapper: Mapper, force: bool = False) -> StageResult[Any]:
    shards = dataset.list_shards(inp)
    docs: Counter[str] = Counter()
    chars: Counter[str] = Counter()
    for part in mapper("census", count_shard, [(p, cfg.min_chars) for p in shards]):
        for source, (n, c) in part.items():
            docs[source] += n
            chars[source] += c
    census = {s: {"documents": docs[s], "chars": chars[s]} for s in sorted(docs)}
    os.makedirs(out, exist_ok=True)
    fs.atomic_write(fs.join(out, "census.json"), json.dumps(census, indent=2) + "\n")
    return StageResult(out, skipped=False, info={"census": census})


def view(result: StageResult[Any]) -> View:
    """A line per source after a run (the report, which has the directory only, gets no section)."""
    census = result.info.get("census", {})
    return View(blocks=[Text(f"{source}: {c['documents']} documents, {c['chars']} characters", TERMINAL) for source, c in census.items()])
