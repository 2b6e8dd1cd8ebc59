"""Run lm-eval-harness tasks on a selene checkpoint, offline, and write results.json + results.md.

The harness is driven through its Python API (`simple_evaluate`) with our `SeleneLM` instance and a
`TaskManager` that sees only selene's local tasks (`selene/eval/tasks`) and any extra include
directories — never the harness's built-in catalogue, whose datasets live on the Hugging Face Hub and
cannot be fetched on an offline machine.

Task YAMLs name their data files relative to themselves, but `datasets` resolves relative
`data_files` against the current directory. So each include directory is copied under
``<out_dir>/tasks`` with its YAMLs' `data_files` rewritten to absolute paths and a `cache_dir` inside
``out_dir``: the run is independent of the cwd and writes nothing outside `out_dir` (HF_HOME points
there too, and the Hub / datasets offline switches are on).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from selene.errors import ConfigError

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
_DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet", ".txt")


def _offline(out_dir: Path) -> None:
    """Switch the Hub and datasets to offline mode with their caches under `out_dir`.

    The environment variables cover libraries not imported yet; the module constants cover those a
    caller (or an earlier test) already imported, since both read the variables once at import."""
    hf_home = out_dir / "hf_home"
    os.environ["HF_HOME"] = str(hf_home)
    os.environ["HF_DATASETS_CACHE"] = str(hf_home / "datasets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    import datasets.config

    datasets.config.HF_HUB_OFFLINE = True
    datasets.config.HF_DATASETS_CACHE = hf_home / "datasets"


def _absolute(files: Any, base: Path) -> Any:
    """`data_files` (a path, a list, or a {split: path-or-list} mapping) with relative paths made absolute."""
    if isinstance(files, str):
        return files if "://" in files or os.path.isabs(files) else str((base / files).resolve())
    if isinstance(files, list):
        return [_absolute(f, base) for f in files]
    if isinstance(files, dict):
        return {k: _absolute(v, base) for k, v in files.items()}
    return files


def resolve_tasks_dir(src: Path, dst: Path, cache_dir: Path) -> Path:
    """Copy task directory `src` to `dst` with every plain YAML's `data_files` made absolute.

    YAMLs with custom tags (``!function utils.process_docs``) are copied verbatim — their Python helpers
    come along in the copy, so the relative references keep working."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(
        src, dst, ignore=shutil.ignore_patterns("__pycache__", *[f"*{s}" for s in _DATA_SUFFIXES])
    )
    for yml in sorted(src.rglob("*.yaml")):
        try:
            doc = yaml.safe_load(yml.read_text())
        except yaml.YAMLError:
            continue
        kwargs = doc.get("dataset_kwargs") if isinstance(doc, dict) else None
        if not isinstance(kwargs, dict) or "data_files" not in kwargs:
            continue
        kwargs["data_files"] = _absolute(kwargs["data_files"], yml.parent)
        kwargs.setdefault("cache_dir", str(cache_dir))
        (dst / yml.relative_to(src)).write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return dst


def _task_manager(include: list[Path], out_dir: Path) -> Any:
    from lm_eval.tasks import TaskManager

    resolved = [
        resolve_tasks_dir(p, out_dir / "tasks" / f"{i}-{p.name}", out_dir / "hf_home" / "datasets")
        for i, p in enumerate(include)
    ]
    return TaskManager(include_path=[str(p) for p in resolved], include_defaults=False)


def _remove_new(out: Path, before: set[str] | None) -> None:
    """Remove what this call made under `out`: all of it if `out` did not exist (`before` None),
    else the entries that were not there before."""
    if before is None:
        shutil.rmtree(out, ignore_errors=True)
        return
    for p in out.iterdir():
        if p.name not in before:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)


def check_tasks(tasks: list[str], available: list[str]) -> None:
    """Every requested task must exist; otherwise a ConfigError naming the close matches."""
    if not tasks:
        raise ConfigError(f"eval.tasks is empty; available tasks: {', '.join(sorted(available))}")
    for name in tasks:
        if name not in available:
            close = difflib.get_close_matches(name, available, n=5, cutoff=0.4)
            hint = (
                f"did you mean {', '.join(close)}?" if close else f"available: {', '.join(sorted(available))}"
            )
            raise ConfigError(f"unknown evaluation task {name!r}; {hint}")


