"""The documentation site's Benchmarks pages, built from `benchmarks/results/index.yaml`.

The catalogue declares every file in `benchmarks/results/`: the page that shows it, its title, the
command that produced it, the machine, the date and its headline. `catalogue_problems` lists what is
wrong with it (a result file without an entry, an entry naming a missing file, an empty field, an
unknown page, a page with no entry); `pages` returns the site's pages, ``benchmarks/index.md`` and one
page per `PAGES` key, with every result rendered: Markdown included, text and logs in code blocks,
JSON as a table (a flat list of records) or pretty-printed in a collapsed block, SVG as an image.
The site's hook (`docs/hooks/benchmarks.py`) writes them into the build; nothing lands in docs/.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from selene.docs.markdown import cell, table

RESULTS = Path(__file__).resolve().parent / "results"
CATALOGUE = "index.yaml"
FIELDS = ("page", "title", "command", "machine", "date", "summary")
PAGES: dict[str, str] = {
    "ingest": "Ingest: readers, extraction, language id, filters",
    "quality": "Quality classifiers",
    "dedup": "Fuzzy dedup",
    "spans-substrings": "Span and exact substring dedup",
    "tokenize": "Tokenization",
    "training": "Training on a CPU",
    "gpu": "GPU: one NVIDIA H200",
    "serving": "Serving plans",
    "planning": "Planning and scaling studies",
    "ablations": "Data ablations",
    "executors": "Executors, scale and faults",
}
"""Page name (``benchmarks/<name>.md``) → its title, in the site's order."""
ASSET_SUFFIXES = (".svg", ".png")
LONG_TEXT = 100  # lines: a longer text or log shows its first and last `EDGE` lines
EDGE = 40
LONG_JSON = 300  # lines of pretty-printed JSON shown in full; beyond, the first `LONG_JSON`


class CatalogueError(ValueError):
    """The catalogue cannot be read, or it does not describe benchmarks/results/ as it is."""


@dataclass(frozen=True)
class Entry:
    files: tuple[str, ...]
    page: str
    title: str
    command: str
    machine: str
    date: str
    summary: str

    @property
    def anchor(self) -> str:
        """The id of the entry's heading on its page: its first file's name, slugged."""
        return re.sub(r"[^a-z0-9]+", "-", self.files[0].lower()).strip("-")


def read_catalogue(results: Path = RESULTS) -> list[dict[str, Any]]:
    """The catalogue's raw entries; `CatalogueError` when it is missing or not a YAML list of mappings."""
    path = results / CATALOGUE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise CatalogueError(f"{path}: cannot be read: {e}") from None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise CatalogueError(f"{path}: expected a list of entries (mappings)")
    return data


def catalogue_problems(results: Path = RESULTS) -> list[str]:
    """Every way the catalogue and the folder disagree, one line each; empty when they agree."""
    raw = read_catalogue(results)
    problems: list[str] = []
    claimed: dict[str, int] = {}
    for k, item in enumerate(raw):
        where = f"{CATALOGUE} entry {k + 1} ({item.get('title') or item.get('files')})"
        files = item.get("files")
        if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
            problems.append(f"{where}: files: a non-empty list of file names is required")
            files = []
        for f in files:
            if not (results / f).is_file():
                problems.append(f"{where}: files: {f} is not in {results}")
            if f in claimed:
                problems.append(f"{where}: files: {f} is already in entry {claimed[f] + 1}")
            claimed.setdefault(f, k)
        for field in FIELDS:
            value = item.get(field)
            if not isinstance(value, str | int | float) or not str(value).strip():
                problems.append(f"{where}: {field}: missing or empty")
        if item.get("page") and item.get("page") not in PAGES:
            problems.append(f"{where}: page: {item['page']!r} is not one of {', '.join(PAGES)}")
        unknown = set(item) - {"files", *FIELDS}
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    for path in sorted(results.iterdir()):
        if path.is_file() and path.name != CATALOGUE and path.name not in claimed:
            problems.append(
                f"{path.name}: no entry in {CATALOGUE} (add one: page, title, command, machine, date, summary)"
            )
    used = {item.get("page") for item in raw}
    problems += [f"page {p}: no entry in {CATALOGUE} shows a result on it" for p in PAGES if p not in used]
    return problems


def load(results: Path = RESULTS) -> list[Entry]:
    """The catalogue's entries; `CatalogueError` listing every problem when there is any."""
    problems = catalogue_problems(results)
    if problems:
        raise CatalogueError(f"{results / CATALOGUE}:\n  " + "\n  ".join(problems))
    return [
        Entry(files=tuple(item["files"]), **{f: str(item[f]).strip() for f in FIELDS})
        for item in read_catalogue(results)
    ]


def pages(results: Path = RESULTS) -> dict[str, str]:
    """Site path → Markdown: ``benchmarks/index.md`` and ``benchmarks/<page>.md`` for every page."""
    entries = load(results)
    out = {"benchmarks/index.md": index_page(entries)}
    for name in PAGES:
        out[f"benchmarks/{name}.md"] = result_page(name, [e for e in entries if e.page == name], results)
    return out


def assets(results: Path = RESULTS) -> dict[str, Path]:
    """Site path → file: the images the pages show, under ``benchmarks/results/``."""
    return {
        f"benchmarks/results/{f}": results / f
        for e in load(results)
        for f in e.files
        if f.endswith(ASSET_SUFFIXES)
    }


