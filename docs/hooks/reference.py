"""mkdocs hook: the reference pages (CLI, configuration, filters, removal reasons), generated from
the code while the site builds (`selene.docs.pages`); nothing is written into docs/."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's selene, whatever is installed

from selene.docs import pages


def on_files(files: Files, config: Any) -> Files:
    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files
