"""Decontamination core: loading evaluation tasks, and cutting their n-grams out of documents.

The tasks and the "clean" filler text are real prose from the Python reference manual
(tests/data/decontam/make_data.py); the filler shares no 8 words in a row with either task.
"""

from __future__ import annotations

import json
import pickle
import re
import time
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from selene.decontaminate.overlap import (
    NgramIndex,
    Report,
    Result,
    TaskMatches,
    decontaminate,
    merge_reports,
    summarize,
    task_ngram,
    words,
)
from selene.decontaminate.tasks import TaskText, load_tasks
from selene.errors import ConfigError, PathError

DATA = Path(__file__).resolve().parents[1] / "data" / "decontam"
TASKS = Path(__file__).resolve().parents[2] / "data" / "tasks"
PIQA = str(TASKS / "mini_piqa.jsonl")
LAMBADA_DIR = str(TASKS / "mini_lambada")
FILLER = (DATA / "filler.txt").read_text()


@pytest.fixture(scope="module")
def tasks() -> list[TaskText]:
    return load_tasks([PIQA, LAMBADA_DIR])


@pytest.fixture(scope="module")
def index(tasks: list[TaskText]) -> NgramIndex:
    return NgramIndex.build(tasks, ngram=13, min_ngram=8)


def run(text: str, index: NgramIndex, max_splits: int = 10) -> Result:
    return decontaminate(text, index, margin_chars=200, min_piece_chars=200, max_splits=max_splits)


def task_words(tasks: list[TaskText], task: str, example: int) -> list[str]:
    """The words of one example, as written (original case)."""
    text = next(t for t in tasks if t.task == task).texts[example]
    return re.findall(r"[^\W_]+", text)


def mangle(ws: list[str]) -> str:
    """The same words in another case and with other punctuation: must still match."""
    seps = [" -- ", ", ", ' "', "; ", "\n"]
    return "".join(w.upper() + seps[i % len(seps)] for i, w in enumerate(ws[:-1])) + ws[-1].upper()


# ------------------------------------------------------------------------------------ loading


def test_load_jsonl_task_every_string_field(tasks: list[TaskText]) -> None:
    piqa = tasks[0]
    first = json.loads(Path(PIQA).read_text().splitlines()[0])
    assert piqa.task == "mini_piqa" and len(piqa.texts) == 30
    assert piqa.texts[0] == "\n".join([first["goal"], first["sol1"], first["sol2"]])  # label 0 is no text


def test_load_harness_task_dir_and_yaml(tasks: list[TaskText]) -> None:
    lam = tasks[1]
    rows = [json.loads(x) for x in (TASKS / "mini_lambada/mini_lambada.jsonl").read_text().splitlines()]
    assert lam.task == "mini_lambada" and lam.texts == [r["text"] for r in rows]
    (one,) = load_tasks([str(TASKS / "mini_lambada/mini_lambada.yaml")])
    assert one == lam


def test_harness_function_tags_include_and_json_splits(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "val.json").write_text(json.dumps([{"q": "a question", "choices": ["x y", "z"]}]))
    (tmp_path / "data" / "train.jsonl").write_text('{"q": "training text is not evaluated"}\n')
    (tmp_path / "_base.yaml").write_text(
        "dataset_path: json\nvalidation_split: validation\nprocess_docs: !function utils.process_docs\n"
    )
    (tmp_path / "t.yaml").write_text(
        "include: _base.yaml\ntask: qa\ndataset_kwargs:\n  data_files:\n"
        "    validation: data/val.json\n    train: data/train.jsonl\n"
        "doc_to_choice: !function utils.choices\n"
    )
    (tmp_path / "group.yaml").write_text("group: all\ntask: [qa]\n")  # a group, not a task: skipped
    assert load_tasks([str(tmp_path)]) == [TaskText("qa", ["a question\nx y\nz"])]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"a": "x"}\nnot json\n', r"bad\.jsonl:2: not a JSON line"),
        (b'{"a": "x"}\n\n["a", "list"]\n', r"bad\.jsonl:3: a JSON list, expected an object"),
        (b"", r"bad\.jsonl: empty task file"),
        (b"\n  \n", r"bad\.jsonl: empty task file"),
        (b'{"a": "\xff\xfe"}\n', r"bad\.jsonl:1: not a JSON line"),
    ],
)
def test_bad_jsonl(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "bad.jsonl").write_bytes(content)
    with pytest.raises(PathError, match=message):
        load_tasks([str(tmp_path / "bad.jsonl")])


