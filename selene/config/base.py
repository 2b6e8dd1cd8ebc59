"""The base of every config model, how a validation error is told to the user, and a config with
the command line's overrides (`with_overrides`).

Every model forbids unknown keys, so a typo in a YAML file is an error that names the key instead of
a setting silently ignored. Functions take the sub-config they need (a stage's, a filter's), never
the whole pipeline config.
"""

from __future__ import annotations

from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from selene.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """A config model: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


class StageConfig(Strict):
    """A stage's settings: its section of a pipeline file, and its command's options."""

    def extra_inputs(self) -> list[str]:
        """What the stage reads beyond its input directory (source globs, task files, a given
        tokenizer): no output may overlap them, and they decide whether the work can leave this
        process (memory:// paths keep it here)."""
        return []


def format_validation_error(
    err: ValidationError,
    *,
    where: str,
    lines: dict[tuple, int] | None = None,
    root: type[BaseModel] | None = None,
) -> str:
    """One line per problem: the dotted field, the bad value and what is accepted."""
    out = [f"{where}: {err.error_count()} invalid setting(s)"]
    for e in err.errors():
        loc = tuple(e["loc"])
        field = ".".join(str(p) for p in loc) or "<top level>"
        line = _line_for(loc, lines) if lines else None
        at = f" (line {line})" if line else ""
        if e["type"] == "extra_forbidden":
            parent = model_at(root, loc[:-1]) if root is not None else None
            accepted = ", ".join(parent.model_fields) if parent else "see `selene config show`"
            out.append(f"  {field}{at}: unknown key; accepted keys here: {accepted}")
        else:
            bad = e.get("input")
            shown = "" if e["type"] == "missing" or not loc else f" got {bad!r}:"  # not a whole file's dump
            msg = e["msg"].removeprefix("Value error, ")
            out.append(f"  {field}{at}:{shown} {msg}")
    return "\n".join(out)


def model_at(root: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    model: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return None
        ann = field.annotation
        args = getattr(ann, "__args__", None)
        model = next((a for a in (args or (ann,)) if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if model is None:
            return None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _line_for(loc: tuple, lines: dict[tuple, int]) -> int | None:
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def dump_config(cfg: BaseModel) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def with_overrides(cfg: M, where: str = "command-line options", **overrides: Any) -> M:
    """`cfg` with the options given on the command line (None = not given), validated together;
    errors name `where`."""
    data = cfg.model_dump()
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return type(cfg).model_validate(data)
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where=where, root=type(cfg))) from None
