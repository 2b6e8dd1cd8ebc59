"""selene's charts, as small standalone SVG written by hand (no plotting library: one would be a
dependency and a slower start-up): the primitives once, then one short function per chart. The
stages draw them from their numbers; `selene.view.svg_image` shows one inline in markdown."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


# ------------------------------------------------------------------------------ primitives


def tag(name: str, content: str | None = None, **attrs: Any) -> str:
    """An SVG element, its attributes in the order given (``stroke_width`` is ``stroke-width``)."""
    a = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f"<{name}{a}/>" if content is None else f"<{name}{a}>{content}</{name}>"


def text(x: Any, y: Any, content: str, **attrs: Any) -> str:
    return tag("text", content, x=x, y=y, **attrs)


def line(x1: Any, y1: Any, x2: Any, y2: Any, stroke: str = "black", **attrs: Any) -> str:
    return tag("line", x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, **attrs)


def background(width: Any = "100%", height: Any = "100%") -> str:
    """A white ground: legible on a dark dashboard too."""
    return tag("rect", width=width, height=height, fill="white")


def svg(width: Any, height: Any, parts: Sequence[str], font_size: int | None = None, sep: str = "") -> str:
    """The document: `parts` between the opening and closing tags, joined by `sep`."""
    font = f' font-family="sans-serif" font-size="{font_size}"' if font_size else ""
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"{font}>'
    return sep.join([head, *parts, "</svg>"])


def xml(s: str) -> str:
    """`s` as SVG text."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------------- charts


def s_curve(points: Sequence[tuple[float, float]], threshold: float, title: str) -> str:
    """Dedup's LSH S-curve (P(candidate) against Jaccard similarity, 320×240), the threshold a
    dashed red line."""
    x0, y0, w, h = 40, 200, 260, 170  # plot area: origin at bottom left, y grows downwards in SVG

    def xy(j: float, p: float) -> str:
        return f"{x0 + j * w:.1f},{y0 - p * h:.1f}"

    tx = x0 + threshold * w
    return svg(320, 240, [
        background(320, 240),
        text(160, 16, title, text_anchor="middle"),
        tag("polyline", points=f"{xy(0, 1)} {xy(0, 0)} {xy(1, 0)}", fill="none", stroke="black"),
        tag("polyline", points=" ".join(xy(j, p) for j, p in points), fill="none", stroke="steelblue", stroke_width=2),
        line(f"{tx:.1f}", y0, f"{tx:.1f}", y0 - h, stroke="red", stroke_dasharray="4 3"),
        text(x0 - 4, y0 - h + 4, "1", text_anchor="end"),
        text(x0 - 4, y0 + 4, "0", text_anchor="end"),
        text(x0 + w, y0 + 14, "1", text_anchor="end"),
        text(x0 + w / 2, y0 + 28, "Jaccard similarity", text_anchor="middle"),
        text(12, y0 - h / 2, "P(candidate)", transform=f"rotate(-90 12 {y0 - h / 2})", text_anchor="middle"),
    ], font_size=11, sep="\n") + "\n"  # fmt: skip


def loss_curve(records: list[dict[str, Any]], width: int = 480, height: int = 240) -> str:
    """Training (and validation) loss against step."""
    pts = [(r["step"], r["loss"]) for r in records if "loss" in r]
    val = [(r["step"], r["val_loss"]) for r in records if "val_loss" in r]
    if not pts:
        return svg(width, height, [])
    xs = [p[0] for p in pts + val]
    ys = [p[1] for p in pts + val]
    x0, x1, y0, y1 = min(xs), max(xs) or 1, min(ys), max(ys)
    pad = 40

    def xy(x: float, y: float) -> str:
        px = pad + (x - x0) / max(x1 - x0, 1) * (width - 2 * pad)
        py = height - pad - (y - y0) / max(y1 - y0, 1e-9) * (height - 2 * pad)
        return f"{px:.1f},{py:.1f}"

    def curve(points: list[tuple[Any, Any]], color: str) -> str:
        return tag("polyline", fill="none", stroke=color, stroke_width=1.5, points=" ".join(xy(x, y) for x, y in points))

    return svg(width, height, [
        background(),
        line(pad, height - pad, width - pad, height - pad),
        line(pad, pad, pad, height - pad),
        curve(pts, "#1f77b4"),
        *([curve(val, "#d62728")] if val else []),
        text(pad, pad - 8, "loss (blue: train, red: validation)"),
        text(pad, height - pad + 14, f"step {x0}"),
        text(width - pad - 50, height - pad + 14, f"step {x1}"),
        text(2, height - pad, f"{y0:.2f}"),
        text(2, pad + 4, f"{y1:.2f}"),
    ], font_size=11)  # fmt: skip


