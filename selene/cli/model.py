"""Commands around the model: train, eval, export, generate, plan, scaling-study, deploy.

Each imports what it needs when it runs (torch, lm_eval, transformers, Prefect); importing this
module costs no more than typer.
"""

from __future__ import annotations

from typing import Annotated

import typer

from selene.cli.app import app, console, with_overrides
from selene.errors import UsageError


@app.command()
def train(
    config: Annotated[str, typer.Argument(help="Pipeline YAML (its train: section) or a training YAML with out:.")],
    nproc_per_node: Annotated[
        int | None, typer.Option("--nproc-per-node", min=1, help="Processes on this node (default: train.nproc_per_node).")
    ] = None,
    nnodes: Annotated[int, typer.Option("--nnodes", min=1, help="Nodes.")] = 1,
    node_rank: Annotated[int, typer.Option("--node-rank", min=0, help="This node's rank.")] = 0,
    rdzv_endpoint: Annotated[str | None, typer.Option("--rdzv-endpoint", help="HOST:PORT of the rendezvous.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="key=value override, e.g. parallel.tp=2.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Train from step 0 even when the last step's checkpoint exists.")] = False,
) -> None:
    """Pretrain with torchrun: data × tensor × pipeline parallel, DCP checkpoints, exact resume.

    This is the pipeline's train stage (a Prefect flow when a server is up, live on the dashboard;
    skipped when the last step's checkpoint exists). Each node of a multi-node run launches its own
    torchrun agent; the first node's command (--node-rank 0) is the one the dashboard shows.
    """
    from selene.cli.app import note
    from selene.train.launch import launch, load_train_config

    cfg, out = load_train_config(config, set_ or [])
    if nproc_per_node:
        cfg = cfg.model_copy(update={"nproc_per_node": nproc_per_node})
    if (nnodes > 1 or rdzv_endpoint) and node_rank > 0:  # the first node's command is the one the dashboard shows
        launch(cfg, out, cfg.nproc_per_node, nnodes, node_rank, rdzv_endpoint)
        console.print(f"checkpoints in [b]{out}/checkpoints[/b]; metrics in {out}/metrics.jsonl")
        return
    if nnodes > 1 or rdzv_endpoint:
        cfg = cfg.model_copy(update={"nnodes": nnodes, "node_rank": node_rank, "rdzv_endpoint": rdzv_endpoint})
    from selene.runner import Job, runtime
    from selene.train.stage import summary

    summary(runtime(say=note).run(Job("train", None, out, cfg), force=force), console)


@app.command()
def deploy(
    config: Annotated[str, typer.Argument(help="Pipeline YAML; paths in it resolve from the current folder.")],
    limit: Annotated[int | None, typer.Option(min=1, help="Flow runs at a time.")] = None,
    only: Annotated[str | None, typer.Option(help="Comma-separated: pipeline and/or stage names.")] = None,
) -> None:
    """Serve the pipeline and each stage as Prefect deployments (flow.serve) until Ctrl-C.

    Trigger runs from the dashboard or `prefect deployment run 'selene-pipeline/<name>'`; for work-pool
    deployments use the repository's prefect.yaml (`prefect deploy --all`).
    """
    from selene.runner import runtime

    if runtime().api is None:
        raise UsageError("deployments live on a Prefect server: run `selene server start` first (or set PREFECT_API_URL)")
    from selene.flows.deploy import serve_pipeline

    parts = [p.strip() for p in only.split(",") if p.strip()] if only else None
    serve_pipeline(config, limit=limit, only=parts)


@app.command("eval")
def eval_(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir: its latest.")],
    tasks: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated: bundled selene_* tasks (the default), any lm-eval task (piqa, hellaswag, "
            "lambada_openai, ...), or mt-nlg (the MT-NLG 530B paper's table, its figures beside the run's)."
        ),
    ] = None,
    task_data: Annotated[
        list[str] | None,
        typer.Option(
            "--task-data",
            metavar="TASK=DIR",
            help="Repeatable: local files for an lm-eval task's dataset, one <split>.jsonl or "
            "<split>.parquet per split the task's YAML names (e.g. piqa: validation.jsonl, train.jsonl).",
        ),
    ] = None,
    num_fewshot: Annotated[int | None, typer.Option("--num-fewshot", min=0, help="Few-shot examples (default 0; a suite has its own).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Documents per task, at most.")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1, help="Requests per forward (default 8).")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", help="Results directory (default: <checkpoint>/eval).")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: eval settings or a pipeline file.")] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="auto | cpu | cuda (default: eval.device, auto: cuda when there is a GPU).")
    ] = None,
) -> None:
    """Evaluate a checkpoint on lm-evaluation-harness tasks (offline), plus held-out perplexity
    (the pipeline's eval stage: a Prefect flow when a server is up)."""
    from selene.config import EvalConfig, load_stage_config
    from selene.errors import ConfigError

    cfg: EvalConfig = load_stage_config(config, EvalConfig, "eval")
    data = dict(cfg.task_data)
    for item in task_data or []:
        task, sep, directory = item.partition("=")
        if not sep or not task.strip() or not directory.strip():
            raise ConfigError(f"--task-data {item!r}: expected TASK=DIR, e.g. --task-data piqa=data/piqa")
        data[task.strip()] = directory.strip()
    cfg = with_overrides(
        cfg, tasks=[t.strip() for t in tasks.split(",") if t.strip()] if tasks else None,
        num_fewshot=num_fewshot, limit=limit, batch_size=batch_size, checkpoint=checkpoint, device=device,
        task_data=data or None,
    )
    import os

    from selene.cli.app import note
    from selene.eval.checkpoint_io import resolve
    from selene.eval.stage import summary
    from selene.runner import Job, runtime

    ckpt = resolve(checkpoint)
    job = Job("eval", ckpt, output or os.path.join(ckpt, "eval"), cfg)
    summary(runtime(say=note).run(job, force=True), console)


