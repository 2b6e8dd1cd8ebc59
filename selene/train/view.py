"""What the training stage shows (`selene.view`): after a run, the last step's loss and throughput
(terminal) and the loss curve (dashboard); in the run report, loss, throughput, memory and layout
from metrics.jsonl and run.json."""

from __future__ import annotations

import json
import os
from typing import Any

from selene.charts import loss_curve
from selene.io.results import StageResult
from selene.train import eval_curves
from selene.train.metrics import read_metrics
from selene.view import PREFECT, REPORT, TERMINAL, Block, Markdown, Text, View, svg_image


def peak_text(info: dict[str, Any]) -> str:
    """The peak MFU divides by and its origin, from run.json (`selene.train.peak`)."""
    peak = info.get("peak_tflops")
    if not peak:
        return f"MFU peak: none ({info.get('peak_source')})"
    return f"MFU peak {peak:.4g} TFLOP/s per device ({info.get('peak_source')})"


def view(result: StageResult[Any]) -> View:
    out = result.out
    path = os.path.join(out, "metrics.jsonl")
    records = read_metrics(path) if os.path.exists(path) else None
    run_json = os.path.join(out, "run.json")
    info = None
    if os.path.exists(run_json):
        with open(run_json) as f:
            info = json.load(f)
    blocks: list[Block] = []
    if "last" in result.info:  # after a run (the report has the directory only)
        last = result.info["last"]
        blocks.append(Text(
            f"train → {out}{' (complete already: reused)' if result.skipped else ''}: "
            f"step {last.get('step')}, loss {last.get('loss', float('nan')):.4f}"
            + (f", validation loss {last['val_loss']:.4f}" if "val_loss" in last else "")
            + f"\nmodel (last checkpoint): [b]{result.info['checkpoint']}[/b]; loss curve {out}/loss.svg",
            TERMINAL, soft_wrap=True,  # paths whole: the terminal wraps them, selene does not split them
        ))  # fmt: skip
        if "tflops_per_device" in last and info is not None:
            mfu = f", MFU {last['mfu']:.1%}" if "mfu" in last else ""
            blocks.append(Text(f"last step: {last['tflops_per_device']:.4g} TFLOP/s per device{mfu}; {peak_text(info)}",
                               TERMINAL, soft_wrap=True))  # fmt: skip
        steps = records or []
        blocks.append(Markdown(
            f"### Training: {len(steps)} logged steps, final loss {last.get('loss', float('nan')):.4f}\n\n"
            + svg_image(loss_curve(steps), "loss") + "\n", key="train-loss", to=PREFECT,
        ))  # fmt: skip
        if (evals := eval_curves.chart(steps)) is not None:
            blocks.append(Markdown(
                "### Evaluation during training\n\n" + (eval_curves.table(steps) or "") + "\n" + svg_image(evals, "evaluation") + "\n",
                key="train-evals", to=PREFECT,
            ))  # fmt: skip
    return View("Training", blocks + _report(out, records, info))


def _report(out: str, records: list[dict[str, Any]] | None, info: dict[str, Any] | None) -> list[Block]:
    """The run report's lines: the loss curve, then loss, throughput, memory and layout."""
    if records is None:
        return [Text("(not trained yet)", REPORT)]
    if not records:
        return [Text("(no steps logged)", REPORT)]
    last = records[-1]
    val = [r for r in records if "val_loss" in r]
    speed = records[len(records) // 2 :]  # steady state: the second half of the run
    tps = sum(r["tokens_per_s"] for r in speed) / len(speed)
    mfus = [r["mfu"] for r in speed if "mfu" in r]  # none where the device has no known peak
    tflops = sum(r["tflops_per_device"] for r in speed) / len(speed)
    lines = [
        f"- steps: {last['step']}, tokens: {last['tokens']:,}",
        f"- loss: {records[0]['loss']:.4f} → {last['loss']:.4f}"
        + (f"; validation loss {val[0]['val_loss']:.4f} → {val[-1]['val_loss']:.4f}" if val else ""),
        f"- throughput (second half of the run): {tps:,.0f} tokens/s, {tflops:.4f} TFLOP/s per device"
        + (f", MFU {sum(mfus) / len(mfus):.1%}" if mfus else ", MFU not reported (no known peak)"),
        f"- peak memory: {max(r.get('peak_memory_gib', 0.0) for r in records):.2f} GiB",
    ]
    if info is not None:
        lines.append(f"- layout: {info.get('layout')}; {peak_text(info)}")
    # report.md sits in the run directory, beside the stage's directory
    curve = os.path.join(os.path.basename(os.path.normpath(out)), "loss.svg")
    blocks: list[Block] = [Text(f"![training loss]({curve})", REPORT), Markdown("\n".join(lines), to=REPORT)]
    if (evals := eval_curves.table(records)) is not None:  # train.eval_tasks: scores during the run
        chart = os.path.join(os.path.basename(os.path.normpath(out)), eval_curves.FILE)
        limit = ((info or {}).get("config") or {}).get("eval_limit")
        # a limit scores other requests than the evaluation of the checkpoint below: say so beside them
        scope = f" (the first {limit} documents of each task, `train.eval_limit`)" if limit else ""
        blocks += [Markdown(f"Evaluation during training{scope}:\n\n" + evals, to=REPORT),
                   Text(f"![evaluation during training]({chart})", REPORT)]  # fmt: skip
    return blocks
