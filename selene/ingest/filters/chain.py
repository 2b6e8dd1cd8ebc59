"""The configured filters, in order, as the ingest stage calls them: before and after cleaning."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from selene.ingest.filters.base import Edit, Filter, Reason
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.registry import get_filter
from selene.ingest.filters.spec import FiltersConfig

__all__ = ["FilterChain", "Verdict"]


@dataclass(slots=True)
class Verdict:
    """What the chain made of one document: removed (`reason` set) or kept as `text`, which the
    editing filters (``c4``, ``pii``) may have rewritten; `edits` counts their changes by
    ``<filter>.<kind>`` (``{"pii.email": 2}``)."""

    text: str
    reason: Reason | None = None
    edits: dict[str, int] = field(default_factory=dict)


class FilterChain:
    """The enabled filters of `cfg`, in its order; the first that rejects a document names the reason."""

    def __init__(self, cfg: FiltersConfig) -> None:
        self.cfg = cfg
        self.filters: list[Filter] = [get_filter(s.name)(s.config) for s in cfg if s.config.enabled]
        # Only filters that override the hook take part in the precheck (today: length.max_chars).
        self._pre = [f for f in self.filters if type(f).precheck is not Filter.precheck]

    def __reduce__(self) -> tuple[type[FilterChain], tuple[FiltersConfig]]:
        # Rules are closures; a worker process rebuilds them from the config.
        return FilterChain, (self.cfg,)

    def precheck(self, text: str, source: str) -> Reason | None:
        """Cheap checks on the raw (uncleaned) text, e.g. the length filter's `max_chars`. None = keep."""
        for f in self._pre:
            if source not in f.exclude_sources:
                reason = f.precheck(text)
                if reason is not None:
                    return reason
        return None

    def run(self, text: str, source: str, meta: Mapping[str, Any] | None = None) -> Verdict:
        """The filters on the cleaned text, in order: the first failing rule removes the document;
        an editing filter hands its rewritten text to the filters after it."""
        doc = DocView(text, meta)
        edits: dict[str, int] = {}
        for f in self.filters:
            if source in f.exclude_sources:
                continue
            out = f.filter(doc)
            if out is None:
                continue
            if isinstance(out, Edit):
                for kind, n in out.changes.items():
                    if n:
                        key = f"{f.name}.{kind}"
                        edits[key] = edits.get(key, 0) + n
                if out.text != doc.text:
                    doc = DocView(out.text, meta)
                continue
            return Verdict(doc.text, out, edits)
        return Verdict(doc.text, None, edits)

    def check(self, text: str, source: str, meta: Mapping[str, Any] | None = None) -> Reason | None:
        """The decision of :meth:`run` alone: (reason, detail), or None to keep."""
        return self.run(text, source, meta).reason
