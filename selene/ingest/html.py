"""HTML bytes → main text: charset detection (resiliparse), then one of three extractors.

- ``selene`` (default): resiliparse's DOM and main-content walk with selene's boilerplate rules on
  top (`selene.ingest.extract`): comments, related posts, share rows, newsletter boxes, docs chrome.
- ``resiliparse``: resiliparse's main-content extraction alone.
- ``trafilatura``: trafilatura's `extract` (an optional extra: ``pip install 'selene[web]'``); about
  ten times slower than the other two.
"""

from __future__ import annotations

import codecs
from typing import Literal

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import bytes_to_str, detect_encoding
from resiliparse.parse.html import HTMLTree

from selene.errors import ConfigError
from selene.ingest.extract import main_text_of_bytes

HTML_TYPES = ("text/html", "application/xhtml+xml")
Extractor = Literal["selene", "resiliparse", "trafilatura"]


def is_html(content_type: str | None, body: bytes) -> bool:
    """HTML by the declared media type or, when none is declared, by sniffing the first bytes."""
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower()
        if mime:
            return mime in HTML_TYPES
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


_CONTROL = bytes(range(0, 9)) + b"\x0b\x0e\x0f" + bytes(range(0x10, 0x1B)) + bytes(range(0x1C, 0x20))


def looks_binary(body: bytes) -> bool:
    """A body that is not text whatever it declares: a NUL byte, or more than 5% control bytes, in
    its first 4 KiB (PDFs, images and archives served as text/html). UTF-16 pages (NULs between
    ASCII letters) are text: they start with a byte-order mark."""
    head = body[:4096]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    if b"\x00" in head:
        return True
    return len(head) - len(head.translate(None, _CONTROL)) > 0.05 * len(head)


def charset_of(content_type: str | None) -> str | None:
    """The charset parameter of an HTTP Content-Type header, if any."""
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'").lower()
    return None


def _charset(body: bytes, http_charset: str | None) -> str:
    """The HTTP charset if declared and known, else the <meta> charset, else uchardet's guess, else
    UTF-8. A label no codec knows ("utf8mb4", "none", "x-user-defined": servers send them) is passed
    over, as browsers do, rather than losing the page."""
    if http_charset:
        try:
            codecs.lookup(http_charset)
            return http_charset
        except LookupError:
            pass
    return detect_encoding(body, from_html_meta=True) or "utf-8"


def decode_html(body: bytes, http_charset: str | None) -> tuple[str, str]:
    """Decode HTML bytes with `_charset`. Returns the text and the charset used. Undecodable bytes
    fall back to UTF-8 then Windows-1252 (resiliparse's `bytes_to_str`), so decoding never raises.
    """
    charset = _charset(body, http_charset)
    return bytes_to_str(body, charset), charset


def html_to_text(body: bytes, http_charset: str | None = None, extractor: Extractor = "selene") -> tuple[str, str]:
    """Main content of an HTML page as plain text (navigation, headers, footers removed), and the
    charset it was decoded with."""
    if extractor == "selene":
        charset = _charset(body, http_charset)
        return main_text_of_bytes(body, charset), charset
    html, charset = decode_html(body, http_charset)
    if extractor == "trafilatura":
        return _trafilatura(html), charset
    tree = HTMLTree.parse(html)
    text = extract_plain_text(
        tree,
        preserve_formatting=True,
        main_content=True,
        list_bullets=True,
        alt_texts=False,
        links=False,
        form_fields=False,
        noscript=False,
    )
    return text, charset


def check_extractor(extractor: str) -> None:
    """Refuse an extractor that cannot run here, before any file is read."""
    if extractor == "trafilatura":
        try:
            import trafilatura  # noqa: F401
        except ImportError:
            raise ConfigError(
                "extractor: trafilatura is not installed; pip install 'selene[web]' (or 'trafilatura>=2,<3'), "
                "or use extractor: selene"
            ) from None


def _trafilatura(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, include_comments=False, include_tables=True, deduplicate=False) or ""
