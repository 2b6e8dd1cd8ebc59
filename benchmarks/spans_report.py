"""The report of `benchmarks/spans.py`: agreement counts, the explanation of each difference, the
boundaries only one splitter draws, and the markdown of it all."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import spans_compare as cmp


@dataclass
class Run:
    wall: float
    cpu: float
    when: str = ""  # set on a run reused from an earlier benchmark run: when it was measured


@dataclass
class Sides:
    docs: list[tuple[str, str]]
    dt: list[cmp.Outcome]
    sel: list[cmp.Outcome]
    removed: dict[str, str]


def agreement(s: Sides) -> dict:
    states = Counter((d.state, x.state) for d, x in zip(s.dt, s.sel, strict=True))
    same = sum(v for (a, b), v in states.items() if a == b)
    both_kept = [(d, x) for d, x in zip(s.dt, s.sel, strict=True) if cmp.DROPPED not in (d.state, x.state)]
    both_edited = [(d, x) for d, x in both_kept if d.state == x.state == cmp.EDITED]
    return {
        "docs": len(s.docs),
        "states": states,
        "alike": same,
        "both_kept": len(both_kept),
        "identical": sum(d.text == x.text for d, x in both_kept),
        "both_edited": len(both_edited),
        "edited_identical": sum(d.text == x.text for d, x in both_edited),
    }


def first_difference(x: str, y: str) -> int:
    i = 0
    for i, (a, b) in enumerate(zip(x, y, strict=False)):
        if a != b:
            return i
    return min(len(x), len(y)) if len(x) != len(y) else i


def interior(text: str, ends: list[int]) -> set[int]:
    """Sentence boundaries inside the text (not the end, nor trailing whitespace)."""
    stop = len(text.rstrip())
    return {e for e in ends if e < stop}


def split_differences(docs: list[tuple[str, str]], dts: list[cmp.Split], sels: list[cmp.Split]) -> dict:
    """Over the whole corpus: boundaries only one splitter draws, by kind, with examples."""
    counts: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    docs_differ = 0
    for (doc_id, text), a, b in zip(docs, dts, sels, strict=True):
        ea, eb = interior(text, a.ends), interior(text, b.ends)
        docs_differ += ea != eb
        for side, only in (("datatrove only", ea - eb), ("selene only", eb - ea)):
            for e in sorted(only):
                key = (side, cmp.boundary_kind(text, e))
                counts[key] += 1
                if len(examples[key]) < 3:
                    examples[key].append(f"`{doc_id}`: {cmp.context(text, e, 50)}")
    return {"docs_differ": docs_differ, "counts": counts, "examples": examples}


def explain(
    k: int,
    s: Sides,
    cls: str,
    dts: list[cmp.Split],
    sels: list[cmp.Split],
    reps: dict[str, list[cmp.Replay]],
    sel_dt_keys: list[cmp.Split],
    measured: dict[str, tuple[int, int]],
    kept_c: list[str],
    n: int,
) -> str:
    """One line on why document k differs (see `classify`)."""
    doc_id, text = s.docs[k]
    head = f"`{doc_id}` datatrove {s.dt[k].state}, selene {s.sel[k].state}"
    if cls == "split":
        ea, eb = interior(text, dts[k].ends), interior(text, sels[k].ends)
        if ea != eb:
            e = min(ea ^ eb)
            who = "datatrove" if e in ea else "selene"
            return f"{head}: only {who} ends a sentence ({cmp.boundary_kind(text, e)}): {cmp.context(text, e, 50)}"
        a, b = reps["A"][k].sources, reps["B"][k].sources
        srcs = {v[0] for i, v in a.items() if i not in b} | {v[0] for i, v in b.items() if i not in a}
        for src in sorted(srcs):
            sid, stext = s.docs[src]
            ea, eb = interior(stext, dts[src].ends), interior(stext, sels[src].ends)
            if ea != eb:
                e = min(ea ^ eb)
                return (
                    f"{head}: same sentences here; the span's first copy, `{sid}`, is split differently "
                    f"({cmp.boundary_kind(stext, e)}): {cmp.context(stext, e, 50)}"
                )
        return f"{head}: same sentences here and in the spans' first copies; spans start at other sentences"
    if cls == "normalisation":
        b, c = reps["B"][k].sources, reps["C"][k].sources
        only = sorted(set(b) ^ set(c))
        if only:
            i = only[0]
            who = "selene's" if i in c else "datatrove's"
            src_doc, src_i = (c if i in c else b)[i]
            ours = " ".join(sel_dt_keys[k].keys[i : i + n])
            theirs = " ".join(sels[k].keys[i : i + n])
            src_dt = " ".join(sel_dt_keys[src_doc].keys[src_i : src_i + n])
            return (
                f"{head}: span {i} matches `{s.docs[src_doc][0]}` only under {who} normalisation; "
                f"datatrove's keys: {ours[:120]!r} vs {src_dt[:120]!r}; selene's: {theirs[:120]!r}"
            )
        return f"{head}: the same spans match, cut at other sentences"
    if cls == "drop rule":
        words, sents = measured.get(kept_c[k], (0, 0))
        why = s.removed.get(doc_id, "kept")
        return f"{head}: selene {why}; datatrove counts {words} words, {sents} sentences in the cut text"
    if cls == "cut text":
        x, y = s.dt[k].text or "", s.sel[k].text or ""
        i = first_difference(x, y)
        ws = " (whitespace only)" if cmp.whitespace_only(x, y) else ""
        return f"{head}{ws}: datatrove {cmp.context(x, i, 40)} / selene {cmp.context(y, i, 40)}"
    cut = sorted(reps["A"][k].cut)
    return f"{head}: the replay of datatrove cuts sentences {cut[:12]} and disagrees with datatrove's output"


def run_args(args: argparse.Namespace) -> str:
    if args.input:
        return f"--input {args.input}"
    return "--sample" if args.sample else f"--mb {args.mb:g} --seed {args.seed}"


def corpus_line(summary: dict, n: int, mb: float) -> str:
    if "input" in summary:
        return f"Corpus: {summary['input']}, {n:,} documents ({mb:.1f} MB of text)."
    return (
        f"Corpus: {summary['pages']:,} pages generated, {n:,} documents ({mb:.1f} MB of text) after "
        f"`selene ingest`'s filters ({summary['pool_sentences']:,} distinct natural sentences + templates); "
        "planted in the pages: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(summary["planted"].items()))
        + "."
    )


def checkout_name(args: argparse.Namespace) -> str:
    """The selene checkout measured: `--label`, else its git commit, else its path."""
    if args.label:
        return args.label
    rev = subprocess.run(
        ["git", "-C", str(args.checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return f"`{args.checkout}` at {rev.stdout.strip()}" if rev.returncode == 0 else f"`{args.checkout}`"


def markdown(args: argparse.Namespace, summary: dict, runs: dict[str, Run], agree: dict, classes: Counter,
             examples: dict[str, list[str]], splits: dict, mb: float, config: dict) -> str:  # fmt: skip
    n = agree["docs"]
    lines = [
        "## selene spans vs datatrove's SentenceDedup",
        "",
        f"`python benchmarks/spans.py {run_args(args)}` (selene: {checkout_name(args)}); "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end (other jobs share the machine: wall clocks are not comparable).",
        "",
        corpus_line(summary, n, mb)
        + f" Settings: datatrove's defaults (3-sentence spans, >= 50 words and >= 3 sentences after cuts); "
        f"selene with `{json.dumps(config)}`.",
        "",
        "### Decisions",
        "",
        "| | documents | share |",
        "|---|---:|---:|",
        f"| changed alike (same state) | {agree['alike']:,} | {agree['alike'] / n:.2%} |",
    ]
    for st in (cmp.UNCHANGED, cmp.EDITED, cmp.DROPPED):
        v = agree["states"].get((st, st), 0)
        lines.append(f"| both {st} | {v:,} | {v / n:.2%} |")
    lines += [
        f"| kept by both, text identical | {agree['identical']:,} of {agree['both_kept']:,} | "
        f"{agree['identical'] / max(agree['both_kept'], 1):.2%} |",
        f"| edited by both, text identical | {agree['edited_identical']:,} of {agree['both_edited']:,} | "
        f"{agree['edited_identical'] / max(agree['both_edited'], 1):.2%} |",
        "",
        "States (rows datatrove, columns selene):",
        "",
        "| datatrove \\ selene | unchanged | edited | dropped |",
        "|---|---:|---:|---:|",
    ]
    for a in (cmp.UNCHANGED, cmp.EDITED, cmp.DROPPED):
        row = [f"{agree['states'].get((a, b), 0):,}" for b in (cmp.UNCHANGED, cmp.EDITED, cmp.DROPPED)]
        lines.append(f"| {a} | " + " | ".join(row) + " |")
    lines += ["", "### Differences, by cause", "", "| class | documents |", "|---|---:|"]
    lines += [f"| {c} | {classes.get(c, 0):,} |" for c in cmp.CLASSES]
    for c in cmp.CLASSES:
        if examples.get(c):
            lines += ["", f"**{c}**", ""] + [f"- {e}" for e in examples[c]]
    lines += [
        "",
        f"### Sentence boundaries drawn by one splitter only (whole corpus: {splits['docs_differ']:,} of {n:,} "
        "documents split differently)",
        "",
        "| splitter | before the boundary | boundaries | example |",
        "|---|---|---:|---|",
    ]
    if not splits["counts"]:
        lines.append("| (none) | | 0 | |")
    for (side, kind), v in splits["counts"].most_common():
        ex = (
            splits["examples"][(side, kind)][0].replace("|", "\\|")
            if splits["examples"][(side, kind)]
            else ""
        )
        lines.append(f"| {side} | {kind} | {v:,} | {ex} |")
    s, d = runs["selene"], runs["datatrove"]
    lines += [
        "",
        "### Speed (one worker each, whole commands, CPU = user + sys of the process tree)",
        "",
        "| side | wall s | CPU s | MB / CPU s |",
        "|---|---:|---:|---:|",
        f"| selene | {s.wall:.1f} | {s.cpu:.1f} | {mb / s.cpu:.2f} |",
        f"| datatrove | {d.wall:.1f} | {d.cpu:.1f} | {mb / d.cpu:.2f} |",
        f"| datatrove / selene | {d.wall / s.wall:.1f}x | {d.cpu / s.cpu:.1f}x | |",
        "",
        *(
            [f"datatrove's run and timing reused from an earlier run on the same corpus ({d.when})", ""]
            if d.when
            else []
        ),
        f"Goals: changed alike >= 98%: {'met' if agree['alike'] / n >= 0.98 else 'NOT met'} "
        f"({agree['alike'] / n:.2%}); identical where both keep: "
        f"{'met' if agree['identical'] == agree['both_kept'] else 'NOT met'}; >= 10x per CPU-second: "
        f"{'met' if d.cpu / s.cpu >= 10 else 'NOT met'} ({d.cpu / s.cpu:.1f}x).",
    ]
    return "\n".join(lines) + "\n"
