"""Decontamination throughput per core, next to the straightforward Python method on the same data.

    python benchmarks/decontam.py [--repeat N]

Corpus: the sample's Pile documents (×`--repeat`, with a counter so they differ) plus, every 50th
document, a passage of a shipped task spliced in. Tasks: `data/tasks` (mini_piqa, mini_lambada).
- selene: `run_decontaminate` end to end on one shard set (index build, one pass, Parquet out), 1 process;
- baseline: the textbook way — a Python set of the tasks' 13-gram strings, and for every document a
  loop over its word 13-grams joined as strings, testing membership (finds matches only; it does
  not even cut them).
Both must flag the same documents.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.decontaminate.config import DecontaminateConfig  # noqa: E402
from selene.decontaminate.stage import run_decontaminate  # noqa: E402
from selene.decontaminate.tasks import load_tasks  # noqa: E402
from tests.corpus import write_dataset  # noqa: E402

TASKS = [str(ROOT / "data" / "tasks" / "mini_piqa.jsonl"), str(ROOT / "data" / "tasks" / "mini_lambada")]
_WORD = re.compile(r"[^\W_]+")


def corpus(repeat: int) -> list[tuple[str, str]]:
    texts = []
    for f in sorted((ROOT / "data" / "sample" / "pile").glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            texts += [json.loads(line)["text"] for line in io.TextIOWrapper(r, encoding="utf-8")]
    passages = [t for task in load_tasks(TASKS) for t in task.texts if len(t.split()) > 30]
    docs = []
    for k in range(repeat):
        for i, t in enumerate(texts):
            if i % 50 == 0:
                t = f"{t[: len(t) // 2]} {passages[i % len(passages)]} {t[len(t) // 2 :]}"
            docs.append((f"d{k}-{i}", f"{t}\n[{k}]"))
    return docs


def baseline(docs: list[tuple[str, str]], n: int) -> tuple[float, set[str]]:
    t = time.perf_counter()
    grams = set()
    for task in load_tasks(TASKS):
        for text in task.texts:
            w = [x.casefold() for x in _WORD.findall(text)]
            grams.update(" ".join(w[i : i + n]) for i in range(len(w) - n + 1))
    hit = set()
    for doc_id, text in docs:
        w = [x.casefold() for x in _WORD.findall(text)]
        if any(" ".join(w[i : i + n]) in grams for i in range(len(w) - n + 1)):
            hit.add(doc_id)
    return time.perf_counter() - t, hit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    docs = corpus(args.repeat)
    mb = sum(len(t.encode()) for _, t in docs) / 1e6
    tmp = Path(tempfile.mkdtemp(prefix="selene-bench-decontam-"))
    try:
        inp = write_dataset(str(tmp / "in"), docs, shard_docs=2000)
        cfg = DecontaminateConfig(tasks=TASKS)
        t = time.perf_counter()
        res = run_decontaminate(inp, str(tmp / "out"), cfg)
        t_sel = time.perf_counter() - t
        from selene.io import dataset

        flagged = {r["id"] for r in dataset.read_removed(res.out).to_pylist()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    min_n = min(v.n for v in res.manifest.tasks.values())
    t_base, hit = baseline(docs, min_n)
    print(f"corpus: {len(docs)} documents, {mb:.1f} MB; tasks {', '.join(res.manifest.tasks)} (n = {min_n})")
    print(f"\n{'1 core':<40}{'docs/s':>9}{'MB/s':>8}{'flagged':>9}")
    print(f"{'selene run_decontaminate (cut + write)':<40}{len(docs) / t_sel:>9.0f}{mb / t_sel:>8.2f}{len(flagged):>9}")
    print(f"{'python set of 13-gram strings (find)':<40}{len(docs) / t_base:>9.0f}{mb / t_base:>8.2f}{len(hit):>9}")
    print(f"\nspeed-up {t_base / t_sel:.1f}x; same documents flagged: {flagged == hit}")


if __name__ == "__main__":
    main()
