"""What a stage shows, as plain data: built once by the stage's `view` function (its package's
``view.py``), from its result or, for the run report, from its directory alone; rendered three ways,
each written once: the terminal after a command (`selene.summary.show`), the Prefect dashboard's
artifacts (`selene.flows.stage.publish`) and the stage's section of ``<run_dir>/report.md``
(`selene.report`). Nothing here imports rich or Prefect.

A block goes everywhere unless its `to` names where: the terminal keeps its one-line totals, the
dashboard its examples, the report its prose; a table shared by all three is built once. Within one
target, blocks show in the order of the view.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from selene.io.results import StageResult
from selene.manifest import EditStats, Repeat, StageManifest

Target = Literal["terminal", "prefect", "report"]
EVERYWHERE: frozenset[Target] = frozenset(("terminal", "prefect", "report"))
TERMINAL: frozenset[Target] = frozenset(("terminal",))
PREFECT: frozenset[Target] = frozenset(("prefect",))
REPORT: frozenset[Target] = frozenset(("report",))


@dataclass(frozen=True)
class Cell:
    """A value with its own text: the dashboard's table keeps the value (a number sorts as one), the
    terminal and report.md show the text."""

    value: Any
    text: str


def value(cell: Any) -> Any:
    return cell.value if isinstance(cell, Cell) else cell


def text(cell: Any) -> str:
    return cell.text if isinstance(cell, Cell) else str(cell)


@dataclass(frozen=True)
class Column:
    name: str
    right: bool = True
    """Right-aligned (numbers): in the terminal and in report.md's separator row."""
    fold: bool = False
    """Terminal: a cell too long for its column wraps onto more lines rather than being cut short."""


def columns(*names: str, fold: bool = False) -> tuple[Column, ...]:
    """The usual table: the first column (a name) left, the others (numbers) right."""
    return tuple(Column(n, right=i > 0, fold=fold) for i, n in enumerate(names))


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: Sequence[Sequence[Any]]
    """Per row, a cell per column: a plain value, or a `Cell` where the text is not ``str(value)``."""
    key: str = ""
    """The dashboard artifact's key (a table without one is not published)."""
    title: str = ""
    """Terminal: the title above the table."""
    description: str = ""
    """Dashboard: the artifact's description."""
    aligned: bool = True
    """report.md: the separator row marks the right-aligned columns (``---:``)."""
    to: frozenset[Target] = EVERYWHERE


@dataclass(frozen=True)
class Text:
    """A paragraph: a line in the terminal (rich markup unless `markup` is False), a paragraph of
    report.md."""

    text: str
    to: frozenset[Target] = EVERYWHERE
    markup: bool | None = None
    highlight: bool | None = None
    soft_wrap: bool = False
    """Terminal: printed whole, the terminal wraps it (a path is never split by a newline of ours)."""


@dataclass(frozen=True)
class Markdown:
    """Markdown: a dashboard artifact (under `key`) and lines of report.md; never the terminal's."""

    markdown: str
    key: str = ""
    description: str = ""
    to: frozenset[Target] = PREFECT | REPORT


Block = Table | Text | Markdown


@dataclass(frozen=True)
class View:
    title: str = ""
    """The stage's section heading in report.md ("": no section)."""
    blocks: Sequence[Block] = field(default_factory=tuple)

    def to(self, target: Target) -> list[Block]:
        """The blocks shown in `target`, in order."""
        return [b for b in self.blocks if target in b.to]


