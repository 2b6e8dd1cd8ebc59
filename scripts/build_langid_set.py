#!/usr/bin/env python3
"""Build a labelled mixed-language set for the English keep/drop decision of ``selene.ingest.langid``.

Every document is real text already on this machine (nothing is downloaded or generated; mixed pages
are concatenations of real text). Output: a zstd-compressed JSON-lines file of
``{"text": ..., "lang": ..., "kind": ...}`` records; rebuilding on the same machine gives the same
bytes (sorted inputs, one seeded RNG, fixed zstd level). The committed copy is
``benchmarks/data/langid_set.jsonl.zst`` (``benchmarks/langid.py`` reads it).

``lang`` is the language the text is mostly in (ISO 639-1 where one exists, else the locale's code:
``pt_BR`` -> ``pt``, ``sr@latin`` -> ``sr``). Kinds and how each is labelled:

English (``en``):

* ``licence``: licence files of installed distributions (both venvs), ``/usr/share/common-licenses``,
  Debian ``/usr/share/doc/*/copyright`` files. Label ``en``: all of them are English legal text.
* ``changelog``: Debian ``changelog(.Debian).gz``/``NEWS(.Debian).gz`` and CHANGES/CHANGELOG/NEWS
  files of distributions, cut at a line break to a log-uniform length. English release notes.
* ``readme``: PyPI long descriptions (``importlib.metadata``-style METADATA bodies) without code blocks.
* ``code``: code-heavy pages, labelled ``en`` because their prose (comments, docstrings, paragraphs
  between code blocks) is English: PyPI long descriptions with code blocks, and standard-library
  ``.py`` files in which comments and docstrings are at least 20% of the characters.
* ``api``: ``pydoc_data.topics`` (the language reference behind ``help()``) and the docstrings of a
  standard-library module (``ast``-parsed, as ``scripts/build_sample.py`` does).
* ``manpage``: English man pages (``/usr/share/man/man[1-8]``), roff stripped to text.
* ``short``: a title and 1-3 sentences, 50-300 characters: distribution name + ``Summary`` +
  first sentences of the long description, a stdlib function's qualified name + its docstring's
  first sentences, a Debian package name + its description.
* ``prose``: English prose: long descriptions of Debian packages (``/var/lib/dpkg/status``) grouped
  into documents, spaCy's English example sentences grouped.
* ``messages``: the English originals (msgids) of gettext catalogs grouped into documents the same
  way as the translated ones, so the UI-message style alone does not separate the classes.

Not English (label = the catalog's/page's language):

* ``messages``: translated messages (msgstrs that differ from the msgid) of the gettext catalogs in
  ``/usr/share/locale/<lang>/LC_MESSAGES`` (catalogs of names, ``iso_*`` and keyboard layouts, are
  skipped), grouped per language and catalog into documents of a log-uniform length.
* ``manpage``: translated man pages (``/usr/share/man/<lang>/``), roff stripped.
* ``sentences``: spaCy's example sentences (``spacy/lang/<lang>/examples.py``, read with ``ast``),
  1 to all of a language's sentences per document.
* ``short``: a short translated message as title + 1-3 translated sentences, 50-300 characters.
* ``code``: translated prose paragraphs between code blocks cut from standard-library sources with
  comments and docstrings removed (code <= half the characters): labelled by the prose's language,
  code not being a natural language.

Mixed (``mixed``), labelled by the majority language of their letters: English site boilerplate
(cookie notice, navigation, footer) around a non-English body, and translated UI strings
(menu labels, buttons) around an English body; the body is usually, not always, the majority.

Usage: ``python scripts/build_langid_set.py [--out FILE]``.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import io
import json
import math
import random
import re
import struct
import sys
import tokenize
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import build_sample as bs
import zstandard

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "benchmarks" / "data" / "langid_set.jsonl.zst"
SEED = 20240611
ZSTD_LEVEL = 19
MIN_CHARS, MAX_CHARS = 50, 20_000
VENVS = (Path("/work/main/.venv"), Path("/work/venvs/datatrove"))

# How many documents of each kind (at most; fewer when the machine has less).
EN_QUOTA = {
    "licence": 260, "changelog": 220, "readme": 130, "code": 260, "api": 220,
    "manpage": 160, "short": 260, "prose": 130, "messages": 130, "mixed": 100,
}  # fmt: skip
XX_QUOTA = {"messages": 820, "manpage": 160, "sentences": 220, "short": 260, "code": 140, "mixed": 140}
# Per-language cap for the gettext-based kinds, so 100+ locales do not drown the big languages.
MESSAGES_PER_LANG = 14

SKIP_DOMAINS = re.compile(r"^(iso_|xkeyboard-config)")
LETTER = re.compile(r"[^\W\d_]")


# Words frequent in English and rare elsewhere: a label check independent of the model under test.
EN_WORDS = frozenset(
    [
        "the",
        "and",
        "that",
        "with",
        "which",
        "you",
        "your",
        "this",
        "when",
        "from",
        "are",
        "will",
        "should",
        "have",
        "been",
    ]
)


def english_share(text: str) -> float:
    """Fraction of words in EN_WORDS: ~0.1 for English prose, < 0.01 for other languages."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    return sum(w in EN_WORDS for w in words) / max(len(words), 1)


