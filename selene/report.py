"""The run report: every stage's numbers in one markdown file (`<run_dir>/report.md`).

Built from what the stages wrote (manifests, blend.json, metrics.jsonl, eval results), never from
memory of the run, so it can be rebuilt for any finished run directory: `selene report RUN_DIR`.
"""

from __future__ import annotations

import json
import os

from selene.io import dataset
from selene.manifest import AnyManifest

DATA_STAGES = ("ingest", "dedup", "decontaminate", "blend")


def _manifest(run_dir: str, stage: str) -> AnyManifest | None:
    path = os.path.join(run_dir, stage)
    return dataset.read_manifest(path) if os.path.isdir(path) else None


def documents_table(run_dir: str) -> list[str]:
    """Documents per source entering and leaving every data stage, with the reasons they left."""
    rows = ["| stage | source | in | kept | removed (top reasons) |", "|---|---|---:|---:|---|"]
    for stage in DATA_STAGES:
        m = _manifest(run_dir, stage)
        if not m:
            continue
        for src, st in m.stats.per_source.items():
            top = sorted(st.removed.items(), key=lambda x: -x[1])[:3]
            reasons = ", ".join(f"{r} {n}" for r, n in top) or "—"
            rows.append(f"| {stage} | {src} | {st.documents_in} | {st.kept} | {sum(st.removed.values())}: {reasons} |")
    return rows


def blend_table(run_dir: str) -> list[str]:
    m = _manifest(run_dir, "blend")
    if m is None or m.stage != "blend":
        return ["(no blend stage in this run)"]
    from selene.blend.stage import report_rows

    rows = report_rows(m)
    if not rows:
        return []
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")
    return out


def tokens_section(run_dir: str) -> list[str]:
    m = _manifest(run_dir, "tokenize")
    if m is None or m.stage != "tokenize":
        return ["(not tokenized yet)"]
    st, tok = m.stats, m.tokenizer
    out = [f"{st.tokens:,} tokens in {st.sequences:,} documents; vocabulary {tok.vocab_size}, "
           f"EOD id {tok.eod_id}, dtype {m.dtype}.", "", "| source | documents | tokens |", "|---|---:|---:|"]
    out += [f"| {s} | {v.documents_in} | {v.tokens or 0:,} |" for s, v in st.per_source.items()]
    return out


def training_section(run_dir: str) -> list[str]:
    path = os.path.join(run_dir, "train", "metrics.jsonl")
    if not os.path.exists(path):
        return ["(not trained yet)"]
    from selene.train.metrics import read_metrics

    records = read_metrics(path)
    if not records:
        return ["(no steps logged)"]
    last = records[-1]
    val = [r for r in records if "val_loss" in r]
    speed = records[len(records) // 2 :]  # steady state: the second half of the run
    tps = sum(r["tokens_per_s"] for r in speed) / len(speed)
    mfu = sum(r["mfu"] for r in speed) / len(speed)
    tflops = sum(r["tflops_per_device"] for r in speed) / len(speed)
    out = [
        "![training loss](train/loss.svg)",
        "",
        f"- steps: {last['step']}, tokens: {last['tokens']:,}",
        f"- loss: {records[0]['loss']:.4f} → {last['loss']:.4f}"
        + (f"; validation loss {val[0]['val_loss']:.4f} → {val[-1]['val_loss']:.4f}" if val else ""),
        f"- throughput (second half of the run): {tps:,.0f} tokens/s, {tflops:.4f} TFLOP/s per device, MFU {mfu:.1%}",
        f"- peak memory: {max(r.get('peak_memory_gib', 0.0) for r in records):.2f} GiB",
    ]
    run_info = os.path.join(run_dir, "train", "run.json")
    if os.path.exists(run_info):
        with open(run_info) as f:
            info = json.load(f)
        out.append(f"- layout: {info.get('layout')}; peak {info.get('peak_tflops', 0):.3f} TFLOP/s ({info.get('peak_source')})")
    return out


def eval_section(run_dir: str) -> list[str]:
    path = os.path.join(run_dir, "eval", "summary.json")
    if not os.path.exists(path):
        return ["(not evaluated yet)"]
    with open(path) as f:
        summary = json.load(f)
    out = [f"Checkpoint `{summary['checkpoint']}`", "", "| task | metric | value |", "|---|---|---:|"]
    for task, metrics in summary["tasks"].items():
        out += [f"| {task} | {k} | {v:.4f} |" for k, v in metrics.items()]
    if "perplexity" in summary:
        p = summary["perplexity"]
        out += [f"| held-out | perplexity | {p['perplexity']:.4f} |", f"| held-out | bits per byte | {p['bits_per_byte']:.4f} |"]
    return out


def build_report(run_dir: str, name: str = "") -> str:
    parts = [
        f"# selene run report{': ' + name if name else ''}",
        "",
        f"Run directory: `{run_dir}`",
        "",
        "## Documents through the data stages",
        "",
        *documents_table(run_dir),
        "",
        "## Blend: requested vs realised",
        "",
        *blend_table(run_dir),
        "",
        "## Tokens",
        "",
        *tokens_section(run_dir),
        "",
        "## Training",
        "",
        *training_section(run_dir),
        "",
        "## Evaluation",
        "",
        *eval_section(run_dir),
        "",
    ]
    return "\n".join(parts)


def write_report(run_dir: str, name: str = "") -> str:
    path = os.path.join(run_dir, "report.md")
    text = build_report(run_dir, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
