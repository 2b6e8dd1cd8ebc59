#!/usr/bin/env python3
"""Build the bundled reference set (``data/reference/``): technical English prose the sample corpus
does not hold, for the bits per byte of `selene ablate`'s proxy models.

The texts are the docstrings (module, class and function) of third-party packages installed beside
selene: numpy, pydantic, rich, click, jinja2, dateutil, fsspec, httpx. The sample corpus
(`scripts/build_sample.py`) takes its docstrings and code from the standard library and its package
texts from distribution metadata, so none of these is in it. Each docstring of at least
`MIN_CHARS` characters (``inspect.cleandoc``-ed) is one document, at most `PER_PACKAGE` per package,
chosen by a hash of its qualified name so that no single module dominates. Files are parsed with
``ast`` (nothing is imported). Rebuilding on the same machine gives the same bytes (sorted files,
a fixed zstd level); another machine's package versions give other texts.

Usage: ``python scripts/build_reference.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import inspect
import json
import os
from pathlib import Path

import zstandard

PACKAGES = ("numpy", "pydantic", "rich", "click", "jinja2", "dateutil", "fsspec", "httpx")
MIN_CHARS = 400
PER_PACKAGE = 60
ROOT = Path(__file__).resolve().parent.parent


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def docstrings(name: str, root: Path) -> list[tuple[str, str]]:
    """(qualified name, docstring) of every long docstring in the package's sources, tests left out."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        if any(part in ("tests", "test", "testing", "_vendor") for part in rel.parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        module = ".".join(rel.with_suffix("").parts)
        nodes = [(module, tree)] + [
            (f"{module}.{n.name}", n)
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ]
        for qual, node in nodes:
            doc = ast.get_docstring(node, clean=False)
            if doc:
                text = inspect.cleandoc(doc).strip()
                if len(text) >= MIN_CHARS:
                    found.append((qual, text))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "data" / "reference"))
    args = ap.parse_args()
    rows = []
    for name in PACKAGES:
        root = package_dir(name)
        if root is None:
            print(f"{name}: not installed, skipped")
            continue
        docs = docstrings(name, root)
        seen: set[str] = set()
        picked = []
        for qual, text in sorted(docs, key=lambda d: hashlib.sha256(d[0].encode()).hexdigest()):
            if text not in seen:  # an inherited or copied docstring counts once
                seen.add(text)
                picked.append((qual, text))
            if len(picked) == PER_PACKAGE:
                break
        rows += [{"id": qual, "text": text, "meta": {"package": name}} for qual, text in sorted(picked)]
        print(f"{name}: {len(picked)} of {len(docs)} docstrings")
    os.makedirs(args.out, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()
    path = Path(args.out) / "docstrings.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor(level=19).compress(data))
    print(f"{len(rows)} documents, {len(data):,} bytes of text → {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