def letters(text: str) -> int:
    return len(LETTER.findall(text))


def log_uniform(rng: random.Random, lo: int = MIN_CHARS, hi: int = MAX_CHARS) -> int:
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def cut(text: str, limit: int, sep: str = "\n") -> str:
    """`text` cut to at most `limit` characters, at the last `sep` (or space) before the limit."""
    text = text.strip()
    if len(text) <= limit:
        return text
    at = text.rfind(sep, 0, limit)
    if at < limit // 2:
        at = text.rfind(" ", 0, limit)
    return text[: at if at > 0 else limit].strip()


def iso(locale: str) -> str:
    return re.split(r"[_@.]", locale)[0]


def site_dirs() -> list[Path]:
    found = [bs.site_packages()]
    for venv in VENVS:
        found.extend(sorted(venv.glob("lib/python*/site-packages")))
    out: list[Path] = []
    for d in found:
        if d.is_dir() and d.resolve() not in {o.resolve() for o in out}:
            out.append(d)
    return out


def dist_infos() -> list[Path]:
    seen: set[str] = set()
    out: list[Path] = []
    for site in site_dirs():
        for d in sorted(site.glob("*.dist-info")):
            if d.name.lower().startswith("selene-") or d.name in seen:
                continue
            seen.add(d.name)
            out.append(d)
    return out


def gz_text(path: Path) -> str | None:
    try:
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return None


def unique(texts: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for t in texts:
        if t not in seen and len(t) >= MIN_CHARS:
            seen.add(t)
            out.append(t)
    return out


# --------------------------------------------------------------------------------------------
# English sources


def licence_texts() -> list[str]:
    texts: list[str] = []
    for d in dist_infos():
        for path in sorted(d.rglob("*")):
            in_licenses = "licenses" in path.relative_to(d).parts[:-1]
            if path.is_file() and (in_licenses or bs.LICENSE_NAME.match(path.name)):
                texts.append(bs.read_utf8(path) or "")
    common = Path("/usr/share/common-licenses")
    if common.is_dir():
        texts += [bs.read_utf8(p) or "" for p in sorted(common.iterdir()) if p.is_file()]
    texts += [bs.read_utf8(p) or "" for p in sorted(Path("/usr/share/doc").glob("*/copyright"))]
    return unique([cut(t, MAX_CHARS) for t in texts])


def changelog_texts(rng: random.Random) -> list[str]:
    texts: list[str] = []
    for pattern in ("*/changelog.Debian.gz", "*/changelog.gz", "*/NEWS.Debian.gz", "*/NEWS.gz"):
        texts += [gz_text(p) or "" for p in sorted(Path("/usr/share/doc").glob(pattern))]
    name = re.compile(r"^(CHANGES|CHANGELOG|HISTORY|NEWS)(\.(md|rst|txt))?$", re.IGNORECASE)
    for site in site_dirs():
        for path in sorted(site.glob("*/*")):
            if path.is_file() and name.match(path.name):
                texts.append(bs.read_utf8(path) or "")
    return unique([cut(t, log_uniform(rng, 200)) for t in texts])


CODE_BLOCK = re.compile(r"```|^\.\. (code|code-block|sourcecode)::|::\n\n(    |\t)\S", re.MULTILINE)


def pypi_texts() -> tuple[list[str], list[str]]:
    """(long descriptions without code blocks, with code blocks)."""
    plain: list[str] = []
    code: list[str] = []
    for d in dist_infos():
        metadata = d / "METADATA"
        if not metadata.is_file():
            continue
        try:
            text = cut(bs.long_description(metadata), MAX_CHARS)
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) >= 200:
            (code if CODE_BLOCK.search(text) else plain).append(text)
    return unique(plain), unique(code)


