"""The planner's commands: plan a training run, plan serving, and the scaling study that calibrates them.

Each imports the planner when it runs; importing this module costs no more than typer.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from selene.cli.app import app
from selene.errors import UsageError
from selene.terminal import console, note

# The model's shape and the GPU count, as `selene plan` and `selene plan serve` both take them.
Preset = Annotated[str | None, typer.Option("--model", help="Model preset (selene train's presets).")]
Layers = Annotated[int | None, typer.Option("--layers", min=1, help="Transformer layers.")]
Hidden = Annotated[int | None, typer.Option("--hidden", min=1, help="Hidden size.")]
Heads = Annotated[int | None, typer.Option("--heads", min=1, help="Attention heads.")]
KvHeads = Annotated[
    int | None, typer.Option("--kv-heads", min=1, help="Key/value heads (grouped-query attention; default: the model's).")
]
Ffn = Annotated[int | None, typer.Option("--ffn", min=1, help="FFN width (default 4 × hidden).")]
Vocab = Annotated[int | None, typer.Option("--vocab", min=1, help="Vocabulary (default 51200).")]
Swiglu = Annotated[bool, typer.Option("--swiglu", help="SwiGLU MLP (three FFN matrices) instead of GELU.")]
Gpus = Annotated[int | None, typer.Option("--gpus", min=1, help="GPUs in all.")]
PinTp = Annotated[int | None, typer.Option("--tp", min=1, help="Pin the tensor-parallel degree.")]
PinPp = Annotated[int | None, typer.Option("--pp", min=1, help="Pin the pipeline-parallel degree.")]


@app.command()
def plan(
    config: Annotated[
        str | None, typer.Argument(help="Pipeline or training YAML: plan its model, batch and layout (nothing runs).")
    ] = None,
    model: Preset = None,
    layers: Layers = None,
    hidden: Hidden = None,
    heads: Heads = None,
    kv_heads: KvHeads = None,
    ffn: Ffn = None,
    vocab: Vocab = None,
    swiglu: Swiglu = False,
    gpus: Gpus = None,
    gpu: Annotated[str, typer.Option("--gpu", help="The GPU planned for: a100-40g | a100-80g | h100 | h200.")] = "a100-80g",
    tokens: Annotated[str | None, typer.Option("--tokens", help="Tokens to train, e.g. 300B or 3e11.")] = None,
    seq: Annotated[int | None, typer.Option("--seq", min=1, help="Sequence length.")] = None,
    global_batch: Annotated[
        int | None, typer.Option("--global-batch", min=1, help="Sequences per iteration (default ≈ 4M tokens).")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Layouts to show.")] = 5,
    tp: PinTp = None,
    pp: PinPp = None,
    micro_batch: Annotated[int | None, typer.Option("--micro-batch", min=1, help="Pin the micro-batch.")] = None,
    virtual: Annotated[int | None, typer.Option("--virtual", min=1, help="Pin virtual stages per rank.")] = None,
    recompute: Annotated[
        str | None, typer.Option("--recompute", help="Pin recomputation: none | selective | full.")
    ] = None,
    sharding: Annotated[str | None, typer.Option("--sharding", help="Pin: replicate | zero2 | zero3.")] = None,
    no_sp: Annotated[bool, typer.Option("--no-sequence-parallel", help="TP without sequence parallelism.")] = False,
    no_flash: Annotated[
        bool, typer.Option("--no-flash", help="Attention keeps its s×s scores (no fused attention kernel).")
    ] = False,
    tflops: Annotated[
        float | None, typer.Option("--tflops", min=0.001, help="Achieved TFLOP/s per GPU: time from it, not the model.")
    ] = None,
    efficiency: Annotated[
        float | None, typer.Option("--efficiency", help="Fraction of peak large layers reach (overrides the device's).")
    ] = None,
    calibration: Annotated[
        str | None, typer.Option("--calibration", help="calibration.json from `selene scaling-study`.")
    ] = None,
    float8: Annotated[
        str | None,
        typer.Option("--float8", help="Price float8 training (train.parallel.float8): tensorwise | rowwise (h100, h200)."),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Plan a training run: FLOPs, memory per GPU, time per iteration and days, for the best parallel layouts.

    `selene plan serve --help`: plan inference serving layouts instead.
    """
    import json

    from selene.plan.devices import device
    from selene.plan.planner import (
        PlanRequest,
        layout_from_train_config,
        make_plan,
        parse_count,
        render,
        shape_from_dims,
        shape_from_preset,
        with_document_mask,
        with_efficiency,
        with_kv_heads,
    )  # fmt: skip
    from selene.plan.search import Pins

    for name, value, allowed in (
        ("--recompute", recompute, ("none", "selective", "full")),
        ("--sharding", sharding, ("replicate", "zero2", "zero3")),
        ("--float8", float8, ("tensorwise", "rowwise")),
    ):
        if value is not None and value not in allowed:
            raise UsageError(f"{name} {value!r}: expected one of {', '.join(allowed)}")
    dims = (layers, hidden, heads)
    configured = None
    flash = not no_flash
    if config is not None:
        if model or any(d is not None for d in dims):
            raise UsageError("give a config file or --model / --layers --hidden --heads, not both")
        from selene.plan.cost import Shape
        from selene.train.args import model_args
        from selene.train.launch import load_train_config

        cfg, _ = load_train_config(config, [])
        pipeline_vocab = _pipeline_vocab(config)
        args = model_args(cfg.model, vocab or cfg.model.vocab_size or pipeline_vocab or 51200)
        configured, n = layout_from_train_config(cfg, gpus)
        gpus = gpus or n
        shape = with_document_mask(Shape.from_model_args(args, args.vocab_size, seq or cfg.batch.seq_len, flash), cfg.data)
        global_batch = global_batch or cfg.batch.global_batch
        if tokens is None:
            tokens = str(cfg.steps * cfg.batch.global_batch * shape.seq)
    elif model:
        if any(d is not None for d in dims):
            raise UsageError("give --model or --layers --hidden --heads, not both")
        shape = shape_from_preset(model, vocab, seq, flash)
    elif all(d is not None for d in dims):
        shape = shape_from_dims(layers, hidden, heads, ffn, vocab or 51200, seq or 2048, "swiglu" if swiglu else "gelu", flash)  # type: ignore[arg-type]
    else:
        raise UsageError("say what to plan: a config file, --model PRESET, or --layers --hidden --heads [--ffn] --vocab")
    shape = with_kv_heads(shape, kv_heads)
    if gpus is None:
        raise UsageError("--gpus is required")
    if tokens is None:
        raise UsageError("--tokens is required (e.g. --tokens 300B)")
    dev = with_efficiency(device(gpu, calibration), efficiency)
    where = "--float8" if float8 else f"{config}: train.parallel.float8"
    float8 = float8 or (configured.float8 if configured is not None else None)  # compare like with like
    if float8 and not dev.fp8_peak_tflops:
        raise UsageError(f"{where} {float8}: {gpu} has no float8 tensor cores; plan float8 on h100 or h200 (--gpu)")
    pins = Pins(tp, pp, micro_batch, virtual, recompute, sharding, not no_sp, float8)
    result = make_plan(PlanRequest(shape, gpus, dev, parse_count(tokens), global_batch, top, pins, tflops, configured))
    if json_:
        print(json.dumps(result, indent=2))
    else:
        render(result, console)


