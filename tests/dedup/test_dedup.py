"""The dedup stage end to end: quality against brute-force Jaccard, determinism, executors, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from selene.dedup.config import DedupConfig
from selene.dedup.stage import run_dedup
from selene.errors import ConfigError, PathError, UsageError
from selene.executor.mappers import Budget, SerialMapper
from selene.io import dataset, fs
from tests.corpus import write_dataset
from tests.dedup_corpus import (
    pairs_at_least,
    planted_corpus,
    real_documents,
    removal_quality,
    stage_shingles,
)
from tests.mapping import as_mapper

THRESHOLD = 0.8


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    corpus = planted_corpus(n_base=60, seed=3)
    root = tmp_path_factory.mktemp("planted")
    inp = write_dataset(str(root / "in"), corpus.docs, shard_docs=150)
    return corpus, inp, root


@pytest.fixture(scope="module")
def deduped(planted):  # type: ignore[no-untyped-def]
    _, inp, root = planted
    return run_dedup(inp, str(root / "out"), DedupConfig(threshold=THRESHOLD))


def clusters_of(out: str) -> dict[str, str]:
    """Document id → id of the document its cluster kept (kept documents map to themselves)."""
    kept = {d["id"]: d["id"] for d in dataset.iter_documents(out)}
    for r in dataset.read_removed(out).to_pylist():
        assert r["reason"].startswith("dup_of:") and "cluster=" in r["detail"]
        kept[r["id"]] = r["reason"][len("dup_of:") :]
    return kept


def test_recall_and_precision_against_exact_jaccard(planted, deduped) -> None:  # type: ignore[no-untyped-def]
    corpus, _, _ = planted
    ids = [d[0] for d in corpus.docs]
    cluster = clusters_of(deduped.out)
    truth = pairs_at_least(corpus.docs, THRESHOLD - 0.1)
    must = [(i, j) for (i, j), jac in truth.items() if jac >= THRESHOLD]
    assert len(must) >= 100, "the planted corpus should hold enough near-duplicate pairs"
    found = sum(cluster[ids[i]] == cluster[ids[j]] for i, j in must)
    assert found / len(must) >= 0.99  # 1.0 here with two band sets
    flagged = [
        (r["id"], r["reason"][len("dup_of:") :]) for r in dataset.read_removed(deduped.out).to_pylist()
    ]
    pos = {d: i for i, d in enumerate(ids)}
    good = sum(tuple(sorted((pos[a], pos[b]))) in truth for a, b in flagged)
    # links may be looser than the threshold (verify_margin), but every removed document is checked
    # against its kept one at the threshold (exactly where the estimate is near it): 1.0 here
    assert flagged and good / len(flagged) >= 0.99
    strict = pairs_at_least(corpus.docs, THRESHOLD)
    assert all(  # removed at the threshold, not below it
        strict.get((min(pos[a], pos[b]), max(pos[a], pos[b])), 0.0) >= THRESHOLD for a, b in flagged
    )


def test_accounting_and_manifest(planted, deduped) -> None:  # type: ignore[no-untyped-def]
    corpus, _, _ = planted
    m = deduped.manifest
    st = m.stats
    assert st.documents_in == len(corpus.docs) == st.documents_out + st.documents_removed
    assert st.clusters.duplicates == st.documents_removed > 0
    assert sum(int(k) * v for k, v in st.clusters.cluster_sizes.items()) == st.clusters.documents_in_clusters
    lsh = m.lsh
    assert lsh.bands * lsh.rows <= 128 and len(lsh.s_curve) == 101
    assert lsh.band_sets == 2 and lsh.p_at_threshold > 0.99  # 17 × 7 alone: 0.98
    assert fs.exists(fs.join(deduped.out, "s_curve.svg"))
    assert "kept" in fs.read_text(fs.join(deduped.out, "clusters.md"))
    kept_ids = [d["id"] for d in dataset.iter_documents(deduped.out)]
    assert kept_ids == sorted(kept_ids, key=[d[0] for d in corpus.docs].index)  # corpus order kept


def test_keep_longest(tmp_path: Path) -> None:
    base = " ".join(f"word{i} common text about the python language reference" for i in range(40))
    docs = [("a", base), ("b", base + " and a longer tail of words"), ("c", base + " tail")]
    inp = write_dataset(str(tmp_path / "in"), docs)
    res = run_dedup(inp, str(tmp_path / "out"), DedupConfig(keep="longest", threshold=0.7))
    assert [d["id"] for d in dataset.iter_documents(res.out)] == ["b"]
    first = run_dedup(inp, str(tmp_path / "out2"), DedupConfig(keep="first", threshold=0.7))
    assert [d["id"] for d in dataset.iter_documents(first.out)] == ["a"]


BASE = " ".join(f"word{i} common text about the python language reference" for i in range(40))


def test_keep_priority_keeps_the_copy_from_the_most_trusted_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [
        ("cc-1", BASE + " crawl", "CommonCrawl", "{}"),
        ("books-1", BASE + " book", "Books3", "{}"),
        ("wiki-1", BASE + " wiki", "Wikipedia", "{}"),
        ("wiki-2", BASE + " wiki again", "Wikipedia", "{}"),
        ("other", " ".join(f"unrelated{i} words" for i in range(200)), "CommonCrawl", "{}"),
    ]
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=2)
    cfg = DedupConfig(keep="priority", priority=["Wikipedia", "Books3"], threshold=0.7)
    res = run_dedup(inp, str(tmp_path / "out"), cfg)
    assert [d["id"] for d in dataset.iter_documents(res.out)] == ["wiki-1", "other"]  # ties: corpus order
    assert clusters_of(res.out)["cc-1"] == "wiki-1"
    md = fs.read_text(fs.join(res.out, "clusters.md"))
    assert "the copy from the source earliest in `priority` is kept" in md
    assert "kept `wiki-1` (source Wikipedia, priority 1 of 2)" in md
    assert "source CommonCrawl, not in priority" in md and "source Books3, priority 2 of 2" in md
    assert res.manifest.config["keep"] == "priority" and res.manifest.config["priority"] == [
        "Wikipedia",
        "Books3",
    ]
    assert capsys.readouterr().err == ""
    # An unlisted source ranks after every listed one: with Books3 alone listed, Books3 stays.
    books = run_dedup(
        inp, str(tmp_path / "books"), DedupConfig(keep="priority", priority=["Books3"], threshold=0.7)
    )
    assert [d["id"] for d in dataset.iter_documents(books.out)] == ["books-1", "other"]

    typo = DedupConfig(keep="priority", priority=["Wikipedia", "Bookz"], threshold=0.7)
    run_dedup(inp, str(tmp_path / "typo"), typo)
    err = capsys.readouterr().err
    assert "warning: dedup.priority names 'Bookz', not a source of the input" in err
    assert "its sources: Books3, CommonCrawl, Wikipedia" in err
    with pytest.raises(ConfigError, match="names 'Bookz'"):
        run_dedup(inp, str(tmp_path / "strict"), typo.model_copy(update={"strict": True}))
    assert not fs.exists(str(tmp_path / "strict"))


def test_keep_score_keeps_the_best_scored_copy(tmp_path: Path) -> None:
    docs = [
        ("a", BASE + " one", "web", json.dumps({"quality.hq": 0.2})),
        ("b", BASE + " two", "web", json.dumps({"quality.hq": 0.9})),
        ("c", BASE + " three", "web", "{}"),  # no score: last
        ("d", BASE + " four", "web", json.dumps({"quality.hq": "high"})),  # not a number: last
    ]
    inp = write_dataset(str(tmp_path / "in"), docs)
    res = run_dedup(
        inp, str(tmp_path / "out"), DedupConfig(keep="score", score_key="quality.hq", threshold=0.7)
    )
    assert [d["id"] for d in dataset.iter_documents(res.out)] == ["b"]
    assert "kept `b` (quality.hq=0.9)" in fs.read_text(fs.join(res.out, "clusters.md"))
    nested = [
        (i, t, s, json.dumps({"scores": {"q": n}}))
        for (i, t, s, _), n in zip(docs, [3, 1, 2, 5], strict=True)
    ]
    inp2 = write_dataset(str(tmp_path / "in2"), nested)
    res2 = run_dedup(
        inp2, str(tmp_path / "out2"), DedupConfig(keep="score", score_key="scores.q", threshold=0.7)
    )
    assert [d["id"] for d in dataset.iter_documents(res2.out)] == ["d"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"keep": "priority"}, "keep: priority needs `priority`"),
        ({"keep": "score"}, "keep: score needs `score_key`"),
        ({"priority": ["A"]}, "`priority` is only used with keep: priority"),
        ({"keep": "priority", "priority": ["A", "B", "A"]}, "names a source more than once: A"),
    ],
)
def test_keep_rule_settings_are_checked(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DedupConfig.model_validate(settings)


def test_rerun_skips_and_parameters_are_not_reused(planted, deduped) -> None:  # type: ignore[no-untyped-def]
    _, inp, _ = planted
    assert run_dedup(inp, deduped.out, DedupConfig(threshold=THRESHOLD)).skipped
    other = run_dedup(inp, deduped.out, DedupConfig(threshold=0.5))
    assert (
        not other.skipped
        and other.manifest.stats.documents_removed > deduped.manifest.stats.documents_removed
    )
    run_dedup(inp, deduped.out, DedupConfig(threshold=THRESHOLD))


def test_exact_verification_and_char_shingles(planted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, inp, _ = planted
    exact = run_dedup(inp, str(tmp_path / "exact"), DedupConfig(threshold=THRESHOLD, verify="exact"))
    assert exact.manifest.stats.documents_removed > 0
    chars = run_dedup(inp, str(tmp_path / "chars"), DedupConfig(threshold=THRESHOLD, shingle="char", ngram=8))
    assert chars.manifest.stats.documents_removed > 0


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):  # a wrong path is bad usage: exit 2
        run_dedup(str(tmp_path / "missing"), str(tmp_path / "o"), DedupConfig())
    (tmp_path / "unfinished").mkdir()
    with pytest.raises(PathError, match="did not finish"):
        run_dedup(str(tmp_path / "unfinished"), str(tmp_path / "o"), DedupConfig())
    empty = write_dataset(str(tmp_path / "empty"), [])
    with pytest.raises(PathError, match="empty"):
        run_dedup(empty, str(tmp_path / "o"), DedupConfig())


def test_workers_and_dask_give_identical_bytes(planted, deduped, tmp_path: Path, prefect_api: str) -> None:  # type: ignore[no-untyped-def]
    """Two process workers and a Dask cluster, each with and without Prefect: the bytes of one worker."""
    from selene.config import ExecutorConfig
    from selene.flows.stage import run_flow
    from selene.job import Job, run_direct

    _, inp, _ = planted
    want = ([s.sha256 for s in deduped.manifest.shards], deduped.manifest.removed.sha256)
    cfg = DedupConfig(threshold=THRESHOLD)
    for kind in ("processes", "dask"):
        for name, run in (("prefect", run_flow), ("direct", run_direct)):
            job = Job(
                "dedup", inp, str(tmp_path / f"{kind}-{name}"), cfg, ExecutorConfig(kind=kind, workers=2)
            )  # type: ignore[arg-type]
            m = run(job, False).manifest
            assert ([s.sha256 for s in m.shards], m.removed.sha256) == want, (kind, name)


@pytest.mark.parametrize("step", ["dedup-band", "dedup-large-star", "dedup-clusters"])
def test_resume_after_a_kill_gives_identical_output(
    planted, deduped, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:  # type: ignore[no-untyped-def]
    from selene.dedup import signatures

    _, inp, _ = planted
    cfg = DedupConfig(threshold=THRESHOLD)

    @as_mapper
    def dying_map(name, fn, args):  # type: ignore[no-untyped-def]
        if name == step:  # "killed" after the signatures, before the step finished
            raise KeyboardInterrupt
        return [fn(*a) for a in args]

    out = str(tmp_path / "out")
    with pytest.raises(KeyboardInterrupt):
        run_dedup(inp, out, cfg, mapper=dying_map)
    assert dataset.read_manifest(out) is None
    shingled: list[int] = []
    original = signatures.minhash.signatures_flat  # (exact checks hash shingles too, and are redone)
    monkeypatch.setattr(signatures.minhash, "signatures_flat", lambda *a: shingled.append(1) or original(*a))
    res = run_dedup(inp, out, cfg)
    assert shingled == []  # the signatures of the killed run were reused, not recomputed
    assert [s.sha256 for s in res.manifest.shards] == [s.sha256 for s in deduped.manifest.shards]
    assert res.manifest.removed.sha256 == deduped.manifest.removed.sha256


def test_union_find_matches_a_reference_on_random_graphs() -> None:
    from selene.dedup.components import union

    rng = np.random.default_rng(5)
    for n, m in ((1, 0), (10, 3), (200, 150), (2000, 1900), (500, 3000)):
        a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        ref = list(range(n))

        def find(x: int, ref: list[int] = ref) -> int:
            while ref[x] != x:
                x = ref[x]
            return x

        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            rx, ry = find(x), find(y)
            ref[max(rx, ry)] = min(rx, ry)
        want = np.array([find(x) for x in range(n)])
        parent = np.arange(n)
        for lo in range(0, m, 97):  # in batches, as edge files come: the result ignores grouping
            union(parent, a[lo : lo + 97], b[lo : lo + 97])
        assert np.array_equal(parent, want)


def test_a_small_memory_budget_splits_bands_without_changing_the_output(
    planted, deduped, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from selene.dedup import bands, components

    _, inp, _ = planted
    n_docs = sum(s.rows for s in dataset.read_manifest(inp).shards)  # type: ignore[union-attr]
    small = SerialMapper(Budget.gb(n_docs * bands.BAND_BYTES_PER_DOC / 3 / 2**30, 1))  # a third of one band
    parts: list[int] = []
    parts_for = components.parts_for

    def recorded(pairs: int, budget: Budget) -> int:
        parts.append(parts_for(pairs, budget))
        return parts[-1]

    # the graph's steps split as well: ~12.5 K verified pairs in a handful of parts
    monkeypatch.setattr(components, "MIN_PAIRS_PER_PART", 2048)
    monkeypatch.setattr(components, "parts_for", recorded)
    assert bands.partitions_for(n_docs, small.budget) >= 3
    res = run_dedup(inp, str(tmp_path / "out"), DedupConfig(threshold=THRESHOLD), mapper=small)
    assert parts and parts[0] >= 3, parts
    assert [s.sha256 for s in res.manifest.shards] == [s.sha256 for s in deduped.manifest.shards]
    assert res.manifest.removed.sha256 == deduped.manifest.removed.sha256


REAL_MIN_DOCS = 300  # real text of this machine (Debian licences and changelogs, man pages, pydoc)


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    docs = real_documents(per_source=150)
    if len(docs) < REAL_MIN_DOCS:
        pytest.skip(f"only {len(docs)} real documents on this machine (need {REAL_MIN_DOCS})")
    root = tmp_path_factory.mktemp("real")
    return docs, write_dataset(str(root / "in"), docs, shard_docs=200), root


@pytest.mark.parametrize(("threshold", "keep"), [(0.8, "first"), (0.8, "longest"), (0.7, "first")])
def test_real_text_removes_at_the_users_threshold(real, threshold: float, keep: str) -> None:  # type: ignore[no-untyped-def]
    """On real text (licences pasted with small changes, templates), links under the threshold can
    chain into removals far below it (down to J 0.54 when links alone decide). Each removed
    document must be within the threshold of the copy kept for it, to the estimator's noise."""
    docs, inp, root = real
    cfg = DedupConfig(threshold=threshold, keep=keep)  # type: ignore[arg-type]
    res = run_dedup(inp, str(root / f"out-{threshold}-{keep}"), cfg)
    pos = {d: i for i, (d, _) in enumerate(docs)}
    removed = {
        pos[r["id"]]: pos[r["reason"][len("dup_of:") :]] for r in dataset.read_removed(res.out).to_pylist()
    }
    sets = stage_shingles([t for _, t in docs])
    q = removal_quality(sets, removed, threshold, cfg.num_perm)
    assert q["pairs"] >= 50, q  # enough near-duplicates to judge
    assert q["recall"] >= 0.98 and q["precision"] >= 0.98, q
    assert q["below_noise"] == 0, q  # none under threshold - 3σ of the estimate
    assert res.manifest is not None
    sim = res.manifest.stats.clusters.removed_similarity
    assert sim is not None and sim.count == len(removed) and sim.below_threshold == 0
    assert sim.min is not None and sim.min >= threshold and sum(sim.histogram.values()) == len(removed)
    for r in dataset.read_removed(res.out).to_pylist():
        assert float(r["detail"].rsplit("j=", 1)[1]) >= threshold


