"""Run lm-eval-harness tasks on a selene checkpoint, offline, and write results.json + results.md.

Tasks are lm-eval's own: a task's YAML config (its prompt, choices, metrics) is what runs, whether it
is one of selene's bundled tasks (`selene/eval/tasks`), one of an extra include directory, or any task
of the harness's registry (piqa, hellaswag, lambada_openai, ...). A suite name (``mt-nlg``,
`selene.eval.tasks.suites`) stands for a published table's tasks at its shot counts. The registry is
indexed only when a name is not a local task: indexing its thousands of YAMLs takes seconds.

The run is offline (the Hub and datasets offline switches on, HF_HOME in the run's scratch space).
A registry task reads its dataset from the Hugging Face datasets cache, or from local files the user
names for it (`selene.eval.tasks.data`); a task whose data is in neither is refused before the model
loads, in one line that says how to fetch it. Everything is written to a scratch directory beside
the output and moved into place when the run has succeeded: a failed run leaves the output as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import json
import logging
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from selene.config.files import DuplicateKeyError, parse_yaml
from selene.consoles import quiet_loggers
from selene.errors import ConfigError, PathError
from selene.eval.tasks import data, suites

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
_DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet", ".txt")
# What a run writes into its output (and earlier versions' leftovers): replaced by the next run.
_RESULT_FILES = ("results.json", "results.md", "perplexity.json", "summary.json", "tasks", "hf_home")
_ENV = ("HF_HOME", "HF_DATASETS_CACHE", "HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")


def _offline(home: Path) -> dict[str, Any]:
    """Switch the Hub and datasets to offline mode, HF_HOME at `home`; the datasets cache stays the
    one this machine's `datasets` reads (where a registry task's data was fetched to). Returns what
    it replaced, for `offline` to put back.

    The environment variables cover libraries not imported yet; the module constants cover those a
    caller (or an earlier test) already imported, since both read the variables once at import."""
    cache = data.user_datasets_cache()
    previous: dict[str, Any] = {k: os.environ.get(k) for k in _ENV}
    os.environ["HF_HOME"] = str(home)
    os.environ["HF_DATASETS_CACHE"] = str(cache)
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    import datasets.config

    previous["datasets.config"] = (datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_CACHE)
    datasets.config.HF_HUB_OFFLINE = True
    datasets.config.HF_DATASETS_CACHE = cache
    return previous


@contextlib.contextmanager
def offline(home: Path) -> Iterator[Path]:
    """`_offline` for the block; yields the datasets cache registry tasks read."""
    previous = _offline(home)
    try:
        yield Path(os.environ["HF_DATASETS_CACHE"])
    finally:
        import datasets.config

        datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_CACHE = previous.pop("datasets.config")
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
    """Copy task directory `src` to `dst` with every plain YAML's `data_files` made absolute, for
    running the harness directly on local tasks (`datasets` resolves relative `data_files` against
    the current directory). YAMLs with custom tags are copied verbatim, their Python helpers with them."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(
        src, dst, ignore=shutil.ignore_patterns("__pycache__", *[f"*{s}" for s in _DATA_SUFFIXES])
    )
    for yml in sorted(src.rglob("*.yaml")):
        try:
            doc = parse_yaml(yml.read_text())
        except DuplicateKeyError as e:  # the harness would keep the last of the two silently
            raise ConfigError(f"{yml}: {e}") from None
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
    """A `TaskManager` of the local task directories `include`, copied under ``out_dir/tasks``, for
    `lm_eval.simple_evaluate` called directly (e.g. with the harness's own ``hf`` model)."""
    from lm_eval.tasks import TaskManager

    resolved = [
        resolve_tasks_dir(p, out_dir / "tasks" / f"{i}-{p.name}", out_dir / "hf_home" / "datasets")
        for i, p in enumerate(include)
    ]
    return TaskManager(include_path=[str(p) for p in resolved], include_defaults=False)


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


