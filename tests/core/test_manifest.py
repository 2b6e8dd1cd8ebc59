"""Typed, versioned manifests: every stage's manifest round-trips; what this selene cannot read is a
clear `InputError` (newer version, missing field, wrong type), and manifests written before versions
existed are still read."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendManifest
from selene.blend.stage import run_blend
from selene.decontaminate.config import DecontaminateConfig
from selene.decontaminate.manifest import DecontaminateManifest
from selene.decontaminate.stage import run_decontaminate
from selene.dedup.config import DedupConfig
from selene.dedup.manifest import DedupManifest
from selene.dedup.stage import run_dedup
from selene.errors import InputError, PathError
from selene.ingest.config import IngestConfig
from selene.ingest.manifest import IngestManifest
from selene.ingest.stage import run_ingest
from selene.io import dataset
from selene.io.manifests import parse_manifest
from selene.io.results import StageResult
from selene.manifest import MANIFEST_VERSION, StageManifest
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.manifest import TokenizeManifest, token_manifest
from selene.tokenize.stage import run_tokenize
from tests.ingest.test_ingest import build_corpus

M = TypeVar("M", bound=StageManifest)
TASKS = Path(__file__).resolve().parents[2] / "data" / "tasks"
MODELS: dict[str, type[StageManifest]] = {
    "ingest": IngestManifest,
    "dedup": DedupManifest,
    "decontaminate": DecontaminateManifest,
    "blend": BlendManifest,
    "tokenize": TokenizeManifest,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, StageResult[Any]]:
    """One small run of every data stage, each reading the previous one's output."""
    root = tmp_path_factory.mktemp("manifests")
    specs, _ = build_corpus(root / "raw")
    ingest = run_ingest(str(root / "ingest"), IngestConfig(sources=specs, shard_docs=5, row_group_docs=3))
    dedup = run_dedup(ingest.out, str(root / "dedup"), DedupConfig())
    tasks = [str(TASKS / "mini_piqa.jsonl"), str(TASKS / "mini_lambada")]
    decontam = run_decontaminate(dedup.out, str(root / "decontaminate"), DecontaminateConfig(tasks=tasks))
    blend = run_blend(decontam.out, str(root / "blend"), BlendConfig(epochs={"Books3": 2.0, "ArXiv": 0.5}))
    tokenize = run_tokenize(
        blend.out, str(root / "tokenize"), TokenizeConfig(vocab_size=500, sample_docs=200)
    )
    return {"ingest": ingest, "dedup": dedup, "decontaminate": decontam, "blend": blend, "tokenize": tokenize}


def finished(runs: dict[str, StageResult[Any]], kind: type[M]) -> M:
    """The manifest of the run of the stage whose model is `kind`, read back from its file."""
    m = dataset.read_manifest(runs[kind.model_fields["stage"].default].out, kind)
    assert m is not None
    return m


def raw(directory: str | Path) -> dict[str, Any]:
    return json.loads(Path(directory, dataset.MANIFEST).read_text())


def edited(source: str, to: Path, change: Callable[[dict[str, Any]], None]) -> str:
    """A copy of the dataset `source` at `to` whose manifest.json went through `change`."""
    shutil.copytree(source, to)
    data = raw(to)
    change(data)
    Path(to, dataset.MANIFEST).write_text(json.dumps(data, indent=2))
    return str(to)


