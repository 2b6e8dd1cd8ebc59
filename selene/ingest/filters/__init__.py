"""Document filters: a registry of named filter classes, each with its own config model.

As in datatrove, every filter either keeps a document or names why not: ``filter(doc)`` returns
None or ``(reason, detail)``; the reason (``filter:<filter>.<rule>``) becomes a counter and the
detail (the measurement and the bound) is stored with the removed document. The ingest stage runs
the configured :class:`FilterChain` twice per record: ``precheck`` on the raw text (cheap bounds
only) and ``run`` on the cleaned text; a filter may also keep a document rewritten (:class:`Edit`).

* :mod:`.base`: :class:`Filter` (subclass it for your own), :class:`RuleFilter`, the reason helpers.
* :mod:`.registry`: name → class; the built-ins by name, anyone's as ``module:Class``.
* :mod:`.doc`: :class:`DocView`, the measurements all filters share, computed once per document.
* :mod:`.builtin`: ``length``, ``gopher_quality``, ``gopher_repetition``.
* :mod:`.c4`, :mod:`.fineweb`, :mod:`.url`, :mod:`.pii`: the published filter sets of C4 and
  FineWeb, URL block lists, PII redaction (an editing filter: it returns an :class:`Edit`).
* :mod:`.spec`: :class:`FiltersConfig`, the chain as configured (names, order, settings).
* :mod:`.chain`: :class:`FilterChain`, the configured filters in order.

Which filters run, in which order and with which settings is :class:`FiltersConfig`.
"""

from selene.ingest.filters.base import Edit, Filter, FilterConfig, Reason, RuleFilter, above, below
from selene.ingest.filters.builtin import GopherQualityFilter, GopherRepetitionFilter, LengthFilter
from selene.ingest.filters.c4 import C4Filter
from selene.ingest.filters.chain import FilterChain, Verdict
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.fineweb import FineWebFilter
from selene.ingest.filters.pii import PIIFilter
from selene.ingest.filters.registry import filter_names, get_filter, register_filter
from selene.ingest.filters.spec import FiltersConfig, FilterSpec
from selene.ingest.filters.url import URLFilter

__all__ = [
    "C4Filter",
    "DocView",
    "Edit",
    "Filter",
    "FilterChain",
    "FilterConfig",
    "FilterSpec",
    "FiltersConfig",
    "FineWebFilter",
    "GopherQualityFilter",
    "GopherRepetitionFilter",
    "LengthFilter",
    "PIIFilter",
    "Reason",
    "RuleFilter",
    "URLFilter",
    "Verdict",
    "above",
    "below",
    "filter_names",
    "get_filter",
    "register_filter",
]
