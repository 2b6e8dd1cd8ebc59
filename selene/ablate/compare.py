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

from selene import charts
from selene.ablate.config import AblationConfig
from selene.manifest import versioned
from selene.view import Markdown, View, svg_image

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
        r["curves"] = mean_curves(r["runs"])
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


def mean_curves(runs: list[dict[str, Any]]) -> dict[str, list[list[float]]]:
    """Each in-run score's curve (`train.eval_tasks` of the proxy) averaged over the seeds, step by
    step: ``"<task> <metric>"`` → [[step, mean], ...]."""
    by: dict[str, dict[int, list[float]]] = {}
    for run in runs:
        for name, points in run.get("curves", {}).items():
            for step, value in points:
                by.setdefault(name, {}).setdefault(int(step), []).append(float(value))
    return {name: [[s, statistics.fmean(v)] for s, v in sorted(steps.items())] for name, steps in sorted(by.items())}


def curves_markdown(result: dict[str, Any]) -> str:
    """The in-run scores of every variant at each evaluation step (mean over seeds); empty when
    the proxy evaluated nothing during training."""
    names = sorted({n for r in result["variants"] for n in r.get("curves", {})})
    if not names:
        return ""
    steps = sorted({int(s) for r in result["variants"] for c in r.get("curves", {}).values() for s, _ in c})
    lines = [
        "#### Scores during training (train.eval_tasks), mean over seeds",
        "",
        "| variant | score | " + " | ".join(f"step {s}" for s in steps) + " |",
        "|---|---|" + "---:|" * len(steps),
    ]
    for r in result["variants"]:
        for name in names:
            at = {int(s): v for s, v in r.get("curves", {}).get(name, [])}
            lines.append(f"| {r['name']} | {name} | " + " | ".join(f"{at[s]:.4f}" if s in at else "" for s in steps) + " |")
    return "\n".join(lines) + "\n"


def curves_chart(result: dict[str, Any]) -> str | None:
    """One panel per in-run score, one line per variant (mean over seeds); None without any."""
    names = sorted({n for r in result["variants"] for n in r.get("curves", {})})
    if not names:
        return None
    return charts.metric_curves(
        {n: {r["name"]: [(s, v) for s, v in r.get("curves", {}).get(n, [])] for r in result["variants"]} for n in names}
    )


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


def _setting(value: Any) -> str:
    return "off" if value is False else json.dumps(value) if isinstance(value, dict | list) else str(value)



def write(out: str, result: dict[str, Any]) -> None:
    """ablation.json, ablation.md and ablation.svg into `out`, each replaced whole."""
    os.makedirs(out, exist_ok=True)
    curves = curves_chart(result)
    md = markdown(result) + "\n![ablation](ablation.svg)\n"
    if curves is not None:
        md += "\n" + curves_markdown(result) + "\n![scores during training](ablation-curves.svg)\n"
    files = [("ablation.json", json.dumps(versioned(result), indent=1)), ("ablation.md", md),
             ("ablation.svg", charts.ablation(result, lower_is_better))]  # fmt: skip
    if curves is not None:
        files.append(("ablation-curves.svg", curves))
    for name, text in files:
        tmp = os.path.join(out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out, name))


def artifacts(result: dict[str, Any]) -> View:
    """The dashboard's view of an ablation: its table and plot."""
    text = markdown(result) + "\n" + svg_image(charts.ablation(result, lower_is_better), "ablation") + "\n"
    if (curves := curves_chart(result)) is not None:
        text += "\n" + curves_markdown(result) + "\n" + svg_image(curves, "scores during training") + "\n"
    return View(blocks=(Markdown(text, key="ablation"),))