@pytest.mark.parametrize("stage", list(MODELS))
def test_every_stage_manifest_round_trips(runs: dict[str, StageResult[Any]], stage: str) -> None:
    result = runs[stage]
    model = MODELS[stage]
    text = Path(result.out, dataset.MANIFEST).read_text()
    data = json.loads(text)
    assert data["manifest_version"] == MANIFEST_VERSION and data["stage"] == stage
    m = dataset.read_manifest(result.out)
    assert type(m) is model and m == result.manifest
    # the file is exactly the model's JSON: nothing lost, nothing renamed ("in" stays "in")
    assert text == json.dumps(m.to_json(), indent=2) + "\n"
    assert parse_manifest(data, "x").to_json() == data
    assert list(data) == [
        "manifest_version", "selene_version", "stage", "fingerprint", "config", "inputs", "shards",
        *(["removed"] if stage != "tokenize" else []),
        *{"dedup": ["lsh"], "decontaminate": ["tasks"], "blend": ["blend"], "tokenize": ["prefix", "tokenizer", "dtype"]}.get(stage, []),
        "stats",
    ]  # fmt: skip
    per_source = next(iter(data["stats"]["per_source"].values()))
    assert {"in", "kept", "removed"} <= set(per_source)
    # a flow returns plain data: the manifest's JSON
    summary = result.summary()
    assert json.loads(json.dumps(summary)) == {"out": result.out, "skipped": False, "manifest": data}


def test_stage_specific_fields_are_typed(runs: dict[str, StageResult[Any]]) -> None:
    ingest, dedup = finished(runs, IngestManifest), finished(runs, DedupManifest)
    decontam, blend, tokenize = (
        finished(runs, DecontaminateManifest),
        finished(runs, BlendManifest),
        finished(runs, TokenizeManifest),
    )
    assert ingest.stats.files and ingest.inputs[0].format == "jsonl.zst"
    assert (
        dedup.inputs.dataset == runs["ingest"].out and dedup.stats.documents_in == ingest.stats.documents_out
    )
    assert dedup.lsh.bands * dedup.lsh.rows <= 128 and dedup.stats.clusters.largest_cluster >= 1
    assert decontam.stats.documents_split == sum(s.split or 0 for s in decontam.stats.per_source.values())
    assert set(decontam.tasks) == {"mini_piqa", "mini_lambada"}
    assert blend.blend.sources["Books3"].epochs == 2.0
    assert blend.stats.per_source["cc"].removed == {
        "blend:not_sampled": blend.stats.per_source["cc"].documents_in
    }
    assert tokenize.removed is None and tokenize.tokenizer.vocab_size == 500
    assert tokenize.stats.tokens == sum(s.tokens or 0 for s in tokenize.stats.per_source.values())
    assert [f.name for f in tokenize.shards] == ["data_text_document.bin", "data_text_document.idx"]
    assert all(f.rows is None for f in tokenize.shards)
    assert token_manifest(f"{runs['tokenize'].out}/data_text_document") == tokenize


def test_newer_manifest_version_names_both_versions(
    runs: dict[str, StageResult[Any]], tmp_path: Path
) -> None:
    def newer(m: dict[str, Any]) -> None:
        m["manifest_version"], m["selene_version"] = MANIFEST_VERSION + 1, "9.9.9"
        m["stats"]["a_field_from_the_future"] = {}

    out = edited(runs["dedup"].out, tmp_path / "dedup", newer)
    msg = rf"written by selene 9\.9\.9 with manifest version {MANIFEST_VERSION + 1}; .* reads manifest versions <= {MANIFEST_VERSION}"
    with pytest.raises(InputError, match=msg) as e:
        dataset.read_manifest(out)
    assert (
        f"{out}/manifest.json" in str(e.value)
        and "Upgrade selene" in str(e.value)
        and "--force" in str(e.value)
    )
    with pytest.raises(InputError, match="manifest version"):  # as the input of the next stage
        run_decontaminate(out, str(tmp_path / "next"), DecontaminateConfig(tasks=[str(TASKS / "mini_piqa.jsonl")]))
    with pytest.raises(InputError, match="manifest version"):  # as the output of a rerun ...
        run_dedup(runs["ingest"].out, out, DedupConfig())
    assert not run_dedup(runs["ingest"].out, out, DedupConfig(), force=True).skipped  # ... unless forced
    assert raw(out)["manifest_version"] == MANIFEST_VERSION


