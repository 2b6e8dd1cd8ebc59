"""The `selene` command: one sub-command per stage, plus `run` and `config`.

Exit codes: 0 success, 2 bad usage or configuration, 1 runtime failure. Errors print one paragraph;
``--debug`` (anywhere on the line) adds the traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from selene import __version__
from selene.config import (
    BlendConfig,
    DecontamConfig,
    DedupConfig,
    IngestConfig,
    SourceSpec,
    TokenizeConfig,
    dump_config,
    load_pipeline_config,
    load_stage_config,
)
from selene.errors import ConfigError, SeleneError, UsageError

app = typer.Typer(
    name="selene",
    help="Raw corpora → a pretrained, evaluated language model. Each stage is a Prefect flow and a command.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
config_app = typer.Typer(help="Validate and show configuration files.", no_args_is_help=True)
app.add_typer(config_app, name="config")
# Recent typer versions carry their own copy of click: catch the exceptions of both.
_CLICK_ERRORS: tuple[type[Exception], ...] = (
    click.ClickException,
    *(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"),
)
_EXITS = (click.exceptions.Exit, typer.Exit)
_ABORTS = (click.exceptions.Abort, typer.Abort)
console = Console(stderr=False)
err_console = Console(stderr=True)


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """selene: ingest → dedup → decontaminate → blend → tokenize → train → eval."""


@app.command()
def version() -> None:
    """Print the selene version."""
    console.print(__version__)


# ------------------------------------------------------------------------------------- config


@config_app.command("validate")
def config_validate(file: Annotated[str, typer.Argument(help="Pipeline YAML file.")]) -> None:
    """Validate a pipeline config and print it resolved (every default filled in)."""
    cfg = load_pipeline_config(file)
    console.print(dump_config(cfg), end="", markup=False, highlight=False)
    err_console.print(f"[green]{file}: valid[/green]")


@config_app.command("defaults")
def config_defaults(
    stage: Annotated[str, typer.Argument(help="Stage whose default settings to print.")] = "ingest",
) -> None:
    """Print the default settings of a stage, as YAML to start a config from."""
    models = {
        "ingest": IngestConfig,
        "dedup": DedupConfig,
        "decontaminate": DecontamConfig,
        "blend": BlendConfig,
        "tokenize": TokenizeConfig,
    }
    if stage not in models:
        raise typer.BadParameter(f"unknown stage {stage!r}; known: {', '.join(models)}")
    console.print(dump_config(models[stage]()), end="", markup=False, highlight=False)


# ------------------------------------------------------------------------------------- ingest


@app.command()
def ingest(
    output: Annotated[str, typer.Option("--output", "-o", help="Output dataset directory or fsspec URL.")],
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help="NAME=GLOB; Pile files take their source from meta.pile_set_name."),
    ] = None,
    source_override: Annotated[
        list[str] | None,
        typer.Option("--source-override", help="NAME=GLOB; NAME is the source of every document, Pile too."),
    ] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: ingest settings or a pipeline file.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-w", min=1, help="Parallel workers.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Redo even if OUT is complete for these inputs.")] = False,
) -> None:
    """Read Pile jsonl.zst, jsonl(.gz), WARC and WET files; clean, filter, exact-dedup into OUT.

    Every input record ends in OUT's shards or in OUT/removed.parquet with a reason.
    """
    cfg: IngestConfig = load_stage_config(config, IngestConfig, "ingest")
    specs = [SourceSpec.parse(s) for s in source or []]
    specs += [SourceSpec.parse(s, source_override=True) for s in source_override or []]
    if specs:
        cfg.sources = specs
    if workers is not None:
        cfg.workers = workers
    from selene.ingest.stage import preflight

    preflight(output, cfg)  # bad globs or an unwritable output fail here, before Prefect starts
    from selene.flows.ingest import ingest_flow

    _run_stage("ingest", ingest_flow, cfg, output, cfg, force=force)


def _run_stage(stage: str, flow: Any, cfg: Any, *args: Any, force: bool) -> None:
    """Run a stage's flow on the task runner its config asks for, with progress, then its summary."""
    from selene.flows.runtime import runner_for

    with _progress():
        result = flow.with_options(task_runner=runner_for(cfg))(*args, force=force)
    print_stage_summary(stage, result["manifest"], result["out"], result["skipped"])


