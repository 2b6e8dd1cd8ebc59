"""The spans stage end to end: its decisions against a brute-force reference, determinism across
workers and memory budgets, resume after a kill, --against, bad input, the command line."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selene.errors import ConfigError, PathError, UsageError
from selene.executor import mappers
from selene.executor.mappers import Budget, LocalMapper, SerialMapper
from selene.faults import ENV as FAILPOINT_ENV
from selene.faults import KILL_ONCE_ENV
from selene.io import dataset
from selene.spans.config import SpansConfig
from selene.spans.stage import run_spans
from selene.spans.units import spans
from tests.corpus import write_dataset
from tests.mapping import as_mapper
from tests.pipeline_runs import subprocess_env
from tests.spans.corpus import planted_corpus, reference

# small limits so that planted corpora lose documents both ways
SMALL = {"min_span_chars": 20, "min_doc_words": 12, "min_sentences": 2}


def outputs(out: str) -> dict[str, str]:
    """sha256 of every output file (shards, removed.parquet, manifest, repeats.md, the span index)."""
    root = Path(out)
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and "_work" not in p.parts]
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def result_of(out: str) -> tuple[dict[str, str], dict[str, str]]:
    kept = {d["id"]: d["text"] for d in dataset.iter_documents(out)}
    removed = {r["id"]: r["reason"] for r in dataset.read_removed(out).to_pylist()}
    return kept, removed


@pytest.mark.parametrize(("unit", "span"), [("sentence", 3), ("sentence", 1), ("paragraph", 2), ("line", 3)])
def test_decisions_match_brute_force(tmp_path: Path, unit: str, span: int) -> None:
    docs = planted_corpus(unit, seed=span)
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=25)
    cfg = SpansConfig(unit=unit, span=span, **SMALL)  # type: ignore[arg-type]
    res = run_spans(inp, str(tmp_path / "out"), cfg)
    kept, removed = reference(docs, cfg)
    got_kept, got_removed = result_of(res.out)
    assert got_removed == removed
    assert got_kept == kept
    assert list(got_kept) == [d for d, _ in docs if d in kept]  # corpus order kept
    m = res.manifest
    assert m is not None
    edited = sum(kept[d] != t for d, t in docs if d in kept)
    assert edited > 5 and len(removed) > 0, "the planted corpus should lose text both ways"
    assert m.stats.documents_edited == edited
    assert m.stats.documents_removed == len(removed)
    assert m.stats.chars_removed == sum(len(t) - len(kept[d]) for d, t in docs if d in kept)
    per = m.stats.per_source["s"]
    assert per.removed == {"spans:too_short": len(removed)}
    assert m.repeats and m.repeats[0].count >= m.repeats[-1].count >= 2
    # the index holds exactly the distinct spans of the documents written
    held = {int(h) for t in got_kept.values() for h in spans(t, cfg).hashes}
    index = np.concatenate([np.load(p) for p in sorted((Path(res.out) / "spans-index").glob("p*.npy"))])
    assert index.tolist() == sorted(held) and m.spans.index_spans == len(held)
    assert (Path(res.out) / "repeats.md").read_text().count("\n|") == len(
        m.repeats
    ) + 2  # the header, its rule, a row each


def test_most_repeated_is_the_planted_boilerplate(tmp_path: Path) -> None:
    boiler = "We use cookies to improve your experience. By browsing you agree to it. Read our policy."
    names = [
        f"{a} {b}"
        for a in ("Ann", "Bob", "Cy", "Di", "Ed", "Flo")
        for b in ("Ash", "Elm", "Fir", "Oak", "Yew")
    ]
    # numbers are normalised to 0, so the documents differ by names
    docs = [
        (f"d{i}", f"Story of {n} begins here. {n} goes on. {boiler} Then {n} ends.")
        for i, n in enumerate(names)
    ]
    inp = write_dataset(str(tmp_path / "in"), docs)
    res = run_spans(
        inp, str(tmp_path / "out"), SpansConfig(unit="sentence", min_doc_words=0, min_sentences=0)
    )
    assert res.manifest is not None
    top = res.manifest.repeats[0]
    assert (top.count, top.text) == (30, boiler)
    kept, _ = result_of(res.out)
    assert boiler in kept["d0"] and all(boiler not in kept[f"d{i}"] for i in range(1, 30))
    assert kept["d1"] == "Story of Ann Elm begins here. Ann Elm goes on. Then Ann Elm ends."


def test_same_bytes_for_any_workers_and_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = planted_corpus("sentence", n_docs=150, seed=7)
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=30)
    cfg = SpansConfig(unit="sentence", **SMALL)
    serial = run_spans(inp, str(tmp_path / "serial"), cfg)
    tiny = as_mapper(SerialMapper(), Budget(memory=20_000))  # many hash partitions
    assert tiny.budget.task_memory < 64 * 3_000
    run_spans(inp, str(tmp_path / "tiny"), cfg, mapper=tiny)
    monkeypatch.setattr(mappers, "INLINE_SECONDS", 0.0)  # every item after the first goes to the pool
    pool = LocalMapper("processes", workers=2, memory_gb=0.001)
    try:
        run_spans(inp, str(tmp_path / "pool"), cfg, mapper=pool)
    finally:
        pool.close()

    @as_mapper
    def lost_cut_spans(name: str, fn: Callable[..., Any], args: Sequence[tuple]) -> list[Any]:
        # a run killed between a shard's cut and the spans it kept for the index: found again there
        if name == "spans-index-signatures":
            for f in (tmp_path / "lost").rglob("cut-rows/*.npy"):
                f.unlink()
        return [fn(*a) for a in args]

    run_spans(inp, str(tmp_path / "lost"), cfg, mapper=lost_cut_spans)
    want = outputs(serial.out)
    assert "spans-index/index.json" in want
    assert outputs(str(tmp_path / "tiny")) == want
    assert outputs(str(tmp_path / "pool")) == want
    assert outputs(str(tmp_path / "lost")) == want


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "selene.cli", "spans", *args],
        cwd=cwd,
        env=env or subprocess_env(cwd, SELENE_PREFECT="off"),
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("point", ["failpoint:spans:shards-written", "kill_once:spans:find"])
def test_resumes_after_a_kill(tmp_path: Path, point: str) -> None:
    docs = planted_corpus("sentence", n_docs=80, seed=11)
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=20)
    ref = run_spans(inp, str(tmp_path / "ref"), SpansConfig(unit="sentence", **SMALL))
    args = ["-i", inp, "-o", str(tmp_path / "out"), "--unit", "sentence", "--min-span-chars", "20",
            "--min-doc-words", "12", "--min-sentences", "2"]  # fmt: skip
    kind, _, name = point.partition(":")
    env = subprocess_env(tmp_path, SELENE_PREFECT="off")
    if kind == "failpoint":
        env[FAILPOINT_ENV] = name
    else:
        env[KILL_ONCE_ENV] = f"{name}:{tmp_path / 'killed'}"
    killed = cli(*args, cwd=tmp_path, env=env, check=False)
    assert killed.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), killed.stdout + killed.stderr
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert any((tmp_path / "out" / "_work").rglob("*.json")), "the killed run should have left finished steps"
    cli(*args, cwd=tmp_path)
    assert outputs(str(tmp_path / "out")) == outputs(ref.out)
    assert not (tmp_path / "out" / "_work").exists()


def test_resumed_under_another_budget(tmp_path: Path) -> None:
    """A run stopped in its find step under a budget of many partitions, resumed under one of a single
    partition: the finished partitions of the other cut are not taken as this one's."""
    docs = planted_corpus("sentence", n_docs=80, seed=12)
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=20)
    cfg = SpansConfig(unit="sentence", **SMALL)
    ref = run_spans(inp, str(tmp_path / "ref"), cfg)

    def stop_halfway(name: str, fn: Callable[..., Any], args: Sequence[tuple]) -> list[Any]:
        if name == "spans-find":
            assert len(args) > 2
            [fn(*a) for a in args[: len(args) // 2]]
            raise KeyboardInterrupt
        return [fn(*a) for a in args]

    with pytest.raises(KeyboardInterrupt):
        run_spans(inp, str(tmp_path / "out"), cfg, mapper=as_mapper(stop_halfway, Budget(memory=20_000)))
    assert any((tmp_path / "out" / "_work").rglob("find-*/*.json"))
    run_spans(inp, str(tmp_path / "out"), cfg)
    assert outputs(str(tmp_path / "out")) == outputs(ref.out)


def test_against_cuts_what_the_curated_output_holds(tmp_path: Path) -> None:
    docs = planted_corpus("sentence", n_docs=160, seed=5)
    old_docs, new_docs = docs[:80], [(f"new{i}", t) for i, (_, t) in enumerate(docs[80:])]
    new_docs.append(("copy", old_docs[10][1]))  # a copy of an old document
    cfg = SpansConfig(unit="sentence", **SMALL)
    old = run_spans(write_dataset(str(tmp_path / "old_in"), old_docs), str(tmp_path / "old"), cfg)
    before = outputs(old.out)
    inp = write_dataset(str(tmp_path / "new_in"), new_docs, shard_docs=30)
    res = run_spans(inp, str(tmp_path / "new"), cfg.model_copy(update={"against": [old.out]}))
    assert outputs(old.out) == before, "the earlier output must not change"
    # the reference: the curated output's documents first (never cut again: they were cut already),
    # then the new crawl
    old_kept, _ = result_of(old.out)
    kept, removed = reference([*old_kept.items(), *new_docs], cfg)
    assert all(kept[d] == t for d, t in old_kept.items())
    got_kept, got_removed = result_of(res.out)
    assert got_kept == {d: t for d, t in kept.items() if d not in old_kept}
    assert got_removed == removed
    assert "copy" in got_removed or got_kept["copy"] != old_docs[10][1]
    m = res.manifest
    assert m is not None and m.spans.in_earlier > 0 and m.inputs.against is not None
    # only_against: spans repeated within the new crawl alone stay
    only = run_spans(
        inp, str(tmp_path / "only"), cfg.model_copy(update={"against": [old.out], "only_against": True})
    )
    assert only.manifest is not None
    assert only.manifest.spans.duplicate_spans == only.manifest.spans.in_earlier < m.spans.duplicate_spans


def test_against_refuses_a_mismatched_or_damaged_output(tmp_path: Path) -> None:
    docs = planted_corpus("sentence", n_docs=40, seed=2)
    inp = write_dataset(str(tmp_path / "in"), docs)
    cfg = SpansConfig(unit="sentence", **SMALL)
    old = run_spans(inp, str(tmp_path / "old"), cfg)
    new_in = write_dataset(str(tmp_path / "new_in"), docs[:10])
    out = tmp_path / "new"

    def refused(exc: type[Exception], match: str, **update: object) -> None:
        with pytest.raises(exc, match=match):
            run_spans(new_in, str(out), cfg.model_copy(update={"against": [old.out], **update}))
        assert not out.exists(), "a refused run leaves nothing behind"

    refused(ConfigError, r"other settings: span=3 \(this run: 2\)", span=2)
    refused(ConfigError, "unit='sentence'", unit="line")
    index = Path(old.out) / "spans-index" / "index.json"
    saved = index.read_text()
    index.write_text(saved[: len(saved) // 2])
    refused(PathError, "corrupt span index")
    index.unlink()
    refused(PathError, "holds no span index")
    index.write_text(saved)
    (Path(old.out) / "spans-index" / "p00000.npy").write_bytes(b"garbage")
    refused(PathError, r"span index files missing or damaged: spans-index/p00000\.npy")
    manifest = Path(old.out) / "manifest.json"
    manifest.write_text("{not json")
    refused(PathError, "corrupt manifest")
    manifest.unlink()
    refused(PathError, "not a finished output")
    refused(PathError, "must not be this run's input", against=[new_in])


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="span"):
        SpansConfig(unit="sentence", span=0)
    with pytest.raises(ValueError, match="unit"):
        SpansConfig(unit="word")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_span_chars"):
        SpansConfig(unit="line", min_span_chars=-1)
    with pytest.raises(ValueError, match="only_against needs `against`"):
        SpansConfig(unit="line", only_against=True)
    inp = write_dataset(str(tmp_path / "in"), [("a", "One. Two. Three.")])
    with pytest.raises(UsageError, match="no unit: give --unit sentence, paragraph or line"):
        run_spans(inp, str(tmp_path / "out"), SpansConfig())
    assert not (tmp_path / "out").exists()


def test_command_line_from_another_directory(tmp_path: Path) -> None:
    docs = planted_corpus("line", n_docs=40, seed=4)
    write_dataset(str(tmp_path / "data" / "in"), docs)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = cli(
        "-i", "../data/in", "-o", "../data/out", "--unit", "line", "--min-span-chars", "10", cwd=elsewhere
    )
    assert "most repeated 3-line spans" in proc.stdout
    m = json.loads((tmp_path / "data" / "out" / "manifest.json").read_text())
    assert m["stage"] == "spans" and m["spans"]["unit"] == "line" and m["config"]["min_span_chars"] == 10
    assert (tmp_path / "data" / "out" / "repeats.md").exists()
    bad = cli("-i", "../data/in", "-o", "../data/out2", cwd=elsewhere, check=False)
    assert bad.returncode == 2 and "no unit" in bad.stderr and bad.stderr.count("\n") == 1
    bad = cli(
        "-i", "../data/in", "-o", "../data/out2", "--unit", "line", "--span", "0", cwd=elsewhere, check=False
    )
    assert bad.returncode == 2 and "span: got 0" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "data" / "out2").exists()
