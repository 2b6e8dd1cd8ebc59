"""The terminal's rendering of a stage's view (`selene.view`): what a command prints after it ran."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table as RichTable

from selene.view import Table, Text, View, text


def show(view: View, console: Console) -> None:
    """The view's terminal blocks: tables and lines (markdown is for the dashboard and report.md)."""
    for block in view.to("terminal"):
        if isinstance(block, Table):
            table = RichTable(title=block.title or None)
            for col in block.columns:
                table.add_column(col.name, justify="right" if col.right else "left",
                                 overflow="fold" if col.fold else "ellipsis")
            for row in block.rows:
                table.add_row(*(text(v) for v in row))
            console.print(table)
        elif isinstance(block, Text):
            console.print(block.text, markup=block.markup, highlight=block.highlight, soft_wrap=block.soft_wrap)
