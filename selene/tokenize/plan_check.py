"""Whether the tokens made are the tokens a blend planned: a blend sizes its mix (`target_tokens`,
the shares of its sources) in the tokens of the tokenizer it counted with, so tokenizing it with
another tokenizer gives a mix of another size, silently. Said as a warning, with both tokenizers and
the counts; the output is still right for the tokenizer used."""

from __future__ import annotations

import os

from selene.blend.manifest import BlendManifest
from selene.errors import SeleneError
from selene.io import dataset, fs
from selene.manifest import DocumentManifest
from selene.tokenize.manifest import TokenizeManifest
from selene.tokenize.tokenizer import load

ESTIMATE_TOLERANCE = 0.25
"""A blend without a tokenizer estimates tokens from bytes (`blend.bytes_per_token`): off by more than
this (realised / planned - 1), with a `target_tokens` asked, is warned about; less is the estimate's
expected error, and the usual pipeline (the tokenizer is trained after the blend) would warn on every run."""


def blend_mismatch(m_in: DocumentManifest, inp: str, identity: str, name: str, realised: int) -> str | None:
    """The warning for tokenizing the blend `inp` (manifest `m_in`) with the tokenizer `name` (its
    `Tokenizer.identity`) into `realised` tokens, EOD excluded; None when the blend counted with the
    same tokenizer, or `inp` is no blend."""
    if not isinstance(m_in, BlendManifest):
        return None
    totals = m_in.blend.totals
    counted = totals.tokens_sampled
    target = f", target_tokens {totals.target_tokens:,}" if totals.target_tokens is not None else ""
    ratio = realised / counted if counted else float("inf")
    made = f"tokenize made {realised:,} tokens of it (EOD excluded) with {name}: {ratio:.2f}x"
    counted_with = m_in.inputs.tokenizer
    if counted_with is None:
        if totals.target_tokens is None or abs(ratio - 1) <= ESTIMATE_TOLERANCE:
            return None
        per = m_in.config.get("bytes_per_token")
        return (
            f"the blend {inp} estimated its mix at {counted:,} tokens{target} from bytes "
            f"({per} bytes per token, no tokenizer); {made}. Blend with --tokenizer to plan in real tokens"
        )
    if _same(counted_with, identity, name):
        return None
    return (
        f"the blend {inp} counted its mix with {counted_with} as {counted:,} tokens{target}; {made}. The mix's "
        f"size and per-source shares are not what was planned in these tokens: blend again with --tokenizer "
        f"set to this tokenizer to plan in its tokens"
    )


def _same(counted_with: str, identity: str, name: str) -> bool:
    """Whether the blend's tokenizer is this one: by identity (what fixes the ids) when it still
    loads, else by path."""
    try:
        return load(counted_with, require_eod=False).identity == identity
    except (SeleneError, OSError):
        return os.path.abspath(counted_with) == os.path.abspath(name)


def tokenizer_name(given: str | None, out: str, file: str) -> str:
    """How the warning names the tokenizer used: as given, or the model trained next to the data."""
    return given or f"{fs.join(out, file)} (trained here)"


def reused_mismatch(out: str, m: TokenizeManifest) -> str | None:
    """`blend_mismatch` again for an output that was reused (its run said it on stderr); None when
    the input or the tokenizer next to the data no longer loads."""
    try:
        m_in = dataset.read_manifest(m.inputs.dataset)
        if not isinstance(m_in, BlendManifest):
            return None
        identity = load(fs.join(out, m.tokenizer.file), require_eod=False).identity
    except (SeleneError, OSError):
        return None
    given = None if m.tokenizer.trained else m.config.get("tokenizer")
    name = tokenizer_name(given, out, m.tokenizer.file)
    return blend_mismatch(m_in, m.inputs.dataset, identity, name, m.stats.tokens - m.stats.sequences)