def comment_share(source: str) -> float:
    """Fraction of a Python source's characters in comments and docstring-like string statements."""
    share = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                share += len(tok.string)
        tree = ast.parse(source)
    except (SyntaxError, tokenize.TokenError, ValueError, IndentationError):
        return 0.0
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            share += len(node.value.value)
    return share / max(len(source), 1)


def strip_comments(source: str) -> str:
    """A Python source without comments and docstrings, blank lines dropped (the code of a page)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ""
    drop: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines = []
    for i, line in enumerate(source.splitlines(), 1):
        line = re.sub(r"\s+#.*$", "", line) if "#" in line and not line.lstrip().startswith("#") else line
        if i not in drop and line.strip() and not line.lstrip().startswith("#"):
            lines.append(line)
    return "\n".join(lines)


def stdlib_code(rng: random.Random) -> tuple[list[str], list[str]]:
    """(stdlib sources with >= 20% comments/docstrings cut to a log-uniform length, code-only snippets)."""
    commented: list[str] = []
    snippets: list[str] = []
    for _, path in bs.stdlib_sources():
        source = bs.read_utf8(path)
        if not source or len(source) < 300:
            continue
        if comment_share(source) >= 0.2:
            commented.append(cut(source, log_uniform(rng, 300)))
        code = strip_comments(source)
        if len(code) >= 400:
            snippets.append(code)
    return unique(commented), snippets


def api_texts(rng: random.Random) -> tuple[list[str], list[tuple[str, str]]]:
    """(API reference documents, (qualified name, docstring) pairs for short pages)."""
    from pydoc_data.topics import topics

    texts = [cut(topics[k], log_uniform(rng, 200)) for k in sorted(topics)]
    pairs: list[tuple[str, str]] = []
    for relpath, path in bs.stdlib_sources():
        source = bs.read_utf8(path)
        if not source:
            continue
        try:
            doc = bs.module_docstrings(relpath, source)
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        if len(doc) >= 300:
            texts.append(cut(doc, log_uniform(rng, 300)))
        module = relpath.removesuffix(".py").replace("/", ".")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                ds = ast.get_docstring(node)
                if ds:
                    pairs.append((f"{module}.{node.name}", ds))
    return unique(texts), pairs


def sentences_of(text: str, n: int) -> str:
    """The first `n` sentences of the first paragraph of `text`, on one line."""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    para = re.sub(r"\s+", " ", para)
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", para)
    return " ".join(parts[:n])


def dpkg_descriptions() -> list[tuple[str, str, str]]:
    """(package, synopsis, long description) of the installed Debian packages."""
    status = Path("/var/lib/dpkg/status")
    if not status.is_file():
        return []
    out = []
    for block in status.read_text("utf-8", errors="replace").split("\n\n"):
        pkg = re.search(r"^Package: (.+)$", block, re.MULTILINE)
        desc = re.search(r"^Description: (.*)\n((?: .*\n?)*)", block, re.MULTILINE)
        if not pkg or not desc:
            continue
        body = "\n".join(
            "" if line.strip() == "." else line[1:] for line in desc.group(2).splitlines()
        ).strip()
        out.append((pkg.group(1), desc.group(1).strip(), body))
    return sorted(out)


def spacy_sentences() -> dict[str, list[str]]:
    """Language -> spaCy's example sentences (parsed with ast, spaCy not imported)."""
    out: dict[str, list[str]] = {}
    for path in sorted(
        Path("/work/venvs/datatrove").glob("lib/python*/site-packages/spacy/lang/*/examples.py")
    ):
        try:
            tree = ast.parse(path.read_text("utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "sentences" for t in node.targets
            ):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                if isinstance(value, list) and all(isinstance(s, str) for s in value):
                    out[path.parent.name] = [s.strip() for s in value if s.strip()]
    return out


# --------------------------------------------------------------------------------------------
# gettext catalogs and man pages


def read_mo(path: Path) -> list[tuple[str, str]]:
    """(msgid, msgstr) pairs of a .mo file: translated, non-empty, differing from the msgid."""
    try:
        data = path.read_bytes()
        magic = struct.unpack("<I", data[:4])[0]
        end = "<" if magic == 0x950412DE else ">"
        _, n, o_ids, o_strs = struct.unpack(end + "4I", data[4:20])
        pairs = []
        for i in range(n):
            il, io_ = struct.unpack(end + "2I", data[o_ids + 8 * i : o_ids + 8 * i + 8])
            sl, so = struct.unpack(end + "2I", data[o_strs + 8 * i : o_strs + 8 * i + 8])
            msgid = data[io_ : io_ + il].split(b"\0")[0].decode("utf-8")
            msgstr = data[so : so + sl].split(b"\0")[0].decode("utf-8")
            if msgid and msgstr.strip() and msgstr != msgid:
                if "\x04" in msgid:  # msgctxt
                    msgid = msgid.split("\x04", 1)[1]
                pairs.append((msgid.strip("\n"), msgstr.strip("\n")))
        return pairs
    except (OSError, UnicodeDecodeError, struct.error):
        return []


def catalogs() -> dict[str, list[tuple[str, list[tuple[str, str]]]]]:
    """Language -> [(domain, pairs)] for every locale directory, sorted."""
    out: dict[str, list[tuple[str, list[tuple[str, str]]]]] = defaultdict(list)
    for d in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES")):
        locale = d.parent.name
        for mo in sorted(d.glob("*.mo")):
            if SKIP_DOMAINS.match(mo.stem):
                continue
            pairs = read_mo(mo)
            if len(pairs) >= 10:
                out[locale].append((mo.stem, pairs))
    return out


ACCENT = {":": "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", ",": "\u0327"}
ROFF_ESC: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"\\f(\[[^]]*\]|\(..|.)"), ""),
    (re.compile(r"\\\*(\[[^]]*\]|\(..|.)"), ""),
    (re.compile(r"\\s[+-]?\d+"), ""),
    (re.compile(r"\\\(([:'`^~,])(\w)"), lambda m: unicodedata.normalize("NFC", m[2] + ACCENT[m[1]])),
    (re.compile(r"\\\(ss"), "\u00df"),
    (re.compile(r"\\\((em|en)"), "\u2014"),
    (re.compile(r"\\\((lq|rq|dq)"), '"'),
    (re.compile(r"\\\((aq|oq|cq)"), "'"),
    (re.compile(r"\\\(bu"), "\u2022"),
    (re.compile(r"\\\(..|\\\[[^]]*\]"), ""),
    (re.compile(r"\\[-e]"), "-"),
    (re.compile(r"\\[&%c|^:]"), ""),
    (re.compile(r"\\ "), " "),
]


