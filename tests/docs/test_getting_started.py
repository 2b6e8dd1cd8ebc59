"""docs/getting-started.md runs as written: every command it shows, with the output it shows.

The page's convention: a ```` ```console ```` block is a terminal session. A line starting with `$ `
is a command (a line ending in ` \\` continues it on the next line); the lines after it, up to the next
command or the end of the block, are what the command prints (stdout and stderr together). Expected
output is compared line by line, trailing spaces ignored: `...` inside a line matches any text within
that line, and a line that is only `...` matches any number of lines (none included). Every command
must exit 0; a page that shows a failing command shows it as `$ CMD; echo "exit code $?"`.

The commands run in order, in bash, in one temporary directory that holds a copy of
`examples/getting-started/` and `data/tasks/` (a user's clone of the repository, with their own runs),
with this checkout's `selene` first on PATH, no Prefect server to find (a temporary SELENE_HOME and
PREFECT_HOME), and nothing downloaded. Any other fenced shell block (bash, sh, shell) is an error: a
command the page shows must be one that runs here.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"
PROMPT = "$ "
ELLIPSIS = "..."
SHELL_LANGS = {"bash", "sh", "shell", "zsh", "console", "shell-session"}
COMMAND_TIMEOUT_S = 600
PAGE_BUDGET_S = 150  # the whole page on two busy cores (docs/getting-started.md says what a user waits)


@dataclass(frozen=True)
class Command:
    block: int  # 1-based number of the console block on the page
    line: int  # 1-based line of the page where the command starts
    text: str  # the command as bash reads it (continuations joined with their backslash-newlines)
    expected: tuple[str, ...]


class PageError(Exception):
    """The page breaks the convention (a block that cannot be run)."""


# ------------------------------------------------------------------------------ the page's blocks

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")


def fenced_blocks(markdown: str) -> list[tuple[int, str, list[str]]]:
    """(line of the first body line, language, body lines) of every fenced block, in order."""
    blocks: list[tuple[int, str, list[str]]] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        lang = m["info"].strip().split(" ", 1)[0].lstrip(".").lower() if m["info"].strip() else ""
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            body.append(lines[j][indent:] if lines[j].startswith(" " * indent) else lines[j].lstrip())
            j += 1
        if j == len(lines):
            raise PageError(f"line {i + 1}: a fenced block that is never closed")
        blocks.append((i + 2, lang, body))
        i = j + 1
    return blocks


def _closes(line: str, fence: str) -> bool:
    """A closing fence: the opening's character, at least as many, nothing else on the line."""
    text = line.strip()
    return text.startswith(fence) and not text.strip(fence[0])


def commands(markdown: str) -> list[Command]:
    """Every command of the page's console blocks with its expected output; a shell block of another
    kind, or a console block without a command, is a PageError."""
    out: list[Command] = []
    console = 0
    for first, lang, body in fenced_blocks(markdown):
        if lang not in SHELL_LANGS:
            continue
        if lang != "console":
            raise PageError(
                f"line {first - 1}: a ```{lang} block; commands the page shows are ```console blocks, run by the test"
            )
        console += 1
        found = _block_commands(console, first, body)
        if not found:
            raise PageError(f"line {first - 1}: console block {console} has no `$ ` command")
        out.extend(found)
    return out


def _block_commands(block: int, first: int, body: list[str]) -> list[Command]:
    found: list[Command] = []
    i = 0
    if body and not body[0].startswith(PROMPT):
        raise PageError(f"line {first}: console block {block} starts with output, not a `$ ` command")
    while i < len(body):
        start = i
        parts = [body[i][len(PROMPT) :]]
        while parts[-1].endswith("\\") and i + 1 < len(body):
            i += 1
            parts.append(body[i])
        i += 1
        expected: list[str] = []
        while i < len(body) and not body[i].startswith(PROMPT):
            expected.append(body[i])
            i += 1
        found.append(Command(block, first + start, "\n".join(parts), tuple(expected)))
    return found


# ------------------------------------------------------------------------------ matching output


def line_matches(pattern: str, line: str) -> bool:
    """`...` in `pattern` matches any text within the line; the rest must be equal."""
    pieces = [re.escape(p) for p in pattern.rstrip().split(ELLIPSIS)]
    return re.fullmatch(".*".join(pieces), line.rstrip(), flags=re.DOTALL) is not None


