"""`selene --version`, and help that reads plainly in every command: no Python types as metavars,
no metavar on a flag, ranges and repeatable options in words, paragraphs that flow."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from selene import __version__
from selene.cli import app, main
from selene.cli.help import flow, range_words
from selene.docs.cli import commands

ROOT = Path(__file__).resolve().parents[2]
JARGON = ("<str>", "<bool>", "<int>", "<float>", "<list[", "range>", "x>=", "x<=", "<=x")


def tree() -> list[tuple[str, Any]]:
    return list(commands(typer.main.get_command(app)))


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flag(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([flag]) == 0
    assert capsys.readouterr().out == f"selene {__version__}\n"


def test_version_is_eager_and_the_command_stays(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version", "ingest", "--config", "no-such.yaml"]) == 0  # read before any command
    assert capsys.readouterr().out == f"selene {__version__}\n"
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == __version__


def test_version_from_the_console_script_module(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "selene.cli", "--version"], cwd=tmp_path, capture_output=True, text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "SELENE_PREFECT": "off"}, check=False,
    )  # fmt: skip
    assert (out.returncode, out.stdout) == (0, f"selene {__version__}\n"), out.stderr


@pytest.mark.parametrize("columns", ["80", "120"])
def test_no_type_jargon_in_any_help(
    columns: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    paths = [p for p, _ in tree()]
    assert "selene quality train" in paths and "selene server logs" in paths
    for path in paths:
        assert main([*path.split()[1:], "--help"]) == 0, path
        out = capsys.readouterr().out
        assert "Usage:" in out, path
        found = [j for j in JARGON if j in out]
        assert not found, f"{path} --help shows {found}:\n{out}"
        # the usage line names the command as typed: `selene quality train`, not its name in the tree
        assert f"Usage: {path} " in " ".join(out.split()), f"{path} --help: {out[:300]}"
        assert max(map(len, out.splitlines())) <= int(columns), path


def test_flags_show_no_metavar_and_values_a_plain_one() -> None:
    for path, cmd in tree():
        for p in [*cmd.params, cmd._help_option]:
            if p is None or p.param_type_name != "option":
                continue
            where = f"{path} {p.opts[0]}"
            if p.is_flag:
                assert p.metavar == "" and p.display_type_rich(None) == "", where
            else:
                assert p.metavar and p.metavar == p.metavar.strip() and "<" not in p.metavar, where
                assert p.metavar.isupper() or "|" in p.metavar, where  # NAME, N, DIR, or the choices a|b


def test_ranges_and_repeatable_options_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    for path, cmd in tree():
        for p in cmd.params:
            if getattr(p, "multiple", False):
                assert "repeatable" in (p.help or "").lower(), f"{path} {p.opts}"
            if not getattr(p, "is_flag", False) and (p.min is not None or p.max is not None):
                assert range_words(p.min, p.max) in (p.help or ""), f"{path} {p.opts}"
    assert main(["ingest", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "at least 1" in out and "at least 0.1" in out


def test_help_paragraphs_flow() -> None:
    """Each paragraph of every command's help is one line (the terminal wraps it once); blank
    lines still part paragraphs."""
    for path, cmd in tree():
        for para in (cmd.help or "").split("\n\n"):
            if not para.startswith(("\b", " ")):
                assert ("\n" in para and para.lstrip().startswith(("-", "*"))) or "\n" not in para, (
                    f"{path}: {para!r}"
                )
    assert "\n\n" in next(c for p, c in tree() if p == "selene train").help  # paragraphs kept


def test_flow() -> None:
    text = """First line
    goes on.

    Second paragraph
    also.

        literal block
        stays

    - an item
      continued
    - another"""
    assert flow(text) == (
        "First line goes on.\n\nSecond paragraph also.\n\n    literal block\n    stays\n\n- an item continued\n- another"
    )
    assert flow(None) is None
