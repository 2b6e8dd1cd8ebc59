"""Every `selene` command the README and the documentation pages show names a real command and only
options that command has: a renamed or removed option fails here, not in a reader's terminal.
(docs/getting-started.md is also run as written, by test_getting_started.py.)"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from selene.cli import app
from tests.pipeline_runs import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
GLOBAL = {"--debug", "--help", "--version", "-V"}  # taken anywhere on the line
# `selene quality train` and `selene plan serve` are commands of their own in the tree
FURTHER = {("quality", "train"): "quality-train", ("plan", "serve"): "plan-serve"}


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


def problems(page: Path) -> list[str]:
    out = []
    for n, code in code_lines(page.read_text(encoding="utf-8")):
        for words in invocations(code):
            if (why := check(words)) is not None:
                out.append(f"{page.relative_to(ROOT)}:{n}: {why}: {code.strip()[:160]}")
    return out


def test_every_shown_command_and_option_exists() -> None:
    found = [p for page in PAGES for p in problems(page)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_drifted_command() -> None:
    assert check(["dedup", "-i", "A", "-o", "B", "--threshold", "0.8"]) is None
    assert check(["quality", "train", "--positive", "X", "--negative", "Y", "-o", "Z"]) is None
    assert "no option --thresh" in (check(["dedup", "-i", "A", "-o", "B", "--thresh", "0.8"]) or "")
    assert "no command" in (check(["dedupe", "-i", "A"]) or "")
    assert check(["config", "defaults", "train"]) is None
    shell = "PYTHONPATH=. x | selene ingest --workers 2 > log # selene nothing"
    assert list(invocations(shell)) == [["ingest", "--workers", "2"]]
    assert check(["STAGE", "--help"]) is None and check(["run_decontaminate", "(cut"]) is None
    lines = list(code_lines("```console\n$ selene dedup \\\n    --bands 4\nout\n```\n"))
    assert lines[0] == (2, "selene dedup --bands 4")


# A file of the repository a page's code names; a glob, a placeholder (upper case, <...>) is not one.
# A user's own `data/rp/...` in an example config is neither; the data selene ships is.
SHIPPED = re.compile(r"^(?:data/(?:tasks|sample|reference)|configs|examples|benchmarks|scripts)/[\w./-]*$")


def test_every_shipped_path_a_page_names_exists() -> None:
    """A task file, config, example or benchmark script a page names is in the repository."""
    missing, named = [], set()
    for page in PAGES:
        for n, code in code_lines(page.read_text(encoding="utf-8")):
            if code.lstrip().startswith("error:"):
                continue  # a refusal shown as printed names the missing path on purpose
            for word in re.split(r"[\s()=:'\"\[\]]+", code):
                word = word.rstrip(".,;")
                if SHIPPED.match(word):
                    named.add(word)
                    if not (ROOT / word).exists():
                        missing.append(f"{page.relative_to(ROOT)}:{n}: {word}")
    assert len(named) > 50, f"only {len(named)} paths found: the page scan is broken"
    assert not missing, "pages name paths that are not shipped:\n" + "\n".join(missing)
