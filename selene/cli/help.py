"""Help that reads like a well-kept tool's, for every command at once.

typer shows each option's Python type as its metavar (``<str>``, ``<list[str]>``, ``<bool>`` on a
flag, ``<int range> [x>=1]``) and keeps the hard line breaks of a docstring's paragraphs, which
rich then wraps again mid-sentence. `PlainGroup`, the class of the `selene` group, rewrites the
whole command tree once, when typer builds it: a flag shows no metavar, a value a plain one
(`metavar`: ``DIR``, ``FILE``, ``N``, ``X``, ``NAME=GLOB``, the choices ``word|char``), a range
and a repeatable option are said in words in the help text, and help paragraphs flow. The
reference page of the CLI (`selene.docs.cli`) reads the same tree, so it says what ``--help`` says.
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperArgument, TyperGroup, TyperOption

# By long flag, where the type alone says too little; the same flag means the same thing in every
# command. Anything else: the choices its help lists, else N (integer), X (number) or TEXT.
METAVARS = {
    "--config": "FILE",
    "--input": "DIR",
    "--output": "DIR",
    "--out": "DIR",
    "--checkpoint": "DIR",
    "--anneal-from": "STEP",
    "--against": "DIR",
    "--source": "NAME=GLOB",
    "--source-override": "NAME=GLOB",
    "--classifier": "NAME=MODEL:LABEL",
    "--tokenizer": "PATH",
    "--tasks": "PATH",
    "eval --tasks": "TASK,...",  # a command's own meaning of a flag: "<command> <flag>"
    "--task-data": "PATH",
    "--positive": "PATH",
    "--negative": "PATH",
    "--prompts": "FILE",
    "--calibration": "FILE",
    "--priority": "SOURCE",
    "--judge": "SOURCE",
    "--score-key": "KEY",
    "--weights": "SRC=W,...",
    "--epochs": "SRC=E,...",
    "--dask-address": "URL",
    "--rdzv-endpoint": "HOST:PORT",
    "--host": "HOST",
    "--port": "PORT",
    "--memory-gb": "GIB",
    "--set": "KEY=VALUE",
    "--from": "STAGE",
    "--until": "STAGE",
    "--force": "STAGE",  # `selene run --force STAGE`; a flag elsewhere, where no metavar shows
    "--seeds": "N,N,...",
    # choices the help text does not list (it says what the option is; the metavar, the values)
    "--shingle": "word|char",
    "substrings --unit": "bytes|tokens",
    "--model-type": "bpe|unigram",
    "--device": "auto|cpu|cuda",
    "--dtype": "fp32|bf16",
}
MAX_CHOICES = 16  # wider, and the metavar column takes the help text's room at 80 columns
ARGUMENTS = {"config": "FILE", "pipeline": "FILE", "file": "FILE", "stage": "STAGE"}

# "a | b | c" in an option's help: its choices.
_CHOICES = re.compile(r"(?<![\w.-])([a-z0-9][\w.-]*(?: \| [a-z0-9][\w.-]*)+)(?![\w.-])")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


def flow(text: str | None) -> str | None:
    """`text` with each paragraph's hard line breaks joined, so the terminal wraps it once.

    Blank lines still part paragraphs; a paragraph whose lines are indented, or that click marks
    with ``\\b``, is a literal block and stays as written; in a list each item starts its own line
    and its continuation lines join it."""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", _dedent(text).strip())
    return "\n\n".join(_flow_paragraph(p) for p in paragraphs)


def _dedent(text: str) -> str:
    import inspect

    return inspect.cleandoc(text)


def _flow_paragraph(paragraph: str) -> str:
    lines = paragraph.split("\n")
    if lines[0].startswith("\b") or all(line.startswith((" ", "\t")) for line in lines):
        return paragraph
    out: list[str] = []
    for line in lines:
        if out and not _LIST_ITEM.match(line):
            out[-1] = f"{out[-1]} {line.strip()}"
        else:
            out.append(line.rstrip())
    return "\n".join(out)


def metavar(param: TyperOption | TyperArgument, command: str = "") -> str:
    """The plain metavar of `param` ("" for a flag)."""
    if isinstance(param, TyperArgument):
        return ARGUMENTS.get(param.name or "", (param.name or "value").upper())
    if param.is_flag:
        return ""
    long = next((o for o in param.opts if o.startswith("--")), "")
    for key in (f"{command} {long}", long):
        if key in METAVARS:
            return METAVARS[key]
    desc = param.type_descriptor
    if desc.is_choice and desc.choices:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices)
    m = _CHOICES.search(param.help or "")
    choices = m.group(1).replace(" | ", "|") if m else ""
    if choices and len(choices) <= MAX_CHOICES:  # a longer list stays in the help text alone,
        return choices  # not widening every option's row
    kind = desc.annotation
    inner = getattr(kind, "__args__", (kind,))[0] if desc.is_list else kind
    return {int: "N", float: "X"}.get(inner, "NAME" if m is not None else "TEXT")


def range_words(low: float | None, high: float | None) -> str:
    """A number range as a reader says it: "at least 1", "between 0 and 1"."""
    if low is not None and high is not None:
        return f"between {_num(low)} and {_num(high)}"
    if low is not None:
        return f"at least {_num(low)}"
    return f"at most {_num(high)}" if high is not None else ""


def _num(x: float) -> str:
    return f"{x:g}"


def notes(param: TyperOption | TyperArgument) -> list[str]:
    """What the help text adds in words: the range, and that the option may be given again."""
    out = []
    if not getattr(param, "is_flag", False) and (words := range_words(param.min, param.max)):
        out.append(words)
    help_text = param.help or ""
    if getattr(param, "multiple", False) and "repeatable" not in help_text.lower():
        out.append("repeatable")
    return out


class PlainOption(TyperOption):
    """An option whose metavar is plain and whose range is said in its help text instead."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return self.metavar

    def _get_number_range_help_str(self) -> str | None:
        return None