@app.command("plan-serve", hidden=True)
def plan_serve(
    model: Preset = None,
    layers: Layers = None,
    hidden: Hidden = None,
    heads: Heads = None,
    kv_heads: KvHeads = None,
    ffn: Ffn = None,
    vocab: Vocab = None,
    swiglu: Swiglu = False,
    gpus: Gpus = None,
    gpu: Annotated[str, typer.Option("--gpu", help="The device planned for: a100-40g | a100-80g | h100 | h200 | cpu (needs --calibration).")] = "h100",
    prompt: Annotated[
        str, typer.Option("--prompt", help="Prompt tokens per sequence, or a file of lengths (JSON list or one per line).")
    ] = "2048",
    output: Annotated[
        str, typer.Option("--output", help="Generated tokens per sequence, or a file of lengths (JSON list or one per line).")
    ] = "256",
    target_percentile: Annotated[
        int, typer.Option("--target-percentile", help="With length files: the percentile --ttft-ms/--itl-ms apply to, 50 or 99.")
    ] = 50,
    checkpoint: Annotated[
        str | None, typer.Option("--checkpoint", help="A checkpoint (step dir or train dir): serve the model it holds.")
    ] = None,
    batch: Annotated[int | None, typer.Option("--batch", min=1, help="Pin concurrent sequences per replica.")] = None,
    tp: PinTp = None,
    pp: PinPp = None,
    weights_dtype: Annotated[str, typer.Option("--weights-dtype", help="The weights' precision: fp32 | bf16 | fp16 | fp8 | int8.")] = "bf16",
    kv_dtype: Annotated[str, typer.Option("--kv-dtype", help="The KV cache's precision: fp32 | bf16 | fp16 | fp8 | int8.")] = "bf16",
    ttft_ms: Annotated[float | None, typer.Option("--ttft-ms", min=1e-6, help="Target: time to first token (ms).")] = None,
    itl_ms: Annotated[float | None, typer.Option("--itl-ms", min=1e-6, help="Target: inter-token latency, p50 (ms).")] = None,
    min_tokens_per_s: Annotated[
        float | None, typer.Option("--min-tokens-per-s", min=1e-6, help="Target: output tokens/s in all.")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Layouts to show.")] = 10,
    calibration: Annotated[
        str | None,
        typer.Option("--calibration", help="calibration.json (scaling study) and/or prefill_efficiency, decode_efficiency."),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """`selene plan serve`: inference serving layouts (TP × PP × replicas × batch) with TTFT, ITL, tokens/s and memory."""
    import json

    from selene.plan.devices import device
    from selene.plan.planner import DEFAULT_VOCAB, shape_from_dims, with_kv_heads
    from selene.plan.serve import make_serve_plan, read_lengths
    from selene.plan.serve_calibration import load_calibration
    from selene.plan.serve_cost import Efficiency, ServeModel, ServeRequest
    from selene.plan.serve_cost import shape_from_preset as serve_shape
    from selene.plan.serve_render import render

    prompt_len, prompt_lengths = read_lengths(prompt, "--prompt")
    output_len, output_lengths = read_lengths(output, "--output")
    seq = max(prompt_lengths or [prompt_len]) + max(output_lengths or [output_len])
    dims = (layers, hidden, heads)
    if [bool(model), bool(checkpoint), any(d is not None for d in dims)].count(True) > 1:
        raise UsageError("give one of --model, --checkpoint, or --layers --hidden --heads")
    if model:
        shape = serve_shape(model, vocab)
    elif checkpoint:
        from selene.eval.checkpoint_io import model_args_of, read_meta, resolve
        from selene.plan.cost import Shape

        step = resolve(checkpoint)
        args = model_args_of(read_meta(step), step)
        shape = Shape.from_model_args(args, args.vocab_size, max(seq, args.max_seq_len), True)
    elif all(d is not None for d in dims):
        shape = shape_from_dims(layers, hidden, heads, ffn, vocab or DEFAULT_VOCAB, seq, "swiglu" if swiglu else "gelu")  # type: ignore[arg-type]
    else:
        raise UsageError("say what to serve: --model PRESET, --checkpoint DIR, or --layers --hidden --heads [--ffn] [--vocab]")
    shape = with_kv_heads(shape, kv_heads)  # a checkpoint's or preset's own unless --kv-heads says
    if gpus is None:
        raise UsageError("--gpus is required")
    if gpu == "cpu":  # this machine: its figures come from a serving study's calibration file
        if not calibration:
            raise UsageError("--gpu cpu needs --calibration FILE from a serving study (python benchmarks/serve.py --cpu)")
        from selene.plan.serve_study import cpu_spec

        dev = cpu_spec(1.0, 1.0, 1.0, "placeholder")
    else:
        dev = device(gpu)
    eff = Efficiency()
    if calibration:
        dev, eff = load_calibration(calibration, dev)
    req = ServeRequest(
        ServeModel(shape, shape.kv_heads), gpus, dev, prompt_len, output_len, batch, weights_dtype, kv_dtype,
        ttft_ms, itl_ms, min_tokens_per_s, tp, pp, top, eff, prompt_lengths, output_lengths, target_percentile,
    )  # fmt: skip
    result = make_serve_plan(req)
    if json_:
        print(json.dumps(result, indent=2))
    else:
        render(result, console)


@app.command("scaling-study")
def scaling_study(
    config: Annotated[str, typer.Argument(help="Scaling-study YAML (out, runs: [...]); see configs/scaling-study-*.yaml.")],
) -> None:
    """Short training runs at several sizes and layouts: measured TFLOP/s and memory, planner calibrated."""
    from rich.table import Table

    from selene.config.pipeline import load_stage_config
    from selene.plan.config import ScalingStudyConfig
    from selene.runner import runtime

    cfg = load_stage_config(config, ScalingStudyConfig, "scaling_study")
    rt = runtime(say=note)
    rt.note()
    if rt.api is None:
        from selene.plan.study import run_study

        result = run_study(cfg)
    else:
        from selene.flows.study import scaling_study_flow

        result = scaling_study_flow(cfg)
    if cfg.budgets:
        _show_budgets(result, cfg.out)
        return
    cal = result["calibration"]

    table = Table(title=f"scaling study on {result['device']['name']}")
    for col in ("run", "layout", "measured s", "predicted s", "error", "TFLOP/s", "memory GB", "predicted GB"):
        table.add_column(col, justify="left" if col in ("run", "layout") else "right")
    for r in result["runs"]:
        table.add_row(
            r["run"], r["layout"], f"{r['measured_step_s']:.4f}", f"{r['predicted_step_s']:.4f}",
            f"{r['step_error']:+.0%}", f"{r['measured_tflops']:.4f}", f"{r['measured_memory_gb']:.3f}",
            f"{r['predicted_memory_gb']:.3f}",
        )  # fmt: skip
    console.print(table)
    console.print(
        f"calibrated: max efficiency {cal['max_efficiency']:.3f}, half work {cal['half_work']:.3g} FLOPs, "
        f"RMS log error {cal['rms_log_error']:.3f}; written to [b]{cfg.out}/calibration.json[/b] "
        f"(use with `selene plan --calibration`), table in {cfg.out}/study.md"
    )


def _show_budgets(result: dict[str, Any], out: str) -> None:
    from rich.table import Table

    table = Table(title=f"loss at each token budget ({result['mode']})")
    for col in ("run", "tokens", "steps", "decay", "loss", "validation loss"):
        table.add_column(col, justify="left" if col == "run" else "right")
    for r in result["runs"]:
        for p in r["points"]:
            val = f"{p['val_loss']:.4f}" if p["val_loss"] is not None else "n/a"
            table.add_row(r["name"], str(p["steps"] * r["tokens_per_step"]), str(p["steps"]), str(p["decay_steps"]),
                          f"{p['loss']:.4f}", val)  # fmt: skip
    console.print(table)
    console.print(f"{result['steps_trained']} optimizer steps trained in {result['seconds']:.1f} s; table in {out}/budgets.md")


def _pipeline_vocab(path: str) -> int | None:
    from selene.config import load_yaml

    data, _ = load_yaml(path)
    tok = data.get("tokenize") if isinstance(data, dict) else None
    return tok.get("vocab_size") if isinstance(tok, dict) else None
