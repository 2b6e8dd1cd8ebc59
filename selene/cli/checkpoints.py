"""Commands on a trained checkpoint: export to Hugging Face, generate text.

Each imports torch and transformers when it runs; importing this module costs no more than typer.
"""

from __future__ import annotations

from typing import Annotated

import typer

from selene.cli.app import app
from selene.errors import UsageError
from selene.terminal import console


@app.command()
def export(
    checkpoint: Annotated[str, typer.Option("--checkpoint", help="Checkpoint dir (step-NNNNNN), or a train dir.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Hugging Face model directory to write.")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a previous export (never a directory that is not one).")] = False,
) -> None:
    """Export a checkpoint (any parallel layout) to Hugging Face transformers format (Llama-style)."""
    from selene import guard
    from selene.eval.export_target import check_output

    check_output(output, overwrite, checkpoint)  # an output it must not write is refused before torch loads
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
    device: Annotated[str, typer.Option("--device", help="Where it runs (auto: cuda when there is a GPU).")] = "auto",
    dtype: Annotated[
        str | None, typer.Option("--dtype", help="The weights' precision (default: bf16 on cuda, fp32 on cpu).")
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
    texts = read_prompts(prompts) if prompts is not None else []  # refused before torch loads
    from selene.eval.checkpoint_io import eod_id, load_model, pick_device, pick_dtype, tokenizer
    from selene.eval.generate import generate as sample

    where = pick_device(device)
    weights = pick_dtype(dtype, where)
    loaded = load_model(checkpoint, device=where, dtype=weights)
    tok = tokenizer(checkpoint)
    stop = (eod_id(tok, loaded.meta),)
    if prompt is not None:
        ids = sample(loaded.model, loaded.args, tok.encode(prompt), max_tokens, temperature=temperature, top_p=top_p,
                     seed=seed, stop_ids=stop)
        console.print(prompt + tok.decode(ids), markup=False, highlight=False)
        return
    import json

    from selene.eval.generate import generate_batch, timing_summary

    results = []
    for lo in range(0, len(texts), batch):
        chunk = texts[lo : lo + batch]
        results.append(generate_batch(loaded.model, loaded.args, [tok.encode(t) for t in chunk], max_tokens,
                                      temperature=temperature, top_p=top_p, seed=seed, stop_ids=stop))
    outputs = [tok.decode(ids) for r in results for ids in r.tokens]
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
    a JSON object), else one prompt per non-blank line. A file that cannot be read, holds no prompts
    or is broken jsonl is refused before any work (`PathError`, exit 2)."""
    import json
    from pathlib import Path

    from selene.errors import PathError

    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PathError(f"--prompts {path}: cannot read it ({exc})") from exc
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise PathError(f"--prompts {path}: the file has no prompts")
    if not lines[0].lstrip().startswith("{"):
        return lines
    texts = []
    for n, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PathError(f"--prompts {path}: non-blank line {n} is not JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise PathError(f'--prompts {path}: non-blank line {n} has no "prompt" string')
        texts.append(row["prompt"])
    return texts
