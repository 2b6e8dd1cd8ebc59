"""The examples of `selene quality train`: what ``-p/-n NAME[KEYS]=PATH`` names, checked before any
work, and read as documents.

An item is parsed as ingest parses ``--source`` (`SourceSpec.parse`: ``NAME=GLOB`` or
``NAME[text_key=FIELD,id_key=FIELD]=GLOB``). What NAME means depends on what PATH is:

- a selene document dataset (a directory with manifest.json): NAME is the source taken from it
  (``-p PythonReference=runs/demo/ingest``); NAME ``*`` takes every document of it. A NAME that is
  not one of its sources is refused, listing them;
- files (a glob of .jsonl / .jsonl.gz / .jsonl.zst, .parquet): NAME only names the group (it keys
  the seeded sampling order); the text is in the field `text_key` (default ``text``).

Refused before any work (exit 2), each naming the item: a path that matches nothing, a file of
another kind, an empty file, a Parquet file without the text column or a jsonl file whose first
record lacks the text field, a dataset without the source, and the same file (or the same source of
the same dataset) in both classes.
"""

from __future__ import annotations

import glob as globlib
import itertools
import json
import os
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass

from selene.errors import ConfigError, InputError, PathError, SeleneError, UsageError
from selene.ingest.readers import _lines, decompressed_chunks, detect_format
from selene.io import dataset, fs

ALL_SOURCES = "*"
JSONL = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.zst", ".json.gz")
MAX_LINE_BYTES = 64 << 20
"""A longer line of an example file is refused: one document, not a file joined on one line."""
FORMS = "a selene dataset (a directory with manifest.json), .parquet or .jsonl(.gz/.zst)"


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    group: str  # the NAME of NAME=PATH


@dataclass(frozen=True)
class Item:
    """One ``-p``/``-n`` item, resolved: the files it matched (or the one dataset directory)."""

    flag: str
    spec: str  # as given
    name: str
    files: tuple[str, ...]
    text_key: str
    id_key: str | None
    sources: frozenset[str] | None  # a dataset's sources taken (None: all; files: unused)

    @property
    def where(self) -> str:
        return f"{self.flag} {self.spec}"

    @property
    def paths(self) -> tuple[str, ...]:
        return self.files


def _parse(flag: str, spec: str) -> tuple[str, str, str, str | None]:
    """(name, pattern, text_key, id_key) of ``NAME[KEYS]=PATTERN``, parsed by ingest's parser."""
    from selene.ingest.config import SourceSpec  # lazy: the ingest config loads pydantic models

    whole = spec.lstrip().startswith(ALL_SOURCES)
    given = "all" + spec.lstrip()[1:] if whole else spec  # ingest's names start with a letter or digit
    try:
        parsed = SourceSpec.parse(given)
    except ConfigError as e:
        message = str(e).replace(f"--source {given!r}", f"{flag} {spec!r}", 1)
        raise ConfigError(
            message.replace("expected NAME=GLOB", "expected NAME=PATH (a glob or a dataset)", 1)
        ) from None
    if parsed.meta_keys is not None:
        raise ConfigError(f"{flag} {spec!r}: meta_keys does not apply to examples (text_key and id_key do)")
    return (ALL_SOURCES if whole else parsed.name), parsed.glob, parsed.text_key, parsed.id_key


def _matched(pattern: str, where: str) -> list[str]:
    """The paths of a glob (a local one matches dataset directories too), sorted; none: refused."""
    if os.path.isdir(pattern):
        return [pattern]
    found = sorted(globlib.glob(pattern)) if fs.is_local(pattern) else fs.expand(pattern)[0]
    if not found:
        raise PathError(f"{where}: {pattern}: matches no file")
    return found


def _jsonl_lines(path: str) -> Generator[bytes, None, None]:
    """The lines of a jsonl(.gz/.zst) file, streamed by ingest's reader (memory: a line, not the
    file): a cut-off or corrupt stream is an error naming the file and offset, not a silent end."""
    _, comp = detect_format(path)
    fsys, p = fs.get_fs(path)
    with fsys.open(p, "rb") as raw:
        for n, offset, line, damage in _lines(decompressed_chunks(raw, comp), MAX_LINE_BYTES):
            if damage is not None:
                raise InputError(f"{path}: {damage}")
            if line is None:
                raise InputError(
                    f"{path}: line {n} (byte {offset}) is longer than {MAX_LINE_BYTES >> 20} MiB"
                )
            yield line


