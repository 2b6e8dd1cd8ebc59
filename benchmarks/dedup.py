"""Near-duplicate removal end to end: `selene dedup` against datatrove's MinHash pipeline.

    python benchmarks/dedup.py [--bases N] [--scale 4] [--repeats 2] [--bands 16 --rows 8] [--profile]
    python benchmarks/dedup.py --against [--gb 0.5 ...]   (benchmarks/dedup_against.py: incremental dedup)
    python benchmarks/dedup.py --keep priority|longest [--bases N] ...   (which copy stays)

datatrove runs in its own venv (it is not a dependency of selene); create it once with

    python3 -m venv /work/venvs/datatrove
    /work/venvs/datatrove/bin/pip install "datatrove[processing]==0.10.1" spacy pyarrow orjson

(no torch: spacy is datatrove's English word tokeniser; `--datatrove-python` points elsewhere).
Without it the datatrove side is skipped with a message.

Corpus: the planted near-duplicate families of `tests/dedup_corpus.py` (a prose base document from
the Python reference and one variant per target Jaccard 1.0 ... 0.3). The reference holds only 188
bases, so family k >= 188 is family k mod 188 under a word cipher (a seeded permutation of the
vocabulary, one per replica): a bijection on words keeps every exact Jaccard of the family and
shares no 5-gram with other replicas. The 1x input is the first `--bases` families, the 4x input the
first `--scale` times as many; both are selene document datasets (Parquet shards + manifest), and
datatrove reads the same Parquet shards (`ParquetReader`).

Both sides, as users run them, one worker each, timed as whole commands (wall clock, and the
child's user+sys CPU and peak RSS from `os.wait4`, since the machine may be shared):
- selene: ``python -m selene.cli dedup -i IN -o OUT --bands B --rows R --num-perm B*R ...``,
  ``SELENE_PREFECT=off``, workers 1.
- datatrove: `benchmarks/_datatrove_minhash.py`: MinhashDedupSignature → Buckets → Cluster → Filter,
  each under LocalPipelineExecutor(workers=1), kept and removed documents written as Parquet.
Same parameters: word 5-grams, B bands (buckets) × R rows (hashes per bucket) = 128 permutations.
selene cuts the signature into bands twice (`--band-sets 2`, its default: the usual bands, and the
same values along diagonals, `lsh.band_positions`), so a pair that misses every usual band gets a second
chance from the same hashes, and verifies candidates on the full signature (estimated J >= threshold
- 3 standard deviations of the estimate; `--verify`, `--verify-margin`); datatrove has one band set
and no threshold: every band collision is a duplicate. The margin keeps the links just under the
threshold that join a cluster transitively and drops the clearly dissimilar candidates.
Measured (2 cores, shared with other jobs), 16×8, seeds 1-5 on both sides (means):
`python benchmarks/dedup.py --seeds 5`: 37.8x datatrove's marginal throughput; recall 0.9995 vs
0.9950 (per seed: selene 0.9994-0.9997, datatrove 0.9935-0.9962); precision 0.946 vs 0.868.
Also measured with the same harness in process (same corpus): 17×7 (selene's default banding at
0.8), seeds 1-3: recall 0.9996 vs 0.9989, precision 0.941 vs 0.816; 60 bases × 4 (2880 documents),
seeds 1-4: 0.9998 vs 0.9961, precision 0.944 vs 0.878. One band set (`--band-sets 1`, plain LSH
with verification) is a statistical tie on recall with datatrove (16×8: 0.9952 vs 0.9950); the
second set is what makes selene's recall higher. Margins at 16×8 with two sets: 0 → recall 0.937,
precision 0.999; 1.5σ → 0.9951, 0.986; 2.5σ → 0.9992, 0.965; 3σ → 0.9995, 0.946; 5σ → 0.9997, 0.883.
Quality moves with the MinHash seed by ±0.1 point of recall: `--seeds N` (default 3) runs
seeds 1..N on both sides at the larger size and reports the mean quality. Each measurement is the minimum of
`--repeats` runs (`--selene-repeats` for selene, whose runs take seconds and are cheap to repeat).
Speed is the marginal throughput (docs_4x - docs_1x) / (t_4x - t_1x), so start-up cancels.

Quality, on the 4x run, against exact word-5-gram Jaccard (`tests/dedup_corpus.py`): clusters are
the connected components of what each tool merged (selene: `dup_of:<id>` in removed.parquet;
datatrove: the pairs in its `.dups` files, which is what its stage 3 unions).
- recall: share of pairs with exact J >= threshold (and >= threshold + 0.05) in one cluster;
- precision (kept): share of removed documents whose exact J with the document kept for their
  cluster is >= threshold - 0.1;
- precision (any): ... with at least one other member of their cluster.
Ground-truth pairs come from `pairs_at_least` over the first 188 families (replica 0), carried to
every replica by the cipher; cross-replica pairs share no 5-gram. Precision (kept) is computed
directly with `exact_jaccard` on each removed document and its kept one.

`--profile` also runs selene's 4x command with a timer around each of its steps and prints them.

`--keep priority|longest`: which copy of a cluster stays, instead of the comparison above. The 4x corpus
again, each document given a source by a seeded draw (CommonCrawl 60%, Books3 25%, Wikipedia 15%: a
web-heavy mix, so the best copy is rarely the first), and deduplicated three ways, as whole commands:
selene with `--keep first` (its default), selene with the rule (`--keep priority --priority Wikipedia
--priority Books3 --priority CommonCrawl`, or `--keep longest`), and datatrove (no such rule: it keeps one
copy per cluster by document order). For each: wall and CPU, recall and precision as above, and how the
rule was honoured, over every removed document and the copy kept for it:
- outranked: removed documents that rank before their kept copy by the rule (a Wikipedia page removed
  for a CommonCrawl copy; a longer copy removed for a shorter one). The rule must make this 0;
- best kept: share of clusters (a kept copy and the documents removed for it) whose kept copy ranks
  first among them by the rule (ties by corpus order count as first).
Recall as above puts a pair in one cluster; a rule that keeps a copy other than a family's centre
splits the family into clusters around each copy kept, so "caught" also counts the pairs with
exact J >= threshold of which at least one document is removed (both kept: a miss).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus import write_dataset  # noqa: E402
from tests.dedup_corpus import (  # noqa: E402
    TARGETS,
    base_documents,
    exact_jaccard,
    pairs_at_least,
    real_documents,
    reference_words,
    removal_quality,
    stage_shingles,
    variant,
)

DATATROVE_PYTHON = "/work/venvs/datatrove/bin/python"
DATATROVE_SCRIPT = ROOT / "benchmarks" / "_datatrove_minhash.py"
_WORD = re.compile(r"[^\W_]+")


# ---------------------------------------------------------------------------------- corpus


@dataclass
class Corpus:
    docs: list[tuple[str, str]]  # (id, text), families in order
    family_size: int  # documents per family: the base and its variants
    real: int  # families made from distinct reference prose (replica 0)
    truth: dict[tuple[int, int], float]  # replica-0 pairs (i < j) with exact J >= the lowest level asked


def build_corpus(n_families: int, copies: int, min_j: float, seed: int = 7) -> Corpus:
    """`n_families` families of 1 base + `copies` variants per target in TARGETS (see module doc)."""
    real = base_documents(10**6, seed=0)
    vocab = sorted({w for b in real for w in reference_words(b)})
    rng = random.Random(seed)
    families = []
    for base in real[: min(len(real), n_families)]:
        families.append([base] + [variant(base, t, rng, vocab) for t in TARGETS * copies])
    truth = pairs_at_least([("", t) for fam in families for t in fam], min_j)
    docs: list[tuple[str, str]] = []
    for k in range(n_families):
        replica, i = divmod(k, len(real))
        fam = families[i]
        if replica:
            perm = list(vocab)
            random.Random(f"{seed}:{replica}").shuffle(perm)
            cipher = dict(zip(vocab, perm, strict=True))

            def sub(m: re.Match[str], cipher: dict[str, str] = cipher) -> str:
                return cipher.get(m.group().lower(), m.group())

            fam = [_WORD.sub(sub, t) for t in fam]
        docs.append((f"b{k}", fam[0]))
        docs += [(f"b{k}v{t:g}c{c}", text) for (c, t), text in zip(_levels(copies), fam[1:], strict=True)]
    return Corpus(docs, len(families[0]), len(families), truth)


def _levels(copies: int) -> list[tuple[int, float]]:
    return [(c, t) for c in range(copies) for t in TARGETS]


def truth_pairs(corpus: Corpus, n_docs: int, min_j: float) -> list[tuple[int, int]]:
    """Every pair (global indices, i < j < n_docs) with exact J >= min_j: replica 0's, in every replica."""
    per_replica = corpus.real * corpus.family_size
    out = []
    for offset in range(0, n_docs, per_replica):
        out += [
            (offset + i, offset + j)
            for (i, j), jac in corpus.truth.items()
            if jac >= min_j and offset + j < n_docs
        ]
    return out


