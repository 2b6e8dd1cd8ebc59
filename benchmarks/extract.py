"""Main-text extraction, side by side, on the generated pages of `tests/web_pages.py` (`--set main`)
and of the held-out set `tests/web_pages_heldout.py` (`--set heldout`; other layouts and page kinds,
written independently of the extractor, to check that it generalises) and of the third set
`tests/web_pages_third.py` (`--set third`; other page kinds again, written without reading the
extractor and never used to tune it); `--set both` runs main and held-out, `--set all` (the
default) all three, printing the per-kind tables and an "all" row of each set.

    python benchmarks/extract.py [--set all] [--per-type 20] [--seed 0] [--repeats 3] [--worst N] [--save DIR]

Every extractor gets the same bytes (each page's HTML encoded with its declared charset; in the main set
three pages per kind declare windows-1252, in the held-out set two declare windows-1252 and
iso-8859-1 or windows-1251, in the third set two declare windows-1252 and iso-8859-15 or
windows-1250) in this one process:
- `selene` / `selene-resiliparse`: `selene.ingest.html.html_to_text(body, extractor=...)`; while that
  function has no `extractor` keyword, `selene-resiliparse` is `html_to_text(body)` and `selene` is
  skipped with a note;
- `resiliparse`: `extract_plain_text(HTMLTree.parse(text), main_content=True)`, other options at
  their defaults, the bytes decoded with resiliparse's own `detect_encoding` + `bytes_to_str`;
- `trafilatura` (`trafilatura.extract(body)`) and `trafilatura-precision` (`favor_precision=True`),
  when trafilatura is importable (it is optional: `pip install "trafilatura>=2.0,<3"`).

Metric (as scrapinghub's article-extraction-benchmark `evaluate.py`, reimplemented in
`tests/web_pages.py`): multisets of word 4-grams (``\\w+`` tokens); per page precision = tp/(tp+fp)
and recall = tp/(tp+fn); precision is averaged over the pages where the extractor returned some
text (as that benchmark does; the `empty` column counts the others, whose recall is 0), recall over
all pages; F1 = 2PR/(P+R) of the averaged P and R (not the mean of per-page F1s).

Time: per page, the best of `--repeats` calls (decoding included), in this process, pinned to one
core when the OS allows; the table gives the median and mean over pages in milliseconds.
`--worst N` prints, per extractor, its N pages of lowest F1 with the lines that cost most precision
(kept, not in the truth) and recall (in the truth, not kept). `--save DIR` writes DIR/<extractor>/
<page>.txt for every extractor, DIR/truth/<page>.txt and DIR/html/<page>.html.

Measured (`python benchmarks/extract.py --repeats 3 --set all`, 2 cores shared with other jobs, one
pinned; full output in benchmarks/results/extract.txt), F1 / precision / recall, mean ms per page:

| set | selene | resiliparse | trafilatura | trafilatura, favor_precision |
|---|---|---|---|---|
| main, 160 pages | **0.982 / 0.973 / 0.992**, 1.8 | 0.857 / 0.759 / 0.984, 0.4 | 0.890 / 0.822 / 0.969, 7.4 | 0.884 / 0.838 / 0.936, 8.7 |
| held-out, 120 pages | **0.919 / 0.879 / 0.962**, 3.1 | 0.844 / 0.750 / 0.966, 0.8 | 0.887 / 0.845 / 0.933, 14.2 | 0.843 / 0.870 / 0.818, 12.2 |
| third, 120 pages (unseen) | **0.924 / 0.901 / 0.948**, 2.3 | 0.854 / 0.779 / 0.946, 0.5 | 0.918 / 0.871 / 0.969, 7.3 | 0.924 / 0.888 / 0.963, 8.8 |

The per-kind tables are in the results file. On real pages with ground truth see
`benchmarks/extract_real.py`.

The extractor's rules were tuned while looking at the main set; the held-out set was written
without reading the extractor and first scored selene at 0.840 (trafilatura 0.887). It found real
faults, since fixed: resiliparse's `post_meta=False` emptied WordPress recipe pages, a class word
("print", a Blogger "widget") removed the wrapper of the content, and Q&A answers were taken for
comments. A few boilerplate phrases seen there were added too (affiliate disclosures, reader appeals,
print-edition notes, nutrition disclaimers), so the held-out set is no longer blind. The third set
(`tests/web_pages_third.py`: local news, magazines, personal blogs, reviews, release notes, other
wikis) was written afterwards by someone who read neither the extractor nor these results, and the
extractor has not been tuned on it: later rules came from real pages (`benchmarks/extract_real.py`
and other public test pages), and one regression they caused on the third set (an id word "search"
inside a slug) was fixed by the slug rule. There selene ties trafilatura's favor_precision mode
(0.924) and is ahead of its default (0.918): behind on magazine, review and release-notes pages, ahead
on wikis and local news.
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

from tests import web_pages, web_pages_heldout, web_pages_third
from tests.web_pages import Page, _shingles, shingle_counts

SETS = {"main": web_pages, "heldout": web_pages_heldout, "third": web_pages_third}

Extractor = Callable[[bytes], str]


def extractors() -> dict[str, Extractor]:
    out: dict[str, Extractor] = {}
    try:
        from selene.ingest.html import html_to_text
    except ImportError as exc:
        print(f"note: selene.ingest.html.html_to_text not importable ({exc}); selene skipped")
    else:
        if "extractor" in inspect.signature(html_to_text).parameters:
            out["selene"] = lambda b: html_to_text(b, extractor="selene")[0]  # type: ignore[call-arg]
            out["selene-resiliparse"] = lambda b: html_to_text(b, extractor="resiliparse")[0]  # type: ignore[call-arg]
        else:
            print("note: html_to_text has no `extractor` keyword yet: selene skipped, selene-resiliparse = html_to_text(body)")
            out["selene-resiliparse"] = lambda b: html_to_text(b)[0]

    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from resiliparse.parse.html import HTMLTree

    out["resiliparse"] = lambda b: extract_plain_text(HTMLTree.parse(bytes_to_str(b, detect_encoding(b) or "utf-8")), main_content=True)

    try:
        import trafilatura
    except ImportError:
        print('note: trafilatura not installed (pip install "trafilatura>=2.0,<3"): skipped')
    else:
        out["trafilatura"] = lambda b: trafilatura.extract(b) or ""
        out["trafilatura-precision"] = lambda b: trafilatura.extract(b, favor_precision=True) or ""
    return out


def run(fn: Extractor, bodies: list[bytes], repeats: int) -> tuple[list[str], list[float]]:
    texts: list[str] = []
    times: list[float] = []
    for body in bodies:
        best = float("inf")
        text = ""
        for _ in range(repeats):
            t0 = time.perf_counter()
            text = fn(body)
            best = min(best, time.perf_counter() - t0)
        texts.append(text)
        times.append(best)
    return texts, times


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def aggregate(counts: list[tuple[int, int, int]]) -> tuple[float, float, float, int]:
    """(F1, precision, recall, pages with empty output) the way evaluate.py averages."""
    precisions = [tp / (tp + fp) for tp, fp, _ in counts if tp + fp]
    recalls = [tp / (tp + fn) if tp + fn else 1.0 for tp, fp, fn in counts]
    p = statistics.mean(precisions) if precisions else 0.0
    r = statistics.mean(recalls) if recalls else 0.0
    return f1(p, r), p, r, sum(1 for tp, fp, _ in counts if tp + fp == 0)


def page_f1(c: tuple[int, int, int]) -> float:
    tp, fp, fn = c
    return f1(tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0)


def costly_lines(text: str, reference: str, k: int = 5) -> list[tuple[int, str]]:
    """The k lines of `text` with most 4-grams absent from `reference` (with that count)."""
    ref = _shingles(reference, 4)
    scored = []
    for line in text.splitlines():
        if line.strip():
            miss = sum(c for s, c in _shingles(line, 4).items() if s not in ref)
            if miss:
                scored.append((miss, line.strip()))
    scored.sort(key=lambda x: -x[0])
    return scored[:k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=["main", "heldout", "third", "both", "all"], default="all",
                    help="which page set(s) to score: one set, both (main + heldout) or all three")
    ap.add_argument("--per-type", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worst", type=int, default=0)
    ap.add_argument("--save", type=Path)
    args = ap.parse_args()

    if hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    t0 = time.perf_counter()
    names = {"both": ["main", "heldout"], "all": list(SETS)}.get(args.set, [args.set])
    sets: list[tuple[str, tuple[str, ...], list[Page]]] = []
    for set_name in names:
        t1 = time.perf_counter()
        set_docs: list[Page] = SETS[set_name].pages(args.per_type, args.seed)
        sets.append((set_name, SETS[set_name].KINDS, set_docs))
        size = sum(len(p.body()) for p in set_docs) / len(set_docs) / 1024
        print(f"{set_name}: {len(set_docs)} pages ({args.per_type} per kind, seed {args.seed}) generated in {time.perf_counter() - t1:.1f} s; "
              f"{size:.1f} KiB per page on average")
    docs = [p for _, _, set_docs in sets for p in set_docs]
    bodies = [p.body() for p in docs]

    results: dict[str, tuple[list[str], list[float], list[tuple[int, int, int]]]] = {}
    for name, extract in extractors().items():
        t1 = time.perf_counter()
        texts, times = run(extract, bodies, args.repeats)
        counts = [shingle_counts(t, p.truth) for t, p in zip(texts, docs, strict=True)]
        results[name] = (texts, times, counts)
        print(f"  {name}: {time.perf_counter() - t1:.1f} s")

    start = 0
    for set_name, set_kinds, set_docs in sets:
        span = range(start, start + len(set_docs))
        start += len(set_docs)
        if len(sets) > 1:
            print(f"\n==== set {set_name}")
        for kind in [*set_kinds, "all"]:
            idx = [i for i in span if kind == "all" or docs[i].kind == kind]
            print(f"\n{kind}{f' [{set_name}]' if kind == 'all' else ''} ({len(idx)} pages)")
            print(f"  {'extractor':<22} {'F1':>6} {'prec':>6} {'recall':>6} {'empty':>5} {'ms med':>7} {'ms mean':>7}")
            for name, (_, times, counts) in results.items():
                f_, p_, r_, empty = aggregate([counts[i] for i in idx])
                ms = [times[i] * 1000 for i in idx]
                print(f"  {name:<22} {f_:6.3f} {p_:6.3f} {r_:6.3f} {empty:5d} {statistics.median(ms):7.2f} {statistics.mean(ms):7.2f}")

    if args.worst:
        for name, (texts, _, counts) in results.items():
            print(f"\n== {name}: {args.worst} worst pages by F1")
            order = sorted(range(len(docs)), key=lambda i: page_f1(counts[i]))[: args.worst]
            for i in order:
                tp, fp, fn = counts[i]
                prec = tp / (tp + fp) if tp + fp else 0.0
                rec = tp / (tp + fn) if tp + fn else 0.0
                print(f"-- {docs[i].name} F1 {page_f1(counts[i]):.3f} (P {prec:.3f} R {rec:.3f}) {docs[i].url}")
                for miss, line in costly_lines(texts[i], docs[i].truth):
                    print(f"   + [{miss:4d}] {line[:110]}")
                for miss, line in costly_lines(docs[i].truth, texts[i]):
                    print(f"   - [{miss:4d}] {line[:110]}")

    if args.save:
        for sub, items in [("truth", [p.truth for p in docs]), *((n, r[0]) for n, r in results.items())]:
            (args.save / sub).mkdir(parents=True, exist_ok=True)
            for page, text in zip(docs, items, strict=True):
                (args.save / sub / f"{page.name}.txt").write_text(text, encoding="utf-8")
        (args.save / "html").mkdir(parents=True, exist_ok=True)
        for page, body in zip(docs, bodies, strict=True):
            (args.save / "html" / f"{page.name}.html").write_bytes(body)
        print(f"\noutputs written under {args.save}")
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
