"""Every `selene` command the README and the documentation pages show names a real command and only
options that command has: a renamed or removed option fails here, not in a reader's terminal.
(docs/getting-started.md is also run as written, by test_getting_started.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.pages import check, code_lines, invocations, named_paths
from tests.pipeline_runs import ROOT

PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


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
            for word in named_paths(code, SHIPPED):
                named.add(word)
                if not (ROOT / word).exists():
                    missing.append(f"{page.relative_to(ROOT)}:{n}: {word}")
    assert len(named) > 50, f"only {len(named)} paths found: the page scan is broken"
    assert not missing, "pages name paths that are not shipped:\n" + "\n".join(missing)
