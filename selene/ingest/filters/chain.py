"""The configured filters, in order, as the ingest stage calls them: before and after cleaning."""

from __future__ import annotations

from selene.ingest.filters.base import Filter, Reason
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.registry import get_filter
from selene.ingest.filters.spec import FiltersConfig

__all__ = ["FilterChain"]


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

    def check(self, text: str, source: str) -> Reason | None:
        """The filters on the cleaned text, in order; the first failing rule wins. Returns
        (reason, detail) or None to keep."""
        doc = DocView(text)
        for f in self.filters:
            if source not in f.exclude_sources:
                reason = f.filter(doc)
                if reason is not None:
                    return reason
        return None
