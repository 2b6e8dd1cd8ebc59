"""`selene spans` against datatrove's SentenceDedup, on the same documents, with datatrove's settings.

    python benchmarks/spans.py [--mb 20] [--seed 0] [--checkout DIR] [--keep-dir DIR [--reuse-datatrove]]
                               [--out results.md]
    python benchmarks/spans.py --input DATASET ...   (any document dataset instead of the generated pages)
    python benchmarks/spans.py --sample ...          (the bundled sample corpus: code, licences, markup)
    python benchmarks/spans.py --lines ...           (line mode: datatrove's split_sentences=False
                                                      against `unit: line`; agreement and speed only)

datatrove runs in an environment of its own (`--datatrove-python`, default
/work/venvs/datatrove/bin/python), made with:

    python3 -m venv /work/venvs/datatrove
    /work/venvs/datatrove/bin/pip install "datatrove[processing]==0.10.1" spacy pyarrow

Input: `benchmarks/spans_corpus.py`'s web-like pages (`--mb` MB of text: prose pages with cookie
banners, navigation, licence notices, newsletter footers, copied passages and repeated quotations),
read by `selene ingest` (this repository's) into a document dataset; both sides read its shards.

Both sides as users run them, one worker each, as whole commands; CPU = user + sys of the process
tree (`resource.getrusage(RUSAGE_CHILDREN)` before and after each command: with one worker selene
runs every step in its own process, and datatrove's LocalPipelineExecutor with one task and worker
too, so every CPU second is in a process the command waits for), wall clock beside it:
- selene: ``python -m selene.cli spans -i IN -o OUT -c spans.yaml --workers 1`` run in the checkout
  under test with ``PYTHONPATH=--checkout`` (default: the repository this file is in; `--label`
  names it in the report) and datatrove's settings:
  ``unit: sentence``, ``span: 3``, ``min_span_chars: 0`` (datatrove cuts spans of any length),
  ``min_doc_words: 50``, ``min_sentences: 3``, normalisation as datatrove's TextNormConfig defaults;
- datatrove: `benchmarks/_datatrove_sentence_dedup.py run` (its three steps under
  LocalPipelineExecutor, ParquetReader on the same shards, ParquetWriter of what it keeps).

Compared per document (`benchmarks/spans_compare.py`): unchanged, edited or dropped on each side;
agreement = same state; for documents both keep, whether the texts are identical. Each disagreement
is put in one class by replaying datatrove's algorithm with selene's splitter, then selene's
normalisation, swapped in (see spans_compare's doc): split, normalisation, drop rule, span matching,
cut text; with examples. The replays' sentences and keys come from each side's own code, untimed:
`_datatrove_sentence_dedup.py split` (spaCy, `simplify_text`), `_selene_spans_split.py` (the
checkout's `sentence_ends` and `--normaliser`), and their keep-or-drop verdicts from datatrove's own
word and sentence counts (`_datatrove_sentence_dedup.py measure`). The replay itself is checked: it
must give datatrove's output for every document (class `replay`: 0). The sentence boundaries the two
splitters draw differently, over the whole corpus, are counted by the kind of text before them.
Results: a markdown report (`--out`, default benchmarks/results/spans.md) and the same on stdout.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import spans_compare as cmp  # noqa: E402
import spans_corpus  # noqa: E402
from spans_report import Run, Sides, agreement, explain, markdown, split_differences  # noqa: E402

DATATROVE_PYTHON = "/work/venvs/datatrove/bin/python"
DT_SCRIPT = ROOT / "benchmarks" / "_datatrove_sentence_dedup.py"
SELENE_SPLIT = ROOT / "benchmarks" / "_selene_spans_split.py"
N = 3
# datatrove's SentDedupConfig defaults, in selene's field names
SELENE_CONFIG = {
    "unit": "sentence",
    "span": N,
    "min_span_chars": 0,
    "min_doc_words": 50,
    "min_sentences": 3,
    "min_words_to_remove": 0,
    "lowercase": True,
    "strip_punctuation": True,
    "normalize_numbers": True,
    "strip_diacritics": True,
    "normalize_weekdays": False,
    "normalize_months": False,
}


def timed(cmd: list[str], env: dict[str, str], log: Path, cwd: Path = ROOT) -> Run:
    """Run `cmd` to completion in `cwd`; its wall clock and the user + sys CPU of it and its descendants.
    (`python -m` puts its working directory first on sys.path: a selene command runs in the checkout
    it is to import.)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=cwd).returncode
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(f"command failed ({rc}): {' '.join(cmd)}\n{log.read_text()[-3000:]}")
    return Run(wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def selene_env(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout), "SELENE_PREFECT": "off"}


