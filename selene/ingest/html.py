"""HTML bytes → main text, with resiliparse (charset detection, DOM parse, main-content extraction)."""

from __future__ import annotations

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import bytes_to_str, detect_encoding
from resiliparse.parse.html import HTMLTree

HTML_TYPES = ("text/html", "application/xhtml+xml")


def is_html(content_type: str | None, body: bytes) -> bool:
    """HTML by the declared media type or, when none is declared, by sniffing the first bytes."""
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower()
        if mime:
            return mime in HTML_TYPES
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def charset_of(content_type: str | None) -> str | None:
    """The charset parameter of an HTTP Content-Type header, if any."""
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'").lower()
    return None


def decode_html(body: bytes, http_charset: str | None) -> tuple[str, str]:
    """Decode HTML bytes: the HTTP charset if declared, else the <meta> charset, else uchardet.

    Returns the text and the charset used. Undecodable bytes fall back to UTF-8 then
    Windows-1252 (resiliparse's `bytes_to_str`), so decoding never raises.
    """
    charset = http_charset or detect_encoding(body, from_html_meta=True) or "utf-8"
    return bytes_to_str(body, charset), charset


def html_to_text(body: bytes, http_charset: str | None = None) -> tuple[str, str]:
    """Main content of an HTML page as plain text (navigation, headers, footers removed)."""
    html, charset = decode_html(body, http_charset)
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
