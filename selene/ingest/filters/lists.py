"""Word and block lists the filters read from files the user supplies: one entry per line.

The formats are the ones these lists are published in: UT1's blacklists (a category directory
holding a ``domains`` and a ``urls`` file), LDNOOBW's bad-word lists, and plain text files of domains,
URLs or substrings. Blank lines and lines starting with ``#`` are skipped; ``.gz`` files are read
decompressed. A list that is missing, unreadable or empty is a configuration error naming the file
(and the line, for text that is not UTF-8): an empty block list would silently block nothing.
"""

from __future__ import annotations

import gzip
import zlib

from selene.errors import ConfigError
from selene.io import fs

__all__ = ["read_list", "read_ut1_category"]


def read_list(path: str, where: str) -> list[str]:
    """The entries of the list file `path` (stripped, in file order); `where` names the setting in errors."""
    try:
        data = fs.read_bytes(path)
    except FileNotFoundError:
        raise ConfigError(f"{where}: list file {path} does not exist") from None
    except OSError as e:
        raise ConfigError(f"{where}: cannot read list file {path}: {e}") from None
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise ConfigError(f"{where}: list file {path} is not valid gzip: {e}") from None
    entries = []
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as e:
            raise ConfigError(
                f"{where}: list file {path}, line {n}: not UTF-8 ({e.reason} at byte {e.start})"
            ) from None
        if line and not line.startswith("#"):
            entries.append(line)
    if not entries:
        raise ConfigError(f"{where}: list file {path} has no entries (blank lines and # comments only)")
    return entries


def read_ut1_category(directory: str, where: str) -> tuple[list[str], list[str]]:
    """(domains, urls) of a UT1 category directory (``blacklists/<category>/``): its ``domains`` and
    ``urls`` files, either of which may be absent (or gzipped), not both."""
    found: dict[str, list[str]] = {}
    for name in ("domains", "urls"):
        for candidate in (name, f"{name}.gz"):
            path = fs.join(directory, candidate)
            if fs.exists(path):
                found[name] = read_list(path, where)
                break
    if not found:
        if not fs.exists(directory):
            raise ConfigError(f"{where}: UT1 list directory {directory} does not exist")
        raise ConfigError(
            f"{where}: {directory} is not a UT1 category directory: it has no 'domains' or 'urls' file"
        )
    return found.get("domains", []), found.get("urls", [])