def _first_record(path: str) -> dict[str, object] | None:
    """The first non-blank line of a jsonl file as JSON (None: not an object)."""
    lines = _jsonl_lines(path)
    try:
        for line in lines:
            if line.strip():
                try:
                    row = json.loads(line)
                except ValueError:
                    return None
                return row if isinstance(row, dict) else None
    finally:
        lines.close()
    return None


def _check_file(path: str, text_key: str, where: str, id_key: str | None = None) -> None:
    fix = f"name the text field: {where.split()[0]} 'NAME[text_key=FIELD]=...'"
    if not path.endswith((".parquet", *JSONL)):
        raise PathError(f"{where}: {path} is not {FORMS}")
    if fs.size(path) == 0:
        raise PathError(f"{where}: {path} is empty")
    if path.endswith(".parquet"):
        try:
            names = dataset.open_parquet(path).schema_arrow.names
        except SeleneError as e:
            raise UsageError(f"{where}: {e}") from None
        if text_key not in names:
            raise UsageError(
                f"{where}: {path} has no column {text_key!r} (its columns: {', '.join(names)}); {fix}"
            )
        if id_key is not None and id_key not in names:
            raise UsageError(
                f"{where}: {path} has no column {id_key!r} for id_key (its columns: {', '.join(names)})"
            )
        return
    try:
        row = _first_record(path)
    except (OSError, EOFError, ValueError, InputError) as e:
        raise UsageError(f"{where}: {path} cannot be read as {path.rsplit('.', 1)[-1]}: {e}") from None
    if row is None:
        raise UsageError(f"{where}: {path}: its first line is not a JSON object")
    if not isinstance(row.get(text_key), str):
        raise UsageError(
            f"{where}: {path}: its first record has no string field {text_key!r} (its fields: {', '.join(row)}); {fix}"
        )
    if id_key is not None and id_key not in row:
        raise UsageError(
            f"{where}: {path}: its first record has no field {id_key!r} for id_key (its fields: {', '.join(row)})"
        )


def _dataset_sources(path: str, name: str, where: str) -> frozenset[str] | None:
    """The sources of the dataset at `path` that the item takes: NAME, or all of them (`*`)."""
    if not fs.exists(fs.join(path, dataset.MANIFEST)):
        raise UsageError(
            f"{where}: {path} is a directory but not a finished selene dataset (no manifest.json)"
        )
    try:
        m = dataset.require_documents(path, "train on")
    except SeleneError as e:
        raise UsageError(f"{where}: {e}") from None
    have = m.stats.per_source
    if name == ALL_SOURCES:
        return None
    if name not in have:
        raise ConfigError(
            f"{where}: {name!r} is not a source of the dataset {path} (its sources: {', '.join(have)}); "
            f"NAME selects a source, '{ALL_SOURCES}' takes every document: {where.split()[0]} '{ALL_SOURCES}={path}'"
        )
    if not have[name].kept:
        raise UsageError(
            f"{where}: the dataset {path} has no documents of source {name!r} left (all removed before it)"
        )
    return frozenset({name})


def resolve(flag: str, spec: str) -> Item:
    """One item parsed and checked (see the module's doc)."""
    name, pattern, text_key, id_key = _parse(flag, spec)
    where = f"{flag} {spec}"
    files = _matched(pattern, where)
    dirs = [p for p in files if os.path.isdir(p)]
    if dirs and len(files) > 1:
        raise UsageError(
            f"{where}: matches a dataset directory ({dirs[0]}) and other paths; give one dataset per item"
        )
    if dirs:
        if (text_key, id_key) != ("text", None):
            raise ConfigError(
                f"{where}: text_key and id_key apply to files; a selene dataset has `text` and `id`"
            )
        return Item(flag, spec, name, (files[0],), text_key, id_key, _dataset_sources(files[0], name, where))
    if name == ALL_SOURCES:
        raise ConfigError(
            f"{where}: '{ALL_SOURCES}' (every source) names a dataset's sources; give files a NAME"
        )
    for path in files:
        _check_file(path, text_key, where, id_key)
    return Item(flag, spec, name, tuple(files), text_key, id_key, None)


def files_item(where: str, pattern: str, group: str) -> Item:
    """A recipe's glob of example files (or a dataset, taken whole), checked as `resolve` checks an item."""
    files = _matched(pattern, where)
    if len(files) == 1 and os.path.isdir(files[0]):
        return Item(
            where, pattern, group, (files[0],), "text", None, _dataset_sources(files[0], ALL_SOURCES, where)
        )
    for path in files:
        if os.path.isdir(path):
            raise UsageError(f"{where}: {pattern} matches a dataset directory ({path}) and other paths")
        _check_file(path, "text", where)
    return Item(where, pattern, group, tuple(files), "text", None, None)


