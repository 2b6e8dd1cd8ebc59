"""`selene plan`: a model and a cluster in, ranked layouts with memory, throughput and days to train out.

`make_plan` returns plain data (what ``--json`` prints); `render` prints it for people.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from selene.errors import ConfigError
from selene.plan.cost import USABLE_MEMORY, Layout, Shape, Sharding, estimate
from selene.plan.devices import DeviceSpec
from selene.plan.search import Pins, default_global_batch, rank_of, search

DEFAULT_VOCAB = 51200  # GPT-2's 50,257 padded to a multiple of 1024, as Megatron does

_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_count(text: str, what: str = "--tokens") -> float:
    """'300e9', '300B', '1.5T', '12M' → a number."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kKmMbBgGtT]?)\s*", text)
    if not m:
        raise ConfigError(f"{what} {text!r}: expected a number like 300e9, 300B or 1.5T")
    return float(m.group(1)) * _SUFFIX.get(m.group(2).lower(), 1.0)


def shape_from_preset(preset: str, vocab: int | None, seq: int | None, flash: bool = True) -> Shape:
    from selene.model.args import PRESETS  # torch-free: `selene plan --model` does not import torch

    if preset not in PRESETS:
        raise ConfigError(f"unknown model preset {preset!r}; known: {', '.join(PRESETS)}")
    args = PRESETS[preset]
    return Shape.from_model_args(args, vocab or args.vocab_size or DEFAULT_VOCAB, seq, flash)


def shape_from_dims(
    layers: int, hidden: int, heads: int, ffn: int | None, vocab: int, seq: int, mlp: str = "gelu", flash: bool = True
) -> Shape:
    if hidden % heads:
        raise ConfigError(f"--hidden {hidden} is not divisible by --heads {heads}")
    return Shape(
        layers, hidden, heads, ffn or 4 * hidden, vocab, seq, mlp=mlp, flash=flash, learned_positions=True  # type: ignore[arg-type]
    )


def with_kv_heads(shape: Shape, kv_heads: int | None) -> Shape:
    """`shape` with `kv_heads` key/value heads (`--kv-heads`), or as it is when None."""
    if kv_heads is None:
        return shape
    if shape.heads % kv_heads:
        raise ConfigError(f"--kv-heads {kv_heads} must divide the {shape.heads} heads")
    return replace(shape, n_kv_heads=kv_heads)


@dataclass
class PlanRequest:
    shape: Shape
    gpus: int
    device: DeviceSpec
    tokens: float
    global_batch: int | None = None
    top: int = 5
    pins: Pins = field(default_factory=Pins)
    tflops: float | None = None  # achieved hardware TFLOP/s per GPU, instead of the time model
    configured: Layout | None = None  # a layout from a config file, estimated and ranked too


def make_plan(req: PlanRequest) -> dict[str, Any]:
    shape, dev = req.shape, req.device
    batch = req.global_batch or default_global_batch(shape.seq)
    result = search(shape, req.gpus, batch, dev, req.pins, req.tflops)
    iterations = req.tokens / (batch * shape.seq)

    def row(est: Any) -> dict[str, Any]:
        d = est.as_dict()
        d["days"] = est.days(req.tokens, batch, shape.seq)
        d["bubble"] = est.time.get("pipeline bubble", 0.0) / est.iteration_s
        return d

    plan: dict[str, Any] = {
        "model": {
            **asdict(shape),
            "params": shape.params,
            "model_flops_per_token": shape.model_flops_per_token(),
            "hardware_flops_per_token": {rc: shape.hardware_flops_per_token(rc) for rc in ("none", "selective", "full")},
        },
        "device": asdict(dev),
        "gpus": req.gpus,
        "global_batch": batch,
        "tokens": req.tokens,
        "iterations": iterations,
        "model_flops_per_iteration": shape.model_flops_per_token() * batch * shape.seq,
        "given_tflops": req.tflops,
        "considered": result.considered,
        "fitting": len(result.ranked),
        "layouts": [row(e) for e in result.ranked[: req.top]],
        "smallest_if_none_fits": row(result.smallest) if result.smallest else None,
        "usable_memory_fraction": USABLE_MEMORY,
    }
    if req.configured is not None:
        est = estimate(shape, req.configured, batch, dev, req.tflops)
        plan["configured"] = {**row(est), "rank": rank_of(result, asdict(req.configured))}
    return plan


