"""The ablation's comparison: each metric's mean and spread over seeds, per variant, and which
differences from the baseline (the first variant) are larger than that spread.

With n seeds per variant, a difference counts as real when it exceeds twice its standard error,
``2 * sqrt(sd_a² / n_a + sd_b² / n_b + se_a² + se_b²)``: the seeds' spread of each mean and, for a
harness task, the standard error of its finite items (about a 95% interval for normal noise; with
two or three seeds a rough guide, which is all a proxy ablation claims); with one seed there is no
spread and the table says so rather than guessing. Metrics where lower is better (bits per byte, perplexity) are
marked so a "better" reads the right way.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import statistics
from typing import Any

from selene.ablate.config import AblationConfig
from selene.artifacts import Artifact, Markdown, svg_image

LOWER_IS_BETTER = ("bits/byte", "bits_per_byte", "perplexity", "loss")


def lower_is_better(metric: str) -> bool:
    return any(word in metric for word in LOWER_IS_BETTER)


def texts_key(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8")).digest())
    return h.hexdigest()


def spread(values: list[float], stderrs: list[float] | None = None) -> dict[str, Any]:
    """Mean and standard deviation over seeds; `stderr`, the root mean square of the runs' own
    standard errors (a harness task's finite items), or None."""
    n = len(values)
    return {
        "n": n,
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if n > 1 else None,
        "stderr": math.sqrt(statistics.fmean(e * e for e in stderrs)) if stderrs else None,
        "values": values,
    }


def versus(a: dict[str, Any], base: dict[str, Any], metric: str) -> dict[str, Any]:
    """`a` against the baseline `base` on `metric`: the difference, twice its standard error (the
    seeds' spread of each mean, plus the items' own standard error where the harness gives one: a
    40-item task moves by 0.025 for one item, which two seeds that happen to agree cannot show), and
    a verdict (better, worse, within spread, or no spread: one seed)."""
    diff = a["mean"] - base["mean"]
    if a["sd"] is None or base["sd"] is None:
        return {"diff": diff, "margin": None, "verdict": "one seed"}
    items = (a.get("stderr") or 0.0) ** 2 + (base.get("stderr") or 0.0) ** 2
    margin = 2 * math.sqrt(a["sd"] ** 2 / a["n"] + base["sd"] ** 2 / base["n"] + items)
    if abs(diff) <= margin:
        verdict = "within spread"
    else:
        verdict = "better" if (diff < 0) == lower_is_better(metric) else "worse"
    return {"diff": diff, "margin": margin, "verdict": verdict}


def summarize(cfg: AblationConfig, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The result: every variant's record with each metric's spread and its comparison with the first."""
    metrics = sorted({m for r in records for run in r["runs"] for m in run["metrics"]})
    for r in records:
        r["stats"] = {
            m: spread(
                [run["metrics"][m] for run in r["runs"] if m in run["metrics"]],
                [run["stderr"][m] for run in r["runs"] if m in run.get("stderr", {})],
            )
            for m in metrics
            if any(m in run["metrics"] for run in r["runs"])
        }
    base = records[0]
    for r in records:
        r["versus"] = (
            {m: versus(r["stats"][m], base["stats"][m], m) for m in r["stats"] if m in base["stats"]}
            if r is not base
            else {}
        )
    return {
        "name": cfg.name,
        "pipeline": cfg.pipeline,
        "out": cfg.out,
        "baseline": base["name"],
        "seeds": list(cfg.seeds),
        "proxy": cfg.proxy,
        "eval": cfg.eval,
        "reference": list(cfg.reference),
        "tokenizer": cfg.tokenizer,
        "metrics": metrics,
        "variants": records,
    }


def _cell(stat: dict[str, Any] | None, vs: dict[str, Any] | None) -> str:
    if stat is None:
        return ""
    text = f"{stat['mean']:.4f}" + (f" ± {stat['sd']:.4f}" if stat["sd"] is not None else "")
    if vs:
        mark = {"better": " **better**", "worse": " **worse**"}.get(vs["verdict"], "")
        text += f" ({vs['diff']:+.4f}{mark})"
    return text


def markdown(result: dict[str, Any]) -> str:
    metrics = result["metrics"]
    seeds = result["seeds"]
    lines = [
        f"### Ablation {result['name']}: {len(result['variants'])} variants × {len(seeds)} seeds",
        "",
        f"Each cell: mean ± standard deviation over seeds {', '.join(map(str, seeds))}; in brackets the "
        f"difference from the baseline `{result['baseline']}`, **better** / **worse** where it exceeds twice "
        "its standard error (the seeds' spread and, for a harness task, its items'; otherwise within the spread). "
        "Lower is better for "
        + ", ".join(m for m in metrics if lower_is_better(m))
        + "; higher for the others.",
        "",
        "| variant | overrides | documents | tokens | " + " | ".join(metrics) + " |",
        "|---|---|---:|---:|" + "---:|" * len(metrics),
    ]
    for r in result["variants"]:
        overrides = ", ".join(f"{k}: {_setting(v)}" for k, v in r["overrides"].items()) or "(pipeline as is)"
        cells = [_cell(r["stats"].get(m), r["versus"].get(m)) for m in metrics]
        lines.append(
            f"| {r['name']} | {overrides} | {r['documents']:,} | {r['tokens']:,} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


def plot_svg(result: dict[str, Any], width: int = 260, row: int = 18, columns: int = 4) -> str:
    """One panel per metric, `columns` to a row: each variant's seeds as dots and their mean as a
    bar, on the metric's own scale; green or red where the variant is better or worse."""
    variants = result["variants"]
    metrics = result["metrics"]
    label_w, pad, top = 110, 12, 34
    panel_h = top + row * len(variants) + 30
    cols = max(1, min(columns, len(metrics)))
    rows = -(-len(metrics) // cols)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + cols * (width + pad)}" height="{rows * panel_h}" '
        'font-family="sans-serif" font-size="10">',
        '<rect width="100%" height="100%" fill="white"/>',  # legible on a dark dashboard too
    ]
    for band in range(rows):
        for j, r in enumerate(variants):
            y = band * panel_h + top + row * j + row / 2
            parts.append(
                f'<text x="{label_w - 6}" y="{y + 3:.1f}" text-anchor="end">{_xml(r["name"])}</text>'
            )
    for i, metric in enumerate(metrics):
        parts += _panel(
            metric, variants, label_w + (i % cols) * (width + pad), (i // cols) * panel_h, width, row, top
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _panel(
    metric: str, variants: list[dict[str, Any]], x0: float, y0: float, width: int, row: int, top: int
) -> list[str]:
    values = [v for r in variants for v in r["stats"].get(metric, {}).get("values", [])]
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    lo, hi = lo - 0.05 * span, hi + 0.05 * span

    def x(v: float) -> float:
        return x0 + 8 + (v - lo) / (hi - lo) * (width - 16)

    direction = "lower is better" if lower_is_better(metric) else "higher is better"
    parts = [
        f'<text x="{x0 + width / 2}" y="{y0 + 12}" text-anchor="middle" font-weight="bold">{_xml(metric)}</text>',
        f'<text x="{x0 + width / 2}" y="{y0 + 24}" text-anchor="middle" fill="#666">{direction}</text>',
        f'<rect x="{x0}" y="{y0 + top}" width="{width}" height="{row * len(variants)}" fill="none" stroke="#999"/>',
    ]
    for j, r in enumerate(variants):
        stat = r["stats"].get(metric)
        if stat is None:
            continue
        y = y0 + top + row * j + row / 2
        verdict = r["versus"].get(metric, {}).get("verdict", "")
        colour = {"better": "#2a9d3a", "worse": "#d62728"}.get(verdict, "#1f77b4")
        m = x(stat["mean"])
        parts.append(
            f'<line x1="{m:.1f}" y1="{y - 6:.1f}" x2="{m:.1f}" y2="{y + 6:.1f}" stroke="{colour}" stroke-width="2"/>'
        )
        parts += [
            f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="2.5" fill="{colour}" fill-opacity="0.6"/>'
            for v in stat["values"]
        ]
    yb = y0 + top + row * len(variants) + 12
    parts.append(f'<text x="{x0}" y="{yb}">{lo:.4g}</text>')
    parts.append(f'<text x="{x0 + width}" y="{yb}" text-anchor="end">{hi:.4g}</text>')
    return parts


def _setting(value: Any) -> str:
    return "off" if value is False else json.dumps(value) if isinstance(value, dict | list) else str(value)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write(out: str, result: dict[str, Any]) -> None:
    """ablation.json, ablation.md and ablation.svg into `out`, each replaced whole."""
    os.makedirs(out, exist_ok=True)
    for name, text in (
        ("ablation.json", json.dumps(result, indent=1)),
        ("ablation.md", markdown(result) + "\n![ablation](ablation.svg)\n"),
        ("ablation.svg", plot_svg(result)),
    ):
        tmp = os.path.join(out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out, name))


def artifacts(result: dict[str, Any]) -> list[Artifact]:
    return [Markdown("ablation", markdown(result) + "\n" + svg_image(plot_svg(result), "ablation") + "\n")]