@contextlib.contextmanager
def _progress() -> Iterator[None]:
    from selene.flows.runtime import set_progress_hook

    bars: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=err_console, transient=False,
    ) as progress:

        def hook(name: str, done: int, total: int) -> None:
            if name not in bars:
                bars[name] = progress.add_task(name, total=total)
            progress.update(bars[name], completed=done, total=total)

        set_progress_hook(hook)
        try:
            yield
        finally:
            set_progress_hook(None)


# -------------------------------------------------------------------------------------- dedup


def _with_overrides(cfg: Any, **overrides: Any) -> Any:
    """`cfg` with the options given on the command line (None = not given), validated together."""
    from pydantic import ValidationError

    from selene.config import format_validation_error

    data = cfg.model_dump()
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return type(cfg).model_validate(data)
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where="command-line options", root=type(cfg))) from None


@app.command()
def dedup(
    input: Annotated[str, typer.Option("--input", "-i", help="Document dataset to deduplicate.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Output dataset directory or fsspec URL.")],
    threshold: Annotated[float | None, typer.Option(help="Jaccard similarity of a duplicate [0.8].")] = None,
    num_perm: Annotated[int | None, typer.Option("--num-perm", help="MinHash permutations [128].")] = None,
    ngram: Annotated[int | None, typer.Option(help="Shingle size [5].")] = None,
    shingle: Annotated[str | None, typer.Option(help="word | char [word].")] = None,
    bands: Annotated[int | None, typer.Option(help="LSH bands (with --rows); default: chosen from threshold.")] = None,
    rows: Annotated[int | None, typer.Option(help="LSH rows per band (with --bands).")] = None,
    verify: Annotated[str | None, typer.Option(help="signature | exact | none [signature].")] = None,
    keep: Annotated[str | None, typer.Option(help="first | longest [first].")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: dedup settings or a pipeline file.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-w", min=1, help="Parallel workers.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Redo even if OUT is complete for this input.")] = False,
) -> None:
    """Remove near-duplicate documents (MinHash LSH); duplicates go to OUT/removed.parquet as dup_of:<id>."""
    cfg: DedupConfig = load_stage_config(config, DedupConfig, "dedup")
    cfg = _with_overrides(
        cfg, threshold=threshold, num_perm=num_perm, ngram=ngram, shingle=shingle, bands=bands, rows=rows,
        verify=verify, keep=keep, workers=workers,
    )
    from selene.dedup.stage import input_dataset
    from selene.io import fs

    input_dataset(input)
    fs.check_writable(output)
    from selene.flows.dedup import dedup_flow

    _run_stage("dedup", dedup_flow, cfg, input, output, cfg, force=force)


@app.command()
def decontaminate(
    input: Annotated[str, typer.Option("--input", "-i", help="Document dataset to decontaminate.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Output dataset directory or fsspec URL.")],
    tasks: Annotated[
        list[str] | None, typer.Option("--tasks", "-t", help="Task jsonl file or lm-eval task directory (repeatable).")
    ] = None,
    ngram: Annotated[int | None, typer.Option(help="Overlap length in words [13].")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: settings or a pipeline file.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-w", min=1, help="Parallel workers.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Redo even if OUT is complete for this input.")] = False,
) -> None:
    """Remove evaluation-task text (13-gram overlaps ± 200 characters) from a document dataset."""
    cfg: DecontamConfig = load_stage_config(config, DecontamConfig, "decontaminate")
    cfg = _with_overrides(cfg, tasks=tasks or None, ngram=ngram, workers=workers)
    if not cfg.tasks:
        raise UsageError("no evaluation tasks: give --tasks PATH (a jsonl file or an lm-eval task directory)")
    from selene.decontam.stage import preflight

    preflight(input, output, cfg)
    from selene.flows.decontam import decontam_flow

    _run_stage("decontaminate", decontam_flow, cfg, input, output, cfg, force=force)


def _mapping(option: str, value: str | None) -> dict[str, float] | None:
    """``SRC=W,SRC=W`` → {SRC: W}; the error names the item that is not of that form."""
    if value is None:
        return None
    out: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in value.split(","))):
        name, sep, num = item.rpartition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(num)
        except ValueError:
            raise ConfigError(f"{option}: {item!r} is not SOURCE=NUMBER (e.g. {option} Books3=1.5,Pile-CC=0.5)") from None
    return out


