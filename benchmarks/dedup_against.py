"""Incremental dedup of a new crawl against an earlier curated output, against deduplicating everything.

    python benchmarks/dedup_against.py [--gb 0.5] [--new-share 0.1] [--workers 2] [--repeats 1]
    python benchmarks/dedup.py --against [same options]

Corpus, seeded (`--seed`), reused under `--work` (default /tmp/selene-dedup-against):
- OLD: `--gb` GB of text from `scale_corpus.ensure` (its own 5% exact and 10% near copies planted);
- NEW: `--new-share` of OLD's size: fresh documents from `scale_corpus` with another seed (with its own
  planted copies among them), plus `--plant` of NEW's documents copied from OLD's original documents,
  half byte-identical and half near copies at Jaccard ~0.9 (one word in ~95 replaced, >= 5 words
  apart, so each replacement changes exactly 5 word 5-grams: `scale_corpus.near_copy`), inserted at
  seeded positions. The realised Jaccard of every near copy is measured (word 5-gram sets).
Both are written straight as selene document datasets (Parquet shards of `DOC_SCHEMA` + manifest, as
`tests/corpus.py` builds them; ~32 MB of text a shard, as ingest cuts them), source `old` or `new`
(the Pile source stays in meta): ingest is not run, it would dominate the time and is not measured.
BOTH is OLD's shards then NEW's (hard links).

Timed, whole commands as users run them (``python -m selene.cli dedup ... --workers W``,
``SELENE_PREFECT=off``; wall clock, user+sys CPU of the command's process tree and peak RSS of its
largest process, from `os.wait4` and a poll of the process tree: the machine may be shared), each the fastest of `--repeats`:
  a. ``dedup -i OLD -o OLD_D``: the earlier curated output;
  b. ``dedup -i NEW -o NEW_D --against OLD_D``: the incremental run;
  c. ``dedup -i BOTH -o BOTH_D --keep priority --priority old --priority new``: what a user would run
     otherwise, everything again with OLD's copies preferred.
  d. ``dedup -i OLD_D+NEW -o CURATED_D --keep priority ...``: the same over the curated corpus (OLD_D's
     shards then NEW's), the run whose decisions b must repeat exactly: both see the same documents.
     c also sees the copies a removed, which can link a NEW document to a kept one that no band
     of theirs joins directly, so c may remove a few NEW documents more than b and d.
`--reuse` takes a, b and c (outputs and timings) from an earlier run of the same size and runs d only.
Reported: cost b/c and b/a (goal: b/c near the NEW share); NEW's documents removed by b and by d, and by c
(any difference listed with both removal records and the exact Jaccard to the copy each kept);
OLD's documents c removes that a did not (b never removes any); OLD_D byte-identical before and
after b (sha256 of the tree); the planted copies of OLD documents that b caught. Results go to
benchmarks/results/dedup_against.{md,json}, one entry per `--gb`.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale_corpus  # noqa: E402

from benchmarks.dedup import Run, timed  # noqa: E402
from selene.io import dataset  # noqa: E402
from tests.corpus import document_manifest  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SHARD_TEXT = 32 << 20  # ingest's default shard_bytes
PLAN_VERSION = 1  # bump when the datasets made for given parameters change
THRESHOLD = 0.8  # selene dedup's default, which every command here runs with


# ---------------------------------------------------------------------------------- corpus


def read_corpus(directory: Path) -> Any:
    """(text, meta dict) of each document of a `scale_corpus` output, in order."""
    for f in sorted(directory.glob("corpus-*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            for line in io.TextIOWrapper(r, encoding="utf-8"):
                d = json.loads(line)
                yield d["text"], d["meta"]


class ShardWriter:
    """Documents into a selene document dataset: `shard_docs` per Parquet shard, then the manifest."""

    def __init__(self, out: Path, shard_docs: int) -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        self.out, self.shard_docs = out, shard_docs
        self.rows: list[tuple[str, str, str, str]] = []
        self.shards: list[dataset.WrittenFile] = []
        self.sources: Counter[str] = Counter()
        self.text_bytes = 0

    def add(self, doc_id: str, text: str, source: str, meta: dict[str, Any]) -> None:
        self.rows.append((doc_id, text, source, json.dumps(meta)))
        self.sources[source] += 1
        self.text_bytes += len(text.encode())
        if len(self.rows) >= self.shard_docs:
            self._flush()

    def _flush(self) -> None:
        if not self.rows:
            return
        cols = {name: [r[i] for r in self.rows] for i, name in enumerate(dataset.DOC_SCHEMA.names)}
        table = pa.table(cols, schema=dataset.DOC_SCHEMA)
        self.shards.append(dataset.write_table(str(self.out / dataset.shard_name(len(self.shards))), table))
        self.rows = []

    def close(self) -> None:
        self._flush()
        write_manifest(self.out, self.shards, self.sources)


def write_manifest(out: Path, shards: list[dataset.WrittenFile], sources: Counter[str]) -> None:
    removed = dataset.write_table(str(out / dataset.REMOVED), dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(str(out), document_manifest(shards, removed, sources))


def link_both(old: Path, new: Path, both: Path) -> None:
    """BOTH: OLD's shards then NEW's, hard-linked under new names, with their own manifest."""
    shutil.rmtree(both, ignore_errors=True)
    both.mkdir(parents=True)
    shards, sources = [], Counter[str]()
    for src in (old, new):
        m = dataset.read_manifest(str(src))
        assert m is not None
        for s in m.shards:
            name = dataset.shard_name(len(shards))
            os.link(src / s.name, both / name)
            shards.append(dataset.WrittenFile(name, s.rows, s.bytes, s.sha256))
        sources.update({k: v.kept for k, v in m.stats.per_source.items()})
    write_manifest(both, shards, sources)


def replacement_vocab() -> list[str]:
    """The words `scale_corpus` puts into its near copies (real words of the prose sources)."""
    pools = scale_corpus.load_pools()
    words = {
        w
        for p in pools
        if p.name in ("PythonReference", "Docstrings")
        for t in p.raw
        for w in t.lower().split()
    }
    return sorted(w for w in words if w.isalpha() and w.isascii() and 3 <= len(w) <= 12)


def build(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """OLD, NEW and BOTH under `work/data-<gb>g-s<seed>/`, reused when made with the same parameters."""
    params = {
        "version": PLAN_VERSION,
        "gb": args.gb,
        "new_share": args.new_share,
        "plant": args.plant,
        "seed": args.seed,
    }
    data = work / f"data-{args.gb:g}g-s{args.seed}"
    plan_path = data / "plan.json"
    try:
        plan = json.loads(plan_path.read_text())
        if plan["params"] == params and all(
            (data / k / "manifest.json").exists() for k in ("old", "new", "both")
        ):
            plan["reused"] = True
            return plan
    except (OSError, ValueError, KeyError):
        pass
    t0 = time.perf_counter()
    old_src, old_reused = scale_corpus.ensure(
        work / f"old-{args.gb:g}g-s{args.seed}", args.gb, args.seed, 0.05, 0.10
    )
    fresh_gb = round(args.gb * args.new_share * (1 - args.plant), 6)
    new_seed = args.seed + 1000
    new_src, new_reused = scale_corpus.ensure(
        work / f"new-{fresh_gb:g}g-s{new_seed}", fresh_gb, new_seed, 0.05, 0.10
    )
    t_gen = time.perf_counter() - t0
    shard_docs = max(1, round(SHARD_TEXT / (old_src["text_bytes"] / old_src["documents"])))
    rng = np.random.default_rng([args.seed, 7])
    n_fresh = new_src["documents"]
    n_plant = round(n_fresh * args.plant / (1 - args.plant))

    # OLD: written as read; its original documents (not planted by scale_corpus) sampled, reservoir
    # style, as the bases of NEW's copies
    t1 = time.perf_counter()
    w_old = ShardWriter(data / "old", shard_docs)
    bases: list[tuple[str, str, str]] = []  # (id, text, pile source)
    originals = 0
    for i, (text, meta) in enumerate(read_corpus(work / f"old-{args.gb:g}g-s{args.seed}")):
        doc_id = f"old-{i:09d}"
        w_old.add(doc_id, text, "old", meta)
        if "planted" in meta:
            continue
        slot = originals if originals < n_plant else int(rng.integers(0, originals + 1))
        if slot < n_plant:
            item = (doc_id, text, meta["pile_set_name"])
            if slot < len(bases):
                bases[slot] = item
            else:
                bases.append(item)
        originals += 1
    w_old.close()

    # NEW: fresh documents in order, the copies of OLD's at seeded positions among them
    vocab = replacement_vocab()
    order = rng.permutation(len(bases))
    is_copy = np.zeros(n_fresh + len(bases), dtype=bool)
    is_copy[rng.choice(is_copy.size, size=len(bases), replace=False)] = True
    fresh = read_corpus(work / f"new-{fresh_gb:g}g-s{new_seed}")
    w_new = ShardWriter(data / "new", shard_docs)
    planted: list[dict[str, Any]] = []
    k = 0
    for i, copy in enumerate(is_copy.tolist()):
        doc_id = f"new-{i:09d}"
        if not copy:
            text, meta = next(fresh)
            w_new.add(doc_id, text, "new", meta)
            continue
        base_id, base_text, pile = bases[int(order[k])]
        kind = "exact" if k % 2 == 0 else "near"
        k += 1
        if kind == "exact":
            text, j = base_text, 1.0
        else:
            m = SimpleNamespace(raw=[base_text], spans=[scale_corpus._spans(base_text)], vocab=vocab)
            text = scale_corpus.near_copy(m, [0], args.near_j, rng)  # type: ignore[arg-type]
            j = scale_corpus.jaccard(base_text, text)
        w_new.add(doc_id, text, "new", {"pile_set_name": pile, "planted": f"old:{kind}", "copy_of": base_id})
        planted.append({"id": doc_id, "kind": kind, "base": base_id, "j": round(j, 4)})
    w_new.close()
    link_both(data / "old", data / "new", data / "both")
    near_j = np.array([p["j"] for p in planted if p["kind"] == "near"])
    plan = {
        "params": params,
        "shard_docs": shard_docs,
        "old": {
            "documents": old_src["documents"],
            "text_mb": w_old.text_bytes / 1e6,
            "shards": len(w_old.shards),
            "kinds": old_src["kinds"],
        },
        "new": {
            "documents": len(is_copy),
            "text_mb": w_new.text_bytes / 1e6,
            "shards": len(w_new.shards),
            "fresh": n_fresh,
            "fresh_kinds": new_src["kinds"],
            "copies_of_old": {"exact": sum(p["kind"] == "exact" for p in planted), "near": int(near_j.size)},
            "near_jaccard": {
                "target": args.near_j,
                "mean": round(float(near_j.mean()), 4) if near_j.size else None,
                "min": round(float(near_j.min()), 4) if near_j.size else None,
                "below_threshold": int((near_j < THRESHOLD).sum()),
            },
        },
        "planted": planted,
        "seconds": {
            "generate": round(t_gen, 1),
            "generate_reused": old_reused and new_reused,
            "convert": round(time.perf_counter() - t1, 1),
        },
    }
    plan_path.write_text(json.dumps(plan, indent=1))
    plan["reused"] = False
    return plan


# -------------------------------------------------------------------------------- commands


def dedup_cmd(
    inp: Path, out: Path, args: argparse.Namespace, *extra: str
) -> tuple[list[str], dict[str, str]]:
    cmd = [sys.executable, "-m", "selene.cli", "dedup", "-i", str(inp), "-o", str(out)]
    cmd += ["--workers", str(args.workers), *extra]
    return cmd, {**os.environ, "PYTHONPATH": str(ROOT), "SELENE_PREFECT": "off"}


def fastest(repeats: int, cmd: tuple[list[str], dict[str, str]], out: Path, log: Path) -> Run:
    """The fastest of `repeats` runs, each into a fresh `out` (left in place after the last)."""
    runs = []
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        runs.append(timed(*cmd, log))
    return Run(min(r.wall for r in runs), min(r.cpu for r in runs), max(r.rss_mib for r in runs))


def tree_sha256(directory: Path) -> str:
    """sha256 over every file's relative path and bytes, in path order."""
    h = hashlib.sha256()
    for p in sorted(directory.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(directory)).encode() + b"\0")
            with p.open("rb") as f:
                while chunk := f.read(1 << 22):
                    h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------- checks


