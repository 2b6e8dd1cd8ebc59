"""`selene ablate`: variants of a pipeline's data, shared stages, the same proxy per seed, compared."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from selene.ablate import compare
from selene.ablate.config import AblationConfig
from selene.ablate.plan import chain, nested, variant_configs
from selene.cli import main
from selene.errors import ConfigError
from selene.io import dataset
from selene.tokenize.manifest import TokenizeManifest
from tests.runtime.test_pipeline_changes import write_corpus


def pipeline_file(root: Path, corpus: Path) -> Path:
    path = root / "p.yaml"
    path.write_text(
        f"name: t\nrun_dir: {root / 'run'}\nseed: 7\n"
        f"ingest:\n  sources: [{{name: pile, glob: '{corpus}'}}]\n"
        "dedup: {threshold: 0.5}\n"
        "tokenize: {vocab_size: 400, allow_smaller_vocab: true}\n"
        "train: {steps: 2, nproc_per_node: 1, batch: {seq_len: 32, global_batch: 4, micro_batch: 2}, eval_every: 2, "
        "eval_batches: 1, tensorboard: false}\n"
        "eval: {tasks: [selene_piqa], limit: 6, batch_size: 8}\n"
    )
    return path


def ablation(root: Path, pipeline: Path, variants: str, extra: str = "") -> Path:
    path = root / "a.yaml"
    path.write_text(
        f"name: t\npipeline: {pipeline}\nout: {root / 'out'}\nseeds: [1, 2]\n{extra}variants:\n{variants}"
    )
    return path


def test_overrides_nest_dotted_keys_and_merge() -> None:
    got = nested(
        {"quality.fraction": 0.1, "quality": {"rule": "top_fraction"}, "dedup.minhash.bands": 4}, "v"
    )
    assert got == {"quality": {"fraction": 0.1, "rule": "top_fraction"}, "dedup": {"minhash": {"bands": 4}}}
    with pytest.raises(ConfigError, match=r"'dedup\.threshold\.x' sets a part of 'threshold'"):
        nested({"dedup.threshold": 0.5, "dedup.threshold.x": 1}, "v")
    # one setting given twice, dotted and nested: an error, not the last one silently winning
    with pytest.raises(
        ConfigError,
        match=r"v: 'quality' sets quality\.fraction to 0\.2, which another key of the variant sets to 0\.1",
    ):
        nested({"quality.fraction": 0.1, "quality": {"fraction": 0.2}}, "v")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            "{dedup.treshold: 0.7}",
            r"(?s)variant 'bad'.*dedup\.treshold.*unknown key; accepted keys here: .*threshold",
        ),
        ("{dedup.threshold: 1.5}", r"(?s)variant 'bad'.*dedup\.threshold"),
        ("{train.steps: 5}", r"variant 'bad': 'train' is not a data stage \(the proxy is set by `proxy:`"),
        ("{dedup: off}", r"variant 'bad': dedup: off: dedup always runs"),
        ("{nonsense: {a: 1}}", r"variant 'bad': 'nonsense' is not a data stage"),
        ("{dedup: 3}", r"variant 'bad': dedup: expected a mapping of its settings or `off`"),
    ],
)
def test_a_bad_variant_is_an_error_naming_it_and_the_key(
    tmp_path: Path, overrides: str, message: str
) -> None:
    pipeline = pipeline_file(tmp_path, tmp_path / "c.jsonl.zst")
    cfg = AblationConfig.model_validate(
        {"pipeline": str(pipeline), "out": "o", "variants": {"ok": {}, "bad": _yaml(overrides)}}
    )
    with pytest.raises(ConfigError, match=message):
        variant_configs(cfg, "a.yaml")


def _yaml(text: str) -> dict:  # type: ignore[type-arg]
    import yaml

    return yaml.safe_load(text)


def test_an_optional_stage_can_be_left_out_and_shared_stages_share_a_directory(tmp_path: Path) -> None:
    pipeline = pipeline_file(tmp_path, tmp_path / "c.jsonl.zst")
    variants = {
        "a": {},
        "b": {"dedup.threshold": 0.9},
        "c": {"blend": {"weights": {"pile": 1.0}}},
        "d": {"blend": "off"},
    }
    cfg = AblationConfig.model_validate({"pipeline": str(pipeline), "out": "o", "variants": variants})
    chains = {n: chain(n, c, "o") for n, c in variant_configs(cfg, "a.yaml").items()}
    dirs = {n: {s.stage: s.out for s in v.steps} for n, v in chains.items()}
    assert list(dirs["a"]) == ["ingest", "dedup", "tokenize"] and list(dirs["c"]) == [
        "ingest",
        "dedup",
        "blend",
        "tokenize",
    ]
    assert len({d["ingest"] for d in dirs.values()}) == 1  # one ingest for all four
    assert dirs["a"]["dedup"] == dirs["c"]["dedup"] != dirs["b"]["dedup"]
    assert dirs["a"] == dirs["d"]  # blend off: the pipeline as it is
    assert dirs["b"]["tokenize"] != dirs["a"]["tokenize"]  # a changed stage changes every stage after it


def test_versus_says_better_or_worse_only_beyond_the_spread() -> None:
    base = compare.spread([1.00, 1.02, 0.98])
    assert (
        compare.versus(compare.spread([0.90, 0.91, 0.89]), base, "reference bits/byte")["verdict"] == "better"
    )
    assert compare.versus(compare.spread([0.90, 0.91, 0.89]), base, "piqa acc")["verdict"] == "worse"
    assert compare.versus(compare.spread([1.01, 0.99, 1.03]), base, "piqa acc")["verdict"] == "within spread"
    # two seeds that agree on a 40-item task: one item (0.025) is within the items' standard error
    same = compare.versus(
        compare.spread([0.65, 0.65], [0.077, 0.077]), compare.spread([0.625] * 2, [0.078] * 2), "piqa acc"
    )
    assert same["verdict"] == "within spread" and same["margin"] == pytest.approx(
        2 * (0.077**2 + 0.078**2) ** 0.5
    )
    one = compare.versus(compare.spread([0.5]), compare.spread([0.9]), "piqa acc")
    assert one["verdict"] == "one seed" and one["margin"] is None and one["diff"] == pytest.approx(-0.4)


def test_ablation_runs_shares_resumes_and_compares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    (tmp_path / "ref.jsonl").write_text(
        json.dumps({"text": "The ship sailed across the quiet sea at dawn."})
        + "\n"
        + json.dumps({"text": "A short note."})
        + "\n"
    )
    cfg = ablation(
        tmp_path, pipeline_file(tmp_path, corpus), "  strict: {}\n  loose: {dedup.threshold: 0.9}\n",
        extra=f"reference: ['{tmp_path / 'ref.jsonl'}']\n",
    )  # fmt: skip
    os.chdir(tmp_path)
    assert main(["ablate", str(cfg)]) == 0
    printed = capsys.readouterr().out
    out = tmp_path / "out"
    result = json.loads((out / "ablation.json").read_text())
    strict, loose = result["variants"]
    assert result["baseline"] == "strict" and result["seeds"] == [1, 2]
    # near-duplicates survive the looser threshold: more documents, and the same ingest underneath
    assert loose["documents"] > strict["documents"]
    assert (out / "variants/strict/ingest").resolve() == (out / "variants/loose/ingest").resolve()
    assert (out / "variants/strict/dedup").resolve() != (out / "variants/loose/dedup").resolve()
    # one tokenizer for both: only the documents differ
    toks = [
        dataset.read_manifest(str(out / f"variants/{v}/tokenize"), TokenizeManifest)
        for v in ("strict", "loose")
    ]
    assert (
        toks[0] is not None and toks[1] is not None and toks[0].tokenizer.sha256 == toks[1].tokenizer.sha256
    )
    assert toks[0].tokenizer.trained and not toks[1].tokenizer.trained
    for v in (strict, loose):
        assert [r["seed"] for r in v["runs"]] == [1, 2]
        stat = v["stats"]["reference bits/byte"]
        assert stat["n"] == 2 and stat["sd"] is not None and 0 < stat["mean"] < 20
        assert {"selene_piqa acc", "selene_piqa acc_norm"} <= set(v["stats"])
    # the seeds are different trainings of the same proxy
    runs = strict["runs"]
    assert runs[0]["metrics"]["reference bits/byte"] != runs[1]["metrics"]["reference bits/byte"]
    metas = [json.loads((Path(r["checkpoint"]) / "meta.json").read_text())["config"] for r in runs]
    assert [m["seed"] for m in metas] == [1, 2] and metas[0]["model"] == metas[1]["model"]
    assert loose["versus"]["reference bits/byte"]["verdict"] in ("better", "worse", "within spread")
    # the harness ran 6 items without bootstrap: acc's standard error is a Bernoulli mean's
    p = runs[0]["metrics"]["selene_piqa acc"]
    assert runs[0]["stderr"]["selene_piqa acc"] == pytest.approx((p * (1 - p) / 5) ** 0.5)
    assert "| loose | dedup.threshold: 0.9 |" in (out / "ablation.md").read_text() and "| loose |" in printed
    assert (out / "ablation.svg").read_text().startswith("<svg")

    # a rerun after a run killed while evaluating the last proxy: only that evaluation is redone
    lost = Path(loose["runs"][1]["dir"])
    kept = Path(strict["runs"][0]["checkpoint"]) / "meta.json"
    before = kept.stat().st_mtime_ns
    shutil.rmtree(lost / "eval")
    (lost / "reference.json").unlink()
    (out / "ablation.json").unlink()
    assert main(["ablate", str(cfg), "--seeds", "1,2"]) == 0
    again = json.loads((out / "ablation.json").read_text())
    assert kept.stat().st_mtime_ns == before and (lost / "eval" / "summary.json").is_file()
    assert again["variants"] == result["variants"]


def test_a_missing_reference_or_pipeline_fails_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline = pipeline_file(tmp_path, tmp_path / "c.jsonl.zst")
    cfg = ablation(tmp_path, pipeline, "  a: {}\n", extra=f"reference: ['{tmp_path / 'nothing-*.jsonl'}']\n")
    assert main(["ablate", str(cfg)]) == 2
    assert "nothing-*.jsonl: matches no file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    cfg = ablation(tmp_path, pipeline, "  a: {}\n", extra="proxy: {batch: {seq_len: 4096}}\n")
    assert main(["ablate", str(cfg)]) == 2
    assert (
        "seq_len 4096 exceeds the model's max_seq_len" in capsys.readouterr().err
        and not (tmp_path / "out").exists()
    )
    cfg = ablation(tmp_path, tmp_path / "missing.yaml", "  a: {}\n")
    assert main(["ablate", str(cfg)]) == 2
    assert "missing.yaml" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_bad_setting_is_blamed_on_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in `proxy:` names the ablation file's proxy and the line, not the first variant; one in a
    variant names the variant and its line; one in the pipeline file names that file and its line."""
    pipeline = pipeline_file(tmp_path, tmp_path / "c.jsonl.zst")
    cfg = ablation(
        tmp_path,
        pipeline,
        "  a: {}\n  b:\n    dedup.threshold: 1.5\n",
        extra="proxy:\n  model: {preset: debgu}\n",
    )
    assert main(["ablate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: proxy and eval" in err and "proxy.model.preset (line 6): got 'debgu'" in err, err
    assert "variant" not in err and "Traceback" not in err
    cfg = ablation(tmp_path, pipeline, "  a: {}\n  b:\n    dedup.threshold: 1.5\n")
    assert main(["ablate", str(cfg)]) == 2
    assert "variant 'b': 1 invalid setting(s)\n  dedup.threshold (line 8): got 1.5" in capsys.readouterr().err
    pipeline.write_text(pipeline.read_text().replace("threshold: 0.5", "threshold: 2"))
    assert main(["ablate", str(cfg)]) == 2
    assert f"{pipeline}: 1 invalid setting(s)\n  dedup.threshold (line 6): got 2" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