def roff_text(source: str) -> str:
    """Plain text of a man page: macros dropped except the text arguments of font/heading macros."""
    out: list[str] = []
    skip = False
    for line in source.splitlines():
        if skip:
            skip = line.strip() != ".."
            continue
        if line.startswith(('.\\"', "'\\\"", '.\\"')):
            continue
        if line.startswith((".", "'")):
            macro, _, rest = line[1:].strip().partition(" ")
            if macro in ("de", "ig"):
                skip = True
                continue
            if macro in ("SH", "SS", "B", "I", "BR", "IR", "RB", "BI", "IB", "RI", "IP", "TP", "SM"):
                line = (
                    rest.replace('"', "")
                    if macro not in ("IP",)
                    else rest.split('"')[1]
                    if '"' in rest
                    else ""
                )
            else:
                continue
        for pattern, repl in ROFF_ESC:
            line = pattern.sub(repl, line)
        out.append(line.replace("\\\\", "\\"))
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def man_pages(root: Path) -> list[str]:
    texts = []
    for path in sorted(root.glob("man[1-8]/*.gz")):
        raw = gz_text(path)
        if raw and not raw.startswith(".so "):
            texts.append(roff_text(raw))
    return unique(texts)


# --------------------------------------------------------------------------------------------
# assembly


