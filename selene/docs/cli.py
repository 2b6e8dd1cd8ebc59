"""The CLI reference page: every command and option, read from the command tree that ``--help``
shows (`typer.main.get_command` of `selene.cli.app`, made plain by `selene.cli.help`), so the
page says what ``selene <command> --help`` says: usage, help text, each option's metavar, default,
whether it is required or repeatable. A stage's further command (``selene quality train``) and
``selene plan serve`` are listed under the names users type.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.text import Text

from selene.docs.markdown import GENERATED, anchor, cell, code, inline, table

INTRO = """\
Every command and option of `selene`, generated from the command tree itself: the same text as
`selene <command> --help`. Exit codes, for every command: 0 success; 2 refused before any work
because of what was given (an option, a config value, a wrong path, an existing output); 1 a
failure while working, or an internal error (said so). `--debug`, anywhere on the line, adds the
traceback to an error."""


def page(root: Any = None) -> str:
    """The page's markdown; `root` is the command tree (default: selene's)."""
    if root is None:
        import typer

        from selene.cli import app

        root = typer.main.get_command(app)
    parts = ["# Command line", "", GENERATED.format(module="selene.docs.cli"), "", INTRO, ""]
    parts.append(
        table(
            ["Command", "What it does"],
            ((f"[{code(p)}](#{anchor(p)})", cell(_first(c))) for p, c in commands(root)),
        )
    )
    for path, cmd in commands(root):
        parts += ["", section(path, cmd)]
    return "\n".join(parts) + "\n"


def commands(root: Any, path: str = "selene") -> Iterator[tuple[str, Any]]:
    """(the command as typed, the command) for `root` and every command below it, in the order
    ``--help`` lists them; a hidden ``<name>-<sub>`` command follows ``<name>`` as ``<name> <sub>``."""
    yield path, root
    subs: dict[str, Any] = dict(getattr(root, "commands", {}))
    visible = [n for n, c in subs.items() if not c.hidden]
    for name in visible:
        yield from commands(subs[name], f"{path} {name}")
        for hidden, cmd in subs.items():
            if cmd.hidden and hidden.startswith(f"{name}-"):
                yield from commands(cmd, f"{path} {name} {hidden.removeprefix(f'{name}-')}")


def section(path: str, cmd: Any) -> str:
    from typer._click.core import Context

    ctx = Context(cmd, info_name=path)
    usage = " ".join([path, *cmd.collect_usage_pieces(ctx)])
    out = [f"## {path} {{ #{anchor(path)} }}", "", help_markdown(cmd.help), "", "```text", usage, "```"]
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name == "option"]
    if arguments:
        out += ["", table(["Argument", "Default", "Description"], (_argument_row(p) for p in arguments))]
    if options:
        out += ["", table(["Option", "Value", "Default", "Description"], (_option_row(p) for p in options))]
    subs = [(n, c) for n, c in getattr(cmd, "commands", {}).items() if not c.hidden]
    if subs:
        rows = ((f"[{code(f'{path} {n}')}](#{anchor(path, n)})", cell(_first(c))) for n, c in subs)
        out += ["", table(["Command", "What it does"], rows)]
    return "\n".join(out)


def plain(text: str | None) -> str:
    """Help text without its rich markup (``\\[`` is a bracket, ``[b]`` a style)."""
    return Text.from_markup(text or "").plain


def help_markdown(text: str | None) -> str:
    """A command's help as markdown paragraphs; an indented (literal) paragraph as a code block."""
    out = []
    for para in plain(text).split("\n\n"):
        if para.startswith(("\b", " ", "\t")):
            out.append("```text\n" + para.strip("\b\n") + "\n```")
        else:
            out.append("\n".join(inline(line) for line in para.split("\n")))
    return "\n\n".join(out)


def _first(cmd: Any) -> str:
    return plain(cmd.short_help or cmd.help).split("\n\n")[0]


def _default(param: Any) -> str:
    value = param.default
    if value is None or value == [] or getattr(param, "is_flag", False) or callable(value):
        return ""
    return code(str(value))


def _description(param: Any) -> str:
    text = cell(plain(param.help))
    return f"{text} **Required.**" if param.required else text


def _option_row(param: Any) -> list[str]:
    names = ", ".join(code(o) for o in [*param.opts, *param.secondary_opts])
    return [names, code(param.metavar) if param.metavar else "", _default(param), _description(param)]


def _argument_row(param: Any) -> list[str]:
    return [code(param.metavar or param.name), _default(param), _description(param)]
