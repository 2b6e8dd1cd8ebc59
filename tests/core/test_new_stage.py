"""A stage added the way docs/architecture.md says (one package and one `Stage(...)`, here
`tests.toy_stage`) is a command, a Prefect flow, a deployment and a pipeline section, with no other
edit; and the pipeline file's sections are exactly the registry's stages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selene import pipeline, registry
from selene.config.pipeline import PipelineBase, load_pipeline_config, pipeline_model
from selene.errors import ConfigError
from tests.corpus import write_dataset
from tests.toy_stage import CENSUS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [("d1", "a short one"), ("d2", "a somewhat longer document"), ("d3", "code()")]


def test_pipeline_sections_are_the_registry_s_stages() -> None:
    assert pipeline_model().stage_names() == list(registry.NAMES)
    assert set(pipeline_model().model_fields) == set(PipelineBase.model_fields) | set(registry.NAMES)


def test_a_new_stage_is_a_pipeline_section(tmp_path: Path) -> None:
    cfg_file = tmp_path / "p.yaml"
    cfg_file.write_text("run_dir: r\ncensus: {min_chars: 7}\n")
    with pytest.raises(ConfigError, match="census"):  # not a stage yet
        load_pipeline_config(cfg_file)
    with registry.extended(CENSUS):
        cfg = load_pipeline_config(cfg_file)
        assert cfg.section("census").min_chars == 7
        assert pipeline.active_stages(cfg)[-1] == "census"
        job = pipeline.job(cfg, "census")
        assert job.inp == pipeline.stage_output(cfg, "eval") and job.out == "r/census"
        cfg_file.write_text("run_dir: r\ncensus: {min_char: 7}\n")
        with pytest.raises(ConfigError, match=r"census.min_char \(line 2\): unknown key; accepted keys here: min_chars"):
            load_pipeline_config(cfg_file)
    assert "census" not in pipeline_model().model_fields


def _selene(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`selene ARGS` in a process whose registry has the census stage (added before the CLI is made)."""
    code = (
        "import sys\nfrom selene import registry\nfrom tests.toy_stage import CENSUS\n"
        "with registry.extended(CENSUS):\n    from selene.cli import main\n    code = main(sys.argv[1:])\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "SELENE_PREFECT": "off", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_a_new_stage_is_a_command(tmp_path: Path) -> None:
    data = write_dataset(str(tmp_path / "docs"), DOCS, source="wiki")
    help_ = _selene(tmp_path, "--help")
    assert help_.returncode == 0 and "census" in help_.stdout
    opts = _selene(tmp_path, "census", "--help")
    assert "--min-chars" in opts.stdout and "--input" in opts.stdout and "--workers" in opts.stdout
    done = _selene(tmp_path, "census", "-i", data, "-o", str(tmp_path / "out"), "--min-chars", "7", "--workers", "2")
    assert done.returncode == 0, done.stderr
    census = json.loads((tmp_path / "out" / "census.json").read_text())
    assert census == {"wiki": {"documents": 2, "chars": 37}}
    assert "wiki: 2 documents, 37 characters" in done.stdout
    defaults = _selene(tmp_path, "config", "defaults", "census")
    assert "min_chars: 0" in defaults.stdout


def test_a_new_stage_is_a_flow_and_a_deployment(tmp_path: Path, prefect_api: str) -> None:
    from selene.flows import deploy, stage
    from selene.job import Job
    from selene.runner import runtime

    data = write_dataset(str(tmp_path / "docs"), DOCS, source="wiki")
    with registry.extended(CENSUS):
        assert stage.stage_flow("census").name == "census"
        assert deploy.run_census_from_file.name == "selene-census"
        rt = runtime()
        assert rt.api is not None
        result = rt.run(Job("census", data, str(tmp_path / "out"), CENSUS.config_model()()))
    assert result.info["census"] == {"wiki": {"documents": 3, "chars": 43}}
