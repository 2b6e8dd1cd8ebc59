"""The tokenize stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.io import dataset, fs
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.tokenizer import load


def check(inp: str, out: str, cfg: TokenizeConfig) -> None:
    dataset.require_documents(inp, "tokenize")
    if cfg.tokenizer:  # a tokenizer that does not load, or lacks its EOD token, is refused before any work
        load(cfg.tokenizer, cfg.eod_token, cfg.eod_piece)
    fs.check_writable(out)
