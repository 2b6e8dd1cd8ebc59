"""Where a harness task's documents come from, offline: local files named per task (``--task-data
TASK=DIR``), or the Hugging Face datasets cache; and the one-line error when neither holds them.

Local files replace the task's dataset and nothing else: lm-eval's own YAML still makes the prompts,
the choices and the metrics. A directory holds one file per split, named after the split as the
task's YAML names it (``test_split``, ``validation_split``, ``training_split``, ``fewshot_split``):
``validation.jsonl`` for piqa, ``dev_r1.jsonl`` and ``test_r1.jsonl`` for anli_r1; ``.json`` and
``.parquet`` work too, and so do shards (``validation-00000-of-00001.parquet``, as the Hub stores
them). Rows carry the same fields as the Hub dataset. The split the task scores is required, and so
is the split its few-shot examples come from when it runs with shots; splits a run does not read
may be left out.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from selene.errors import ConfigError

FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
# lm-eval's split fields, in the order its tasks prefer them for few-shot examples after fewshot_split
SPLIT_FIELDS = ("fewshot_split", "training_split", "validation_split", "test_split")


def user_datasets_cache() -> Path:
    """The cache `datasets.load_dataset` reads by default on this machine: HF_DATASETS_CACHE, else
    HF_HOME/datasets, else the XDG cache."""
    if os.environ.get("HF_DATASETS_CACHE"):
        return Path(os.environ["HF_DATASETS_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "datasets"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(xdg).expanduser() / "huggingface" / "datasets"


def scored_split(cfg: dict[str, Any]) -> str | None:
    """The split lm-eval scores: the test split, else the validation split."""
    return cfg.get("test_split") or cfg.get("validation_split")


def fewshot_split(cfg: dict[str, Any]) -> str | None:
    """The split lm-eval draws few-shot examples from: the first of `SPLIT_FIELDS` the task sets."""
    return next((cfg[f] for f in SPLIT_FIELDS if cfg.get(f)), None)


def needed_splits(cfg: dict[str, Any], shots: int) -> list[str]:
    splits = [scored_split(cfg), fewshot_split(cfg) if shots else None]
    return list(dict.fromkeys(s for s in splits if s))


def split_files(directory: Path, split: str) -> list[Path]:
    """The files of `split` in `directory`: ``<split>.<ext>``, or its shards ``<split>-*.<ext>``."""
    files = [directory / f"{split}{ext}" for ext in FORMATS if (directory / f"{split}{ext}").is_file()]
    if not files:
        for ext in FORMATS:
            pattern = os.path.join(glob.escape(str(directory)), f"{glob.escape(split)}-*{ext}")
            files += sorted(Path(p) for p in glob.glob(pattern))
    return files


def local_overrides(task: str, cfg: dict[str, Any], directory: str, shots: int, cache_dir: Path) -> dict[str, Any]:
    """The fields of lm-eval's task config `cfg` that point `task` at the files in `directory`."""
    where = Path(directory).expanduser().resolve()
    if not where.is_dir():
        raise ConfigError(f"--task-data {task}={directory}: not a directory")
    needed = needed_splits(cfg, shots)
    files: dict[str, list[str]] = {}
    overrides: dict[str, Any] = {}
    for field in SPLIT_FIELDS:
        split = cfg.get(field)
        if not split:
            continue
        found = split_files(where, split)
        if found:
            files[split] = [str(p) for p in found]
        elif split in needed:
            present = ", ".join(sorted(p.name for p in where.iterdir() if p.suffix in FORMATS)) or "no data files"
            role = "scores" if split == scored_split(cfg) else f"draws its {shots}-shot examples from"
            raise ConfigError(
                f"--task-data {task}={directory}: {task} {role} the split {split!r} ({field} in lm-eval's "
                f"task), but {where} has no {split}.jsonl or {split}.parquet (it has: {present})"
            )
        else:  # a split this run does not read: lm-eval must not look it up in the local files
            overrides[field] = None
    kinds = {FORMATS[Path(p).suffix] for paths in files.values() for p in paths}
    if len(kinds) > 1:
        raise ConfigError(f"--task-data {task}={directory}: mixes jsonl and parquet files; use one format per task")
    overrides.update(
        dataset_path=kinds.pop(),
        dataset_name=None,
        dataset_kwargs={"data_files": files, "cache_dir": str(cache_dir)},
    )
    return overrides


def hub_cached(cfg: dict[str, Any], cache: Path) -> bool:
    """Whether `cache` holds the task's Hub dataset (and its configuration, where the task names one),
    as `datasets.load_dataset` leaves it: ``<namespace>___<name>/<config>/<version>/<hash>``."""
    from datasets.naming import camelcase_to_snakecase

    path, name = cfg.get("dataset_path"), cfg.get("dataset_name")
    if not isinstance(path, str) or path.count("/") > 1:
        return False
    parts = path.split("/")
    parts[-1] = camelcase_to_snakecase(parts[-1])
    root = glob.escape(str(cache / "___".join(parts)))
    config = glob.escape(name) if name else "*"
    return any(os.path.isdir(p) for p in glob.glob(os.path.join(root, config, "*", "*")))


def load_error(task: str, cfg: dict[str, Any], shots: int, cache: Path, error: BaseException) -> ConfigError:
    """What to tell the user when `task`'s data could not be loaded: how to get it, when the Hub
    dataset is missing from the cache, else the loader's own reason. One line, no traceback."""
    path, name = cfg.get("dataset_path"), cfg.get("dataset_name")
    dataset = f"{path}" + (f" (configuration {name})" if name else "")
    why = reason(error)
    is_hub = isinstance(path, str) and not os.path.exists(path) and path not in _packaged_builders()
    if not is_hub or hub_cached(cfg, cache):
        return ConfigError(f"task {task!r} could not load its dataset {dataset}: {why}")
    return not_cached(task, cfg, shots, cache)


def not_cached(task: str, cfg: dict[str, Any], shots: int, cache: Path) -> ConfigError:
    """The error of `task` whose Hub dataset is not in the datasets `cache`: how to get it there, or
    how to give local files instead."""
    path, name = cfg.get("dataset_path"), cfg.get("dataset_name")
    dataset = f"{path}" + (f" (configuration {name})" if name else "")
    args = ", ".join(repr(a) for a in (path, name) if a)
    files = " and ".join(f"{s}.jsonl" for s in needed_splits(cfg, shots)) or "its split files"
    return ConfigError(
        f"task {task!r} needs the Hugging Face dataset {dataset}, which is not in the datasets cache "
        f"{cache}, and this run is offline: fetch it once on a machine with network, "
        f"python -c \"import datasets; datasets.load_dataset({args})\", and copy that machine's datasets "
        f"cache (~/.cache/huggingface/datasets) here or point HF_DATASETS_CACHE at it; or give local "
        f"files with --task-data {task}=DIR (DIR/{files}, the dataset's fields)"
    )


def reason(error: BaseException) -> str:
    """An exception as one line: its type and message, whitespace runs folded."""
    return " ".join(f"{type(error).__name__}: {error}".split())


def _packaged_builders() -> set[str]:
    """Names `datasets` reads as file formats rather than Hub datasets (json, csv, parquet, ...)."""
    try:
        from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES
    except ImportError:
        return {"json", "csv", "parquet", "text", "arrow", "pandas"}
    return set(_PACKAGED_DATASETS_MODULES)