def index_page(entries: list[Entry]) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Every figure selene's documentation quotes comes from a file in `benchmarks/results/`, produced by",
        "the command shown with it. Each page below shows its results whole: the command, the machine, the",
        "date of the measurement and the file itself. The list is `benchmarks/results/index.yaml`; a result",
        "file without an entry there fails the tests.",
        "",
    ]
    for name, title in PAGES.items():
        lines += [
            f"## [{title}]({name}.md)",
            "",
            table(
                ["result", "headline", "machine", "date"],
                (
                    [f"[{cell(e.title)}]({name}.md#{e.anchor})", cell(e.summary), cell(e.machine), e.date]
                    for e in entries
                    if e.page == name
                ),
            ),
            "",
        ]
    return "\n".join(lines)


def result_page(name: str, entries: list[Entry], results: Path) -> str:
    if not entries:
        raise CatalogueError(f"page {name}: no entry shows a result on it")
    lines = [f"# {PAGES[name]}", ""]
    shown = {f for e in entries for f in e.files}
    if name == "gpu":
        from benchmarks import site_gpu  # the tables of the H200 runs, from their JSON

        if set(site_gpu.SOURCES) <= shown:
            lines += [site_gpu.tables(results), ""]
    for e in entries:
        lines += [
            f"## {e.title} {{#{e.anchor}}}",
            "",
            f"**{e.summary}**",
            "",
            f"Machine: {e.machine}. Date: {e.date}. Files: "
            + ", ".join(f"`benchmarks/results/{f}`" for f in e.files)
            + ".",
            "",
            _fence(e.command.replace("; ", "\n"), "bash"),  # several commands: one a line
            "",
        ]
        linked = "".join((results / f).read_text(encoding="utf-8") for f in e.files if f.endswith(".md"))
        for f in e.files:
            if f.endswith(ASSET_SUFFIXES) and f"({f})" in linked:
                continue  # the entry's Markdown shows it already
            lines += [render_file(results / f, results), ""]
    return "\n".join(lines)


def render_file(path: Path, results: Path) -> str:
    """One result file as Markdown, by its kind."""
    suffix = path.suffix.lower()
    if suffix in ASSET_SUFFIXES:
        return f"![{path.name}](results/{path.name})"
    text = path.read_text(encoding="utf-8")
    if suffix == ".md":
        return _markdown(text, results)
    if suffix == ".json":
        return _json(path.name, json.loads(text))
    return f"`{path.name}`:\n\n" + _fence(_clip(text.rstrip("\n"), path.name), "text")


def _markdown(text: str, results: Path) -> str:
    """A result's own Markdown: headings moved below the entry's, links to results made to resolve."""
    levels = [len(m.group(1)) for m in re.finditer(r"^(#{1,6}) ", text, flags=re.M)]
    shift = max(0, 3 - min(levels)) if levels else 0
    text = re.sub(r"^(#{1,6}) ", lambda m: "#" * min(6, len(m.group(1)) + shift) + " ", text, flags=re.M)

    def link(m: re.Match[str]) -> str:
        bang, label, target = m.group(1), m.group(2), m.group(3)
        if re.match(r"[a-z]+:|#", target):
            return m.group(0)
        if (results / target).is_file():
            return f"{bang}[{label}](results/{target})"
        return f"{label} (`{target}`, not kept in benchmarks/results/)"

    return re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", link, text)


def _json(name: str, data: Any) -> str:
    if _records(data):
        keys = list(dict.fromkeys(k for row in data for k in row))
        rows = ([cell(_scalar(row.get(k))) for k in keys] for row in data)
        return f"`{name}`:\n\n" + table(keys, rows)
    pretty = _pretty(data).splitlines()
    note = ""
    if len(pretty) > LONG_JSON:
        note = f" (the first {LONG_JSON} of {len(pretty)} lines; the whole file: `benchmarks/results/{name}`)"
        pretty = pretty[:LONG_JSON]
    body = _fence("\n".join(pretty), "json")
    return f'??? note "{name}{note}"\n\n' + "\n".join(
        f"    {line}" if line else "" for line in body.splitlines()
    )


def _pretty(data: Any, indent: str = "") -> str:
    """JSON indented by two spaces, as json.dumps(indent=2) writes it, except that a list of scalars
    short enough stays on one line (a run's step times, a grid's sizes)."""
    inner = indent + "  "
    if isinstance(data, list) and data and all(_is_scalar(v) for v in data):
        flat = json.dumps(data, ensure_ascii=False)
        if len(flat) + len(indent) <= 100:
            return flat
    if isinstance(data, dict) and data:
        items = [
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, inner)}" for k, v in data.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(data, list) and data:
        return "[\n" + ",\n".join(f"{inner}{_pretty(v, inner)}" for v in data) + f"\n{indent}]"
    return json.dumps(data, ensure_ascii=False)


def _records(data: Any) -> bool:
    """A flat list of records: a non-empty list of mappings whose values are all scalars."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(r, dict) and all(_is_scalar(v) for v in r.values()) for r in data)
    )


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _scalar(v: Any) -> str:
    return "" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)


def _clip(text: str, name: str) -> str:
    lines = text.splitlines()
    if len(lines) <= LONG_TEXT:
        return text
    gone = len(lines) - 2 * EDGE
    note = f"[... {gone} lines left out here; the whole file: benchmarks/results/{name} ...]"
    return "\n".join([*lines[:EDGE], "", note, "", *lines[-EDGE:]])


def _fence(text: str, lang: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"
