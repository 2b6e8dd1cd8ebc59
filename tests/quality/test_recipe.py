"""A classifier the quality stage trains itself from a recipe in its config: the same model, byte for
byte, as `selene quality train` makes from the same examples, used as a given model is; reused by a
rerun or a resumed run while its recipe and examples are unchanged; bad recipes fail before any
scoring, naming the field or the file."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from selene.errors import ConfigError, UsageError
from selene.io import dataset
from selene.io.results import StageResult
from selene.quality import checks, fasttext
from selene.quality.config import ClassifierSpec, QualityConfig
from selene.quality.manifest import QualityManifest
from selene.quality.stage import run_quality
from selene.quality.train import Example, _order, sample, train_classifier
from selene.quality.view import view
from selene.report import section
from tests.corpus import document_manifest
from tests.quality.test_quality import BAD, GOOD, docs, read_out, text

SETTINGS = {"dim": 8, "bucket": 4096, "epoch": 5}


def write_input(directory: Path, web: int = 60, empty: tuple[str, ...] = ()) -> str:
    """The stage's input: curated text (source `docs`), spam (`spam`), both without a url, and web
    documents (`cc`, with a url: the ones judged); `empty` sources are listed with no documents left."""
    rows = [(f"g{i}", text(GOOD, random.Random(i), 6), "docs", "{}") for i in range(120)]
    rows += [(f"b{i}", text(BAD, random.Random(10_000 + i), 6), "spam", "{}") for i in range(120)]
    rows += [(i, t, "cc", json.dumps({"url": f"http://x/{i}"})) for i, t, _ in docs(web, 21)]
    random.Random(5).shuffle(rows)
    shards = []
    for k in range(0, len(rows), 100):
        part = rows[k : k + 100]
        table = pa.table({name: [r[c] for r in part] for c, name in enumerate(("id", "text", "source", "meta"))},
                         schema=dataset.DOC_SCHEMA)  # fmt: skip
        shards.append(dataset.write_table(f"{directory}/{dataset.shard_name(len(shards))}", table))
    removed = dataset.write_table(f"{directory}/{dataset.REMOVED}", dataset.REMOVED_SCHEMA.empty_table())
    counts = Counter(r[2] for r in rows)
    counts.update({s: 0 for s in empty})
    dataset.write_manifest(str(directory), document_manifest(shards, removed, counts))
    return str(directory)


def recipe_config(stage: dict[str, object] | None = None, **recipe: object) -> QualityConfig:
    """The stage's config: one classifier trained from `docs` against `spam`, with `recipe`'s changes."""
    train = {"positive": {"sources": ["docs"]}, "negative": {"sources": ["spam"]}, **SETTINGS, **recipe}
    return QualityConfig.model_validate(
        {"classifiers": [{"name": "hq", "train": train}], "seed": 7, **(stage or {})}
    )


def sha(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_a_recipe_scores_as_the_model_selene_quality_train_makes(tmp_path: Path) -> None:
    inp = write_input(tmp_path / "in")
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        "".join(
            json.dumps({"id": f"e{i}", "text": text(GOOD, random.Random(500 + i))}) + "\n" for i in range(30)
        )
    )
    cfg = recipe_config(positive={"sources": ["docs"], "files": [str(extra)]})
    res = run_quality(inp, str(tmp_path / "out"), cfg)
    trained = tmp_path / "out" / "classifiers" / "hq"
    assert {p.name for p in trained.iterdir()} == {"model.bin", "report.json", "recipe.json"}

    # the same examples by hand: NAME=DATASET takes the source NAME of the dataset
    train_classifier([f"docs={inp}", f"more={extra}"], [f"spam={inp}"], str(tmp_path / "by-hand"),
                     settings=fasttext.Settings(dim=8, bucket=4096, epoch=5), fixed={"dim", "bucket", "epoch"}, seed=7)  # fmt: skip
    assert sha(trained / "model.bin") == sha(tmp_path / "by-hand" / "model.bin")

    given = QualityConfig(
        classifiers=[ClassifierSpec(name="hq", model=str(tmp_path / "by-hand" / "model.bin"), label="hq")],
        seed=7,
    )
    ref = run_quality(inp, str(tmp_path / "ref"), given)
    assert res.manifest is not None and ref.manifest is not None
    assert res.manifest.fingerprint == ref.manifest.fingerprint  # the stage sees the same model
    assert [s.sha256 for s in res.manifest.shards] == [s.sha256 for s in ref.manifest.shards]
    assert res.manifest.removed.sha256 == ref.manifest.removed.sha256
    kept, removed = read_out(res.out)
    assert removed and {d["source"] for d in kept} == {"docs", "spam", "cc"}  # only web documents are judged

    summary = res.manifest.classifiers["hq"]
    assert summary.model == str(trained / "model.bin") and summary.label == "hq"
    t = summary.trained
    report = json.loads((trained / "report.json").read_text())
    assert t is not None and t.auc == report["heldout"]["auc"] > 0.9 and t.positive == ["docs", str(extra)]
    assert t.negative == ["spam"] and t.documents == {
        "hq": report["examples"]["positive"]["documents"],
        "lq": 120,
    }
    assert t.settings == report["settings"] and t.settings["thread"] == 1 and t.settings["seed"] == 7
    assert {k: t.settings[k] for k in ("epoch", "dim", "bucket")} == {"epoch": 5, "dim": 8, "bucket": 4096}
    assert ref.manifest.classifiers["hq"].trained is None
    assert res.manifest.config["classifiers"][0]["train"]["positive"]["sources"] == ["docs"]
    lines = section(view(StageResult(res.out, skipped=False, manifest=res.manifest)))
    assert any("`hq` trained here from its recipe" in line and "AUC" in line for line in lines)


def test_the_same_recipe_and_seed_give_the_same_bytes(tmp_path: Path) -> None:
    inp = write_input(tmp_path / "in", web=10)
    run_quality(inp, str(tmp_path / "a"), recipe_config())
    run_quality(inp, str(tmp_path / "b"), recipe_config())
    run_quality(inp, str(tmp_path / "c"), recipe_config(seed=8))
    model = Path("classifiers/hq/model.bin")
    assert sha(tmp_path / "a" / model) == sha(tmp_path / "b" / model) != sha(tmp_path / "c" / model)
    assert json.loads((tmp_path / "a" / "classifiers/hq/recipe.json").read_text())["seed"] == 7  # the stage's


def test_a_rerun_reuses_the_classifier_until_its_recipe_or_model_changes(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    inp = write_input(tmp_path / "in", web=10)
    out = tmp_path / "out"
    model = out / "classifiers" / "hq" / "model.bin"
    first = run_quality(inp, str(out), recipe_config())
    stamp = model.stat().st_mtime_ns
    again = run_quality(inp, str(out), recipe_config())
    assert again.skipped and model.stat().st_mtime_ns == stamp and "hq reused" in capfd.readouterr().err
    with model.open("ab") as f:  # a damaged model is trained again, to the same bytes
        f.write(b"\0")
    assert run_quality(inp, str(out), recipe_config()).skipped and "hq trained" in capfd.readouterr().err
    assert first.manifest is not None and sha(model) == first.manifest.inputs.models["hq"]
    changed = run_quality(inp, str(out), recipe_config(epoch=6))
    assert (
        not changed.skipped
        and changed.manifest is not None
        and changed.manifest.inputs.models["hq"] == sha(model)
    )
    assert sha(model) != first.manifest.inputs.models["hq"] and "hq trained" in capfd.readouterr().err


# killed after scoring: the classifier trained before it is reused (a kill at the other fail point
# is the stage's own resume, tests/quality/test_quality.py)
@pytest.mark.parametrize("point", ["quality:scored"])
def test_a_killed_run_resumes_with_its_trained_classifier(tmp_path: Path, point: str) -> None:
    import os
    import signal
    import subprocess
    import sys

    inp = write_input(tmp_path / "in", web=80)
    stage = {"rule": "top_fraction", "fraction": 0.4}
    # a config file of the stage alone: its command has no option for a recipe
    (tmp_path / "q.yaml").write_text(json.dumps(recipe_config(stage).model_dump(mode="json")))
    args = [sys.executable, "-m", "selene.cli", "quality", "-i", inp, "-o", str(tmp_path / "out"), "-c", str(tmp_path / "q.yaml"),
            "--workers", "2"]  # fmt: skip
    env = {**os.environ, "SELENE_PREFECT": "off"}
    killed = subprocess.run(args, env={**env, "SELENE_FAILPOINT": point}, capture_output=True, text=True,
                            timeout=300, start_new_session=True)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL and not (tmp_path / "out" / "manifest.json").exists()
    model = tmp_path / "out" / "classifiers" / "hq" / "model.bin"
    stamp = model.stat().st_mtime_ns
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "classifier hq reused" in done.stderr and model.stat().st_mtime_ns == stamp
    clean = run_quality(
        inp, str(tmp_path / "clean"), recipe_config({"rule": "top_fraction", "fraction": 0.4})
    )
    resumed = dataset.read_manifest(str(tmp_path / "out"), QualityManifest)
    assert resumed is not None and clean.manifest is not None
    assert [s.sha256 for s in resumed.shards] == [s.sha256 for s in clean.manifest.shards]
    assert resumed.removed.sha256 == clean.manifest.removed.sha256
    assert sha(model) == sha(tmp_path / "clean" / "classifiers" / "hq" / "model.bin")


def test_bad_recipes_fail_before_any_scoring(tmp_path: Path) -> None:
    inp = write_input(tmp_path / "in", web=10, empty=("wiki",))
    out = tmp_path / "out"
    (tmp_path / "empty.jsonl").write_text("")
    cases = [
        (recipe_config(negative={"sources": ["spam", "news", "blogs"]}), ConfigError,
         r"quality\.classifiers\[hq\]\.train\.negative\.sources: news, blogs not in .*its sources: cc, docs, spam, wiki"),
        (recipe_config(positive={"sources": ["wiki"]}), ConfigError,
         r"quality\.classifiers\[hq\]\.train\.positive\.sources: no documents of wiki left in"),
        (recipe_config(negative={"files": [str(tmp_path / "empty.jsonl")]}), UsageError,
         r"quality\.classifiers\[hq\]\.train\.negative\.files: .*empty\.jsonl is empty"),
        (recipe_config(negative={"files": [str(tmp_path / "none-*.jsonl")]}), UsageError,
         r"quality\.classifiers\[hq\]\.train\.negative\.files: .*none-\*\.jsonl: matches no file"),
    ]  # fmt: skip
    for cfg, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            run_quality(inp, str(out), cfg)
        assert not (out / "part-00000.parquet").exists() and not (out / "manifest.json").exists()
    with pytest.raises(ConfigError, match=r"positive\.sources: no documents of wiki"):
        checks.check(
            inp, str(out), recipe_config(positive={"sources": ["wiki"]})
        )  # the preflight, as a pipeline runs it
    checks.check(
        inp, str(tmp_path / "fresh"), recipe_config()
    )  # a recipe's model is not there before the stage trains it
    with pytest.raises(ValueError, match="positive and negative share spam"):
        recipe_config(positive={"sources": ["docs", "spam"]})
    with pytest.raises(ValueError, match="exactly one of `model`"):
        ClassifierSpec.model_validate(
            {
                "name": "hq",
                "model": "m.bin",
                "label": "hq",
                "train": {"positive": {"sources": ["a"]}, "negative": {"sources": ["b"]}},
            }
        )
    with pytest.raises(ValueError, match="not one its recipe trains"):
        ClassifierSpec.model_validate(
            {
                "name": "hq",
                "label": "best",
                "train": {"positive": {"sources": ["a"]}, "negative": {"sources": ["b"]}},
            }
        )


def test_a_pipeline_file_with_a_recipe_validates(tmp_path: Path) -> None:
    from selene import pipeline
    from selene.config.pipeline import load_pipeline_config

    path = tmp_path / "p.yaml"
    path.write_text(
        "run_dir: r\nseed: 99\nquality:\n  classifiers:\n    - name: hq\n      train:\n"
        "        positive: {sources: [PythonReference], files: ['wiki/*.jsonl']}\n"
        "        negative: {sources: [cc]}\n        bucket: 50000\n"
    )
    cfg = load_pipeline_config(path)
    spec = cfg.quality.classifiers[0]
    assert (
        spec.model is None and spec.label == "hq" and spec.train.bucket == 50_000 and spec.train.seed is None
    )
    assert cfg.quality.seed == 99  # the recipe's seed when it sets none
    assert pipeline.active_stages(cfg)[:2] == ["ingest", "quality"]
    assert "wiki/*.jsonl" in pipeline.inputs(cfg) and not any(
        "classifiers" in p for p in pipeline.inputs(cfg)
    )
    path.write_text(
        path.read_text().replace("negative: {sources: [cc]}", "negative: {sources: [cc, PythonReference]}")
    )
    with pytest.raises(ConfigError, match=r"line 6.*share PythonReference"):
        load_pipeline_config(path)


def test_sampling_in_one_pass_takes_the_hash_order_prefix() -> None:
    """`sample` reads once and holds only what it takes: the documents in seeded hash order until the
    byte budget, the first one always, ties in reading order."""
    rng = random.Random(0)
    for _ in range(500):
        examples = [Example(str(rng.randint(0, 20)), "x" * rng.choice([0, 1, 5, 40, rng.randint(0, 300)]), rng.choice("ab"))
                    for _ in range(rng.randint(0, 30))]  # fmt: skip
        budget = rng.randint(0, 1500)
        want, total = [], 0
        for ex in sorted(examples, key=lambda e: _order(e, 3)):
            if total + len(ex.text) > budget and want:
                break
            want.append(ex)
            total += len(ex.text)
        got = sample(iter(examples), budget, 3)
        assert [id(e) for e in got.examples] == [id(e) for e in want]
        assert got.bytes_read == sum(len(e.text) for e in examples) and got.text == any(
            e.text for e in examples
        )
