"""Filter names → filter classes: the built-in filters by name, anyone's by import path.

The YAML names a filter either by its registered name (``gopher_quality``) or by the import path
of its class (``mypkg.filters:MyFilter``), imported only when a config names it, in every process
that validates the config or builds the chain (so the module must be importable there too).
"""

from __future__ import annotations

import importlib
from typing import TypeVar

from selene.errors import ConfigError
from selene.ingest.filters.base import Filter, FilterConfig

__all__ = ["filter_names", "get_filter", "register_filter"]

F = TypeVar("F", bound=type[Filter])

_REGISTRY: dict[str, type[Filter]] = {}
_EXAMPLE = "mypkg.filters:MyFilter"


def register_filter(cls: F) -> F:
    """Class decorator: make `cls` available under ``cls.name``."""
    if not (isinstance(cls, type) and issubclass(cls, Filter)):
        raise TypeError(f"register_filter: {cls!r} is not a subclass of selene.ingest.filters.Filter")
    if not cls.name or ":" in cls.name:
        raise ValueError(f"register_filter: {cls.__qualname__}.name must be non-empty and without ':'")
    known = _REGISTRY.get(cls.name)
    if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(
            f"register_filter: the name {cls.name!r} is taken by {known.__module__}.{known.__qualname__}"
        )
    _REGISTRY[cls.name] = cls
    return cls


def filter_names() -> list[str]:
    """The registered filter names, in registration order (the built-ins first)."""
    return list(_REGISTRY)


def get_filter(ref: str) -> type[Filter]:
    """The filter class `ref` names: a registered name or ``module:Class``. ConfigError otherwise,
    saying what is accepted."""
    if ":" not in ref:
        cls = _REGISTRY.get(ref)
        if cls is None:
            raise ConfigError(
                f"unknown filter {ref!r}; known: {', '.join(_REGISTRY)}, or your own as module:Class "
                f"(e.g. {_EXAMPLE})"
            )
        return cls
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"filter {ref!r}: an import path is module:Class, e.g. {_EXAMPLE}")
    try:
        obj: object = importlib.import_module(module_name)
    except Exception as e:  # the user's module: any error in it is a configuration problem
        raise ConfigError(
            f"filter {ref!r}: cannot import module {module_name!r}: {type(e).__name__}: {e}"
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"filter {ref!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, Filter)):
        raise ConfigError(
            f"filter {ref!r} is not a filter: expected a subclass of selene.ingest.filters.Filter, "
            f"got a {type(obj).__name__}"
        )
    if not (isinstance(obj.Config, type) and issubclass(obj.Config, FilterConfig)):
        raise ConfigError(f"filter {ref!r}: its Config must be a subclass of selene.config.FilterConfig")
    return obj
