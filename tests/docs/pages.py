"""Reading the code a markdown page shows (fenced blocks, inline spans) and checking it against the
CLI and the repository: shared by the README's test and the documentation pages' test."""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterator
from typing import Any

import typer

from selene.cli import app
from selene.cli.help import spoken_names

GLOBAL = {"--debug", "--help", "--version", "-V"}  # taken anywhere on the line
# `selene quality train`, `selene plan serve`: commands of their own in the tree, as `selene.cli` parses them
FURTHER = {tuple(spoken.split()): name for name, spoken in spoken_names().items()}


def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, code): each line of a fenced block, continuations (`\\`) joined and a `$ `
    prompt taken off, and each inline code span."""
    fenced, pending, start = False, "", 0
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield from ((n, span) for span in re.findall(r"`([^`]+)`", line))
            continue
        stripped = line.strip().removeprefix("$ ")
        if not pending:
            start = n
        if stripped.endswith("\\"):
            pending += stripped[:-1].rstrip() + " "
            continue
        yield start, pending + stripped
        pending = ""


def invocations(code: str) -> Iterator[list[str]]:
    """The `selene ...` commands of one line of shell, each as its words (comments, pipes,
    redirections and the commands around it left out)."""
    code = re.sub(r"\s#.*$", "", code)
    for part in re.split(r"\|\||&&|[|;]|\s[0-9]?>\S*", code):
        part = part.strip()
        if not part.startswith("selene ") and part != "selene":
            continue
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        yield [w.strip("[]") for w in words[1:]]


@functools.cache
def _root() -> Any:
    return typer.main.get_command(app)


def check(words: list[str]) -> str | None:
    """None when `selene WORDS` is a command and every --option is one of its options, else why not."""
    if tuple(words[:2]) in FURTHER:
        words = [FURTHER[(words[0], words[1])], *words[2:]]
    command: Any = _root()
    path: list[str] = []
    for word in words:
        subs = getattr(command, "commands", None)
        if not subs or not re.fullmatch(r"[a-z][a-z-]*", word):
            break  # a command's arguments and options follow, or a placeholder (STAGE, <stage>)
        if word not in subs:
            return f"no command `selene {' '.join([*path, word])}`"
        command, path = subs[word], [*path, word]
    known = GLOBAL | {o for p in getattr(command, "params", []) for o in (*p.opts, *p.secondary_opts)}
    flags = {w.split("=", 1)[0] for w in words if re.match(r"^--?[A-Za-z][\w-]*(=|$)", w)}
    unknown = sorted(f for f in flags if f not in known)
    if unknown:
        return f"`selene {' '.join(path)}` has no option {', '.join(unknown)}"
    return None


def named_paths(code: str, shipped: re.Pattern[str]) -> Iterator[str]:
    """The paths of the repository (`shipped`) a line of code names; none in a refusal shown as
    printed (``error: ...``), which names a missing path on purpose."""
    if code.lstrip().startswith("error:"):
        return
    for word in re.split(r"[\s()=:'\"\[\]]+", code):
        word = word.rstrip(".,;")
        if shipped.match(word):
            yield word