def markdown_escaped(text: str) -> str:
    """`text` shown as it is where markdown is rendered (a table cell of the dashboard or report.md)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


def svg_image(svg: str | bytes, alt: str) -> str:
    """Markdown that shows an SVG inline (artifacts cannot link to files on the machine that ran)."""
    data = svg.encode() if isinstance(svg, str) else svg
    return f"![{alt}](data:image/svg+xml;base64,{base64.b64encode(data).decode()})"


def markdown_table(table: Table) -> list[str]:
    """The lines of `table` as a markdown table."""
    names = [c.name for c in table.columns]
    marks = "".join("---:|" if c.right and table.aligned else "---|" for c in table.columns)
    return ["| " + " | ".join(names) + " |", "|" + marks, *("| " + " | ".join(text(v) for v in r) + " |" for r in table.rows)]


# ------------------------------------------------------------------- every data stage's documents


def reason_totals(manifest: StageManifest) -> list[tuple[str, int]]:
    """Removal reasons over all sources, most frequent first."""
    total: Counter[str] = Counter()
    for st in manifest.stats.per_source.values():
        total.update(st.removed)
    return sorted(total.items(), key=lambda x: (-x[1], x[0]))


def documents(result: StageResult[Any], extra: Sequence[Block] = (), files: str | None = None) -> list[Block]:
    """What every data stage prints after it ran: documents per source in, kept and removed, and the
    removals by reason, read from the manifest only; the stage is named by its manifest. `extra` are
    the stage's own blocks, after the reasons; `files` names what it wrote (default: its shards and
    removed.parquet)."""
    m = result.manifest
    if m is None:
        return []
    out = result.out
    st = m.stats
    title = f"{m.stage} → {out}" + (" (complete already: reused)" if result.skipped else "")
    # A stage that splits documents (decontaminate: the clean pieces kept) writes a removed.parquet row
    # for each split document as well as each dropped one; the table shows both, so that its numbers
    # add up to the rows of removed.parquet beside it.
    splits = st.documents_split is not None
    names = ("source", "in", "kept", "split", "dropped", "removed.parquet rows", "kept %") if splits else (
        "source", "in", "kept", "removed", "kept %")
    rows: list[tuple[Any, ...]] = []
    for src, s in st.per_source.items():
        kept_share = f"{s.kept / max(s.documents_in, 1):.0%}"
        if splits:
            split, dropped = s.split or 0, s.documents_in - s.kept
            rows.append((src, s.documents_in, s.kept, split, dropped, split + dropped, kept_share))
        else:
            rows.append((src, s.documents_in, s.kept, sum(s.removed.values()), kept_share))
    n_in = st.documents_in
    kept = sum(s.kept for s in st.per_source.values())
    if splits:
        split = st.documents_split or 0
        total: tuple[Any, ...] = ("total", n_in, kept, split, st.documents_removed, split + st.documents_removed,
                                  f"{kept / max(n_in, 1):.0%}")
    else:
        total = ("total", n_in, kept, st.documents_removed, f"{kept / max(n_in, 1):.0%}")
    rows.append(tuple(f"[b]{v}" for v in total))
    blocks: list[Block] = [Table(columns(*names, fold=True), rows, title=title, to=TERMINAL)]
    if st.tokens is not None:
        blocks.append(Text(f"{st.tokens:,} tokens in {st.sequences or 0:,} sequences (EOD-terminated documents)", TERMINAL))
    if st.documents_split is not None:
        blocks.append(Text(f"{st.documents_split} document(s) split into pieces: {st.documents_out} rows out", TERMINAL))
    totals = reason_totals(m)
    if totals:
        blocks.append(Table((Column("reason", right=False, fold=True), Column("documents")), totals,
                            title="removed, by reason (details in removed.parquet)", to=TERMINAL))
    blocks += extra
    files = files or f"{len(m.shards)} shard(s) and removed.parquet"
    blocks.append(Text(f"{files} in [b]{out}[/b]; counts in {out}/manifest.json", TERMINAL, soft_wrap=True))
    return blocks


# ---------------------------------------------------------- stages that cut text (spans, substrings)


def edits(stats: EditStats, unit: str, key: str) -> list[Block]:
    """What a cutting stage took out: per source the documents edited and the characters and `unit`
    cut (terminal, dashboard under `key`, and report)."""
    rows: list[tuple[Any, ...]] = []
    for src, s in stats.per_source.items():
        e = s.edits or {}
        share = e.get("chars_removed", 0) / max(e.get("chars_in", 0), 1)
        rows.append((src, s.documents_in, e.get("documents_edited", 0), e.get("spans_removed", 0),
                     e.get("chars_removed", 0), f"{share:.1%}"))
    share = stats.chars_removed / max(stats.chars_in, 1)
    rows.append(("total", stats.documents_in, stats.documents_edited, stats.spans_removed, stats.chars_removed,
                 f"{share:.1%}"))
    names = ("source", "documents", "edited", f"{unit} cut", "chars cut", "of chars")
    return [Table(columns(*names), rows, key=key, title=f"{unit} cut from kept documents",
                  description=f"{unit} cut per source (documents left too short are in removed.parquet)")]  # fmt: skip


def repeats(items: Sequence[Repeat], key: str, what: str, kept_first: bool = True) -> list[Block]:
    """The most repeated spans with their occurrences: all of them on the dashboard and in the report
    (under `key`), the first five, shortened, in the terminal. `kept_first` False: every copy was cut."""
    if not items:
        return []
    cols = (Column("occurrences"), Column("chars"), Column("text", right=False, fold=True))
    # the dashboard and report.md render a cell as markdown: `__init__` would show as a bold "init"
    rows = [(r.count, r.chars, markdown_escaped(r.text)) for r in items]
    short = [(r.count, r.chars, r.text if len(r.text) <= 80 else r.text[:79] + "…") for r in items[:5]]
    return [
        Table(cols, rows, key=key, title=f"the {len(items)} most repeated {what}", to=PREFECT | REPORT,
              description=f"The {len(items)} most repeated {what}: every copy{' after the first' if kept_first else ''} was cut"),
        Table(cols, short, title=f"most repeated {what} (all {len(items)} in repeats.md)", to=TERMINAL),
    ]  # fmt: skip