def group(items: list[str], rng: random.Random, target: int, sep: str = "\n\n") -> str:
    """Consecutive items from a random start, joined until `target` characters."""
    start = rng.randrange(len(items))
    out: list[str] = []
    size = 0
    for item in items[start:] + items[:start]:
        if out and size + len(item) > target:
            break
        out.append(item)
        size += len(item) + len(sep)
    return cut(sep.join(out), max(target, MIN_CHARS), sep)


BOILERPLATE = [
    "Skip to main content",
    "Home | Library | Language Reference | Downloads | About | Search",
    "This site uses cookies to remember your preferences and to count visits. By continuing to browse "
    "the documentation you accept our use of cookies. Privacy policy Accept",
    "Related pages",
    "Previous topic | Next topic | Report a bug | Show source",
    "\u00a9 2001-2024 Python Software Foundation and contributors. Content is available under the PSF "
    "License Version 2. Privacy | Terms of use | Sitemap | Contact. Last updated on Feb 20, 2024.",
]


def mixed_label(parts: list[tuple[str, str]]) -> str:
    count: Counter[str] = Counter()
    for lang, text in parts:
        count[lang] += letters(text)
    return count.most_common(1)[0][0]


def build(out: Path) -> Counter[tuple[str, str]]:
    rng = random.Random(SEED)
    docs: list[dict[str, str]] = []

    def add(kind: str, lang: str, texts: list[str], quota: int) -> None:
        texts = [t for t in texts if MIN_CHARS <= len(t) <= MAX_CHARS]
        picked = rng.sample(texts, min(quota, len(texts)))
        docs.extend({"text": t, "lang": lang, "kind": kind} for t in picked)

    # ---- English
    add("licence", "en", licence_texts(), EN_QUOTA["licence"])
    add("changelog", "en", changelog_texts(rng), EN_QUOTA["changelog"])
    plain, with_code = pypi_texts()
    add("readme", "en", plain, EN_QUOTA["readme"])
    commented, snippets = stdlib_code(rng)
    code_quota = EN_QUOTA["code"]
    add("code", "en", with_code, code_quota // 2)
    add("code", "en", commented, code_quota - min(code_quota // 2, len(with_code)))
    api, doc_pairs = api_texts(rng)
    add("api", "en", api, EN_QUOTA["api"])
    add(
        "manpage",
        "en",
        [cut(t, log_uniform(rng, 300)) for t in man_pages(Path("/usr/share/man"))],
        EN_QUOTA["manpage"],
    )

    debs = dpkg_descriptions()
    summaries = []
    for d in dist_infos():
        meta = (d / "METADATA").read_text("utf-8", errors="replace") if (d / "METADATA").is_file() else ""
        m = re.search(r"^Summary: (.+)$", meta, re.MULTILINE)
        if m:
            name = re.search(r"^Name: (.+)$", meta, re.MULTILINE)
            summaries.append((name.group(1) if name else d.name, m.group(1).strip()))
    short: list[str] = []
    for name, summary in summaries:
        short.append(f"{name}\n\n{summary}")
    for qual, ds in doc_pairs:
        short.append(f"{qual}\n\n{sentences_of(ds, rng.randint(1, 3))}")
    for pkg, synopsis, body in debs:
        short.append(f"{pkg}: {synopsis}\n\n{sentences_of(body, rng.randint(1, 3))}")
    add("short", "en", [s for s in unique(short) if len(s) <= 300], EN_QUOTA["short"])

    spacy = spacy_sentences()
    prose = [group([b for _, _, b in debs if len(b) > 80], rng, log_uniform(rng, 200)) for _ in range(300)]
    if "en" in spacy:
        prose += [group(spacy["en"], rng, log_uniform(rng, 50, 600), " ") for _ in range(20)]
    add("prose", "en", unique(prose), EN_QUOTA["prose"])

    cats = catalogs()
    english_ids: list[list[str]] = []
    for locale in ("de", "fr"):  # the msgids are the same English in every locale; two suffice
        english_ids += [[i for i, _ in pairs] for _, pairs in cats.get(locale, [])]
    for locale in sorted(cats):
        if iso(locale) == "en":  # en_GB etc.: English translations of English
            english_ids += [[s for _, s in pairs] for _, pairs in cats[locale]]
    en_messages = [group(rng.choice(english_ids), rng, log_uniform(rng)) for _ in range(400)]
    add("messages", "en", unique(en_messages), EN_QUOTA["messages"])

    # ---- not English
    by_lang: dict[str, list[list[str]]] = defaultdict(list)
    for locale, domains in cats.items():
        if iso(locale) != "en":
            by_lang[iso(locale)] += [[s for _, s in pairs] for _, pairs in domains]
    langs = sorted(by_lang)
    messages: list[tuple[str, str]] = []
    shorts: list[tuple[str, str]] = []
    for lang in langs:
        for _ in range(MESSAGES_PER_LANG):
            messages.append((lang, group(rng.choice(by_lang[lang]), rng, log_uniform(rng))))
        flat = [s for strings in by_lang[lang] for s in strings]
        titles = [s for s in flat if 8 <= len(s) <= 40 and "\n" not in s]
        sents = [s for s in flat if 40 <= len(s) <= 200 and s.rstrip().endswith(".") and "\n" not in s]
        for _ in range(3):
            if titles and sents:
                body = " ".join(rng.sample(sents, min(len(sents), rng.randint(1, 3))))
                shorts.append((lang, cut(f"{rng.choice(titles)}\n\n{body}", 300, " ")))
    rng.shuffle(messages)
    rng.shuffle(shorts)
    seen_xx: set[str] = set()
    for kind, pairs, quota in (
        ("messages", messages, XX_QUOTA["messages"]),
        ("short", shorts, XX_QUOTA["short"]),
    ):
        n = 0
        for lang, text in pairs:
            if (
                n >= quota
                or not MIN_CHARS <= len(text) <= MAX_CHARS
                or text in seen_xx
                or english_share(text) >= 0.02
            ):
                continue
            seen_xx.add(text)
            docs.append({"text": text, "lang": lang, "kind": kind})
            n += 1

    pages = []
    for d in sorted(Path("/usr/share/man").iterdir()):
        if d.is_dir() and not d.name.startswith("man"):
            pages += [(iso(d.name), cut(t, log_uniform(rng, 300))) for t in man_pages(d)]
    # Translated man pages keep untranslated English sections: pages with English words are dropped.
    pages = [(lang, text) for lang, text in pages if english_share(text) < 0.02]
    for lang, text in rng.sample(pages, min(XX_QUOTA["manpage"], len(pages))):
        if len(text) >= MIN_CHARS:
            docs.append({"text": text, "lang": lang, "kind": "manpage"})

    sent_docs = []
    for lang in sorted(spacy):
        if lang in ("en", "xx"):
            continue
        for _ in range(4):
            sent_docs.append((lang, group(spacy[lang], rng, log_uniform(rng, 50, 2000), " ")))
    for lang, text in rng.sample(sent_docs, min(XX_QUOTA["sentences"], len(sent_docs))):
        if len(text) >= MIN_CHARS:
            docs.append({"text": text, "lang": lang, "kind": "sentences"})

    # non-English prose between code blocks (code <= half the characters)
    long_msgs = {lang: [s for st in by_lang[lang] for s in st if len(s) >= 60] for lang in langs}
    code_langs = [lang for lang in langs if len(long_msgs[lang]) >= 20]
    for _ in range(XX_QUOTA["code"]):
        lang = rng.choice(code_langs)
        parts: list[str] = []
        prose_len = code_len = 0
        target = log_uniform(rng, 300, 8000)
        while prose_len + code_len < target:
            para = " ".join(rng.sample(long_msgs[lang], rng.randint(1, 4)))
            parts.append(para)
            prose_len += len(para)
            snippet = rng.choice(snippets)
            lines = snippet.splitlines()
            at = rng.randrange(len(lines))
            block = "\n".join(lines[at : at + rng.randint(3, 15)])
            if code_len + len(block) <= prose_len:
                parts.append(f"```python\n{block}\n```")
                code_len += len(block)
        docs.append({"text": "\n\n".join(parts), "lang": lang, "kind": "code"})

    # mixed pages
    en_bodies = [
        d["text"] for d in docs if d["lang"] == "en" and d["kind"] in ("readme", "api", "prose", "licence")
    ]
    for i in range(XX_QUOTA["mixed"] + EN_QUOTA["mixed"]):
        if i % 2 == 0:  # English boilerplate around a non-English body
            lang = rng.choice(langs)
            body = group(rng.choice(by_lang[lang]), rng, log_uniform(rng, 100, 6000))
            head = rng.sample(BOILERPLATE, rng.randint(1, 4))
            tail = rng.sample(BOILERPLATE, rng.randint(0, 2))
            parts_l = [("en", "\n".join(head)), (lang, body), ("en", "\n".join(tail))]
        else:  # translated UI strings around an English body
            lang = rng.choice(langs)
            flat = [s for st in by_lang[lang] for s in st if 3 <= len(s) <= 30 and "\n" not in s]
            if len(flat) < 10:
                continue
            nav = " | ".join(rng.sample(flat, rng.randint(4, 12)))
            foot = " | ".join(rng.sample(flat, rng.randint(0, 6)))
            body = cut(rng.choice(en_bodies), log_uniform(rng, 100, 6000))
            parts_l = [(lang, nav), ("en", body), (lang, foot)]
        text = "\n\n".join(t for _, t in parts_l if t).strip()
        if MIN_CHARS <= len(text) <= MAX_CHARS:
            docs.append({"text": text, "lang": mixed_label(parts_l), "kind": "mixed"})

    lines = "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in docs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(lines.encode("utf-8")))
    return Counter((d["lang"] if d["lang"] == "en" else "xx", d["kind"]) for d in docs)


def read_set(path: Path) -> Iterator[dict[str, str]]:
    data = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())
    for line in data.decode("utf-8").splitlines():
        yield json.loads(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    counts = build(args.out)
    for (lang, kind), n in sorted(counts.items()):
        print(f"{lang} {kind:10} {n}")
    docs = list(read_set(args.out))
    langs = Counter(d["lang"] for d in docs)
    print(
        f"{len(docs)} documents, {sum(langs[k] for k in langs if k != 'en')} not English in "
        f"{len(langs) - 1} languages, {args.out.stat().st_size:,} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
