"""Near-duplicate detection: selene's dedup stage next to datasketch used the textbook way.

    python benchmarks/dedup.py [--bases N] [--threshold T]

Corpus: the planted near-duplicate corpus of the tests (`tests/dedup_corpus.py`): real prose from the
Python reference, each base document followed by variants at controlled word-5-gram Jaccard levels,
with brute-force exact Jaccard as ground truth. Both sides: word 5-grams, 128 permutations, the same
bands × rows, 1 process (= 1 core).

- selene: `run_dedup` end to end (read Parquet, shingles, signatures, band files, verified pairs,
  union-find, output shards and removed.parquet), and its signature step alone.
- textbook: `MinHash.update` per shingle, then an in-memory `MinHashLSH` (same bands × rows):
  insert every document, query every document.
Recall: share of pairs with exact J >= threshold + 0.05 that end up in the same cluster (connected
components of the flagged pairs, for both). Precision: share of flagged pairs with exact
J >= threshold - 0.1 (selene: each duplicate and the document it duplicates; datasketch: query hits).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from datasketch import MinHash, MinHashLSH

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.config import DedupConfig  # noqa: E402
from selene.dedup import minhash, shingle  # noqa: E402
from selene.dedup.stage import bands_rows, run_dedup  # noqa: E402
from selene.io import dataset  # noqa: E402
from tests.corpus import write_dataset  # noqa: E402
from tests.dedup_corpus import TARGETS, pairs_at_least, planted_corpus, reference_words  # noqa: E402


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def selene_side(docs: list[tuple[str, str]], tmp: Path, cfg: DedupConfig) -> tuple[float, float, set[tuple[str, str]], dict[str, str]]:
    inp = write_dataset(str(tmp / "in"), docs, shard_docs=1000)
    perms = minhash.Permutations.from_seed(cfg.num_perm, cfg.seed)
    minhash.signatures([shingle.shingle_hashes(text, cfg.ngram, cfg.shingle) for _, text in docs[:50]], perms)
    t = time.perf_counter()
    minhash.signatures([shingle.shingle_hashes(text, cfg.ngram, cfg.shingle) for _, text in docs], perms)
    t_sig = time.perf_counter() - t
    t = time.perf_counter()
    res = run_dedup(inp, str(tmp / "out"), cfg)
    t_all = time.perf_counter() - t
    cluster = {d["id"]: d["id"] for d in dataset.iter_documents(res.out)}
    flagged = set()
    for r in dataset.read_removed(res.out).to_pylist():
        kept = r["reason"][len("dup_of:") :]
        cluster[r["id"]] = kept
        flagged.add((r["id"], kept))
    return t_sig, t_all, flagged, cluster


def textbook_side(docs: list[tuple[str, str]], cfg: DedupConfig, bands: int, rows: int) -> tuple[float, float, set[tuple[str, str]]]:
    t = time.perf_counter()
    sigs = {}
    for doc_id, text in docs:
        words = reference_words(text)
        m = MinHash(num_perm=cfg.num_perm, seed=cfg.seed)
        for i in range(max(1, len(words) - cfg.ngram + 1)):
            m.update(" ".join(words[i : i + cfg.ngram]).encode("utf-8"))
        sigs[doc_id] = m
    t_sig = time.perf_counter() - t
    lsh = MinHashLSH(num_perm=cfg.num_perm, params=(bands, rows))
    for doc_id, m in sigs.items():
        lsh.insert(doc_id, m)
    flagged = set()
    for doc_id, m in sigs.items():
        for other in lsh.query(m):
            if other != doc_id and m.jaccard(sigs[other]) >= cfg.threshold:
                flagged.add((doc_id, other))
    return t_sig, time.perf_counter() - t, flagged


def clusters(ids: list[str], pairs: set[tuple[str, str]]) -> dict[str, str]:
    """Connected components of the flagged pairs (what a dedup built on them would remove)."""
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb, key=ids.index)] = min(ra, rb, key=ids.index)
    return {i: find(i) for i in ids}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bases", type=int, default=200, help="base documents (the reference has ~180)")
    ap.add_argument("--copies", type=int, default=2, help="variants per Jaccard level and base (11 levels)")
    ap.add_argument("--threshold", type=float, default=0.8)
    args = ap.parse_args()
    corpus = planted_corpus(n_base=args.bases, targets=TARGETS * args.copies, seed=7)
    docs = corpus.docs
    ids = [d for d, _ in docs]
    mb = sum(len(t.encode()) for _, t in docs) / 1e6
    cfg = DedupConfig(threshold=args.threshold)
    bands, rows = bands_rows(cfg)
    print(f"corpus: {len(docs)} documents, {mb:.1f} MB; threshold {cfg.threshold}, {bands} bands × {rows} rows")

    tmp = Path(tempfile.mkdtemp(prefix="selene-bench-dedup-"))
    try:
        s_sig, s_all, s_flag, cluster = selene_side(docs, tmp, cfg)
        s_rss = peak_mib()
        t_sig, t_all, t_flag = textbook_side(docs, cfg, bands, rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    truth = pairs_at_least(docs, cfg.threshold - 0.1)
    must = [(ids[i], ids[j]) for (i, j), jac in truth.items() if jac >= cfg.threshold + 0.05]
    good = {(ids[i], ids[j]) for i, j in truth} | {(ids[j], ids[i]) for i, j in truth}
    s_recall = sum(cluster[a] == cluster[b] for a, b in must) / len(must)
    t_cluster = clusters(ids, t_flag)
    t_recall = sum(t_cluster[a] == t_cluster[b] for a, b in must) / len(must)
    s_prec = sum(p in good for p in s_flag) / max(len(s_flag), 1)
    t_prec = sum(p in good for p in t_flag) / max(len(t_flag), 1)

    print(f"\n{'1 core':<34}{'docs/s':>9}{'MB/s':>8}{'recall':>8}{'precision':>10}")
    print(f"{'selene signatures':<34}{len(docs) / s_sig:>9.0f}{mb / s_sig:>8.2f}")
    print(f"{'datasketch signatures (update)':<34}{len(docs) / t_sig:>9.0f}{mb / t_sig:>8.2f}")
    print(f"{'selene end to end (run_dedup)':<34}{len(docs) / s_all:>9.0f}{mb / s_all:>8.2f}{s_recall:>8.3f}{s_prec:>10.3f}")
    print(f"{'datasketch end to end (LSH)':<34}{len(docs) / t_all:>9.0f}{mb / t_all:>8.2f}{t_recall:>8.3f}{t_prec:>10.3f}")
    print(f"\nspeed-up: signatures {t_sig / s_sig:.1f}x, end to end {t_all / s_all:.1f}x (goal >= 20x at equal or better recall)")
    print(f"pairs with J >= {cfg.threshold + 0.05:.2f}: {len(must)}; peak RSS after selene's run: {s_rss:.0f} MiB")


if __name__ == "__main__":
    main()
