"""`selene run` carries a change through: a changed data stage retrains on its data (the old run moved
aside, not resumed nor reported as the new one), and the file's top-level `seed` seeds every stage."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from selene.cli import main
from selene.config.pipeline import PipelineConfig, seeded_sections
from selene.io import dataset
from selene.manifest import StageManifest as AnyManifest
from tests.corpus import pile_line, write_zst
from tests.dedup_corpus import base_documents, reference_words, variant

pytestmark = pytest.mark.timeout(600)


def test_seeded_sections_are_found_in_the_stage_models() -> None:
    assert seeded_sections() == ("quality", "dedup", "blend", "tokenize", "train", "train.data", "eval")


def seeds(cfg: PipelineConfig) -> dict[str, int]:
    found = {}
    for path in seeded_sections():
        section = cfg
        for name in path.split("."):
            section = getattr(section, name)
        found[path] = section.seed  # type: ignore[attr-defined]
    return found


def test_top_level_seed_seeds_each_stage_that_does_not_set_its_own() -> None:
    cfg = PipelineConfig.model_validate({"run_dir": "r", "seed": 7, "blend": {"seed": 3}, "train": {"data": {"seed": 9}}})
    assert seeds(cfg) == {"quality": 7, "dedup": 7, "blend": 3, "tokenize": 7, "train": 7, "train.data": 9, "eval": 7}
    # a stage given its default value explicitly keeps it: the file set it
    assert PipelineConfig.model_validate({"run_dir": "r", "seed": 7, "tokenize": {"seed": 1234}}).tokenize.seed == 1234
    # without a top-level seed every stage keeps its own default, as before
    defaults = seeds(PipelineConfig.model_validate({"run_dir": "r"}))
    assert defaults == {"quality": 1234, "dedup": 1, "blend": 1234, "tokenize": 1234, "train": 1234, "train.data": 1234, "eval": 1234}
    # what a dump (a Prefect parameter, `selene config show`) reloads to is the same
    again = PipelineConfig.model_validate(cfg.model_dump())
    assert seeds(again) == seeds(cfg)


def write_corpus(root: Path) -> Path:
    """Prose documents, each with a variant at word-5-gram Jaccard ~0.7: duplicates at dedup
    threshold 0.5, distinct documents at 0.9."""
    rng = random.Random(0)
    bases = base_documents(10, min_words=120, max_words=300)
    vocab = sorted({w for b in bases for w in reference_words(b)})
    lines = []
    for k, base in enumerate(bases):
        source = "Books3" if k % 2 else "ArXiv"
        lines += [pile_line(base, source), pile_line(variant(base, 0.7, rng, vocab) + ".", source)]
    root.mkdir(parents=True)
    write_zst(root / "00.jsonl.zst", b"".join(lines))
    return root / "00.jsonl.zst"


def pipeline_file(path: Path, corpus: Path, run_dir: Path, threshold: float) -> Path:
    path.write_text(
        f"name: changes\nrun_dir: {run_dir}\nseed: 7\n"
        f"ingest:\n  sources: [{{name: pile, glob: '{corpus}'}}]\n"
        f"dedup: {{threshold: {threshold}}}\n"
        "blend: {weights: {Books3: 1.0, ArXiv: 1.0}, seed: 3}\n"
        "tokenize: {vocab_size: 400, allow_smaller_vocab: true}\n"
        "train: {steps: 2, batch: {seq_len: 32, global_batch: 4, micro_batch: 2}, eval_every: 2, eval_batches: 1, "
        "tensorboard: false}\n"
    )
    return path


def manifest(directory: Path) -> AnyManifest:
    m = dataset.read_manifest(str(directory))
    assert m is not None, f"{directory} has no manifest"
    return m


def squashed(text: str) -> str:
    """`text` without whitespace: what a console's wrapping cannot change."""
    return "".join(text.split())


def last_meta(train: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((train / "checkpoints" / "step-000002" / "meta.json").read_text())


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_changed_data_moves_the_old_training_aside_and_trains_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    run = tmp_path / "run"
    cfg = pipeline_file(tmp_path / "p.yaml", corpus, run, threshold=0.5)
    assert main(["run", str(cfg), "--until", "train"]) == 0
    capsys.readouterr()
    first = manifest(run / "tokenize")
    meta = last_meta(run / "train")
    assert meta["data_fingerprints"] == [first.fingerprint]
    # the top-level seed, as every stage used and recorded it (blend sets its own)
    assert manifest(run / "dedup").config["seed"] == 7 and manifest(run / "tokenize").config["seed"] == 7
    assert manifest(run / "blend").config["seed"] == 3
    assert meta["config"]["seed"] == 7 and meta["config"]["data"]["seed"] == 7
    removed_before = manifest(run / "dedup").stats.documents_out

    pipeline_file(cfg, corpus, run, threshold=0.9)  # fewer documents are near-duplicates now
    assert main(["run", str(cfg), "--until", "train"]) == 0
    err = capsys.readouterr().err
    assert manifest(run / "dedup").stats.documents_out > removed_before
    second = manifest(run / "tokenize")
    assert second.fingerprint != first.fingerprint
    aside = sorted(tmp_path.glob("run/train.previous-*"))
    assert len(aside) == 1, sorted(p.name for p in run.iterdir())
    line = squashed(err)  # the console wraps long lines, at a space or inside a long path
    assert squashed(f"moved {run / 'train'} to {aside[0]}, training from step 0") in line, err
    assert squashed(f"token data changed since step 2 (tokenize fingerprint {first.fingerprint[:16]}..., now ") in line, err
    # the old run is kept whole, the new one trained from step 0 on the new data
    assert last_meta(aside[0])["data_fingerprints"] == [first.fingerprint]
    assert last_meta(run / "train")["data_fingerprints"] == [second.fingerprint]
    steps = [json.loads(x)["step"] for x in (run / "train" / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2]

    assert main(["run", str(cfg), "--until", "train"]) == 0  # nothing changed: nothing moves
    assert "train.previous-" not in capsys.readouterr().err
    assert len(sorted(tmp_path.glob("run/train.previous-*"))) == 1

    # `selene train` on its own moves nothing: it says what changed and the command that retrains
    pipeline_file(cfg, corpus, run, threshold=0.5)
    assert main(["run", str(cfg), "--until", "tokenize"]) == 0
    capsys.readouterr()
    assert main(["train", str(cfg), "--set", "steps=3"]) == 2
    err = squashed(capsys.readouterr().err)
    assert squashed("was trained with another tokenizer") in err and squashed("`selene train CFG --force`") in err, err
    assert squashed("--until train --force train") in err and sorted(tmp_path.glob("run/train.previous-*")) == aside
    assert main(["train", str(cfg), "--force"]) == 0
    assert last_meta(run / "train")["data_fingerprints"] == [manifest(run / "tokenize").fingerprint]
