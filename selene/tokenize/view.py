"""What the tokenize stage shows (`selene.view`): the documents table with the token counts, and
tokens per source with the vocabulary and EOD id (dashboard and report)."""

from __future__ import annotations

from selene.io.results import StageResult
from selene.tokenize.manifest import TokenizeManifest
from selene.tokenize.plan_check import reused_mismatch
from selene.view import PREFECT, REPORT, TERMINAL, Block, Cell, Table, Text, View, columns, documents


def view(result: StageResult[TokenizeManifest]) -> View:
    """The terminal names the token data and the tokenizer as the files written (and, for a reused
    output, says again the warning its run gave of a blend planned in other tokens)."""
    m = result.manifest
    if not isinstance(m, TokenizeManifest):
        return View("Tokens", (Text("(not tokenized yet)", REPORT),))
    st, tok = m.stats, m.tokenizer
    rows = [(s, v.documents_in, Cell(v.tokens, f"{v.tokens or 0:,}")) for s, v in st.per_source.items()]
    blocks: list[Block] = [
        *documents(result, files=f"{m.prefix}.bin/.idx and {tok.file}"),
        Text(f"{st.tokens:,} tokens in {st.sequences:,} documents; vocabulary {tok.vocab_size}, "
             f"EOD id {tok.eod_id}, dtype {m.dtype}.", REPORT),
        Table(columns("source", "documents", "tokens"), rows, key="tokenize-stats",
              description=f"Tokens per source in `{result.out}` (vocab {tok.vocab_size}, EOD id {tok.eod_id}, {m.dtype})",
              to=PREFECT | REPORT),
    ]  # fmt: skip
    if result.skipped and (warning := reused_mismatch(result.out, m)):
        blocks.append(Text(f"[yellow]warning:[/yellow] tokenize: {warning}", TERMINAL, highlight=False))
    return View("Tokens", blocks)
