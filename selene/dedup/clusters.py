"""The cluster step: connected components of the verified pairs (`components`: per-file union-find,
then large-star / small-star steps, each task holding one part of the documents; with ``--against``,
the earlier outputs' stored pairs join them as in the runs that made them), then per group of
components which copy is kept and which documents are its duplicates (`assign`); each group's
duplicates written sorted by (shard, row) for the write step, and its statistics, merged in the main
process without any array over documents (`cluster` runs it all).

Components come from `components` split by their smallest document's part; a group task holds its
components' documents only. Everything a group decides depends on its components alone, so the output
is the same for any number of groups.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from selene.dedup import batches, components, stored
from selene.dedup.batches import GroupPlan, batch_texts
from selene.dedup.config import DedupConfig
from selene.dedup.incremental import earlier_links
from selene.dedup.manifest import ClusterStats, SimilarityStats
from selene.dedup.work import EdgeFile, Reader, Work, exact_jaccard, similarity
from selene.executor.mappers import Mapper
from selene.io import fs, steps

# a group's duplicates, sorted by (shard, row): where each is, where the document it duplicates is,
# its cluster (the kept document's global index) and size, and its similarity to the kept document
DUP_DTYPE = np.dtype(
    [
        ("shard", "<i8"),
        ("row", "<i8"),
        ("kept_shard", "<i8"),
        ("kept_row", "<i8"),
        ("cluster", "<i8"),
        ("size", "<i8"),
        ("j", "<f8"),
    ]
)
EXAMPLES = 5  # clusters shown in clusters.md
HIST_BINS = 20  # the manifest's histogram of removed-vs-kept similarity: bins of 0.05, plus 1.0 alone


def cluster(
    mapper: Mapper,
    work: Work,
    edges: Sequence[EdgeFile],
    n_docs: int,
    cfg: DedupConfig,
    priors: Sequence[stored.Prior] = (),
) -> Clusters:
    """Components of the verified pairs (`components`: large-star / small-star steps over files), then
    `cluster_group` per group of components, in tasks; merged into cluster statistics, the group files
    holding each shard's duplicates, and the largest clusters (for clusters.md).
    The main process holds file names and per-group counts only."""
    pairs = sum(e.pairs for e in edges)
    earlier = mapper(
        "dedup-earlier-links",
        earlier_links,
        [
            (work, i, b, p, prior.cross_to(priors))
            for i, (prior, (_, _, parts)) in enumerate(zip(priors, work.indexes, strict=True))
            for b in range(work.sets * work.bands)
            for p in range(parts)
        ],
    )
    linked = pairs + sum(e.pairs for e in earlier)
    n_parts = components.parts_for(linked, mapper.budget)
    graph = components.Graph(fs.join(work.root, "components"), n_parts, n_docs)
    stars = components.components(mapper, graph, [e.path for e in [*edges, *earlier] if e.pairs])
    budget = mapper.budget.task_memory // 4  # a cluster task's texts and shingle sets
    plans = mapper(
        "dedup-cluster-plan", batches.plan_group, [(work, g, s, budget) for g, s in enumerate(stars) if s]
    )
    if cfg.verify != "none":  # the linked documents' texts, read once and grouped by batch
        plans_of: dict[int, list[tuple[int, str]]] = {}
        for plan in plans:
            for k in plan.shards:
                plans_of.setdefault(k, []).append((plan.group, plan.plan))
        mapper("dedup-cluster-texts", batches.route_texts, [(work, k, plans_of[k]) for k in sorted(plans_of)])
    groups = mapper("dedup-clusters", cluster_group, [(work, plan, cfg, budget) for plan in plans])
    return merge(groups, pairs, n_docs, cfg)


def assign(
    work: Work, comp: np.ndarray, linked: np.ndarray, cfg: DedupConfig, reader: Reader | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which document each linked document (`linked`: in a component of two or more; `comp`: its
    component) is a copy of.

    Per component, in the order of `keep` (corpus order; or the longest, the highest-priority source or
    the highest score first, ties by corpus order):
    the first undecided member is kept, and every undecided member whose similarity to it is at least
    the threshold is its duplicate; the members left repeat this among themselves until none is left.
    All components advance together, one vectorised round at a time (a round compares each undecided
    member with its component's current kept document), so the cost is the linked documents times
    the kept documents per component, usually one or two rounds. The similarity is `verify`'s, and
    the check is at the threshold itself, with no margin. `verify: signature` estimates it from the
    signatures, and where the estimate is within `exact_within` of the threshold (where it cannot
    tell one side from the other: one standard deviation is 0.035 at 0.8 with 128 permutations)
    takes exact Jaccard instead, from the two texts: outside that band an unbiased estimate errs
    with probability < 0.2%, and real corpora hold many pairs just under the threshold (licences,
    templates), so deciding them on the estimate alone would remove some below it, linking on
    looser pairs (`DedupConfig.verify_margin`) or not. `verify: exact` is exact throughout;
    `verify: none` removes every member for its component's first document (the similarity is
    still estimated, for the manifest).

    Returns (members, keeper, similarity, exact) over the linked documents, in component-then-`keep`
    order: the global index of each, of the document kept for it (itself when kept), the similarity to
    it (0 for kept ones) and whether exact Jaccard decided. Depends on the components only, never on
    the order the edges came in."""
    reader = reader or Reader(work)
    old = linked < work.protected  # earlier outputs' documents: first, and never removed
    rank = np.zeros(linked.size, dtype=np.float64)
    if cfg.keep in ("longest", "priority", "score") and (~old).any():
        rank[~old] = (
            -reader.rows("len", linked[~old]) if cfg.keep == "longest" else reader.rows("rank", linked[~old])
        )
    order = np.lexsort((linked, rank, ~old, comp))
    members, comp = linked[order], comp[order]
    keeper = members.copy()
    sim = np.zeros(members.size, dtype=np.float64)
    exact = np.zeros(members.size, dtype=bool)
    todo = np.arange(members.size)
    while todo.size:
        c = comp[todo]
        first = np.concatenate([[True], c[1:] != c[:-1]])
        head = todo[np.flatnonzero(first)][np.cumsum(first) - 1]  # each one's kept document (position)
        rest, head = todo[~first], head[~first]
        # earlier outputs' documents are never removed: they are kept in turn, never compared (an
        # incremental run would otherwise check every old pair its old links join, reading old texts)
        live = np.flatnonzero(members[rest] >= work.protected)
        j = np.zeros(rest.size, dtype=np.float64)
        j[live] = similarity(work, members[rest[live]], members[head[live]], cfg, reader)
        if cfg.verify == "signature":
            low, high = cfg.exact_band()
            near = live[(j[live] >= low) & (j[live] < high)]
            if near.size:  # the estimate cannot decide: exact Jaccard does (texts read again)
                j[near] = exact_jaccard(work, members[rest[near]], members[head[near]], cfg, reader)
                exact[rest[near]] = True
        close = np.zeros(rest.size, dtype=bool)
        close[live] = True if cfg.verify == "none" else j[live] >= cfg.threshold
        keeper[rest[close]], sim[rest[close]] = members[head[close]], j[close]
        todo = rest[~close]
    return members, keeper, sim, exact


