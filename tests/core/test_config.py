"""Config: YAML → pydantic, errors that name the field, the bad value and what is accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from selene.config import ExecutorConfig
from selene.config.pipeline import PipelineConfig, load_pipeline_config, load_stage_config, load_stage_files
from selene.errors import ConfigError
from selene.ingest.config import IngestConfig, SourceSpec

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(text)
    return p


def test_demo_config_is_valid() -> None:
    cfg = load_pipeline_config(ROOT / "configs" / "demo.yaml")
    assert isinstance(cfg, PipelineConfig) and cfg.ingest.sources
    assert cfg.stage_dir("ingest") == "runs/demo/ingest"


def test_unknown_key_names_the_key_its_line_and_the_accepted_keys(tmp_path: Path) -> None:
    p = write(tmp_path, "run_dir: r\ningest:\n  shard_docs: 2\n  wrokers: 3\n")
    with pytest.raises(ConfigError) as e:
        load_pipeline_config(p)
    msg = str(e.value)
    assert "ingest.wrokers (line 4): unknown key" in msg
    assert "accepted keys here: sources, clean, langid, filters" in msg


def test_bad_value_names_field_value_and_accepted(tmp_path: Path) -> None:
    p = write(tmp_path, "run_dir: r\nexecutor:\n  kind: gpus\ningest:\n  clean:\n    normalization: NFX\n")
    with pytest.raises(ConfigError) as e:
        load_pipeline_config(p)
    msg = str(e.value)
    assert "executor.kind (line 3): got 'gpus': Input should be 'processes', 'threads' or 'dask'" in msg
    assert "ingest.clean.normalization (line 6): got 'NFX'" in msg and "'NFC', 'NFKC' or 'none'" in msg


def test_missing_required_and_bad_types(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_pipeline_config(write(tmp_path, "executor: {workers: zero}\n"))
    msg = str(e.value)
    assert "run_dir: Field required" in msg
    assert "executor.workers (line 1): got 'zero'" in msg


def test_not_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_pipeline_config(write(tmp_path, "a: [1,\n"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_pipeline_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_pipeline_config(write(tmp_path, "- 1\n- 2\n"))


def test_stage_config_from_stage_or_pipeline_file(tmp_path: Path) -> None:
    p = write(tmp_path, "shard_docs: 3\nexecutor: {workers: 2}\n")
    cfg, ex = load_stage_files(p, IngestConfig, "ingest")
    assert cfg.shard_docs == 3 and ex == ExecutorConfig(workers=2)
    q = tmp_path / "pipe.yaml"
    q.write_text("run_dir: r\nexecutor: {kind: threads, workers: 4}\ningest: {shard_docs: 4}\n")
    cfg, ex = load_stage_files(q, IngestConfig, "ingest")
    assert cfg.shard_docs == 4 and (ex.kind, ex.workers) == ("threads", 4)
    assert load_stage_config(q, IngestConfig, "ingest").shard_docs == 4
    with pytest.raises(ConfigError) as e:
        load_stage_config(write(tmp_path, "langid: {min_score: 2}\n"), IngestConfig, "ingest")
    msg = str(e.value)
    assert "langid.min_score (line 1): got 2: Input should be less than or equal to 1" in msg


def test_source_spec_parsing() -> None:
    s = SourceSpec.parse("pile=data/*.jsonl.zst")
    assert (s.name, s.glob, s.source_override) == ("pile", "data/*.jsonl.zst", False)
    with pytest.raises(ConfigError, match="expected NAME=GLOB"):
        SourceSpec.parse("data/*.jsonl")
    with pytest.raises(ConfigError, match="source names use letters"):
        SourceSpec.parse("bad/name=x")


def test_duplicate_source_names_rejected() -> None:
    with pytest.raises(ValueError, match="repeated: a"):
        IngestConfig(sources=[SourceSpec(name="a", glob="x"), SourceSpec(name="a", glob="y")])


def test_mt_nlg_recipe_validates_and_fits_2240_gpus() -> None:
    from selene.pipeline import active_stages
    from selene.train.launch import check_layout, load_train_config

    cfg = load_pipeline_config(ROOT / "configs" / "mt-nlg.yaml")
    assert len(cfg.blend.epochs) == 15 and cfg.decontaminate.ngram == 13
    assert active_stages(cfg) == ["ingest", "dedup", "decontaminate", "blend", "tokenize", "train", "eval"]
    train, out = load_train_config(str(ROOT / "configs" / "mt-nlg.yaml"), [])
    dims = check_layout(train, 2240)
    assert (dims.pp, dims.tp, dims.dp) == (35, 8, 8) and out == "runs/mt-nlg/train"
    with pytest.raises(ConfigError, match="world size is 2048"):
        check_layout(train, 2048)


def test_executor_settings_moved_out_of_stage_sections(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_pipeline_config(write(tmp_path, "run_dir: r\ndedup: {workers: 2}\n"))
    assert "dedup.workers moved to the top-level `executor` section" in str(e.value)
    with pytest.raises(ConfigError, match="needs kind: dask"):
        load_pipeline_config(write(tmp_path, "run_dir: r\nexecutor: {address: 'tcp://h:8786'}\n"))
