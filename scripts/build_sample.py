#!/usr/bin/env python3
"""Build the bundled sample corpus (``data/sample/``) from real text already on this machine.

Nothing is downloaded and nothing is invented: the text comes from the Python installation
(``pydoc_data`` topics, standard-library sources, ``pydoc`` renderings of stdlib modules, IDLE's
Sphinx help page), from the installed distributions' metadata and license files, and, where present,
from Debian's copyright files and gettext catalogs. Missing optional sources only mean fewer documents.

Outputs (all byte-for-byte reproducible on the same machine; see ``data/sample/README.md``):

* ``pile/NN.jsonl.zst``: Pile-format shards, ``{"text": ..., "meta": {"pile_set_name": ...}}``.
* ``cc/CC-SAMPLE-00000.warc.gz``: a CommonCrawl-style WARC (request/response/metadata per URL).
* ``cc/CC-SAMPLE-00000.warc.wet.gz``: the matching WET file (``conversion`` records, plain text).

Usage: ``python scripts/build_sample.py [--out DIR]`` (``make sample``).
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import email.parser
import email.policy
import gettext
import gzip
import hashlib
import html
import importlib
import io
import json
import os
import pydoc
import random
import re
import struct
import sys
import sysconfig
import time
import uuid
import warnings
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import zstandard

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "data" / "sample"

SEED = 20240220
ZSTD_LEVEL = 10
N_PILE_SHARDS = 3

# Size budgets (UTF-8 bytes of text) keep the sample at ~10 MB of text and < 6 MB on disk.
GITHUB_MAX_FILE = 50_000
GITHUB_BUDGET = 3_800_000
DOCSTRINGS_BUDGET = 1_200_000
LICENSE_MAX_FILE = 64_000
PYPI_MAX_DOC = 100_000
DEBIAN_MAX_FILE = 16_000
DEBIAN_BUDGET = 1_300_000
TRANSLATION_MAX_DOC = 40_000
MODULE_PAGE_MAX = 100_000
WET_PAGES = 100

TRANSLATION_LANGS = ("de", "fr", "es", "it", "pt_BR", "nl", "pl", "sv", "cs", "ru", "ja", "zh_CN")
# Catalogs of command-line tools: their --help texts are real prose, not just UI labels.
TRANSLATION_DOMAINS = ("grep", "sed", "diffutils", "findutils")
LANG_ISO3 = {"de": "deu", "fr": "fra", "en": "eng"}

# Modules never imported for pydoc pages: side effects on import (browser, prints, Tk, terminal
# escapes), or documentation that would leak this machine's environment (os.environ, sys.path).
PYDOC_DENY = frozenset(
    {
        "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "ensurepip", "venv",
        "lib2to3", "distutils", "readline", "rlcompleter", "os", "posix", "nt", "sys", "site",
        "sysconfig", "builtins", "pydoc", "pydoc_data", "msvcrt", "winreg", "winsound", "nturl2path",
    }
)  # fmt: skip
STDLIB_SKIP_DIRS = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"})

SITE = "https://docs.example.org"
HOST = "docs.example.org"
SERVER_IP = "192.0.2.17"  # TEST-NET-1: documentation address, never routable
CRAWL_START = datetime(2024, 2, 20, 10, 0, 0, tzinfo=timezone.utc)
WARC_NAME = "CC-SAMPLE-00000.warc.gz"
WET_NAME = "CC-SAMPLE-00000.warc.wet.gz"

# Real nginx error bodies: what a crawler stores for redirects and missing pages.
NGINX_301 = (
    "<html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n"
    "<center><h1>301 Moved Permanently</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n"
    "</body>\r\n</html>\r\n"
)
NGINX_404 = (
    "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n"
    "<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n"
    "</body>\r\n</html>\r\n"
)

SITE_CSS = """body{margin:0;font-family:system-ui,sans-serif;color:#222}
.cookie-notice{position:fixed;bottom:0;width:100%;background:#333;color:#fff;padding:8px}
.site-header{background:#2b5b84;color:#fff;padding:6px 16px}.site-header a{color:#fff}
.site-header ul{display:inline;list-style:none}.site-header li{display:inline;margin:0 8px}
.breadcrumbs{padding:4px 16px;font-size:90%}.layout{display:flex}
.sidebar{width:220px;padding:8px 16px;background:#f4f4f4}main{flex:1;padding:8px 24px}
footer{border-top:1px solid #ccc;padding:8px 16px;font-size:85%}
"""


# --------------------------------------------------------------------------------------------
# Pile documents


@dataclass(frozen=True)
class Doc:
    source: str
    text: str


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def read_utf8(path: Path) -> str | None:
    """File text, or None when it is not UTF-8 (such files are skipped rather than mangled)."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def sha1_hex(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def pydoc_topic_docs() -> list[Doc]:
    from pydoc_data.topics import topics

    return [Doc("PythonReference", topics[key].strip()) for key in sorted(topics)]


def stdlib_sources() -> list[tuple[str, Path]]:
    """(relative path, path) of every stdlib .py file outside the test suites, sorted."""
    root = stdlib_dir()
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in STDLIB_SKIP_DIRS)
        for name in sorted(filenames):
            # _sysconfigdata_* is generated at install time: build flags of this machine, not source.
            if name.endswith(".py") and not name.startswith("_sysconfigdata"):
                path = Path(dirpath) / name
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def in_github_half(relpath: str) -> bool:
    """Split stdlib files by a hash of their path, so Github and Docstrings use different files."""
    return int(sha1_hex(relpath)[:8], 16) % 2 == 0


def github_docs(sources: list[tuple[str, Path]]) -> list[Doc]:
    docs: list[Doc] = []
    used = 0
    for relpath, path in sources:
        if not in_github_half(relpath) or not 200 <= path.stat().st_size <= GITHUB_MAX_FILE:
            continue
        text = read_utf8(path)
        if text is None:
            continue
        used += len(text.encode("utf-8"))
        if used > GITHUB_BUDGET:
            break
        docs.append(Doc("Github", text))
    return docs


def module_docstrings(relpath: str, source: str) -> str:
    """Every docstring of a module, each under its qualified name, in source order."""
    module = relpath.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    tree = ast.parse(source)
    chunks: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        doc = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
        if doc:
            chunks.append(f"{prefix}\n\n{doc}")
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{prefix}.{child.name}")

    visit(tree, module)
    return "\n\n\n".join(chunks)


def docstring_docs(sources: list[tuple[str, Path]]) -> list[Doc]:
    docs: list[Doc] = []
    used = 0
    for relpath, path in sources:
        if in_github_half(relpath):
            continue
        source = read_utf8(path)
        if source is None:
            continue
        try:
            text = module_docstrings(relpath, source)
        except (SyntaxError, ValueError):
            continue  # a stdlib file for another Python version; nothing to learn from it
        if len(text) < 300:
            continue
        used += len(text.encode("utf-8"))
        if used > DOCSTRINGS_BUDGET:
            break
        docs.append(Doc("Docstrings", text))
    return docs


LICENSE_NAME = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE)", re.IGNORECASE)


def license_files() -> list[Path]:
    """License files of installed distributions, Debian's common licenses and Python's own."""
    paths: list[Path] = []
    for dist_info in sorted(site_packages().glob("*.dist-info")):
        if dist_info.name.lower().startswith("selene-"):
            continue  # the project itself: its files change while we work on it
        for path in sorted(dist_info.rglob("*")):
            in_licenses_dir = "licenses" in path.relative_to(dist_info).parts[:-1]
            if path.is_file() and (in_licenses_dir or LICENSE_NAME.match(path.name)):
                paths.append(path)
    common = Path("/usr/share/common-licenses")
    if common.is_dir():
        paths.extend(sorted(p for p in common.iterdir() if p.is_file() and not p.is_symlink()))
    python_license = stdlib_dir() / "LICENSE.txt"
    if python_license.is_file():
        paths.append(python_license)
    return paths


def license_docs() -> list[Doc]:
    # Duplicates are kept on purpose: identical MIT/BSD/Apache texts are what exact dedup is for.
    docs: list[Doc] = []
    for path in license_files():
        text = read_utf8(path)
        if text and text.strip() and len(text) <= LICENSE_MAX_FILE:
            docs.append(Doc("Licenses", text))
    return docs


def long_description(metadata_path: Path) -> str:
    raw = metadata_path.read_bytes().decode("utf-8", errors="strict")
    message = email.parser.Parser(policy=email.policy.compat32).parsestr(raw)
    body = message.get_payload()
    if isinstance(body, str) and body.strip():
        return body.strip()
    # Metadata 1.x puts the description in a header, continuation lines indented by 8 spaces.
    header = message.get("Description", "")
    return re.sub(r"\n {8}", "\n", str(header)).strip()


def pypi_docs() -> list[Doc]:
    docs: list[Doc] = []
    for metadata in sorted(site_packages().glob("*.dist-info/METADATA")):
        if metadata.parent.name.lower().startswith("selene-"):
            continue
        try:
            text = long_description(metadata)
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) >= 200 and len(text) <= PYPI_MAX_DOC:
            docs.append(Doc("PyPI", text))
    return docs


def debian_copyright_docs() -> list[Doc]:
    doc_root = Path("/usr/share/doc")
    if not doc_root.is_dir():
        return []
    docs: list[Doc] = []
    used = 0
    for path in sorted(doc_root.glob("*/copyright")):
        if not path.is_file() or path.stat().st_size > DEBIAN_MAX_FILE:
            continue
        text = read_utf8(path)
        if not text or not text.strip():
            continue
        used += len(text.encode("utf-8"))
        if used > DEBIAN_BUDGET:
            break
        docs.append(Doc("DebianCopyright", text))
    return docs


@dataclass(frozen=True)
class Catalog:
    lang: str
    domain: str
    text: str


def catalog_text(path: Path) -> str:
    """The translated messages of one gettext catalog, in catalog order, as one document."""
    with path.open("rb") as fh:
        translations = gettext.GNUTranslations(fh)
    catalog: dict[object, str] = translations._catalog  # type: ignore[attr-defined]
    messages: list[str] = []
    for msgid, msgstr in catalog.items():
        if msgid == "" or not msgstr.strip() or msgstr == msgid:
            continue  # "" is the catalog header; untranslated entries are English
        messages.append(msgstr.strip("\n"))
    text = "\n\n".join(messages)
    if len(text) > TRANSLATION_MAX_DOC:
        text = text[: text.rfind("\n\n", 0, TRANSLATION_MAX_DOC)]
    return text


def translation_catalogs() -> list[Catalog]:
    catalogs: list[Catalog] = []
    for lang in TRANSLATION_LANGS:
        for domain in TRANSLATION_DOMAINS:
            path = Path("/usr/share/locale") / lang / "LC_MESSAGES" / f"{domain}.mo"
            if not path.is_file():
                continue
            try:
                text = catalog_text(path)
            except (OSError, UnicodeDecodeError, struct.error):
                continue  # corrupt or oddly encoded catalog
            if len(text) >= 500:
                catalogs.append(Catalog(lang, domain, text))
    return catalogs


def collect_docs(catalogs: list[Catalog]) -> list[Doc]:
    sources = stdlib_sources()
    return [
        *pydoc_topic_docs(),
        *github_docs(sources),
        *docstring_docs(sources),
        *license_docs(),
        *pypi_docs(),
        *debian_copyright_docs(),
        *(Doc("Translations", c.text) for c in catalogs),
    ]


def pile_shards(docs: list[Doc]) -> list[list[Doc]]:
    """Spread documents over the shards in a seeded random order, as the Pile's shards are mixed."""
    order = list(docs)
    random.Random(SEED).shuffle(order)
    return [order[i::N_PILE_SHARDS] for i in range(N_PILE_SHARDS)]


def pile_shard_bytes(docs: list[Doc]) -> bytes:
    lines = (
        json.dumps({"text": d.text, "meta": {"pile_set_name": d.source}}, ensure_ascii=False) + "\n"
        for d in docs
    )
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress("".join(lines).encode("utf-8"))


# --------------------------------------------------------------------------------------------
# Web pages


@dataclass
class Page:
    url: str
    body: bytes
    content_type: str  # the HTTP Content-Type header value
    status: str = "200 OK"
    extra_headers: list[tuple[str, str]] = field(default_factory=list)
    charset: str = "UTF-8"  # what the crawler's detector would report, for the metadata record
    lang: str = "en"

    @property
    def is_html(self) -> bool:
        return self.content_type.startswith("text/html")


def nav_list(links: Iterable[tuple[str, str]]) -> str:
    return "".join(f'<li><a href="{href}">{html.escape(label)}</a></li>' for href, label in links)


def site_page(
    title: str,
    section: tuple[str, str],
    content: str,
    related: list[tuple[str, str]],
    charset: str | None = "utf-8",
    lang: str = "en",
) -> str:
    """Wrap content in the boilerplate every page of the site shares: the part extractors must drop."""
    meta = f'<meta charset="{charset}">\n' if charset else ""
    header = nav_list(
        [
            ("/", "Home"),
            ("/library/index.html", "Library"),
            ("/reference/index.html", "Language Reference"),
            ("/idle/help.html", "IDLE"),
            ("/downloads/reference-card.pdf", "Downloads"),
            ("/about.html", "About"),
            ("/search.html", "Search"),
        ]
    )
    quick = nav_list(
        [
            ("/tutorial/index.html", "Tutorial"),
            ("/glossary.html", "Glossary"),
            ("/faq/index.html", "FAQ"),
            ("https://github.com/python/cpython/issues", "Report a bug"),
        ]
    )
    return f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
{meta}<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} | Example Docs</title>
<link rel="stylesheet" href="/static/site.css">
<link rel="icon" type="image/png" href="/static/logo.png">
<script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments);}}gtag('js',new Date());</script>
</head>
<body>
<div id="cookie-banner" class="cookie-notice"><p>This site uses cookies to remember your preferences \
and to count visits. By continuing to browse the documentation you accept our use of cookies.</p>\
<a href="/privacy.html">Privacy policy</a> <button type="button" onclick="acceptCookies()">Accept</button></div>
<header class="site-header"><a class="logo" href="/"><img src="/static/logo.png" alt="">Example Docs</a>
<nav aria-label="Main"><ul>{header}</ul></nav>
<form class="search" action="/search.html"><input type="text" name="q" placeholder="Search docs"></form>
</header>
<div class="breadcrumbs"><a href="/">Home</a> &raquo; <a href="{section[0]}">{section[1]}</a> &raquo; \
{html.escape(title)}</div>
<div class="layout">
<aside class="sidebar"><h3>Related pages</h3><ul>{nav_list(related)}</ul>
<h3>Quick links</h3><ul>{quick}</ul></aside>
<main id="content">
{content}
</main>
</div>
<footer><p>&copy; 2001-2024 Python Software Foundation and contributors. Content is available under the \
PSF License Version 2.</p><p><a href="/privacy.html">Privacy</a> | <a href="/terms.html">Terms of use</a> | \
<a href="/sitemap.xml">Sitemap</a> | <a href="/contact.html">Contact</a></p><p>Last updated on Feb 20, \
2024.</p></footer>
<script>function acceptCookies(){{document.getElementById('cookie-banner').remove();}}</script>
</body>
</html>
"""


def neighbours(names: list[str], index: int, href: str, width: int = 6) -> list[tuple[str, str]]:
    lo, hi = max(0, index - width), min(len(names), index + width + 1)
    return [(href.format(n), n) for n in names[lo:hi] if n != names[index]]


ADDRESS = re.compile(r"(?: |&nbsp;)at(?: |&nbsp;)0x[0-9a-fA-F]+")


@contextlib.contextmanager
def empty_environ() -> Iterator[None]:
    """Clear os.environ while modules are imported and rendered, then restore it.

    Some signatures default to ``os.environ`` (``cgi.parse(environ=os.environ)``) and pydoc prints
    its repr: without this every variable of the build machine would be published in the sample.
    """
    saved = dict(os.environ)
    os.environ.clear()
    try:
        yield
    finally:
        os.environ.update(saved)


def render_module(name: str, renderer: pydoc.HTMLDoc) -> str | None:
    """pydoc's HTML for one stdlib module, or None when it cannot be imported here."""
    with (
        empty_environ(),
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        warnings.simplefilter("ignore")
        try:
            module = importlib.import_module(name)
            body = renderer.document(module, name)
        except Exception:  # platform-specific or broken modules: just fewer pages
            return None
    # Object addresses differ per process and install paths per machine: neither is page text.
    body = ADDRESS.sub("", body)
    for local, public in path_replacements():
        body = body.replace(local, public)
    return body


def path_replacements() -> list[tuple[str, str]]:
    """This machine's Python paths (longest first) and the public names that replace them."""
    version = "v{}.{}.{}".format(*sys.version_info[:3])
    stdlib = str(stdlib_dir())
    pairs = [
        (f"file:{stdlib}/", f"https://github.com/python/cpython/blob/{version}/Lib/"),
        (f"{stdlib}/", "Lib/"),
        (sys.executable, "/usr/local/bin/python3"),
        (sys.prefix, "/usr/local"),
        (sys.base_prefix, "/usr/local"),
        (str(REPO), "/src"),
    ]
    return sorted((p for p in pairs if p[0]), key=lambda p: -len(p[0]))


def module_pages() -> tuple[list[Page], list[str]]:
    names = sorted(n for n in sys.stdlib_module_names if not n.startswith("_") and n not in PYDOC_DENY)
    renderer = pydoc.HTMLDoc()
    rendered = {n: body for n in names if (body := render_module(n, renderer)) is not None}
    kept = [n for n in sorted(rendered) if len(rendered[n]) <= MODULE_PAGE_MAX]
    pages = []
    for i, name in enumerate(kept):
        text = site_page(
            f"{name} module",
            ("/library/index.html", "Library"),
            rendered[name],
            neighbours(kept, i, "/library/{}.html"),
        )
        pages.append(html_page(f"{SITE}/library/{name}.html", text))
    return pages, kept


def html_page(url: str, text: str) -> Page:
    return Page(url, text.encode("utf-8"), "text/html; charset=utf-8")


UNDERLINE = re.compile(r"^([*=\-^~])\1{2,}$")
HEADING_TAG = {"*": "h1", "=": "h2", "-": "h3", "^": "h4", "~": "h4"}


def plain_to_html(text: str) -> str:
    """reST-ish plain text (the pydoc topics) as headings, paragraphs and <pre> blocks."""
    parts: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = block.split("\n")
        if len(lines) >= 2 and UNDERLINE.match(lines[1].strip()):
            tag = HEADING_TAG[lines[1].strip()[0]]
            parts.append(f"<{tag}>{html.escape(lines[0].strip())}</{tag}>")
            lines = lines[2:]
        if not lines:
            continue
        if lines[0].startswith((" ", "\t")):
            parts.append(f"<pre>{html.escape(chr(10).join(lines))}</pre>")
        else:
            parts.append(f"<p>{html.escape(' '.join(line.strip() for line in lines))}</p>")
    return "\n".join(parts)


def topic_slug(topic: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-")


def topic_pages() -> tuple[list[Page], list[str]]:
    from pydoc_data.topics import topics

    keys = sorted(topics)
    slugs = [topic_slug(k) for k in keys]
    pages = []
    for i, key in enumerate(keys):
        text = topics[key]
        title = text.strip().split("\n", 1)[0].strip()
        content = plain_to_html(text)
        related = neighbours(slugs, i, "/reference/{}.html")
        page = site_page(title, ("/reference/index.html", "Language Reference"), content, related)
        pages.append(html_page(f"{SITE}/reference/{slugs[i]}.html", page))
    return pages, slugs


def index_page(url: str, title: str, names: list[str], href: str) -> Page:
    """Link-farm index page: almost all of its text is link labels."""
    links = "".join(f'<li><a href="{href.format(n)}">{html.escape(n)}</a></li>' for n in names)
    content = f"<h1>{html.escape(title)}</h1>\n<ul class='index'>{links}</ul>"
    section = (url.removeprefix(SITE), title)
    return html_page(url, site_page(title, section, content, []))


def idle_help_page() -> list[Page]:
    """IDLE's help, a real Sphinx-built page shipped inside idlelib, served as-is."""
    path = stdlib_dir() / "idlelib" / "help.html"
    body = path.read_bytes() if path.is_file() else None
    return [Page(f"{SITE}/idle/help.html", body, "text/html; charset=utf-8")] if body else []


def pick_catalog(catalogs: list[Catalog], lang: str, encoding: str) -> Catalog | None:
    """The first catalog of a language whose text the target encoding can represent."""
    for catalog in catalogs:
        if catalog.lang != lang:
            continue
        try:
            catalog.text.encode(encoding)
        except UnicodeEncodeError:
            continue
        return catalog
    return None


def non_ascii_topic(encoding: str) -> tuple[str, str]:
    """Fallback without gettext catalogs: the pydoc topic with the most non-ASCII characters."""
    from pydoc_data.topics import topics

    def score(key: str) -> tuple[int, str]:
        return (-sum(ord(c) > 127 for c in topics[key]), key)

    for key in sorted(topics, key=score):
        with contextlib.suppress(UnicodeEncodeError):
            topics[key].encode(encoding)
            return key, topics[key]
    return "", ""


def charset_pages(catalogs: list[Catalog]) -> list[Page]:
    """Two pages that test charset handling.

    * windows-1252 bytes, declared only by <meta charset> (the HTTP header has no charset);
    * UTF-8 bytes with no declaration at all, so only detection can decode them.
    """
    pages: list[Page] = []
    specs = [("de", "windows-1252", "/translations/de/{}.html"), ("fr", "utf-8", "/translations/fr/{}.html")]
    for lang, encoding, href in specs:
        catalog = pick_catalog(catalogs, lang, encoding)
        section = ("/translations/index.html", "Translations")
        related = [(f"/translations/{lang}/index.html", f"All {lang} translations")]
        if catalog is not None:
            title, text, name, page_lang = f"{catalog.domain} ({lang})", catalog.text, catalog.domain, lang
            content = f"<h1>{html.escape(title)}</h1>\n" + "\n".join(
                f"<pre>{html.escape(m)}</pre>" for m in text.split("\n\n")
            )
        else:
            name, text = non_ascii_topic(encoding)
            title, page_lang = name, "en"
            content = plain_to_html(text)
            href = "/reference/encoded/{}.html"
            section, related = ("/reference/index.html", "Language Reference"), []
        declared = "windows-1252" if encoding == "windows-1252" else None
        doc = site_page(title, section, content, related, declared, page_lang)
        url = SITE + href.format(topic_slug(name) + ("-cp1252" if declared else "-nocharset"))
        detected = "windows-1252" if declared else "UTF-8"
        pages.append(Page(url, doc.encode(encoding), "text/html", charset=detected, lang=page_lang))
    return pages


def png_bytes(width: int = 48, height: int = 48) -> bytes:
    """A real (if small) RGB PNG: signature, IHDR, zlib IDAT, IEND, each chunk with its CRC."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(tag + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

    rows = (
        b"\x00" + bytes(v for x in range(width) for v in ((x * 5) % 256, (y * 5) % 256, 132))
        for y in range(height)
    )
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def pdf_bytes(lines: list[str]) -> bytes:
    """A one-page PDF 1.4 with the given ASCII lines, with a correct xref table."""
    escaped = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in lines]
    stream = "BT /F1 10 Tf 56 780 Td 13 TL " + " ".join(f"({line}) '" for line in escaped) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("ascii")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode("ascii")
    out += b"".join(f"{offset:010d} 00000 n \n".encode("ascii") for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode("ascii")
    return out


def non_html_pages(modules: list[str], topics: list[str]) -> list[Page]:
    from pydoc_data.topics import topics as topic_texts

    lines = topic_texts[sorted(topic_texts)[0]].split("\n")
    card = [line for line in lines if line.isascii() and not UNDERLINE.match(line.strip())][:50]
    index = json.dumps({"modules": modules, "topics": topics}, indent=1, sort_keys=True)
    return [
        Page(f"{SITE}/static/logo.png", png_bytes(), "image/png", charset="", lang=""),
        Page(f"{SITE}/downloads/reference-card.pdf", pdf_bytes(card), "application/pdf", charset="", lang=""),
        Page(f"{SITE}/search/index.json", index.encode(), "application/json", charset="UTF-8", lang=""),
        Page(f"{SITE}/static/site.css", SITE_CSS.encode(), "text/css; charset=utf-8", lang=""),
    ]


def error_pages() -> list[Page]:
    moved = [("Location", f"{SITE}/library/index.html")]
    return [
        Page(
            f"http://{HOST}/library/",
            NGINX_301.encode(),
            "text/html",
            "301 Moved Permanently",
            moved,
            lang="",
        ),
        Page(
            f"{SITE}/library/asyncore-tutorial.html",
            NGINX_404.encode(),
            "text/html",
            "404 Not Found",
            lang="",
        ),
    ]


def build_pages(catalogs: list[Catalog]) -> list[Page]:
    modules, module_names = module_pages()
    topics, topic_slugs = topic_pages()
    pages = [
        *modules,
        *topics,
        index_page(f"{SITE}/library/index.html", "Library", module_names, "/library/{}.html"),
        index_page(f"{SITE}/reference/index.html", "Language Reference", topic_slugs, "/reference/{}.html"),
        *idle_help_page(),
        *charset_pages(catalogs),
        *non_html_pages(module_names, topic_slugs),
        *error_pages(),
    ]
    # A crawl fetches pages of one site interleaved with everything else, not in sitemap order.
    random.Random(SEED).shuffle(pages)
    return pages


# --------------------------------------------------------------------------------------------
# WARC / WET writing. Records are written by hand (not with warcio) so that the header order and
# every byte are fixed here; each record is its own gzip member with mtime 0, like CommonCrawl's.


def record_id(kind: str, name: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{kind} {name}')}>"


def warc_date(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def http_date(moment: datetime) -> str:
    return moment.strftime("%a, %d %b %Y %H:%M:%S GMT")


def sha1_digest(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def warc_record(headers: list[tuple[str, str]], block: bytes) -> bytes:
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    return gzip.compress(head.encode("utf-8") + block + b"\r\n\r\n", compresslevel=9, mtime=0)


def warc_fields(fields: list[tuple[str, str]]) -> bytes:
    return "".join(f"{k}: {v}\r\n" for k, v in fields).encode("utf-8")


def warcinfo_record(filename: str, moment: datetime, fields: list[tuple[str, str]]) -> bytes:
    block = warc_fields(fields)
    headers = [
        ("WARC-Type", "warcinfo"),
        ("WARC-Date", warc_date(moment)),
        ("WARC-Filename", filename),
        ("WARC-Record-ID", record_id("warcinfo", filename)),
        ("WARC-Block-Digest", sha1_digest(block)),
        ("Content-Type", "application/warc-fields"),
    ]
    return warc_record(headers, block)


def request_block(page: Page) -> bytes:
    path = "/" + page.url.split("/", 3)[3]
    lines = [
        f"GET {path} HTTP/1.1",
        "User-Agent: CCBot/2.0 (https://commoncrawl.org/faq/)",
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "Accept-Language: en-US,en;q=0.5",
        "Accept-Encoding: br,gzip",
        f"Host: {HOST}",
        "Connection: Keep-Alive",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def response_head(page: Page, moment: datetime) -> bytes:
    etag = hashlib.sha1(page.body).hexdigest()[:16]
    lines = [
        f"HTTP/1.1 {page.status}",
        f"Date: {http_date(moment)}",
        "Server: nginx/1.24.0",
        f"Content-Type: {page.content_type}",
        f"Content-Length: {len(page.body)}",
        *(f"{k}: {v}" for k, v in page.extra_headers),
        f"Last-Modified: {http_date(CRAWL_START - timedelta(days=8))}",
        f'ETag: "{etag}"',
        "Cache-Control: max-age=600",
        "Connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def page_records(page: Page, moment: datetime, warcinfo_id: str) -> list[bytes]:
    """request, response and metadata records for one fetch, in CommonCrawl's order."""
    req_id, resp_id = record_id("request", page.url), record_id("response", page.url)
    common = [
        ("WARC-Date", warc_date(moment)),
        ("WARC-Warcinfo-ID", warcinfo_id),
        ("WARC-IP-Address", SERVER_IP),
    ]
    request = request_block(page)
    response = response_head(page, moment) + page.body
    payload_type = page.content_type.split(";")[0]
    # CommonCrawl's fetch times vary; a hash of the URL gives a varied but fixed value.
    fetch_ms = 20 + int(hashlib.sha1(page.url.encode()).hexdigest()[:4], 16) % 900
    fields = [("fetchTimeMs", str(fetch_ms))]
    if page.charset:
        fields.append(("charset-detected", page.charset))
    metadata = warc_fields(fields)
    return [
        warc_record(
            [
                ("WARC-Type", "request"),
                *common,
                ("WARC-Record-ID", req_id),
                ("WARC-Target-URI", page.url),
                ("WARC-Block-Digest", sha1_digest(request)),
                ("Content-Type", "application/http; msgtype=request"),
            ],
            request,
        ),
        warc_record(
            [
                ("WARC-Type", "response"),
                *common,
                ("WARC-Record-ID", resp_id),
                ("WARC-Concurrent-To", req_id),
                ("WARC-Target-URI", page.url),
                ("WARC-Payload-Digest", sha1_digest(page.body)),
                ("WARC-Block-Digest", sha1_digest(response)),
                ("WARC-Identified-Payload-Type", payload_type),
                ("Content-Type", "application/http; msgtype=response"),
            ],
            response,
        ),
        warc_record(
            [
                ("WARC-Type", "metadata"),
                ("WARC-Date", warc_date(moment)),
                ("WARC-Record-ID", record_id("metadata", page.url)),
                ("WARC-Refers-To", resp_id),
                ("WARC-Target-URI", page.url),
                ("WARC-Block-Digest", sha1_digest(metadata)),
                ("Content-Type", "application/warc-fields"),
            ],
            metadata,
        ),
    ]


CRAWL_INFO = [
    ("software", "selene scripts/build_sample.py (sample crawl of local documentation)"),
    ("format", "WARC File Format 1.0"),
    ("conformsTo", "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf"),
    ("isPartOf", "SELENE-SAMPLE-2024-08"),
    ("description", "Sample crawl of docs.example.org: pydoc pages of the Python standard library"),
    ("robots", "classic"),
    ("http-header-user-agent", "CCBot/2.0 (https://commoncrawl.org/faq/)"),
]


def fetch_time(index: int) -> datetime:
    return CRAWL_START + timedelta(seconds=7 * index)


def warc_bytes(pages: list[Page]) -> bytes:
    warcinfo_id = record_id("warcinfo", WARC_NAME)
    parts = [warcinfo_record(WARC_NAME, CRAWL_START, CRAWL_INFO)]
    for i, page in enumerate(pages):
        parts.extend(page_records(page, fetch_time(i), warcinfo_id))
    return b"".join(parts)


class TextExtractor(HTMLParser):
    """Page text one block per line, boilerplate included, the way WET files keep navigation."""

    BLOCKS = frozenset(
        {
            "p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "br", "pre", "dt", "dd", "section",
            "header", "footer", "nav", "aside", "main", "title", "table", "ul", "ol", "dl", "form", "button",
            "blockquote", "hr", "td", "th",
        }
    )  # fmt: skip
    SKIP = frozenset({"script", "style", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.skipping = 0
        self.in_pre = 0

    def flush(self) -> None:
        # Inline elements (links, <strong>) split a sentence into pieces: join without a space.
        line = " ".join("".join(self.current).split())
        if line:
            self.lines.append(line)
        self.current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCKS:
            self.flush()
        self.in_pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCKS:
            self.flush()
        self.in_pre = max(0, self.in_pre - (tag == "pre"))

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if not self.in_pre:
            self.current.append(data)
            return
        # Preformatted text keeps its lines (option tables, code), each still whitespace-collapsed.
        *complete, rest = data.split("\n")
        for line in complete:
            self.current.append(line)
            self.flush()
        self.current.append(rest)


def page_text(page: Page) -> str:
    encoding = "windows-1252" if page.charset == "windows-1252" else "utf-8"
    extractor = TextExtractor()
    extractor.feed(page.body.decode(encoding))
    extractor.close()
    extractor.flush()
    return "\n".join(extractor.lines)


def wet_pages(pages: list[Page]) -> list[tuple[int, Page]]:
    """~WET_PAGES successful HTML fetches, chosen by URL hash, always with the charset pages."""
    ok = [(i, p) for i, p in enumerate(pages) if p.is_html and p.status.startswith("200")]
    special = {p.url for _, p in ok if p.charset != "UTF-8" or p.content_type == "text/html"}
    ranked = sorted(ok, key=lambda item: hashlib.sha1(item[1].url.encode()).hexdigest())
    chosen = {p.url for _, p in ranked[:WET_PAGES]} | special
    return [(i, p) for i, p in ok if p.url in chosen]


def wet_bytes(pages: list[Page]) -> bytes:
    extracted = CRAWL_START + timedelta(hours=6)
    info = [
        ("Software-Info", "selene scripts/build_sample.py"),
        ("Extracted-Date", http_date(extracted)),
        ("isPartOf", "SELENE-SAMPLE-2024-08"),
        ("description", "Plain text extracted from " + WARC_NAME),
    ]
    parts = [warcinfo_record(WET_NAME, extracted, info)]
    for i, page in wet_pages(pages):
        text = page_text(page).encode("utf-8")
        headers = [
            ("WARC-Type", "conversion"),
            ("WARC-Target-URI", page.url),
            ("WARC-Date", warc_date(fetch_time(i))),
            ("WARC-Record-ID", record_id("conversion", page.url)),
            ("WARC-Refers-To", record_id("response", page.url)),
            ("WARC-Block-Digest", sha1_digest(text)),
            ("WARC-Identified-Content-Language", LANG_ISO3.get(page.lang, "eng")),
            ("Content-Type", "text/plain"),
        ]
        parts.append(warc_record(headers, text))
    return b"".join(parts)


# --------------------------------------------------------------------------------------------
# Output


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def iter_records(data: bytes) -> Iterator[bytes]:
    """Decompressed records of a multi-member gzip file (for the README's counts)."""
    while data:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        yield decomp.decompress(data)
        data = decomp.unused_data


@dataclass
class Summary:
    docs_per_source: Counter[str]
    pile_text_bytes: int
    duplicate_docs: int
    warc_responses: Counter[str]
    wet_records: int
    files: dict[str, int]


README_HEAD = """# Sample corpus

Small, real corpus bundled with selene for tests, the demo and benchmarks. Everything here is built by
`scripts/build_sample.py` (`make sample`, or `python scripts/build_sample.py --out DIR`) from text that
is already on the machine; nothing is downloaded and no sentence is generated. Rebuilding on the same
machine gives byte-identical files (sorted inputs, a fixed seed, fixed zstd level, gzip mtime 0,
fixed WARC dates, record ids = uuid5 of record type + URL). On another machine the installed packages
differ, so the contents differ too; the tests only check the format and rebuild determinism.

## Pile shards: `pile/NN.jsonl.zst`

One JSON object per line, `{"text": ..., "meta": {"pile_set_name": ...}}`, zstd level 10, documents
spread over the shards in a seeded random order. Sources (`pile_set_name`):

| source | from |
|---|---|
| PythonReference | `pydoc_data.topics.topics`: the language reference topics behind `help()` |
| Github | standard-library `.py` files: the half picked by a hash of the path, one per document, <= 50 KB, no test suites |
| Docstrings | module/class/function docstrings of the other half of the stdlib files (parsed with `ast`) |
| Licenses | license files of the distributions in site-packages, `/usr/share/common-licenses`, Python's `LICENSE.txt` |
| PyPI | long descriptions (METADATA bodies) of the distributions in site-packages |
| DebianCopyright | `/usr/share/doc/*/copyright` (<= 16 KB each) |
| Translations | translated messages of gettext catalogs (grep, sed, diffutils, findutils) in 12 languages |

Exact duplicates are kept on purpose (the same license file shipped by several packages, Debian
packages of one source sharing a copyright file): they are what exact dedup must find.

"""

README_CC = """## CommonCrawl-style files: `cc/`

`{warc}`: one gzip member per record. A `warcinfo` record, then for every URL a `request`, a `response`
(HTTP/1.1 status line and headers, `Content-Type`, `Content-Length`) and a `metadata` record
(`fetchTimeMs`, `charset-detected`), in a seeded crawl order. Pages of `https://docs.example.org/`:

* `/library/<module>.html`: `pydoc.HTMLDoc` pages of stdlib modules (object addresses and install
  paths scrubbed), inside a site template with a cookie notice, header navigation, breadcrumbs, a
  sidebar of links, inline scripts and a footer (the boilerplate an extractor must drop);
* `/reference/<topic>.html`: the pydoc topics as HTML paragraphs, same template;
* `/library/index.html`, `/reference/index.html`: link-list index pages;
* `/idle/help.html`: IDLE's help, a real Sphinx page shipped in `idlelib` (when present);
* a page in windows-1252 whose charset is declared only by `<meta charset>` (HTTP header: `text/html`);
* a UTF-8 page with non-ASCII text and no charset declaration anywhere;
* non-HTML responses: `image/png`, `application/pdf`, `application/json`, `text/css`;
* a `301 Moved Permanently` (nginx body, `Location` header) and a `404 Not Found`.

`{wet}`: a `warcinfo` record, then `conversion` records (`Content-Type: text/plain`,
`WARC-Target-URI`, `WARC-Refers-To` = the response's record id, `WARC-Block-Digest`,
`WARC-Identified-Content-Language`) with the page text of ~100 HTML pages of the WARC, navigation
lines included, one block per line, as CommonCrawl's WET files have it.

"""


def readme(summary: Summary) -> str:
    rows = "\n".join(f"| {s} | {n} |" for s, n in sorted(summary.docs_per_source.items()))
    responses = "\n".join(f"| {t} | {n} |" for t, n in sorted(summary.warc_responses.items()))
    files = "\n".join(f"| `{name}` | {size:,} |" for name, size in sorted(summary.files.items()))
    return (
        README_HEAD
        + f"| source | documents |\n|---|---|\n{rows}\n| **total** | {sum(summary.docs_per_source.values())} |\n\n"
        + f"{summary.pile_text_bytes:,} bytes of UTF-8 text; {summary.duplicate_docs} documents are exact "
        "duplicates of an earlier one.\n\n"
        + README_CC.format(warc=WARC_NAME, wet=WET_NAME)
        + f"Response records by HTTP payload type:\n\n| Content-Type | responses |\n|---|---|\n{responses}\n\n"
        + f"WET conversion records: {summary.wet_records}.\n\n"
        + f"## Files (bytes)\n\n| file | size |\n|---|---|\n{files}\n"
    )


def summarize(docs: list[Doc], pages: list[Page], wet: bytes, files: dict[str, int]) -> Summary:
    seen: set[str] = set()
    duplicates = 0
    for doc in docs:
        key = sha1_hex(doc.text)
        duplicates += key in seen
        seen.add(key)
    wet_records = sum(b"WARC-Type: conversion\r\n" in rec for rec in iter_records(wet))
    return Summary(
        docs_per_source=Counter(d.source for d in docs),
        pile_text_bytes=sum(len(d.text.encode("utf-8")) for d in docs),
        duplicate_docs=duplicates,
        warc_responses=Counter(f"{p.content_type.split(';')[0]} ({p.status})" for p in pages),
        wet_records=wet_records,
        files=files,
    )


def build(out: Path) -> Summary:
    catalogs = translation_catalogs()
    docs = collect_docs(catalogs)
    pages = build_pages(catalogs)
    outputs: dict[str, bytes] = {}
    for i, shard in enumerate(pile_shards(docs)):
        outputs[f"pile/{i:02d}.jsonl.zst"] = pile_shard_bytes(shard)
    outputs[f"cc/{WARC_NAME}"] = warc_bytes(pages)
    wet = wet_bytes(pages)
    outputs[f"cc/{WET_NAME}"] = wet

    # Shards of an earlier build with more shards would otherwise linger next to the new ones.
    for stale in sorted((out / "pile").glob("*.jsonl.zst")):
        if stale.relative_to(out).as_posix() not in outputs:
            stale.unlink()
    for name, data in sorted(outputs.items()):
        write_atomic(out / name, data)
    summary = summarize(docs, pages, wet, {name: len(data) for name, data in outputs.items()})
    write_atomic(out / "README.md", readme(summary).encode("utf-8"))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output directory (default: data/sample)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    summary = build(args.out)
    elapsed = time.perf_counter() - started
    for source, count in sorted(summary.docs_per_source.items()):
        print(f"{source:16s} {count:5d} docs")
    for kind, count in sorted(summary.warc_responses.items()):
        print(f"{kind:40s} {count:5d} responses")
    print(f"WET conversion records: {summary.wet_records}")
    for name, size in sorted(summary.files.items()):
        print(f"{name:40s} {size:10,d} bytes")
    print(f"built {args.out} in {elapsed:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
