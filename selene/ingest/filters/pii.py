"""Personal data redacted, not removed: e-mail addresses, IP addresses and (optionally) phone
numbers replaced by placeholders, as datatrove's ``PIIFormatter`` and BigScience's ROOTS pipeline do.

E-mail addresses follow RFC 5322's dot-atom form (the widely used "general e-mail regex", an IPv4
literal domain included). IP addresses are dotted IPv4 quads with octets up to 255, standing alone:
not inside a longer dotted number ("1.2.3.4.5", version strings) or word; with `public_ips_only`
(the default) only globally routable ones are redacted, so 127.0.0.1, 10.x, 192.168.x stay (they
identify no one, and code and docs are full of them). Phone numbers (off by default: the patterns
also match many non-phone numbers) are North American numbers with separators and ``+``-prefixed
international ones. The manifest counts redactions per kind (``pii.email`` ...).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator

from pydantic import Field

from selene.ingest.filters.base import Edit, Filter, FilterConfig
from selene.ingest.filters.doc import DocView
from selene.ingest.filters.registry import register_filter

__all__ = ["PIIFilter"]

_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
_IPV4 = rf"(?:{_OCTET}\.){{3}}{_OCTET}"
EMAIL = re.compile(rf"\b{_ATOM}(?:\.{_ATOM})*@(?:(?:{_LABEL}\.)+{_LABEL}|\[{_IPV4}\])")
IP = re.compile(rf"(?<![\w.]){_IPV4}(?!\.?\w)")
PHONE = re.compile(
    r"(?<![\w+])(?:"
    r"\+\d{1,3}[ .-]?(?:\(\d{1,4}\)|\d{1,4})(?:[ .-]?\d{2,4}){2,3}"  # +44 20 7946 0958, +1-202-555-0143
    r"|(?:\(\d{3}\) ?|\d{3}[.-])\d{3}[.-]\d{4}"  # (202) 555-0143, 202-555-0143, 202.555.0143
    r")(?![\w-])"
)


_DIGIT_DOT = re.compile(r"\d\.\d")  # where an IPv4 address may be: cheap to find, rare in prose
_SPACE = " \t\n\r\f\v"


def _at_signs(text: str) -> Iterator[int]:
    i = text.find("@")
    while i >= 0:
        yield i
        i = text.find("@", i + 1)


def _in_tokens(text: str, hits: Iterable[int], sub: Callable[[str], tuple[str, int]]) -> tuple[str, int]:
    """`sub` applied to the whitespace-delimited pieces of `text` around `hits` (positions where a
    match may be), the rest left as it is: the same result as `sub` on the whole text, since no
    e-mail or IP match holds whitespace and both patterns see whitespace as a boundary, but the
    regular expression scans a few tokens instead of every position of the page."""
    out: list[str] = []
    done = total = 0
    for i in hits:
        if i < done:
            continue  # inside the token just rewritten
        left = max(text.rfind(ch, done, i) for ch in _SPACE) + 1
        left = max(left, done)
        right = min((k for k in (text.find(ch, i) for ch in _SPACE) if k >= 0), default=len(text))
        piece, n = sub(text[left:right])
        out += [text[done:left], piece]
        total += n
        done = right
    if not out:
        return text, 0
    out.append(text[done:])
    return "".join(out), total


@register_filter
class PIIFilter(Filter):
    """Replaces e-mail addresses, IP addresses and optionally phone numbers with placeholders."""

    name = "pii"

    class Config(FilterConfig):
        """What is redacted, and by what."""

        emails: bool = Field(default=True, description="Redact e-mail addresses.")
        ips: bool = Field(default=True, description="Redact IPv4 addresses.")
        public_ips_only: bool = Field(
            default=True, description="Only globally routable IPs (not 10.x, 127.x, 192.168.x ...)."
        )
        phones: bool = Field(
            default=False, description="Redact phone numbers (NANP with separators, +international)."
        )
        email_placeholder: str = Field(default="email@example.com", description="What an e-mail address becomes.")
        ip_placeholder: str = Field(default="0.0.0.0", description="What an IP address becomes.")
        phone_placeholder: str = Field(default="<PHONE>", description="What a phone number becomes.")

    cfg: Config

    def filter(self, doc: DocView) -> Edit | None:
        c = self.cfg
        text = doc.text
        changes: dict[str, int] = {}
        if c.emails and "@" in text:
            text, n = _in_tokens(text, _at_signs(text), lambda t: EMAIL.subn(c.email_placeholder, t))
            changes["email"] = n
        if c.ips and "." in text:
            text, n = _in_tokens(text, (m.start() for m in _DIGIT_DOT.finditer(text)), self._redact_ips)
            changes["ip"] = n
        if c.phones:
            text, n = PHONE.subn(c.phone_placeholder, text)
            changes["phone"] = n
        return Edit(text, changes) if any(changes.values()) else None

    def _redact_ips(self, text: str) -> tuple[str, int]:
        count = 0

        def sub(m: re.Match[str]) -> str:
            nonlocal count
            try:
                ip = ipaddress.IPv4Address(m.group(0))
            except ValueError:  # a leading zero ("01.2.3.4"): not how an address is written
                return m.group(0)
            if self.cfg.public_ips_only and not ip.is_global:
                return m.group(0)
            count += 1
            return self.cfg.ip_placeholder

        out = IP.sub(sub, text)
        return out, count
