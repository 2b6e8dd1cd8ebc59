"""The tokenize stage's checks before it runs, its dashboard artifacts and its part of the run
report (see `selene.registry`)."""

from __future__ import annotations

import os

from rich.console import Console

from selene.artifacts import Artifact, Table
from selene.io import dataset, fs
from selene.io.dataset import StageResult
from selene.summary import documents
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.manifest import TokenizeManifest
from selene.tokenize.plan_check import reused_mismatch
from selene.tokenize.tokenizer import load


def check(inp: str, out: str, cfg: TokenizeConfig) -> None:
    dataset.require_documents(inp, "tokenize")
    if cfg.tokenizer:  # a tokenizer that does not load, or lacks its EOD token, is refused before any work
        load(cfg.tokenizer, cfg.eod_token, cfg.eod_piece)
    fs.check_writable(out)


def artifacts(result: StageResult[TokenizeManifest], cfg: TokenizeConfig) -> list[Artifact]:
    m = result.manifest
    if not m:
        return []
    tok = m.tokenizer
    rows = [{"source": s, "documents": v.documents_in, "tokens": v.tokens} for s, v in m.stats.per_source.items()]
    return [Table("tokenize-stats", rows,
                  f"Tokens per source in `{result.out}` (vocab {tok.vocab_size}, EOD id {tok.eod_id}, {m.dtype})")]


def report_section(out: str, run_dir: str) -> tuple[str, list[str]]:
    """The run report's tokens section: tokens per source, the vocabulary and EOD id."""
    m = dataset.read_manifest(out) if os.path.isdir(out) else None
    if not isinstance(m, TokenizeManifest):
        return "Tokens", ["(not tokenized yet)"]
    st, tok = m.stats, m.tokenizer
    lines = [f"{st.tokens:,} tokens in {st.sequences:,} documents; vocabulary {tok.vocab_size}, "
             f"EOD id {tok.eod_id}, dtype {m.dtype}.", "", "| source | documents | tokens |", "|---|---:|---:|"]
    lines += [f"| {s} | {v.documents_in} | {v.tokens or 0:,} |" for s, v in st.per_source.items()]
    return "Tokens", lines


def summary(result: StageResult[TokenizeManifest], console: Console) -> None:
    """The documents table with the token counts; the files are the token data and the tokenizer
    (and, for a reused output, the warning its run gave of a blend planned in other tokens)."""
    m = result.manifest
    prefix, file = (m.prefix, m.tokenizer.file) if m is not None else ("", "tokenizer.model")
    documents(result, console, files=f"{prefix}.bin/.idx and {file}")
    if m is not None and result.skipped and (warning := reused_mismatch(result.out, m)):
        console.print(f"[yellow]warning:[/yellow] tokenize: {warning}", highlight=False)
