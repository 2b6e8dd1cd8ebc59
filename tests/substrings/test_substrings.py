"""`selene substrings`: exactly the brute-force removals (bytes and tokens, one part or many, repeats
across parts), whatever the workers or the budget; accounting, the repeats report, --against, a
killed run resumed, and bad input refused with nothing written."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydivsufsort import divsufsort, kasai, longest_previous_factor

from selene.errors import ConfigError, PathError
from selene.executor.mappers import Budget, LocalMapper, SerialMapper
from selene.io import dataset
from selene.substrings.config import SubstringsConfig
from selene.substrings.stage import run_substrings
from tests.corpus import write_dataset
from tests.substrings.reference import apply_bytes, apply_tokens, expected

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "épsilon",
    "zeta",
    "eta",
    "θeta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "中文",
    "🎉",
]


def corpus(seed: int, n: int = 60) -> list[str]:
    """Random word salad with planted repeats: a few phrases reused across documents, and inside one."""
    rng = random.Random(seed)
    phrases = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 14))) for _ in range(6)]
    texts = []
    for _ in range(n):
        parts = [
            rng.choice(phrases)
            if rng.random() < 0.4
            else " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 15)))
            for _ in range(rng.randint(0, 6))
        ]
        texts.append(" ".join(parts))
    return texts


def run(inp: str, out: Path, memory: int = 1 << 30, mapper: Any = None, **cfg: Any) -> Any:
    settings = {"min_length": 20, "min_chars": 0, **cfg}
    return run_substrings(
        inp, str(out), SubstringsConfig(**settings), mapper=mapper or SerialMapper(Budget(memory=memory))
    )


def texts_of(out: str) -> list[str]:
    return [d["text"] for d in dataset.iter_documents(out)]


def test_longest_previous_factor_is_what_the_stage_reads() -> None:
    """pydivsufsort's LPF[p]: the longest prefix of the suffix at p that starts at an earlier position."""
    rng = random.Random(0)
    for _ in range(200):
        s = bytes(rng.choice(b"ab\xff") for _ in range(rng.randint(1, 40)))
        a = np.frombuffer(bytearray(s), dtype=np.uint8)
        sa = divsufsort(a)
        lpf = longest_previous_factor(a, sa, kasai(a, sa))
        brute = [
            max(
                (next((k for k in range(len(s) - p) if s[q + k] != s[p + k]), len(s) - p) for q in range(p)),
                default=0,
            )
            for p in range(len(s))
        ]
        assert list(lpf) == brute, s


def test_window_starts_inside_a_document_and_at_a_token_start() -> None:
    from selene.substrings.suffix import window_starts

    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 80))
        text = rng.choice(np.array([1, 2, 0x80, 0x81, 0xFF], dtype=np.uint8), n)
        lo, w, width = int(rng.integers(0, n)), int(rng.integers(1, 10)), int(rng.integers(1, 3))
        hi = int(rng.integers(lo, n + 1))
        want = [
            len(text[p : p + w]) == w and 0xFF not in text[p : p + w] and (width == 1 or text[p] >= 0x80)
            for p in range(lo, hi)
        ]
        assert window_starts(text, lo, hi, w, width).tolist() == want


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("memory", [18_000, 80_000, 1 << 30])
def test_bytes_are_cut_exactly_as_the_brute_force_reference(tmp_path: Path, seed: int, memory: int) -> None:
    texts = corpus(seed)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=7)
    r = run(inp, tmp_path / "out", memory)
    assert texts_of(r.out) == expected(texts, 20, lambda t: list(t.encode()), apply_bytes)
    if memory < 1 << 30:  # many parts, repeats across them
        assert r.info["parts"] > 3 and r.info["cross_part"] > 0 and r.info["buckets"] > 1
    assert r.manifest.stats.chars_removed > 0


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("memory", [18_000, 1 << 30])
def test_keep_none_cuts_every_copy_exactly_as_the_reference(tmp_path: Path, seed: int, memory: int) -> None:
    """Lee et al.'s and datatrove's semantics: a repeated window is cut everywhere, its first copy too,
    including a first copy in an earlier part whose repeat only a later part holds."""
    texts = corpus(seed)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=7)
    r = run(inp, tmp_path / "out", memory, keep="none")
    want = expected(texts, 20, lambda t: list(t.encode()), apply_bytes, keep_first=False)
    assert texts_of(r.out) == want
    assert want != expected(texts, 20, lambda t: list(t.encode()), apply_bytes)  # the settings differ here
    if memory < 1 << 30:
        assert r.info["parts"] > 3 and r.info["cross_part"] > 0
    first = run(inp, tmp_path / "first", memory)
    assert r.manifest.stats.chars_removed > first.manifest.stats.chars_removed


