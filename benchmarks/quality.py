"""Quality classifiers, measured: selene's fastText-format classifier against GPT-3's method, the
quality stage's throughput and memory as a command, and datatrove's filter applying selene's model.

    python benchmarks/quality.py [--docs N] [--datatrove-python PATH] [--repeats 3] [--json FILE]

1. Held-out AUC and speed on the same train/held-out split of text the project ships
   (`data/sample/pile`): explanatory prose (PythonReference, Docstrings) against package and licence
   metadata (PyPI, DebianCopyright, Licenses), 3 KB pieces, split by a hash of the id.
   - selene: `selene.quality.fasttext.train` (fastText's trainer, word bigrams, 25 epochs at lr 0.5)
     and fastText's C++ scoring;
   - GPT-3's method: logistic regression on hashed word 1-2-grams (scikit-learn's HashingVectorizer
     and LogisticRegression), trained and scored in the same process.
2. `selene quality` as a user runs it (a fresh process, one worker), on N and 4N web documents of
   ~3 KB (pieces of 1, drawn with replacement; the model: selene's, trained on all the pieces):
   documents per second, and the peak memory of each (flat in the corpus size).
3. selene against datatrove's `FastTextClassifierFilter`, the model of 2 on its 4N documents, every
   document judged, label `hq` kept at a score >= 0.5 (both compare with >=):
   - decisions: each document's kept/dropped by the two commands, the disagreements with both
     scores, and the largest score difference over all documents (both score with fastText 0.9.2's
     C++ `predict`, both through `fasttext-numpy2-wheel`);
   - the same text: selene turns newlines into spaces before predicting, datatrove deletes them
     unless told otherwise (`newline_replacement=""`, joining the last word of a line to the first
     of the next), so the filter runs with `newline_replacement=" "`; the scores under its default
     are reported too;
   - throughput of each as a whole command, wall clock and per CPU-second (one worker): `selene
     quality --workers 1`, and `benchmarks/_datatrove_fasttext.py pipeline` (ParquetReader →
     FastTextClassifierFilter → ParquetWriter, dropped documents to an exclusion ParquetWriter, under
     LocalPipelineExecutor with one task and one worker), both reading the same Parquet shards;
     datatrove's executor run and filter step as it times them; and the scoring alone, one core with
     the model loaded: selene's `Classifier.score` and the filter's `filter(doc)` in a loop. Each
     timing is the fastest of `--repeats` runs, selene's and datatrove's commands alternating, so
     that both meet the same load on a shared machine.
   Peak memory is each command's own (ru_maxrss through a small launcher: a child's starts at its
   parent's RSS).
   datatrove runs in its own venv (it is not a dependency of selene); create it once with

       python3 -m venv /work/venvs/datatrove
       /work/venvs/datatrove/bin/pip install "datatrove[processing]==0.10.1" spacy pyarrow orjson

   (the `processing` extra installs `fasttext-numpy2-wheel`, a wheel of the `fasttext` module the
   filter imports; spacy is for `benchmarks/dedup.py`, which shares the venv). `--datatrove-python`
   points elsewhere; without it this part is skipped with a message.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import xxhash
import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from selene.quality import fasttext  # noqa: E402
from selene.quality.search import auc  # noqa: E402

GOOD = {"PythonReference", "Docstrings"}
OTHER = {"PyPI", "DebianCopyright", "Licenses"}
PIECE = 3000
LABEL = "hq"
THRESHOLD = 0.5
NEAR = 0.05  # a score this close to the threshold is where two implementations could disagree
DATATROVE_PYTHON = "/work/venvs/datatrove/bin/python"
DATATROVE_SCRIPT = ROOT / "benchmarks" / "_datatrove_fasttext.py"


def pieces() -> list[tuple[str, str, bool]]:
    """(id, text, good) of 3 KB pieces of the shipped sample's documents of the two kinds."""
    out = []
    for path in sorted((ROOT / "data" / "sample" / "pile").glob("*.jsonl.zst")):
        for n, line in enumerate(zstandard.ZstdDecompressor().stream_reader(path.open("rb")).read().splitlines()):
            d = json.loads(line)
            kind = d["meta"]["pile_set_name"]
            if kind not in GOOD | OTHER:
                continue
            text = d["text"]
            for k in range(0, len(text), PIECE):
                piece = text[k : k + PIECE]
                if len(piece) > 500:
                    out.append((f"{path.name}#{n}.{k}", piece, kind in GOOD))
    return out


