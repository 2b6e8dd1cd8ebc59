"""The quality stage's checks before it runs, its dashboard artifacts, its summary and its part of
the run report (see `selene.registry`)."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from selene.artifacts import Artifact, Markdown, Table, svg_image
from selene.errors import UsageError
from selene.io import dataset, fs
from selene.io.dataset import StageResult
from selene.quality.config import QualityConfig
from selene.quality.manifest import QualityManifest
from selene.summary import documents

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def check(inp: str, out: str, cfg: QualityConfig) -> None:
    if not cfg.classifiers:
        raise UsageError("give at least one classifier: quality.classifiers: [{name: NAME, model: FILE.bin, label: LABEL}]")
    from selene.quality import recipe  # lazy: the trainer loads numpy, scipy and fastText's bindings
    from selene.quality.stage import check_given  # lazy: the fastText bindings load with the model

    for c in cfg.classifiers:
        check_given(c)  # a recipe's model does not exist before the stage trains it
    recipe.check(inp, dataset.require_documents(inp, "quality"), cfg)
    fs.check_writable(out)


def histogram_svg(histogram: dict[str, list[int]], title: str, width: int = 480, height: int = 220) -> str:
    """Documents per score bin, one bar series per source (bars side by side within a bin)."""
    pad, sources = 36, list(histogram)
    bins = len(next(iter(histogram.values()), []))
    top = max((max(v) for v in histogram.values() if v), default=1) or 1
    bw = (width - 2 * pad) / max(bins, 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{pad}" y="14">{title}</text>',
        f'<text x="{pad}" y="{height - pad + 14}">score 0</text><text x="{width - pad - 30}" y="{height - pad + 14}">1</text>',
        f'<text x="2" y="{pad}">{top}</text>',
    ]
    for si, src in enumerate(sources):
        color = COLORS[si % len(COLORS)]
        w = bw / max(len(sources), 1)
        for b, n in enumerate(histogram[src]):
            h = (height - 2 * pad) * n / top
            x = pad + b * bw + si * w
            parts.append(f'<rect x="{x:.1f}" y="{height - pad - h:.1f}" width="{max(w - 1, 1):.1f}" height="{h:.1f}" fill="{color}"/>')
        parts.append(f'<text x="{width - pad - 120}" y="{pad + 12 * si}" fill="{color}">{src}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rows(m: QualityManifest) -> list[dict[str, Any]]:
    """The judged sources: documents and tokens kept."""
    return [
        {
            "source": src,
            "judged": j.judged,
            "kept": j.kept,
            "documents kept": f"{j.kept / max(j.judged, 1):.1%}",
            "tokens kept": f"{j.tokens_kept / max(j.tokens_in, 1):.1%}",
        }
        for src, j in m.judged.items()
        if j.judged
    ]


def _unjudged(m: QualityManifest) -> str:
    passed = [src for src, j in m.judged.items() if not j.judged]
    return f"Not judged (passed as they were): {', '.join(passed)}." if passed else ""


def _trained(m: QualityManifest) -> list[str]:
    """One sentence per classifier the stage trained: its examples and its held-out report."""
    lines = []
    for name, c in m.classifiers.items():
        if (t := c.trained) is None:
            continue
        (pos, n_pos), (neg, n_neg) = t.documents.items()
        auc = "n/a" if t.auc is None else f"{t.auc:.3f}"
        lines.append(
            f"Classifier `{name}` trained here from its recipe: {', '.join(t.positive)} ({n_pos} documents, "
            f"label {pos}) against {', '.join(t.negative)} ({n_neg}, label {neg}); held out "
            f"{sum(t.heldout.values())}: AUC {auc}, precision {t.precision:.3f} and recall {t.recall:.3f} "
            f"at {t.threshold:g} (`{t.report}`)."
        )
    return lines


def _cutoffs(m: QualityManifest) -> str:
    if m.cutoff is not None:
        return f"combined score >= {m.cutoff:.4f}"
    cut = [f"{name} >= {c.cutoff:.4f}" for name, c in m.classifiers.items() if c.cutoff is not None]
    return ", ".join(cut) or "Pareto sampling"


def artifacts(result: StageResult[QualityManifest], cfg: QualityConfig) -> list[Artifact]:
    m = result.manifest
    if m is None:
        return []
    plots = "\n\n".join(svg_image(histogram_svg(c.histogram, f"{name}: documents by score"), name) for name, c in m.classifiers.items())
    examples = [{"id": e.id, "source": e.source, "score": round(e.score, 4), "kept": e.kept, "text": e.text[:160]} for e in m.examples]
    trained = "".join(f"{line}\n\n" for line in _trained(m))
    return [
        Table("quality-kept", _rows(m), f"Judged documents and tokens kept in `{result.out}` ({m.rule}: {_cutoffs(m)})"),
        Markdown("quality-scores", f"### Scores ({m.rule}: {_cutoffs(m)})\n\n{trained}{plots}\n"),
        Table("quality-examples", examples, "The lowest-scoring documents kept and the highest-scoring dropped"),
    ]


def summary(result: StageResult[QualityManifest], console: Console) -> None:
    """The documents table, then per source the share of judged documents and tokens kept."""

    def kept() -> None:
        assert result.manifest is not None
        table = RichTable(title=f"quality: {result.manifest.rule} ({_cutoffs(result.manifest)})")
        rows = _rows(result.manifest)
        if not rows:
            console.print("quality: no document was judged (all passed unjudged)")
            return
        for col in rows[0] if rows else []:
            table.add_column(col, justify="left" if col == "source" else "right")
        for r in rows:
            table.add_row(*(str(v) for v in r.values()))
        console.print(table)
        for line in _trained(result.manifest):
            console.print(line, markup=False, highlight=False)

    documents(result, console, extra=kept)


def report_section(out: str, run_dir: str) -> tuple[str, list[str]] | None:
    """The run report's quality section: the rule, the cut-off and the shares kept per source (none
    where the run has no quality stage: it is off unless configured)."""
    m = dataset.read_manifest(out) if os.path.isdir(out) else None
    if not isinstance(m, QualityManifest):
        return None
    lines = [f"Rule: {m.rule}; {_cutoffs(m)}.", ""] + [x for line in _trained(m) for x in (line, "")]
    lines += ["| source | judged | kept | documents kept | tokens kept |", "|---|---:|---:|---:|---:|"]
    lines += ["| " + " | ".join(str(v) for v in r.values()) + " |" for r in _rows(m)]
    if unjudged := _unjudged(m):
        lines += ["", unjudged]
    return "Quality", lines