def datatrove_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def build_input(tmp: Path, mb: float, seed: int) -> tuple[Path, dict]:
    """The corpus as jsonl, then `selene ingest` (this repository's) into tmp/in."""
    summary = spans_corpus.generate(tmp / "corpus", mb, seed)
    inp = tmp / "in"
    shutil.rmtree(inp, ignore_errors=True)
    cmd = [sys.executable, "-m", "selene.cli", "ingest", "-o", str(inp), "--workers", "1"]
    cmd += ["-s", f"web[id_key=id,meta_keys=url+planted]={tmp / 'corpus' / 'pages.jsonl'}"]
    timed(cmd, selene_env(ROOT), tmp / "ingest.log")
    return inp, summary


def build_sample(tmp: Path) -> tuple[Path, dict]:
    """The bundled sample (data/sample: Pile documents and the WET pages), read by `selene ingest`
    with language id and filters off, so that its code and markup reach the comparison too."""
    inp = tmp / "sample-in"
    shutil.rmtree(inp, ignore_errors=True)
    cfg = tmp / "ingest-all.yaml"
    off = "".join(
        f"- {{name: {f}, enabled: false}}\n" for f in ("length", "gopher_quality", "gopher_repetition")
    )
    cfg.write_text("langid: {enabled: false}\nfilters:\n" + off)
    sample = ROOT / "data" / "sample"
    cmd = [sys.executable, "-m", "selene.cli", "ingest", "-o", str(inp), "--workers", "1", "-c", str(cfg)]
    cmd += ["-s", f"pile={sample / 'pile' / '*.jsonl.zst'}", "-s", f"cc={sample / 'cc' / '*.wet.gz'}"]
    timed(cmd, selene_env(ROOT), tmp / "ingest.log")
    what = (
        "the bundled sample (data/sample: Pile jsonl.zst and WET pages), ingested without langid and filters"
    )
    return inp, {"input": what}


# ------------------------------------------------------------------------------------ reading


def read_docs(inp: Path) -> list[tuple[str, str]]:
    """(id, text) of every document, in corpus order (shards in order, rows in order)."""
    docs = []
    for path in sorted(glob.glob(str(inp / "part-*.parquet"))):
        t = pq.read_table(path, columns=["id", "text"])
        docs += zip(t.column("id").to_pylist(), t.column("text").to_pylist(), strict=True)
    return docs


def read_texts(pattern: str) -> dict[str, str]:
    """id -> text of the documents in the Parquet files matching `pattern`."""
    out: dict[str, str] = {}
    for path in sorted(glob.glob(pattern)):
        t = pq.read_table(path, columns=["id", "text"])
        out.update(zip(t.column("id").to_pylist(), t.column("text").to_pylist(), strict=True))
    return out


def read_removed(out: Path) -> dict[str, str]:
    """id -> "reason: detail" of selene's removed.parquet."""
    t = pq.read_table(out / "removed.parquet", columns=["id", "reason", "detail"]).to_pylist()
    return {r["id"]: f"{r['reason']}: {r['detail']}" if r["detail"] else r["reason"] for r in t}


def read_splits(path: Path, docs: list[tuple[str, str]]) -> list[cmp.Split]:
    t = pq.read_table(path)
    ids = t.column("id").to_pylist()
    if ids != [d for d, _ in docs]:
        sys.exit(f"{path}: documents not in corpus order")
    return [
        cmp.Split(e, k)
        for e, k in zip(t.column("ends").to_pylist(), t.column("keys").to_pylist(), strict=True)
    ]


