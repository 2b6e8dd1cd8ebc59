"""benchmarks/results/index.yaml declares every result file, and the site's Benchmarks pages are
built from it: a result that lands without an entry, an entry naming a missing file or an empty
field fails here, before the site is built."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks import site, site_gpu

FIELDS = {
    "title": "A result",
    "command": "python benchmarks/x.py",
    "machine": "2-core CPU machine",
    "date": "2026-11-24",
    "summary": "1.5x",
}


def test_every_result_file_has_a_complete_entry() -> None:
    assert site.catalogue_problems() == []


class _Config(yaml.SafeLoader):
    """mkdocs.yml as data: its Python tags (``!!python/name:...``, ``!ENV``) read as None."""


_Config.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
_Config.add_multi_constructor("!", lambda loader, suffix, node: None)


def test_every_page_is_in_the_site_nav_in_order() -> None:
    text = Path(site.RESULTS.parents[1], "mkdocs.yml").read_text()
    nav = yaml.load(text, Loader=_Config)["nav"]
    section = next(item["Benchmarks"] for item in nav if isinstance(item, dict) and "Benchmarks" in item)
    paths = [p if isinstance(p, str) else next(iter(p.values())) for p in section]
    assert paths == ["benchmarks/index.md", *(f"benchmarks/{name}.md" for name in site.PAGES)]


def _folder(tmp_path: Path, extra: list[dict[str, Any]] | None = None) -> Path:
    """A results folder with one text result per page, each with its entry, and `extra` entries."""
    entries: list[dict[str, Any]] = []
    for name in site.PAGES:
        (tmp_path / f"{name}.txt").write_text(f"{name} result\n")
        entries.append({"files": [f"{name}.txt"], "page": name, **FIELDS, "title": f"{name} result"})
    entries += extra or []
    (tmp_path / site.CATALOGUE).write_text(yaml.safe_dump(entries, sort_keys=False))
    return tmp_path


def test_a_complete_folder_has_no_problem(tmp_path: Path) -> None:
    assert site.catalogue_problems(_folder(tmp_path)) == []


def test_a_file_without_entry_is_named(tmp_path: Path) -> None:
    results = _folder(tmp_path)
    (results / "new-run.json").write_text("{}")
    problems = site.catalogue_problems(results)
    assert len(problems) == 1 and problems[0].startswith("new-run.json: no entry in index.yaml")
    with pytest.raises(site.CatalogueError, match=r"new-run\.json: no entry"):
        site.pages(results)


def test_a_missing_file_an_empty_field_an_unknown_page_are_named(tmp_path: Path) -> None:
    results = _folder(
        tmp_path,
        [
            {"files": ["gone.txt"], "page": "dedup", **FIELDS},
            {"files": ["ingest.txt"], "page": "ingest", **FIELDS, "summary": " "},
            {
                "files": ["tokenize.txt"],
                "page": "tokenise",
                **{k: v for k, v in FIELDS.items() if k != "machine"},
            },
        ],
    )
    problems = "\n".join(site.catalogue_problems(results))
    assert "gone.txt is not in" in problems
    assert "entry 13 (A result): summary: missing or empty" in problems
    assert "files: ingest.txt is already in entry 1" in problems
    assert "page: 'tokenise' is not one of ingest" in problems
    assert "entry 14 (A result): machine: missing or empty" in problems


def test_a_page_with_no_entry_is_a_problem(tmp_path: Path) -> None:
    results = _folder(tmp_path)
    entries = yaml.safe_load((results / site.CATALOGUE).read_text())
    (results / site.CATALOGUE).write_text(yaml.safe_dump([e for e in entries if e["page"] != "planning"]))
    (results / "planning.txt").unlink()
    assert site.catalogue_problems(results) == ["page planning: no entry in index.yaml shows a result on it"]


def test_a_new_result_appears_on_its_page_and_in_the_index(tmp_path: Path) -> None:
    rows = [
        {"preset": "125m", "ttft_ms": 8.66350799, "ok": True},
        {"preset": "350m", "ttft_ms": 12.0, "ok": False},
    ]
    long_log = "\n".join(f"step {k}" for k in range(300))
    results = tmp_path
    (results / "serve-new.json").write_text(json.dumps(rows))
    (results / "serve-new.log").write_text(long_log)
    (results / "nested.json").write_text(json.dumps({"a": {"b": [1, 2]}}))
    (results / "report.md").write_text(
        "## A report\n\n![chart](chart.svg) ![gone](lost.svg) [site](https://x.org)\n"
    )
    (results / "chart.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    new = {
        "files": ["serve-new.json", "serve-new.log", "nested.json", "report.md", "chart.svg"],
        "page": "serving",
        **FIELDS,
        "title": "New serving run",
        "summary": "TTFT 8.7 ms | at batch 1",
    }
    pages = site.pages(_folder(results, [new]))
    page = pages["benchmarks/serving.md"]
    assert "## New serving run {#serve-new-json}" in page
    assert "**TTFT 8.7 ms | at batch 1**" in page and "```bash\npython benchmarks/x.py\n```" in page
    assert "Machine: 2-core CPU machine. Date: 2026-11-24." in page
    # a flat list of records is a table; other JSON is pretty-printed in a collapsed block
    assert "| preset | ttft_ms | ok |" in page and "| 125m | 8.66351 | True |" in page
    assert '??? note "nested.json"' in page and '    ```json\n    {\n      "a": {' in page
    # a long log: its first and last 40 lines, and where the rest is
    assert (
        "step 39\n\n[... 220 lines left out here; the whole file: benchmarks/results/serve-new.log ...]"
        in page
    )
    assert "step 40\n" not in page and "step 299" in page
    # Markdown included below the entry's heading, its links made to resolve from the page
    assert "### A report" in page and "![chart](results/chart.svg)" in page
    assert "gone (`lost.svg`, not kept in benchmarks/results/)" in page and "[site](https://x.org)" in page
    assert page.count("](results/chart.svg)") == 1  # the report shows it: not a second time
    assert site.assets(results) == {"benchmarks/results/chart.svg": results / "chart.svg"}
    index = pages["benchmarks/index.md"]
    assert (
        "| [New serving run](serving.md#serve-new-json) | TTFT 8.7 ms \\| at batch 1 | 2-core CPU machine | 2026-11-24 |"
        in index
    )
    assert all(f"## [{title}]({name}.md)" in index for name, title in site.PAGES.items())


def test_the_gpu_page_carries_the_h200_tables_from_their_json() -> None:
    page = site.pages()["benchmarks/gpu.md"]
    page = page[: page.index("\n## ", page.index("{#at-a-glance}"))]  # the tables, before the entries
    mfu = json.loads((site.RESULTS / site_gpu.MFU).read_text())
    big = next(r for r in mfu["runs"] if r["name"] == "1.3b")
    assert f"| NVIDIA H200 | 1.3b | 1,364M | {big['step_time_s']:.4f} | 61,685 | 555.2 | 56.1% |" in page
    assert "| NVIDIA H200 | 125m trained | 1 | 8.7 | 1.30 | 637 | 12.40 | 0.79 (0.60) | |" in page
    assert "| NVIDIA H200 | 125m, seq 2048 × 8, bf16 | 28 | step-000020 | 21-28 | 1.6e-05" in page
    assert "1.3b       1364M   2048×8  bf16     0.280    0.325  1.16×" in page and "UserWarning" not in page


@pytest.mark.parametrize("path", sorted(site.RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_the_json_a_page_shows_is_the_files_json(path: Path) -> None:
    data = json.loads(path.read_text())
    assert json.loads(site._pretty(data)) == data
