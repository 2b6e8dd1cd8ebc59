"""lm-eval's own registry tasks through `selene eval`, offline: their data from local files
(--task-data) or from the Hugging Face datasets cache, the one-line error when neither has it, the
mt-nlg suite and its published figures, and no output left by a run that fails.

The scores are checked against the harness's own ``hf`` model on the exported checkpoint, with the
tasks built by lm-eval alone (a YAML that includes the registry task's and points it at the same
files), so selene's task building and its adapter are both under test.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from selene.cli import main
from tests.tiny_checkpoint import make_checkpoint

PIQA = [
    ("To keep bread fresh for longer,", "store it in a sealed bag.", "leave it in the sun.", 0),
    ("To dry wet shoes quickly,", "fill them with water.", "stuff them with newspaper.", 1),
    ("To open a jar with a tight lid,", "run the lid under hot water.", "put the jar in the freezer.", 0),
    ("To cool a hot drink,", "put a lid on it.", "add a few ice cubes.", 1),
    ("To find a lost key in the dark,", "use a torch.", "close your eyes.", 0),
    ("To stop a door from squeaking,", "paint the handle.", "oil the hinges.", 1),
]
BOOLQ = [
    ("is the sun a star", "The Sun is the star at the centre of the Solar System.", 1),
    ("is water a metal", "Water is a compound of hydrogen and oxygen.", 0),
    ("can penguins fly", "Penguins are birds that cannot fly; they swim.", 0),
    ("is paris in france", "Paris is the capital and largest city of France.", 1),
    ("is the moon made of cheese", "The Moon is a rocky body that orbits the Earth.", 0),
    ("do bees make honey", "Honey bees make honey from the nectar of flowers.", 1),
]
WINOGRANDE = [
    ("The trophy does not fit in the case because the _ is too small.", "trophy", "case", "2"),
    ("The cup fell off the table because the _ was slippery.", "cup", "table", "1"),
    ("Anna paid Mary because _ owed her money.", "Anna", "Mary", "1"),
    ("The ice melted in the sun because the _ was warm.", "ice", "sun", "2"),
    ("The dog chased the cat until the _ climbed a tree.", "dog", "cat", "2"),
    ("The man lifted the box because the _ was strong.", "man", "box", "1"),
]
ANLI = [
    ("The cat sat on the mat all day.", "The cat was on the mat.", 0),
    ("The shop closes at noon on Sundays.", "The shop is open all night on Sunday.", 2),
    ("Tom bought a red car last year.", "Tom likes the colour red.", 1),
    ("The river flooded the town in spring.", "There was water in the town.", 0),
    ("She has never left her home country.", "She has been abroad twice.", 2),
    ("The meeting was moved to Friday.", "The meeting is on a weekday.", 0),
]
TASKS = ("piqa", "boolq", "winogrande", "anli_r1")


def piqa_rows(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"goal": g, "sol1": a, "sol2": b, "label": lab} for g, a, b, lab in rows]


def boolq_rows(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"question": q, "passage": p, "idx": i, "label": lab} for i, (q, p, lab) in enumerate(rows)]


def winogrande_rows(rows: list[Any]) -> list[dict[str, Any]]:
    return [{"sentence": s, "option1": a, "option2": b, "answer": ans} for s, a, b, ans in rows]


def anli_rows(rows: list[Any]) -> list[dict[str, Any]]:
    return [
        {"uid": f"u{i}", "premise": p, "hypothesis": h, "label": lab, "reason": ""}
        for i, (p, h, lab) in enumerate(rows)
    ]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> str:
    # a context long enough for every request: the hf adapter refuses continuations longer than it
    return make_checkpoint(tmp_path_factory.mktemp("ckpt"), max_seq_len=256)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each task's files, split names as its lm-eval YAML has them: piqa, boolq and winogrande score
    `validation` with shots from `train`; anli_r1 scores `test_r1` with shots from `train_r1` (no
    `dev_r1`: a split the run does not read may be missing). boolq's are Parquet."""
    root = tmp_path_factory.mktemp("task-data")
    write_jsonl(root / "piqa" / "validation.jsonl", piqa_rows(PIQA))
    write_jsonl(root / "piqa" / "train.jsonl", piqa_rows(PIQA[::-1]))
    write_parquet(root / "boolq" / "validation.parquet", boolq_rows(BOOLQ))
    write_parquet(root / "boolq" / "train.parquet", boolq_rows(BOOLQ[::-1]))
    write_jsonl(root / "winogrande" / "validation.jsonl", winogrande_rows(WINOGRANDE))
    write_jsonl(root / "winogrande" / "train.jsonl", winogrande_rows(WINOGRANDE[::-1]))
    write_jsonl(root / "anli_r1" / "test_r1.jsonl", anli_rows(ANLI))
    write_jsonl(root / "anli_r1" / "train_r1.jsonl", anli_rows(ANLI[::-1]))
    return {t: root / t for t in TASKS}


