"""Pages removed by their URL: block lists of domains, exact URLs and URL substrings, from files.

The lists are the user's (UT1's blacklists, the FineWeb/RefinedWeb adult-domain list, a company's
own), in the formats they are published in (see :mod:`.lists`). A domain entry blocks that host and
every subdomain of it (UT1's meaning: ``example.com`` blocks ``www.example.com`` and
``cdn.eu.example.com``); a URL entry blocks that page, compared without scheme, ``www.`` and trailing
slash; a substring entry blocks every URL holding it, case-insensitive. A removed page's detail names
the matching entry and the list file it came from. Records without a URL are kept (`missing_url`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from selene.errors import ConfigError
from selene.ingest.filters.base import Filter, FilterConfig, Reason
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.lists import read_list, read_ut1_category
from selene.ingest.filters.registry import register_filter

__all__ = ["URLFilter", "normalize_url"]


def normalize_url(url: str) -> str:
    """``host/path?query`` of `url`: lowercase host without ``www.``, user or port; no scheme,
    fragment or trailing slash."""
    host, rest = _parts(url.strip())
    return _normalized(host, rest)


def _normalized(host: str, rest: str) -> str:
    return (host.removeprefix("www.") + rest).rstrip("/")


def _parts(url: str) -> tuple[str, str]:
    """(host, path?query) of `url`: the host lowercase, without user, port or trailing dot ("" when
    there is none). By string operations, not `urlsplit`: this runs once per web page."""
    start = url.find("://")
    rest = url[start + 3 :] if start >= 0 else url
    end = len(rest)
    for sep in "/?#":
        k = rest.find(sep, 0, end)
        if k >= 0:
            end = k
    host, path = rest[:end], rest[end:].partition("#")[0]
    if "@" in host:
        host = host.rpartition("@")[2]
    if host.startswith("["):  # an IPv6 literal, with or without a port
        return host[1:].partition("]")[0].lower(), path
    return host.partition(":")[0].rstrip(".").lower(), path


@register_filter
class URLFilter(Filter):
    """Block lists of domains (with their subdomains), exact URLs and URL substrings."""

    name = "url"

    class Config(FilterConfig):
        """Block lists, each a file (or a UT1 category directory); at least one must be given."""

        lists: list[str] = Field(
            default_factory=list,
            description="UT1 category directories (blacklists/<category>/: domains, urls).",
        )
        domains: list[str] = Field(
            default_factory=list, description="Files of blocked domains, one per line."
        )
        urls: list[str] = Field(default_factory=list, description="Files of blocked URLs, one per line.")
        substrings: list[str] = Field(
            default_factory=list, description="Files of substrings no URL may hold, one per line."
        )
        url_key: str = Field(default="url", description="The metadata field holding a record's URL.")
        missing_url: Literal["keep", "remove"] = Field(
            default="keep", description="What becomes of a record without a URL."
        )

        def input_files(self) -> list[str]:
            return [*self.lists, *self.domains, *self.urls, *self.substrings]

    cfg: Config

    def __init__(self, cfg: Config) -> None:
        super().__init__(cfg)
        if not cfg.input_files():
            raise ConfigError("filters.url: no block list given; set lists, domains, urls or substrings")
        self.domains: dict[str, str] = {}
        self.urls: dict[str, str] = {}
        for d in cfg.lists:
            doms, urls = read_ut1_category(d, "filters.url.lists")
            self._add(self.domains, doms, d, _domain)
            self._add(self.urls, urls, d, normalize_url)
        for f in cfg.domains:
            self._add(self.domains, read_list(f, "filters.url.domains"), f, _domain)
        for f in cfg.urls:
            self._add(self.urls, read_list(f, "filters.url.urls"), f, normalize_url)
        subs: dict[str, str] = {}
        for f in cfg.substrings:
            self._add(subs, read_list(f, "filters.url.substrings"), f, str.lower)
        self.substrings = subs
        # One alternation, longest first, so the reported entry is the longest at the first match.
        self.sub_re = (
            re.compile("|".join(map(re.escape, sorted(subs, key=len, reverse=True)))) if subs else None
        )

    @staticmethod
    def _add(table: dict[str, str], entries: list[str], origin: str, norm: object) -> None:
        for e in entries:
            key = norm(e)  # type: ignore[operator]
            if key:
                table.setdefault(key, origin)

    def filter(self, doc: DocView) -> Reason | None:
        url = doc.meta.get(self.cfg.url_key)
        if not isinstance(url, str) or not url.strip():
            if self.cfg.missing_url == "remove":
                return self.reject("missing_url", f"no {self.cfg.url_key!r} in the record's metadata")
            return None
        host, rest = _parts(url.strip())
        if self.domains:
            cand = host
            while "." in cand:  # the host, then each parent domain (not the bare TLD)
                if cand in self.domains:
                    return self.reject("domain", f"host={host} matches {cand!r} in {self.domains[cand]}")
                cand = cand.partition(".")[2]
        if self.urls:
            norm = _normalized(host, rest)
            if norm in self.urls:
                return self.reject("url", f"url={_clip(url)} listed in {self.urls[norm]}")
        if self.sub_re is not None and (m := self.sub_re.search(url.lower())):
            return self.reject(
                "substring", f"url={_clip(url)} holds {m.group(0)!r} from {self.substrings[m.group(0)]}"
            )
        return None


def _domain(entry: str) -> str:
    """A domain list entry as a host: lowercase, no scheme, path, port or trailing dot (a listed
    ``www.example.com`` blocks that host and its subdomains, not ``example.com``)."""
    return _parts(entry.strip())[0]


def _clip(url: str, n: int = 120) -> str:
    return url if len(url) <= n else url[: n - 1] + "…"
