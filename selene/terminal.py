"""What the commands print through: the consoles of standard output and standard error, and `note`.

Below the stages, so that a stage's own command module (``<stage>/command.py``) prints as every
other command does without importing the command-line package (`selene.cli`), which imports it.
"""

from __future__ import annotations

from selene.consoles import console as _console

console = _console(stderr=False)  # one policy for both streams (selene.consoles)
err_console = _console(stderr=True)


def note(message: str) -> None:
    err_console.print(f"[dim]{message}[/dim]", highlight=False)
