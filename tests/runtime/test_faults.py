"""The fault classes of the campaign against the data stages, each asserting the good outcome: a clear error
naming the file, a quarantine record, an identical rerun, or a refusal.

A fast subset of the campaign in benchmarks/faults/ (`python -m benchmarks.faults`: every command,
training and evaluation included): the same cases and the same mechanical judgement, on the small corpus of
tests/ingest/test_ingest.py, every command a real ``python -m selene.cli`` subprocess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.faults.cases import cases
from benchmarks.faults.context import Run
from benchmarks.faults.fixtures import prepare
from benchmarks.faults.judges import judge_error, names_of, snapshot
from benchmarks.faults.runner import run_case

# case keys of the campaign: a few per fault class, each a second or two
CASES = [
    "dedup/output same input",  # overlap
    "tokenize/output inside input",
    "blend/output same input",
    "dedup/part-00000.parquet:bitflip",  # corrupt shards and manifests
    "dedup/part-00000.parquet:random",
    "tokenize/part-00000.parquet:bitflip",
    "decontaminate/part-00000.parquet:truncate",
    "tokenize/manifest.json:garbage",
    "dedup/manifest.json:removed",
    "ingest/00.jsonl.zst:truncate",  # a damaged source file: quarantine or a clear error
    "dedup/rerun over damaged output part-00001.parquet:bitflip",
    "dedup/config:garbage",  # config files
    "run/config:list",
    "tokenize/config:garbage",
    "dedup/full disk (fsize)",  # full disk (RLIMIT_FSIZE: no root needed), then a rerun
    "tokenize/full disk (fsize)",
    "dedup/second while the first runs",  # concurrent writers
    "tokenize/second while the first runs",
    "blend/output = input of a running tokenize",
    "dedup/kill -9 at 60%",  # kill -9, orphans, rerun
]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return prepare(tmp_path_factory.mktemp("faults"), models=False)


def test_the_subset_is_in_the_campaign() -> None:
    keys = {c.key for c in cases()}
    assert not [k for k in CASES if k not in keys]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("key", CASES)
def test_fault_gets_a_good_outcome(ctx: Any, key: str) -> None:
    (case,) = [c for c in cases() if c.key == key]
    r = run_case(ctx, case)
    assert r.held, f"{key}: {r.outcome} (expected {' | '.join(r.expect)}): {r.detail}\n  > {r.message}"


def test_judge_catches_a_traceback_and_an_unnamed_file(tmp_path: Path) -> None:
    """The judgement itself can fail a run: a traceback, a message naming no file, a modified input."""
    f = tmp_path / "in" / "part-00000.parquet"
    f.parent.mkdir()
    f.write_bytes(b"abc")
    snap = {f.parent: snapshot(f.parent)}
    names = names_of(f)
    tb = Run(1, "Traceback (most recent call last):\n  File ...\nValueError: x", 0.1)
    assert judge_error(tb, names, snap)[0] == "traceback"
    assert judge_error(Run(1, "error: ArrowInvalid: bad", 0.1), names, snap)[0] == "unclear error"
    assert judge_error(Run(1, f"error: {f}: bad shard", 0.1), names, snap)[0] == "clear error"
    f.write_bytes(b"abd")
    assert judge_error(Run(1, f"error: {f}: bad shard", 0.1), names, snap)[0] == "silent loss/corruption"
    assert judge_error(Run(None, "", 9.0, timed_out=True), names, {})[0] == "hang"
