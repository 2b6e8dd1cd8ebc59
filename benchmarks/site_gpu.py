"""The GPU page's tables, made from the JSON the H200 runs wrote (`mfu-h200.json`,
`gpu-check-h200-resume-peer-serve.json`, `gpu-check-h200-graphs.json`), each figure beside the card
that measured it (the run's own record of its device). Nothing here is typed in: a rerun that
replaces a file changes its table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MFU = "mfu-h200.json"
RESUME = "gpu-check-h200-resume-peer-serve.json"
GRAPHS = "gpu-check-h200-graphs.json"
SOURCES = (MFU, RESUME, GRAPHS)
"""The files the tables are made from: the page carries the tables when it shows all three."""


def tables(results: Path) -> str:
    """The tables as one Markdown block, under an 'At a glance' heading."""
    mfu, resume, graphs = (_read(results / name) for name in (MFU, RESUME, GRAPHS))
    return "\n\n".join(
        [
            "## At a glance {#at-a-glance}",
            "Made from the JSON files of the runs below; the card in each row is the one the run recorded.",
            _mfu(mfu),
            _resume(resume),
            _peer(resume),
            _serving(graphs, resume),
        ]
    )


def _read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def _card(run: dict[str, Any]) -> str:
    return str(run.get("parts", {}).get("environment", {}).get("gpu") or run.get("device") or "?")


def _mfu(data: dict[str, Any]) -> str:
    card = _card(data)
    head = (
        f"**Training throughput and MFU** (`{MFU}`; MFU against the {data['peak_tflops']:g} TFLOP/s "
        f"{data['peak_source']}; planner GB: the planner's prediction when the runs were made)"
    )
    rows = [
        "| GPU | model | parameters | s/step | tokens/s | model TFLOP/s | MFU | of measured matmul | peak GB | planner GB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in data["runs"]:
        rows.append(
            f"| {card} | {r['name']} | {r['params'] / 1e6:,.0f}M | {r['step_time_s']:.4f} | {r['tokens_per_s']:,.0f} "
            f"| {r['model_tflops']:.1f} | {r['mfu']:.1%} | {r['mfu_of_matmul']:.1%} | {r['peak_memory_gb']:.2f} "
            f"| {r['predicted_memory_gb']:.2f} |"
        )
    return head + "\n\n" + "\n".join(rows)


def _resume(data: dict[str, Any]) -> str:
    t, card = data["parts"]["train"], _card(data)
    shape, last = t["shape"], t["last"]
    steps = t["compared_steps"]
    return "\n".join(
        [
            f"**Kill and resume** (`{RESUME}`)",
            "",
            "| GPU | model | killed at step | resumed from | steps compared | largest loss difference | first and resumed command s | last step tokens/s | MFU |",
            "|---|---|---:|---|---|---:|---:|---:|---:|",
            f"| {card} | {shape['preset']}, seq {shape['seq']} × {shape['batch']}, {shape['precision']} "
            f"| {t['killed_at_step']} | {Path(t['resumed_from']).name} | {steps[0]}-{steps[-1]} "
            f"| {t['max_abs_diff']:.2g} (tolerance {t['tolerance']:g}) | {t['first_run_s']:.0f} / {t['resume_s']:.0f} "
            f"| {last['tokens_per_s']:,.0f} | {last['mfu']:.1%} |",
        ]
    )


def _peer(data: dict[str, Any]) -> str:
    """The Hugging Face peer's table as the run printed it (its warnings left out)."""
    lines = [
        line
        for line in data["parts"]["peer"]["table"]
        if not any(w in line for w in ("Warning", "warnings.warn"))
    ]
    return (
        f"**selene's compiled step against Hugging Face's** (`{RESUME}`, on the {_card(data)})\n\n"
        + "```text\n"
        + "\n".join(lines)
        + "\n```"
    )


def _serving(graphs: dict[str, Any], eager: dict[str, Any]) -> str:
    card = _card(graphs)
    before = {p["batch"]: p["timing"] for p in eager["parts"]["serve"]["points"]}
    rows = [
        f"**Generation with CUDA graphs** (`{GRAPHS}`; eager steps: `{RESUME}`)",
        "",
        "| GPU | model | batch | TTFT p50 ms | ITL p50 ms | tokens/s | ITL with eager steps ms | planner ITL ms (ratio) | HF generate ITL ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    serve = graphs["parts"]["serve"]
    for p in serve["points"]:
        t, plan = p["timing"], p["plan"]
        old = before.get(p["batch"])
        rows.append(
            f"| {card} | 125m trained | {p['batch']} | {t['ttft_ms_p50']:.1f} | {t['itl_ms_p50']:.2f} "
            f"| {t['tokens_per_s']:,.0f} | {_ms(old and old['itl_ms_p50'])} "
            f"| {plan['itl_ms']:.2f} ({plan['itl_ratio']:.2f}) | |"
        )
    for p in serve.get("points_1.3b", []):
        plan, hf = p["plan"], p.get("hf", {})
        rows.append(
            f"| {card} | 1.3b, prompts of {p['prompt']} | {p['batch']} | {p['ttft_ms_p50']:.1f} | {p['itl_ms_p50']:.2f} "
            f"| {p['tokens_per_s']:,.0f} | {_ms(p.get('eager', {}).get('itl_ms_p50'))} "
            f"| {plan['itl_ms']:.2f} ({plan['itl_ratio']:.2f}) | {_ms(hf.get('itl_ms'))} |"
        )
    return "\n".join(rows)


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"
