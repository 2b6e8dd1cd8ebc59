"""`tokenize_flow`: sentencepiece + Megatron indexed shards, with tokens per source as an artifact."""

from __future__ import annotations

from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact

from selene.config import TokenizeConfig
from selene.flows.runtime import mapper_for
from selene.tokenize.stage import run_tokenize


@flow(name="tokenize", log_prints=True, validate_parameters=False)
def tokenize_flow(inp: str, out: str, cfg: TokenizeConfig, force: bool = False) -> dict[str, Any]:
    """Documents in `inp` → `out/<prefix>.bin/.idx` + `out/tokenizer.model`."""
    mapper = mapper_for(cfg.executor, cfg.workers, [inp, out])
    try:
        result = run_tokenize(inp, out, cfg, mapper=mapper, force=force)
    finally:
        mapper.close()
    m = result.manifest
    if m:
        tok = m["tokenizer"]
        create_table_artifact(
            table=[{"source": s, "documents": v["in"], "tokens": v["tokens"]} for s, v in m["stats"]["per_source"].items()],
            key="tokenize-stats",
            description=f"Tokens per source in `{out}` (vocab {tok['vocab_size']}, EOD id {tok['eod_id']}, {m['dtype']})",
        )
    return {"out": result.out, "skipped": result.skipped, "manifest": result.manifest}
