"""Human-readable evidence of what dedup did: a few clusters side by side, for eyeballing."""

from __future__ import annotations

from collections.abc import Sequence


def cluster_examples(examples: Sequence[tuple[int, Sequence[tuple[str, str]]]], n_chars: int = 240) -> str:
    """Markdown of the largest clusters: `examples` holds (cluster size, [(id, text) of the kept
    document, then some of its duplicates]) per cluster, largest first."""
    if not examples:
        return "### Near-duplicate clusters\n\nNo near-duplicates found.\n"
    out = ["### Near-duplicate clusters (largest first; kept document first)", ""]
    for size, docs in examples:
        kept = docs[0][0]
        out += [f"**cluster of {size}**, kept `{kept}`", "", "| document | text (start) |", "|---|---|"]
        for i, (doc_id, text) in enumerate(docs):
            snippet = " ".join(text.split())[:n_chars].replace("|", "\\|")
            out.append(f"| `{doc_id}`{' (kept)' if i == 0 else ''} | {snippet} |")
        out.append("")
    return "\n".join(out)
