"""Evaluation data to decontaminate against: jsonl files of examples, or lm-eval-harness task configs.

Only the *text* of a task matters, not how the harness renders it: ``doc_to_text`` / ``doc_to_target``
templates rearrange a document's string fields (plus fixed words like "Question:"), so every string
field of every document is taken. One example becomes one text, its string fields in document order
joined by newlines, so that "the median example is short" (the short-task rule in `overlap.py`)
measures whole examples, not their label fields.

Accepted paths:

- ``name.jsonl``: one JSON object per line; the task is called ``name``.
- an lm-eval-harness task directory (every ``*.yaml`` / ``*.yml`` below it), or one such YAML file. Of
  a config, only ``task``, ``include``, ``dataset_path``, ``dataset_kwargs`` (``data_files``,
  ``field``), ``test_split`` and ``validation_split`` are read. The evaluated splits are taken
  (``test_split`` and ``validation_split``; if the config names neither, every listed split but
  ``train``): training and few-shot splits are not what a benchmark score is computed on. Data files
  are resolved against the YAML's directory (or a local ``dataset_path`` directory); jsonl, json
  (a list of objects, or ``{field: [...]}``) and parquet are read. ``include:`` is resolved (keys of
  the including file win); ``!function`` tags are read as None. Configs without a string ``task``
  (groups, templates) are skipped; Hugging Face Hub datasets are not fetched: that is an error
  saying to point ``data_files`` at a local export.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from selene.config.files import DuplicateKeyError, UniqueKeyLoader
from selene.errors import ConfigError, InputError, PathError
from selene.io import fs

ACCEPTED = (
    "a .jsonl file of examples (one JSON object per line), an lm-eval-harness task directory "
    "(with *.yaml task configs) or one such .yaml file"
)
_DATA_FORMATS = "jsonl, json (a list of objects) or parquet"


@dataclass
class TaskText:
    """The text of one evaluation task: one string per example (its string fields, newline-joined)."""

    task: str
    texts: list[str]


def load_tasks(paths: list[str]) -> list[TaskText]:
    """Every task under `paths`, in order; task names must be unique (they name report rows). Read
    before any work: a path that is missing or holds no task the way it should is the user's to fix
    (`PathError`, exit 2)."""
    out: list[TaskText] = []
    origin: dict[str, str] = {}
    for path in paths:
        try:
            loaded = _load_path(path)
        except InputError as e:
            raise PathError(str(e)) from None
        for task in loaded:
            if task.task in origin:
                raise ConfigError(
                    f"decontam.tasks: two tasks are named {task.task!r} ({origin[task.task]} and {path}); "
                    "rename one file or `task:`"
                )
            origin[task.task] = path
            out.append(task)
    return out


def strings(value: Any) -> Iterator[str]:
    """The string values inside a JSON value, depth first in document order (keys are not text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def _example_text(doc: dict[str, Any]) -> str:
    return "\n".join(s for s in strings(doc) if s.strip())


def _load_path(path: str) -> list[TaskText]:
    f, p = fs.get_fs(path)
    if not f.exists(p):
        raise InputError(f"{path}: no such file or directory; decontam tasks are {ACCEPTED}")
    if f.isdir(p):
        configs = sorted(m for m in f.find(p) if m.endswith((".yaml", ".yml")))
        tasks = [t for c in configs if (t := _load_harness(fs.unstrip(f, c))) is not None]
        if not tasks:
            raise InputError(f"{path}: directory has no lm-eval task config (*.yaml with `task: name`)")
        return tasks
    name = os.path.basename(p)
    if name.endswith((".yaml", ".yml")):
        task = _load_harness(path)
        if task is None:
            raise InputError(f"{path}: not an lm-eval task config (no string `task:` key)")
        return [task]
    if name.endswith(".jsonl"):
        docs = _read_jsonl(path)
        if not docs:
            raise InputError(f"{path}: empty task file (no examples)")
        return [TaskText(name[: -len(".jsonl")], [_example_text(d) for d in docs])]
    raise InputError(f"{path}: unsupported task file; accepted: {ACCEPTED}")


def _read_jsonl(path: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for lineno, raw in enumerate(fs.read_bytes(path).split(b"\n"), 1):
        try:
            line = raw.decode("utf-8").strip()
            if not line:
                continue
            doc = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputError(
                f"{path}:{lineno}: not a JSON line ({e}); expected one JSON object per line"
            ) from None
        if not isinstance(doc, dict):
            raise InputError(f"{path}:{lineno}: a JSON {type(doc).__name__}, expected an object per line")
        docs.append(doc)
    return docs


# ------------------------------------------------------------------------------ lm-eval-harness


class _HarnessLoader(UniqueKeyLoader):
    """selene's loader (a key given twice is an error) plus the harness's ``!function module.name`` tag
    (read as None: we never call code)."""


_HarnessLoader.add_constructor("!function", lambda loader, node: None)


def _read_yaml(path: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    if path in seen:
        raise InputError(f"{path}: `include:` cycle ({' -> '.join((*seen, path))})")
    try:
        cfg = yaml.load(fs.read_text(path), Loader=_HarnessLoader)
    except DuplicateKeyError as e:
        raise InputError(f"{path}: {e}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(cfg, dict):
        return {}
    include = cfg.pop("include", None)
    if isinstance(include, str):
        inc = include if os.path.isabs(include) else os.path.join(os.path.dirname(path), include)
        if not fs.exists(inc):
            raise InputError(f"{path}: `include: {include}` not found (looked for {inc})")
        cfg = {**_read_yaml(inc, (*seen, path)), **cfg}
    return cfg


def _load_harness(path: str) -> TaskText | None:
    """The task of one harness config, or None for configs that are not a single task."""
    cfg = _read_yaml(path)
    name = cfg.get("task")
    if not isinstance(name, str):
        return None
    texts = [_example_text(d) for file in _data_files(path, cfg) for d in _read_data(file, cfg, path)]
    if not texts:
        raise InputError(f"{path}: task {name!r} has no documents in its data files")
    return TaskText(name, texts)


def _data_files(yaml_path: str, cfg: dict[str, Any]) -> list[str]:
    """The local data files of the evaluated splits, resolved; missing ones are an InputError."""
    here = os.path.dirname(yaml_path)
    ds_path = cfg.get("dataset_path")
    kwargs = cfg.get("dataset_kwargs") or {}
    files = kwargs.get("data_files") if isinstance(kwargs, dict) else None
    local_ds = None
    if isinstance(ds_path, str) and ds_path not in ("json", "parquet"):
        cand = ds_path if os.path.isabs(ds_path) else os.path.join(here, ds_path)
        if fs.exists(cand):
            local_ds = cand
        elif files is None:
            raise InputError(
                f"{yaml_path}: dataset_path {ds_path!r} is not a local file or directory (Hugging Face Hub "
                "datasets are not downloaded); set dataset_kwargs.data_files to local jsonl/json/parquet files"
            )
    if files is None:
        if local_ds is None:
            raise InputError(f"{yaml_path}: no dataset_kwargs.data_files and no local dataset_path")
        f, p = fs.get_fs(local_ds)
        if not f.isdir(p):
            return [local_ds]
        found = [fs.unstrip(f, m) for m in sorted(f.find(p))]
        files = {os.path.basename(m).split(".")[0]: m for m in found}
    if not isinstance(files, dict):  # a plain file or list is the "train" split to `datasets`
        files = {"train": files}
    wanted = [cfg[k] for k in ("test_split", "validation_split") if isinstance(cfg.get(k), str)]
    splits = wanted or [s for s in files if s != "train"] or list(files)
    out: list[str] = []
    for split in splits:
        if split not in files:
            raise InputError(
                f"{yaml_path}: split {split!r} is not in dataset_kwargs.data_files {sorted(files)}"
            )
        entry = files[split]
        for rel in [entry] if isinstance(entry, str) else list(entry):
            out.append(_resolve(yaml_path, str(rel), local_ds))
    return out


def _resolve(yaml_path: str, rel: str, local_ds: str | None) -> str:
    if os.path.isabs(rel) or "://" in rel:
        cands = [rel]
    else:
        cands = [os.path.join(os.path.dirname(yaml_path), rel)]
        if local_ds is not None:
            cands.append(os.path.join(local_ds, rel))
    for c in cands:
        if fs.exists(c):
            return c
    raise InputError(f"{yaml_path}: data file {rel!r} not found (looked for {', '.join(cands)})")


def _read_data(path: str, cfg: dict[str, Any], yaml_path: str) -> list[dict[str, Any]]:
    if path.endswith(".jsonl"):
        return _read_jsonl(path)
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        f, p = fs.get_fs(path)
        with f.open(p, "rb") as fh:
            return list(pq.read_table(fh).to_pylist())
    if not path.endswith(".json"):
        raise InputError(f"{path} (data of {yaml_path}): unsupported data file; accepted: {_DATA_FORMATS}")
    try:
        data = json.loads(fs.read_bytes(path))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _read_jsonl(path)  # `datasets` reads JSON lines from .json files too
    field = (cfg.get("dataset_kwargs") or {}).get("field")
    if isinstance(data, dict) and isinstance(field, str):
        data = data.get(field)
    if not isinstance(data, list):
        raise InputError(f"{path} (data of {yaml_path}): expected a JSON list of objects or JSON lines")
    return [d for d in data if isinstance(d, dict)]
