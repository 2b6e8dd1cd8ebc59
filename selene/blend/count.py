"""Steps 1-2 of the blend: what each source holds, counted per input shard.

`scan_shard` counts documents and UTF-8 bytes per source (Arrow compute, no Python loop per
document) and keeps each document's bytes (``lengths/s<shard>.npy``, 8 bytes a document) for the
partial-pass search; `token_shard` (only with a tokenizer) encodes the shard's part of each source's
seeded token sample, from which tokens/byte is extrapolated to the whole source (`mix.source_sizes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from selene.blend import mix
from selene.blend.config import BlendConfig
from selene.errors import ConfigError
from selene.executor.mappers import Mapper
from selene.io import dataset, fs, steps
from selene.tokenize.tokenizer import Tokenizer
from selene.tokenize.tokenizer import load as load_tokenizer

_TOKENIZERS: dict[str, Tokenizer] = {}


@dataclass(frozen=True)
class SourceCount:
    """One source's documents and UTF-8 bytes of text (in one shard, or in all)."""

    documents: int
    bytes: int


class Scanned(steps.StepResult):
    """Step 1's result for one shard: source → its count, sources in sorted order (the order of the
    shard's lengths file)."""

    sources: dict[str, SourceCount]


class TokenCounts(steps.StepResult):
    """Step 2's result for one shard: source → what the tokenizer made of the shard's part of its sample."""

    sources: dict[str, mix.TokenSample]


def tokenizer_digest(cfg: BlendConfig) -> str | None:
    """What fixes the token counts: the tokenizer's identity (a sentencepiece model: sha256 of its
    file, as before any other kind was accepted); loading it here refuses a bad one before any work."""
    if cfg.tokenizer is None:
        return None
    if not cfg.tokenizer.startswith("tiktoken:") and not fs.exists(cfg.tokenizer):
        raise ConfigError(
            f"blend.tokenizer: {cfg.tokenizer!r} does not exist; give a sentencepiece .model, a Hugging Face "
            "tokenizer.json (or its directory), a .tiktoken file or tiktoken:NAME, or unset it to estimate "
            f"tokens as bytes / bytes_per_token ({cfg.bytes_per_token})"
        )
    return _tokenizer(cfg.tokenizer).identity


def _tokenizer(path: str) -> Tokenizer:
    """The tokenizer at `path`, loaded once per process by the tokenize stage's loader (the same kinds
    and errors). Counting appends no end-of-document token, so one without an EOD is accepted."""
    if path not in _TOKENIZERS:
        _TOKENIZERS.clear()
        _TOKENIZERS[path] = load_tokenizer(path, require_eod=False)
    return _TOKENIZERS[path]


def sources_of(table: pa.Table) -> tuple[list[str], np.ndarray]:
    """The distinct sources of a shard and, per row, the index of its source in that list."""
    enc = table.column("source").combine_chunks().dictionary_encode()
    return enc.dictionary.to_pylist(), enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def byte_lengths(table: pa.Table) -> np.ndarray:
    return pc.binary_length(table.column("text")).to_numpy().astype(np.int64)


def lengths_path(root: str, k: int) -> str:
    return fs.join(root, "lengths", f"s{k:05d}.npy")


def scan_shard(root: str, k: int, shard: str) -> Scanned:
    """Source → documents and bytes of input shard `k`. Also writes the UTF-8 bytes of each document,
    grouped by source (in sorted order, as the result), in row order within a source."""
    return steps.resumable(
        steps.marker(root, "scan", k), Scanned, lambda: _scan(root, k, shard), outputs=[lengths_path(root, k)]
    )


def _scan(root: str, k: int, shard: str) -> Scanned:
    out: dict[str, list[int]] = {}
    sources: list[pa.Array] = []
    lengths: list[np.ndarray] = []
    for batch in dataset.open_parquet(shard).iter_batches(batch_size=8192, columns=["source", "text"]):
        n = pc.fill_null(pc.binary_length(batch.column(1)), 0)
        t = pa.table({"source": batch.column(0), "n": n})
        agg = t.group_by("source").aggregate([("n", "count"), ("n", "sum")]).to_pydict()
        for src, docs, nbytes in zip(agg["source"], agg["n_count"], agg["n_sum"], strict=True):
            acc = out.setdefault(src, [0, 0])
            acc[0] += int(docs)
            acc[1] += int(nbytes or 0)
        sources.append(batch.column(0))
        lengths.append(n.to_numpy(zero_copy_only=False).astype(np.int64))
    by_source = np.empty(0, dtype=np.int64)
    if lengths:
        enc = pa.chunked_array(sources).combine_chunks().dictionary_encode()
        names = enc.dictionary.to_pylist()
        rank = np.argsort(np.argsort(np.array(names, dtype=object)))  # each name's place in sorted order
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        by_source = np.concatenate(lengths)[np.argsort(rank[codes], kind="stable")]
    fs.save_npy(lengths_path(root, k), by_source)
    return Scanned(sources={s: SourceCount(docs, nbytes) for s, (docs, nbytes) in sorted(out.items())})


def token_shard(root: str, k: int, shard: str, picks: dict[str, int], cfg: BlendConfig) -> TokenCounts:
    """Source → documents, bytes and tokens of shard `k`'s part of each source's token sample."""
    return steps.resumable(steps.marker(root, "tokens", k), TokenCounts, lambda: _tokens(k, shard, picks, cfg))


def _tokens(k: int, shard: str, picks: dict[str, int], cfg: BlendConfig) -> TokenCounts:
    assert cfg.tokenizer is not None
    tok = _tokenizer(cfg.tokenizer)
    table = dataset.open_parquet(shard).read(columns=["source", "text"])
    names, codes = sources_of(table)
    out: dict[str, mix.TokenSample] = {}
    for src, n in sorted(picks.items()):
        rows = np.flatnonzero(codes == names.index(src))
        gen = mix.rng(mix.source_seed(cfg.seed, src, mix.TOKENS, k))
        chosen = rows[np.sort(gen.choice(rows.size, size=n, replace=False))]
        texts = table.column("text").take(pa.array(chosen))
        tokens = sum(len(ids) for ids in tok.encode_batch(texts.to_pylist(), threads=1))
        out[src] = mix.TokenSample(int(n), int(pc.sum(pc.binary_length(texts)).as_py() or 0), int(tokens))
    return TokenCounts(sources=out)


def token_samples(
    root: str, shards: Sequence[str], per_shard: Mapping[str, list[int]], cfg: BlendConfig, mapper: Mapper
) -> dict[str, mix.TokenSample]:
    """Each source's token sample (`mix.token_sample_split` over the shards), counted through `mapper`."""
    assert cfg.tokenizer is not None
    _tokenizer(cfg.tokenizer)  # a bad tokenizer fails here, once, with its path
    split = mix.token_sample_split(per_shard, cfg)
    picks = [{s: int(split[s][k]) for s in split if split[s][k]} for k in range(len(shards))]
    jobs = [(root, k, p, picks[k], cfg) for k, p in enumerate(shards) if picks[k]]
    acc: dict[str, mix.TokenSample] = {}
    for res in mapper("blend-tokens", token_shard, jobs):
        for src, v in res.sources.items():
            a = acc.get(src, mix.TokenSample(0, 0, 0))
            acc[src] = mix.TokenSample(a.documents + v.documents, a.bytes + v.bytes, a.tokens + v.tokens)
    return acc
