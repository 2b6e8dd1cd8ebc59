"""`selene eval`'s checks before lm-eval loads refuse only what is certainly wrong: what they cannot
tell (a tag, a dataset somewhere in the cache) is left to the registry's full check."""

from __future__ import annotations

from pathlib import Path

import pytest

from selene.errors import ConfigError
from selene.eval.harness import TASKS_DIR
from selene.eval.tasks.precheck import find_task, lm_eval_tasks, precheck


def test_tasks_are_found_by_their_path() -> None:
    tasks = lm_eval_tasks()
    assert tasks is not None and (tasks / "piqa").is_dir()
    piqa = find_task("piqa", [TASKS_DIR, tasks])
    assert piqa is not None and piqa["validation_split"] == "validation" and piqa["training_split"] == "train"
    boolq = find_task("boolq", [tasks])  # in super_glue/boolq/, its splits from an included file or its own
    assert (
        boolq is not None and boolq["dataset_path"] == "aps/super_glue" and boolq["dataset_name"] == "boolq"
    )
    assert find_task("selene_piqa", [TASKS_DIR]) is not None
    assert find_task("anli", [tasks]) is None  # a tag: only the registry knows what it stands for
    assert find_task("pqia", [TASKS_DIR, tasks]) is None


def test_what_it_cannot_tell_is_left_to_the_registry(tmp_path: Path) -> None:
    tasks = lm_eval_tasks()
    assert tasks is not None
    data = tmp_path / "anli_r1"
    data.mkdir()
    (data / "test_r1.jsonl").write_text("{}\n")
    cache = tmp_path / "cache"
    # a tag with data for one of its tasks: the name is not refused here (the registry expands the tag)
    precheck(["anli"], 0, {"anli_r1": str(data)}, [TASKS_DIR, tasks], cache)
    # a Hub dataset with any folder of it in the cache: the loader decides
    (cache / "aps___super_glue").mkdir(parents=True)
    precheck(["boolq"], 0, {}, [TASKS_DIR, tasks], cache)
    # the bundled tasks read their own files
    precheck(["selene_piqa", "selene_cloze"], 0, {}, [TASKS_DIR, tasks], tmp_path / "no-cache")
    (cache / "aps___super_glue").rmdir()
    with pytest.raises(ConfigError, match="needs the Hugging Face dataset aps/super_glue"):
        precheck(["boolq"], 0, {}, [TASKS_DIR, tasks], cache)
    with pytest.raises(
        ConfigError, match=r"--task-data names 'anli_r1', which is not among the tasks evaluated \(piqa\)"
    ):
        precheck(["piqa"], 0, {"anli_r1": str(data)}, [TASKS_DIR, tasks], cache)
