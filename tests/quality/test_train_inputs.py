"""`selene quality train`'s inputs, search and model: NAME=DATASET takes the source NAME, ingest's
NAME[text_key=...]=GLOB form, the same documents in both classes refused, an empty class named;
settings chosen by validation AUC and recorded; fastText's own file; and the stage refusing a run
that would judge nothing."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import fasttext as fasttext_library
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from selene.errors import ConfigError, UsageError
from selene.quality import fasttext, search
from selene.quality.config import ClassifierSpec, QualityConfig
from selene.quality.stage import run_quality
from selene.quality.train import train_classifier
from tests.corpus import write_dataset
from tests.quality.test_quality import BAD, GOOD, text

FAST = {
    "settings": fasttext.Settings(dim=8, bucket=4001, epoch=5, lr=0.5),
    "fixed": {"epoch", "lr", "word_ngrams"},
}


def rows(kind: list[str], n: int, offset: int, prefix: str) -> list[tuple[str, str]]:
    return [(f"{prefix}{i}", text(kind, random.Random(offset + i), 6)) for i in range(n)]


@pytest.fixture
def mixed(tmp_path: Path) -> str:
    """A dataset of two sources: `docs` (good text) and `spam`."""
    docs = [(i, t, "docs", "{}") for i, t in rows(GOOD, 120, 0, "g")]
    docs += [(i, t, "spam", "{}") for i, t in rows(BAD, 120, 10_000, "b")]
    return write_dataset(str(tmp_path / "mixed"), docs)


def jsonl(path: Path, data: list[tuple[str, str]], key: str = "text") -> str:
    path.write_text("".join(json.dumps({"id": i, key: t}) + "\n" for i, t in data))
    return str(path)


def test_name_selects_the_source_of_a_dataset(tmp_path: Path, mixed: str) -> None:
    report = train_classifier([f"docs={mixed}"], [f"spam={mixed}"], str(tmp_path / "m"), **FAST).report  # type: ignore[arg-type]
    assert report.examples.positive.documents == 120 == report.examples.negative.documents
    assert report.heldout.auc > 0.95  # the whole dataset as both classes gave 0.196
    with pytest.raises(
        ConfigError, match=r"'wiki' is not a source of the dataset .*its sources: docs, spam.*'\*="
    ):
        train_classifier([f"wiki={mixed}"], [f"spam={mixed}"], str(tmp_path / "x"))
    other = jsonl(tmp_path / "other.jsonl", rows(BAD, 60, 20_000, "o"))
    whole = train_classifier([f"*={mixed}"], [f"crawl={other}"], str(tmp_path / "w"), **FAST).report  # type: ignore[arg-type]
    assert (
        whole.examples.positive.documents + whole.examples.shared_dropped == 240
    )  # every source
    assert not (tmp_path / "x").exists()


def test_the_same_documents_in_both_classes_are_refused(tmp_path: Path, mixed: str) -> None:
    good = jsonl(tmp_path / "good.jsonl", rows(GOOD, 80, 0, "g"))
    cases = [
        ([f"a={mixed}"], [f"b={mixed}"], r"'a' is not a source"),
        ([f"docs={mixed}"], [f"docs={mixed}"], r"--positive docs=.* and --negative docs=.* both take .*mixed \(sources: docs and docs\)"),
        ([f"*={mixed}"], [f"spam={mixed}"], r"both take .*mixed \(sources: all and spam\)"),
        ([f"g={good}"], [f"g2={tmp_path}/good.jsonl"], r"--positive g=.* and --negative g2=.* both take .*good\.jsonl"),
    ]  # fmt: skip
    for pos, neg, message in cases:
        with pytest.raises(ConfigError, match=message):
            train_classifier(pos, neg, str(tmp_path / "x"))
    copy = tmp_path / "copy.jsonl"
    copy.write_text(Path(good).read_text())
    with pytest.raises(
        ConfigError, match=r"good\.jsonl.*: every document with text is also in --negative c=.*copy\.jsonl"
    ):
        train_classifier([f"g={good}"], [f"c={copy}"], str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()
    # a few shared documents are left out of both classes, and counted
    some = jsonl(tmp_path / "some.jsonl", rows(BAD, 80, 10_000, "b") + rows(GOOD, 3, 0, "g"))
    report = train_classifier([f"g={good}"], [f"s={some}"], str(tmp_path / "ok"), **FAST).report  # type: ignore[arg-type]
    assert report.examples.shared_dropped == 3 and report.examples.positive.documents == 77


def test_text_key_is_given_as_ingest_takes_it(tmp_path: Path) -> None:
    table = pa.table(
        {"uid": [i for i, _ in rows(GOOD, 80, 0, "g")], "content": [t for _, t in rows(GOOD, 80, 0, "g")]}
    )
    pq.write_table(table, tmp_path / "good.parquet")
    bad = jsonl(tmp_path / "bad.jsonl", rows(BAD, 80, 10_000, "b"), key="body")
    with pytest.raises(
        UsageError,
        match=r"good\.parquet has no column 'text' \(its columns: uid, content\); .*text_key=FIELD",
    ):
        train_classifier([f"g={tmp_path}/good.parquet"], [f"b[text_key=body]={bad}"], str(tmp_path / "x"))
    with pytest.raises(
        UsageError, match=r"bad\.jsonl: its first record has no string field 'text' \(its fields: id, body\)"
    ):
        train_classifier([f"g[text_key=content]={tmp_path}/good.parquet"], [f"b={bad}"], str(tmp_path / "x"))
    with pytest.raises(ConfigError, match=r"--negative 'b\[txt=body\]=.*expected text_key=FIELD"):
        train_classifier(
            [f"g[text_key=content]={tmp_path}/good.parquet"], [f"b[txt=body]={bad}"], str(tmp_path / "x")
        )
    for spec in (
        f"g[text_key=content,id_key=id]={tmp_path}/good.parquet",
        f"g[text_key=body,id_key=uid]={bad}",
    ):
        with pytest.raises(UsageError, match=r"has no (column|field) '(id|uid)' for id_key"):
            train_classifier([spec], [f"b[text_key=body]={bad}"], str(tmp_path / "x"))
    report = train_classifier(
        [f"g[text_key=content,id_key=uid]={tmp_path}/good.parquet"],
        [f"b[text_key=body]={bad}"],
        str(tmp_path / "m"),
        **FAST,  # type: ignore[arg-type]
    ).report
    assert report.examples.positive.documents == 80 and report.heldout.auc > 0.95


def test_an_empty_class_names_its_files(tmp_path: Path) -> None:
    good = jsonl(tmp_path / "good.jsonl", rows(GOOD, 40, 0, "g"))
    blank = jsonl(tmp_path / "blank.jsonl", [("e1", "  "), ("e2", "\n")])
    with pytest.raises(
        ConfigError, match=r"--negative e=.*blank\.jsonl \(.*blank\.jsonl\): no documents with text"
    ):
        train_classifier([f"g={good}"], [f"e={blank}"], str(tmp_path / "x"))
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(UsageError, match=r"--negative e=.*: .*empty\.jsonl is empty"):
        train_classifier([f"g={good}"], [f"e={tmp_path}/empty.jsonl"], str(tmp_path / "x"))
    assert not (tmp_path / "x").exists()


def test_the_search_picks_by_validation_auc_and_the_report_says_so(tmp_path: Path) -> None:
    # overlapping vocabularies: the two kinds share most sentences, so settings matter
    good = jsonl(
        tmp_path / "good.jsonl", [(f"g{i}", text(GOOD + BAD[:3], random.Random(i), 4)) for i in range(150)]
    )
    bad = jsonl(
        tmp_path / "bad.jsonl",
        [(f"b{i}", text(BAD + GOOD[:3], random.Random(9_000 + i), 4)) for i in range(150)],
    )
    report = train_classifier(
        [f"g={good}"],
        [f"b={bad}"],
        str(tmp_path / "m"),
        settings=fasttext.Settings(dim=8, bucket=4001),
        fixed={"dim", "bucket"},
    ).report
    found = report.search
    assert len(found.trials) == len(search.grid(fasttext.Settings(), (), 1)) == 18 and found.folds == 3
    best = min(found.trials, key=lambda t: (-t.auc, t.log_loss))
    chosen = found.chosen.model_dump()
    assert chosen == {k: getattr(best, k) for k in ("epoch", "lr", "word_ngrams")}
    assert {k: getattr(report.settings, k) for k in ("epoch", "lr", "word_ngrams")} == chosen
    assert report.settings.thread == 1 and report.settings.seed == 1234
    info = fasttext.read_info(str(tmp_path / "m" / "model.bin"))
    assert (info.epoch, info.word_ngrams) == (found.chosen.epoch, found.chosen.word_ngrams)
    # fixed settings are not searched
    assert len(search.grid(fasttext.Settings(), {"epoch", "lr"}, 1)) == 2


def test_the_model_is_fasttexts_own_and_repeats_itself(tmp_path: Path) -> None:
    good = jsonl(tmp_path / "good.jsonl", rows(GOOD, 60, 0, "g"))
    bad = jsonl(tmp_path / "bad.jsonl", rows(BAD, 60, 10_000, "b"))
    for out in ("a", "b"):
        train_classifier([f"g={good}"], [f"b={bad}"], str(tmp_path / out), **FAST)  # type: ignore[arg-type]
    assert (tmp_path / "a" / "model.bin").read_bytes() == (tmp_path / "b" / "model.bin").read_bytes()
    reports = [json.loads((tmp_path / out / "report.json").read_text()) for out in ("a", "b")]
    first, second = ({**r, "model": None} for r in reports)
    assert first == second
    model = fasttext_library.load_model(str(tmp_path / "a" / "model.bin"))
    labels, _ = model.predict(GOOD[0], k=-1)
    assert set(labels) == {"__label__hq", "__label__lq"} and labels[0] == "__label__hq"
    small = train_classifier([f"g={good}"], [f"b={bad}"], str(tmp_path / "q"), quantize=1000, **FAST).report  # type: ignore[arg-type]
    assert small.model.endswith("model.ftz") and fasttext.read_info(small.model).quantized


def test_the_command_refuses_one_dataset_as_both_classes(tmp_path: Path, mixed: str) -> None:
    env = {**os.environ, "SELENE_PREFECT": "off"}
    run = subprocess.run([sys.executable, "-m", "selene.cli", "quality", "train", "-p", f"a={mixed}", "-n", f"b={mixed}",
                          "-o", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (
        run.returncode == 2
        and "is not a source of the dataset" in run.stderr
        and "Traceback" not in run.stderr
    )
    assert not (tmp_path / "out").exists()


def test_a_run_that_would_judge_nothing_is_refused(tmp_path: Path, mixed: str) -> None:
    good = jsonl(tmp_path / "good.jsonl", rows(GOOD, 60, 0, "g"))
    bad = jsonl(tmp_path / "bad.jsonl", rows(BAD, 60, 10_000, "b"))
    train_classifier([f"g={good}"], [f"b={bad}"], str(tmp_path / "m"), **FAST)  # type: ignore[arg-type]
    spec = ClassifierSpec(name="hq", model=str(tmp_path / "m" / "model.bin"), label="hq")
    with pytest.raises(
        ConfigError,
        match=r"no document of .* would be judged: .*none has one.*--judge SOURCE.*sources: docs, spam",
    ):
        run_quality(mixed, str(tmp_path / "out"), QualityConfig(classifiers=[spec]))
    assert not (tmp_path / "out").exists()
    done = run_quality(mixed, str(tmp_path / "out"), QualityConfig(classifiers=[spec], sources=["spam"]))
    assert done.manifest is not None and done.manifest.judged["spam"].judged == 120


def test_average_ranks_are_scipys() -> None:
    from scipy.stats import rankdata

    rng = np.random.default_rng(0)
    for _ in range(100):
        x = rng.integers(0, 12, size=int(rng.integers(1, 50))).astype(float)  # many ties
        assert np.array_equal(search.average_ranks(x), rankdata(x))


def test_a_cut_off_compressed_class_is_an_error_naming_the_file(tmp_path: Path) -> None:
    """Example files are read as ingest reads them: a .zst cut short is refused (here by the check
    before any reading: the one frame never decodes) naming the file and the byte, not read as a
    class silently missing its last documents."""
    import zstandard

    good = jsonl(tmp_path / "good.jsonl", rows(GOOD, 40, 0, "g"))
    data = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows(BAD, 400, 1, "b")).encode()
    whole = zstandard.ZstdCompressor().compress(data)
    (tmp_path / "bad.jsonl.zst").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(UsageError, match=r"bad\.jsonl\.zst: zst stream cut off at byte \d+"):
        train_classifier([f"g={good}"], [f"b={tmp_path}/bad.jsonl.zst"], str(tmp_path / "x"))
