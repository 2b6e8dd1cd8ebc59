"""`tokenize_flow`: sentencepiece + Megatron indexed shards, with tokens per source as an artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact

from selene.config import TokenizeConfig
from selene.flows.runtime import run_with_mapper
from selene.tokenize.stage import run_tokenize


@flow(name="tokenize", log_prints=True, validate_parameters=False)
def tokenize_flow(inp: str, out: str, cfg: TokenizeConfig, force: bool = False) -> dict[str, Any]:
    """Documents in `inp` → `out/<prefix>.bin/.idx` + `out/tokenizer.model`."""
    result = run_with_mapper(run_tokenize, cfg, [inp, out], inp, out, force=force)
    m = result.manifest
    if m:
        tok = m.tokenizer
        create_table_artifact(
            table=[{"source": s, "documents": v.documents_in, "tokens": v.tokens} for s, v in m.stats.per_source.items()],
            key="tokenize-stats",
            description=f"Tokens per source in `{out}` (vocab {tok.vocab_size}, EOD id {tok.eod_id}, {m.dtype})",
        )
    return result.summary()