def days_at(shape: Shape, tokens: float, gpus: int, tflops: float, recompute: str) -> float:
    """Days to train `tokens` at `tflops` achieved (hardware) TFLOP/s per GPU with that recomputation."""
    return shape.hardware_flops_per_token(recompute) * tokens / (gpus * tflops * 1e12) / 86400.0  # type: ignore[arg-type]


def layout_from_train_config(cfg: Any, gpus: int | None) -> tuple[Layout, int]:
    """The layout a TrainConfig describes, and its GPU count (dp_shard -1 needs `gpus`)."""
    p = cfg.parallel
    fixed = p.tp * p.pp * p.dp_replicate
    if p.dp_shard == -1:
        if gpus is None:
            raise ConfigError("train.parallel.dp_shard is -1 (whatever is left): give --gpus to plan it")
        if gpus % fixed:
            raise ConfigError(f"--gpus {gpus} is not a multiple of tp × pp × dp_replicate = {fixed}")
        shard = gpus // fixed
    else:
        shard = p.dp_shard
    dp = p.dp_replicate * shard
    # with a pipeline the schedule cuts each rank's batch into pp_microbatches micro-batches
    micro = cfg.batch.global_batch // (dp * p.pp_microbatches) if p.pp > 1 else cfg.batch.micro_batch
    sharding: Sharding = "replicate" if shard == 1 else ("zero3" if p.reshard_after_forward else "zero2")
    lay = Layout(
        p.tp, p.pp, dp, max(1, micro), p.recompute, sharding, p.pp_stages_per_rank,
        p.sequence_parallel and p.tp > 1, p.mixed_precision, p.compile, p.float8,
    )  # fmt: skip
    return lay, lay.gpus


def with_document_mask(shape: Shape, data: Any) -> Shape:
    """`shape` as a training config's data section trains it: under `document_mask` its attention
    runs block-sparse on GPUs (FlexAttention), at the share of causal attention's blocks that packing
    the data's documents into samples leaves (`share_of_documents` on the first prefix's document
    lengths, as its index records them); unchanged without a mask or without the data at hand."""
    # lazy: numpy and the index reader load only when a config's token data is measured
    from selene.model.document_blocks import share_of_documents  # lazy: as above
    from selene.tokenize.indexed import IndexedDataset  # lazy: as above

    if not data.document_mask or not data.prefixes or not os.path.exists(data.prefixes[0] + ".idx"):
        return shape
    lengths = IndexedDataset(data.prefixes[0]).sequence_lengths
    return replace(shape, attention_share=share_of_documents(lengths, shape.seq))


def with_efficiency(dev: DeviceSpec, efficiency: float | None) -> DeviceSpec:
    if efficiency is None:
        return dev
    if not 0 < efficiency <= 1:
        raise ConfigError(f"--efficiency {efficiency}: expected a fraction of peak in (0, 1]")
    return replace(dev, max_efficiency=efficiency, calibrated_from=f"given on the command line ({efficiency})")


# ------------------------------------------------------------------------------------------ output


def _fmt_days(d: float) -> str:
    return f"{d:,.1f}" if math.isfinite(d) else "∞"