def test_keep_none_with_tokens_and_against(tmp_path: Path, bpe: tuple[Any, str]) -> None:
    tok, path = bpe
    old, new = corpus(6, 30), corpus(7, 30)
    a = run(write_dataset(str(tmp_path / "a"), [(f"a{i}", t) for i, t in enumerate(old)]), tmp_path / "a-out",
            min_length=8, unit="tokens", tokenizer=path)  # fmt: skip
    curated = texts_of(a.out)
    inp = write_dataset(str(tmp_path / "b"), [(f"b{i}", t) for i, t in enumerate(new)], shard_docs=8)
    r = run(inp, tmp_path / "b-out", 24_000, min_length=8, unit="tokens", tokenizer=path, keep="none",
            against=[a.out])  # fmt: skip

    def apply(t: str, cut: set[int]) -> str:
        return apply_tokens(t, [s for s, _ in tok.encode(t).offsets], cut)

    want = expected([*curated, *new], 8, lambda t: list(tok.encode(t).ids), apply, len(curated), keep_first=False)
    assert texts_of(r.out) == want
    assert r.info["parts"] > 3


@pytest.fixture(scope="module")
def bpe(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    from tests.tiny_checkpoint import corpus_lines
    from tests.tokenize.test_hf_tokenizer import train_bpe

    tok = train_bpe([*corpus_lines(200), *corpus(9)], 300)
    path = str(tmp_path_factory.mktemp("bpe") / "tokenizer.json")
    tok.save(path)
    return tok, path


@pytest.mark.parametrize("memory", [24_000, 1 << 30])
def test_tokens_are_cut_exactly_as_the_brute_force_reference(
    tmp_path: Path, bpe: tuple[Any, str], memory: int
) -> None:
    tok, path = bpe
    texts = corpus(4)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=9)
    r = run(inp, tmp_path / "out", memory, min_length=8, unit="tokens", tokenizer=path)

    def ids(t: str) -> list[int]:
        return list(tok.encode(t).ids)

    def apply(t: str, cut: set[int]) -> str:
        return apply_tokens(t, [s for s, _ in tok.encode(t).offsets], cut)

    assert texts_of(r.out) == expected(texts, 8, ids, apply)
    assert r.manifest.stats.spans_removed > 0
    if memory < 1 << 30:
        assert r.info["parts"] > 3 and r.info["cross_part"] > 0


def test_tokens_of_a_sentencepiece_model(tmp_path: Path) -> None:
    """sentencepiece's offsets are in bytes of the UTF-8 text: cuts still fall on characters."""
    spm = pytest.importorskip("sentencepiece")
    texts = corpus(11, 40)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus(12, 300)), model_prefix=str(tmp_path / "sp"),
                                   vocab_size=120, model_type="bpe", minloglevel=2, num_threads=1)  # fmt: skip
    model = str(tmp_path / "sp.model")
    sp = spm.SentencePieceProcessor(model_file=model)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=9)
    r = run(inp, tmp_path / "out", 24_000, min_length=8, unit="tokens", tokenizer=model)

    def apply(t: str, cut: set[int]) -> str:
        raw = t.encode()
        starts = [len(raw[: p.begin].decode()) for p in sp.encode(t, return_type="proto").pieces]
        return apply_tokens(t, starts, cut)

    assert texts_of(r.out) == expected(texts, 8, lambda t: list(sp.encode(t)), apply)
    assert r.manifest.stats.spans_removed > 0 and r.info["parts"] > 1


