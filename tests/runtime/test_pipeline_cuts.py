"""`selene run` with the stages that cut text: `spans` and `substrings` run after `dedup`, in that
order, when their section says what to cut, and not at all otherwise."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from selene.cli import main
from selene.config.pipeline import PipelineConfig
from selene.io import dataset
from selene.pipeline import active_stages
from tests.corpus import pile_line, write_zst
from tests.dedup_corpus import base_documents

pytestmark = pytest.mark.timeout(600)

FOOTER = "Subscribe to our newsletter for weekly updates from the editors and our partners."
PASSAGE = (
    "The committee published its findings after three years of hearings, and the report ran to more "
    "than four hundred pages of testimony, tables and recommendations for the ministry."
)


def test_the_cutting_stages_run_only_when_configured_and_after_dedup() -> None:
    base = {"run_dir": "r"}
    assert "spans" not in active_stages(PipelineConfig.model_validate(base))
    assert "substrings" not in active_stages(PipelineConfig.model_validate(base))
    both = PipelineConfig.model_validate({**base, "spans": {"unit": "line"}, "substrings": {"min_length": 100}})
    stages = active_stages(both)
    assert stages[stages.index("dedup") + 1 : stages.index("dedup") + 3] == ["spans", "substrings"]


def test_a_pipeline_cuts_repeated_lines_then_repeated_substrings(tmp_path: Path) -> None:
    rng = random.Random(1)
    bases = base_documents(12, min_words=80, max_words=160, seed=3)
    lines = []
    for k, body in enumerate(bases):
        text = f"{body}\n{FOOTER}"  # the same last line on every page
        if k % 3 == 1:  # a passage copied into the middle of a line of its own text
            words = body.split()
            cut = rng.randrange(10, len(words) - 10)
            text = " ".join(words[:cut]) + f" {PASSAGE} " + " ".join(words[cut:]) + f"\n{FOOTER}"
        lines.append(pile_line(text, "Books3"))
    (tmp_path / "in").mkdir()
    corpus = write_zst(tmp_path / "in" / "00.jsonl.zst", b"".join(lines))
    run = tmp_path / "run"
    cfg = tmp_path / "p.yaml"
    cfg.write_text(
        f"name: cuts\nrun_dir: {run}\n"
        f"ingest:\n  sources: [{{name: pile, glob: '{corpus}'}}]\n"
        "spans: {unit: line, span: 1, min_span_chars: 20, min_doc_words: 0, min_sentences: 0}\n"
        "substrings: {min_length: 100}\n"
    )
    assert main(["run", str(cfg), "--until", "substrings"]) == 0

    spans = dataset.read_manifest(str(run / "spans"))
    cut = dataset.read_manifest(str(run / "substrings"))
    assert spans is not None and cut is not None
    assert spans.inputs.dataset.rstrip("/").endswith("dedup")  # type: ignore[attr-defined]
    assert cut.inputs.dataset.rstrip("/").endswith("spans")  # type: ignore[attr-defined]
    after_spans = [d["text"] for d in dataset.iter_documents(str(run / "spans"))]
    after_cut = [d["text"] for d in dataset.iter_documents(str(run / "substrings"))]
    # the footer line stays on the first page only; the copied passage in the first page that holds it
    assert sum(FOOTER in t for t in after_spans) == 1 and FOOTER in after_spans[0]
    assert sum(PASSAGE in t for t in after_spans) == 4
    assert sum(PASSAGE in t for t in after_cut) == 1
    assert spans.stats.documents_edited == 11 and cut.stats.documents_edited == 3  # type: ignore[attr-defined]
    assert [r.text for r in spans.repeats][:1] == [FOOTER]  # type: ignore[attr-defined]