def _jsonable(obj: Any) -> Any:
    """The harness's results with numpy scalars, tensors, NaN and other strays made JSON-safe."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if hasattr(obj, "item") and callable(obj.item):
        try:
            return _jsonable(obj.item())
        except (ValueError, RuntimeError):
            pass
    if hasattr(obj, "tolist"):
        return _jsonable(obj.tolist())
    return str(obj)


def markdown_table(results: dict[str, Any]) -> str:
    """One row per (task, metric) with its standard error, like the harness's `make_table`."""
    rows = ["| task | version | shots | metric | value | stderr |", "|---|---|---|---|---|---|"]
    for task, metrics in sorted(results.get("results", {}).items()):
        version = results.get("versions", {}).get(task, "")
        shots = results.get("n-shot", {}).get(task, "")
        for key, value in sorted(metrics.items()):
            if key in ("alias", "sample_len") or "_stderr," in key or not isinstance(value, int | float):
                continue
            metric, _, _filter = key.partition(",")
            err = metrics.get(f"{metric}_stderr,{_filter}")
            err_s = f"{err:.4f}" if isinstance(err, int | float) else ""
            rows.append(f"| {task} | {version} | {shots} | {metric} | {value:.4f} | {err_s} |")
    return "\n".join(rows) + "\n"


def evaluate(
    checkpoint: str,
    tasks: list[str],
    *,
    out_dir: str,
    num_fewshot: int = 0,
    limit: int | float | None = None,
    batch_size: int = 8,
    device: str = "auto",
    seed: int = 1234,
    include_path: str | None = None,
    log_samples: bool = True,
) -> dict[str, Any]:
    """Evaluate `checkpoint` on `tasks`; writes ``out_dir/results.json`` (+ ``samples_<task>.jsonl``
    when `log_samples`) and ``out_dir/results.md``; returns the JSON-safe results dict.

    `limit` caps the scored documents per task (an int, or a fraction < 1), as the harness's --limit.
    Few-shot examples are drawn (seeded) from each task's `fewshot_split`, never from the scored split.
    """
    out = Path(out_dir).resolve()
    include = [TASKS_DIR] + ([Path(include_path).resolve()] if include_path else [])
    for p in include:
        if not p.is_dir():
            raise ConfigError(f"eval include path {p} is not a directory of lm-eval task YAMLs")
    before = {p.name for p in out.iterdir()} if out.is_dir() else None
    out.mkdir(parents=True, exist_ok=True)
    try:
        _offline(out)
        manager = _task_manager(include, out)
        check_tasks(tasks, list(manager.all_tasks))
    except BaseException:
        _remove_new(out, before)  # a refused command leaves nothing behind (the task copies, the HF home)
        raise

    import lm_eval

    from selene.eval.lm import SeleneLM

    lm = SeleneLM(checkpoint, batch_size=batch_size, device=device, seed=seed)
    raw = lm_eval.simple_evaluate(
        model=lm,
        tasks=list(tasks),
        num_fewshot=num_fewshot,
        limit=limit,
        task_manager=manager,
        log_samples=log_samples,
        bootstrap_iters=0 if limit else 1000,
        random_seed=seed,
        numpy_random_seed=seed,
        torch_random_seed=seed,
        fewshot_random_seed=seed,
    )
    if raw is None:  # only non-zero ranks of a multi-process run get None; we run one process
        raise RuntimeError("lm_eval.simple_evaluate returned no results")
    raw = dict(raw)
    samples = raw.pop("samples", None) or {}
    results = _jsonable(raw)
    results["selene"] = {
        "checkpoint": lm.checkpoint,
        "tasks": list(tasks),
        "num_fewshot": num_fewshot,
        "limit": limit,
        "seed": seed,
    }
    for task, rows in samples.items():
        with open(out / f"samples_{task}.jsonl", "w") as f:
            for row in rows:
                f.write(json.dumps(_jsonable(row)) + "\n")
    tmp = out / "results.json.tmp"
    tmp.write_text(json.dumps(results, indent=1))
    tmp.replace(out / "results.json")
    (out / "results.md").write_text(markdown_table(results))
    return results
