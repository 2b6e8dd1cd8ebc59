"""The README stays a five-minute read that cannot drift from the code: short, every relative link a
file of the repository, every `selene ...` command it shows a command of the CLI, every `make`
target one of the Makefile's, every shipped path it names present, and its stage diagram the
registry's stages in the registry's order."""

from __future__ import annotations

import re
from pathlib import Path

from selene import registry
from tests.docs.pages import check, code_lines, invocations, named_paths
from tests.pipeline_runs import ROOT

README = ROOT / "README.md"
MAX_LINES = 200
# Paths of the repository a command or prose may name; a glob or a placeholder (upper case) is not one.
SHIPPED = re.compile(r"^(?:data|configs|docs|benchmarks|scripts|tests|selene)/[\w./-]*$")


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _code(text: str) -> list[str]:
    """The README's code: each line of its fenced blocks and each inline code span."""
    return [code for _, code in code_lines(text)]


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_readme_is_short() -> None:
    lines = _text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_relative_links_resolve_to_files() -> None:
    missing = []
    for link in _links(_text()):
        if re.match(r"^[a-z]+:", link) or link.startswith("#"):
            continue
        target, _, anchor = link.partition("#")
        path = (README.parent / target).resolve()
        if not path.is_file() or (anchor and anchor not in _heading_slugs(path)):
            missing.append(link)
    assert not missing, f"README.md links to files or headings that do not exist: {missing}"


def _heading_slugs(path: Path) -> set[str]:
    """The anchors of a markdown file's headings, as GitHub and the site's toc make them (lower case,
    punctuation dropped, spaces as hyphens)."""
    slugs = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^#{1,6}\s+(.*?)\s*$", line):
            text = re.sub(r"[^\w\- ]", "", m.group(1).replace("`", "").lower())
            slugs.add(text.strip().replace(" ", "-"))
    return slugs


def test_selene_commands_exist() -> None:
    calls = [words for line in _code(_text()) for words in invocations(line)]
    assert calls, "the README shows no selene command"
    errors = [e for words in calls if (e := check(words)) is not None]
    assert not errors, "\n".join(errors)


def test_make_targets_exist() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, flags=re.M))
    named = {m for line in _code(_text()) for m in re.findall(r"\bmake ([\w-]+)", line)}
    assert named, "the README shows no make target"
    assert named <= targets, f"make targets the Makefile lacks: {sorted(named - targets)}"


def test_shipped_paths_exist() -> None:
    """An example the README names (a task file, a config) is in the repository: no `data/piqa`."""
    named = {word for line in _code(_text()) for word in named_paths(line, SHIPPED)}
    assert named, "the README names no file of the repository"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"README.md names paths that are not shipped: {missing}"


def test_stage_diagram_is_the_registry() -> None:
    """The pipeline diagram lists every stage the registry declares, in its order (quality included)."""
    diagrams = [line for line in _code(_text()) if "→" in line and line.strip().startswith("ingest")]
    assert diagrams, "the README has no stage diagram (a code line `ingest → ...`)"
    stages = [s.name for s in registry.STAGES]
    for line in diagrams:
        assert [w.strip() for w in line.split("→")] == stages, line


def test_checks_see_a_broken_readme() -> None:
    """The helpers above find what they must: a missing link, an unknown command, a drifted diagram."""
    text = "see [x](nowhere.md) and `selene frobnicate -i X`\n```\ningest → dedup\n```\n"
    assert _links(text) == ["nowhere.md"]
    assert check(["frobnicate", "-i", "X"]) is not None
    assert check(["config", "defaults", "STAGE"]) is None
    assert check(["config", "nosuch"]) is not None
    assert _code(text)[-1] == "ingest → dedup"
    slugs = _heading_slugs(ROOT / "docs" / "topics" / "gpus.md")
    assert "on-a-gpu-one-nvidia-h200-measured" in slugs and "measured" not in slugs
