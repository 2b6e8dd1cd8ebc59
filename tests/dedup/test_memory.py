"""Dedup on heavily duplicated input: what a cluster task and the command's own process hold follows
the memory budget, never the number of linked documents, with the output unchanged; and keep: score's
key is checked before any work."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selene.dedup import batches, clusters, work
from selene.dedup.config import DedupConfig
from selene.dedup.stage import run_dedup
from selene.errors import ConfigError
from selene.executor import mappers
from selene.executor.mappers import Budget, LocalMapper, SerialMapper
from selene.io import dataset, fs
from tests.corpus import write_dataset
from tests.dedup_corpus import base_documents, reference_words, variant
from tests.pipeline_runs import subprocess_env

LEVELS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75)


def copies_corpus(n_base: int = 24, copies: int = 8, seed: int = 5) -> list[tuple[str, str]]:
    """Every base document in `copies` perturbed copies (Jaccard to it from LEVELS), shuffled, so
    each cluster spans many shards and most checks are near the threshold."""
    bases = base_documents(n_base, seed=seed)
    rng = random.Random(seed)
    vocab = sorted({w for b in bases for w in reference_words(b)})
    docs = [
        (f"b{b}c{c}", base if c == 0 else variant(base, LEVELS[(b + c) % len(LEVELS)], rng, vocab))
        for b, base in enumerate(bases)
        for c in range(copies)
    ]
    rng.shuffle(docs)
    return docs


def tree_digest(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def test_a_tiny_budget_decides_in_bounded_batches_with_identical_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = copies_corpus()
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=30)
    default = run_dedup(inp, str(tmp_path / "default"), DedupConfig())
    assert default.manifest.stats.clusters.exact_checks, "the corpus must exercise the exact checks"

    budget = 60_000  # a cluster task's texts and shingle sets: a few components' worth
    read: list[int] = []  # characters a Reader read from the shards at once (not routed to it)
    routed: list[int] = []  # characters of each routed batch
    plans: list[np.ndarray] = []
    texts, batch_texts, component_batches = work.Reader.texts, clusters.batch_texts, batches.component_batches

    def reader_texts(self: work.Reader, gidx: np.ndarray) -> dict[int, str]:
        before = set(self.text)
        out = texts(self, gidx)
        read.append(sum(len(t) for g, t in out.items() if g not in before))
        assert read[-1] <= max(self.read_chars, 2 * max((len(t) for t in out.values()), default=0))
        return out

    def batch(*args: Any) -> dict[int, str]:
        out = batch_texts(*args)
        routed.append(sum(len(t) for t in out.values()))
        return out

    def planned(*args: Any) -> np.ndarray:
        plans.append(component_batches(*args))
        return plans[-1]

    monkeypatch.setattr(work.Reader, "texts", reader_texts)
    monkeypatch.setattr(clusters, "batch_texts", batch)
    monkeypatch.setattr(batches, "component_batches", planned)
    tiny_budget = SerialMapper(Budget.gb(budget * 4 / mappers.GIB, 1))  # task_memory // 4 == budget
    tiny = run_dedup(inp, str(tmp_path / "tiny"), DedupConfig(), mapper=tiny_budget)
    assert tree_digest(Path(tiny.out)) == tree_digest(Path(default.out))
    limit = batches.batch_limit(budget)
    assert limit * 10 < sum(len(t) for _, t in docs)
    assert len(routed) > 10 and max(routed) <= limit  # many batches, each within the budget's share
    plan = np.concatenate(plans)
    assert (plan == -1).any() and (plan >= 0).any()  # components larger than a batch: read from shards
    assert read and max(read) > 0


def pid_of(sleep: float) -> int:
    time.sleep(sleep)
    return os.getpid()


def test_once_the_pool_is_up_no_task_runs_in_the_commands_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster step's first task (and a map's last) used to run in the command's own process,
    which kept its memory to the end of the run: with the pool started by an earlier step, every item
    of a later map goes to the pool, however quick."""
    monkeypatch.setattr(mappers, "INLINE_SECONDS", 0.2)
    m = LocalMapper("processes", 2)
    try:
        first = m("signatures", pid_of, [(0.3,), (0.0,), (0.0,)])
        assert first[0] == os.getpid() and os.getpid() not in first[1:]  # the first ran here, then the pool
        assert os.getpid() not in m("clusters", pid_of, [(0.0,), (0.0,)])
        assert os.getpid() not in m("one", pid_of, [(0.0,)])
    finally:
        m.close()


