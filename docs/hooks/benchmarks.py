"""mkdocs hook: the Benchmarks pages, generated from benchmarks/results/ while the site builds.

`benchmarks/site.py` makes the pages from `benchmarks/results/index.yaml` (and the images they
show); they are added to the build as generated files, never written into docs/. A result file
without an entry, an entry naming a missing file or a page with no entry stops the build.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]


def on_files(files: Files, config: Any) -> Files:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks import site

    try:
        pages = site.pages()
        images = site.assets()
    except site.CatalogueError as e:
        raise PluginError(f"benchmarks: {e}") from None
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    for path, source in images.items():
        files.append(File.generated(config, path, content=source.read_bytes()))
    return files
