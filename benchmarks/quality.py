"""Quality classifiers, measured: selene's fastText-format classifier against GPT-3's method, and the
quality stage's throughput and memory as a command.

    python benchmarks/quality.py [--docs N] [--json FILE]

1. Held-out AUC and speed on the same train/held-out split of text the project ships
   (`data/sample/pile`): explanatory prose (PythonReference, Docstrings) against package and licence
   metadata (PyPI, DebianCopyright, Licenses), 3 KB pieces, split by a hash of the id.
   - selene: `selene.quality.fasttext.train` (word bigrams, the epochs `selene quality train` picks)
     and fastText's C++ scoring;
   - GPT-3's method: logistic regression on hashed word 1-2-grams (scikit-learn's HashingVectorizer
     and LogisticRegression), trained and scored in the same process.
2. `selene quality` as a user runs it (a fresh process, one worker), on N and 4N web documents of
   ~3 KB: documents per second, and the peak memory of each (flat in the corpus size).
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
from pathlib import Path

import numpy as np
import xxhash
import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from selene.quality import fasttext  # noqa: E402
from selene.quality.train import auc, auto_epochs  # noqa: E402

GOOD = {"PythonReference", "Docstrings"}
OTHER = {"PyPI", "DebianCopyright", "Licenses"}
PIECE = 3000


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
        settings = fasttext.Settings(epoch=auto_epochs(len(train)))  # as `selene quality train` chooses
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


def stage_run(n: int, model: str, tmp: Path) -> dict[str, float]:
    """`selene quality` on n web documents of ~3 KB, in a fresh process: wall time and peak memory."""
    from tests.corpus import write_dataset

    rng = np.random.default_rng(n)
    data = [(i, t) for i, t, _ in pieces()]
    docs = [(f"w{k}", data[int(rng.integers(len(data)))][1]) for k in range(n)]
    inp = write_dataset(str(tmp / f"in{n}"), docs, shard_docs=2000, source="web")
    code = (
        "import resource, sys, time\nfrom selene.quality.config import QualityConfig, ClassifierSpec\n"
        "from selene.quality.stage import run_quality\nt=time.perf_counter()\n"
        f"run_quality({inp!r}, {str(tmp / f'out{n}')!r}, QualityConfig(classifiers=[ClassifierSpec(name='hq', model={model!r}, label='hq')], sources=['web']))\n"
        "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    seconds, rss_kb = r.stdout.split()
    return {"documents": n, "seconds": float(seconds), "docs_per_s": n / float(seconds), "peak_rss_mib": int(rss_kb) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000, help="Documents of the smaller stage run (the larger: 4x).")
    ap.add_argument("--json", help="Write the results here too.")
    args = ap.parse_args()
    results: dict[str, object] = {"classifiers": compare()}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        data = pieces()
        fasttext.train([("hq" if g else "lq", t) for _, t, g in data], fasttext.Settings(epoch=auto_epochs(len(data))), str(tmp / "m.bin"), seed=1)
        results["stage"] = [stage_run(n, str(tmp / "m.bin"), tmp) for n in (args.docs, 4 * args.docs)]
    cls = results["classifiers"]
    assert isinstance(cls, dict)
    print(f"held-out split: {cls['_data']}")
    print("| method | held-out AUC | train s | scoring docs/s |\n|---|---:|---:|---:|")
    for name, r in cls.items():
        if not name.startswith("_"):
            print(f"| {name} | {r['auc']:.4f} | {r['train_s']:.2f} | {r['score_docs_per_s']:,.0f} |")
    print("\n| `selene quality` (one worker) | documents | seconds | docs/s | peak RSS MiB |\n|---|---:|---:|---:|---:|")
    for r in results["stage"]:  # type: ignore[union-attr]
        print(f"| | {r['documents']:,} | {r['seconds']:.2f} | {r['docs_per_s']:,.0f} | {r['peak_rss_mib']:.0f} |")
    print(f"\nthis process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