def assign_in_batches(
    work: Work, plan: GroupPlan, cfg: DedupConfig, budget: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """`assign` over the batches of whole components of a cluster group (`batches.plan_group`), in
    component order: each component's decisions depend on it alone, so the result is `assign`'s over
    all of them at once, in the same order. A batch's texts are its routed ones (`batches.batch_texts`),
    held by its own `Reader` of `budget` bytes: a document is read and shingled once per batch (once
    per cluster, however many rounds compare it). A component larger than a batch reads its texts
    from the shards, in pieces of the `Reader`'s size. Also returns the number of components."""
    rec = fs.load_npy(plan.plan)
    rec = rec[np.lexsort((rec["gidx"], rec["comp"]))]
    comp, linked, batch = rec["comp"], rec["gidx"], rec["batch"]
    del rec
    if not linked.size:
        return (*assign(work, comp, linked, cfg), 0)
    new_comp = np.concatenate([[True], comp[1:] != comp[:-1]])
    # a batch: consecutive components of one batch number; an unrouted component (-1) alone
    cut = new_comp & np.concatenate([[True], (batch[1:] != batch[:-1]) | (batch[1:] < 0)])
    bounds = [*np.flatnonzero(cut).tolist(), linked.size]
    parts = []
    for lo, hi in itertools.pairwise(bounds):
        b = int(batch[lo])
        if b >= 0 and cfg.verify != "none":
            reader = Reader(work, budget=budget, texts=batch_texts(work, plan.group, b, plan.shards))
        else:
            reader = Reader(work, np.sort(linked[lo:hi]), budget)
        parts.append(assign(work, comp[lo:hi], linked[lo:hi], cfg, reader))
    members, keeper, sim, exact = (np.concatenate(x) for x in zip(*parts, strict=True))
    return members, keeper, sim, exact, int(np.count_nonzero(new_comp))


class GroupClusters(steps.StepResult):
    """What a cluster group decided (`cluster_group`), for `merge`: its duplicates' files (None: it
    has none), the shards they are in, and the counts the manifest adds up."""

    dups: str | None  # DUP_DTYPE, by shard and row
    j: str | None  # the duplicates' similarities, sorted
    shards: list[int]
    clusters: int
    duplicates: int
    sizes: dict[int, int]  # cluster size -> clusters
    linked: int
    kept_by_check: int
    exact_checks: int
    j_sum: float
    j_bins: list[int]  # `_bins` of the similarities
    below: int  # duplicates below the threshold
    examples: list[tuple[int, list[int]]]  # its largest clusters: (size, [kept, up to three duplicates])


def cluster_group(work: Work, plan: GroupPlan, cfg: DedupConfig, budget: int = 0) -> GroupClusters:
    """A group of components (`plan`: `batches.plan_group`'s result): `assign` decides each document;
    the duplicates go to ``dups/gNNNNN.npy`` (DUP_DTYPE, by shard and row) and their similarities, sorted,
    to ``dups/jNNNNN.npy``. Returns the group's statistics, the shards its duplicates are in and its
    largest clusters (`merge` adds groups up). `budget`: bytes of texts and shingle sets the exact
    checks may keep (`work.Reader`)."""
    g = plan.group
    members, keeper, sim, exact, n_components = assign_in_batches(work, plan, cfg, budget)
    is_dup = keeper != members
    order = np.argsort(members[is_dup], kind="stable")
    dup, kept_of_dup, j_dup = members[is_dup][order], keeper[is_dup][order], sim[is_dup][order]
    # a cluster: its kept document and its duplicates
    heads, n_dups = np.unique(kept_of_dup, return_counts=True)
    head_sizes = n_dups + 1
    s_dup, r_dup = work.locate(dup)
    s_kept, r_kept = work.locate(kept_of_dup)
    dups, js = fs.join(work.root, "dups", f"g{g:05d}.npy"), fs.join(work.root, "dups", f"j{g:05d}.npy")
    if dup.size:
        rec = np.empty(dup.size, dtype=DUP_DTYPE)
        rec["shard"], rec["row"], rec["kept_shard"], rec["kept_row"] = s_dup, r_dup, s_kept, r_kept
        rec["cluster"], rec["size"] = kept_of_dup, head_sizes[np.searchsorted(heads, kept_of_dup)]
        rec["j"] = j_dup
        fs.save_npy(dups, rec)
        fs.save_npy(js, np.sort(j_dup))
    top = np.lexsort((heads, -head_sizes))[:EXAMPLES]  # the largest clusters, ties by kept document
    return GroupClusters(
        dups=dups if dup.size else None,
        j=js if dup.size else None,
        shards=np.unique(s_dup).tolist(),
        clusters=int(heads.size),
        duplicates=int(dup.size),
        sizes=dict(Counter(head_sizes.tolist())),
        linked=int(members.size),
        kept_by_check=int(np.count_nonzero(~is_dup)) - n_components,
        exact_checks=int(np.count_nonzero(exact)),
        j_sum=math.fsum(j_dup.tolist()),
        j_bins=_bins(j_dup).tolist(),
        below=int(np.count_nonzero(j_dup < cfg.threshold)),
        examples=[
            (int(head_sizes[t]), [int(heads[t]), *[int(m) for m in dup[kept_of_dup == heads[t]][:3]]])
            for t in top.tolist()
        ],
    )


def _bins(j: np.ndarray) -> np.ndarray:
    """Similarities per bin of 1/HIST_BINS, with 1.0 alone in the last."""
    return np.bincount(
        np.minimum(np.floor(j * HIST_BINS + 1e-9).astype(np.int64), HIST_BINS), minlength=HIST_BINS + 1
    )


def dups_of_shard(files: Sequence[str], k: int) -> np.ndarray | None:
    """Shard k's duplicates (DUP_DTYPE, sorted by row) from the group files holding some."""
    parts = []
    for path in files:
        rec = fs.load_npy(path, mmap=True)
        shard = rec["shard"]
        lo, hi = np.searchsorted(shard, k, side="left"), np.searchsorted(shard, k, side="right")
        parts.append(np.array(rec[lo:hi]))
    if not parts:
        return None
    out = np.concatenate(parts)
    return out[np.argsort(out["row"], kind="stable")]


@dataclass(frozen=True)
class Clusters:
    """The cluster step's result: the cluster statistics (the manifest's, less `without_score`), the
    group files holding each shard's duplicates, and the largest clusters (for clusters.md)."""

    stats: ClusterStats
    dup_files: dict[int, list[str]]  # shard -> the group files with some of its duplicates
    examples: list[tuple[int, list[int]]]  # (size, [kept, up to three duplicates]), largest first


def merge(groups: Sequence[GroupClusters], pairs: int, n_docs: int, cfg: DedupConfig) -> Clusters:
    """The groups' results as one: cluster statistics, each shard's group files, the largest clusters."""
    sizes: Counter[int] = Counter()
    for grp in groups:
        sizes.update(grp.sizes)
    files: dict[int, list[str]] = {}
    for grp in groups:
        for k in grp.shards:
            if grp.dups is not None:  # a group with duplicates in shard k has their file
                files.setdefault(k, []).append(grp.dups)
    examples = sorted((ex for grp in groups for ex in grp.examples), key=lambda e: (-e[0], e[1][0]))
    clusters = sum(grp.clusters for grp in groups)
    duplicates = sum(grp.duplicates for grp in groups)
    stats = ClusterStats(
        pairs_verified=pairs,
        clusters=clusters,
        documents_in_clusters=clusters + duplicates,
        duplicates=duplicates,
        cluster_sizes={str(s): sizes[s] for s in sorted(sizes)},
        largest_cluster=max(sizes) if sizes else int(n_docs > 0),
        documents_linked=sum(grp.linked for grp in groups),
        kept_by_check=sum(grp.kept_by_check for grp in groups),
        exact_checks=sum(grp.exact_checks for grp in groups),
        removed_similarity=similarity_summary(groups, cfg),
    )
    return Clusters(stats=stats, dup_files=files, examples=examples[:EXAMPLES])


def similarity_summary(groups: Sequence[GroupClusters], cfg: DedupConfig) -> SimilarityStats:
    """The similarity of each removed document to the document kept for it (as decided: estimated, or
    exact where `assign` took it), summarised for audit:
    quantiles, a histogram (lower bin edge → documents; "1.00" is exactly 1) and how many are below
    the threshold (none unless `verify: none`). Quantiles are numpy's (linear), of order statistics
    selected from the groups' sorted files, so no process holds the similarities of every removal."""
    measure = {"exact": "exact", "signature": "estimate, exact near the threshold"}.get(
        cfg.verify, "estimate"
    )
    n = sum(grp.duplicates for grp in groups)
    if not n:
        return SimilarityStats(measure=measure, count=0, histogram={}, below_threshold=0)
    sorted_j = [fs.load_npy(grp.j, mmap=True) for grp in groups if grp.j]
    bins = np.sum([grp.j_bins for grp in groups], axis=0)
    p1, p5, p50 = (_quantile(sorted_j, n, q) for q in (0.01, 0.05, 0.5))
    return SimilarityStats(
        measure=measure,
        count=n,
        min=float(min(float(j[0]) for j in sorted_j)),
        p1=p1,
        p5=p5,
        p50=p50,
        mean=math.fsum(grp.j_sum for grp in groups) / n,
        histogram={f"{b / HIST_BINS:.2f}": int(c) for b, c in enumerate(bins.tolist()) if c},
        below_threshold=sum(grp.below for grp in groups),
    )


def _kth(sorted_j: Sequence[np.ndarray], k: int) -> float:
    """The k-th smallest (from 0) of the values of several sorted arrays of non-negative floats:
    bisection over the bit patterns (ordered as the values are), counting by binary search."""
    lo, hi = 0, max(int(np.float64(j[-1]).view(np.int64)) for j in sorted_j)
    while lo < hi:
        mid = (lo + hi) // 2
        x = np.int64(mid).view(np.float64)
        if sum(int(np.searchsorted(j, x, side="right")) for j in sorted_j) > k:
            hi = mid
        else:
            lo = mid + 1
    return float(np.int64(lo).view(np.float64))


def _quantile(sorted_j: Sequence[np.ndarray], n: int, q: float) -> float:
    """`np.quantile(all values, q)` (method "linear", computed as numpy does) from order statistics."""
    at = np.float64(n - 1) * q
    below = int(np.floor(at))
    above = min(below + 1, n - 1)
    gamma = at - np.float64(below)
    a = np.float64(_kth(sorted_j, below))
    b = np.float64(_kth(sorted_j, above)) if above != below else a
    diff = b - a
    return float(b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma)