def test_same_bytes_whatever_the_workers_and_the_budget(tmp_path: Path) -> None:
    texts = corpus(5, 80)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=10)
    serial = run(inp, tmp_path / "serial")
    pool = LocalMapper("processes", workers=2, memory_gb=40_000 / (1 << 30))
    try:
        parallel = run(inp, tmp_path / "parallel", mapper=pool)
    finally:
        pool.close()
    tiny = run(inp, tmp_path / "tiny", 18_000)
    assert serial.info["parts"] == 1 and 1 < parallel.info["parts"] < tiny.info["parts"]
    for r in (parallel, tiny):
        assert r.manifest.model_dump() == serial.manifest.model_dump()  # shards' sha256, stats, repeats: all
        assert (Path(r.out) / "repeats.md").read_bytes() == (Path(serial.out) / "repeats.md").read_bytes()
    none = [run(inp, tmp_path / f"none-{m}", m, keep="none").manifest.model_dump() for m in (18_000, 1 << 30)]
    assert none[0] == none[1] and none[0]["stats"] != serial.manifest.model_dump()["stats"]


def test_accounting_drops_and_the_repeats_report(tmp_path: Path) -> None:
    boiler = "Subscribe to our newsletter for the latest updates and offers!"
    docs = [("a", f"First page. {boiler}", "web", "{}"), ("b", f"{boiler} Second page.", "web", "{}"),
            ("c", boiler, "web", "{}"), ("d", f"Nothing repeated here at all {boiler}", "books", "{}")]  # fmt: skip
    inp = write_dataset(str(tmp_path / "in"), docs)
    r = run(inp, tmp_path / "out", min_length=30, min_chars=1)
    out = {d["id"]: d["text"] for d in dataset.iter_documents(r.out)}
    # " Subscribe ..." with its space is in a too: d loses the space with it
    assert out == {"a": f"First page. {boiler}", "b": " Second page.", "d": "Nothing repeated here at all"}
    removed = dataset.read_removed(r.out).to_pylist()
    assert [(x["id"], x["reason"]) for x in removed] == [("c", "substrings:too_short")]
    st = r.manifest.stats
    assert (st.documents_in, st.documents_out, st.documents_removed, st.documents_edited) == (4, 3, 1, 2)
    assert st.per_source["books"].edits == {"documents_edited": 1, "chars_in": len(docs[3][1]),
                                            "chars_removed": len(boiler) + 1, "spans_removed": 1}  # fmt: skip
    assert st.chars_removed == 2 * len(boiler) + 1  # c's cut is not counted: it went whole
    # cut from b, c and (with the space before it) d, kept in a: one repeat, shown as first cut (in b)
    (top,) = r.manifest.repeats
    assert (top.text, top.count, top.chars) == (boiler, 4, len(boiler))
    assert boiler in (Path(r.out) / "repeats.md").read_text()


def test_against_an_earlier_output(tmp_path: Path) -> None:
    old, new = corpus(6, 30), corpus(7, 30)
    a = run(write_dataset(str(tmp_path / "a"), [(f"a{i}", t) for i, t in enumerate(old)]), tmp_path / "a-out")
    curated = texts_of(a.out)
    inp = write_dataset(str(tmp_path / "b"), [(f"b{i}", t) for i, t in enumerate(new)], shard_docs=8)
    before = (Path(a.out) / "part-00000.parquet").read_bytes()
    r = run(inp, tmp_path / "b-out", 18_000, against=[a.out])
    want = expected([*curated, *new], 20, lambda t: list(t.encode()), apply_bytes, start_doc=len(curated))
    assert texts_of(r.out) == want
    assert (Path(a.out) / "part-00000.parquet").read_bytes() == before
    assert r.manifest.inputs.against[0].dataset == a.out
    alone = run(inp, tmp_path / "alone").manifest.stats.chars_removed
    assert r.manifest.stats.chars_removed > alone  # the old corpus's text was cut from the new


