"""The decontaminate stage: task text cut out of a dataset, accounted for, reported per task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selene.decontaminate.config import DecontaminateConfig
from selene.decontaminate.overlap import NgramIndex, decontaminate
from selene.decontaminate.stage import run_decontaminate
from selene.decontaminate.tasks import load_tasks
from selene.errors import PathError, UsageError
from selene.io import dataset
from tests.corpus import write_dataset

DATA = Path(__file__).resolve().parents[1] / "data" / "decontam"
SHIPPED = Path(__file__).resolve().parents[2] / "data" / "tasks"
TASKS = [str(SHIPPED / "mini_piqa.jsonl"), str(SHIPPED / "mini_lambada")]


def corpus() -> list[tuple[str, str]]:
    filler = (DATA / "filler.txt").read_text()
    paras = [p for p in filler.split(". ") if len(p) > 40]
    lambada = [json.loads(x)["text"] for x in (SHIPPED / "mini_lambada" / "mini_lambada.jsonl").read_text().splitlines()]
    piqa = [json.loads(x) for x in (SHIPPED / "mini_piqa.jsonl").read_text().splitlines()]
    clean = ". ".join(paras[:12])
    docs = [(f"clean{i}", ". ".join(paras[i : i + 10])) for i in range(8)]
    docs.append(("split", f"{clean}. {lambada[0].upper()} {clean}."))  # a task passage in the middle
    docs.append(("dropped", lambada[1]))  # nothing but task text
    docs.append(("piqa", f"{clean} {piqa[0]['goal']} {piqa[0]['sol1']} {clean}"))
    return docs


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("decontam")
    inp = write_dataset(str(root / "in"), corpus(), shard_docs=4)
    return run_decontaminate(inp, str(root / "out"), DecontaminateConfig(tasks=TASKS))


def test_task_text_is_cut_and_accounted(result) -> None:  # type: ignore[no-untyped-def]
    docs = {d["id"]: d for d in dataset.iter_documents(result.out)}
    assert {f"clean{i}" for i in range(8)} <= set(docs)
    assert {"split.p0", "split.p1"} <= set(docs) and "split" not in docs and "dropped" not in docs
    assert json.loads(docs["split.p0"]["meta"]) == {"decontam_parent": "split", "piece": 0}
    removed = {r["id"]: r for r in dataset.read_removed(result.out).to_pylist()}
    assert removed["split"]["reason"] == "decontam:mini_lambada" and removed["split"]["detail"].startswith("split:")
    assert removed["dropped"]["detail"].startswith("dropped:")
    assert removed["piqa"]["reason"] == "decontam:mini_piqa"
    assert all(r["meta"] is not None for r in removed.values())  # the document's meta, for tracing
    st = result.manifest.stats
    assert st.documents_in == 11 and st.documents_removed == 1 and st.documents_split == 2
    assert st.documents_out == 8 + st.pieces_out
    tasks = result.manifest.tasks
    assert tasks["mini_lambada"].matched_ngrams > 0 and tasks["mini_lambada"].documents_dropped == 1
    assert tasks["mini_piqa"].documents_split == 1 and tasks["mini_piqa"].matched_examples


def test_the_printed_table_adds_up_to_removed_parquet(result) -> None:  # type: ignore[no-untyped-def]
    """The command's table: split and dropped documents both have a row in removed.parquet, and the
    table's total says so (it showed the dropped ones alone under "removed")."""
    from rich.console import Console

    from selene.decontaminate.view import view
    from selene.summary import show

    console = Console(record=True, width=200)
    show(view(result), console)
    total = next(line for line in console.export_text().splitlines() if "total" in line)
    cells = [c.strip() for c in total.split("│") if c.strip()]
    assert cells[:6] == ["total", "11", "10", "2", "1", "3"], total
    assert len(dataset.read_removed(result.out)) == 3


def test_no_task_ngram_survives(result) -> None:  # type: ignore[no-untyped-def]
    index = NgramIndex.build(load_tasks(TASKS), 13, 8)
    for d in dataset.iter_documents(result.out):
        assert not decontaminate(d["text"], index, 0, 0, 100).matches, d["id"]


def test_same_output_with_two_workers(result, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from selene.config import ExecutorConfig
    from selene.job import Job, run_direct

    job = Job("decontaminate", result.manifest.inputs.dataset, str(tmp_path / "o"), DecontaminateConfig(tasks=TASKS),
              ExecutorConfig(kind="processes", workers=2))  # fmt: skip
    m = run_direct(job, False).manifest
    assert [s.sha256 for s in m.shards] == [s.sha256 for s in result.manifest.shards]
    assert m.removed.sha256 == result.manifest.removed.sha256


def test_bad_input(tmp_path: Path) -> None:
    inp = write_dataset(str(tmp_path / "in"), corpus()[:2])
    bad = tmp_path / "tasks.csv"
    bad.write_text("a,b\n")
    with pytest.raises(PathError, match=r"tasks\.csv"):
        run_decontaminate(inp, str(tmp_path / "o"), DecontaminateConfig(tasks=[str(bad)]))
    with pytest.raises(UsageError, match="does not exist"):
        run_decontaminate(str(tmp_path / "nope"), str(tmp_path / "o"), DecontaminateConfig(tasks=TASKS))
    with pytest.raises(PathError, match="empty dataset"):
        run_decontaminate(write_dataset(str(tmp_path / "e"), []), str(tmp_path / "o"), DecontaminateConfig(tasks=TASKS))
