"""Human-readable evidence of what dedup did: a few clusters side by side, for eyeballing."""

from __future__ import annotations

from collections.abc import Sequence


def cluster_examples(
    examples: Sequence[tuple[int, Sequence[tuple[str, str, str]]]], rule: str = "", n_chars: int = 240
) -> str:
    """Markdown of the largest clusters: `examples` holds (cluster size, [(id, text, why) of the kept
    document, then some of its duplicates]) per cluster, largest first; `why` is what the keep `rule`
    (a sentence) compared, shown beside each document."""
    if not examples:
        return "### Near-duplicate clusters\n\nNo near-duplicates found.\n"
    out = ["### Near-duplicate clusters (largest first; kept document first)", ""]
    if rule:
        out += [f"Of each cluster {rule}.", ""]
    for size, docs in examples:
        kept, why = docs[0][0], docs[0][2]
        out += [
            f"**cluster of {size}**, kept `{kept}` ({why})",
            "",
            "| document | keep rule saw | text (start) |",
            "|---|---|---|",
        ]
        for i, (doc_id, text, note) in enumerate(docs):
            snippet = " ".join(text.split())[:n_chars].replace("|", "\\|")
            out.append(f"| `{doc_id}`{' (kept)' if i == 0 else ''} | {note} | {snippet} |")
        out.append("")
    return "\n".join(out)