def held(i: str) -> bool:
    return xxhash.xxh64_intdigest(i.encode()) % 5 == 0


def compare() -> dict[str, dict[str, float]]:
    data = pieces()
    train = [(t, g) for i, t, g in data if not held(i)]
    test = [(t, g) for i, t, g in data if held(i)]
    truth = np.array([g for _, g in test])
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        settings = fasttext.Settings(epoch=25, lr=0.5)  # settings search: benchmarks/quality_train.py
        fasttext.train([("hq" if g else "lq", t) for t, g in train], settings, f"{tmp}/m.bin", seed=1)
        t1 = time.perf_counter()
        clf = fasttext.Classifier.load(f"{tmp}/m.bin", "hq")
        t2 = time.perf_counter()
        s = clf.score([t for t, _ in test])
        t3 = time.perf_counter()
    out["selene fastText"] = {"auc": auc(s[truth], s[~truth]), "train_s": t1 - t0, "score_docs_per_s": len(test) / (t3 - t2)}
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import LogisticRegression

    t0 = time.perf_counter()
    vec = HashingVectorizer(ngram_range=(1, 2), n_features=1 << 20, alternate_sign=False)
    lr = LogisticRegression(max_iter=1000).fit(vec.transform([t for t, _ in train]), [g for _, g in train])
    t1 = time.perf_counter()
    p = lr.predict_proba(vec.transform([t for t, _ in test]))[:, 1]
    t2 = time.perf_counter()
    out["GPT-3 (hashed n-grams + logistic regression)"] = {"auc": auc(p[truth], p[~truth]), "train_s": t1 - t0, "score_docs_per_s": len(test) / (t2 - t1)}
    out["_data"] = {"train": len(train), "heldout": len(test), "heldout_good": int(truth.sum())}
    return out


def web_docs(n: int, tmp: Path) -> str:
    """A selene dataset of n documents of source `web`: pieces of the sample drawn with replacement."""
    from tests.corpus import write_dataset

    rng = np.random.default_rng(n)
    data = [(i, t) for i, t, _ in pieces()]
    docs = [(f"w{k}", data[int(rng.integers(len(data)))][1]) for k in range(n)]
    return write_dataset(str(tmp / f"in{n}"), docs, shard_docs=2000, source="web")


