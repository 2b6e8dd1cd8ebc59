"""The tokenize stage's checks before it runs and its dashboard artifacts (see `selene.registry`)."""

from __future__ import annotations

from selene.artifacts import Artifact, Table
from selene.config import TokenizeConfig
from selene.io import dataset, fs
from selene.io.dataset import StageResult
from selene.manifest import TokenizeManifest


def check(inp: str, out: str, cfg: TokenizeConfig) -> None:
    dataset.require_documents(inp, "tokenize")
    fs.check_writable(out)


def artifacts(result: StageResult[TokenizeManifest], cfg: TokenizeConfig) -> list[Artifact]:
    m = result.manifest
    if not m:
        return []
    tok = m.tokenizer
    rows = [{"source": s, "documents": v.documents_in, "tokens": v.tokens} for s, v in m.stats.per_source.items()]
    return [Table("tokenize-stats", rows,
                  f"Tokens per source in `{result.out}` (vocab {tok.vocab_size}, EOD id {tok.eod_id}, {m.dtype})")]
