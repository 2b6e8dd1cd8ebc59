"""Errors that say who is at fault. The CLI prints their message (no traceback unless --debug).

The exit status says which side is to act:

- 2, `UsageError` and `ConfigError` (and `PathError`, a `UsageError`): refused before any work
  because of what the user gave: an option, a config value, a path that does not exist, matches
  nothing or is not the kind of thing the option takes, an output that exists without
  --overwrite/--force, an input file checked up front and found empty or of the wrong format.
- 1, `InputError`, `OutputError` and every other `SeleneError`: a failure while working (a corrupt
  record found mid-run, an unwritable disk, a crashed worker).
- 1, `InternalError`: selene's own bug (a broken invariant); the message says so and how to get
  the traceback (``--debug``).
"""

from __future__ import annotations


class SeleneError(Exception):
    """Base of the errors whose message is meant for the user."""

    exit_code = 1


class ConfigError(SeleneError):
    """A configuration file or option is invalid; the message names the field and what is accepted."""

    exit_code = 2


class UsageError(SeleneError):
    """The command line is inconsistent, or asks for what cannot be done; refused before any work."""

    exit_code = 2


class PathError(UsageError):
    """A path the user gave is wrong: it does not exist, matches nothing, is not the kind of thing the
    option takes (a folder where a file is wanted, an ingest output where a dedup output is), or is an
    output that exists without --overwrite/--force. The message names the path and the option."""


class InputError(SeleneError):
    """An input cannot be read while working (a corrupt shard, a truncated file); the message names
    the file and, where known, the offset."""


class OutputError(SeleneError):
    """An output location cannot be written."""


class InternalError(SeleneError):
    """selene broke one of its own invariants (e.g. its accounting of documents): a bug in selene, not
    a fault of the input. The CLI says so and adds the ``--debug`` hint."""

    def __str__(self) -> str:
        return f"internal error (a bug in selene, not in your input): {super().__str__()}"


class Stopped(SeleneError):
    """The user stopped the command (Ctrl-C, SIGTERM, Cancel in the dashboard) and it stopped
    cleanly: the message says where (e.g. training's step and checkpoint). Printed as it is, not as
    an error; the exit status is 128 + the signal (130 for Ctrl-C), or 1 for a cancellation."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
