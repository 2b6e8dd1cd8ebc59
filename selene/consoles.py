"""The consoles every selene process writes to: one policy for standard output and standard error.

Written to a terminal, a console lays out for the terminal's width (tables wrap their cells there,
they do not cut them). Written to a file or a pipe (``make demo > log 2>&1``, a CI log, torchrun's
ranks under a pipeline), a line is never wrapped and a table never narrowed: a log is read with
less and grep, where a step split over two lines or ``DebianCo…`` for a source name loses what it
said. Rich alone gets this wrong for a pipe when standard input is a terminal: it takes the width
from the first standard stream that is a terminal, so ``cmd > log`` from a shell wrapped at 80.
Each print is flushed by rich, so the two streams interleave in a file in the order they were
written (`selene.cli.in_order` makes Python's own prints and child processes do the same).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.table import Table

LOG_WIDTH = 1000
"""Columns a console lays out in when it does not write to a terminal: wider than any table selene
prints, so none is narrowed; lines print whole at any length (soft wrap)."""


class LogConsole(Console):
    """A rich console that lays out for the terminal it writes to, and for a log otherwise."""

    def __init__(self, *args: Any, width: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, width=width, **kwargs)
        # Rich also takes a width from $COLUMNS, which a shell or a test harness may export: a log
        # is laid out wide unless the caller asked for a width.
        self._asked_width = width

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        if self._asked_width is None and not self.is_terminal:
            return ConsoleDimensions(LOG_WIDTH, dims.height)
        return dims

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size
        self._asked_width = new_size[0]

    def print(self, *objects: object, **kwargs: object) -> None:
        if kwargs.get("soft_wrap") is None and not self.is_terminal:
            kwargs["soft_wrap"] = True  # a line of a log whole, however long
        for obj in objects:
            if isinstance(obj, Table):
                fold(obj)
        super().print(*objects, **kwargs)  # type: ignore[arg-type]


def fold(table: Table) -> Table:
    """`table` with no cell cut: a wrapping column left at rich's default overflow (an ellipsis
    for what does not fit: ``DebianCo…``) folds its long words onto further lines instead, so a
    narrow terminal shows all of a name over two lines."""
    for column in table.columns:
        if column.overflow == "ellipsis" and not column.no_wrap:
            column.overflow = "fold"
    return table


def console(stderr: bool = False) -> LogConsole:
    """The console of standard output (or standard error); its stream is looked up at each print,
    so a redirected ``sys.stdout`` (a test's capture) is honoured."""
    return LogConsole(stderr=stderr)


@contextlib.contextmanager
def quiet_loggers(names: tuple[str, ...], level: int = logging.ERROR) -> Iterator[None]:
    """Raise these loggers to `level` while the block runs, then restore them: for a library that
    logs what selene says itself in one line, or what is none of the user's concern."""
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(level)
    try:
        yield
    finally:
        for lg, before in zip(loggers, levels, strict=True):
            lg.setLevel(before)
