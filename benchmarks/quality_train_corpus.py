"""Local text for `benchmarks/quality_train.py`: man pages, /usr/share/doc copyright files and
changelogs, Python's standard-library docstrings, cut into pieces of one kind each.

Every function returns (id, text) pairs in a fixed order (sorted paths), so two runs build the same
sets; ids name the file and the piece.
"""

from __future__ import annotations

import ast
import glob
import gzip
import re
import sys
from pathlib import Path

PIECE = 2000  # characters a piece holds at most
LEAST = 300  # a shorter piece is left out

_FONT = re.compile(r"\\f[BIRP1-4]|\\f\(..|\\f\[[^]]*\]|\\[,/&]|\\\*\(..|\\\*.")
_ESCAPE = re.compile(r"\\(.)")


def _pieces(name: str, text: str) -> list[tuple[str, str]]:
    """`text` cut at paragraph breaks into pieces of at most PIECE characters (LEAST at least)."""
    out, buf = [], ""
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if buf and len(buf) + len(para) > PIECE:
            out.append(buf)
            buf = ""
        buf = f"{buf}\n\n{para}" if buf else para[:PIECE]
    if buf:
        out.append(buf)
    return [(f"{name}#{k}", p) for k, p in enumerate(out) if len(p) >= LEAST]


def man_text(raw: str) -> str:
    """The prose of a troff man page: requests dropped (section titles kept), font escapes removed."""
    lines = []
    for line in raw.splitlines():
        if line.startswith(('.\\"', "'\\\"")):
            continue
        if line.startswith("."):
            parts = line.split(None, 1)
            if parts[0] in (".SH", ".SS"):
                lines += ["", parts[1].strip('"') if len(parts) > 1 else ""]
            elif parts[0] in (".PP", ".P", ".LP", ".TP", ".IP", ".sp", ".br"):
                lines.append("")
            elif parts[0] in (".B", ".I", ".BR", ".IR", ".BI", ".RB", ".RI", ".IB") and len(parts) > 1:
                lines.append(parts[1].replace('"', ""))
            continue
        lines.append(_ESCAPE.sub(r"\1", _FONT.sub("", line)))
    return "\n".join(lines)


def man_pages(section: str, limit: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(glob.glob(f"/usr/share/man/man{section}/*.gz")):
        try:
            raw = gzip.decompress(Path(path).read_bytes()).decode("utf-8", "replace")
        except (OSError, EOFError):
            continue
        if raw.startswith(".so "):
            continue  # a link to another page
        out += _pieces(Path(path).name, man_text(raw))
        if len(out) >= limit:
            break
    return out[:limit]


def doc_files(kind: str, limit: int) -> list[tuple[str, str]]:
    """/usr/share/doc/*/copyright (kind "copyright") or changelog(.Debian).gz ("changelog")."""
    patterns = ["/usr/share/doc/*/copyright"] if kind == "copyright" else ["/usr/share/doc/*/changelog*.gz"]
    out: list[tuple[str, str]] = []
    for path in sorted(p for pattern in patterns for p in glob.glob(pattern)):
        try:
            data = Path(path).read_bytes()
            text = (gzip.decompress(data) if path.endswith(".gz") else data).decode("utf-8", "replace")
        except (OSError, EOFError):
            continue
        out += _pieces(path.removeprefix("/usr/share/doc/"), text)
        if len(out) >= limit:
            break
    return out[:limit]


def docstrings(limit: int) -> list[tuple[str, str]]:
    """Docstrings of the standard library's modules, classes and functions (LEAST characters or more)."""
    lib = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    out: list[tuple[str, str]] = []
    for path in sorted(lib.glob("*.py")) + sorted(lib.glob("*/*.py")):
        if "test" in path.parts[-2:][0] or "site-packages" in str(path):
            continue
        try:
            tree = ast.parse(path.read_text("utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        nodes = [
            tree,
            *(
                n
                for n in ast.walk(tree)
                if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            ),
        ]
        for node in nodes:
            doc = ast.get_docstring(node)  # type: ignore[arg-type]
            if doc and len(doc) >= LEAST:
                name = getattr(node, "name", "<module>")
                out.append((f"{path.relative_to(lib)}:{name}", doc[:PIECE]))
                if len(out) >= limit:
                    return out
    return out