@app.command()
def blend(
    input: Annotated[str, typer.Option("--input", "-i", help="Document dataset to blend.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Output dataset directory or fsspec URL.")],
    weights: Annotated[str | None, typer.Option(help="SRC=W,...: shares of the mix (normalised).")] = None,
    epochs: Annotated[str | None, typer.Option(help="SRC=E,...: passes over a source (e.g. Books3=1.5).")] = None,
    target_tokens: Annotated[int | None, typer.Option("--target-tokens", help="Tokens of the mix.")] = None,
    tokenizer: Annotated[str | None, typer.Option(help="sentencepiece model to count tokens with.")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling and shuffling seed.")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: blend settings or a pipeline file.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-w", min=1, help="Parallel workers.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Redo even if OUT is complete for this input.")] = False,
) -> None:
    """Sample each source by weight or epochs (MT-NLG style) and shuffle globally into OUT."""
    cfg: BlendConfig = load_stage_config(config, BlendConfig, "blend")
    cfg = _with_overrides(
        cfg, weights=_mapping("--weights", weights), epochs=_mapping("--epochs", epochs),
        target_tokens=target_tokens, tokenizer=tokenizer, seed=seed, workers=workers,
    )
    if not cfg.weights and not cfg.epochs:
        raise UsageError("give --weights SRC=W,... or --epochs SRC=E,... (or blend.weights/epochs in --config)")
    from selene.io import dataset, fs

    dataset.require_documents(input, "blend")
    fs.check_writable(output)
    from selene.flows.blend import blend_flow

    _run_stage("blend", blend_flow, cfg, input, output, cfg, force=force)


@app.command()
def tokenize(
    input: Annotated[str, typer.Option("--input", "-i", help="Document dataset to tokenize.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Output directory: <prefix>.bin/.idx, tokenizer.model.")],
    tokenizer: Annotated[str | None, typer.Option(help="An existing sentencepiece .model (else one is trained).")] = None,
    vocab_size: Annotated[int | None, typer.Option("--vocab-size", help="Vocabulary of a trained tokenizer [32000].")] = None,
    model_type: Annotated[str | None, typer.Option("--model-type", help="bpe | unigram [bpe].")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: tokenize settings or a pipeline file.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", "-w", min=1, help="Parallel workers.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Redo even if OUT is complete for this input.")] = False,
) -> None:
    """Encode documents with sentencepiece into Megatron-LM's indexed format (.bin + .idx), EOD-terminated."""
    cfg: TokenizeConfig = load_stage_config(config, TokenizeConfig, "tokenize")
    cfg = _with_overrides(cfg, tokenizer=tokenizer, vocab_size=vocab_size, model_type=model_type, workers=workers)
    if cfg.tokenizer and (vocab_size is not None or model_type is not None):
        raise UsageError("--tokenizer loads a trained model: --vocab-size and --model-type only apply to training one")
    from selene.io import dataset, fs

    dataset.require_documents(input, "tokenize")
    fs.check_writable(output)
    from selene.flows.tokenization import tokenize_flow

    _run_stage("tokenize", tokenize_flow, cfg, input, output, cfg, force=force)


@app.command()
def train(
    config: Annotated[str, typer.Argument(help="Pipeline YAML (its train: section) or a training YAML with out:.")],
    nproc_per_node: Annotated[
        int | None, typer.Option("--nproc-per-node", min=1, help="Processes on this node [train.nproc_per_node].")
    ] = None,
    nnodes: Annotated[int, typer.Option("--nnodes", min=1, help="Nodes.")] = 1,
    node_rank: Annotated[int, typer.Option("--node-rank", min=0, help="This node's rank.")] = 0,
    rdzv_endpoint: Annotated[str | None, typer.Option("--rdzv-endpoint", help="HOST:PORT of the rendezvous.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="key=value override, e.g. parallel.tp=2.")] = None,
) -> None:
    """Pretrain with torchrun: data × tensor × pipeline parallel, DCP checkpoints, exact resume."""
    from selene.train.launch import launch, load_train_config

    cfg, out = load_train_config(config, set_ or [])
    launch(cfg, out, nproc_per_node or cfg.nproc_per_node, nnodes, node_rank, rdzv_endpoint)
    console.print(f"checkpoints in [b]{out}/checkpoints[/b]; metrics in {out}/metrics.jsonl")


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
    from selene.flows.deploy import serve_pipeline

    parts = [p.strip() for p in only.split(",") if p.strip()] if only else None
    serve_pipeline(config, limit=limit, only=parts)


@app.command("eval")
def eval_(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir: its latest.")],
    tasks: Annotated[str | None, typer.Option(help="Comma-separated harness tasks [the local selene_* tasks].")] = None,
    num_fewshot: Annotated[int | None, typer.Option("--num-fewshot", min=0, help="Few-shot examples [0].")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Documents per task, at most.")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1, help="Requests per forward [8].")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", help="Results directory [<checkpoint>/eval].")] = None,
    config: Annotated[str | None, typer.Option("--config", "-c", help="YAML: eval settings or a pipeline file.")] = None,
) -> None:
    """Evaluate a checkpoint on lm-evaluation-harness tasks (offline), plus held-out perplexity."""
    from selene.config import EvalConfig

    cfg: EvalConfig = load_stage_config(config, EvalConfig, "eval")
    cfg = _with_overrides(
        cfg, tasks=[t.strip() for t in tasks.split(",") if t.strip()] if tasks else None,
        num_fewshot=num_fewshot, limit=limit, batch_size=batch_size, checkpoint=checkpoint,
    )
    from selene.eval.stage import print_results, run_eval

    result = run_eval(cfg, output)
    print_results(result, console)


@app.command()
def export(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Hugging Face model directory to write.")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing export.")] = False,
) -> None:
    """Export a checkpoint (any parallel layout) to Hugging Face transformers format (Llama-style)."""
    from selene.eval.export import export_hf

    info = export_hf(checkpoint, output, overwrite=overwrite)
    console.print(f"exported to [b]{output}[/b]: {info}")


