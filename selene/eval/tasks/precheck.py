"""What `selene eval` can refuse before lm-eval loads: importing lm-eval and indexing its registry
(every one of its ~14,000 task YAMLs) took 13-25 s before a mistyped ``--task-data`` name, a missing
split or a task without data was said.

Here a named task's YAML is found by its path alone (lm-eval keeps a task in a folder named after
it: ``tasks/piqa/piqa.yaml``, ``tasks/super_glue/boolq/default.yaml``), lm-eval's folder located
without importing it, and read as plain YAML with its ``include`` chain. Only what is certain is
refused here, with the messages the full check gives (`selene.eval.harness.build_tasks`); a name
found no such way (a tag, a group, a typo) is left to the registry, which knows them all.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from selene.errors import ConfigError
from selene.eval.tasks import data, suites


def lm_eval_tasks() -> Path | None:
    """lm-eval's own task folder, found on the import path without importing lm-eval or asking the
    import system (None: not there, e.g. an editable install behind an import hook; nothing is then
    checked here)."""
    for root in sys.path:
        tasks = Path(root or ".", "lm_eval", "tasks")
        if (tasks.parent / "__init__.py").is_file() and tasks.is_dir():
            return tasks
    return None


class _Loader(yaml.SafeLoader):
    """Plain YAML with lm-eval's ``!function`` helpers (and any other tag) read as None: only the
    dataset and split fields are wanted here."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # a SafeLoader
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return doc if isinstance(doc, dict) else None


def task_config(path: Path, depth: int = 0) -> dict[str, Any] | None:
    """The task YAML at `path` over the files it includes (as lm-eval merges them: the file's own
    keys win); None when it, or one it includes, cannot be read."""
    doc = _read(path)
    if doc is None or depth > 8:
        return None
    base = doc.get("include")
    if base is None:
        return doc
    if not isinstance(base, str):
        return None
    below = task_config(path.parent / base if not os.path.isabs(base) else Path(base), depth + 1)
    return None if below is None else {**below, **{k: v for k, v in doc.items() if k != "include"}}


@functools.lru_cache(maxsize=8)
def _yaml_files(folder: Path) -> tuple[tuple[str, ...], ...]:
    """The YAML files under `folder` as path parts, sorted (listed once: lm-eval has ~14,000)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = Path(root).relative_to(folder).parts
        found += [(*rel, f) for f in files if f.endswith(".yaml")]
    return tuple(sorted(found))


def find_task(name: str, folders: list[Path]) -> dict[str, Any] | None:
    """The config of the plain task `name` (not a group or tag), from a YAML whose path names it in
    `folders` (the first folder that has one wins, as local tasks shadow lm-eval's); None when none
    is found this way."""
    declares = re.compile(rf"^task:\s*['\"]?{re.escape(name)}['\"]?\s*$", re.M)
    for folder in folders:
        for parts in _yaml_files(folder):
            if name != parts[-1].removesuffix(".yaml") and name not in parts[:-1]:
                continue
            path = folder.joinpath(*parts)
            try:
                if not declares.search(path.read_text(encoding="utf-8")):
                    continue
            except (OSError, UnicodeDecodeError):
                continue
            cfg = task_config(path)
            if cfg is not None and cfg.get("task") == name and "group" not in cfg and "task_list" not in cfg:
                return cfg
    return None


def _hub_dataset(cfg: dict[str, Any]) -> str | None:
    """The Hub dataset `cfg` reads (``namespace/name``), None when it reads local files or a file
    format (json, parquet ...)."""
    path = cfg.get("dataset_path")
    kwargs = cfg.get("dataset_kwargs")
    if not isinstance(path, str) or path.count("/") > 1 or os.path.exists(path):
        return None
    if isinstance(kwargs, dict) and kwargs.get("data_files"):
        return None
    if path in (
        "json",
        "csv",
        "parquet",
        "text",
        "arrow",
        "pandas",
        "webdataset",
        "imagefolder",
        "audiofolder",
    ):
        return None
    return path


def _absent(cfg: dict[str, Any], cache: Path) -> bool:
    """The datasets `cache` holds nothing at all of the task's Hub dataset, in any configuration or
    version: offline, `datasets` cannot load it. Its folder (``<namespace>___<name>``, the name in
    snake case) is compared without case and underscores, so that only a certain absence counts."""
    hub = _hub_dataset(cfg)
    if hub is None:
        return False

    def key(name: str) -> str:
        return name.replace("/", "").replace("_", "").lower()

    try:
        present = {key(p.name) for p in cache.iterdir()}
    except OSError:  # no cache folder at all
        return True
    return key(hub) not in present


def precheck(
    tasks: list[str], num_fewshot: int, task_data: dict[str, str], include: list[Path], cache: Path
) -> None:
    """Refuse, before lm-eval loads, what is certainly wrong: a ``--task-data`` folder that does not
    exist, a ``--task-data`` name that is none of the tasks evaluated, a split a task reads that its
    ``--task-data`` folder lacks, and a task whose Hub dataset is nowhere in the datasets `cache`."""
    for task, directory in task_data.items():
        if not Path(directory).expanduser().is_dir():
            raise ConfigError(f"--task-data {task}={directory}: not a directory")
    runs = suites.expand(tasks, num_fewshot)
    folders = [*include, *filter(None, [lm_eval_tasks()])]
    configs = {r.task: find_task(r.task, folders) for r in runs}
    if configs and all(cfg is not None for cfg in configs.values()):  # no tag or group: the tasks are known
        for task in task_data:
            if task not in configs:
                raise ConfigError(
                    f"--task-data names {task!r}, which is not among the tasks evaluated "
                    f"({', '.join(sorted(configs))})"
                )
    for run in runs:
        cfg = configs[run.task]
        if cfg is None:
            continue
        if run.task in task_data:
            data.local_overrides(run.task, cfg, task_data[run.task], run.shots, cache)
        elif _absent(cfg, cache):
            raise data.not_cached(run.task, cfg, run.shots, cache)