def histogram(counts: dict[str, list[int]], title: str, width: int = 480, height: int = 220) -> str:
    """Quality's documents per score bin, one bar series per source (side by side within a bin)."""
    pad, sources = 36, list(counts)
    bins = len(next(iter(counts.values()), []))
    top = max((max(v) for v in counts.values() if v), default=1) or 1
    bw = (width - 2 * pad) / max(bins, 1)
    parts = [
        background(),
        line(pad, height - pad, width - pad, height - pad),
        text(pad, 14, title),
        text(pad, height - pad + 14, "score 0") + text(width - pad - 30, height - pad + 14, "1"),
        text(2, pad, str(top)),
    ]
    for si, src in enumerate(sources):
        color = COLORS[si % len(COLORS)]
        w = bw / max(len(sources), 1)
        for b, n in enumerate(counts[src]):
            h = (height - 2 * pad) * n / top
            x = pad + b * bw + si * w
            parts.append(tag("rect", x=f"{x:.1f}", y=f"{height - pad - h:.1f}", width=f"{max(w - 1, 1):.1f}", height=f"{h:.1f}", fill=color))
        parts.append(text(width - pad - 120, pad + 12 * si, src, fill=color))
    return svg(width, height, parts, font_size=11)


def scatter(rows: list[dict[str, Any]], size: int = 320) -> str:
    """The scaling study's predicted against measured step time (log-log), with the y = x line; one
    labelled point per run."""
    pad = 40
    values = [v for r in rows for v in (r["measured_step_s"], r["predicted_step_s"]) if v > 0]
    lo, hi = math.log10(min(values)) - 0.1, math.log10(max(values)) + 0.1

    def pos(v: float) -> float:
        return pad + (math.log10(v) - lo) / (hi - lo) * (size - 2 * pad)

    parts = [
        line(pad, size - pad, size - pad, pad, stroke="#bbb", stroke_dasharray=4),
        tag("rect", x=pad, y=pad, width=size - 2 * pad, height=size - 2 * pad, fill="none", stroke="#333"),
        text(size / 2, size - 8, "measured s/step", text_anchor="middle"),
        text(10, size / 2, "predicted s/step", transform=f"rotate(-90 10 {size / 2})", text_anchor="middle"),
        text(pad, size - pad + 12, f"{10**lo:.3g}"),
        text(size - pad, size - pad + 12, f"{10**hi:.3g}", text_anchor="end"),
    ]
    for r in rows:
        x, y = pos(r["measured_step_s"]), size - pos(r["predicted_step_s"])
        parts.append(tag("circle", cx=f"{x:.1f}", cy=f"{y:.1f}", r=3.5, fill="#1f77b4"))
        parts.append(text(f"{x + 5:.1f}", f"{y - 4:.1f}", r["run"]))
    return svg(size, size, parts, font_size=10, sep="\n")