def test_the_threshold_is_applied_to_the_kept_copy(tmp_path: Path) -> None:
    """A chain a ~ b ~ c with J(a, b), J(b, c) >= t but J(a, c) < t: linked into one component by a
    loose margin, but c is not removed for a; it is kept (or removed for another kept document)."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in rng.permutation(4000)]
    a = words[:400]
    b = a[:]
    for i in range(0, 400, 40):
        b[i] = f"x{i}"  # ~10 edits: J(a, b) ~ 0.78
    c = b[:]
    for i in range(20, 400, 40):
        c[i] = f"y{i}"  # J(b, c) ~ 0.78, J(a, c) ~ 0.6
    docs = [("a", " ".join(a)), ("b", " ".join(b)), ("c", " ".join(c))]
    inp = write_dataset(str(tmp_path / "in"), docs)
    cfg = DedupConfig(threshold=0.7, verify_margin=0.3)  # links everything
    res = run_dedup(inp, str(tmp_path / "out"), cfg)
    sets = stage_shingles([t for _, t in docs])
    removed = {r["id"]: r["reason"] for r in dataset.read_removed(res.out).to_pylist()}
    assert removed == {"b": "dup_of:a"}, removed
    q = removal_quality(sets, {1: 0}, 0.7)
    assert q["precision"] == 1.0
    assert res.manifest is not None
    st = res.manifest.stats.clusters
    assert st.documents_linked == 3 and st.kept_by_check == 1 and st.duplicates == 1


# ------------------------------------------------------------------------ incremental: --against


def family(f: int, tail: str) -> str:
    """A document of near-duplicate family `f` (J ≈ 0.9 between two tails of a few words)."""
    return " ".join(f"fam{f} word{i} shared text of this family" for i in range(30)) + " " + tail


def tree_digest(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("crawls")
    old = [
        ("old-0", family(0, "first copy"), "CC-2023", "{}"),
        ("old-1", family(0, "second copy"), "CC-2023", "{}"),  # removed in the old run
        ("old-2", family(1, "only copy"), "CC-2023", "{}"),
        ("old-3", family(2, "only copy"), "CC-2023", "{}"),
    ]
    new = [
        ("new-0", family(3, "brand new"), "CC-2024", "{}"),
        ("new-1", family(1, "recrawled"), "CC-2024", "{}"),  # a copy of a kept old document
        ("new-2", family(4, "one"), "CC-2024", "{}"),
        ("new-3", family(4, "two"), "CC-2024", "{}"),  # a copy of another new document
        ("new-4", family(0, "third copy"), "CC-2024", "{}"),
    ]
    later = [
        ("later-0", family(4, "three"), "CC-2025", "{}"),
        ("later-1", family(5, "fresh"), "CC-2025", "{}"),
    ]
    paths = {
        "old_in": write_dataset(str(root / "old_in"), old, shard_docs=2),
        "new_in": write_dataset(str(root / "new_in"), new, shard_docs=2),
        "later_in": write_dataset(str(root / "later_in"), later),
        "root": str(root),
    }
    paths["old"] = run_dedup(paths["old_in"], str(root / "old"), DedupConfig(threshold=THRESHOLD)).out
    return paths


def test_against_removes_copies_of_earlier_outputs_and_never_changes_them(crawls: dict[str, str]) -> None:
    old = Path(crawls["old"])
    before = tree_digest(old)
    assert [d["id"] for d in dataset.iter_documents(str(old))] == ["old-0", "old-2", "old-3"]
    inc = run_dedup(
        crawls["new_in"], crawls["root"] + "/new", DedupConfig(threshold=THRESHOLD, against=[str(old)])
    )
    assert tree_digest(old) == before
    assert [d["id"] for d in dataset.iter_documents(inc.out)] == ["new-0", "new-2"]
    removed = {r["id"]: (r["reason"], r["detail"]) for r in dataset.read_removed(inc.out).to_pylist()}
    assert removed["new-1"][0] == "dup_of:old-2" and removed["new-1"][1].endswith(f"against={old}")
    assert removed["new-3"][0] == "dup_of:new-2" and "against" not in removed["new-3"][1]
    assert removed["new-4"][0] == "dup_of:old-0"
    m = inc.manifest
    assert m.stats.documents_in == 5 and m.stats.documents_removed == 3
    assert [a.dataset for a in m.inputs.against or []] == [str(old)]
    assert run_dedup(crawls["new_in"], inc.out, DedupConfig(threshold=THRESHOLD, against=[str(old)])).skipped

    # The same decisions as one full dedup with the old documents first (keep: priority).
    both = [
        *[(d["id"], d["text"], "old", "{}") for d in dataset.iter_documents(str(old))],
        *[(d["id"], d["text"], "new", "{}") for d in dataset.iter_documents(crawls["new_in"])],
    ]
    full_in = write_dataset(crawls["root"] + "/full_in", both, shard_docs=3)
    full = run_dedup(
        full_in,
        crawls["root"] + "/full",
        DedupConfig(threshold=THRESHOLD, keep="priority", priority=["old", "new"]),
    )
    assert {d["id"] for d in dataset.iter_documents(full.out)} == {
        "old-0",
        "old-2",
        "old-3",
        "new-0",
        "new-2",
    }

    # A chain: a later crawl against both earlier outputs.
    later = run_dedup(
        crawls["later_in"],
        crawls["root"] + "/later",
        DedupConfig(threshold=THRESHOLD, against=[str(old), inc.out]),
    )
    assert [d["id"] for d in dataset.iter_documents(later.out)] == ["later-1"]
    assert dataset.read_removed(later.out).to_pylist()[0]["reason"] == "dup_of:new-2"


def test_against_refuses_what_it_cannot_use(crawls: dict[str, str]) -> None:
    root, old = crawls["root"], crawls["old"]

    def error(against: list[str], **settings: object) -> str:
        with pytest.raises((ConfigError, PathError)) as e:
            run_dedup(
                crawls["new_in"], root + "/x", DedupConfig(threshold=THRESHOLD, against=against, **settings)
            )  # type: ignore[arg-type]
        assert e.value.exit_code == 2  # the path or the settings given: refused, not a failure while working
        assert not Path(root, "x").exists()  # refused before any work
        return str(e.value)

    assert "the output of `ingest`, not of `dedup`" in error([crawls["old_in"]])
    Path(root, "unfinished").mkdir()
    assert "not a finished output" in error([root + "/unfinished"])
    assert "no such directory" in error([root + "/nowhere"])
    msg = error([old], num_perm=64)
    assert "other MinHash settings: num_perm=128 (this run: 64)" in msg and "bands=" in msg
    assert "this run's input or output" in error([crawls["new_in"]])
    bare = run_dedup(
        crawls["later_in"], root + "/bare", DedupConfig(threshold=THRESHOLD, store_signatures=False)
    )
    assert "holds no stored signatures" in error([bare.out])
    copy = Path(root, "tampered")
    shutil.copytree(old, copy)
    shard = copy / "part-00000.parquet"
    shard.write_bytes(Path(crawls["later_in"], "part-00000.parquet").read_bytes())
    assert "missing or changed since it was written: part-00000.parquet" in error([str(copy)])
    index = copy / "minhash" / "minhash.json"
    data = json.loads(index.read_text())
    data["shards"][0] = "0" * 64
    index.write_text(json.dumps(data))
    assert "its shards changed since their signatures were stored" in error([str(copy)])
    older = Path(root, "older-format")
    shutil.copytree(old, older)
    index = older / "minhash" / "minhash.json"
    index.write_text(json.dumps({**json.loads(index.read_text()), "format": 1}))
    assert "stored signatures of format 1; this selene reads formats 2, 3" in error([str(older)])
    unreadable = json.loads(index.read_text())
    del unreadable["settings"]["seed"]
    index.write_text(json.dumps({**unreadable, "format": 3}))
    assert "corrupt signature index (settings.seed: Field required)" in error([str(older)])
    gap = Path(root, "no-key-index")
    shutil.copytree(old, gap)
    (gap / "minhash" / "keys" / "b0003-p00000.npy").unlink()
    assert "missing or changed since it was written: minhash/keys/b0003-p00000.npy" in error([str(gap)])


@pytest.mark.parametrize("grouped", [False, True])
def test_a_band_task_reads_only_its_own_keys(
    planted, deduped, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grouped: bool
) -> None:  # type: ignore[no-untyped-def]
    """Each band task loads its band's and key partition's key files, one per group of shards (a
    signature task's), and signatures to verify with, never another band's keys; the output does not
    depend on how keys are split in key ranges nor on how shards are grouped. Without `grouped`, a
    budget of a third of a band: several key ranges, and one shard a group (a group's keys must fit)."""
    from selene.dedup import bands, signatures

    _, inp, _ = planted
    n_docs = sum(s.rows for s in dataset.read_manifest(inp).shards)  # type: ignore[union-attr]
    loaded: list[str] = []
    load = fs.load_npy
    monkeypatch.setattr(fs, "load_npy", lambda p, mmap=False: loaded.append(p) or load(p, mmap))
    tasks: list[tuple[int, int, list[str]]] = []
    groups: list[int] = []

    def looking(name, fn, args):  # type: ignore[no-untyped-def]
        out = []
        for a in args:
            loaded.clear()
            out.append(fn(*a))
            if name == "dedup-band":
                tasks.append((a[1], a[2], list(loaded)))
            if name == "dedup-signatures":
                groups.append(a[1])
        return out

    budget = Budget()
    if grouped:  # two shards a signature task, every band in one key range
        monkeypatch.setattr(signatures, "MAX_GROUP", 2)
        monkeypatch.setattr(signatures, "GROUPS_PER_WORKER", 1)
    else:
        budget = Budget.gb(n_docs * bands.BAND_BYTES_PER_DOC / 3 / 2**30, 1)
    mapper = as_mapper(looking, budget)
    res = run_dedup(inp, str(tmp_path / "out"), DedupConfig(threshold=THRESHOLD), mapper=mapper)
    n_shards = len(res.manifest.shards)
    group = 2 if grouped else 1
    assert n_shards >= 3 and len(groups) == -(-n_shards // group)
    assert len({p for _, p, _ in tasks}) == 1 if grouped else len({p for _, p, _ in tasks}) >= 3
    for band, part, paths in tasks:
        keys = [p for p in paths if "/keys-" in p]
        assert len(keys) == len(groups), keys
        assert all(f"-g{group}/b{band:04d}-p{part:05d}/" in p for p in keys), keys
        assert all("/keys-" in p or "/sig/" in p for p in paths), paths
    assert [s.sha256 for s in res.manifest.shards] == [s.sha256 for s in deduped.manifest.shards]
    assert res.manifest.removed.sha256 == deduped.manifest.removed.sha256
    if grouped:  # every file, stored signatures, key index and links too: the same bytes as one shard a task
        monkeypatch.setattr(signatures, "MAX_GROUP", 1)
        ref = run_dedup(inp, str(tmp_path / "ref"), DedupConfig(threshold=THRESHOLD)).out

        def tree(root: str) -> dict[str, bytes]:
            files = (p for p in Path(root).rglob("*") if p.is_file() and p.name != "manifest.json")
            return {str(p.relative_to(root)): p.read_bytes() for p in files}

        assert tree(res.out) == tree(ref) and len(tree(ref)) > 2 * n_shards


def test_against_an_output_whose_key_index_is_split_otherwise(crawls: dict[str, str], tmp_path: Path) -> None:
    """An earlier output made under a small memory budget (its key index in several key ranges) gives
    the same decisions as one made in one range."""
    tiny = SerialMapper(Budget.gb(1e-8, 1))  # every band in as many key ranges as the budget asks
    split = run_dedup(crawls["old_in"], str(tmp_path / "old-split"), DedupConfig(threshold=THRESHOLD), mapper=tiny)
    index = json.loads(Path(split.out, "minhash", "minhash.json").read_text())
    assert index["key_partitions"] > 1
    runs = [
        run_dedup(crawls["new_in"], str(tmp_path / name), DedupConfig(threshold=THRESHOLD, against=[old]))
        for name, old in (("vs-split", split.out), ("vs-one", crawls["old"]))
    ]
    kept = [[d["id"] for d in dataset.iter_documents(r.out)] for r in runs]
    removed = [[(r["id"], r["reason"]) for r in dataset.read_removed(r.out).to_pylist()] for r in runs]
    assert kept[0] == kept[1] == ["new-0", "new-2"] and removed[0] == removed[1]


def test_a_chain_of_crawls_joins_as_one_run_over_all_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2023 holds x; 2024 holds y, linked to x (a verified pair under the threshold: both kept); 2025
    holds z, a copy of x that no band joins to x, linked to y. One run over all three (old first) puts
    x, y, z in one component and removes z for x. A run of 2025 against both earlier outputs does the
    same only if 2024's output kept its link to x (`minhash/cross`); without it, z stays."""
    from selene.dedup import lsh, minhash, shingle

    rng = np.random.default_rng(7)
    x = [f"w{i}" for i in rng.permutation(5000)[:400]]
    y, z = x[:], x[:]
    for i in (20, 120, 220, 320):  # edits y and z share
        y[i] = z[i] = f"c{i}"
    for i in (70, 170, 270):  # z's own: J(x, z) = 0.84
        z[i] = f"z{i}"
    for i in range(40, 400, 40):  # y's own: J(x, y) = 0.76, J(y, z) = 0.74
        y[i] = f"y{i}"
    texts = [" ".join(w) for w in (x, y, z)]
    # two bands of one value: y can share one with x and the other with z while x and z share none
    # (a shingle of x and y that z lacks, one of y and z that x lacks); linked down to 0.5
    settings = dict(threshold=0.8, num_perm=32, bands=2, rows=1, band_sets=1, verify_margin=0.3)

    def shared(seed: int) -> list[bool]:
        """Whether (x, y), (y, z), (x, z) share a band key under MinHash seed `seed`."""
        values, counts = shingle.batch_hashes(texts, 5, "word")
        sig = minhash.signatures_flat(values, counts, minhash.Permutations.from_seed(32, seed))
        key = lsh.band_keys(sig, 2, 1)
        return [bool((key[a] == key[b]).any()) for a, b in ((0, 1), (1, 2), (0, 2))]

    seed = next(s for s in range(5000) if shared(s) == [True, True, False])
    cfg = DedupConfig(seed=seed, **settings)  # type: ignore[arg-type]
    crawl = {
        year: write_dataset(str(tmp_path / f"in-{year}"), [(f"{name}", text, f"CC-{year}", "{}")])
        for year, name, text in ((2023, "x", texts[0]), (2024, "y", texts[1]), (2025, "z", texts[2]))
    }
    out23 = run_dedup(crawl[2023], str(tmp_path / "2023"), cfg).out
    out24 = run_dedup(crawl[2024], str(tmp_path / "2024"), cfg.model_copy(update={"against": [out23]}))
    assert [d["id"] for d in dataset.iter_documents(out24.out)] == ["y"]  # J(x, y) < 0.8: kept
    index = json.loads(Path(out24.out, "minhash", "minhash.json").read_text())
    assert index["against"] == [{"dataset": out23, "fingerprint": dataset.read_manifest(out23).fingerprint}]  # type: ignore[union-attr]
    cross = np.concatenate([np.load(f) for f in sorted(Path(out24.out, "minhash", "cross").glob("*.npy"))])
    assert [(int(c["prior"]), int(c["a"]), int(c["b"])) for c in cross] == [(0, 0, 0)]  # y -> x

    later = run_dedup(
        crawl[2025], str(tmp_path / "2025"), cfg.model_copy(update={"against": [out23, out24.out]})
    )
    removed = dataset.read_removed(later.out).to_pylist()
    assert [(r["id"], r["reason"]) for r in removed] == [("z", "dup_of:x")]
    assert removed[0]["detail"].endswith(f"against={out23}")

    full_in = write_dataset(
        str(tmp_path / "all"),
        [(n, t, s, "{}") for n, t, s in zip("xyz", texts, ["a", "b", "c"], strict=True)],
    )
    full = run_dedup(
        full_in,
        str(tmp_path / "full"),
        cfg.model_copy(update={"keep": "priority", "priority": ["a", "b", "c"]}),
    )
    assert [(r["id"], r["reason"]) for r in dataset.read_removed(full.out).to_pylist()] == [("z", "dup_of:x")]

    # Without 2023 in the chain, 2024's link to it is of no use: said, and z (a copy of x only) stays.
    capsys.readouterr()
    alone = run_dedup(crawl[2025], str(tmp_path / "alone"), cfg.model_copy(update={"against": [out24.out]}))
    assert [d["id"] for d in dataset.iter_documents(alone.out)] == ["z"]
    warned = " ".join(capsys.readouterr().err.split())
    assert f"it was deduplicated against {out23}, which this run is not" in warned

    # An incremental output of the format before cross links: read, with what it lacks said.
    older = tmp_path / "2024-format-2"
    shutil.copytree(out24.out, older)
    index_path = older / "minhash" / "minhash.json"
    index_path.write_text(json.dumps({**index, "format": 2, "against": []}))
    shutil.rmtree(older / "minhash" / "cross")
    old_run = run_dedup(
        crawl[2025], str(tmp_path / "vs-format-2"), cfg.model_copy(update={"against": [out23, str(older)]})
    )
    assert [d["id"] for d in dataset.iter_documents(old_run.out)] == ["z"]
    assert "by an older selene that kept no links to their documents" in " ".join(
        capsys.readouterr().err.split()
    )