# -------------------------------------------------------------------------------- commands


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mib: float


def timed(cmd: list[str], env: dict[str, str], log: Path) -> Run:
    """Run `cmd` to completion; wall clock, user+sys CPU and peak RSS of its largest process.

    CPU and RSS: the larger of `os.wait4`'s (the child and every descendant it waited for) and a
    poll of the whole process tree every 0.1 s (psutil). A process pool's workers are children of
    its forkserver, which is not waited for at exit: wait4 alone missed two thirds of a
    two-worker dedup's CPU. The poll misses each process's last < 0.1 s."""
    import threading

    import psutil

    cpu: dict[tuple[int, float], float] = {}
    peak = [0]
    with open(log, "w") as out:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        done = threading.Event()

        def poll() -> None:
            root = psutil.Process(p.pid)
            while not done.is_set():
                try:
                    procs = [root, *root.children(recursive=True)]
                except psutil.Error:
                    return
                for q in procs:
                    try:
                        with q.oneshot():
                            c = q.cpu_times()
                            cpu[(q.pid, q.create_time())] = c.user + c.system
                            peak[0] = max(peak[0], q.memory_info().rss)
                    except psutil.Error:
                        pass
                done.wait(0.1)

        sampler = threading.Thread(target=poll, daemon=True)
        sampler.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        done.set()
        sampler.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{log.read_text()[-3000:]}")
    return Run(
        wall, max(ru.ru_utime + ru.ru_stime, sum(cpu.values())), max(ru.ru_maxrss / 1024, peak[0] / 2**20)
    )