BASE = " ".join(f"word{i} common text shared by every copy here" for i in range(40))


def test_a_score_key_no_document_has_is_refused_before_any_work(tmp_path: Path) -> None:
    docs = [
        (str(i), BASE + f" copy {i}", "web", json.dumps({"quality": {"hq": 0.5}, "lang": "en"}))
        for i in range(4)
    ]
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=2)
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as err:
        run_dedup(inp, str(out), DedupConfig(keep="score", score_key="quality.score", threshold=0.7))
    msg = str(err.value)
    assert "'quality.score'" in msg and "none of 4 documents" in msg
    assert "their meta fields: lang, quality, quality.hq" in msg
    assert not out.exists()
    res = run_dedup(inp, str(out), DedupConfig(keep="score", score_key="quality.hq", threshold=0.7))
    assert res.manifest.stats.clusters.without_score == 0
    # the command: exit 2, and no output directory left behind (not even the writability probe's)
    cli = tmp_path / "cli"
    cmd = [sys.executable, "-m", "selene.cli", "dedup", "-i", inp, "-o", str(cli), "--keep", "score"]
    done = subprocess.run(
        [*cmd, "--score-key", "quality.score"],
        capture_output=True,
        text=True,
        env=subprocess_env(tmp_path, SELENE_PREFECT="off"),
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "dedup.score_key 'quality.score'" in done.stderr and "quality.hq" in done.stderr
    assert not cli.exists()


def test_documents_without_the_score_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scores = [None, 0.2, None, 0.9, "high"]
    docs = [
        (str(i), BASE + f" copy {i}", "web", json.dumps({} if s is None else {"q": s}))
        for i, s in enumerate(scores)
    ]
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=2)
    res = run_dedup(inp, str(tmp_path / "out"), DedupConfig(keep="score", score_key="q", threshold=0.7))
    assert [d["id"] for d in dataset.iter_documents(res.out)] == ["3"]
    assert res.manifest.stats.clusters.without_score == 3  # missing twice, not a number once
    manifest = json.loads(fs.read_text(fs.join(res.out, "manifest.json")))
    assert manifest["stats"]["clusters"]["without_score"] == 3
    assert "dedup.score_key 'q': 3 of 5 documents have no number there" in capsys.readouterr().err
    first = run_dedup(inp, str(tmp_path / "first"), DedupConfig(threshold=0.7))
    assert (
        "without_score"
        not in json.loads(fs.read_text(fs.join(first.out, "manifest.json")))["stats"]["clusters"]
    )


def test_under_prefect_too_no_item_runs_here_once_the_pool_is_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Prefect mapper's rule is LocalMapper's: items run in the command's process only until a
    step has taken INLINE_SECONDS; after that, also in later steps, every item goes to the pool."""
    import time

    from selene.flows import stage as flow_stage

    monkeypatch.setattr(flow_stage, "INLINE_SECONDS", 60.0)
    m = flow_stage.PrefectMapper("processes", 2)
    try:
        now = time.perf_counter()
        assert m._pool_for(now) is None  # a step just begun: here
        pool = m._pool_for(now - 120)  # a step past the inline time starts the pool
        assert pool is not None
        assert m._pool_for(time.perf_counter()) is pool  # a later step, however young: the pool
    finally:
        m.close()
    assert flow_stage.PrefectMapper("threads", 2)._pool_for(0.0) is None