# ------------------------------------------------------------------------------------ replays


def replay_cuts(docs: list[tuple[str, str]], splits: list[cmp.Split]) -> tuple[list[str], list[cmp.Replay]]:
    """The text datatrove's filter would keep of each document under these sentences and keys."""
    reps = cmp.simulate(splits, N)
    kept = [
        cmp.cut_text(text, s.ends, r.cut) if r.cut else text
        for (_, text), s, r in zip(docs, splits, reps, strict=True)
    ]
    return kept, reps


def measure(texts: set[str], tmp: Path, python: str) -> dict[str, tuple[int, int]]:
    """datatrove's (words, sentences) of each text, by its own tokenizer; texts counted by an earlier
    run in `tmp` (measured.parquet) are not counted again."""
    cache = tmp / "measured.parquet"
    known: dict[str, tuple[int, int]] = {}
    if cache.exists():
        known = {r["text"]: (r["words"], r["sentences"]) for r in pq.read_table(cache).to_pylist()}
    keys = sorted(texts - known.keys())
    if keys:
        src, dst = tmp / "measure-in.parquet", tmp / "measure-out.parquet"
        pq.write_table(pa.table({"key": list(range(len(keys))), "text": keys}), src)
        timed([python, str(DT_SCRIPT), "measure", str(src), str(dst)], datatrove_env(), tmp / "measure.log")
        known.update({keys[r["key"]]: (r["words"], r["sentences"]) for r in pq.read_table(dst).to_pylist()})
        rows = sorted(known.items())
        table = {
            "text": [t for t, _ in rows],
            "words": [w for _, (w, _) in rows],
            "sentences": [n for _, (_, n) in rows],
        }
        pq.write_table(pa.table(table), cache)
    return {t: known[t] for t in texts}