def output_matches(expected: list[str] | tuple[str, ...], actual: list[str]) -> bool:
    """Line by line; a line that is only `...` matches any number of lines."""
    exp = list(expected)
    # memo over (i, j): does exp[i:] match actual[j:]
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(exp):
            ok = j == len(actual)
        elif exp[i].strip() == ELLIPSIS:
            ok = any(match(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            ok = j < len(actual) and line_matches(exp[i], actual[j]) and match(i + 1, j + 1)
        memo[(i, j)] = ok
        return ok

    return match(0, 0)


# ------------------------------------------------------------------------------ running the page


def workdir(tmp: Path) -> Path:
    """A user's working copy: the example files and the evaluation tasks, nothing of earlier runs."""
    work = tmp / "work"
    shutil.copytree(ROOT / "examples" / "getting-started", work / "examples" / "getting-started")
    shutil.copytree(ROOT / "data" / "tasks", work / "data" / "tasks")
    return work


def environment(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SELENE_", "WANDB_"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=f"{ROOT}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(ROOT),
        SELENE_HOME=str(tmp / "selene-home"),
        PREFECT_HOME=str(tmp / "prefect-home"),
        PREFECT_PROFILES_PATH=str(tmp / "prefect-home" / "profiles.toml"),
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
    )
    env.pop("COLUMNS", None)
    return env


def run(cmd: Command, cwd: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd.text],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )
    return proc.returncode, proc.stdout.splitlines()


def failure(cmd: Command, rc: int, actual: list[str]) -> str:
    """The command, what it printed and a diff against the page, where a printed line that one of the
    page's `...` lines matches is shown as that line (only real differences are marked)."""
    patterns = [e for e in cmd.expected if ELLIPSIS in e and e.strip() != ELLIPSIS]
    shown = [next((p for p in patterns if line_matches(p, a)), a) for a in actual]
    diff = "\n".join(difflib.unified_diff(list(cmd.expected), shown, "page", "printed", lineterm=""))
    return (
        f"docs/getting-started.md line {cmd.line} (console block {cmd.block}): exit code {rc}\n"
        f"$ {cmd.text}\n--- what it printed:\n" + "\n".join(actual) + f"\n--- against the page:\n{diff}"
    )


# ------------------------------------------------------------------------------ tests


@pytest.mark.slow
def test_getting_started_page_runs_as_written(tmp_path: Path) -> None:
    cmds = commands(PAGE.read_text(encoding="utf-8"))
    cwd, env = workdir(tmp_path), environment(tmp_path)
    start = time.monotonic()
    for cmd in cmds:
        rc, actual = run(cmd, cwd, env)
        if rc != 0 or not output_matches(cmd.expected, actual):
            pytest.fail(failure(cmd, rc, actual), pytrace=False)
    took = time.monotonic() - start
    assert took <= PAGE_BUDGET_S, f"the page's commands took {took:.0f} s, over its {PAGE_BUDGET_S} s budget"


def test_page_follows_the_convention() -> None:
    """Every shell block is a console block of commands, and the page shows them (fast: parsed only)."""
    cmds = commands(PAGE.read_text(encoding="utf-8"))
    assert any(c.text.startswith("selene ingest") for c in cmds)
    assert all(c.text.strip() for c in cmds)


SAMPLE = """\
Intro.

```console
$ echo one
one
$ printf 'a\\nb\\nc\\n' \\
    | cat
a
...
```

```yaml
not: run
```

```console
$ true
```
"""


def test_commands_are_extracted_with_their_output() -> None:
    cmds = commands(SAMPLE)
    assert [(c.block, c.line, c.text, c.expected) for c in cmds] == [
        (1, 4, "echo one", ("one",)),
        (1, 6, "printf 'a\\nb\\nc\\n' \\\n    | cat", ("a", "...")),
        (2, 17, "true", ()),
    ]


@pytest.mark.parametrize(
    "page, message",
    [
        ("```bash\nselene --help\n```\n", "a ```bash block"),
        ("```console\n```\n", "has no `$ ` command"),
        ("```console\noutput\n$ true\n```\n", "starts with output"),
        ("```console\n$ true\n", "never closed"),
    ],
)
def test_a_block_that_cannot_run_is_an_error(page: str, message: str) -> None:
    with pytest.raises(PageError, match=re.escape(message)):
        commands(page)


def test_ellipsis_within_a_line() -> None:
    assert line_matches("ingest-file: 4/4 in ... s", "ingest-file: 4/4 in 0.2 s")
    assert line_matches("step 1 loss ... lr ...", "step 1 loss 7.6 lr 0.0006 grad_norm 0.9")
    assert line_matches("a ... z", "a  z") and line_matches("a...", "a")  # empty text matches too
    assert line_matches("kept   ", "kept")  # trailing spaces are not compared
    assert not line_matches("ingest-file: 4/4 in ... s", "ingest-file: 3/4 in 0.2 s")
    assert not line_matches("a.b", "axb")  # only `...` is special; other text is literal


def test_ellipsis_line_matches_any_number_of_lines() -> None:
    assert output_matches(["first", "...", "last"], ["first", "last"])
    assert output_matches(["first", "...", "last"], ["first", "x", "y", "last"])
    assert output_matches(["..."], [])
    assert output_matches(["first", "..."], ["first", "x"])
    assert not output_matches(["first", "...", "last"], ["first", "x"])


def test_a_changed_missing_or_extra_line_fails() -> None:
    expected = ["│ licenses   │  30 │   24 │", "total 93"]
    assert output_matches(expected, ["│ licenses   │  30 │   24 │", "total 93"])
    assert not output_matches(expected, ["│ licenses   │  30 │   23 │", "total 93"])
    assert not output_matches(expected, ["│ licenses   │  30 │   24 │"])
    assert not output_matches(expected, ["│ licenses   │  30 │   24 │", "total 93", "more"])
    assert not output_matches([], ["anything"])


def test_a_failure_names_the_block_the_command_and_the_difference() -> None:
    cmd = Command(block=2, line=40, text="selene ingest -o out", expected=("kept 24",))
    text = failure(cmd, 0, ["kept 23"])
    assert "line 40 (console block 2)" in text and "$ selene ingest -o out" in text
    assert "-kept 24" in text and "+kept 23" in text
    timed = Command(1, 1, "x", ("took ... s", "kept 24"))
    diff = failure(timed, 0, ["took 0.3 s", "kept 23"]).split("--- against the page:")[1]
    assert " took ... s" in diff and "0.3" not in diff  # a line `...` matches is no difference


def test_a_command_runs_in_the_work_directory_with_stderr_in_order(tmp_path: Path) -> None:
    cmd = Command(1, 1, "echo out; echo err >&2; pwd; false | cat", ())
    rc, lines = run(cmd, tmp_path, environment(tmp_path))
    assert rc == 1  # pipefail: a failing command in a pipe is a failing command
    assert lines == ["out", "err", str(tmp_path)]
