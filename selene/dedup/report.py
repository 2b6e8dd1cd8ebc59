"""Human-readable evidence of what dedup did: a few clusters side by side, for eyeballing."""

from __future__ import annotations

import re
from collections import defaultdict

import pyarrow as pa
import pyarrow.compute as pc

from selene.io import dataset

_CLUSTER = re.compile(r"cluster=(\d+) size=(\d+)")


def cluster_examples(inp: str, removed: pa.Table, n_clusters: int = 5, n_chars: int = 240) -> str:
    """Markdown: the largest clusters, the kept document first, then its duplicates."""
    dup = removed.filter(pc.starts_with(removed.column("reason"), "dup_of:")).to_pylist()
    if not dup:
        return "### Near-duplicate clusters\n\nNo near-duplicates found.\n"
    members: dict[str, list[str]] = defaultdict(list)
    size: dict[str, int] = {}
    for r in dup:
        kept = r["reason"][len("dup_of:") :]
        members[kept].append(r["id"])
        m = _CLUSTER.search(r["detail"])
        size[kept] = int(m.group(2)) if m else len(members[kept]) + 1
    top = sorted(members, key=lambda k: (-size[k], k))[:n_clusters]
    wanted = set(top) | {i for k in top for i in members[k][:3]}
    texts = _texts_by_id(inp, wanted)
    out = ["### Near-duplicate clusters (largest first; kept document first)", ""]
    for k in top:
        out.append(f"**cluster of {size[k]}**, kept `{k}`")
        out.append("")
        out.append("| document | text (start) |")
        out.append("|---|---|")
        for i in [k, *members[k][:3]]:
            snippet = " ".join(texts.get(i, "").split())[:n_chars].replace("|", "\\|")
            out.append(f"| `{i}`{' (kept)' if i == k else ''} | {snippet} |")
        out.append("")
    return "\n".join(out)


def _texts_by_id(inp: str, ids: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    wanted = pa.array(sorted(ids))
    for batch in dataset.iter_batches(inp, columns=["id", "text"], batch_size=4096):
        sel = pc.is_in(batch.column(0), value_set=wanted)
        for row in batch.filter(sel).to_pylist():
            found[row["id"]] = row["text"]
        if len(found) == len(ids):
            break
    return found
