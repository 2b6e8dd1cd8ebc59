"""Rebuild the local evaluation tasks' data files from real English prose, deterministically.

The prose is the Python reference manual's help topics (`pydoc_data.topics`, shipped with CPython), so
the tasks need no download and run offline. Each task gets a scored split (`test`, 40 docs) and a
disjoint few-shot split (`train`, 10 docs), so a few-shot example can never be the scored document.
Every sentence is used by at most one task/split. The selection (seeded shuffle of all sentences)
differs from `tests/data/decontam/make_data.py`, whose `data/tasks/mini_*` files are kept for the
decontamination stage and must not double as evaluation data here.

Run ``python -m selene.eval.tasks.make_tasks`` after changing it; the outputs are committed.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The decontamination stage's test tasks (committed); no sentence of theirs is reused here.
DECONTAM_TASKS = HERE.parents[2] / "data" / "tasks"
SEED = 20240611
N_TEST, N_TRAIN = 40, 10


def _paragraphs() -> list[list[str]]:
    """Prose paragraphs of every topic as lists of sentences; code, grammar and tables are skipped."""
    from pydoc_data.topics import topics

    out: list[list[str]] = []
    for key in sorted(topics):
        for para in re.split(r"\n\s*\n", topics[key]):
            lines = para.split("\n")
            if any(line.startswith((" ", "\t")) for line in lines) or any(
                marker in para for marker in (">>>", "::=", "|", "`")
            ):
                continue
            flat = " ".join(line.strip() for line in lines).strip()
            if not flat.isascii():
                continue
            sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", flat) if _good(s)]
            if sentences:
                out.append(sentences)
    return out


def _taken() -> str:
    """All text of the decontamination tasks, to keep their sentences out of these tasks."""
    return "\n".join(p.read_text() for p in sorted(DECONTAM_TASKS.rglob("*.jsonl")))


def _good(sentence: str) -> bool:
    words = sentence.split(" ")
    last = words[-1].rstrip(".")
    return 8 <= len(words) <= 30 and sentence.endswith(".") and last.isalpha() and len(last) >= 3


def build() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """All four tasks' splits: {task: {split: [doc, ...]}}; a pure function of the CPython topics."""
    rng = random.Random(SEED)
    taken = _taken()
    paras = [kept for p in _paragraphs() if (kept := [s for s in p if json.dumps(s)[1:-1] not in taken])]
    # sentence pairs (s, next s in the same paragraph) for the HellaSwag-style task
    pairs = [(p[i], p[i + 1]) for p in paras for i in range(len(p) - 1)]
    rng.shuffle(pairs)
    pairs = pairs[: N_TEST + N_TRAIN]
    used = {s for pair in pairs for s in pair}
    singles = sorted({s for p in paras for s in p} - used)
    rng.shuffle(singles)
    need = N_TEST + N_TRAIN
    if len(singles) < 3 * need + 3 * need:
        raise RuntimeError(f"only {len(singles)} usable sentences in pydoc_data.topics")
    cloze_pool, piqa_pool, gen_pool = singles[:need], singles[need : 2 * need], singles[2 * need : 3 * need]
    distractors = singles[3 * need :]

    def cloze(s: str) -> dict[str, Any]:
        words = s.rstrip(".").split(" ")
        return {"context": " ".join(words[:-1]), "word": words[-1]}

    def piqa(i: int, s: str) -> dict[str, Any]:
        words = s.split(" ")
        cut = len(words) // 2
        wrong = distractors[i].split(" ")
        sols = [" ".join(words[cut:]), " ".join(wrong[len(wrong) // 2 :])]
        label = rng.randrange(2)
        if label:
            sols.reverse()
        return {"goal": " ".join(words[:cut]), "sol1": sols[0], "sol2": sols[1], "label": label}

    def hella(i: int, pair: tuple[str, str]) -> dict[str, Any]:
        endings = [pair[1], *distractors[need + 3 * i : need + 3 * i + 3]]
        order = list(range(4))
        rng.shuffle(order)
        return {"ctx": pair[0], "endings": [endings[j] for j in order], "label": order.index(0)}

    def gen(s: str) -> dict[str, Any]:
        return {"sentence": s, "answer": s.split(" ")[0].strip(",;:")}

    docs: dict[str, list[dict[str, Any]]] = {
        "selene_cloze": [cloze(s) for s in cloze_pool],
        "selene_piqa": [piqa(i, s) for i, s in enumerate(piqa_pool)],
        "selene_hellaswag": [hella(i, p) for i, p in enumerate(pairs)],
        "selene_firstword": [gen(s) for s in gen_pool],
    }
    return {name: {"test": d[:N_TEST], "train": d[N_TEST:]} for name, d in docs.items()}


def main() -> None:
    for name, splits in build().items():
        for split, docs in splits.items():
            path = HERE / f"{name}.{split}.jsonl"
            path.write_text("".join(json.dumps(d) + "\n" for d in docs))
            print(f"{path.name}: {len(docs)} docs")


if __name__ == "__main__":
    main()
