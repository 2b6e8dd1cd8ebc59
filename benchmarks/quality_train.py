"""`selene quality train` against fastText's own trainer and GPT-3's classifier, on the same split.

    python benchmarks/quality_train.py [--out benchmarks/results/quality_train.txt] [--repeats 2]

Two sets of local technical prose of two kinds (`benchmarks/quality_train_corpus.py`): man pages of
section 1 (user commands, the positive class) against section 8 (administration commands), pieces of
at most 2,000 characters:

- small: 150 pieces of each (a few hundred examples, ~0.5 MB);
- large: every piece, 4,000 of section 1 and the 1,590 of section 8 (~9 MB, unbalanced).

The held-out split is selene's own (10% of each class by a seeded hash of the id,
`selene.quality.train.heldout`); every method trains on the rest and is scored there:

- `selene quality train` as a user runs it (a fresh process; settings searched): wall clock, the
  search's and the final fit's seconds as it reports them, model size, held-out AUC; then the same
  command with the chosen settings given (nothing searched): the single-fit wall clock;
- fastText's own trainer (`fasttext.train_supervised` in a fresh process, one thread, dim 64, 1M
  buckets, the training part's lines shuffled, model saved): at fastText's defaults (5 epochs,
  lr 0.1, with word bigrams) and at selene's chosen settings;
- GPT-3's classifier: scikit-learn's LogisticRegression on HashingVectorizer word 1-2-grams
  (2^20 features), in this process.

Wall times are the fastest of `--repeats` runs, selene's and fastText's alternating (the machine
may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from quality_train_corpus import man_pages  # noqa: E402

from selene.quality.examples import Example  # noqa: E402
from selene.quality.fasttext import normalize  # noqa: E402
from selene.quality.search import auc  # noqa: E402
from selene.quality.train import heldout  # noqa: E402

SEED = 1234
HELDOUT = 0.1
FASTTEXT = """import sys, fasttext
m = fasttext.train_supervised(input=sys.argv[1], dim=64, bucket=1000000, wordNgrams=int(sys.argv[2]), epoch=int(sys.argv[3]),
                              lr=float(sys.argv[4]), thread=1, seed=1, verbose=0)