@app.command()
def generate(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir.")],
    prompt: Annotated[str, typer.Option(help="Text to continue.")],
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Tokens to generate.")] = 64,
    temperature: Annotated[float, typer.Option(min=0.0, help="0: greedy.")] = 1.0,
    top_p: Annotated[float, typer.Option("--top-p", min=0.0, max=1.0, help="Nucleus sampling.")] = 1.0,
    seed: Annotated[int | None, typer.Option(help="Seed: the same seed gives the same text.")] = None,
) -> None:
    """Sample a continuation with a KV cache."""
    from selene.eval.checkpoint_io import eod_id, load_model, tokenizer
    from selene.eval.generate import generate as sample

    loaded = load_model(checkpoint)
    sp = tokenizer(checkpoint)
    ids = sample(loaded.model, loaded.args, sp.encode(prompt), max_tokens, temperature=temperature, top_p=top_p,
                 seed=seed, stop_ids=(eod_id(sp, loaded.meta),))
    console.print(prompt + sp.decode(ids), markup=False, highlight=False)


@app.command()
def plan(
    config: Annotated[
        str | None, typer.Argument(help="Pipeline or training YAML: plan its model, batch and layout (nothing runs).")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model preset (selene train's presets).")] = None,
    layers: Annotated[int | None, typer.Option("--layers", min=1, help="Transformer layers.")] = None,
    hidden: Annotated[int | None, typer.Option("--hidden", min=1, help="Hidden size.")] = None,
    heads: Annotated[int | None, typer.Option("--heads", min=1, help="Attention heads.")] = None,
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
    """Plan a training run: FLOPs, memory per GPU, time per iteration and days, for the best parallel layouts."""
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


@app.command("scaling-study")
def scaling_study(
    config: Annotated[str, typer.Argument(help="Scaling-study YAML (out, runs: [...]); see configs/scaling-study-*.yaml.")],
) -> None:
    """Short training runs at several sizes and layouts: measured TFLOP/s and memory, planner calibrated."""
    from selene.config import ScalingStudyConfig, load_stage_config

    cfg = load_stage_config(config, ScalingStudyConfig, "scaling_study")
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


def print_stage_summary(stage: str, data: dict[str, Any], out: str, skipped: bool) -> None:
    """Documents per source in, kept and removed, then removals by reason: every stage's table."""
    from selene.ingest.stage import reason_totals
    from selene.manifest import parse_manifest

    m = parse_manifest(data, f"{out}/manifest.json")
    st = m.stats
    table = Table(title=f"{stage} → {out}" + (" (complete already: reused)" if skipped else ""))
    for col in ("source", "in", "kept", "removed", "kept %"):
        table.add_column(col, justify="left" if col == "source" else "right")
    for src, s in st.per_source.items():
        removed = sum(s.removed.values())
        table.add_row(src, str(s.documents_in), str(s.kept), str(removed), f"{s.kept / max(s.documents_in, 1):.0%}")
    n_in = st.documents_in
    kept = sum(s.kept for s in st.per_source.values())
    table.add_row("[b]total", f"[b]{n_in}", f"[b]{kept}", f"[b]{st.documents_removed}", f"[b]{kept / max(n_in, 1):.0%}")
    console.print(table)
    if st.tokens is not None:
        console.print(f"{st.tokens:,} tokens in {st.sequences or 0:,} sequences (EOD-terminated documents)")
    if st.documents_split is not None:
        console.print(f"{st.documents_split} document(s) split into pieces: {st.documents_out} rows out")
    totals = reason_totals(m)
    if totals:
        reasons = Table(title="removed, by reason (details in removed.parquet)")
        reasons.add_column("reason")
        reasons.add_column("documents", justify="right")
        for reason, n in totals:
            reasons.add_row(reason, str(n))
        console.print(reasons)
    if m.stage == "blend":
        from selene.blend.stage import report_rows

        rows = report_rows(m)
        mix = Table(title="blend: requested vs realised")
        for col in rows[0] if rows else []:
            mix.add_column(col, justify="left" if col == "source" else "right")
        for r in rows:
            mix.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in r.values()))
        console.print(mix)
    if m.stage == "tokenize":
        files = f"{m.prefix}.bin/.idx and tokenizer.model"
    else:
        files = f"{len(m.shards)} shard(s) and removed.parquet"
    console.print(f"{files} in [b]{out}[/b]; counts in {out}/manifest.json")


# --------------------------------------------------------------------------------------- run


@app.command()
def run(
    pipeline: Annotated[str, typer.Argument(help="Pipeline YAML file, e.g. configs/demo.yaml.")],
    from_stage: Annotated[str | None, typer.Option("--from", help="Start at this stage (earlier ones must be complete).")] = None,
    until_stage: Annotated[str | None, typer.Option("--until", help="Stop after this stage.")] = None,
    force: Annotated[list[str] | None, typer.Option("--force", help="Redo this stage even when complete (repeatable).")] = None,
) -> None:
    """Run the whole pipeline as one Prefect flow into the config's run_dir; complete stages are skipped."""
    cfg = load_pipeline_config(pipeline)
    from selene.flows.pipeline import pipeline_flow, selected

    selected(cfg, from_stage, until_stage, force or [])  # bad stage names fail before Prefect starts
    with _progress():
        result = pipeline_flow(cfg, force=force or [], from_stage=from_stage, until_stage=until_stage)
    for stage, r in result.items():
        if stage == "eval":
            from selene.eval.stage import print_results

            print_results(r["summary"], console)
            continue
        if stage == "train":
            last = r["last"]
            console.print(
                f"train → {r['out']}: step {last.get('step')}, loss {last.get('loss', float('nan')):.4f}"
                + (f", validation loss {last['val_loss']:.4f}" if "val_loss" in last else "")
                + f"\nmodel (last checkpoint): [b]{r['checkpoint']}[/b]; loss curve {r['out']}/loss.svg"
            )
            continue
        print_stage_summary(stage, r["manifest"], r["out"], r["skipped"])
    console.print(f"run directory: [b]{cfg.run_dir}[/b]; report: [b]{cfg.run_dir}/report.md[/b]")


# -------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    # Embedded Prefect server: no telemetry calls (they fail offline and log errors).
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]  # accepted anywhere, not only before the command
    if not debug:
        from selene.flows.runtime import quiet_console_tracebacks

        _prefect_quiet = quiet_console_tracebacks
    else:
        _prefect_quiet = None
    try:
        if _prefect_quiet is not None:
            _install_quiet_logging(_prefect_quiet)
        app(args=args, prog_name="selene", standalone_mode=False)
        return 0
    except _EXITS as e:
        return int(getattr(e, "exit_code", 0) or 0)
    except _ABORTS:
        err_console.print("aborted")
        return 130
    except _CLICK_ERRORS as e:
        e.show()  # type: ignore[attr-defined]
        return 2
    except SeleneError as e:
        if debug:
            traceback.print_exc()
        err_console.print(f"[red]error:[/red] {escape(str(e))}", markup=True, highlight=False, soft_wrap=True)
        return e.exit_code
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except Exception as e:
        if debug:
            traceback.print_exc()
        err_console.print(
            f"[red]error:[/red] {type(e).__name__}: {escape(str(e))}\n(rerun with --debug for the traceback)",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )
        return 1


def _install_quiet_logging(quiet: Any) -> None:
    """Prefect configures its logging when a flow starts; apply our console formatter then too."""
    import prefect.logging.configuration as lc

    original = lc.setup_logging

    def setup(*a: Any, **k: Any) -> Any:
        out = original(*a, **k)
        quiet()
        return out

    lc.setup_logging = setup
    quiet()


if __name__ == "__main__":
    sys.exit(main())