@functools.lru_cache(maxsize=4)
def _registry(paths: tuple[str, ...]) -> Any:
    """lm-eval's whole registry (some 14,700 entries) with the local task directories `paths`:
    indexing it reads every task YAML (~12 s), so a process indexes it once (an evaluation only
    reads the index; tasks are built from it with their overrides, `build_tasks`)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=list(paths), include_defaults=True)


def resolve_runs(names: list[str], num_fewshot: int, include: list[Path]) -> tuple[list[suites.Run], Any]:
    """The runs `names` stand for and a `TaskManager` that knows their tasks (lm-eval's registry
    indexed only when a name is not a local task). A tag (``anli``) becomes one run per task it
    tags; an unknown name is a ConfigError naming close matches."""
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._index import Kind

    runs = suites.expand(names, num_fewshot)
    paths = [str(p) for p in include]
    manager = TaskManager(include_path=paths, include_defaults=False)
    if any(r.task not in manager.task_index for r in runs):
        manager = _registry(tuple(paths))
    check_tasks(list(names), [*manager.all_tasks, *suites.SUITES])
    out: list[suites.Run] = []
    for run in runs:
        entry = manager.task_index[run.task]
        if entry.kind == Kind.TAG:
            out += [dataclasses.replace(run, name=t, task=t) for t in sorted(entry.tags)]
        else:
            out.append(run)
    return list({r.name: r for r in out}.values()), manager


def build_tasks(
    runs: list[suites.Run], manager: Any, *, task_data: dict[str, str], scratch: Path, cache: Path
) -> list[Any]:
    """lm-eval task objects for `runs`, each from its own YAML config with the run's shots and, for a
    task in `task_data`, its local files; every dataset is loaded here, before any model, and a task
    whose data cannot be found is a one-line ConfigError."""
    from lm_eval.tasks._index import Kind

    by_task = {r.task for r in runs}
    for task in task_data:
        if task not in by_task:
            raise ConfigError(f"--task-data names {task!r}, which is not among the tasks evaluated ({', '.join(sorted(by_task))})")
    built = []
    for run in runs:
        entry = manager.task_index[run.task]
        cfg = entry.cfg or {}
        overrides: dict[str, Any] = {} if run.name == run.task else {"task": run.name}
        if cfg.get("num_fewshot") != 0:  # a task fixed at zero shots by its YAML stays so, as in lm-eval
            overrides["num_fewshot"] = run.shots
        if entry.kind == Kind.GROUP and run.task in task_data:
            raise ConfigError(f"--task-data {run.task}=...: {run.task} is a group of lm-eval tasks; give data per task")
        if run.task in task_data:
            overrides |= data.local_overrides(run.task, cfg, task_data[run.task], run.shots, scratch / "datasets")
        elif isinstance(kwargs := cfg.get("dataset_kwargs"), dict) and "data_files" in kwargs and entry.yaml_path:
            # a local task's files are named relative to its YAML; `datasets` would read them from the cwd
            files = _absolute(kwargs["data_files"], Path(entry.yaml_path).parent)
            overrides["dataset_kwargs"] = {"cache_dir": str(scratch / "datasets"), **kwargs, "data_files": files}
        try:
            # lm-eval's own way to build a registry task with some fields overridden (as a group YAML
            # does for its members): the task's YAML, loaded with its !function helpers, then ours
            with _quiet_loaders():
                task = manager._factory.build(entry, overrides=overrides, registry=manager.task_index)
        except ConfigError:
            raise
        except Exception as e:  # the dataset loaders' many errors (offline, not cached, bad files)
            if run.task in task_data:
                raise ConfigError(
                    f"--task-data {run.task}={task_data[run.task]}: lm-eval's {run.task} cannot use these "
                    f"files ({data.reason(e)}); rows need the fields of its Hub dataset"
                ) from None
            raise data.load_error(run.task, cfg, run.shots, cache, e) from None
        if entry.kind != Kind.GROUP:
            _check_shots(run, cfg, task)
        built.append(task)
    return built


@contextlib.contextmanager
def bars_on_terminal_only() -> Iterator[None]:
    """The harness's and `datasets`' tqdm bars where standard error is a terminal only. In a file
    or a pipe a bar is no bar: each of its redraws stays in the log (``Generating test split: 0
    examples ... 40 examples``, ``0%| | 0/20 ... 100%|██████████| 20/20``), between the run's own
    lines. The harness passes ``disable=`` itself where it has one (TQDM_DISABLE would not win
    there), so its modules' `tqdm` is swapped for one that is always disabled, for this block."""
    if sys.stderr.isatty():
        yield
        return
    import datasets.utils as datasets_utils  # lazy: datasets and lm_eval load with evaluation only
    import lm_eval.api.model  # lazy: as above
    import lm_eval.api.task  # lazy: as above
    from tqdm import tqdm

    def disabled(*args: Any, **kwargs: Any) -> Any:
        return tqdm(*args, **{**kwargs, "disable": True})

    modules = (lm_eval.api.model, lm_eval.api.task)
    saved = [m.tqdm for m in modules]
    datasets_bars = not datasets_utils.are_progress_bars_disabled()
    datasets_utils.disable_progress_bars()
    for m in modules:
        m.tqdm = disabled
    try:
        yield
    finally:
        for m, bar in zip(modules, saved, strict=True):
            m.tqdm = bar
        if datasets_bars:
            datasets_utils.enable_progress_bars()


def _quiet_loaders() -> contextlib.AbstractContextManager[None]:
    """`datasets` logs a loader's failure with its traceback before raising it; the error it raises
    becomes one line here (`build_tasks`), so its log would only print the traceback to the user."""
    return quiet_loggers(("datasets", "datasets.packaged_modules", "datasets.builder"), logging.CRITICAL)