def removed(out: Path) -> dict[str, dict[str, str]]:
    t = pq.read_table(out / dataset.REMOVED, columns=["id", "source", "reason", "detail"])
    return {r["id"]: r for r in t.to_pylist()}


def texts(data: Path, ids: set[str]) -> dict[str, str]:
    """The texts of `ids` from the datasets under `data` (old, new)."""
    out: dict[str, str] = {}
    for part in ("old", "new"):
        want = pa.array(sorted(i for i in ids if i.startswith(part)), pa.string())
        if not len(want):
            continue
        for f in sorted((data / part).glob("part-*.parquet")):
            t = pq.read_table(f, columns=["id", "text"])
            t = t.filter(pc.is_in(t.column("id"), value_set=want))
            out.update(zip(t.column("id").to_pylist(), t.column("text").to_pylist(), strict=True))
    return out


def compare(
    data: Path, old_d: Path, new_d: Path, both_d: Path, curated_d: Path, plan: dict[str, Any]
) -> dict[str, Any]:
    """NEW's documents removed by b, c and d, OLD's removed by a and by c, the planted copies b caught."""
    a, b, c = removed(old_d), removed(new_d), removed(both_d)
    d_new = {i: r for i, r in removed(curated_d).items() if r["source"] == "new"}
    c_new = {i: r for i, r in c.items() if r["source"] == "new"}
    c_old = {i: r for i, r in c.items() if r["source"] == "old"}
    only_b, only_c = sorted(set(b) - set(c_new)), sorted(set(c_new) - set(b))
    both = set(b) & set(c_new)
    same_kept = sum(b[i]["reason"] == c_new[i]["reason"] for i in both)
    old_only_c, old_only_a = sorted(set(c_old) - set(a)), sorted(set(a) - set(c_old))

    def kept_of(r: dict[str, str]) -> str:
        return r["reason"].removeprefix("dup_of:")

    listed = [*only_b, *only_c][:50]
    wanted = (
        set(listed)
        | {kept_of(b[i]) for i in listed if i in b}
        | {kept_of(c_new[i]) for i in listed if i in c_new}
    )
    wanted |= {kept_of(c_old[i]) for i in old_only_c[:50]} | set(old_only_c[:50])
    txt = texts(data, wanted)
    diffs = []
    for i in listed:
        row: dict[str, Any] = {"id": i, "removed_by": "b only" if i in b else "c only"}
        for name, rec in (("b", b.get(i)), ("c", c_new.get(i))):
            if rec is not None:
                kept = kept_of(rec)
                row[name] = {
                    "reason": rec["reason"],
                    "detail": rec["detail"],
                    "exact_j": round(scale_corpus.jaccard(txt[i], txt[kept]), 4),
                    "kept_in_old_d": kept.startswith("old") and kept not in a,
                    "kept_removed_by_a": kept in a,
                }
        diffs.append(row)
    old_diffs = []
    for i in old_only_c[:50]:
        kept = kept_of(c_old[i])
        old_diffs.append(
            {
                "id": i,
                "reason": c_old[i]["reason"],
                "detail": c_old[i]["detail"],
                "exact_j": round(scale_corpus.jaccard(txt[i], txt[kept]), 4),
            }
        )

    planted = {p["id"]: p for p in plan["planted"]}
    caught: dict[str, dict[str, int]] = {}
    for kind in ("exact", "near"):
        ps = [p for p in planted.values() if p["kind"] == kind]
        dup = [p for p in ps if p["j"] >= THRESHOLD]
        caught[kind] = {
            "planted": len(ps),
            "at_or_above_threshold": len(dup),
            "removed_by_b": sum(p["id"] in b for p in ps),
            "removed_by_b_of_those_at_threshold": sum(p["id"] in b for p in dup),
            "removed_by_b_against_old": sum(p["id"] in b and "against=" in b[p["id"]]["detail"] for p in ps),
            "removed_by_b_dup_of_base": sum(p["id"] in b and kept_of(b[p["id"]]) == p["base"] for p in ps),
            "removed_by_c": sum(p["id"] in c_new for p in ps),
        }
    return {
        "new_removed_d": len(d_new),
        "new_only_b_vs_d": len(set(b) - set(d_new)),
        "new_only_d": len(set(d_new) - set(b)),
        "new_same_kept_copy_d": sum(b[i]["reason"] == d_new[i]["reason"] for i in set(b) & set(d_new)),
        "new_removed_b": len(b),
        "new_removed_c": len(c_new),
        "new_removed_both": len(both),
        "new_same_kept_copy": same_kept,
        "new_only_b": len(only_b),
        "new_only_c": len(only_c),
        "b_against_old": sum("against=" in r["detail"] for r in b.values()),
        "new_differences": diffs,
        "old_removed_a": len(a),
        "old_removed_c": len(c_old),
        "old_only_c": len(old_only_c),
        "old_only_a": len(old_only_a),
        "old_only_c_listed": old_diffs,
        "old_only_a_ids": old_only_a[:50],
        "caught": caught,
    }