def resolve_classes(positives: Sequence[str], negatives: Sequence[str]) -> tuple[list[Item], list[Item]]:
    """Both classes' items, checked; the same file, or the same dataset with a source in common, in
    both classes is refused (a document cannot be an example of both)."""
    pos = [resolve("--positive", s) for s in positives]
    neg = [resolve("--negative", s) for s in negatives]
    for a, b in itertools.product(pos, neg):
        for fa, fb in itertools.product(a.files, b.files):
            if os.path.realpath(fa) != os.path.realpath(fb):
                continue
            if (
                os.path.isdir(fa)
                and a.sources is not None
                and b.sources is not None
                and not a.sources & b.sources
            ):
                continue  # two sources of one dataset
            raise ConfigError(
                f"{a.where} and {b.where} both take {fa}"
                + (f" (sources: {_named(a)} and {_named(b)})" if os.path.isdir(fa) else "")
                + ": a document cannot be an example of both classes"
            )
    return pos, neg


def _named(item: Item) -> str:
    return "all" if item.sources is None else ", ".join(sorted(item.sources))


def _parquet_examples(path: str, item: Item, group: str) -> Iterator[Example]:
    """A Parquet file's documents, one row group at a time (the text and id columns only)."""
    names = dataset.open_parquet(path).schema_arrow.names
    key = (
        item.id_key if item.id_key in names else ("id" if "id" in names else None)
    )  # id_key: checked up front
    row = 0
    for table in dataset.iter_row_groups(path, [item.text_key] + ([key] if key else [])):
        texts = table.column(item.text_key).to_pylist()
        ids = table.column(key).to_pylist() if key else [f"{path}#{row + i}" for i in range(table.num_rows)]
        row += table.num_rows
        for i, text in zip(ids, texts, strict=True):
            yield Example(str(i), text if isinstance(text, str) else "", group)


def read_item(item: Item, group: str | None = None) -> Iterator[Example]:
    """The documents of one item, as examples of `group` (by default the item's NAME); a record
    without the text field is an `InputError` naming the file and line (found while reading: exit 1)."""
    name = item.name if group is None else group
    for path in item.files:
        if os.path.isdir(path):
            yield from dataset_examples(path, name, item.sources)
        elif path.endswith(".parquet"):
            yield from _parquet_examples(path, item, name)
        else:
            for n, line in enumerate(_jsonl_lines(path), 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as e:
                    raise InputError(f"{item.where}: {path} line {n} is not JSON ({e})") from None
                if not isinstance(row, dict) or not isinstance(row.get(item.text_key), str):
                    raise InputError(f"{item.where}: {path} line {n} has no {item.text_key!r} string")
                doc_id = row.get(item.id_key or "id", f"{path}#{n}")
                yield Example(str(doc_id), row[item.text_key], name)


def dataset_examples(
    path: str, group: str, sources: frozenset[str] | set[str] | None = None
) -> Iterator[Example]:
    """The documents of the finished selene dataset at `path`; those of `sources` only, when given."""
    for doc in dataset.iter_documents(path):
        if sources is None or doc["source"] in sources:
            yield Example(doc["id"], doc["text"], group)


def read_examples(group: str, pattern: str, where: str) -> Iterator[Example]:
    """The documents of a glob of example files (or of a dataset, taken whole), checked first."""
    yield from read_item(files_item(where, pattern, group))


def reference_texts(patterns: Sequence[str], limit: int | None, where: str) -> list[str]:
    """The non-blank texts of reference files (bits per byte is scored on them), in file order, at
    most `limit`; `UsageError` naming `where` when the files hold none."""
    texts: list[str] = []
    for pattern in patterns:
        for ex in read_examples("reference", pattern, where):
            if limit is not None and len(texts) >= limit:
                return texts
            if ex.text.strip():
                texts.append(ex.text)
    if patterns and not texts:
        raise UsageError(f"{where} {', '.join(patterns)}: no text in these files")
    return texts


def described(items: Sequence[Item]) -> str:
    """The items and their files, as an error about a class names them."""
    return "; ".join(
        f"{it.spec} ({', '.join(it.files[:5])}{' ...' if len(it.files) > 5 else ''})" for it in items
    )
