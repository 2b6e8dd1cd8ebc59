"""Writes the decontamination test tasks from real English prose: the Python reference manual's topics
(`pydoc_data.topics`, shipped with CPython). Run once; the outputs are committed, so the tests do not
depend on the Python version's copy of the manual.

    python tests/data/decontam/make_data.py

- ``data/tasks/mini_piqa.jsonl``: 30 PIQA-style examples (goal, sol1, sol2, label), each field a real sentence.
- ``data/tasks/mini_lambada/mini_lambada.jsonl``: 30 LAMBADA-style passages (``text``: 2-3 sentences),
  read through the lm-eval-harness task config ``mini_lambada.yaml`` next to it.
- ``filler.txt``: prose from other topics, the "clean training text" the tests embed task text in.
"""

from __future__ import annotations

import json
import pydoc_data.topics
import re
from pathlib import Path

HERE = Path(__file__).parent
TASKS = HERE.parents[2] / "data" / "tasks"  # shipped: the demo decontaminates against them


def sentences(topic: str) -> list[str]:
    """Prose sentences of one topic (indented code blocks and headings skipped)."""
    out = []
    for para in re.split(r"\n\s*\n", pydoc_data.topics.topics[topic]):
        if para.startswith("   ") or any(m in para for m in ("***", "===", "---", "::=")):
            continue
        flat = " ".join(para.split())
        for s in re.split(r"(?<=[.])\s+(?=[A-Z])", flat):
            if s.endswith(".") and 8 <= len(s.split()) <= 40 and not s.startswith("*"):
                out.append(s)
    return out


def main() -> None:
    topics = sorted(pydoc_data.topics.topics)
    seen: set[str] = set()
    by_topic: dict[str, list[str]] = {}
    for t in topics:
        uniq = [s for s in sentences(t) if s not in seen]
        seen.update(uniq)
        by_topic[t] = uniq
    pool_a = [s for t in topics[0::3] for s in by_topic[t]]
    pool_b = [s for t in topics[1::3] for s in by_topic[t]]
    pool_c = [s for t in topics[2::3] for s in by_topic[t]]

    goals = [s for s in pool_a if len(s.split()) <= 20]
    piqa = [
        {"goal": goals[3 * i], "sol1": goals[3 * i + 1], "sol2": goals[3 * i + 2], "label": 0}
        for i in range(30)
    ]
    (TASKS / "mini_piqa.jsonl").write_text("".join(json.dumps(x) + "\n" for x in piqa))

    lambada = [{"text": " ".join(pool_b[3 * i : 3 * i + 3])} for i in range(30)]
    path = TASKS / "mini_lambada" / "mini_lambada.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lambada))

    # the manual repeats phrases across topics ("may only occur syntactically nested in a for or while
    # loop"): filler sentences sharing any 8 words in a row with a task are left out, so it is clean
    task_grams = {g for ex in piqa for k in ("goal", "sol1", "sol2") for g in grams(ex[k])}
    task_grams |= {g for ex in lambada for g in grams(ex["text"])}
    clean = [s for s in pool_c if not grams(s) & task_grams]
    (HERE / "filler.txt").write_text("\n".join(" ".join(clean[i : i + 5]) for i in range(0, 200, 5)) + "\n")


def grams(text: str, n: int = 8) -> set[tuple[str, ...]]:
    w = re.findall(r"[^\W_]+", text.lower())
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


if __name__ == "__main__":
    main()