class PlainArgument(TyperArgument):
    """An argument shown by its plain name (``FILE``), without a type column."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _get_number_range_help_str(self) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name if self.nargs == 1 else f"{name}..."


def plain_param(param: Any, command: str = "") -> None:
    """Rewrite one option or argument in place: plain metavar, range and repeatability in words."""
    if not isinstance(param, (TyperOption, TyperArgument)) or isinstance(param, (PlainOption, PlainArgument)):
        return
    added = notes(param)
    help_text = (flow(param.help) or "").rstrip()
    if added:
        help_text = _append(help_text, added)
    param.help = help_text or None
    if param.metavar is None or isinstance(param, TyperArgument):
        param.metavar = metavar(param, command)
    param.__class__ = PlainOption if isinstance(param, TyperOption) else PlainArgument


def _append(text: str, added: list[str]) -> str:
    """ "Parallel workers." + ["at least 1"] → "Parallel workers (at least 1)."; repeatable too."""
    said = "; ".join(added)
    if text.endswith(")."):
        return f"{text[:-2]}; {said})."
    if text.endswith("."):
        return f"{text[:-1]} ({said})."
    return f"{text} ({said})" if text else said[0].upper() + said[1:] + "."


def plain_command(cmd: Any) -> None:
    """Rewrite a command, its parameters, its help option and its subcommands in place."""
    cmd.help = flow(cmd.help)
    cmd.short_help = flow(cmd.short_help)
    for param in cmd.params:
        plain_param(param, cmd.name or "")
    if getattr(cmd, "add_help_option", False):
        from typer._click.core import Context

        help_option = cmd.get_help_option(Context(cmd, info_name=cmd.name))
        if help_option is not None:
            plain_param(help_option, cmd.name or "")
    for sub in getattr(cmd, "commands", {}).values():
        plain_command(sub)


def spoken_names() -> dict[str, str]:
    """A further command's name in the tree (``quality-train``, ``plan-serve``) → the words users
    type (``quality train``): `selene.cli` rewrites the words into the name before typer parses,
    and the name back into the words in usage lines and errors (`PlainGroup`)."""
    from selene import registry

    names = {
        name: name.replace("-", " ", 1) for stage in registry.STAGES for name in stage.subcommand_names()
    }
    return {**names, "plan-serve": "plan serve"}


class PlainGroup(TyperGroup):
    """The `selene` group: its whole tree made plain once it is built (`plain_command`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        plain_command(self)
        self.spoken = spoken_names()

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        # the name a subcontext gets shows in its usage line and errors: `selene quality train`
        name, cmd, rest = super().resolve_command(ctx, args)
        return (self.spoken.get(name, name) if name else name), cmd, rest