def test_missing_field_names_the_file_and_the_field(
    runs: dict[str, StageResult[Any]], tmp_path: Path
) -> None:
    def drop(m: dict[str, Any]) -> None:
        del m["stats"]["documents_in"]
        del m["lsh"]["rows"]

    out = edited(runs["dedup"].out, tmp_path / "dedup", drop)
    with pytest.raises(InputError) as e:
        dataset.read_manifest(out)
    msg = str(e.value)
    assert msg.startswith(f"{out}/manifest.json: ") and "--force" in msg
    assert "  stats.documents_in: Field required" in msg and "  lsh.rows: Field required" in msg
    with pytest.raises(InputError, match=r"stats\.documents_in"):
        dataset.list_shards(out)


def test_wrong_type_names_the_field(runs: dict[str, StageResult[Any]], tmp_path: Path) -> None:
    source = next(iter(finished(runs, TokenizeManifest).stats.per_source))

    def retype(m: dict[str, Any]) -> None:
        m["stats"]["per_source"][source]["in"] = "many"
        m["tokenizer"]["vocab_size"] = None

    out = edited(runs["tokenize"].out, tmp_path / "tokenize", retype)
    with pytest.raises(InputError) as e:
        dataset.read_manifest(out)
    msg = str(e.value)
    assert f"{out}/manifest.json" in msg
    assert f"  stats.per_source.{source}.in: got 'many': Input should be a valid integer" in msg
    assert "  tokenizer.vocab_size: got None: Input should be a valid integer" in msg
    # training reads the vocabulary from the manifest next to the data: the same error, not a KeyError
    with pytest.raises(InputError, match=r"tokenizer\.vocab_size"):
        token_manifest(f"{out}/data_text_document")


def test_unknown_or_missing_stage(runs: dict[str, StageResult[Any]], tmp_path: Path) -> None:
    out = edited(runs["ingest"].out, tmp_path / "a", lambda m: m.update(stage="filter"))
    with pytest.raises(
        InputError, match="stage: got 'filter', expected one of ingest, quality, dedup, spans, substrings, decontaminate, blend, tokenize"
    ):
        dataset.read_manifest(out)
    out = edited(runs["ingest"].out, tmp_path / "b", lambda m: m.pop("stage"))
    with pytest.raises(InputError, match="stage: missing"):
        dataset.read_manifest(out)
    out = edited(runs["ingest"].out, tmp_path / "c", lambda m: m.update(manifest_version="1"))
    with pytest.raises(InputError, match="manifest_version: got '1'"):
        dataset.read_manifest(out)


def test_manifest_without_version_is_read_as_version_1(
    runs: dict[str, StageResult[Any]], tmp_path: Path
) -> None:
    """Run directories made before manifests had versions keep working: same layout, version 1."""
    out = edited(runs["dedup"].out, tmp_path / "dedup", lambda m: m.pop("manifest_version"))
    m = dataset.read_manifest(out, DedupManifest)
    assert m is not None and m.manifest_version == 1 and m.stats == finished(runs, DedupManifest).stats
    again = run_dedup(runs["ingest"].out, out, DedupConfig())
    assert again.skipped and again.manifest == m  # still the completion marker: the rerun is skipped
    assert "manifest_version" not in raw(out)  # and the file is left as it was


def test_wrong_kind_of_dataset(runs: dict[str, StageResult[Any]]) -> None:
    with pytest.raises(
        PathError, match="holds the output of `tokenize`, not documents: nothing to deduplicate"
    ):
        run_dedup(runs["tokenize"].out, str(Path(runs["tokenize"].out).parent / "x"), DedupConfig())
    with pytest.raises(
        InputError, match="the manifest of a `blend` output, where a `tokenize` output was expected"
    ):
        token_manifest(f"{runs['blend'].out}/data_text_document")
    assert token_manifest(f"{runs['blend'].out}/../nowhere/data_text_document") is None