# ------------------------------------------------------------------------------------ main


def run_size(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    t = time.perf_counter()
    plan = build(args, work)
    print(
        f"corpus {'reused' if plan['reused'] else f'made in {time.perf_counter() - t:.0f} s'}: "
        f"OLD {plan['old']['documents']:,} documents, {plan['old']['text_mb']:.0f} MB, {plan['old']['shards']} shards; "
        f"NEW {plan['new']['documents']:,} documents, {plan['new']['text_mb']:.0f} MB, {plan['new']['shards']} shards "
        f"({plan['new']['copies_of_old']} copies of OLD documents; near copies J mean "
        f"{plan['new']['near_jaccard']['mean']}, min {plan['new']['near_jaccard']['min']}); {plan['shard_docs']} documents a shard",
        flush=True,
    )
    data = work / f"data-{args.gb:g}g-s{args.seed}"
    runs_dir = work / f"runs-{args.gb:g}g-s{args.seed}"
    runs_dir.mkdir(parents=True, exist_ok=True)
    old_d, new_d, both_d = runs_dir / "old_d", runs_dir / "new_d", runs_dir / "both_d"
    curated, curated_d = runs_dir / "curated", runs_dir / "curated_d"
    priority = ("--keep", "priority", "--priority", "old", "--priority", "new")
    cmds = {
        "a": dedup_cmd(data / "old", old_d, args),
        "b": dedup_cmd(data / "new", new_d, args, "--against", str(old_d)),
        "c": dedup_cmd(data / "both", both_d, args, *priority),
    }
    cmds["d"] = dedup_cmd(curated, curated_d, args, *priority)
    runs: dict[str, Run] = {}
    earlier = json.loads((RESULTS / "dedup_against.json").read_text())["results"].get(f"{args.gb:g}", {})
    if args.reuse and earlier and all((o / "manifest.json").exists() for o in (old_d, new_d, both_d)):
        for k in "abc":
            e = earlier["runs"][k]
            runs[k] = Run(e["wall_s"], e["cpu_s"], e["peak_rss_mib"])
        before, after = earlier["old_d_sha256"]["before_b"], earlier["old_d_sha256"]["after_b"]
        print("  a, b, c: outputs and timings of the earlier run (--reuse)", flush=True)
    else:
        runs["a"] = fastest(args.repeats, cmds["a"], old_d, runs_dir / "a.log")
        print(f"  a. full OLD      {runs['a'].wall:7.1f} s wall {runs['a'].cpu:7.1f} s CPU", flush=True)
        before = tree_sha256(old_d)
        runs["b"] = fastest(args.repeats, cmds["b"], new_d, runs_dir / "b.log")
        print(f"  b. NEW --against {runs['b'].wall:7.1f} s wall {runs['b'].cpu:7.1f} s CPU", flush=True)
        after = tree_sha256(old_d)
        runs["c"] = fastest(args.repeats, cmds["c"], both_d, runs_dir / "c.log")
        print(f"  c. full OLD+NEW  {runs['c'].wall:7.1f} s wall {runs['c'].cpu:7.1f} s CPU", flush=True)
    link_both(old_d, data / "new", curated)
    runs["d"] = fastest(args.repeats, cmds["d"], curated_d, runs_dir / "d.log")
    print(f"  d. OLD_D+NEW     {runs['d'].wall:7.1f} s wall {runs['d'].cpu:7.1f} s CPU", flush=True)
    cmp = compare(data, old_d, new_d, both_d, curated_d, plan)
    return {
        "gb": args.gb,
        "new_share": args.new_share,
        "workers": args.workers,
        "repeats": args.repeats,
        "seed": args.seed,
        "corpus": {k: plan[k] for k in ("shard_docs", "old", "new", "seconds")},
        "commands": {k: " ".join(["SELENE_PREFECT=off", "python", *c[0][1:]]) for k, c in cmds.items()},
        "runs": {
            k: {"wall_s": round(r.wall, 2), "cpu_s": round(r.cpu, 2), "peak_rss_mib": round(r.rss_mib)}
            for k, r in runs.items()
        },
        "ratios": {
            "b/c wall": runs["b"].wall / runs["c"].wall,
            "b/c cpu": runs["b"].cpu / runs["c"].cpu,
            "b/a wall": runs["b"].wall / runs["a"].wall,
            "b/a cpu": runs["b"].cpu / runs["a"].cpu,
            "(a+b)/c wall": (runs["a"].wall + runs["b"].wall) / runs["c"].wall,
        },
        "old_d_sha256": {"before_b": before, "after_b": after, "identical": before == after},
        "compare": cmp,
        "machine": {"cpus": os.cpu_count(), "load_1m_after": round(os.getloadavg()[0], 2)},
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }


def markdown(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "## selene dedup --against: a new crawl against an earlier curated output",
        "",
        "`python benchmarks/dedup_against.py --gb GB` (see its docstring): OLD = `scale_corpus` at GB, NEW = 10% of "
        "it (fresh documents, and 15% copies of OLD documents: half exact, half near at J ~0.9). a = `dedup -i OLD -o "
        "OLD_D`; b = `dedup -i NEW -o NEW_D --against OLD_D`; c = `dedup -i OLD+NEW -o BOTH_D --keep priority "
        "--priority old --priority new`. Whole commands, `SELENE_PREFECT=off`, wall and CPU of the process tree "
        "(the larger of os.wait4 and a 0.1 s poll of the tree: a pool's workers are not waited for), peak RSS of its largest process.",
        "",
        "| GB | NEW share | workers | OLD docs / MB / shards | NEW docs / MB / shards | a wall s / CPU s / RSS MiB "
        "| b wall s / CPU s / RSS MiB | c wall s / CPU s / RSS MiB | b/c wall | b/c CPU | b/a wall | b/a CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        o, n, ru, q = r["corpus"]["old"], r["corpus"]["new"], r["runs"], r["ratios"]
        cells = [f"{ru[k]['wall_s']:.1f} / {ru[k]['cpu_s']:.1f} / {ru[k]['peak_rss_mib']}" for k in "abc"]
        lines.append(
            f"| {r['gb']:g} | {r['new_share']:g} | {r['workers']} | {o['documents']:,} / {o['text_mb']:,.0f} / "
            f"{o['shards']} | {n['documents']:,} / {n['text_mb']:,.0f} / {n['shards']} | {' | '.join(cells)} | "
            f"{q['b/c wall']:.3f} | {q['b/c cpu']:.3f} | {q['b/a wall']:.3f} | {q['b/a cpu']:.3f} |"
        )
    lines += [
        "",
        "d = `dedup -i OLD_D+NEW --keep priority` (the curated corpus and the snapshot: the same documents b "
        "sees), against b:",
        "",
        "| GB | d wall s / CPU s / RSS MiB | NEW removed by b | by d | b only | d only | same kept copy |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        c, d = r["compare"], r["runs"].get("d")
        if d is None or "new_removed_d" not in c:
            continue
        lines.append(
            f"| {r['gb']:g} | {d['wall_s']:.1f} / {d['cpu_s']:.1f} / {d['peak_rss_mib']} | {c['new_removed_b']:,} | "
            f"{c['new_removed_d']:,} | {c['new_only_b_vs_d']} | {c['new_only_d']} | {c['new_same_kept_copy_d']:,} |"
        )
    lines += [
        "",
        "b against c (c = everything again, OLD's removed copies included):",
        "",
        "| GB | NEW removed by b | by c | by both | same kept copy | b only | c only | OLD removed by a | by c "
        "| c only | a only | OLD_D unchanged by b | exact copies caught by b | near copies caught by b (J >= 0.8) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        c, ca = r["compare"], r["compare"]["caught"]
        ex, ne = ca["exact"], ca["near"]
        lines.append(
            f"| {r['gb']:g} | {c['new_removed_b']:,} | {c['new_removed_c']:,} | {c['new_removed_both']:,} | "
            f"{c['new_same_kept_copy']:,} | {c['new_only_b']} | {c['new_only_c']} | {c['old_removed_a']:,} | "
            f"{c['old_removed_c']:,} | {c['old_only_c']} | {c['old_only_a']} | "
            f"{'yes' if r['old_d_sha256']['identical'] else 'NO'} | {ex['removed_by_b']} / {ex['planted']} | "
            f"{ne['removed_by_b_of_those_at_threshold']} / {ne['at_or_above_threshold']} "
            f"(all: {ne['removed_by_b']} / {ne['planted']}) |"
        )
    for r in results.values():
        c = r["compare"]
        if c["new_differences"] or c["old_only_c_listed"]:
            lines += ["", f"Differences at {r['gb']:g} GB (reason / detail / exact J to the kept copy):", ""]
        for d in c["new_differences"]:
            parts = [
                f"{k}: {d[k]['reason']} ({d[k]['detail']}, exact J {d[k]['exact_j']})"
                for k in ("b", "c")
                if k in d
            ]
            lines.append(f"- NEW {d['id']}, removed by {d['removed_by']}: " + "; ".join(parts))
        for d in c["old_only_c_listed"]:
            lines.append(
                f"- OLD {d['id']}, removed by c only: {d['reason']} ({d['detail']}, exact J {d['exact_j']})"
            )
        if c["old_only_a_ids"]:
            lines.append(f"- OLD removed by a only: {', '.join(c['old_only_a_ids'])}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=0.5, help="GB of text of OLD (default 0.5)")
    ap.add_argument(
        "--new-share", type=float, default=0.1, help="NEW's size as a share of OLD's (default 0.1)"
    )
    ap.add_argument("--plant", type=float, default=0.15, help="share of NEW's documents copied from OLD's")
    ap.add_argument("--near-j", type=float, default=0.9, help="target Jaccard of the near copies")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1, help="runs per command; the fastest counts")
    ap.add_argument(
        "--work", type=Path, default=Path("/tmp/selene-dedup-against"), help="corpora and outputs"
    )
    ap.add_argument("--no-save", action="store_true", help="do not write benchmarks/results/dedup_against.*")
    ap.add_argument(
        "--reuse", action="store_true", help="a, b, c from the earlier run of this size; run d only"
    )
    args = ap.parse_args(argv)

    args.work.mkdir(parents=True, exist_ok=True)
    r = run_size(args, args.work)
    path = RESULTS / "dedup_against.json"
    results: dict[str, dict[str, Any]] = {}
    if path.exists():
        results = json.loads(path.read_text())["results"]
    results[f"{args.gb:g}"] = r
    results = dict(sorted(results.items(), key=lambda kv: float(kv[0])))
    md = markdown({f"{args.gb:g}": r})
    print("\n" + md)
    if not args.no_save:
        path.write_text(json.dumps({"results": results}, indent=1) + "\n")
        (RESULTS / "dedup_against.md").write_text(markdown(results))
        print(f"saved {path} and {path.with_suffix('.md')}")


if __name__ == "__main__":
    main()
