"""Prefect wiring: the ingest flow publishes its artifacts; `selene run` runs the pipeline flow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selene.cli import main
from selene.ingest.config import IngestConfig
from selene.io import dataset
from selene.manifest import StageManifest as AnyManifest
from tests.ingest.test_ingest import build_corpus


def read_finished(directory: Path) -> AnyManifest:
    m = dataset.read_manifest(str(directory))
    assert m is not None, f"{directory} has no manifest"
    return m


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path_factory.mktemp("flow-corpus"))[0]


def test_ingest_flow_publishes_stats_artifacts(specs, tmp_path: Path, prefect_api: str) -> None:  # type: ignore[no-untyped-def]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from selene.config import ExecutorConfig
    from selene.flows.stage import run_flow
    from selene.job import Job

    job = Job("ingest", None, str(tmp_path / "ingest"), IngestConfig(sources=specs), ExecutorConfig(kind="threads", workers=2))
    result = run_flow(job, False)
    assert not result.skipped and result.manifest.stats.documents_in == 25
    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["ingest-stats", "ingest-reasons"])))
    # the newest of each key: other tests on the session's server publish the same keys
    by_key = {a.key: a for a in sorted(arts, key=lambda a: a.created or 0)}
    assert set(by_key) == {"ingest-stats", "ingest-reasons"}
    assert "Books3" in str(by_key["ingest-stats"].data) and "lang:de" in str(by_key["ingest-reasons"].data)
    assert run_flow(job, False).skipped


@pytest.mark.parametrize("mode", ["prefect", "direct"])
def test_memory_paths_run_with_processes_requested(specs, mode: str, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    from selene.config import ExecutorConfig
    from selene.flows.stage import run_flow
    from selene.ingest.config import SourceSpec
    from selene.io import fs
    from selene.job import Job, run_direct

    if mode == "prefect":
        request.getfixturevalue("prefect_api")
    fs.atomic_write("memory://flowin/00.jsonl.zst", Path(specs[0].glob).parent.joinpath("00.jsonl.zst").read_bytes())
    cfg = IngestConfig(sources=[SourceSpec(name="p", glob="memory://flowin/*.jsonl.zst")])
    job = Job("ingest", None, f"memory://flowout-{mode}/ingest", cfg, ExecutorConfig(kind="processes", workers=2))
    result = (run_flow if mode == "prefect" else run_direct)(job, False)
    assert result.manifest.stats.documents_in == 10


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_selene_run_writes_each_stage_under_run_dir(specs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "p.yaml"
    sources = "\n".join(f"    - {{name: {s.name}, glob: '{s.glob}'}}" for s in specs)
    tasks = Path(__file__).resolve().parents[2] / "data" / "tasks" / "mini_piqa.jsonl"
    cfg.write_text(
        f"name: t\nrun_dir: {tmp_path / 'run'}\ningest:\n  sources:\n{sources}\n"
        f"decontaminate:\n  tasks: ['{tasks}']\n"
        "tokenize: {vocab_size: 600}\n"
        "train: {steps: 2, batch: {global_batch: 4, micro_batch: 2}, eval_every: 1, eval_batches: 1}\n"
        "eval: {limit: 2, tasks: [selene_piqa]}\n"
    )
    assert main(["run", str(cfg)]) == 0
    manifests = {s: read_finished(tmp_path / "run" / s) for s in ("ingest", "dedup", "decontaminate")}
    assert manifests["ingest"].stats.documents_in == 25
    assert manifests["dedup"].stats.documents_in == manifests["ingest"].stats.documents_out
    assert manifests["decontaminate"].stats.documents_in == manifests["dedup"].stats.documents_out
    metrics = (tmp_path / "run" / "train" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["step"] for x in metrics] == [1, 2]
    assert (tmp_path / "run" / "train" / "checkpoints" / "step-000002" / "meta.json").exists()
    summary = json.loads((tmp_path / "run" / "eval" / "summary.json").read_text())
    assert "acc" in summary["tasks"]["selene_piqa"]
    report = (tmp_path / "run" / "report.md").read_text()
    for section in ("Documents through the data stages", "| dedup |", "Blend", "Tokens", "train/loss.svg", "selene_piqa"):
        assert section in report, section
    # a slice of the pipeline, one stage forced: it reruns and gives the same bytes
    before = manifests["dedup"].shards
    assert "report: " in capsys.readouterr().out
    assert main(["run", str(cfg), "--from", "dedup", "--until", "dedup", "--force", "dedup"]) == 0
    out = capsys.readouterr().out
    assert "dedup →" in out and "(complete already" not in out and "tokenize →" not in out
    assert read_finished(tmp_path / "run" / "dedup").shards == before
    assert main(["run", str(cfg), "--from", "eval", "--until", "dedup"]) == 2
    assert "comes after" in capsys.readouterr().err
