"""The selene version in what commands write: every stage manifest records it, and it is information
only: a manifest written before it was recorded still loads, and a finished stage is still skipped
when only the version differs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import selene
from selene.ingest import stage
from selene.ingest.config import IngestConfig, SourceSpec
from selene.io import dataset
from selene.manifest import versioned
from tests.corpus import PROSE


@pytest.fixture
def ingested(tmp_path: Path) -> tuple[IngestConfig, str]:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": f"d{k}", "text": t}) + "\n" for k, t in enumerate(PROSE[:4])))
    cfg = IngestConfig(sources=[SourceSpec(name="web", glob=str(src))], langid={"enabled": False})
    out = str(tmp_path / "ingest")
    stage.run_ingest(out, cfg)
    return cfg, out


def _manifest(out: str) -> dict[str, object]:
    return json.loads(Path(out, dataset.MANIFEST).read_text())


def test_a_stage_manifest_records_the_selene_that_wrote_it(ingested: tuple[IngestConfig, str]) -> None:
    _, out = ingested
    data = _manifest(out)
    assert data["selene_version"] == selene.__version__
    assert dataset.read_manifest(out).selene_version == selene.__version__


@pytest.mark.parametrize("written_by", [None, "0.0.1"])
def test_another_or_no_version_loads_and_the_stage_is_still_skipped(
    ingested: tuple[IngestConfig, str], written_by: str | None
) -> None:
    cfg, out = ingested
    data = _manifest(out)
    if written_by is None:
        del data["selene_version"]  # as a selene before the field wrote it
    else:
        data["selene_version"] = written_by
    Path(out, dataset.MANIFEST).write_text(json.dumps(data, indent=2) + "\n")
    m = dataset.read_manifest(out)
    assert m.selene_version == written_by
    assert ("selene_version" in m.to_json()) == (written_by is not None)  # read back as it was written
    again = stage.run_ingest(out, cfg)
    assert again.skipped
    assert _manifest(out) == data  # a skipped stage leaves the older manifest as it was


def test_versioned_puts_this_selene_first_and_replaces_an_older_one() -> None:
    record = versioned({"step": 3, "selene_version": "0.0.1", "config": {}})
    assert list(record) == ["selene_version", "step", "config"]
    assert record["selene_version"] == selene.__version__


def test_a_trained_classifier_is_reused_by_another_selene(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The quality stage's own classifier records the selene that trained it, and a newer selene reuses
    it: neither the classifier nor the stage runs again for the version alone."""
    from selene.quality import recipe
    from selene.quality.stage import run_quality
    from tests.quality.test_recipe import recipe_config, write_input

    inp, out = write_input(tmp_path / "in", web=10), tmp_path / "out"
    run_quality(inp, str(out), recipe_config())
    written = json.loads((out / "classifiers" / "hq" / "recipe.json").read_text())
    assert written["selene_version"] == selene.__version__
    capfd.readouterr()
    monkeypatch.setattr(recipe, "__version__", "99.0.0")
    again = run_quality(inp, str(out), recipe_config())
    assert again.skipped and "hq reused" in capfd.readouterr().err
    del written["selene_version"]  # as a selene before the field wrote it
    (out / "classifiers" / "hq" / "recipe.json").write_text(json.dumps(written))
    assert run_quality(inp, str(out), recipe_config()).skipped and "hq reused" in capfd.readouterr().err