def ablation(
    result: dict[str, Any], lower_is_better: Callable[[str], bool], width: int = 260, row: int = 18, columns: int = 4
) -> str:
    """An ablation's metrics, one panel each, `columns` to a row: each variant's seeds as dots and
    their mean as a bar, on the metric's own scale; green or red where the variant is better or worse."""
    variants = result["variants"]
    metrics = result["metrics"]
    label_w, pad, top = 110, 12, 34
    panel_h = top + row * len(variants) + 30
    cols = max(1, min(columns, len(metrics)))
    rows = -(-len(metrics) // cols)
    parts = [background()]
    for band in range(rows):
        for j, r in enumerate(variants):
            y = band * panel_h + top + row * j + row / 2
            parts.append(text(label_w - 6, f"{y + 3:.1f}", xml(r["name"]), text_anchor="end"))
    for i, metric in enumerate(metrics):
        x0, y0 = label_w + (i % cols) * (width + pad), (i // cols) * panel_h
        parts += _panel(metric, variants, x0, y0, width, row, top, lower_is_better(metric))
    return svg(label_w + cols * (width + pad), rows * panel_h, parts, font_size=10, sep="\n")


def _panel(
    metric: str, variants: list[dict[str, Any]], x0: float, y0: float, width: int, row: int, top: int, lower: bool
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

    parts = [
        text(x0 + width / 2, y0 + 12, xml(metric), text_anchor="middle", font_weight="bold"),
        text(x0 + width / 2, y0 + 24, "lower is better" if lower else "higher is better", text_anchor="middle", fill="#666"),
        tag("rect", x=x0, y=y0 + top, width=width, height=row * len(variants), fill="none", stroke="#999"),
    ]
    for j, r in enumerate(variants):
        stat = r["stats"].get(metric)
        if stat is None:
            continue
        y = y0 + top + row * j + row / 2
        verdict = r["versus"].get(metric, {}).get("verdict", "")
        colour = {"better": "#2a9d3a", "worse": "#d62728"}.get(verdict, "#1f77b4")
        m = x(stat["mean"])
        parts.append(line(f"{m:.1f}", f"{y - 6:.1f}", f"{m:.1f}", f"{y + 6:.1f}", stroke=colour, stroke_width=2))
        parts += [tag("circle", cx=f"{x(v):.1f}", cy=f"{y:.1f}", r=2.5, fill=colour, fill_opacity=0.6) for v in stat["values"]]
    yb = y0 + top + row * len(variants) + 12
    parts.append(text(x0, yb, f"{lo:.4g}"))
    parts.append(text(x0 + width, yb, f"{hi:.4g}", text_anchor="end"))
    return parts


def metric_curves(
    panels: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]], width: int = 300, height: int = 170, columns: int = 3
) -> str:
    """Metrics against step, one panel each (`columns` to a row), each panel one line per series
    (a training run's own scores; an ablation's variants, the mean over seeds), a legend below."""
    names = sorted({s for series in panels.values() for s in series})
    colour = {s: COLORS[i % len(COLORS)] for i, s in enumerate(names)}
    cols = max(1, min(columns, len(panels)))
    rows = -(-len(panels) // cols)
    pad, legend = 36, 16 * len(names) if len(names) > 1 else 0
    parts = [background()]
    for i, (metric, series) in enumerate(panels.items()):
        ox, oy = (i % cols) * width, (i // cols) * height
        pts = [p for points in series.values() for p in points]
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        if y1 - y0 < 1e-12:
            y0, y1 = y0 - 0.5, y1 + 0.5

        def xy(x: float, y: float, ox: float = ox, oy: float = oy, x0: float = x0, x1: float = x1,
               y0: float = y0, y1: float = y1) -> str:  # fmt: skip
            px = ox + pad + (x - x0) / max(x1 - x0, 1e-9) * (width - 2 * pad)
            py = oy + height - pad + 8 - (y - y0) / (y1 - y0) * (height - 2 * pad)
            return f"{px:.1f},{py:.1f}"

        parts += [
            text(ox + width / 2, oy + 14, xml(metric), text_anchor="middle", font_weight="bold"),
            line(ox + pad, oy + height - pad + 8, ox + width - pad, oy + height - pad + 8, stroke="#999"),
            text(ox + pad, oy + height - pad + 22, f"step {x0:g}"),
            text(ox + width - pad, oy + height - pad + 22, f"{x1:g}", text_anchor="end"),
            text(ox + 2, oy + pad, f"{y1:.4g}"),
            text(ox + 2, oy + height - pad + 8, f"{y0:.4g}"),
        ]
        for name, points in series.items():
            dots = " ".join(xy(x, y) for x, y in points)
            parts.append(tag("polyline", fill="none", stroke=colour[name], stroke_width=1.5, points=dots))
            parts += [tag("circle", cx=p.split(",")[0], cy=p.split(",")[1], r=2, fill=colour[name]) for p in dots.split()]
    for j, name in enumerate(names if legend else []):
        y = rows * height + 12 + 16 * j
        parts += [line(8, y - 4, 28, y - 4, stroke=colour[name], stroke_width=2), text(34, y, xml(name))]
    return svg(cols * width, rows * height + legend, parts, font_size=10, sep="\n") + "\n"
