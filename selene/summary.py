"""What a data-stage command prints after it ran: documents per source in, kept and removed, and
the removals by reason, read from the manifest only. A stage adds its own lines through `extra`
(the blend's mix) and names its files through `files` (token data)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from selene.io.dataset import StageResult
from selene.manifest import StageManifest


def reason_totals(manifest: StageManifest) -> list[tuple[str, int]]:
    """Removal reasons over all sources, most frequent first."""
    total: Counter[str] = Counter()
    for st in manifest.stats.per_source.values():
        total.update(st.removed)
    return sorted(total.items(), key=lambda x: (-x[1], x[0]))


def documents(
    result: StageResult[Any],
    console: Console,
    extra: Callable[[], None] | None = None,
    files: str | None = None,
) -> None:
    """Every data stage's table; the stage is named by its manifest. `extra` prints the stage's own
    lines after the reasons; `files` names what it wrote (default: its shards and removed.parquet)."""
    m = result.manifest
    if m is None:
        return
    out = result.out
    st = m.stats
    table = Table(title=f"{m.stage} → {out}" + (" (complete already: reused)" if result.skipped else ""))
    # A stage that splits documents (decontaminate: the clean pieces kept) writes a removed.parquet row
    # for each split document as well as each dropped one; the table shows both, so that its numbers
    # add up to the rows of removed.parquet beside it.
    splits = st.documents_split is not None
    cols = ("source", "in", "kept", "split", "dropped", "removed.parquet rows", "kept %") if splits else (
        "source", "in", "kept", "removed", "kept %")
    for col in cols:
        table.add_column(col, justify="left" if col == "source" else "right", overflow="fold")
    for src, s in st.per_source.items():
        kept_share = f"{s.kept / max(s.documents_in, 1):.0%}"
        if splits:
            split, dropped = s.split or 0, s.documents_in - s.kept
            table.add_row(src, str(s.documents_in), str(s.kept), str(split), str(dropped), str(split + dropped), kept_share)
        else:
            table.add_row(src, str(s.documents_in), str(s.kept), str(sum(s.removed.values())), kept_share)
    n_in = st.documents_in
    kept = sum(s.kept for s in st.per_source.values())
    if splits:
        split = st.documents_split or 0
        table.add_row("[b]total", f"[b]{n_in}", f"[b]{kept}", f"[b]{split}", f"[b]{st.documents_removed}",
                      f"[b]{split + st.documents_removed}", f"[b]{kept / max(n_in, 1):.0%}")
    else:
        table.add_row("[b]total", f"[b]{n_in}", f"[b]{kept}", f"[b]{st.documents_removed}", f"[b]{kept / max(n_in, 1):.0%}")
    console.print(table)
    if st.tokens is not None:
        console.print(f"{st.tokens:,} tokens in {st.sequences or 0:,} sequences (EOD-terminated documents)")
    if st.documents_split is not None:
        console.print(f"{st.documents_split} document(s) split into pieces: {st.documents_out} rows out")
    totals = reason_totals(m)
    if totals:
        reasons = Table(title="removed, by reason (details in removed.parquet)")
        reasons.add_column("reason", overflow="fold")
        reasons.add_column("documents", justify="right")
        for reason, n in totals:
            reasons.add_row(reason, str(n))
        console.print(reasons)
    if extra is not None:
        extra()
    files = files or f"{len(m.shards)} shard(s) and removed.parquet"
    # soft wrap: a path is never split by a newline of ours (a terminal wraps it, a log keeps it whole)
    console.print(f"{files} in [b]{out}[/b]; counts in {out}/manifest.json", soft_wrap=True)