def render(plan: dict[str, Any], console: Console) -> None:
    m, dev = plan["model"], plan["device"]
    console.print(
        f"[b]model[/b] {m['params'] / 1e9:,.2f}B parameters: {m['layers']} layers, hidden {m['hidden']}, "
        f"{m['heads']} heads{_kv(m)}, FFN {m['ffn']} ({m['mlp']}), vocabulary {m['vocab']:,}, sequence {m['seq']:,}"
    )
    hw = m["hardware_flops_per_token"]
    console.print(
        f"FLOPs per token: {m['model_flops_per_token'] / 1e9:,.1f} G model (MFU); executed with recomputation "
        f"none/selective/full {hw['none'] / 1e9:,.1f} / {hw['selective'] / 1e9:,.1f} / {hw['full'] / 1e9:,.1f} G; "
        f"per iteration {plan['model_flops_per_iteration'] / 1e18:,.2f} EFLOP (model)"
    )
    console.print(
        f"[b]cluster[/b] {plan['gpus']:,} × {dev['name']} ({dev['peak_tflops']:g} TFLOP/s bf16, {dev['memory_gb']:g} GB, "
        f"{dev['gpus_per_node']} per node); efficiency {dev['max_efficiency']:.3f} of peak for large layers, "
        f"from {dev['calibrated_from']}"
    )
    console.print(
        f"global batch {plan['global_batch']:,} × {m['seq']:,} tokens; {plan['tokens']:,.3g} tokens = "
        f"{plan['iterations']:,.0f} iterations; {plan['fitting']:,} of {plan['considered']:,} layouts fit "
        f"in {plan['usable_memory_fraction']:.0%} of memory"
    )
    if plan["given_tflops"]:
        console.print(f"time from the given throughput: {plan['given_tflops']:g} TFLOP/s per GPU")
    rows = plan["layouts"]
    if not rows:
        s = plan["smallest_if_none_fits"]
        console.print(
            f"[red]no layout fits[/red]: the smallest, {s['layout']['label']}, needs {s['memory']['total']:,.1f} GB per GPU "
            f"of {dev['memory_gb']:g} GB ({_parts(s['memory'])}); use more GPUs, a larger device, or a smaller batch"
        )
        return
    table = Table(title=f"top {len(rows)} layouts by time per iteration", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("#", "TP", "PP", "v", "DP", "mb", "recomp", "shard", "GB/GPU", "TFLOP/s", "MFU", "bubble", "s/it", "days"):
        table.add_column(col, justify="left" if col in ("recomp", "shard") else "right", no_wrap=True)
    for i, r in enumerate(rows, 1):
        table.add_row(*_cells(i, r))
    wide = Console(file=console.file, width=max(console.width, 110), force_terminal=console.is_terminal)
    wide.print(table)
    best = rows[0]
    console.print(f"[b]best[/b] {best['layout']['label']}: " + _parts(best["time"], "s") + "; memory " + _parts(best["memory"]))
    for note in (n for n in best["notes"] if n.startswith("float8")):
        console.print(note)
    conf = plan.get("configured")
    if conf:
        where = f"rank {conf['rank']}" if conf["rank"] else ("does not fit" if not conf["fits"] else "not among the searched layouts")
        console.print(
            f"[b]configured[/b] {conf['layout']['label']}: {conf['time']['iteration']:,.2f} s/iter, "
            f"{conf['hardware_tflops']:,.1f} TFLOP/s per GPU, {conf['memory']['total']:,.1f} GB per GPU, "
            f"{_fmt_days(conf['days'])} days ({where})"
        )
    p = best["config"]["parallel"]
    console.print(
        "train config for the best: parallel: {" + ", ".join(f"{k}: {v}" for k, v in p.items()) + "}, "
        f"batch: {{global_batch: {plan['global_batch']}, micro_batch: {best['config']['micro_batch']}}}"
    )


def _kv(m: dict[str, Any]) -> str:
    kv = m.get("n_kv_heads")
    return f" ({kv} key/value)" if kv and kv != m["heads"] else ""


def _cells(i: int, r: dict[str, Any]) -> list[str]:
    lay = r["layout"]
    return [
        str(i), str(lay["tp"]), str(lay["pp"]), str(lay["virtual"]), str(lay["dp"]), str(lay["micro_batch"]),
        lay["recompute"][:4], lay["sharding"].replace("replicate", "repl"), f"{r['memory']['total']:,.1f}", f"{r['hardware_tflops']:,.1f}",
        f"{r['mfu']:.1%}", f"{r['bubble']:.1%}", f"{r['time']['iteration']:,.2f}", _fmt_days(r["days"]),
    ]  # fmt: skip


def _parts(d: dict[str, float], unit: str = "GB") -> str:
    return ", ".join(f"{k} {v:,.2f} {unit}" for k, v in d.items() if k not in ("total", "iteration") and v > 0)