def _check_shots(run: suites.Run, cfg: dict[str, Any], task: Any) -> None:
    """Enough few-shot documents for the run's shots, said before the model loads (the harness's
    sampler would fail half-way with "Sample larger than population")."""
    shots = getattr(getattr(task, "config", None), "num_fewshot", None) or 0
    docs = task.fewshot_docs() if shots else None
    if docs is None:
        return
    same = data.fewshot_split(cfg) == data.scored_split(cfg)  # then a document is never its own example
    if len(docs) - same < shots:
        split = data.fewshot_split(cfg)
        raise ConfigError(
            f"{run.name}: {shots} shots, but the split its examples come from ({split}) has "
            f"{len(docs)} documents{' (less the one scored)' if same else ''}; use fewer shots or more data"
        )


def _quiet_git_hash() -> str | None:
    """`git describe --always` of the working directory, None outside a repository (or without git)."""
    try:
        found = subprocess.run(["git", "describe", "--always"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None


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


def references(results: dict[str, Any]) -> dict[tuple[str, str], float]:
    """(result name, metric) → the published figure its suite prints beside it."""
    runs = results.get("selene", {}).get("runs", [])
    return {(r["name"], r["metric"]): r["reference"] for r in runs if r.get("reference") is not None}


def markdown_table(results: dict[str, Any]) -> str:
    """One row per (task, metric) with its standard error, like the harness's `make_table`; with a
    suite among the runs, a column of its published figures."""
    refs = references(results)
    runs = [suites.Run(**r) for r in results.get("selene", {}).get("runs", [])]
    column = suites.reference_column(runs)
    head = "| task | version | shots | metric | value | stderr |" + (f" {column} |" if column else "")
    rows = [head, "|---" * (7 if column else 6) + "|"]
    found = results.get("results", {})
    order = [r.name for r in runs if r.name in found]  # a suite's table in its own order
    for task in order + sorted(set(found) - set(order)):
        metrics = found[task]
        version = results.get("versions", {}).get(task, "")
        shots = results.get("n-shot", {}).get(task, "")
        for key, value in sorted(metrics.items()):
            if key in ("alias", "sample_len") or "_stderr," in key or not isinstance(value, int | float):
                continue
            metric, _, _filter = key.partition(",")
            err = metrics.get(f"{metric}_stderr,{_filter}")
            err_s = f"{err:.4f}" if isinstance(err, int | float) else ""
            row = f"| {task} | {version} | {shots} | {metric} | {value:.4f} | {err_s} |"
            if column:
                ref = refs.get((task, metric))
                row += f" {ref:.4f} |" if ref is not None else " |"
            rows.append(row)
    out = "\n".join(rows) + "\n"
    sources = sorted({suites.SUITES[r.suite].source for r in runs if r.suite})
    return out + "".join(f"\nPublished figures: {s}.\n" for s in sources)


def _is_result(name: str) -> bool:
    return name in _RESULT_FILES or (name.startswith("samples_") and name.endswith(".jsonl"))


@contextlib.contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A fresh directory beside `out` to write a run into, moved into `out` when the block ends
    without an error (replacing the previous run's results there, nothing else) and removed when it
    raises: a failed or refused run leaves `out`, and the folders above it, as they were."""
    if out.exists() and not out.is_dir():
        raise PathError(f"the eval output {out} is a file; give a directory (-o DIR)")
    created = next((p for p in reversed(out.parents) if not p.exists()), None)  # the topmost one made here
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(created if created is not None else tmp, ignore_errors=True)
        raise
    if not out.exists():
        os.replace(tmp, out)
        return
    for p in out.iterdir():
        if _is_result(p.name):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    for p in tmp.iterdir():
        os.replace(p, out / p.name)
    tmp.rmdir()


def include_dirs(include_path: str | None) -> list[Path]:
    """The task directories searched first: selene's bundled tasks, then `include_path`."""
    include = [TASKS_DIR] + ([Path(include_path).resolve()] if include_path else [])
    for p in include:
        if not p.is_dir():
            raise ConfigError(f"eval include path {p} is not a directory of lm-eval task YAMLs")
    return include


@dataclasses.dataclass
class Tasks:
    """The harness tasks of an evaluation, built once (datasets loaded) and scored any number of
    times (`score`): by `evaluate` once, by a training run at every evaluation step."""

    names: list[str]
    runs: list[suites.Run]
    manager: Any
    built: list[Any]
    task_data: dict[str, str]
    cache: Path


def prepare(
    tasks: list[str], *, num_fewshot: int, include_path: str | None, task_data: dict[str, str] | None,
    scratch: Path, cache: Path,
) -> Tasks:  # fmt: skip
    """Resolve and build `tasks` (inside `offline(scratch)`, which yields `cache`); a ConfigError
    for an unknown task or unusable data, before any model is loaded."""
    include = include_dirs(include_path)
    data_dirs = {k: str(Path(v).expanduser().resolve()) for k, v in (task_data or {}).items()}
    runs, manager = resolve_runs(list(tasks), num_fewshot, include)
    built = build_tasks(runs, manager, task_data=data_dirs, scratch=scratch, cache=cache)
    return Tasks(list(tasks), runs, manager, built, data_dirs, cache)


def score(
    lm: Any, tasks: Tasks, *, limit: int | float | None, seed: int, log_samples: bool, num_fewshot: int = 0,
    environment: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(JSON-safe results, samples per task) of the harness model `lm` on the built `tasks`.

    `environment` False leaves out what the harness records of the machine (`git describe`, and
    torch's environment report: a `pip list` and other subprocesses, some 0.6 s a call), for a
    training run that scores again every few hundred steps and records the scores only."""
    import lm_eval
    import lm_eval.evaluator

    # the harness records `git describe` of the working directory and lets git print
    # "fatal: not a git repository" wherever it is not one; ask git quietly instead
    lm_eval.evaluator.get_git_commit_hash = _quiet_git_hash if environment else _no_git_hash
    env_info = lm_eval.evaluator.add_env_info
    if not environment:
        lm_eval.evaluator.add_env_info = _no_env_info
    try:
        raw = _simple_evaluate(lm, tasks, limit=limit, seed=seed, log_samples=log_samples)
    finally:
        lm_eval.evaluator.add_env_info = env_info
        lm_eval.evaluator.get_git_commit_hash = _quiet_git_hash
    if raw is None:  # only non-zero ranks of a multi-process harness run get None; it runs in one process
        raise RuntimeError("lm_eval.simple_evaluate returned no results")
    raw = dict(raw)
    samples = raw.pop("samples", None) or {}
    results = _jsonable(raw)
    results["selene"] = {
        "checkpoint": getattr(lm, "checkpoint", None),
        "tasks": list(tasks.names),
        "runs": [dataclasses.asdict(r) for r in tasks.runs],
        "num_fewshot": num_fewshot,
        "limit": limit,
        "seed": seed,
        "task_data": tasks.task_data,
        "datasets_cache": str(tasks.cache),
    }
    return results, samples


def _no_git_hash() -> None:
    return None


def _no_env_info(results: dict[str, Any]) -> None:
    return None


def _simple_evaluate(lm: Any, tasks: Tasks, *, limit: int | float | None, seed: int, log_samples: bool) -> Any:
    import lm_eval  # lazy: as in `score`

    return lm_eval.simple_evaluate(
        model=lm,
        tasks=tasks.built,
        num_fewshot=None,  # each task carries its own (`build_tasks`)
        limit=limit,
        task_manager=tasks.manager,
        log_samples=log_samples,
        bootstrap_iters=0 if limit else 1000,
        random_seed=seed,
        numpy_random_seed=seed,
        torch_random_seed=seed,
        fewshot_random_seed=seed,
    )


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
    task_data: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Evaluate `checkpoint` on `tasks`; writes ``out_dir/results.json`` (+ ``samples_<task>.jsonl``
    when `log_samples`) and ``out_dir/results.md``; returns the JSON-safe results dict.

    `tasks`: task, tag or suite names. `num_fewshot` applies to every task named on its own (a suite
    has its own shot counts). `limit` caps the scored documents per task (an int, or a fraction < 1),
    as the harness's --limit. `task_data`: task → directory of local files for its dataset.
    """
    out = Path(out_dir).resolve()
    include_dirs(include_path)
    with staged(out) as tmp, offline(tmp / "hf_home") as cache, bars_on_terminal_only():
        built = prepare(
            list(tasks), num_fewshot=num_fewshot, include_path=include_path, task_data=task_data,
            scratch=tmp / "hf_home", cache=cache,
        )  # fmt: skip
        from selene.eval.lm import SeleneLM  # lazy: lm_eval (0.3 s) stays out of eval summary/artifacts

        lm = SeleneLM(checkpoint, batch_size=batch_size, device=device, seed=seed)
        results, samples = score(lm, built, limit=limit, seed=seed, log_samples=log_samples, num_fewshot=num_fewshot)
        for task, rows in samples.items():
            with open(tmp / f"samples_{task}.jsonl", "w") as f:
                for row in rows:
                    f.write(json.dumps(_jsonable(row)) + "\n")
        (tmp / "results.json").write_text(json.dumps(results, indent=1))
        (tmp / "results.md").write_text(markdown_table(results))
        shutil.rmtree(tmp / "hf_home", ignore_errors=True)
    return results
