"""A key given twice in a YAML mapping is an error naming the file and both lines, in every YAML file
selene reads: PyYAML would keep the last one silently (a pipeline section, an ablation variant lost)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selene.cli import main
from selene.config import parse_yaml
from selene.config.files import DuplicateKeyError
from selene.errors import ConfigError, PathError

ROOT = Path(__file__).resolve().parents[2]


def test_pipeline_section_twice_is_refused_naming_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "pipe.yaml"
    p.write_text("run_dir: r\ndedup:\n  threshold: 0.7\ningest:\n  shard_docs: 5\ndedup:\n  threshold: 0.9\n")
    assert main(["config", "validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: key 'dedup' is given twice in one mapping, at line 2 and line 6" in " ".join(err.split())
    assert "Traceback" not in err


def test_stage_command_with_a_duplicated_key_leaves_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "hello"}\n')
    cfg = tmp_path / "ingest.yaml"
    cfg.write_text("shard_docs: 5\nclean:\n  ftfy: true\n  ftfy: false\n")
    out = tmp_path / "out"
    assert main(["ingest", "-c", str(cfg), "-o", str(out), "--source", f"a={tmp_path}/a.jsonl"]) == 2
    assert "key 'ftfy' is given twice in one mapping, at line 3 and line 4" in " ".join(
        capsys.readouterr().err.split()
    )
    assert not out.exists()


def test_two_ablation_variants_of_one_name_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    abl = tmp_path / "abl.yaml"
    abl.write_text(
        f"pipeline: {ROOT / 'configs' / 'demo.yaml'}\nout: {tmp_path / 'out'}\nvariants:\n"
        "  base: {}\n  strict: {quality.fraction: 0.5}\n  strict: {quality.fraction: 0.2}\n"
    )
    assert main(["ablate", str(abl)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{abl}: key 'strict' is given twice in one mapping, at line 5 and line 6" in err
    assert not (tmp_path / "out").exists()


def test_scaling_study_file_with_a_duplicated_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(f"out: {tmp_path / 'out'}\nsteps: 8\ndevice: cpu\nsteps: 4\nruns: []\n")
    assert main(["scaling-study", str(study)]) == 2
    assert "key 'steps' is given twice in one mapping, at line 2 and line 4" in " ".join(
        capsys.readouterr().err.split()
    )
    assert not (tmp_path / "out").exists()


def test_harness_task_file_and_set_values_use_the_same_loader(tmp_path: Path) -> None:
    from selene.decontaminate.tasks import load_tasks
    from selene.train.launch import load_train_config

    task = tmp_path / "task.yaml"
    task.write_text("task: t\ndataset_path: json\ntask: u\n")
    with pytest.raises(
        PathError, match=r"task\.yaml: key 'task' is given twice in one mapping \(lines 1 and 3\)"
    ):
        load_tasks([str(task)])
    from selene.eval.harness import resolve_tasks_dir

    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.yaml").write_text("task: t\ndataset_kwargs: {data_files: a.jsonl}\ntask: u\n")
    with pytest.raises(
        ConfigError, match=r"t\.yaml: key 'task' is given twice in one mapping \(lines 1 and 3\)"
    ):
        resolve_tasks_dir(tmp_path / "tasks", tmp_path / "copy", tmp_path / "cache")
    train = tmp_path / "train.yaml"
    train.write_text(f"out: {tmp_path / 't'}\ndata: {{prefixes: [x]}}\n")
    with pytest.raises(ConfigError, match=r"--set 'optim=\{lr: 1, lr: 2\}'.*key 'lr' is given twice"):
        load_train_config(str(train), ["optim={lr: 1, lr: 2}"])


def test_the_loader_keeps_yaml_merge_keys_and_the_shipped_files_have_no_duplicates() -> None:
    """``<<: *anchor`` is not a second key: the mapping's own keys win over merged ones."""
    assert parse_yaml("base: &b {lr: 1, steps: 2}\nrun:\n  <<: *b\n  lr: 3\n")["run"] == {"lr": 3, "steps": 2}
    with pytest.raises(DuplicateKeyError):
        parse_yaml("a:\n  - {x: 1, y: 2, x: 3}\n")
    for path in [*sorted((ROOT / "configs").glob("*.yaml")), ROOT / "prefect.yaml"]:
        assert parse_yaml(path.read_text()) is not None, path