def stage_run(inp: str, n: int, model: str, tmp: Path) -> dict[str, float]:
    """`selene quality` on the n documents at `inp`, in a fresh process: wall time and peak memory."""
    code = (
        "import time\nfrom selene.quality.config import QualityConfig, ClassifierSpec\n"
        "from selene.quality.stage import run_quality\nt=time.perf_counter()\n"
        f"run_quality({inp!r}, {str(tmp / f'out{n}')!r}, QualityConfig(classifiers=[ClassifierSpec(name={LABEL!r}, model={model!r}, label={LABEL!r})], sources=['web']))\n"
        # VmHWM: this process's own peak (ru_maxrss would start at the parent's RSS)
        "print(time.perf_counter()-t, open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    seconds, rss_kb = r.stdout.split()
    return {"documents": n, "seconds": float(seconds), "docs_per_s": n / float(seconds), "peak_rss_mib": int(rss_kb) / 1024}


@dataclass
class Run:
    """A command run to completion: wall clock, and user+sys CPU and peak RSS of that command alone
    (the machine may be shared, so CPU time is the steadier measure)."""

    seconds: float
    cpu_s: float
    peak_rss_mib: float


# Linux starts a child's ru_maxrss at its parent's RSS (carried across fork and exec): commands are
# started by this small launcher, so that their peak is theirs and not this process's.
LAUNCHER = """import json, os, subprocess, sys, time
with open(sys.argv[1], "w") as log:
    t = time.perf_counter()
    p = subprocess.Popen(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t
print(json.dumps([os.waitstatus_to_exitcode(status), seconds, ru.ru_utime + ru.ru_stime, ru.ru_maxrss]))
"""


def timed(cmd: list[str], env: dict[str, str], log: Path) -> Run:
    r = subprocess.run([sys.executable, "-c", LAUNCHER, str(log), *cmd], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    code, seconds, cpu_s, rss_kb = json.loads(r.stdout)
    if code != 0:
        sys.exit(f"command failed ({code}): {' '.join(cmd)}\n{log.read_text()[-3000:]}")
    return Run(seconds, cpu_s, rss_kb / 1024)


def column(paths: list[Path], name: str) -> list[Any]:
    return [v for p in paths for v in pq.read_table(p, columns=[name]).column(name).to_pylist()]


def selene_command(inp: str, model: str, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", "selene.cli", "quality", "-i", inp, "-o", str(out), "--workers", "1"]
    cmd += ["--classifier", f"{LABEL}={model}:{LABEL}", "--rule", "threshold", "--threshold", str(THRESHOLD)]
    return [*cmd, "--judge", "web"]  # every document: by default only those with a `url` are judged


def selene_kept(out: Path, n: int) -> set[str]:
    kept = set(column(sorted(out.glob("part-*.parquet")), "id"))
    reasons = column([out / "removed.parquet"], "reason")
    if len(kept) + len(reasons) != n or set(reasons) - {f"quality:{LABEL}"}:
        sys.exit(f"selene quality: {len(kept)} kept + {len(reasons)} removed of {n}, reasons {set(reasons)}")
    return kept


def datatrove_scores(work: Path) -> tuple[set[str], dict[str, float]]:
    """The documents datatrove's pipeline kept, and every document's score from its metadata."""
    kept = sorted((work / "output").glob("*.parquet"))
    scores: dict[str, float] = {}
    for path in kept + sorted((work / "removed").glob("*.parquet")):
        t = pq.read_table(path, columns=["id", "metadata"])
        labelled = t.column("metadata").combine_chunks().field(f"__label__{LABEL}")
        scores.update(zip(t.column("id").to_pylist(), labelled.to_pylist(), strict=True))
    return set(column(kept, "id")), scores


def versus_datatrove(inp: str, model: str, tmp: Path, python: str, repeats: int) -> dict[str, Any]:
    """selene's quality stage and datatrove's FastTextClassifierFilter, the same model on the same
    documents: decisions, scores and throughput (the fastest of `repeats` runs of each, the two
    commands alternating so that both see the same load on a shared machine)."""
    shards = sorted(Path(inp).glob("part-*.parquet"))
    ids = [str(i) for i in column(shards, "id")]
    texts = [str(t) for t in column(shards, "text")]
    n = len(ids)
    selene_env = {**os.environ, "PYTHONPATH": str(ROOT), "SELENE_PREFECT": "off"}
    # The filter copies a local model into datatrove's asset cache, keyed by its path: a cache in the
    # temporary directory leaves no copy behind, and the first (scoring) call pays for the copy.
    datatrove_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    datatrove_env["HF_ASSETS_CACHE"] = str(tmp / "datatrove-assets")
    script = [python, str(DATATROVE_SCRIPT)]
    opts = ["--model", model, "--label", LABEL, "--threshold", str(THRESHOLD)]
    scored = {}
    for name, replacement in (("space", " "), ("deleted", "")):
        work = tmp / f"datatrove-score-newline-{name}"
        score = [*script, "score", inp, str(work), *opts, "--newline-replacement", replacement, "--repeats", str(repeats)]
        timed(score, datatrove_env, tmp / "datatrove-score.log")
        scored[name] = json.loads((work / "scores.json").read_text())
    runs: dict[str, list[Run]] = {"selene": [], "datatrove": []}
    for k in range(repeats):
        runs["selene"].append(timed(selene_command(inp, model, tmp / f"selene-{k}"), selene_env, tmp / "selene.log"))
        pipeline = [*script, "pipeline", inp, str(tmp / f"datatrove-{k}"), *opts]
        runs["datatrove"].append(timed(pipeline, datatrove_env, tmp / "datatrove-pipeline.log"))
    clf = fasttext.Classifier.load(model, LABEL)
    selene_score_s = []
    for _ in range(repeats):
        t = time.perf_counter()
        s_scores = clf.score(texts)
        selene_score_s.append(time.perf_counter() - t)

    s_kept = selene_kept(tmp / "selene-0", n)
    d_kept, d_score_of = datatrove_scores(tmp / "datatrove-0")
    if set(d_score_of) != set(ids):
        sys.exit(f"datatrove: {len(d_score_of)} documents out (kept and removed) of {n}")
    s_keep = np.array([i in s_kept for i in ids])
    d_keep = np.array([i in d_kept for i in ids])
    d_scores = np.array([d_score_of[i] for i in ids])
    deleted = np.array([scored["deleted"]["scores"][i] for i in ids])
    fastest = {side: min(range(repeats), key=lambda k: r[k].seconds) for side, r in runs.items()}
    inside = json.loads((tmp / f"datatrove-{fastest['datatrove']}" / "timing.json").read_text())

    def command(r: Run) -> dict[str, float]:
        per_s = {"docs_per_s": n / r.seconds, "docs_per_cpu_s": n / r.cpu_s}
        return {"seconds": r.seconds, "cpu_s": r.cpu_s, **per_s, "peak_rss_mib": r.peak_rss_mib}

    return {
        "documents": n,
        "repeats": repeats,
        "kept": {"selene": int(s_keep.sum()), "datatrove": int(d_keep.sum())},
        "near_threshold": int(np.sum(np.abs(s_scores - THRESHOLD) < NEAR)),
        "decisions_differ": [
            {"id": ids[i], "selene": float(s_scores[i]), "datatrove": float(d_scores[i])}
            for i in np.flatnonzero(s_keep != d_keep)
        ],
        "score_max_abs_diff": float(np.max(np.abs(s_scores - d_scores))),
        "datatrove_newlines_deleted": {
            "decisions_differ": int(np.sum((deleted >= THRESHOLD) != s_keep)),
            "scores_differ_over_1e-6": int(np.sum(np.abs(s_scores - deleted) > 1e-6)),
            "score_max_abs_diff": float(np.max(np.abs(s_scores - deleted))),
        },
        "command": {side: command(runs[side][k]) for side, k in fastest.items()},
        "datatrove_inside": {"executor_run_s": inside["pipeline_s"], "filter_step_s": inside["filter_s"]},
        "scoring_docs_per_s": {"selene": n / min(selene_score_s), "datatrove": n / scored["space"]["seconds"]},
    }


def print_versus(v: dict[str, Any]) -> None:
    n = v["documents"]
    print(f"\nselene vs datatrove's FastTextClassifierFilter: selene's model, keep P({LABEL}) >= {THRESHOLD}, {n:,} documents "
          f"({v['near_threshold']:,} scored within {NEAR} of the threshold); timings: the fastest of {v['repeats']} runs")
    print(f"kept: selene {v['kept']['selene']:,}, datatrove {v['kept']['datatrove']:,}; decisions that differ: "
          f"{len(v['decisions_differ'])}; largest score difference {v['score_max_abs_diff']:.2e}")
    for d in v["decisions_differ"]:
        print(f"  {d['id']}: selene {d['selene']:.8f}, datatrove {d['datatrove']:.8f}")
    nd = v["datatrove_newlines_deleted"]
    print(f"datatrove's default newline_replacement=\"\" (newlines deleted, the words either side joined): "
          f"{nd['scores_differ_over_1e-6']:,} scores differ by more than 1e-6 (at most {nd['score_max_abs_diff']:.3f}), "
          f"{nd['decisions_differ']} decisions differ")
    print("\n| whole command, one worker | seconds | CPU s | docs/s | docs per CPU-second | peak RSS MiB |\n|---|---:|---:|---:|---:|---:|")
    for side, label in (("selene", "`selene quality`"), ("datatrove", "datatrove pipeline")):
        c = v["command"][side]
        print(f"| {label} | {c['seconds']:.2f} | {c['cpu_s']:.2f} | {c['docs_per_s']:,.0f} | {c['docs_per_cpu_s']:,.0f} | {c['peak_rss_mib']:.0f} |")
    inside = v["datatrove_inside"]
    print(f"datatrove inside its process: executor run {inside['executor_run_s']:.2f} s ({n / inside['executor_run_s']:,.0f} docs/s), "
          f"of which the filter step {inside['filter_step_s']:.2f} s (with its model load)")
    sc = v["scoring_docs_per_s"]
    print(f"scoring alone (one core, model loaded): selene Classifier.score {sc['selene']:,.0f} docs/s, "
          f"datatrove filter() {sc['datatrove']:,.0f} docs/s")
    cs, cd = v["command"]["selene"], v["command"]["datatrove"]
    print(f"selene / datatrove: whole command {cs['docs_per_s'] / cd['docs_per_s']:.2f}x wall, "
          f"{cs['docs_per_cpu_s'] / cd['docs_per_cpu_s']:.2f}x per CPU-second; scoring {sc['selene'] / sc['datatrove']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000, help="Documents of the smaller stage run (the larger: 4x).")
    ap.add_argument("--datatrove-python", default=DATATROVE_PYTHON, help="datatrove's venv's Python (part 3).")
    ap.add_argument("--repeats", type=int, default=3, help="Runs of each side in part 3; the fastest counts.")
    ap.add_argument("--json", help="Write the results here too.")
    args = ap.parse_args()
    results: dict[str, Any] = {"classifiers": compare()}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        data = pieces()
        model = str(tmp / "model.bin")
        fasttext.train([("hq" if g else "lq", t) for _, t, g in data], fasttext.Settings(epoch=25, lr=0.5), model, seed=1)
        inputs = {n: web_docs(n, tmp) for n in (args.docs, 4 * args.docs)}
        results["stage"] = [stage_run(inp, n, model, tmp) for n, inp in inputs.items()]
        if Path(args.datatrove_python).exists():
            results["versus_datatrove"] = versus_datatrove(inputs[4 * args.docs], model, tmp, args.datatrove_python, args.repeats)
    cls = results["classifiers"]
    print(f"held-out split: {cls['_data']}")
    print("| method | held-out AUC | train s | scoring docs/s |\n|---|---:|---:|---:|")
    for name, r in cls.items():
        if not name.startswith("_"):
            print(f"| {name} | {r['auc']:.4f} | {r['train_s']:.2f} | {r['score_docs_per_s']:,.0f} |")
    print("\n| `selene quality` (one worker) | documents | seconds | docs/s | peak RSS MiB |\n|---|---:|---:|---:|---:|")
    for r in results["stage"]:
        print(f"| | {r['documents']:,} | {r['seconds']:.2f} | {r['docs_per_s']:,.0f} | {r['peak_rss_mib']:.0f} |")
    if "versus_datatrove" in results:
        print_versus(results["versus_datatrove"])
    else:
        print(f"\nselene vs datatrove skipped: no {args.datatrove_python} (this file's docstring says how to create it)")
    print(f"\nthis process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