m.save_model(sys.argv[5])
"""


def sets() -> dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]]:
    man1, man8 = man_pages("1", 4000), man_pages("8", 4000)
    rng = random.Random(0)
    return {"small": (rng.sample(man1, 150), rng.sample(man8, 150)), "large": (man1, man8)}


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return time.perf_counter() - t, r.stdout


def scores(model_path: str, texts: list[str]) -> np.ndarray:
    from selene.quality.fasttext import Classifier

    return Classifier.load(model_path, "hq").score(texts)


def logistic(train: list[tuple[str, bool]], test: list[tuple[str, bool]]) -> dict[str, float]:
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import LogisticRegression

    t = time.perf_counter()
    vec = HashingVectorizer(ngram_range=(1, 2), n_features=1 << 20, alternate_sign=False)
    model = LogisticRegression(max_iter=1000).fit(vec.transform([x for x, _ in train]), [y for _, y in train])
    seconds = time.perf_counter() - t
    p = model.predict_proba(vec.transform([x for x, _ in test]))[:, 1]
    truth = np.array([y for _, y in test])
    return {"auc": auc(p[truth], p[~truth]), "seconds": seconds}


def run_set(
    name: str, pos: list[tuple[str, str]], neg: list[tuple[str, str]], tmp: Path, repeats: int
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SELENE_PREFECT": "off"}
    d = tmp / name
    d.mkdir()
    for fname, rows in (("pos.jsonl", pos), ("neg.jsonl", neg)):
        (d / fname).write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in rows))
    # selene's split: the class's label keys the hash (`train_classifier`)
    split = {
        label: [(t, heldout(Example(i, t, label), HELDOUT, SEED)) for i, t in rows]
        for label, rows in (("hq", pos), ("lq", neg))
    }
    train = [(t, label == "hq") for label, rows in split.items() for t, held in rows if not held]
    test = [(t, label == "hq") for label, rows in split.items() for t, held in rows if held]
    truth = np.array([y for _, y in test])
    lines = [f"__label__{'hq' if y else 'lq'} {normalize(t)}\n" for t, y in train]
    random.Random(SEED).shuffle(lines)
    (d / "train.txt").write_text("".join(lines), encoding="utf-8")
    out: dict[str, Any] = {
        "documents": {"positive": len(pos), "negative": len(neg)},
        "bytes": sum(len(t.encode()) for _, t in pos + neg),
        "train": len(train),
        "heldout": len(test),
    }

    selene = [
        sys.executable,
        "-m",
        "selene.cli",
        "quality",
        "train",
        "-p",
        f"man1={d}/pos.jsonl",
        "-n",
        f"man8={d}/neg.jsonl",
    ]
    seconds, stdout = wall([*selene, "-o", str(d / "searched")], env)
    report = json.loads((d / "searched" / "report.json").read_text())
    chosen = report["search"]["chosen"]
    found = re.search(r"\(\d+ fold\(s\), ([\d.]+) s\).*fit ([\d.]+) s", stdout.replace("\n", " "))
    out["selene searched"] = {
        "wall_s": seconds, "search_s": float(found[1]) if found else None, "fit_s": float(found[2]) if found else None,
        "auc": report["heldout"]["auc"], "model_mb": (d / "searched" / "model.bin").stat().st_size / 1e6,
        "chosen": chosen, "trials": len(report["search"]["trials"]), "folds": report["search"]["folds"],
    }  # fmt: skip
    given = [
        "--epoch",
        str(chosen["epoch"]),
        "--lr",
        str(chosen["lr"]),
        "--word-ngrams",
        str(chosen["word_ngrams"]),
    ]
    ft_args = [str(chosen["word_ngrams"]), str(chosen["epoch"]), str(chosen["lr"])]
    single, own = [], []
    for _ in range(repeats):
        single.append(wall([*selene, *given, "-o", str(d / "single")], env)[0])
        own.append(
            wall([sys.executable, "-c", FASTTEXT, str(d / "train.txt"), *ft_args, str(d / "own.bin")], env)[0]
        )
    single_report = json.loads((d / "single" / "report.json").read_text())
    out["selene single fit"] = {"wall_s": min(single), "auc": single_report["heldout"]["auc"]}
    s = scores(str(d / "own.bin"), [t for t, _ in test])
    out["fastText tuned"] = {"wall_s": min(own), "auc": auc(s[truth], s[~truth]), "settings": chosen}
    default = wall(
        [sys.executable, "-c", FASTTEXT, str(d / "train.txt"), "2", "5", "0.1", str(d / "default.bin")], env
    )[0]
    s = scores(str(d / "default.bin"), [t for t, _ in test])
    out["fastText defaults"] = {
        "wall_s": default,
        "auc": auc(s[truth], s[~truth]),
        "settings": {"epoch": 5, "lr": 0.1, "word_ngrams": 2},
    }
    out["logistic regression"] = logistic(train, test)
    return out


def render(results: dict[str, Any]) -> str:
    lines = []
    for name, r in results.items():
        lines += [
            f"## {name}: {r['documents']['positive']} man1 + {r['documents']['negative']} man8 pieces, "
            f"{r['bytes'] / 1e6:.2f} MB; trained on {r['train']}, held out {r['heldout']} (selene's split)",
            "",
            "| method | held-out AUC | wall s | notes |",
            "|---|---:|---:|---|",
        ]
        s = r["selene searched"]
        c = s["chosen"]
        lines.append(
            f"| selene quality train (search) | {s['auc']:.4f} | {s['wall_s']:.1f} | search {s['search_s']} s over "
            f"{s['trials']} settings, {s['folds']} fold(s); fit {s['fit_s']} s; chose epoch {c['epoch']}, lr {c['lr']}, "
            f"wordNgrams {c['word_ngrams']}; model {s['model_mb']:.0f} MB |"
        )
        lines.append(
            f"| selene quality train (settings given) | {r['selene single fit']['auc']:.4f} | {r['selene single fit']['wall_s']:.1f} | one fit, whole command |"
        )
        for key in ("fastText tuned", "fastText defaults"):
            f = r[key]
            st = f["settings"]
            lines.append(
                f"| {key} (train_supervised) | {f['auc']:.4f} | {f['wall_s']:.1f} | epoch {st['epoch']}, lr {st['lr']}, wordNgrams {st['word_ngrams']}, whole process |"
            )
        lines.append(
            f"| logistic regression (hashed 1-2-grams) | {r['logistic regression']['auc']:.4f} | {r['logistic regression']['seconds']:.1f} | fit only, in process |"
        )
        ratio = r["selene single fit"]["wall_s"] / r["fastText tuned"]["wall_s"]
        gap = s["auc"] - r["logistic regression"]["auc"]
        lines += [
            "",
            f"selene single fit / fastText tuned: {ratio:.2f}x wall; selene AUC - logistic regression AUC: {gap:+.4f}",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "quality_train.txt"))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--only", choices=["small", "large"])
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="quality-train-bench-") as tmp:
        for name, (pos, neg) in sets().items():
            if args.only and name != args.only:
                continue
            results[name] = run_set(name, pos, neg, Path(tmp), args.repeats)
            print(render({name: results[name]}), flush=True)
    text = render(results)
    Path(args.out).write_text(
        f"python benchmarks/quality_train.py (one core, {time.strftime('%Y-%m-%d')})\n\n{text}\n"
    )
    Path(args.out).with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
