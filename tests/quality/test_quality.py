"""The quality stage: a classifier trained by `selene quality train` on two kinds of text, then
applied by each rule; every document ends in the output or in removed.parquet, the decisions are the
same for any worker count, and bad settings fail before any work."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from selene.errors import ConfigError, InputError, SeleneError, UsageError
from selene.executor.mappers import LocalMapper
from selene.io import dataset
from selene.quality import fasttext
from selene.quality.config import ClassifierSpec, QualityConfig
from selene.quality.cutoffs import exact_cutoff
from selene.quality.decide import pareto_draw
from selene.quality.manifest import QualityManifest
from selene.quality.stage import run_quality
from selene.quality.train import auc, train_classifier
from tests.corpus import write_dataset

GOOD = ["The function returns a new list sorted in ascending order", "The algorithm is stable, so items that compare equal keep their relative order", "A key function may be given to customise the comparison", "Iterators produce their values lazily, one at a time, which keeps memory flat for long sequences", "Exceptions carry a message and a traceback that names the line where they were raised."]
BAD = ["BUY NOW cheap pills best price click here", "Limited offer win a free prize today only", "Hot singles in your area click the link", "Unbelievable discount deal of the day subscribe now", "Casino bonus free spins register today"]


def text(kind: list[str], rng: random.Random, n: int = 6) -> str:
    return ". ".join(rng.choice(kind) for _ in range(n)) + "."


def docs(n: int, seed: int, good_share: float = 0.5) -> list[tuple[str, str, bool]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        good = rng.random() < good_share
        out.append((f"d{seed}-{i:04d}", text(GOOD if good else BAD, rng, rng.randint(3, 9)), good))
    return out


def write_web(directory: Path, rows: list[tuple[str, str, bool]], shard_docs: int = 40, web: bool = True) -> str:
    """A finished dataset; web documents carry a url in meta (the stage judges those by default)."""
    path = write_dataset(str(directory), [(i, t) for i, t, _ in rows], shard_docs=shard_docs, source="cc")
    if web:  # rewrite meta with a url, keeping the manifest consistent (write_dataset writes "{}")
        import pyarrow as pa

        shards = []
        for name in dataset.list_shards(path):
            table = pq.read_table(name)
            table = table.set_column(3, "meta", pa.array([json.dumps({"url": f"http://x/{i}"}) for i in table.column("id").to_pylist()]))
            shards.append(dataset.write_table(name, table))
        from tests.corpus import document_manifest

        m = document_manifest(shards, dataset.write_table(f"{path}/{dataset.REMOVED}", dataset.REMOVED_SCHEMA.empty_table()), {"cc": len(rows)})
        dataset.write_manifest(path, m)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("clf")
    good = [{"id": f"g{i}", "text": text(GOOD, random.Random(i), 6)} for i in range(300)]
    bad = [{"id": f"b{i}", "text": text(BAD, random.Random(10_000 + i), 6)} for i in range(300)]
    (root / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    (root / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bad))
    report = train_classifier([f"docs={root / 'good.jsonl'}"], [f"spam={root / 'bad.jsonl'}"], str(root / "clf"),
                              settings=fasttext.Settings(dim=8, bucket=4096, epoch=5), fixed={"epoch", "lr", "word_ngrams"}, seed=7).report  # fmt: skip
    assert report.heldout.auc > 0.95
    return str(root / "clf" / "model.bin")


def read_out(out: str) -> tuple[list[dict], list[dict]]:
    kept = [d for d in dataset.iter_documents(out)]
    removed = dataset.read_removed(out).to_pylist()
    return kept, removed


def test_threshold_keeps_the_good_and_accounts_for_every_document(tmp_path: Path, model: str) -> None:
    rows = docs(200, 1)
    inp = write_web(tmp_path / "in", rows)
    cfg = QualityConfig(classifiers=[ClassifierSpec(name="hq", model=model, label="hq")], threshold=0.5)
    res = run_quality(inp, str(tmp_path / "out"), cfg)
    kept, removed = read_out(res.out)
    assert len(kept) + len(removed) == len(rows)
    truth = {i: good for i, _, good in rows}
    assert sum(truth[d["id"]] for d in kept) / len(kept) > 0.95 and sum(not truth[r["id"]] for r in removed) / len(removed) > 0.95
    assert all(json.loads(d["meta"])["quality.hq"] >= 0.5 for d in kept)
    assert {r["reason"] for r in removed} == {"quality:hq"} and all("< cutoff 0.5000" in r["detail"] for r in removed)
    m = res.manifest
    assert isinstance(m, QualityManifest) and m.stats.documents_removed == len(removed)
    assert m.judged["cc"].judged == 200 and m.classifiers["hq"].cutoff == 0.5
    assert sum(m.classifiers["hq"].histogram["cc"]) == 200


def test_output_is_the_same_for_any_worker_count(tmp_path: Path, model: str) -> None:
    inp = write_web(tmp_path / "in", docs(150, 2), shard_docs=25)
    cfg = QualityConfig(classifiers=[ClassifierSpec(name="hq", model=model, label="hq")], rule="top_fraction", fraction=0.3)
    one = run_quality(inp, str(tmp_path / "one"), cfg)
    mapper = LocalMapper("processes", 2)
    try:
        two = run_quality(inp, str(tmp_path / "two"), cfg, mapper=mapper)
    finally:
        mapper.close()
    assert one.manifest is not None and two.manifest is not None
    assert [s.sha256 for s in one.manifest.shards] == [s.sha256 for s in two.manifest.shards]
    assert one.manifest.removed.sha256 == two.manifest.removed.sha256


def test_top_fraction_is_the_token_weighted_percentile_over_the_corpus(tmp_path: Path, model: str) -> None:
    rows = docs(180, 3)
    inp = write_web(tmp_path / "in", rows, shard_docs=30)
    clf = fasttext.Classifier.load(model, "hq")
    scores = clf.score([t for _, t, _ in rows])
    tokens = [len(t.split()) for _, t, _ in rows]
    cfg = QualityConfig(classifiers=[ClassifierSpec(name="hq", model=model, label="hq")], rule="top_fraction", fraction=0.25)
    res = run_quality(inp, str(tmp_path / "out"), cfg)
    want = exact_cutoff(list(zip(scores.tolist(), tokens, strict=True)), 0, 0.25, sum(tokens))
    assert res.manifest is not None and res.manifest.classifiers["hq"].cutoff == pytest.approx(want, abs=1e-9)
    kept, _ = read_out(res.out)
    kept_ids = {d["id"] for d in kept}
    assert kept_ids == {i for (i, _, _), s in zip(rows, scores, strict=True) if s >= want}
    kept_tokens = sum(n for (i, _, _), n in zip(rows, tokens, strict=True) if i in kept_ids)
    assert kept_tokens >= 0.25 * sum(tokens)


def test_pareto_decisions_follow_the_document_not_the_shard(tmp_path: Path, model: str) -> None:
    rows = docs(120, 4)
    cfg = QualityConfig(classifiers=[ClassifierSpec(name="hq", model=model, label="hq")], rule="pareto", alpha=3.0)
    a = run_quality(write_web(tmp_path / "a", rows, shard_docs=120), str(tmp_path / "oa"), cfg)
    b = run_quality(write_web(tmp_path / "b", rows, shard_docs=17), str(tmp_path / "ob"), cfg)
    assert {d["id"] for d in read_out(a.out)[0]} == {d["id"] for d in read_out(b.out)[0]}
    draws = pareto_draw([f"x{i}" for i in range(20_000)], 1, "hq", 3.0)
    assert np.median(draws) == pytest.approx(2 ** (1 / 3) - 1, rel=0.05)  # Lomax(3)'s median


def test_unjudged_documents_pass_and_classifiers_combine(tmp_path: Path, model: str) -> None:
    rows = docs(60, 5)
    inp = write_web(tmp_path / "in", rows, web=False)  # no url: not web, not judged by default
    two = [ClassifierSpec(name="a", model=model, label="hq"), ClassifierSpec(name="b", model=model, label="__label__hq")]
    # nothing would be judged (no url, no sources): refused rather than keeping everything unjudged
    with pytest.raises(ConfigError, match=r"no document of .* would be judged"):
        run_quality(inp, str(tmp_path / "o1"), QualityConfig(classifiers=two))
    assert not (tmp_path / "o1").exists()
    for combine in ("mean", "max_bucket"):
        cfg = QualityConfig(classifiers=two, combine=combine, sources=["cc"], threshold=0.5)
        out = run_quality(inp, str(tmp_path / f"o-{combine}"), cfg)
        kept, removed = read_out(out.out)
        assert len(kept) + len(removed) == 60 and {r["reason"] for r in removed} <= {f"quality:{combine}"}
        assert out.manifest is not None and out.manifest.cutoff == 0.5


def test_bad_classifiers_fail_before_any_work(tmp_path: Path, model: str) -> None:
    inp = write_web(tmp_path / "in", docs(10, 6))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a model at all" * 10)
    cases = [
        (ClassifierSpec(name="x", model=model, label="nope"), r"model\.bin: the model has no label 'nope'; its labels are: .*hq"),
        (ClassifierSpec(name="x", model=str(junk), label="hq"), r"junk\.bin"),
        (ClassifierSpec(name="x", model=str(tmp_path / "missing.bin"), label="hq"), r"missing\.bin"),
    ]
    for spec, pattern in cases:
        with pytest.raises(SeleneError, match=pattern):
            run_quality(inp, str(tmp_path / "out"), QualityConfig(classifiers=[spec]))
        assert not (tmp_path / "out" / "part-00000.parquet").exists()
    with pytest.raises(ValueError):
        QualityConfig(classifiers=[spec], fraction=1.5)
    with pytest.raises(ValueError):
        QualityConfig(classifiers=[spec], alpha=0)
    with pytest.raises(ValueError, match="unique"):
        QualityConfig(classifiers=[cases[0][0], cases[0][0]])


def test_training_needs_both_classes(tmp_path: Path) -> None:
    (tmp_path / "good.jsonl").write_text(json.dumps({"text": "some text here"}) + "\n")
    (tmp_path / "empty.jsonl").write_text("")
    good = f"g={tmp_path / 'good.jsonl'}"
    with pytest.raises(UsageError, match=r"--negative e=.*empty\.jsonl is empty"):
        train_classifier([good], [f"e={tmp_path / 'empty.jsonl'}"], str(tmp_path / "o"))
    with pytest.raises(UsageError, match="matches no file"):
        train_classifier([good], [f"e={tmp_path / 'nothing*.jsonl'}"], str(tmp_path / "o"))
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(UsageError, match=r"bad\.jsonl: its first line is not a JSON object"):
        train_classifier([good], [f"b={tmp_path / 'bad.jsonl'}"], str(tmp_path / "o"))
    (tmp_path / "later.jsonl").write_text(json.dumps({"text": "fine"}) + "\n{not json\n")
    with pytest.raises(InputError, match=r"later\.jsonl line 2 is not JSON"):
        train_classifier([good], [f"b={tmp_path / 'later.jsonl'}"], str(tmp_path / "o"))
    with pytest.raises(ConfigError, match="differ"):
        train_classifier([good], [f"b={tmp_path / 'later.jsonl'}"], str(tmp_path / "o"), positive_label="x", negative_label="x")
    assert not (tmp_path / "o").exists()  # refused: nothing left behind


def test_auc_is_the_rank_statistic() -> None:
    assert auc(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == 1.0
    assert auc(np.array([0.1]), np.array([0.9])) == 0.0
    assert auc(np.array([0.5, 0.5]), np.array([0.5])) == 0.5


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_commands_train_a_classifier_and_apply_it(tmp_path: Path) -> None:
    """`selene quality train` then `selene quality`, as a user runs them (fresh processes)."""
    import os
    import subprocess
    import sys

    good = [{"id": f"g{i}", "text": text(GOOD, random.Random(i), 6)} for i in range(200)]
    bad = [{"id": f"b{i}", "text": text(BAD, random.Random(10_000 + i), 6)} for i in range(200)]
    (tmp_path / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bad))
    inp = write_web(tmp_path / "in", docs(80, 9))
    env = {**os.environ, "SELENE_PREFECT": "off"}

    def selene(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "selene.cli", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    trained = selene("quality", "train", "-p", "docs=good.jsonl", "-n", "spam=bad.jsonl", "-o", "clf", "--dim", "8", "--bucket", "4096")
    assert trained.returncode == 0, trained.stderr
    assert "AUC" in trained.stdout and json.loads((tmp_path / "clf" / "report.json").read_text())["heldout"]["auc"] > 0.95
    applied = selene("quality", "-i", inp, "-o", "out", "--classifier", "hq=clf/model.bin:hq", "--workers", "2")
    assert applied.returncode == 0, applied.stderr
    kept, removed = read_out(str(tmp_path / "out"))
    assert len(kept) + len(removed) == 80 and removed
    wrong = selene("quality", "-i", inp, "-o", "out2", "--classifier", "hq=clf/model.bin:best")
    assert wrong.returncode == 2 and "no label 'best'" in wrong.stderr and "Traceback" not in wrong.stderr
    assert "selene quality train" in " ".join(selene("quality", "--help").stdout.replace("│", " ").split())


def test_the_stage_runs_between_ingest_and_dedup_when_configured(tmp_path: Path) -> None:
    from selene import pipeline
    from selene.config.pipeline import load_pipeline_config

    path = tmp_path / "p.yaml"
    path.write_text("run_dir: r\n")
    assert "quality" not in pipeline.active_stages(load_pipeline_config(path))
    path.write_text("run_dir: r\nquality: {classifiers: [{name: hq, model: m.bin, label: hq}], rule: pareto, alpha: 3}\n")
    cfg = load_pipeline_config(path)
    assert pipeline.active_stages(cfg)[:3] == ["ingest", "quality", "dedup"]
    assert pipeline.job(cfg, "dedup").inp == "r/quality" and pipeline.job(cfg, "quality").inp == "r/ingest"
    assert "m.bin" in pipeline.inputs(cfg)


@pytest.mark.parametrize("point", ["quality:scored", "quality:shards-written"])
def test_a_killed_run_resumes_to_the_same_output(tmp_path: Path, model: str, point: str) -> None:
    """SIGKILL of the whole command at a fail point, then the same command: the output of one clean run."""
    import os
    import signal
    import subprocess
    import sys

    inp = write_web(tmp_path / "in", docs(120, 8), shard_docs=20)
    args = [sys.executable, "-m", "selene.cli", "quality", "-i", inp, "-o", str(tmp_path / "out"),
            "--classifier", f"hq={model}:hq", "--rule", "top_fraction", "--fraction", "0.4", "--workers", "2"]  # fmt: skip
    env = {**os.environ, "SELENE_PREFECT": "off"}
    killed = subprocess.run(args, env={**env, "SELENE_FAILPOINT": point}, capture_output=True, text=True,
                            timeout=300, start_new_session=True)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL and not (tmp_path / "out" / "manifest.json").exists()
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    clean = run_quality(inp, str(tmp_path / "clean"), QualityConfig(
        classifiers=[ClassifierSpec(name="hq", model=model, label="hq")], rule="top_fraction", fraction=0.4))
    resumed = dataset.read_manifest(str(tmp_path / "out"))
    assert resumed is not None and clean.manifest is not None
    assert [s.sha256 for s in resumed.shards] == [s.sha256 for s in clean.manifest.shards]
    assert resumed.removed is not None and resumed.removed.sha256 == clean.manifest.removed.sha256


def test_a_judged_source_the_input_lacks_is_an_error(tmp_path: Path, model: str) -> None:
    inp = write_web(tmp_path / "in", docs(10, 11))
    cfg = QualityConfig(classifiers=[ClassifierSpec(name="hq", model=model, label="hq")], sources=["cc", "wiki"])
    with pytest.raises(ConfigError, match=r"quality.sources: wiki not in .*its sources: cc"):
        run_quality(inp, str(tmp_path / "out"), cfg)
    assert not (tmp_path / "out" / "part-00000.parquet").exists()


def test_train_refuses_an_output_in_use_unless_told_to_replace_a_classifier(tmp_path: Path) -> None:
    """A second `selene quality train -o DIR` must not replace a model silently, nor write a model
    into a folder of other data; --overwrite replaces an earlier classifier and only that."""
    import os
    import subprocess
    import sys

    good = [{"id": f"g{i}", "text": text(GOOD, random.Random(i), 6)} for i in range(60)]
    bad = [{"id": f"b{i}", "text": text(BAD, random.Random(10_000 + i), 6)} for i in range(60)]
    (tmp_path / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bad))
    env = {**os.environ, "SELENE_PREFECT": "off"}
    fixed = ("-p", "docs=good.jsonl", "-n", "spam=bad.jsonl", "--dim", "8", "--bucket", "4096",
             "--epoch", "5", "--lr", "0.5", "--word-ngrams", "1")  # fmt: skip

    def train(out: str, *more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "selene.cli", "quality", "train", *fixed, "-o", out, *more],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip

    assert train("clf").returncode == 0
    model = (tmp_path / "clf" / "model.bin").read_bytes()
    again = train("clf", "--seed", "7")
    assert again.returncode == 2 and "--overwrite" in again.stderr and "Traceback" not in again.stderr
    assert (tmp_path / "clf" / "model.bin").read_bytes() == model
    replaced = train("clf", "--seed", "7", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert sorted(p.name for p in (tmp_path / "clf").iterdir()) == ["model.bin", "report.json"]
    assert json.loads((tmp_path / "clf" / "report.json").read_text())["settings"]["seed"] == 7
    tiny = train("small", "--quantize", "0")  # too few rows for fastText's quantizer: said, not a traceback
    assert tiny.returncode == 1 and "--quantize 0: fastText could not quantize" in tiny.stderr
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "part-00000.parquet").write_bytes(b"x")
    mixed = train("data", "--overwrite")
    assert mixed.returncode == 2 and "part-00000.parquet" in mixed.stderr
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["part-00000.parquet"]
