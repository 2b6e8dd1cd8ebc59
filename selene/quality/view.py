"""What the quality stage shows (`selene.view`): the rule and its cut-off, the share of judged
documents and tokens kept per source (one table: terminal, dashboard and report), the classifiers it
trained; on the dashboard, the score histograms and the documents nearest the cut."""

from __future__ import annotations

from typing import Any

from selene.charts import histogram
from selene.io.results import StageResult
from selene.quality.manifest import QualityManifest
from selene.view import (
    EVERYWHERE,
    PREFECT,
    REPORT,
    TERMINAL,
    Block,
    Markdown,
    Table,
    Text,
    View,
    columns,
    documents,
    svg_image,
)


def _rows(m: QualityManifest) -> list[tuple[Any, ...]]:
    """The judged sources: documents and tokens kept."""
    return [
        (src, j.judged, j.kept, f"{j.kept / max(j.judged, 1):.1%}", f"{j.tokens_kept / max(j.tokens_in, 1):.1%}")
        for src, j in m.judged.items()
        if j.judged
    ]


def _trained(m: QualityManifest) -> list[str]:
    """One sentence per classifier the stage trained: its examples and its held-out report."""
    lines = []
    for name, c in m.classifiers.items():
        if (t := c.trained) is None:
            continue
        (pos, n_pos), (neg, n_neg) = t.documents.items()
        lines.append(
            f"Classifier `{name}` trained here from its recipe: {', '.join(t.positive)} ({n_pos} documents, "
            f"label {pos}) against {', '.join(t.negative)} ({n_neg}, label {neg}); held out "
            f"{sum(t.heldout.values())}: AUC {t.auc_said(3)}, precision {t.precision:.3f} and recall "
            f"{t.recall:.3f} at {t.threshold:g} (`{t.report}`)."
        )
    return lines


def _cutoffs(m: QualityManifest) -> str:
    if m.cutoff is not None:
        return f"combined score >= {m.cutoff:.4f}"
    cut = [f"{name} >= {c.cutoff:.4f}" for name, c in m.classifiers.items() if c.cutoff is not None]
    return ", ".join(cut) or "Pareto sampling"


def view(result: StageResult[QualityManifest]) -> View:
    """Terminal: the documents table, then the kept table and the trained classifiers; report: the
    rule, the trained classifiers, the kept table and the sources passed unjudged (no section where
    the run has no quality stage: it is off unless configured)."""
    m = result.manifest
    if not isinstance(m, QualityManifest):
        return View()
    rows, trained, cutoffs = _rows(m), _trained(m), _cutoffs(m)
    kept = Table(
        columns("source", "judged", "kept", "documents kept", "tokens kept"), rows, key="quality-kept",
        title=f"quality: {m.rule} ({cutoffs})",
        description=f"Judged documents and tokens kept in `{result.out}` ({m.rule}: {cutoffs})",
        to=EVERYWHERE if rows else PREFECT | REPORT,
    )
    terminal: list[Block] = [Text(line, TERMINAL, markup=False, highlight=False) for line in trained] if rows else [
        Text("quality: no document was judged (all passed unjudged)", TERMINAL)]
    passed = [src for src, j in m.judged.items() if not j.judged]
    plots = "\n\n".join(svg_image(histogram(c.histogram, f"{name}: documents by score"), name) for name, c in m.classifiers.items())
    trained_md = "".join(f"{line}\n\n" for line in trained)
    examples = [(e.id, e.source, round(e.score, 4), e.kept, e.text[:160]) for e in m.examples]
    return View("Quality", (
        *documents(result, extra=[
            Text(f"Rule: {m.rule}; {cutoffs}.", REPORT),
            *(Text(line, REPORT) for line in trained),
            kept,
            *terminal,
        ]),
        *([Text(f"Not judged (passed as they were): {', '.join(passed)}.", REPORT)] if passed else []),
        Markdown(f"### Scores ({m.rule}: {cutoffs})\n\n{trained_md}{plots}\n",
                 key="quality-scores", to=PREFECT),
        Table(columns("id", "source", "score", "kept", "text"), examples, key="quality-examples", to=PREFECT,
              description="The lowest-scoring documents kept and the highest-scoring dropped"),
    ))  # fmt: skip