def reference_tasks(local: dict[str, Path], where: Path) -> Path:
    """lm-eval task YAMLs, written without selene: each includes the registry task's own YAML and
    replaces its dataset with the local files, the way a user of the harness would."""
    from lm_eval.tasks import TaskManager

    index = TaskManager().task_index
    where.mkdir(parents=True)
    for task, directory in local.items():
        ext = "parquet" if task == "boolq" else "jsonl"
        cfg = index[task].cfg or {}
        splits = {k: cfg.get(k) for k in ("training_split", "validation_split", "test_split") if cfg.get(k)}
        present = {k: s for k, s in splits.items() if (directory / f"{s}.{ext}").exists()}
        doc = {
            "include": str(index[task].yaml_path),
            "task": f"ref_{task}",
            "dataset_path": "parquet" if ext == "parquet" else "json",
            "dataset_name": None,
            "dataset_kwargs": {
                "data_files": {s: str(directory / f"{s}.{ext}") for s in present.values()},
                "cache_dir": str(where / "cache"),
            },
            **{k: None for k in splits if k not in present},
        }
        (where / f"ref_{task}.yaml").write_text(json.dumps(doc))  # JSON is YAML
    return where


def test_registry_tasks_on_local_files_score_as_the_harness_hf_model(
    ckpt: str, local: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "no-cache"))  # nothing fetched: files only
    out = tmp_path / "eval"
    args = ["eval", "--checkpoint", ckpt, "--tasks", ",".join(TASKS), "--num-fewshot", "1", "-o", str(out)]
    for task in TASKS:
        args += ["--task-data", f"{task}={local[task]}"]
    assert main(args) == 0, capsys.readouterr().err
    ours = json.loads((out / "results.json").read_text())

    # lm-eval's own task configs ran: the registry YAML's prompt, choices, splits and metrics
    piqa = ours["configs"]["piqa"]
    assert piqa["doc_to_text"] == "Question: {{goal}}\nAnswer:" and piqa["doc_to_choice"] == "{{[sol1, sol2]}}"
    assert [m["metric"] for m in piqa["metric_list"]] == ["acc", "acc_norm"]
    assert piqa["metadata"]["config_source"].endswith(os.path.join("lm_eval", "tasks", "piqa", "piqa.yaml"))
    assert ours["configs"]["boolq"]["doc_to_choice"] == ["no", "yes"]
    assert ours["configs"]["anli_r1"]["test_split"] == "test_r1"
    assert "answer_to_num" in ours["configs"]["winogrande"]["doc_to_text"]  # its !function helper's source
    for task in TASKS:
        assert ours["n-shot"][task] == 1 and ours["n-samples"][task]["effective"] == 6
    # nothing but the results: no task copies, no HF home, no scratch directory beside it
    assert not {"tasks", "hf_home"} & set(os.listdir(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval"]

    import lm_eval
    from lm_eval.tasks import TaskManager

    hf_dir = tmp_path / "hf"
    assert main(["export", "--checkpoint", ckpt, "-o", str(hf_dir)]) == 0
    yamls = reference_tasks(local, tmp_path / "reference")
    theirs = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={hf_dir},dtype=float32,max_length=256",
        tasks=[f"ref_{t}" for t in TASKS], task_manager=TaskManager(include_path=str(yamls)),
        num_fewshot=1, bootstrap_iters=0, device="cpu", batch_size=4, fewshot_random_seed=1234,
    )
    assert theirs is not None
    for task in TASKS:
        for metric in ("acc,none", "acc_norm,none"):
            if metric in ours["results"][task]:
                mine, ref = ours["results"][task][metric], theirs["results"][f"ref_{task}"][metric]
                print(f"{task} {metric}: selene {mine:.6f}  hf {ref:.6f}")
                assert mine == pytest.approx(ref, abs=1e-9), (task, metric)
        # the same prompts (few-shot examples included) and log-likelihoods, document by document
        rows = [json.loads(x) for x in (out / f"samples_{task}.jsonl").read_text().splitlines()]
        ref_rows = sorted(theirs["samples"][f"ref_{task}"], key=lambda r: r["doc_id"])
        assert [r["doc_id"] for r in sorted(rows, key=lambda r: r["doc_id"])] == [r["doc_id"] for r in ref_rows]
        gaps = []
        for row, ref_row in zip(sorted(rows, key=lambda r: r["doc_id"]), ref_rows, strict=True):
            assert [list(a) for a in row["arguments"]] == [list(a) for a in ref_row["arguments"]]
            mine_ll = [float(r[0]) for r in row["filtered_resps"]]
            ref_ll = [float(r[0]) for r in ref_row["filtered_resps"]]
            assert mine_ll == pytest.approx(ref_ll, abs=2e-3), (task, row["doc_id"])
            gaps += [abs(a - b) for a, b in zip(mine_ll, ref_ll, strict=True)]
        print(f"{task}: {len(gaps)} log-likelihoods, max |selene - hf| {max(gaps):.2e}")


def hub_cache(cache: Path, repo: str, config: str, splits: dict[str, list[dict[str, Any]]], tmp: Path) -> None:
    """`cache` as `datasets.load_dataset(repo, config)` leaves it on a machine with network: the
    splits' Arrow files under ``<namespace>___<name>/<config>/<version>/<hash>``."""
    import datasets

    files = {}
    for split, rows in splits.items():
        write_jsonl(tmp / f"{split}.jsonl", rows)
        files[split] = str(tmp / f"{split}.jsonl")
    builder = datasets.load_dataset_builder("json", data_files=files, cache_dir=str(tmp / "build"))
    builder.download_and_prepare()
    namespace, name = repo.split("/")
    dst = cache / f"{namespace}___{name}" / config / "0.0.0" / "0123456789abcdef"
    dst.parent.mkdir(parents=True)
    os.replace(builder.cache_dir, dst)
    for arrow in dst.glob("json-*.arrow"):
        arrow.rename(dst / arrow.name.replace("json-", f"{name}-", 1))
    info = json.loads((dst / "dataset_info.json").read_text())
    (dst / "dataset_info.json").write_text(json.dumps({**info, "config_name": config, "dataset_name": name}))


def test_a_registry_task_reads_the_datasets_cache_and_says_how_to_fetch_it(
    ckpt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # logging handlers that earlier tests' Prefect runs left on the root logger write to streams
    # pytest has since replaced: their "--- Logging error ---" tracebacks are not this command's
    monkeypatch.setattr(logging, "raiseExceptions", False)
    cache = tmp_path / "hf-datasets"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    out = tmp_path / "runs" / "eval"
    args = ["eval", "--checkpoint", ckpt, "--tasks", "selene_piqa,boolq", "--limit", "4", "-o", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "error:" in x]
    for part in ("'boolq'", "aps/super_glue", "boolq", str(cache), "python -c \"import datasets; datasets.load_dataset('aps/super_glue', 'boolq')\"", "--task-data boolq=DIR", "validation.jsonl"):
        assert part in line, part
    assert not (tmp_path / "runs").exists()  # refused before the output is claimed: nothing made

    hub_cache(cache, "aps/super_glue", "boolq", {"validation": boolq_rows(BOOLQ), "train": boolq_rows(BOOLQ)}, tmp_path / "scratch")
    assert main(args) == 0, capsys.readouterr().err
    res = json.loads((out / "results.json").read_text())
    assert res["configs"]["boolq"]["dataset_path"] == "aps/super_glue" and res["configs"]["boolq"]["dataset_name"] == "boolq"
    assert res["n-samples"]["boolq"]["effective"] == 4 and isinstance(res["results"]["boolq"]["acc,none"], float)
    assert isinstance(res["results"]["selene_piqa"]["acc,none"], float)  # the bundled tasks run beside them
    assert res["selene"]["datasets_cache"] == str(cache)


def test_mt_nlg_resolves_to_the_papers_tasks_and_shots() -> None:
    from selene.eval import harness
    from selene.eval.tasks.suites import MT_NLG, expand

    runs = expand(["mt-nlg"], num_fewshot=3)  # --num-fewshot is for tasks named alone: the suite has its own
    shots = {(r.task, r.shots) for r in runs}
    expected = {
        "lambada_openai": 15, "boolq": 32, "race": 10, "piqa": 50,
        "hellaswag": 20, "winogrande": 50, "anli_r2": 50, "wic": 32,
    }
    assert shots == {(t, k) for t, few in expected.items() for k in (0, 1, few)}
    assert len(runs) == 24 and len({r.name for r in runs}) == 24
    by_name = {r.name: r for r in runs}
    assert by_name["lambada_openai-15shot"].reference == pytest.approx(0.8715)
    assert by_name["lambada_openai-0shot"].setting == "zero-shot" and by_name["hellaswag-1shot"].metric == "acc_norm"
    assert by_name["piqa-0shot"].reference == pytest.approx(0.8199)
    # a task named alone as well runs at --num-fewshot beside the suite's runs
    assert [r.name for r in expand(["mt-nlg", "anli_r1"], 3)][-1] == "anli_r1"

    # every task is in lm-eval's registry, with the metric the paper's figure is compared with
    resolved, manager = harness.resolve_runs(["mt-nlg", "anli"], 0, [harness.TASKS_DIR])
    names = [r.name for r in resolved]
    assert names[:24] == [r.name for r in runs] and names[24:] == ["anli_r1", "anli_r2", "anli_r3"]  # a tag: its tasks
    for row in MT_NLG.rows:
        cfg = manager.task_index[row.task].cfg
        assert row.metric in [m["metric"] for m in cfg["metric_list"]], row.task


def test_the_report_prints_the_papers_figures_beside_the_runs() -> None:
    from dataclasses import asdict

    from rich.console import Console

    from selene.eval import harness, stage
    from selene.eval.tasks.suites import expand

    runs = [r for r in expand(["mt-nlg"], 0) if r.task == "piqa"]
    results = {
        "results": {r.name: {"acc,none": 0.5, "acc_norm,none": 0.625, "alias": r.name} for r in runs},
        "n-shot": {r.name: r.shots for r in runs},
        "selene": {"runs": [asdict(r) for r in runs]},
    }
    table = harness.markdown_table(results)
    assert "| MT-NLG 530B (paper) |" in table.splitlines()[0]
    assert "| piqa-50shot |  | 50 | acc_norm | 0.6250 |  | 0.8319 |" in table
    assert "| piqa-50shot |  | 50 | acc | 0.5000 |  | |" in table  # the paper's figure is for acc_norm
    assert "arXiv:2201.11990" in table
    summary = {"checkpoint": "ck", "out": "o", "tasks": stage.harness_metrics(results), "reference": stage.reference_figures(results)}
    console = Console(record=True, width=200)
    from selene.eval.view import view
    from selene.io.results import StageResult
    from selene.summary import show

    show(view(StageResult("o", skipped=False, info={"summary": summary})), console)
    text = console.export_text()
    assert "MT-NLG 530B (paper)" in text and "0.8199" in text and "0.8319" in text


def test_a_failed_run_leaves_no_output(
    ckpt: str, local: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import lm_eval

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "no-cache"))
    # refused: the split the task scores is not among the files
    piqa_train_only = tmp_path / "piqa-train"
    write_jsonl(piqa_train_only / "train.jsonl", piqa_rows(PIQA))
    out = tmp_path / "eval"
    assert main(["eval", "--checkpoint", ckpt, "--tasks", "piqa", "--task-data", f"piqa={piqa_train_only}", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'validation'" in err and "validation.jsonl" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["piqa-train"]

    # an output from before: a failure half-way (after the model loaded) leaves it as it was ...
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "results.json").write_text("{}")
    (out / "tasks").mkdir()  # what earlier versions left behind
    (out / "samples_old.jsonl").write_text("")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the harness failed")

    good = lm_eval.simple_evaluate
    monkeypatch.setattr(lm_eval, "simple_evaluate", broken)
    args = ["eval", "--checkpoint", ckpt, "--tasks", "piqa", "--task-data", f"piqa={local['piqa']}", "--limit", "2", "-o", str(out)]
    assert main(args) == 1
    assert "the harness failed" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "results.json", "samples_old.jsonl", "tasks"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval", "piqa-train"]

    # ... and a run that succeeds replaces the previous results, and only them
    monkeypatch.setattr(lm_eval, "simple_evaluate", good)
    assert main(args) == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt", "perplexity.json", "results.json", "results.md", "samples_piqa.jsonl", "summary.json",
    ]
    assert json.loads((out / "results.json").read_text())["n-samples"]["piqa"]["effective"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval", "piqa-train"]


def test_task_data_and_shots_are_checked_before_the_model_loads(
    ckpt: str, local: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "eval"
    assert main(["eval", "--checkpoint", ckpt, "--tasks", "selene_piqa", "--task-data", f"piqa={local['piqa']}", "-o", str(out)]) == 2
    assert "--task-data names 'piqa'" in capsys.readouterr().err
    assert main(["eval", "--checkpoint", ckpt, "--tasks", "selene_piqa", "--task-data", "piqa", "-o", str(out)]) == 2
    assert "expected TASK=DIR" in capsys.readouterr().err
    # files lm-eval cannot read
    bad = tmp_path / "bad-piqa"
    bad.mkdir()
    (bad / "validation.jsonl").write_text("this is not json\n")
    assert main(["eval", "--checkpoint", ckpt, "--tasks", "piqa", "--task-data", f"piqa={bad}", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--task-data piqa={bad}: lm-eval's piqa cannot use these files" in err and "Traceback" not in err
    # more shots than the few-shot split has documents: said before the model loads
    args = ["eval", "--checkpoint", ckpt, "--tasks", "piqa", "--task-data", f"piqa={local['piqa']}", "--num-fewshot", "7"]
    assert main([*args, "-o", str(out)]) == 2
    assert "piqa: 7 shots, but the split its examples come from (train) has 6 documents" in capsys.readouterr().err
    assert not out.exists()
