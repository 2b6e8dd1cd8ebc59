"""Errors a user can act on. The CLI prints their message (no traceback unless --debug).

`ConfigError` and `UsageError` exit with 2 (bad usage or configuration); every other
`SeleneError` exits with 1 (a runtime failure: unreadable input, unwritable output ...).
"""

from __future__ import annotations


class SeleneError(Exception):
    """Base of the errors whose message is meant for the user."""

    exit_code = 1


class ConfigError(SeleneError):
    """A configuration file or option is invalid; the message names the field and what is accepted."""

    exit_code = 2


class UsageError(SeleneError):
    """The command line is inconsistent (e.g. a glob that matches nothing)."""

    exit_code = 2


class InputError(SeleneError):
    """An input file cannot be read at all; the message names the file and, where known, the offset."""


class OutputError(SeleneError):
    """An output location cannot be written."""


class Stopped(SeleneError):
    """The user stopped the command (Ctrl-C, SIGTERM, Cancel in the dashboard) and it stopped
    cleanly: the message says where (e.g. training's step and checkpoint). Printed as it is, not as
    an error; the exit status is 128 + the signal (130 for Ctrl-C), or 1 for a cancellation."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
