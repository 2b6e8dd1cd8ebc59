"""Configuration files: their text, their YAML, and the line of every key for error messages."""

from __future__ import annotations

from pathlib import Path

import yaml

from selene.errors import ConfigError


def _yaml_lines(text: str) -> dict[tuple, int]:
    """Map each key path of a YAML document to its 1-based line, for error messages."""
    out: dict[tuple, int] = {}

    def walk(node: yaml.Node, path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                p = (*path, k.value)
                out[p] = k.start_mark.line + 1
                walk(v, p)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                p = (*path, i)
                out[p] = v.start_mark.line + 1
                walk(v, p)

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return out
    if root is not None:
        walk(root, ())
    return out


def read_config_text(path: str | Path, what: str = "config file", hint: str = "") -> str:
    """The text of a configuration file, or a `ConfigError` naming it: missing, a directory,
    unreadable, not UTF-8 text (with the byte offset and line of the first bad byte)."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{what} {str(p)!r} is a directory; give the file itself{hint}")
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{what} {str(p)!r} does not exist{hint}") from None
    except OSError as e:
        raise ConfigError(f"{what} {str(p)!r} cannot be read: {e.strerror or e}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ConfigError(
            f"{p}: not a text {what} (line {line}, byte {e.start}: {raw[e.start : e.start + 1]!r} is not UTF-8); "
            f"is this the right file?{hint}"
        ) from None


def _yaml_problem(e: yaml.YAMLError, text: str) -> str:
    """A YAML parser error as "line L, column C: problem" (its own text names "<unicode string>")."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or getattr(e, "reason", None) or str(e)
    if mark is None and isinstance(e, yaml.reader.ReaderError):
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        ch = e.character
        code = ord(ch) if isinstance(ch, str) and len(ch) == 1 else ch
        return f"line {line}, column {column}: {problem}" + (
            f" (U+{code:04X})" if isinstance(code, int) else ""
        )
    context = getattr(e, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}" + (f" ({context})" if context else "")


def load_yaml(path: str | Path, what: str = "config file") -> tuple[dict, dict[tuple, int]]:
    """A YAML file whose top level is a mapping, with each key's line; every way it can be wrong
    (missing, a directory, binary, bad YAML, empty, a list or a scalar) is a `ConfigError` naming it."""
    p = Path(path)
    text = read_config_text(p, what)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {_yaml_problem(e, text)}") from None
    except RecursionError:
        raise ConfigError(f"{p}: not valid YAML: nested too deeply") from None
    if data is None:
        raise ConfigError(
            f"{p}: the {what} is empty; it needs a mapping of settings (`selene config defaults` prints one)"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"{p}: the top level must be a mapping of settings (key: value lines), got a {type(data).__name__}"
        )
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{p}: setting names are words, got {bad[0]!r} at the top level")
    return data, _yaml_lines(text)