def selene_cmd(inp: Path, out: Path, args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    cmd = [sys.executable, "-m", "selene.cli", "dedup", "-i", str(inp), "-o", str(out)]
    cmd += ["--threshold", str(args.threshold), "--ngram", "5", "--shingle", "word", "--workers", "1"]
    cmd += ["--num-perm", str(args.bands * args.rows), "--bands", str(args.bands), "--rows", str(args.rows)]
    cmd += ["--verify", args.verify]
    if args.band_sets is not None:
        cmd += ["--band-sets", str(args.band_sets)]
    if args.verify_margin is not None:
        cmd += ["--verify-margin", str(args.verify_margin)]
    seed = getattr(args, "seed", 1)
    if seed != 1:  # the MinHash seed is a config field (no CLI option): a stage config file
        cfg = out.parent / f"dedup-seed-{seed}.yaml"
        cfg.write_text(f"seed: {seed}\n")
        cmd += ["-c", str(cfg)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SELENE_PREFECT": "off"}
    return cmd, env


def datatrove_cmd(inp: Path, work: Path, args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    cmd = [args.datatrove_python, str(DATATROVE_SCRIPT), str(inp), str(work)]
    cmd += ["--ngram", "5", "--buckets", str(args.bands), "--rows", str(args.rows)]
    cmd += ["--seed", str(getattr(args, "seed", 1))]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return cmd, env


def best_of(repeats: int, make: Callable[[], tuple[list[str], dict[str, str]]], out: Path, log: Path) -> Run:
    """The fastest of `repeats` runs into a fresh `out` (left in place after the last run)."""
    runs = []
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        runs.append(timed(*make(), log))
    return Run(min(r.wall for r in runs), min(r.cpu for r in runs), max(r.rss_mib for r in runs))


# --------------------------------------------------------------------------------- quality


def _components(n: int, pairs: np.ndarray) -> np.ndarray:
    parent = np.arange(n)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([find(i) for i in range(n)])


def selene_clusters(out: Path, index: dict[str, int]) -> tuple[np.ndarray, dict[int, int]]:
    """(cluster label per document, kept document of each removed one) from removed.parquet."""
    removed = pq.read_table(out / "removed.parquet", columns=["id", "reason"]).to_pylist()
    kept = {index[r["id"]]: index[r["reason"].removeprefix("dup_of:")] for r in removed}
    pairs = np.array(list(kept.items()), dtype=np.int64).reshape(-1, 2)
    return _components(len(index), pairs), kept


def datatrove_clusters(work: Path, index: dict[str, int]) -> tuple[np.ndarray, dict[int, int]]:
    """The same from datatrove's files: its duplicate pairs (stage 2, what stage 3 unions) and its
    removed documents (stage 4's exclusion writer). Documents are numbered in reading order, which
    with one task is corpus order; the ids of the removed documents check it."""
    pairs = [
        np.fromfile(f, dtype="<u4").reshape(-1, 4)[:, [1, 3]]
        for f in sorted((work / "buckets").glob("*.dups"))
    ]
    labels = _components(
        len(index), np.concatenate(pairs).astype(np.int64) if pairs else np.empty((0, 2), np.int64)
    )
    removed_ids = [
        i
        for f in sorted((work / "removed").glob("*.parquet"))
        for i in pq.read_table(f, columns=["id"]).column("id").to_pylist()
    ]
    remove_idx = (
        np.fromfile(work / "remove_ids" / "000000.remove", dtype="<u4")
        if (work / "remove_ids" / "000000.remove").exists()
        else np.empty(0, np.uint32)
    )
    if sorted(index[i] for i in removed_ids) != sorted(remove_idx.tolist()):
        sys.exit("datatrove: the removed documents are not the ones its .remove file lists (document order?)")
    removed = {index[i] for i in removed_ids}
    keeper = {int(lab): i for i, lab in enumerate(labels.tolist()) if i not in removed}
    return labels, {r: keeper[int(labels[r])] for r in removed}


def quality(
    corpus: Corpus, n: int, labels: np.ndarray, kept: dict[int, int], threshold: float
) -> dict[str, float]:
    docs = corpus.docs[:n]
    out: dict[str, float] = {}
    for name, j in (("recall", threshold), ("recall+", threshold + 0.05)):
        must = truth_pairs(corpus, n, j)
        out[name] = sum(labels[a] == labels[b] for a, b in must) / max(len(must), 1)
        out[f"{name} pairs"] = len(must)
    low = threshold - 0.1
    out["precision"] = sum(exact_jaccard(docs[r][1], docs[k][1]) >= low for r, k in kept.items()) / max(
        len(kept), 1
    )
    near = defaultdict(set)
    for a, b in truth_pairs(corpus, n, low):
        near[a].add(b)
        near[b].add(a)
    out["precision any"] = sum(any(labels[m] == labels[r] for m in near[r]) for r in kept) / max(len(kept), 1)
    out["removed"] = len(kept)
    return out


def real_text(
    tmp: Path,
    args: argparse.Namespace,
    sides: list[tuple[str, Callable[..., tuple[list[str], dict[str, str]]]]],
) -> None:
    """Real text of this machine (`tests.dedup_corpus.real_documents`: Debian licences, copyright files
    and changelogs, man pages, pydoc topics), each side run once; removals against exact Jaccard on the
    stage's own shingles at the threshold (`removal_quality`)."""
    docs = real_documents(per_source=args.real_per_source)
    if len(docs) < 100:
        print(f"\nreal text skipped: only {len(docs)} documents on this machine")
        return
    inp = tmp / "in-real"
    write_dataset(str(inp), docs, shard_docs=2000)
    index = {d: i for i, (d, _) in enumerate(docs)}
    sets = stage_shingles([t for _, t in docs])
    print(
        f"\nreal text: {len(docs)} documents ({sum(len(t.encode()) for _, t in docs) / 1e6:.1f} MB), "
        f"threshold {args.threshold}; precision: removed with exact J >= threshold to their kept copy; "
        "recall: pairs with exact J >= threshold not both kept"
    )
    print(
        f"  {'side':<11}{'wall s':>8}{'removed':>9}{'needed':>8}{'pairs':>7}{'recall':>8}{'precision':>11}{'min J':>7}{'< t-3σ':>8}"
    )
    for side, make in sides:
        out = tmp / f"{side}-real"
        shutil.rmtree(out, ignore_errors=True)
        run = timed(*make(inp, out, args), tmp / f"{side}-real.log")
        clusters = selene_clusters if side == "selene" else datatrove_clusters
        q = removal_quality(sets, clusters(out, index)[1], args.threshold, args.bands * args.rows)
        print(
            f"  {side:<11}{run.wall:>8.2f}{q['removed']:>9.0f}{q['needed']:>8.0f}{q['pairs']:>7.0f}"
            f"{q['recall']:>8.4f}{q['precision']:>11.4f}{q['min_j']:>7.3f}{q['below_noise']:>8.0f}"
        )


# ------------------------------------------------------------------------------- keep rules

KEEP_RULES = ("priority", "longest")
SOURCES = (("Wikipedia", 0.15), ("Books3", 0.25), ("CommonCrawl", 0.60))  # priority order, share


def draw_source(doc_id: str) -> str:
    """A source per document, seeded by its id: the same for every run and side."""
    u = random.Random(f"source:{doc_id}").random()
    for name, share in SOURCES:
        if u < share:
            return name
        u -= share
    return SOURCES[-1][0]


def rule_honoured(kept: dict[int, int], rank: Callable[[int], tuple]) -> dict[str, float]:
    """How a keep rule was honoured: removed documents that outrank their kept copy, and the share
    of clusters (a kept copy and the documents removed for it) whose kept copy ranks first."""
    groups: dict[int, list[int]] = defaultdict(list)
    for r, k in kept.items():
        groups[k].append(r)
    outranked = sum(rank(r) < rank(k) for r, k in kept.items())
    best = sum(all(rank(k) <= rank(r) for r in rs) for k, rs in groups.items())
    return {"outranked": outranked, "best kept": best / max(len(groups), 1), "clusters": len(groups)}


def keep_rule(corpus: Corpus, args: argparse.Namespace) -> None:
    n = len(corpus.docs)
    docs = [(d, t, draw_source(d), "{}") for d, t in corpus.docs]
    index = {d[0]: i for i, d in enumerate(docs)}
    source = [d[2] for d in docs]
    order = {name: i for i, (name, _) in enumerate(SOURCES)}
    if args.keep == "priority":
        rule_args = ["--keep", "priority"] + [a for name, _ in SOURCES for a in ("--priority", name)]

        def rank(i: int) -> tuple:
            return (order[source[i]], i)

    else:
        rule_args = ["--keep", "longest"]

        def rank(i: int) -> tuple:
            return (-len(docs[i][1]), i)

    def with_rule(inp: Path, out: Path, a: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
        cmd, env = selene_cmd(inp, out, a)
        return cmd + rule_args, env

    sides: list[tuple[str, Callable[..., tuple[list[str], dict[str, str]]]]] = [
        ("selene first", selene_cmd),
        (f"selene {args.keep}", with_rule),
    ]
    if Path(args.datatrove_python).exists():
        sides.append(("datatrove", datatrove_cmd))
    tmp = Path(args.keep_dir or tempfile.mkdtemp(prefix="selene-bench-dedup-keep-"))
    tmp.mkdir(parents=True, exist_ok=True)
    counts = {name: source.count(name) for name, _ in SOURCES}
    print(
        f"keep {args.keep}: {n} documents, sources {counts}; rule {' '.join(rule_args)}; "
        f"best of {args.selene_repeats} selene / {args.repeats} datatrove runs"
    )
    must = truth_pairs(corpus, n, args.threshold)
    head = f"  {'side':<18}{'wall s':>8}{'CPU s':>8}{'removed':>9}{'recall':>8}{'caught':>8}{'precision':>11}"
    print(head + f"{'outranked':>11}{'best kept':>11}{'clusters':>10}")
    try:
        inp = tmp / "in-sourced"
        write_dataset(str(inp), docs, shard_docs=2000)
        res = {}
        for side, make in sides:
            out = tmp / side.replace(" ", "-")
            repeats = args.repeats if side == "datatrove" else args.selene_repeats
            run = best_of(repeats, lambda make=make, out=out: make(inp, out, args), out, tmp / f"{out.name}.log")
            labels, kept = (datatrove_clusters if side == "datatrove" else selene_clusters)(out, index)
            q = quality(corpus, n, labels, kept, args.threshold)
            h = rule_honoured(kept, rank)
            caught = sum(a in kept or b in kept for a, b in must) / max(len(must), 1)
            res[side] = run
            print(
                f"  {side:<18}{run.wall:>8.2f}{run.cpu:>8.2f}{q['removed']:>9.0f}{q['recall']:>8.4f}{caught:>8.4f}"
                f"{q['precision']:>11.4f}{h['outranked']:>11.0f}{h['best kept']:>11.4f}{h['clusters']:>10.0f}",
                flush=True,
            )
        first, ruled = res["selene first"], res[f"selene {args.keep}"]
        print(f"  {args.keep} / first: wall {ruled.wall / first.wall:.3f}, CPU {ruled.cpu / first.cpu:.3f}")
    finally:
        if not args.keep_dir:
            shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------------- profile

# Run in the child: selene's functions wrapped with timers (no profiler overhead), then `main`.
PROFILE_DRIVER = """
import json, sys, time
from collections import defaultdict
from collections.abc import Callable
t0, c0 = time.perf_counter(), time.process_time()
from selene import cli
from selene.dedup import bands, clusters, lsh, minhash, shingle, signatures, stage, write
from selene.io import dataset
t_import, c_import = time.perf_counter() - t0, time.process_time() - c0
acc, cpu, calls = defaultdict(float), defaultdict(float), defaultdict(int)
def wrap(mod, name, label):
    f = getattr(mod, name)
    def timed(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] += time.perf_counter() - t
            cpu[label] += time.process_time() - c
            calls[label] += 1
    setattr(mod, name, timed)
for mod, name, label in STEPS:
    wrap({"stage": stage, "signatures": signatures, "bands": bands, "clusters": clusters,
          "write": write, "shingle": shingle, "minhash": minhash, "lsh": lsh,
          "dataset": dataset}[mod], name, label)
t, c = time.perf_counter(), time.process_time()
rc = cli.main(sys.argv[2:])
acc["main"], cpu["main"] = time.perf_counter() - t, time.process_time() - c
acc["import"], cpu["import"] = t_import, c_import
with open(sys.argv[1], "w") as f:
    json.dump({"seconds": acc, "cpu": cpu, "calls": calls, "rc": rc}, f)
import atexit, os, threading
threading._shutdown()
atexit._run_exitfuncs()
sys.stdout.flush()
os._exit(rc)  # as selene.cli.entrypoint: no module teardown
"""
STEPS = [  # (module, function, label): wall seconds inside each, summed over calls
    ("stage", "run_dedup", "run_dedup (whole stage)"),
    ("signatures", "signature_shard", "  signatures (per shard)"),
    ("shingle", "batch_hashes", "    shingling (per row group)"),
    ("shingle", "_words", "      normalise + split words"),
    ("shingle", "_combine", "      n-gram hashes"),
    ("minhash", "signatures_flat", "    minhash"),
    ("minhash", "_permute_into", "      permutations"),
    ("lsh", "band_keys", "    band keys"),
    ("bands", "band_pairs", "  bands (sort + verify)"),
    ("bands", "verify", "    verify"),
    ("clusters", "cluster", "  clustering"),
    ("write", "write_shard", "  write shards + removed parts"),
    ("stage", "finalize", "  finalize"),
    ("dataset", "merge_removed", "    merge removed.parquet"),
    ("stage", "cluster_examples", "    clusters.md"),
    ("lsh", "plot_s_curve", "    s_curve.svg"),
    ("dataset", "write_manifest", "    manifest.json"),
]


def profile_selene(inp: Path, out: Path, work: Path, args: argparse.Namespace) -> None:
    """selene's command at the larger size with a timer around each step (see STEPS); per step the
    least of `--selene-repeats` runs, wall and CPU."""
    cmd, env = selene_cmd(inp, out, args)
    driver = f"STEPS = {STEPS!r}\n{PROFILE_DRIVER}"
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.selene_repeats):
        shutil.rmtree(out, ignore_errors=True)
        run = timed([cmd[0], "-c", driver, str(work / "steps.json"), *cmd[3:]], env, work / "profile.log")
        res = json.loads((work / "steps.json").read_text())
        sec, used, calls = res["seconds"], res["cpu"], res["calls"]
        whole = "run_dedup (whole stage)"
        for d, r, total in ((wall, sec, run.wall), (cpu, used, run.cpu)):
            d["whole command"].append(total)
            d["interpreter start + exit"].append(total - r["import"] - r["main"])
            d["imports (selene.cli + dedup modules)"].append(r["import"])
            d["CLI outside run_dedup"].append(r["main"] - r[whole])
            for _, _, label in STEPS:
                d[label].append(r.get(label, 0.0))
    print(f"\nselene dedup at {args.scale}x, time per step (least of {args.selene_repeats} runs)")
    print(f"  {'step':<40}{'wall s':>8}{'CPU s':>8}{'calls':>8}")
    for label in wall:
        print(f"  {label:<40}{min(wall[label]):>8.3f}{min(cpu[label]):>8.3f}{calls.get(label, 1):>8}")


def datatrove_steps(work: Path) -> str:
    """Seconds per step of a datatrove run, from the stats.json its executor writes per stage."""
    parts = []
    for stage in ("signatures", "buckets", "clusters", "filter"):
        for step in json.loads((work / "logs" / stage / "stats.json").read_text()):
            name = " ".join(step["name"].encode("ascii", "ignore").decode().replace(":", " ").split()[1:])
            parts.append(f"{name} {step.get('time_stats', {}).get('total', 0.0):.2f}")
    return ", ".join(parts)


# ------------------------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bases", type=int, default=500, help="families at 1x (default 500 = 6000 documents)")
    ap.add_argument("--scale", type=int, default=4, help="the larger input is this many times the 1x one")
    ap.add_argument(
        "--copies", type=int, default=1, help="variants per target Jaccard per family (11 targets)"
    )
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--bands", type=int, default=16, help="LSH bands = datatrove's num_buckets")
    ap.add_argument("--rows", type=int, default=8, help="rows per band = datatrove's hashes_per_bucket")
    ap.add_argument(
        "--verify", default="signature", help="selene's check of candidates: signature | exact | none"
    )
    ap.add_argument("--verify-margin", type=float, help="selene's --verify-margin (default: its own)")
    ap.add_argument(
        "--band-sets", type=int, help="selene's --band-sets (default: its own, 2; 1 = datatrove's banding)"
    )
    ap.add_argument("--repeats", type=int, default=2, help="runs per measurement; the fastest counts")
    ap.add_argument(
        "--selene-repeats", type=int, default=5, help="the same for selene (seconds per run, so noisier)"
    )
    ap.add_argument(
        "--seeds", type=int, default=3,
        help="MinHash seeds 1..N on both sides at the larger size; quality is their mean (one seed moves "
        "recall by about 0.1 point, as much as the tools differ)",
    )  # fmt: skip
    ap.add_argument("--datatrove-python", default=DATATROVE_PYTHON)
    ap.add_argument("--profile", action="store_true", help="also profile selene's command at the larger size")
    ap.add_argument("--keep-dir", help="keep inputs and outputs in this directory")
    ap.add_argument(
        "--keep", choices=KEEP_RULES,
        help="measure which copy stays under this selene keep rule instead (see the module doc)",
    )  # fmt: skip
    ap.add_argument(
        "--real-per-source", type=int, default=300,
        help="real text: files per kind (licences, copyright x2, changelogs, man pages, pydoc); 0 skips it",
    )  # fmt: skip
    ap.add_argument(
        "--against", nargs=argparse.REMAINDER,
        help="measure `dedup --against` instead (benchmarks/dedup_against.py); the options after it are its own",
    )  # fmt: skip
    args = ap.parse_args()
    if args.against is not None:
        import dedup_against

        dedup_against.main(args.against)
        return

    t = time.perf_counter()
    corpus = build_corpus(args.bases * args.scale, args.copies, args.threshold - 0.1)
    sizes = {"1x": args.bases * corpus.family_size, f"{args.scale}x": len(corpus.docs)}
    mb = {k: sum(len(t.encode()) for _, t in corpus.docs[:n]) / 1e6 for k, n in sizes.items()}
    print(
        f"corpus: {sizes['1x']} / {len(corpus.docs)} documents ({mb['1x']:.1f} / {mb[f'{args.scale}x']:.1f} MB), "
        f"families of {corpus.family_size}, built in {time.perf_counter() - t:.1f} s; word 5-grams, "
        f"{args.bands} bands x {args.rows} rows = {args.bands * args.rows} permutations, threshold {args.threshold}"
    )
    dt_ok = Path(args.datatrove_python).exists()
    if not dt_ok:
        print(f"datatrove side skipped: no {args.datatrove_python} (see this file's docstring to create it)")

    if args.keep:
        keep_rule(corpus, args)
        return
    tmp = Path(args.keep_dir or tempfile.mkdtemp(prefix="selene-bench-dedup-"))
    tmp.mkdir(parents=True, exist_ok=True)
    index = {d: i for i, (d, _) in enumerate(corpus.docs)}
    rows, qual = [], {}
    try:
        for size, n in sizes.items():
            write_dataset(str(tmp / f"in-{size}"), corpus.docs[:n], shard_docs=2000)
        sides = [("selene", selene_cmd)] + ([("datatrove", datatrove_cmd)] if dt_ok else [])
        for side, make in sides:
            for size, n in sizes.items():
                out = tmp / f"{side}-{size}"
                repeats = args.selene_repeats if side == "selene" else args.repeats
                run = best_of(
                    repeats,
                    lambda make=make, out=out, size=size: make(tmp / f"in-{size}", out, args),
                    out,
                    tmp / f"{side}-{size}.log",
                )
                rows.append((side, size, n, mb[size], run))
                print(f"  {side:<10}{size:>4}: {run.wall:7.2f} s wall, {run.cpu:7.2f} s CPU", flush=True)
            big = f"{args.scale}x"
            clusters = selene_clusters if side == "selene" else datatrove_clusters
            quals = [quality(corpus, sizes[big], *clusters(tmp / f"{side}-{big}", index), args.threshold)]
            for seed in range(2, args.seeds + 1):  # quality only: one untimed run per further seed
                out = tmp / f"{side}-{big}-s{seed}"
                shutil.rmtree(out, ignore_errors=True)
                seeded = argparse.Namespace(**{**vars(args), "seed": seed})
                timed(*make(tmp / f"in-{big}", out, seeded), tmp / f"{side}-{big}-s{seed}.log")
                quals.append(quality(corpus, sizes[big], *clusters(out, index), args.threshold))
            print(
                f"  {side:<10}recall J>={args.threshold:.2f} per seed: {[round(q['recall'], 4) for q in quals]}"
            )
            qual[side] = {k: sum(q[k] for q in quals) / len(quals) for k in quals[0]}
        report(rows, qual, args)
        if dt_ok:
            print(
                f"datatrove at {args.scale}x, seconds per step: {datatrove_steps(tmp / f'datatrove-{args.scale}x')}"
            )
        if args.real_per_source:
            real_text(tmp, args, sides)
        if args.profile:
            profile_selene(tmp / f"in-{args.scale}x", tmp / "selene-profile", tmp, args)
    finally:
        if not args.keep_dir:
            shutil.rmtree(tmp, ignore_errors=True)


def report(
    rows: list[tuple[str, str, int, float, Run]], qual: dict[str, dict[str, float]], args: argparse.Namespace
) -> None:
    print(f"\n{'side':<11}{'size':>5}{'docs':>8}{'MB':>7}{'wall s':>9}{'CPU s':>9}{'peak RSS MiB':>14}")
    for side, size, n, mb, r in rows:
        print(f"{side:<11}{size:>5}{n:>8}{mb:>7.1f}{r.wall:>9.2f}{r.cpu:>9.2f}{r.rss_mib:>14.0f}")

    marginal = {}
    for side in dict.fromkeys(r[0] for r in rows):
        (_, _, n1, mb1, r1), (_, _, n4, mb4, r4) = [r for r in rows if r[0] == side]
        marginal[side] = [
            (n4 - n1) / (r4.wall - r1.wall),
            (mb4 - mb1) / (r4.wall - r1.wall),
            (n4 - n1) / (r4.cpu - r1.cpu),
            (mb4 - mb1) / (r4.cpu - r1.cpu),
        ]
    print(
        f"\nmarginal ({args.scale}x - 1x){'docs/s wall':>16}{'MB/s wall':>12}{'docs/s CPU':>13}{'MB/s CPU':>11}"
    )
    for side, m in marginal.items():
        print(f"{side:<19}{m[0]:>16.0f}{m[1]:>12.2f}{m[2]:>13.0f}{m[3]:>11.2f}")
    if len(marginal) == 2:
        ratio = [s / d for s, d in zip(marginal["selene"], marginal["datatrove"], strict=True)]
        print(
            f"{'selene / datatrove':<19}{ratio[0]:>15.1f}x{ratio[1]:>11.1f}x{ratio[2]:>12.1f}x{ratio[3]:>10.1f}x"
        )

    t = args.threshold
    print(
        f"\nquality at {args.scale}x, mean of {args.seeds} seed(s){'recall J>=' + f'{t:.2f}':>16}{'recall J>=' + f'{t + 0.05:.2f}':>16}{'prec. kept':>12}{'prec. any':>11}{'removed':>9}"
    )
    for side, q in qual.items():
        print(
            f"{side:<14}{'':>18}{q['recall']:>16.4f}{q['recall+']:>16.4f}{q['precision']:>12.4f}{q['precision any']:>11.4f}{q['removed']:>9.0f}"
        )
    q0 = next(iter(qual.values()))
    print(
        f"pairs: {q0['recall pairs']:.0f} with J >= {t:.2f}, {q0['recall+ pairs']:.0f} with J >= {t + 0.05:.2f}; precision counts J >= {t - 0.1:.2f}"
    )
    if len(marginal) == 2:
        s, d = qual["selene"], qual["datatrove"]
        checks = [
            f"speed {ratio[0]:.1f}x >= 5x: {'yes' if ratio[0] >= 5 else 'NO'}",
            f"recall {s['recall']:.4f} >= {d['recall']:.4f}: {'yes' if s['recall'] >= d['recall'] else 'NO'}",
            f"precision {s['precision']:.4f} >= {d['precision']:.4f}: "
            + ("yes" if s["precision"] >= d["precision"] else "NO"),
        ]
        print("goal: " + "; ".join(checks))


if __name__ == "__main__":
    main()