def test_bad_input_is_refused_with_nothing_written(tmp_path: Path) -> None:
    texts = corpus(8, 20)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)])
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="min_length: not set"):
        run_substrings(inp, str(out), SubstringsConfig())
    with pytest.raises(ConfigError, match=r"executor\.memory_gb"):
        run(inp, out, memory=100)
    assert not out.exists()
    with pytest.raises(ConfigError, match=r"a document of .* does not fit a part"):
        run(inp, out, memory=2_000)  # parts of 41 bytes: a window fits, a document does not
    assert not out.exists()
    with pytest.raises(ValueError, match="unit: tokens needs `tokenizer`"):
        SubstringsConfig(min_length=50, unit="tokens")
    other = write_dataset(str(tmp_path / "other"), [("x", "text")])
    with pytest.raises(PathError, match="not of `substrings`"):
        run(inp, out, against=[other])
    with pytest.raises(PathError, match="must not be this run's input"):
        run(inp, out, against=[inp])
    good = run(inp, tmp_path / "good").out
    with pytest.raises(ConfigError, match=r"min_length=20 .this run: 30"):
        run(inp, out, against=[good], min_length=30)
    (Path(good) / "part-00000.parquet").write_bytes(b"broken")
    with pytest.raises(PathError, match=r"part-00000\.parquet is missing or changed"):
        run(inp, out, against=[good])
    assert not out.exists()


def test_a_killed_run_resumes_to_the_same_output(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    texts = corpus(10, 40)
    inp = write_dataset(str(tmp_path / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=10)
    args = [sys.executable, "-m", "selene.cli", "substrings", "-i", inp, "-o", str(tmp_path / "out"),
            "--min-length", "20", "--min-chars", "0", "--workers", "2"]  # fmt: skip
    env = {**os.environ, "SELENE_PREFECT": "off"}
    killed = subprocess.run(args, env={**env, "SELENE_FAILPOINT": "substrings:shards-written"}, capture_output=True,
                            text=True, timeout=300, start_new_session=True)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL and not (tmp_path / "out" / "manifest.json").exists()
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    clean = run(inp, tmp_path / "clean").manifest
    resumed = dataset.read_manifest(str(tmp_path / "out"))
    assert resumed is not None and [s.sha256 for s in resumed.shards] == [s.sha256 for s in clean.shards]
    assert texts_of(str(tmp_path / "out")) == expected(texts, 20, lambda t: list(t.encode()), apply_bytes)
    bad = subprocess.run(
        [*args[:6], "-o", str(tmp_path / "o2")], env=env, capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and "min_length" in bad.stderr and not (tmp_path / "o2").exists()


def test_a_cut_range_is_anchored_at_its_smallest_window_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """The anchor that groups cut ranges in repeats.md, against window-by-window hashing, with chunks
    small enough that batches of ranges and the pieces of text inside them are many."""
    from selene.substrings import cuts, suffix

    rng = np.random.default_rng(1)
    for _ in range(100):
        n, w = int(rng.integers(50, 2000)), int(rng.integers(1, 12))
        text = rng.integers(0, 4, n).astype(np.uint8)
        begin, end, at = [], [], 0
        while (at := at + int(rng.integers(0, 40))) + (size := int(rng.integers(w, w + 50))) <= n:
            begin.append(at)
            end.append(at + size)
            at += size
        monkeypatch.setattr(suffix, "CHUNK", int(rng.integers(1, 200)))
        got = cuts.anchors(text, np.array(begin, dtype=np.int64), np.array(end, dtype=np.int64), w)
        want = [
            min(int(suffix.window_hashes(text, p, np.array([p]), w)[0]) for p in range(b, e - w + 1))
            for b, e in zip(begin, end, strict=True)
        ]
        assert got.tolist() == want


def test_one_boilerplate_with_different_neighbours_is_one_repeat(tmp_path: Path) -> None:
    """A notice cut with a different character before it on each page is one row of repeats.md."""
    notice = "This site uses cookies to remember your preferences and to count visits to its pages."
    docs = [(f"d{i}", f"Page {c} heading{c}| {notice} Body text number {i} of the site.") for i, c in enumerate("abcde")]
    r = run(write_dataset(str(tmp_path / "in"), docs), tmp_path / "out", min_length=40)
    assert [(x.count, notice in x.text) for x in r.manifest.repeats] == [(5, True)]
