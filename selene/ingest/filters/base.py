"""What a filter is: a named class with its own config model and one question, keep or why not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from selene.config.base import Strict

if TYPE_CHECKING:
    from selene.ingest.filters.doc import DocView

__all__ = ["Edit", "Filter", "FilterConfig", "Reason", "Rule", "RuleFilter", "above", "below"]

Reason = tuple[str, str]
"""(reason, detail): ``("filter:gopher_quality.min_words", "words=12 < 50")``. The reason becomes a
counter in the manifest; the detail (the measurement and the bound) is stored with the document in
``removed.parquet``."""


@dataclass(frozen=True, slots=True)
class Edit:
    """A filter's rewrite of a document it keeps: the new text and what changed, counted by kind
    (``{"email": 2}``, ``{"lines_removed": 7}``). The chain counts each kind as ``<filter>.<kind>``
    in the manifest, and the filters after this one see the new text."""

    text: str
    changes: dict[str, int]


class FilterConfig(Strict):
    """Settings every filter has; each filter's own config model subclasses this one (see
    :class:`Filter`)."""

    enabled: bool = Field(default=True, description="Run this filter; false leaves it in the config but off.")
    exclude_sources: list[str] = Field(
        default_factory=list,
        description="Sources this filter does not apply to (e.g. Github for prose rules).",
    )

    def input_files(self) -> list[str]:
        """Files the filter reads (word and block lists): part of the stage's inputs and fingerprint."""
        return []


class Filter:
    """Base of every document filter (datatrove's ``BaseFilter``, returning the reason as data).

    A subclass sets `name` (the ``<filter>`` of its reasons; default: the class name) and `Config`
    (a :class:`FilterConfig` subclass, usually nested in the filter class: its settings, validated from the YAML), and
    implements :meth:`filter`. It is built once per worker from its validated config, so expensive
    setup (a word list, a model) belongs in ``__init__``. Sources listed in the config's
    `exclude_sources` never reach it, and a filter with ``enabled: false`` is not built at all.
    """

    name: ClassVar[str] = ""
    Config: ClassVar[type[FilterConfig]] = FilterConfig

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__

    def __init__(self, cfg: FilterConfig) -> None:
        self.cfg = cfg
        self.exclude_sources = frozenset(cfg.exclude_sources)

    def filter(self, doc: DocView) -> Reason | Edit | None:
        """None to keep `doc` (cleaned text: ``doc.text``), else (reason, detail) to remove it, or an
        :class:`Edit` to keep it rewritten (C4's line removal, PII redaction). The view also carries
        measurements shared with the other filters (``doc.tokens``, ``doc.lines``, ``doc.meta`` ...)."""
        raise NotImplementedError

    def precheck(self, text: str) -> Reason | None:
        """None to keep, else (reason, detail), on the raw text before cleaning. Only for cheap
        bounds that spare the cleaning of hopeless records (the length filter's `max_chars`)."""
        return None

    def reject(self, rule: str, detail: str) -> Reason:
        """The reason ``filter:<name>.<rule>`` with its detail."""
        return f"filter:{self.name}.{rule}", detail


Rule = Callable[["DocView"], "str | None"]


class RuleFilter(Filter):
    """A filter made of named rules, cheapest first; the first failing rule names the reason.

    A rule takes the document view and returns None (pass) or the measurement that failed.
    """

    def __init__(self, cfg: FilterConfig) -> None:
        super().__init__(cfg)
        self.rules: list[tuple[str, Rule]] = []

    def filter(self, doc: DocView) -> Reason | None:
        for rule, measure in self.rules:
            detail = measure(doc)
            if detail is not None:
                return self.reject(rule, detail)
        return None


def above(name: str, value: float, bound: float, fmt: str = ".3f") -> str | None:
    """``name=value > bound`` if value is above the bound, else None."""
    return f"{name}={value:{fmt}} > {bound}" if value > bound else None


def below(name: str, value: float, bound: float, fmt: str = ".3f") -> str | None:
    """``name=value < bound`` if value is below the bound, else None."""
    return f"{name}={value:{fmt}} < {bound}" if value < bound else None
