"""The ingest stage end to end, without Prefect: accounting, exact dedup, resume, bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from selene.errors import OutputError, UsageError
from selene.executor.mappers import Budget
from selene.ingest import stage
from selene.ingest.config import IngestConfig, SourceSpec
from selene.io import dataset, fs
from tests.corpus import PROSE, html_page, pile_line, warc_bytes, wet_bytes, write_zst
from tests.mapping import as_mapper

GERMAN = (
    "Die Sprache ist ein System von Zeichen, das der Verständigung dient. Sie wird von Menschen "
    "gesprochen und geschrieben, und sie verändert sich mit der Zeit. In den Schulen lernen die Kinder "
    "lesen und schreiben, und viele von ihnen lernen auch eine zweite Sprache. "
) * 4


def build_corpus(root: Path) -> tuple[list[SourceSpec], dict[str, int]]:
    """A small mixed corpus; returns the sources and the number of input records per file."""
    (root / "pile").mkdir(parents=True)
    (root / "web").mkdir()
    a = [pile_line(PROSE[i], "Books3") for i in range(6)]
    a += [pile_line(PROSE[0], "Books3")]  # exact copy within the file
    a += [pile_line(GERMAN, "Books3")]
    a += [b"{not json\n", b'{"meta": {"pile_set_name": "Books3"}}\n']
    write_zst(root / "pile" / "00.jsonl.zst", b"".join(a))
    b = [pile_line(PROSE[i], "ArXiv") for i in range(6, 12)]
    b += [pile_line(PROSE[1].upper().replace(".", " !"), "ArXiv")]  # same normalised text as PROSE[1]
    b += [pile_line("too short", "ArXiv")]
    write_zst(root / "pile" / "01.jsonl.zst", b"".join(b))
    pages = [(f"https://e.org/{i}", "text/html", html_page(f"T{i}", PROSE[12 + i]).encode()) for i in range(4)]
    pages.append(("https://e.org/x.pdf", "application/pdf", b"%PDF-1.4 ..."))
    data, _ = warc_bytes(pages)
    (root / "web" / "a.warc.gz").write_bytes(data)
    (root / "web" / "b.warc.wet.gz").write_bytes(wet_bytes([("https://w.org/1", PROSE[20]), ("https://w.org/2", PROSE[2])]))
    specs = [
        SourceSpec(name="pile", glob=str(root / "pile" / "*.jsonl.zst")),
        SourceSpec(name="cc", glob=str(root / "web" / "*.warc.gz")),
        SourceSpec(name="wet", glob=str(root / "web" / "*.wet.gz")),
    ]
    return specs, {"00": 10, "01": 8, "a": 5, "b": 2}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[SourceSpec]]:
    root = tmp_path_factory.mktemp("corpus")
    specs, _ = build_corpus(root)
    return root, specs


def cfg_for(specs: list[SourceSpec], **kw: object) -> IngestConfig:
    return IngestConfig(sources=specs, shard_docs=5, row_group_docs=3, **kw)


@pytest.fixture(scope="module")
def result(corpus: tuple[Path, list[SourceSpec]], tmp_path_factory: pytest.TempPathFactory) -> stage.IngestResult:
    out = str(tmp_path_factory.mktemp("out") / "ingest")
    return stage.run_ingest(out, cfg_for(corpus[1]))


def all_ids(out: str) -> tuple[list[str], list[dict]]:
    kept = [d["id"] for d in dataset.iter_documents(out)]
    removed = dataset.read_removed(out).to_pylist()
    return kept, removed


def test_every_record_is_accounted_for(result: stage.IngestResult) -> None:
    m = result.manifest
    kept, removed = all_ids(result.out)
    assert m.stats.documents_in == 25 == len(kept) + len(removed)
    ids = kept + [r["id"] for r in removed]
    assert len(set(ids)) == len(ids) == 25
    assert {i.rsplit("#", 1)[0] for i in ids} == {"pile/00.jsonl.zst", "pile/01.jsonl.zst", "cc/a.warc.gz", "wet/b.warc.wet.gz"}
    for src, st in m.stats.per_source.items():
        assert st.documents_in == st.kept + sum(st.removed.values()), src
    by_reason = Counter(
        (r["source"], "exact_dup" if r["reason"].startswith("exact_dup_of:") else r["reason"]) for r in removed
    )
    expected = Counter({(s, r): n for s, st in m.stats.per_source.items() for r, n in st.removed.items()})
    assert by_reason == expected


def test_reasons_and_sources(result: stage.IngestResult) -> None:
    _, removed = all_ids(result.out)
    reasons = {r["id"]: (r["source"], r["reason"]) for r in removed}
    assert reasons["pile/00.jsonl.zst#7"] == ("Books3", "exact_dup_of:pile/00.jsonl.zst#1")
    assert reasons["pile/00.jsonl.zst#8"] == ("Books3", "lang:de")
    assert reasons["pile/00.jsonl.zst#9"] == ("pile", "malformed:json")  # no pile_set_name to read
    assert reasons["pile/00.jsonl.zst#10"][1] == "malformed:no_text"
    assert reasons["pile/01.jsonl.zst#7"] == ("ArXiv", "exact_dup_of:pile/00.jsonl.zst#2")  # across files
    assert reasons["pile/01.jsonl.zst#8"][1].startswith("filter:")
    assert reasons["cc/a.warc.gz#5"] == ("cc", "skip:content_type")
    assert reasons["wet/b.warc.wet.gz#2"] == ("wet", "exact_dup_of:pile/00.jsonl.zst#3")
    detail = next(r["detail"] for r in removed if r["id"] == "pile/00.jsonl.zst#9")
    assert "00.jsonl.zst: line 9" in detail


def test_removed_web_pages_carry_their_url_and_warc_record_id(result: stage.IngestResult) -> None:
    """A dropped page can be found again: removed.parquet has its URL and WARC record id."""
    _, removed = all_ids(result.out)
    web = [r for r in removed if r["id"].startswith(("cc/", "wet/"))]
    assert web and all(r["meta"] for r in web)
    for r in web:
        meta = json.loads(r["meta"])
        assert meta["url"].startswith("https://") and meta["warc_record_id"].startswith("<urn:uuid:")
    pdf = json.loads(next(r["meta"] for r in web if r["id"] == "cc/a.warc.gz#5"))  # not HTML
    assert pdf["url"] == "https://e.org/x.pdf"
    dup = json.loads(next(r["meta"] for r in web if r["id"] == "wet/b.warc.wet.gz#2"))  # exact duplicate
    assert dup["url"] == "https://w.org/2"
    pile = next(r for r in removed if r["id"] == "pile/00.jsonl.zst#8")  # jsonl: its own meta
    assert json.loads(pile["meta"])["pile_set_name"] == "Books3"


def test_output_shards_follow_the_contract(result: stage.IngestResult) -> None:
    m = result.manifest
    shards = dataset.list_shards(result.out)
    assert [s.rsplit("/", 1)[-1] for s in shards] == [f"part-{i:05d}.parquet" for i in range(len(shards))]
    assert all(s.rows == 5 for s in m.shards[:-1])
    for s, info in zip(shards, m.shards, strict=True):
        assert dataset.open_parquet(s).schema_arrow == dataset.DOC_SCHEMA
        assert fs.sha256_file(s) == info.sha256
    docs = list(dataset.iter_documents(result.out))
    assert [d["id"] for d in docs][:3] == ["pile/00.jsonl.zst#1", "pile/00.jsonl.zst#2", "pile/00.jsonl.zst#3"]
    web = next(d for d in docs if d["source"] == "cc")
    meta = json.loads(web["meta"])
    assert meta["url"].startswith("https://e.org/") and meta["lang"] == "en"
    assert not fs.exists(fs.join(result.out, dataset.WORK))


def test_rerun_is_skipped_and_config_change_is_not(result: stage.IngestResult, corpus: tuple[Path, list[SourceSpec]]) -> None:
    again = stage.run_ingest(result.out, cfg_for(corpus[1]))
    assert again.skipped
    changed = cfg_for(corpus[1])
    changed.langid.enabled = False
    redo = stage.run_ingest(result.out, changed)
    assert not redo.skipped
    assert "lang:de" not in {r["reason"] for r in dataset.read_removed(result.out).to_pylist()}
    stage.run_ingest(result.out, cfg_for(corpus[1]))  # back to the module's result for other tests


def test_resume_after_a_kill_gives_identical_output(corpus: tuple[Path, list[SourceSpec]], result: stage.IngestResult, tmp_path: Path) -> None:
    cfg = cfg_for(corpus[1])
    out = str(tmp_path / "resumed")
    inputs = stage.plan_inputs(cfg.sources)
    work = stage.Work(out, stage.fingerprint(inputs, cfg))
    stage.process_file(inputs[1], cfg, work.root)  # one file finished before the "kill"
    (tmp_path / "resumed" / "part-00000.parquet.tmp-deadbeef").write_bytes(b"half a file")
    (tmp_path / "resumed" / "part-00009.parquet").write_bytes(b"stale shard of an older run")
    calls: list[str] = []

    @as_mapper
    def counting_map(name, fn, args):  # type: ignore[no-untyped-def]
        calls.extend(name for _ in args)
        return [fn(*a) for a in args]

    res = stage.run_ingest(out, cfg, mapper=counting_map)
    assert sorted(fs.ls(out)) == sorted(fs.join(out, n) for n in ["manifest.json", "removed.parquet", *[s.name for s in res.manifest.shards]])
    assert [s.sha256 for s in res.manifest.shards] == [s.sha256 for s in result.manifest.shards]
    assert res.manifest.removed.sha256 == result.manifest.removed.sha256


def test_source_override_uses_the_given_name(corpus: tuple[Path, list[SourceSpec]], tmp_path: Path) -> None:
    root = corpus[0]
    spec = SourceSpec.parse(f"mine={root / 'pile' / '01.jsonl.zst'}", source_override=True)
    res = stage.run_ingest(str(tmp_path / "o"), cfg_for([spec]))
    assert set(res.manifest.stats.per_source) == {"mine"}


def test_memory_filesystem_end_to_end(corpus: tuple[Path, list[SourceSpec]]) -> None:
    root = corpus[0]
    fs.atomic_write("memory://in/p/00.jsonl.zst", (root / "pile" / "00.jsonl.zst").read_bytes())
    res = stage.run_ingest("memory://out/ds", cfg_for([SourceSpec(name="p", glob="memory://in/p/*.jsonl.zst")]))
    assert res.manifest.stats.documents_in == 10
    assert dataset.list_shards("memory://out/ds")[0] == "memory://out/ds/part-00000.parquet"


def test_glob_matching_nothing_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--source x=.*nothing-\*\.jsonl: the pattern matches no file"):
        stage.run_ingest(str(tmp_path / "o"), cfg_for([SourceSpec(name="x", glob=str(tmp_path / "nothing-*.jsonl"))]))


def test_unwritable_output(corpus: tuple[Path, list[SourceSpec]], tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a file, not a directory")
    with pytest.raises(OutputError, match="not writable"):
        stage.run_ingest(str(tmp_path / "f" / "out"), cfg_for(corpus[1]))


def test_huge_document_is_filtered_by_length_before_cleaning(tmp_path: Path) -> None:
    text = ("All work and no play makes Jack a dull boy. " * 1_200_000)[: 50 * 2**20]
    write_zst(tmp_path / "huge.jsonl.zst", pile_line(text, "S") + pile_line(PROSE[0], "S"))
    res = stage.run_ingest(str(tmp_path / "o"), cfg_for([SourceSpec(name="x", glob=str(tmp_path / "huge.jsonl.zst"))]))
    removed = dataset.read_removed(res.out).to_pylist()
    assert [r["reason"] for r in removed] == ["filter:length.max_chars"]
    assert res.manifest.stats.documents_out == 1


def test_dedup_normalisation_folds_case_punctuation_and_whitespace() -> None:
    from selene.ingest.exact_dedup import normalise, text_hash

    assert normalise("Hello,  World!\n\tIt's\x1fme_2") == b"hello world it s me_2"
    assert normalise("Ünïcode — stays: ÄÖ") == "ünïcode — stays äö".encode()
    assert text_hash("A b. C") == text_hash("a B c") != text_hash("a b d")


def test_shards_are_cut_by_bytes_in_corpus_order(tmp_path: Path) -> None:
    sizes = {0: [100, 700, 50, 50, 3000, 10], 1: [400, 400, 400], 2: []}
    lengths = {}
    for f, s in sizes.items():
        lengths[f] = str(tmp_path / f"{f}.npy")
        fs.save_npy(lengths[f], np.array(s, dtype=np.int64))
    dups = {0: np.array([2]), 1: np.array([0])}
    plans = stage.plan_shards({f: len(s) for f, s in sizes.items()}, dups, lengths, shard_bytes=1000)
    shards = []
    for p in plans:
        rows = [(f, r) for f, lo, hi in p.segments for r in range(lo, hi) if r not in dups.get(f, ())]
        shards.append(rows)
    # every survivor once, in order; a shard over the limit only when it is a single document
    assert [x for s in shards for x in s] == [(0, 0), (0, 1), (0, 3), (0, 4), (0, 5), (1, 1), (1, 2)]
    assert shards == [[(0, 0), (0, 1), (0, 3)], [(0, 4)], [(0, 5), (1, 1), (1, 2)]]
    capped = stage.plan_shards({f: len(s) for f, s in sizes.items()}, dups, lengths, 10**9, shard_docs=3)
    assert [sum(hi - lo for _, lo, hi in p.segments) for p in capped] == [4, 3, 1]  # spans include dups


def test_exact_dedup_bucket_count_does_not_change_the_output(corpus: tuple[Path, list[SourceSpec]], result: stage.IngestResult, tmp_path: Path) -> None:
    calls: list[str] = []

    def counting(name, fn, args):  # type: ignore[no-untyped-def]
        calls.extend(name for _ in args)
        return [fn(*a) for a in args]

    counting_map = as_mapper(counting, Budget.gb(1e-8, 1))  # a tiny budget: many more buckets than the default 16
    res = stage.run_ingest(str(tmp_path / "many"), cfg_for(corpus[1]), mapper=counting_map)
    assert calls.count("exact-dedup-bucket") > 16
    one = stage.run_ingest(str(tmp_path / "one"), cfg_for(corpus[1], exact_dedup={"buckets": 1}))
    for r in (res, one):
        assert [s.sha256 for s in r.manifest.shards] == [s.sha256 for s in result.manifest.shards]
        assert r.manifest.removed.sha256 == result.manifest.removed.sha256