def test_unknown_extension_and_missing_path(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("goal,sol\na,b\n")
    with pytest.raises(PathError, match=r"t\.csv: unsupported task file; accepted: a \.jsonl file"):
        load_tasks([str(tmp_path / "t.csv")])
    with pytest.raises(PathError, match=r"nope\.jsonl: no such file"):
        load_tasks([str(tmp_path / "nope.jsonl")])
    with pytest.raises(PathError, match="no lm-eval task config"):
        load_tasks([str(tmp_path)])


def test_harness_missing_data_file_and_hub_dataset(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        "task: t\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: gone.jsonl\ntest_split: test\n"
    )
    with pytest.raises(PathError, match=r"t\.yaml: data file 'gone\.jsonl' not found"):
        load_tasks([str(tmp_path)])
    (tmp_path / "t.yaml").write_text("task: t\ndataset_path: EleutherAI/lambada_openai\ntest_split: test\n")
    with pytest.raises(PathError, match=r"t\.yaml: dataset_path 'EleutherAI/lambada_openai' is not a local"):
        load_tasks([str(tmp_path)])


def test_duplicate_task_names(tmp_path: Path) -> None:
    (tmp_path / "mini_piqa.jsonl").write_text('{"a": "x"}\n')
    with pytest.raises(ConfigError, match="two tasks are named 'mini_piqa'"):
        load_tasks([PIQA, str(tmp_path / "mini_piqa.jsonl")])


# ------------------------------------------------------------------------------------ overlap


def test_clean_document_is_kept_whole(index: NgramIndex) -> None:
    r = run(FILLER, index)
    assert r == Result([FILLER])
    assert run("", index) == Result([""])


def test_match_with_other_case_and_punctuation_is_cut_with_margins(
    tasks: list[TaskText], index: NgramIndex
) -> None:
    snippet = mangle(task_words(tasks, "mini_lambada", 4)[5:20])
    doc = FILLER[:1000] + " " + snippet + " " + FILLER[1000:2000]
    s, e = 1001, 1001 + len(snippet)  # the 15 matched words: 3 overlapping 13-grams
    r = run(doc, index)
    assert {m.task for m in r.matches} == {"mini_lambada"} and len(r.matches) == 3
    assert (r.matches[0].start_char, r.matches[-1].end_char) == (s, e)
    assert r.matches[0].ngram_text == doc[r.matches[0].start_char : r.matches[0].end_char]
    assert r.pieces == [doc[: s - 200], doc[e + 200 :]]
    assert r.removed_chars == len(doc) - sum(map(len, r.pieces)) == e - s + 400
    assert (r.splits, r.dropped, r.reason) == (1, False, "decontam:mini_lambada")


def test_short_pieces_are_dropped_and_spans_clip_at_document_edges(
    tasks: list[TaskText], index: NgramIndex
) -> None:
    snippet = " ".join(task_words(tasks, "mini_piqa", 2)[:13])
    at_start = run(snippet + " " + FILLER[:1000], index)
    assert at_start.pieces == [FILLER[199:1000]]  # doc[len(snippet) + 200 :], after the " "
    at_end = run(FILLER[:1000] + " " + snippet, index)
    assert at_end.pieces == [FILLER[:801]] and at_end.splits == 1
    short_piece = run(FILLER[:350] + " " + snippet + " " + FILLER[:1000], index)  # 151 chars left before
    assert short_piece.pieces == [FILLER[199:1000]] and not short_piece.dropped
    alone = run(snippet, index)
    assert alone.pieces == [] and alone.dropped and alone.removed_chars == len(snippet)


def test_more_than_max_splits_drops_the_document(tasks: list[TaskText], index: NgramIndex) -> None:
    snippets = [" ".join(task_words(tasks, "mini_lambada", i)[:13]) for i in range(11)]
    doc = f" {FILLER[:700]} ".join(["", *snippets, ""])  # 702 chars apart: widened spans do not touch
    r = run(doc, index)
    assert r.dropped and r.pieces == [] and r.splits == 11 and r.removed_chars == len(doc)
    assert r.detail == "11 splits > max_splits 10"
    kept = run(doc, index, max_splits=11)
    assert not kept.dropped and kept.splits == 11 and len(kept.pieces) == 12


def test_overlapping_matches_merge_into_one_cut(tasks: list[TaskText], index: NgramIndex) -> None:
    a, b = (" ".join(task_words(tasks, "mini_piqa", i)[:13]) for i in (5, 6))
    doc = FILLER[:1000] + " " + a + " " + FILLER[3000:3300] + " " + b + " " + FILLER[5000:6000]
    r = run(doc, index)
    assert r.splits == 1 and len(r.matches) == 2 and len(r.pieces) == 2
    assert r.pieces[0] == doc[: r.matches[0].start_char - 200]
    assert r.pieces[1] == doc[r.matches[1].end_char + 200 :]


def test_twelve_of_thirteen_words_do_not_match(tasks: list[TaskText], index: NgramIndex) -> None:
    ws = task_words(tasks, "mini_lambada", 7)
    twelve = " ".join(ws[:12]) + " zebra " + " ".join(ws[13:24])  # every 13-gram has one wrong word
    assert run(f"{FILLER[:500]} {twelve} {FILLER[500:1000]}", index).matches == []
    thirteen = " ".join(ws[:13])
    assert len(run(f"{FILLER[:500]} {thirteen} {FILLER[500:1000]}", index).matches) == 1


def test_ngrams_do_not_cross_examples(tasks: list[TaskText], index: NgramIndex) -> None:
    first, second = task_words(tasks, "mini_lambada", 0), task_words(tasks, "mini_lambada", 1)
    across = " ".join(first[-6:] + second[:7])  # the end of one example and the start of the next
    assert run(f"{FILLER[:500]} {across} {FILLER[500:1000]}", index).matches == []


def test_short_task_uses_the_median_example_length(tmp_path: Path) -> None:
    # real sentences of 9-11 words, from filler text that the test documents below do not use
    sentences = [s for s in re.split(r"(?<=\.)\s+", FILLER[5000:]) if 9 <= len(words(s)) <= 11][:9]
    assert task_ngram([len(words(s)) for s in sentences], 13, 8) < 13
    short = TaskText("short", [*sentences, "True", "False"])  # short answers index nothing
    idx = NgramIndex.build([short], ngram=13, min_ngram=8)
    n = idx.stats[0].n
    assert idx.stats[0].indexed_examples == sum(len(words(s)) >= n for s in sentences)
    assert n == max(8, sorted(len(words(s)) for s in short.texts)[5])  # the median of 11 lengths
    target = next(s for s in sentences if len(words(s)) >= n)
    ws = re.findall(r"[^\W_]+", target)
    assert run(f"{FILLER[:300]} {' '.join(ws[:n])} {FILLER[300:600]}", idx).matches
    assert not run(f"{FILLER[:300]} {' '.join(ws[: n - 1])} {FILLER[300:600]}", idx).matches
    assert task_ngram([3, 4, 5], 13, 8) == 8 and task_ngram([20, 30], 13, 8) == 13


def test_unicode_spans_and_shared_ngrams(tmp_path: Path) -> None:
    text = "İstanbul’s café “naïve” résumé façade Œuvre straße déjà vu, ÉCOLE über naïveté Ærø ÿes"
    tasks = [TaskText("a", [text]), TaskText("b", ["prefix words here " + text.lower()])]
    idx = NgramIndex.build(tasks, ngram=13, min_ngram=8)
    upper = text.upper()  # "STRASSE" is one character longer: spans are in the document's own text
    doc = "x" * 300 + " " + upper + " " + "y" * 300
    r = run(doc, idx)
    assert {m.task for m in r.matches} == {"a", "b"} and r.reason == "decontam:a"
    assert r.matches[0].start_char == 301 and r.matches[-1].end_char == 301 + len(upper)
    assert r.matches[0].ngram_text.startswith("İSTANBUL’S") and r.matches[-1].ngram_text.endswith("ŸES")
    assert r.pieces == [] and r.dropped  # 101 chars of x and of y are left: both under 200
    assert pickle.loads(pickle.dumps(idx)).lookup is not None


def test_report_counts_and_merges(tasks: list[TaskText], index: NgramIndex) -> None:
    hit = " ".join(task_words(tasks, "mini_piqa", 1)[:14])
    results = [run(f"{FILLER[:1000]} {hit} {FILLER[:1000]}", index), run(FILLER, index), run(hit, index)]
    rep = summarize(results)
    assert rep == {
        "mini_piqa": TaskMatches(
            ngrams=4,
            documents=2,
            split=1,
            dropped=1,
            examples=[results[0].matches[0].ngram_text, results[0].matches[1].ngram_text],
        )
    }
    other = summarize([run(f"{FILLER[:500]} {hit.upper()} {FILLER[:500]}", index)])
    both = merge_reports(rep, other, max_examples=3)
    assert both["mini_piqa"].documents == 3 and both["mini_piqa"].ngrams == 6
    stored = TypeAdapter(Report)
    assert len(both["mini_piqa"].examples) == 3 and stored.validate_json(stored.dump_json(both)) == both


def test_speed_without_matches(index: NgramIndex) -> None:
    """Measurements, printed (run with -s); only correctness is asserted."""
    big = (FILLER * (1_000_000 // len(FILLER) + 1))[:1_000_000]
    t0 = time.perf_counter()
    r = run(big, index)
    t1 = time.perf_counter()
    small = FILLER[:5000]
    reps = 200
    for _ in range(reps):
        run(small, index)
    t2 = time.perf_counter()
    print(f"\ndecontaminate: 1 MB clean {t1 - t0:.3f} s; 5 KB clean {(t2 - t1) / reps * 1e6:.0f} µs/doc")
    assert r.pieces == [big] and not r.matches