def lines_markdown(
    args: argparse.Namespace, summary: dict, runs: dict[str, Run], agree: dict, sides: Sides, mb: float, config: dict
) -> str:
    """Line mode's report: decisions, texts, and texts once line breaks are compared as breaks (datatrove
    joins the lines it keeps with "\n"; selene keeps each document's own breaks and its final one)."""
    kept = [(d, x) for d, x in zip(sides.dt, sides.sel, strict=True) if cmp.DROPPED not in (d.state, x.state)]
    as_lines = sum(d.text.splitlines() == x.text.splitlines() for d, x in kept)
    differ = [
        (i, d.text, x.text) for (i, _), d, x in zip(sides.docs, sides.dt, sides.sel, strict=True)
        if d.state != x.state or (cmp.DROPPED not in (d.state, x.state) and d.text.splitlines() != x.text.splitlines())
    ]  # fmt: skip
    sel, dt = runs["selene"], runs["datatrove"]
    rows = [
        "## selene spans --unit line vs datatrove's SentenceDedup (split_sentences=False)\n",
        f"`python benchmarks/spans.py --lines {'--sample' if args.sample else f'--mb {args.mb:g} --seed {args.seed}'}`; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end. Corpus: {len(sides.docs):,} documents, {mb:.1f} MB. selene: {json.dumps(config)}.\n",
        "| | documents | share |",
        "|---|---:|---:|",
        f"| same decision (unchanged, edited or dropped) | {agree['alike']:,} | {agree['alike'] / max(agree['docs'], 1):.2%} |",
        f"| kept by both, text identical | {agree['identical']:,} of {agree['both_kept']:,} | {agree['identical'] / max(agree['both_kept'], 1):.2%} |",
        f"| kept by both, the same lines (str.splitlines) | {as_lines:,} of {agree['both_kept']:,} | {as_lines / max(agree['both_kept'], 1):.2%} |",
        "",
        "| side | wall s | CPU s | MB / CPU s |",
        "|---|---:|---:|---:|",
        f"| selene | {sel.wall:.1f} | {sel.cpu:.1f} | {mb / sel.cpu:.2f} |",
        f"| datatrove | {dt.wall:.1f} | {dt.cpu:.1f} | {mb / dt.cpu:.2f} |",
        f"| datatrove / selene | {dt.wall / sel.wall:.1f}x | {dt.cpu / sel.cpu:.1f}x | |",
        "",
        f"Documents decided otherwise or with other lines: {len(differ)}.",
    ]
    for i, a, b in differ[: args.examples]:
        shown = ["dropped" if t is None else repr(t[:300]) for t in (a, b)]
        rows.append(f"\n- `{i}`: datatrove {shown[0]}\n  selene {shown[1]}")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=20.0, help="MB of page text to generate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--input", type=Path, help="compare on this document dataset instead of a generated corpus"
    )
    ap.add_argument(
        "--sample", action="store_true", help="compare on the bundled sample corpus (code and markup)"
    )
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the selene checkout whose `spans` runs")
    ap.add_argument(
        "--normaliser", default="selene.spans.units:normalize",
        help="MODULE:FUNCTION of that checkout: (text[, config]) -> a sentence's text as it is hashed "
        "('' skips that step)",
    )  # fmt: skip
    ap.add_argument("--label", help="how the report names the selene checkout (default: its path and commit)")
    ap.add_argument("--datatrove-python", default=DATATROVE_PYTHON)
    ap.add_argument("--examples", type=int, default=4, help="examples per class of difference")
    ap.add_argument("--keep-dir", type=Path, help="keep inputs and outputs here")
    ap.add_argument(
        "--reuse-datatrove", action="store_true",
        help="with --keep-dir: reuse datatrove's output, timing and sentences from an earlier run of the same "
        "corpus there (datatrove's side takes minutes; selene's changes are what is re-measured)",
    )  # fmt: skip
    ap.add_argument(
        "--lines", action="store_true",
        help="line mode: datatrove's split_sentences=False against selene's unit: line (no replays: they "
        "explain sentence splits)",
    )  # fmt: skip
    ap.add_argument("--out", type=Path, default=None, help="default benchmarks/results/spans[-lines].md")
    args = ap.parse_args()
    if args.out is None:
        args.out = ROOT / "benchmarks" / "results" / ("spans-lines.md" if args.lines else "spans.md")
    config = {**SELENE_CONFIG, "unit": "line" if args.lines else "sentence"}
    args.checkout = args.checkout.resolve()
    tmp = args.keep_dir or Path(tempfile.mkdtemp(prefix="selene-bench-spans-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        if args.input:
            inp, summary = args.input.resolve(), {"input": f"the document dataset `{args.input}`"}
        elif args.sample:
            inp, summary = build_sample(tmp)
        else:
            inp, summary = build_input(tmp, args.mb, args.seed)
        docs = read_docs(inp)
        mb = sum(len(t.encode()) for _, t in docs) / 1e6
        print(f"corpus: {len(docs)} documents, {mb:.1f} MB in {inp}", flush=True)

        cfg = tmp / "spans.yaml"
        cfg.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in config.items()))
        sel_out, dt_work = tmp / "selene", tmp / "datatrove"
        runs = {}
        shutil.rmtree(sel_out, ignore_errors=True)
        cmd = [
            sys.executable,
            "-m",
            "selene.cli",
            "spans",
            "-i",
            str(inp),
            "-o",
            str(sel_out),
            "-c",
            str(cfg),
        ]
        runs["selene"] = timed(
            [*cmd, "--workers", "1"], selene_env(args.checkout), tmp / "selene.log", args.checkout
        )
        print(f"selene: {runs['selene']}", flush=True)
        stamp = {"mb": args.mb, "seed": args.seed, "corpus": summary, "n": N, "lines": args.lines}
        saved = tmp / "datatrove-run.json"
        if args.reuse_datatrove and saved.exists() and json.loads(saved.read_text())["stamp"] == stamp:
            old = json.loads(saved.read_text())
            runs["datatrove"] = Run(**old["run"], when=old.get("when", "earlier"))
            print(f"datatrove: reused from {saved}: {runs['datatrove']}", flush=True)
        else:
            saved.unlink(missing_ok=True)
            (tmp / "dt-split.parquet").unlink(missing_ok=True)
            shutil.rmtree(dt_work, ignore_errors=True)
            dt_cmd = [
                args.datatrove_python,
                str(DT_SCRIPT),
                "run",
                str(inp),
                str(dt_work),
                "--n-sentences",
                str(N),
                *(["--lines"] if args.lines else []),
            ]
            runs["datatrove"] = timed(dt_cmd, datatrove_env(), tmp / "datatrove.log")
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            run = {"wall": runs["datatrove"].wall, "cpu": runs["datatrove"].cpu}
            saved.write_text(json.dumps({"stamp": stamp, "run": run, "when": when}))
            print(f"datatrove: {runs['datatrove']}", flush=True)

        sel_texts = read_texts(str(sel_out / "part-*.parquet"))
        dt_texts = read_texts(str(dt_work / "output" / "*.parquet"))
        sides = Sides(
            docs,
            [cmp.outcome(t, dt_texts.get(i)) for i, t in docs],
            [cmp.outcome(t, sel_texts.get(i)) for i, t in docs],
            read_removed(sel_out),
        )
        agree = agreement(sides)
        print(f"alike: {agree['alike']} of {agree['docs']}", flush=True)
        if args.lines:
            md = lines_markdown(args, summary, runs, agree, sides, mb, config)
            print(md)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(md)
            return

        # the replays: datatrove's splits and keys; selene's splits under datatrove's keys; selene's own keys
        py = args.datatrove_python
        denv = datatrove_env()
        if not (tmp / "dt-split.parquet").exists():
            timed(
                [py, str(DT_SCRIPT), "split", str(inp), str(tmp / "dt-split.parquet")],
                denv,
                tmp / "split.log",
            )
        sel_cmd = [sys.executable, str(SELENE_SPLIT), str(inp), str(tmp / "sel-split.parquet")]
        if args.normaliser:
            sel_cmd += ["--normaliser", args.normaliser, "--config", str(cfg)]
        timed(sel_cmd, selene_env(args.checkout), tmp / "sel-split.log")
        timed(
            [py, str(DT_SCRIPT), "split", str(inp), str(tmp / "sel-dt-split.parquet"), "--ends",
             str(tmp / "sel-split.parquet")],
            denv, tmp / "split2.log",
        )  # fmt: skip
        dts = read_splits(tmp / "dt-split.parquet", docs)
        sels = read_splits(tmp / "sel-split.parquet", docs)
        sel_dt = read_splits(tmp / "sel-dt-split.parquet", docs)
        kept_a, rep_a = replay_cuts(docs, dts)
        kept_b, rep_b = replay_cuts(docs, sel_dt)
        if args.normaliser:
            kept_c, rep_c = replay_cuts(docs, sels)
        else:
            kept_c, rep_c = kept_b, rep_b
        texts = {
            t for ks in (kept_a, kept_b, kept_c) for t, (_, o) in zip(ks, docs, strict=True) if t and t != o
        }
        measured = measure(texts, tmp, py)

        def outcomes(kept: list[str]) -> list[cmp.Outcome]:
            return [cmp.decide(t, k, measured.__getitem__) for (_, t), k in zip(docs, kept, strict=True)]

        oa, ob, oc = outcomes(kept_a), outcomes(kept_b), outcomes(kept_c)
        reps = {"A": rep_a, "B": rep_b, "C": rep_c}
        classes: Counter[str] = Counter()
        examples: dict[str, list[str]] = defaultdict(list)
        for k in range(len(docs)):
            cls = cmp.classify(sides.dt[k], oa[k], ob[k], oc[k], sides.sel[k])
            if cls is None:
                continue
            classes[cls] += 1
            if len(examples[cls]) < args.examples:
                examples[cls].append(explain(k, sides, cls, dts, sels, reps, sel_dt, measured, kept_c, N))
        splits = split_differences(docs, dts, sels)
        md = markdown(args, summary, runs, agree, classes, examples, splits, mb, config)
        print(md)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(md)
    finally:
        if not args.keep_dir:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
