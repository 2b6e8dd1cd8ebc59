"""Dev check: selene's sentence splitter (`selene.spans.sentences`) against datatrove's
`split_into_parts(text, "SENTENCE")` (spaCy ``blank("en")`` + sentencizer) on the bundled sample
corpus (Pile-style documents and the WET pages' text), plus a list of tricky sentences.

Counts the documents whose sentence ends differ and prints, per kind of difference, a few examples
(the text around the first end that differs), and the time each splitter took (datatrove's includes
its word tokenizer, run on each text for the word counts compared too).

    python scripts/spans_splitter_check.py [--datatrove-python /work/venvs/datatrove/bin/python] [--limit N]

datatrove runs in its own interpreter (it is not a selene dependency): the texts go to it as JSON
lines on stdin, its parts' ends come back the same way.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import zstandard

from selene.spans.sentences import sentence_ends
from selene.spans.words import count_words

ROOT = Path(__file__).resolve().parents[1]
TRICKY = [
    "Mr. Smith went to Washington. He arrived at 5 p.m. Then he left.",
    'He said "Stop." Then he left. "Why?" she asked.',
    "Wait... what? Really?! (Yes.) ok.",
    "Pi is 3.14. It is not 3. It costs $3.50. Done!",
    "The U.S. is big. The U.K. is not. USA. NASA. A. B. C.",
    "See e.g. the list. Use i.e. this one. Dr. Who is here.",
    "end.Next one begins. www.example.com is a site. Mail me at a@b.com. Thanks.",
    "Hello!!! How are you??? Fine…. Good.\n\nNew paragraph.\nA line.  Two spaces.",
    "Chapter 1. Introduction. 2. Methods. Section 3.2. Results.",
]

DT_SCRIPT = r"""
import json, sys
from datatrove.utils.text import split_into_parts
from datatrove.utils.word_tokenizers import load_word_tokenizer
words = load_word_tokenizer("en")
for line in sys.stdin:
    text = json.loads(line)
    parts = split_into_parts(text, "SENTENCE")
    ends, at = [], 0
    for p in parts:
        at += len(p)
        ends.append(at)
    print(json.dumps([ends, len(words.word_tokenize(text))]))
"""


def sample_texts(limit: int) -> list[str]:
    texts = list(TRICKY)
    for f in sorted((ROOT / "data/sample/pile").glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            for line in io.TextIOWrapper(r, encoding="utf-8"):
                texts.append(json.loads(line)["text"])
    for f in sorted((ROOT / "data/sample/cc").glob("*.wet.gz")):
        record: list[str] = []
        with gzip.open(f, "rt", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.startswith("WARC/1.0"):
                    if record:
                        texts.append("".join(record).strip())
                    record = []
                elif record or not (":" in line[:40] or not line.strip()):
                    record.append(line)
    return [t for t in texts if t][:limit]


def kind(text: str, ours: list[int], theirs: list[int]) -> tuple[str, int]:
    """What kind of difference, and at which offset the first differing end lies."""
    a, b = set(ours), set(theirs)
    only_ours, only_theirs = sorted(a - b), sorted(b - a)
    at = min([*only_ours, *only_theirs])
    if at in a:
        before = text[max(0, at - 3) : at]
        return f"extra end after {before.strip()[-3:]!r}", at
    return f"missed end after {text[max(0, at - 3) : at].strip()[-3:]!r}", at


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datatrove-python", default="/work/venvs/datatrove/bin/python")
    ap.add_argument("--limit", type=int, default=100_000)
    ap.add_argument("--examples", type=int, default=2)
    args = ap.parse_args()
    texts = sample_texts(args.limit)
    t0 = time.process_time()
    ours = [sentence_ends(t) for t in texts]
    our_words = [count_words(t) for t in texts]
    t_ours = time.process_time() - t0
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            args.datatrove_python,
            "-c",
            "import time,sys;t=time.process_time();exec(sys.argv[1]);"
            "print(json.dumps(time.process_time()-t))",
            DT_SCRIPT,
        ],
        input="".join(json.dumps(t) + "\n" for t in texts),
        capture_output=True,
        text=True,
        check=True,
    )
    lines = proc.stdout.splitlines()
    got, t_theirs = [json.loads(x) for x in lines[:-1]], json.loads(lines[-1])
    theirs = [g[0] for g in got]
    words = [(n, g[1]) for n, g in zip(our_words, got, strict=True)]
    off = [abs(a - b) / max(b, 1) for a, b in words if a != b]
    kinds: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    n_sent = sum(len(e) for e in theirs)
    for text, a, b in zip(texts, ours, theirs, strict=True):
        if a == b:
            continue
        k, at = kind(text, a, b)
        kinds[k] += 1
        ex = examples.setdefault(k, [])
        if len(ex) < args.examples:
            ex.append(text[max(0, at - 60) : at + 40])
    bad = sum(kinds.values())
    print(
        f"{len(texts)} texts, {n_sent} sentences (datatrove); {bad} texts split differently ({bad / len(texts):.1%})"
    )
    print(
        f"CPU seconds, sentences and word counts: selene {t_ours:.2f}, datatrove (spaCy) {t_theirs:.2f} "
        f"({t_theirs / max(t_ours, 1e-9):.0f}x)"
    )
    print(
        f"word counts (datatrove's min_doc_words): {len(off)} texts differ; of those, median relative "
        f"difference {sorted(off)[len(off) // 2] if off else 0:.1%}; within 2% of spaCy's: "
        f"{sum(abs(a - b) <= 0.02 * b for a, b in words) / len(words):.1%} of texts"
    )
    for k, n in kinds.most_common():
        print(f"  {n:5d}  {k}")
        for ex in examples[k]:
            print(f"         {ex!r}")


if __name__ == "__main__":
    sys.exit(main())
