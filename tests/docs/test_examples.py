"""The getting-started example files are shipped, small, and what examples/getting-started/make_data.py
makes from the sample corpus: the same documents (read by selene's readers) and the same tokenizer."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from selene.ingest import columnar
from selene.ingest.readers import read_records
from selene.ingest.records import Fields, ReadStats

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "getting-started"
BUDGET_BYTES = 200_000
# the own-data files of docs/getting-started.md, with the fields its `--source` options name
SOURCES = {
    "mydata/reference.jsonl.gz": Fields(),
    "mydata/packages.jsonl": Fields(text="content", id="doc_id"),
    "mydata/docstrings.parquet": Fields(),
    "mydata/licenses": Fields(),
}


def make_data() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_data", EXAMPLE / "make_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documents(root: Path, name: str, fields: Fields) -> list[tuple[str | None, str | None]]:
    files, _ = columnar.expand_source(str(root / name))
    return [(r.id, r.text) for f in files for r in read_records(f, 1 << 24, ReadStats(), fields=fields)]


def test_the_example_files_are_shipped_and_small() -> None:
    files = [p for p in EXAMPLE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    names = {str(p.relative_to(EXAMPLE)) for p in files}
    assert {"pipeline.yaml", "train.yaml", "tokenizer.json", "mydata/licenses/state.json"} <= names
    assert sum(p.stat().st_size for p in files) < BUDGET_BYTES


def test_make_data_rebuilds_the_shipped_documents_and_tokenizer(tmp_path: Path) -> None:
    make_data().build(tmp_path)
    for name, fields in SOURCES.items():
        shipped = documents(EXAMPLE, name, fields)
        assert len(shipped) == 30 and all(text for _, text in shipped), name
        assert documents(tmp_path, name, fields) == shipped, name
    shipped_tok = json.loads((EXAMPLE / "tokenizer.json").read_text(encoding="utf-8"))
    assert json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8")) == shipped_tok
    assert len(shipped_tok["model"]["vocab"]) == 1024  # train.yaml's model.vocab_size
