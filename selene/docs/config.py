"""The configuration reference page: every section and field of a pipeline file (and of the
ablation and scaling-study files), from the pydantic models: the YAML path, the type in plain
words, the default as YAML and the description.

A field without a description is an error (`MissingDescription`, naming the model and the field),
so ``make docs`` fails until a new setting says what it does. A field whose value is a section of
its own (a config model) may take the section's docstring instead.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel, RootModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from selene.docs.markdown import GENERATED, anchor, cell, code, table, yaml_value


class MissingDescription(Exception):
    """A config field the reference cannot document: it has no description."""


INTRO = """\
Every setting a YAML file can hold, generated from the config models: `selene config defaults
<stage>` prints a stage's defaults as YAML to start from, `selene config validate FILE` checks a
file and prints it with every default filled in. An unknown key is an error that names it. A
stage's command takes the same section from `--config FILE` (a pipeline file, or a file of that
section's settings alone); its options override single fields."""


@dataclass
class Section:
    """One model, documented under one YAML path (``train.model``)."""

    path: str
    model: type[BaseModel]
    rows: list[list[str]] = field(default_factory=list)


def page() -> str:
    from selene.ablate.config import AblationConfig
    from selene.config.pipeline import pipeline_model
    from selene.plan.config import ScalingStudyConfig

    files: list[tuple[str, type[BaseModel], str]] = [
        ("Pipeline file", pipeline_model(), "`selene run FILE`, and every stage command's `--config FILE`."),
        ("Ablation file", AblationConfig, "`selene ablate FILE`."),
        ("Scaling-study file", ScalingStudyConfig, "`selene scaling-study FILE`."),
    ]
    out = ["# Configuration", "", GENERATED.format(module="selene.docs.config"), "", INTRO]
    seen: dict[type[BaseModel], str] = {}
    for title, model, used in files:
        out += ["", f"## {title} {{ #{anchor(title)} }}", "", f"Read by {used}"]
        for sec in sections(model, "", seen):
            out += ["", render(sec)]
    return "\n".join(out) + "\n"


def sections(model: type[BaseModel], path: str, seen: dict[type[BaseModel], str]) -> Iterator[Section]:
    """`model`'s section and, after it, those of the models its fields hold, depth first; a model
    documented before (`seen`) is linked, not repeated."""
    seen[model] = path
    sec = Section(path, model)
    nested: list[tuple[str, type[BaseModel]]] = []
    for name, info in model.model_fields.items():
        key = f"{path}.{name}" if path else name
        sub = submodel(info.annotation)
        many = _is_list(info.annotation)
        sec.rows.append(row(model, name, info, key, sub, seen, many))
        if sub is not None and sub not in seen and not issubclass(sub, RootModel):
            nested.append((f"{key}[]" if many else key, sub))
            seen[sub] = f"{key}[]" if many else key
    yield sec
    for key, sub in nested:
        yield from sections(sub, key, seen)


def render(sec: Section) -> str:
    title = sec.path or "top level"
    out = [
        f"### {title} {{ #{anchor(sec.path or 'top-level', sec.model.__name__ if not sec.path else '')} }}"
    ]
    out += ["", cell(_doc(sec.model)), ""]
    out.append(table(["Key", "Type", "Default", "Description"], sec.rows))
    return "\n".join(out)


def row(
    model: type[BaseModel],
    name: str,
    info: FieldInfo,
    key: str,
    sub: type[BaseModel] | None,
    seen: dict[type[BaseModel], str],
    many: bool,
) -> list[str]:
    description = info.description or (_doc(sub) if sub is not None else "")
    if not description:
        raise MissingDescription(
            f"{model.__module__}.{model.__qualname__}.{name} ({key}): no description; give it "
            "Field(description=...) so the configuration reference can say what it does"
        )
    if sub is not None and issubclass(sub, RootModel):
        kind, default = "list of filters", "see [Filters](filters.md)"
    elif sub is not None:
        target = seen.get(sub, f"{key}[]" if many else key)
        link = f"[{target}](#{anchor(target.replace('[]', ''))})"
        kind, default = (f"list of {link}" if many else f"section {link}"), ""
        if many:
            default = yaml_value(_default(info)) if _default(info) is not PydanticUndefined else "required"
            default = code(default) if default != "required" else "**required**"
    else:
        kind = words(info.annotation, info.metadata)
        value = _default(info)
        default = "**required**" if value is PydanticUndefined else code(yaml_value(_jsonable(value)))
    return [code(key), kind, default, cell(description)]


def _default(info: FieldInfo) -> Any:
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]
    return info.default


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _doc(model: type[BaseModel] | None) -> str:
    doc = model.__doc__ if model is not None else None
    if not doc or doc == BaseModel.__doc__ or doc.startswith("!!! abstract"):
        return ""
    text = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    return re.sub(r"``([^`]+)``", r"`\1`", text)  # reST literals, as the docstrings write them


def _args(annotation: Any) -> tuple[Any, ...]:
    return typing.get_args(annotation)


def _is_optional(annotation: Any) -> bool:
    return _is_union(annotation) and type(None) in _args(annotation)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _is_list(annotation: Any) -> bool:
    inner = [a for a in _args(annotation) if a is not type(None)] if _is_union(annotation) else [annotation]
    return any(typing.get_origin(a) in (list, tuple) for a in inner)


def submodel(annotation: Any) -> type[BaseModel] | None:
    """The config model a field holds (itself, optional, or a list of them), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in _args(annotation):
        found = submodel(arg)
        if found is not None:
            return found
    return None


def words(annotation: Any, metadata: list[Any] | None = None) -> str:
    """A type in plain words: ``integer ≥ 1``, ``list of text``, ``one of: a, b``, ``… or null``."""
    bounds = _bounds(metadata or [])
    if _is_union(annotation):
        kinds = [words(a) for a in _args(annotation) if a is not type(None)]
        text = " or ".join(kinds)
        text = f"{text} {bounds}".strip() if bounds else text
        return f"{text} or null" if _is_optional(annotation) else text
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "one of: " + ", ".join(code(yaml_value(v)) for v in _args(annotation))
    if origin in (list, tuple, set, frozenset):
        inner = _args(annotation)
        return f"list of {words(inner[0]) if inner else 'values'}" + (f" ({bounds})" if bounds else "")
    if origin is dict:
        k, v = _args(annotation)
        return f"mapping of {words(k)} to {words(v)}"
    if origin is typing.Annotated:
        return words(_args(annotation)[0], list(getattr(annotation, "__metadata__", ())))
    if annotation is Any:
        return "any value"
    base = {int: "integer", float: "number", str: "text", bool: "true or false"}.get(annotation)
    if base is None:
        base = getattr(annotation, "__name__", str(annotation))
    return f"{base} {bounds}".strip()


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _bounds(metadata: list[Any]) -> str:
    said = []
    for m in metadata:
        for kind, attr, sign in ((Ge, "ge", "≥"), (Gt, "gt", ">"), (Le, "le", "≤"), (Lt, "lt", "<")):
            if isinstance(m, kind):
                said.append(f"{sign} {_number(getattr(m, attr))}")
        if isinstance(m, MinLen) and m.min_length:
            said.append(f"at least {m.min_length} long")
        if isinstance(m, MaxLen):
            said.append(f"at most {m.max_length} long")
    return ", ".join(said)