@app.command()
def export(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Hugging Face model directory to write.")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a previous export (never a directory that is not one).")] = False,
) -> None:
    """Export a checkpoint (any parallel layout) to Hugging Face transformers format (Llama-style)."""
    from selene import guard
    from selene.eval.export import export_hf

    with guard.claim("selene export", [], [output]):  # one writer; export_hf refuses an output over the checkpoint
        info = export_hf(checkpoint, output, overwrite=overwrite)
    console.print(f"exported to [b]{output}[/b]: {info}")


@app.command()
def generate(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir.")],
    prompt: Annotated[str | None, typer.Option(help="Text to continue.")] = None,
    prompts: Annotated[
        str | None,
        typer.Option("--prompts", help='File of prompts: one per line, or jsonl with a "prompt" per line.'),
    ] = None,
    batch: Annotated[int | None, typer.Option("--batch", help="Prompts per forward (with --prompts; default 8).")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Tokens to generate.")] = 64,
    temperature: Annotated[float, typer.Option(min=0.0, help="0: greedy.")] = 1.0,
    top_p: Annotated[float, typer.Option("--top-p", min=0.0, max=1.0, help="Nucleus sampling.")] = 1.0,
    seed: Annotated[int | None, typer.Option(help="Seed: the same seed gives the same text.")] = None,
    json_: Annotated[bool, typer.Option("--json", help="With --prompts: print outputs and timings as one JSON object.")] = False,
    device: Annotated[str, typer.Option("--device", help="auto | cpu | cuda (auto: cuda when there is a GPU).")] = "auto",
    dtype: Annotated[
        str | None, typer.Option("--dtype", help="Weights: fp32 | bf16 (default: bf16 on cuda, fp32 on cpu).")
    ] = None,
) -> None:
    """Sample a continuation with a KV cache; with --prompts, batches of --batch prompts and a timing summary."""
    if (prompt is None) == (prompts is None):
        raise UsageError("give --prompt TEXT or --prompts FILE (one of them)")
    if batch is not None and batch < 1:
        raise UsageError(f"--batch must be >= 1, got {batch}")
    if prompt is not None and (json_ or batch is not None):
        raise UsageError("--batch and --json go with --prompts FILE")
    if device not in ("auto", "cpu", "cuda"):
        raise UsageError(f"--device {device!r}: expected auto, cpu or cuda")
    if dtype not in (None, "auto", "fp32", "bf16"):
        raise UsageError(f"--dtype {dtype!r}: expected fp32 or bf16")
    batch = batch or 8
    from selene.eval.checkpoint_io import eod_id, load_model, pick_device, pick_dtype, tokenizer
    from selene.eval.generate import generate as sample

    texts = read_prompts(prompts) if prompts is not None else []
    where = pick_device(device)
    weights = pick_dtype(dtype, where)
    loaded = load_model(checkpoint, device=where, dtype=weights)
    sp = tokenizer(checkpoint)
    stop = (eod_id(sp, loaded.meta),)
    if prompt is not None:
        ids = sample(loaded.model, loaded.args, sp.encode(prompt), max_tokens, temperature=temperature, top_p=top_p,
                     seed=seed, stop_ids=stop)
        console.print(prompt + sp.decode(ids), markup=False, highlight=False)
        return
    import json

    from selene.eval.generate import generate_batch, timing_summary

    results = []
    for lo in range(0, len(texts), batch):
        chunk = texts[lo : lo + batch]
        results.append(generate_batch(loaded.model, loaded.args, [sp.encode(t) for t in chunk], max_tokens,
                                      temperature=temperature, top_p=top_p, seed=seed, stop_ids=stop))
    outputs = [sp.decode(ids) for r in results for ids in r.tokens]
    counts = [len(ids) for r in results for ids in r.tokens]
    timing = timing_summary(results)
    if json_:
        rows = [{"prompt": t, "output": o, "tokens": n} for t, o, n in zip(texts, outputs, counts, strict=True)]
        print(json.dumps({"outputs": rows, "batch": batch, "device": where.type,
                          "dtype": str(weights).removeprefix("torch."), "timing": timing}))
        return
    for i, (t, o) in enumerate(zip(texts, outputs, strict=True)):
        console.print(f"--- {i}", markup=False, highlight=False)
        console.print(t + o, markup=False, highlight=False)

    def ms(key: str) -> str:
        value = timing[key]
        return "n/a" if value is None else f"{value:.1f} ms"

    rate = timing["tokens_per_s"]
    console.print(
        f"{timing['prompts']} prompts in {timing['batches']} batches of <= {batch}: "
        f"{timing['generated_tokens']} tokens in {timing['total_s']:.2f} s "
        f"({'n/a' if rate is None else f'{rate:.1f}'} tokens/s); "
        f"TTFT p50 {ms('ttft_ms_p50')} p99 {ms('ttft_ms_p99')}; ITL p50 {ms('itl_ms_p50')} p99 {ms('itl_ms_p99')}; "
        f"{where.type}, {str(weights).removeprefix('torch.')}"
        + (f"; decode steps as CUDA graphs (captured in {timing['graph_setup_s']:.2f} s)" if timing["cuda_graphs"] else ""),
        markup=False,
        highlight=False,
    )


def read_prompts(path: str) -> list[str]:
    """Prompts of a --prompts file: jsonl lines with a "prompt" string (when the first non-blank line is
    a JSON object), else one prompt per non-blank line."""
    import json
    from pathlib import Path

    from selene.errors import InputError

    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--prompts {path}: cannot read it ({exc})") from exc
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise InputError(f"--prompts {path}: the file has no prompts")
    if not lines[0].lstrip().startswith("{"):
        return lines
    texts = []
    for n, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"--prompts {path}: non-blank line {n} is not JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise InputError(f'--prompts {path}: non-blank line {n} has no "prompt" string')
        texts.append(row["prompt"])
    return texts


@app.command()
def plan(
    config: Annotated[
        str | None, typer.Argument(help="Pipeline or training YAML: plan its model, batch and layout (nothing runs).")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model preset (selene train's presets).")] = None,
    layers: Annotated[int | None, typer.Option("--layers", min=1, help="Transformer layers.")] = None,
    hidden: Annotated[int | None, typer.Option("--hidden", min=1, help="Hidden size.")] = None,
    heads: Annotated[int | None, typer.Option("--heads", min=1, help="Attention heads.")] = None,
    kv_heads: Annotated[
        int | None, typer.Option("--kv-heads", min=1, help="Key/value heads (grouped-query attention; default: the model's).")
    ] = None,
    ffn: Annotated[int | None, typer.Option("--ffn", min=1, help="FFN width (default 4 × hidden).")] = None,
    vocab: Annotated[int | None, typer.Option("--vocab", min=1, help="Vocabulary (default 51200).")] = None,
    swiglu: Annotated[bool, typer.Option("--swiglu", help="SwiGLU MLP (three FFN matrices) instead of GELU.")] = False,
    gpus: Annotated[int | None, typer.Option("--gpus", min=1, help="GPUs in all.")] = None,
    gpu: Annotated[str, typer.Option("--gpu", help="a100-40g | a100-80g | h100 | h200.")] = "a100-80g",
    tokens: Annotated[str | None, typer.Option("--tokens", help="Tokens to train, e.g. 300B or 3e11.")] = None,
    seq: Annotated[int | None, typer.Option("--seq", min=1, help="Sequence length.")] = None,
    global_batch: Annotated[
        int | None, typer.Option("--global-batch", min=1, help="Sequences per iteration (default ≈ 4M tokens).")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Layouts to show.")] = 5,
    tp: Annotated[int | None, typer.Option("--tp", min=1, help="Pin the tensor-parallel degree.")] = None,
    pp: Annotated[int | None, typer.Option("--pp", min=1, help="Pin the pipeline-parallel degree.")] = None,
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
        with_efficiency,
        with_kv_heads,
    )  # fmt: skip
    from selene.plan.search import Pins

    for name, value, allowed in (
        ("--recompute", recompute, ("none", "selective", "full")),
        ("--sharding", sharding, ("replicate", "zero2", "zero3")),
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
        from selene.train.launch import load_train_config
        from selene.train.model import model_args

        cfg, _ = load_train_config(config, [])
        pipeline_vocab = _pipeline_vocab(config)
        args = model_args(cfg.model, vocab or cfg.model.vocab_size or pipeline_vocab or 51200)
        configured, n = layout_from_train_config(cfg, gpus)
        gpus = gpus or n
        shape = Shape.from_model_args(args, args.vocab_size, seq or cfg.batch.seq_len, flash)
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
    pins = Pins(tp, pp, micro_batch, virtual, recompute, sharding, not no_sp)
    result = make_plan(PlanRequest(shape, gpus, dev, parse_count(tokens), global_batch, top, pins, tflops, configured))
    if json_:
        print(json.dumps(result, indent=2))
    else:
        render(result, console)


@app.command("plan-serve", hidden=True)
def plan_serve(
    model: Annotated[str | None, typer.Option("--model", help="Model preset (selene train's presets).")] = None,
    layers: Annotated[int | None, typer.Option("--layers", min=1, help="Transformer layers.")] = None,
    hidden: Annotated[int | None, typer.Option("--hidden", min=1, help="Hidden size.")] = None,
    heads: Annotated[int | None, typer.Option("--heads", min=1, help="Attention heads.")] = None,
    kv_heads: Annotated[
        int | None, typer.Option("--kv-heads", min=1, help="Key/value heads (grouped-query attention; default: the model's).")
    ] = None,
    ffn: Annotated[int | None, typer.Option("--ffn", min=1, help="FFN width (default 4 × hidden).")] = None,
    vocab: Annotated[int | None, typer.Option("--vocab", min=1, help="Vocabulary (default 51200).")] = None,
    swiglu: Annotated[bool, typer.Option("--swiglu", help="SwiGLU MLP (three FFN matrices) instead of GELU.")] = False,
    gpus: Annotated[int | None, typer.Option("--gpus", min=1, help="GPUs in all.")] = None,
    gpu: Annotated[str, typer.Option("--gpu", help="a100-40g | a100-80g | h100 | h200 | cpu (needs --calibration).")] = "h100",
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
    tp: Annotated[int | None, typer.Option("--tp", min=1, help="Pin the tensor-parallel degree.")] = None,
    pp: Annotated[int | None, typer.Option("--pp", min=1, help="Pin the pipeline-parallel degree.")] = None,
    weights_dtype: Annotated[str, typer.Option("--weights-dtype", help="fp32 | bf16 | fp16 | fp8 | int8.")] = "bf16",
    kv_dtype: Annotated[str, typer.Option("--kv-dtype", help="fp32 | bf16 | fp16 | fp8 | int8.")] = "bf16",
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
    from selene.plan.serve import (
        Efficiency,
        ServeModel,
        ServeRequest,
        load_calibration,
        make_serve_plan,
        read_lengths,
        render,
    )
    from selene.plan.serve import shape_from_preset as serve_shape

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

    from selene.cli.app import note
    from selene.config import ScalingStudyConfig, load_stage_config
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


def _pipeline_vocab(path: str) -> int | None:
    from selene.config import load_yaml

    data, _ = load_yaml(path)
    tok = data.get("tokenize") if isinstance(data, dict) else None
    return tok.get("vocab_size") if isinstance(tok, dict) else None
