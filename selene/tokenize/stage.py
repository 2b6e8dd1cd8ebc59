"""The tokenize stage: documents → sentencepiece ids → Megatron-LM indexed dataset (.bin + .idx).

1. Tokenizer: the given model, or one trained on a seeded sample of the input (`spm.train`).
2. `encode_shard` per input shard (parallel): batched sentencepiece encoding, the end-of-document id
   appended to every document, one document per sequence, written as an indexed part.
3. The parts are merged, in shard order, into ``OUT/<prefix>.bin`` / ``.idx``; ``tokenizer.model`` is
   copied next to them; the manifest (written last) has vocabulary, EOD id, dtype and tokens per source.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from selene import __version__, executor
from selene.config import TokenizeConfig
from selene.errors import InputError
from selene.executor import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fs
from selene.manifest import (
    DatasetInputs,
    DocumentManifest,
    FileEntry,
    SourceStats,
    TokenizeManifest,
    TokenizerInfo,
    TokenizeStats,
)
from selene.tokenize import indexed, spm

WORK = dataset.WORK
TOKENIZER = "tokenizer.model"
_SP_CACHE: dict[str, Any] = {}


TokenizeResult = dataset.StageResult[TokenizeManifest]


def _processor(path: str, eod_piece: str) -> Any:
    if path not in _SP_CACHE:
        _SP_CACHE.clear()
        _SP_CACHE[path] = spm.load(path, eod_piece)
    return _SP_CACHE[path]


def encode_shard(root: str, k: int, shard: str, cfg: TokenizeConfig) -> dict[str, Any]:
    """Encode input shard `k` into the indexed part ``<root>/parts/NNNNN``; returns its counts."""
    prefix = fs.join(root, "parts", f"{k:05d}")
    marker = prefix + ".json"
    if fs.exists(marker):
        return json.loads(fs.read_text(marker))
    sp = _processor(fs.join(root, TOKENIZER), cfg.eod_piece)
    eod = spm.eod_piece_id(sp, cfg.eod_piece)
    dtype = indexed.choose_dtype(sp.vocab_size())
    docs: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    writer = indexed.IndexedWriter(prefix, dtype)
    try:
        pf = dataset.open_parquet(shard)
        for batch in pf.iter_batches(batch_size=cfg.encode_batch, columns=["text", "source"]):
            ids = sp.encode(batch.column(0).to_pylist(), num_threads=cfg.threads)
            lengths = np.fromiter((len(s) + 1 for s in ids), dtype=np.int64, count=len(ids))
            for s in ids:
                s.append(eod)
            flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=dtype, count=int(lengths.sum()))
            writer.add_documents(flat, lengths)
            for src, n in zip(batch.column(1).to_pylist(), lengths.tolist(), strict=True):
                docs[src] += 1
                tokens[src] += n
    except BaseException:
        writer.abort()
        raise
    writer.finalize()
    result = {"prefix": prefix, "documents": dict(docs), "tokens": dict(tokens)}
    fs.atomic_write(marker, json.dumps(result))
    return result


def prepare_tokenizer(inp: str, root: str, m_in: DocumentManifest, cfg: TokenizeConfig) -> bytes:
    """The serialized model: the given one, or one trained on a seeded sample of `inp`."""
    if cfg.tokenizer:
        spm.load(cfg.tokenizer, cfg.eod_piece)  # validates
        return fs.read_bytes(cfg.tokenizer)
    cached = fs.join(root, TOKENIZER)
    if fs.exists(cached):
        return fs.read_bytes(cached)
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    return spm.train(spm.sample_lines(shards, [s.rows for s in m_in.shards], cfg), cfg)


def run_tokenize(
    inp: str, out: str, cfg: TokenizeConfig, *, mapper: Mapper | None = None, force: bool = False
) -> TokenizeResult:
    mapper = mapper or serial_map
    m_in = dataset.require_documents(inp, "tokenize")
    given = hashlib.sha256(fs.read_bytes(cfg.tokenizer)).hexdigest() if cfg.tokenizer else None
    settings = executor.settings(cfg, "tokenizer")
    fp = executor.fingerprint([s.sha256 for s in m_in.shards], settings, given)
    if (done := dataset.open_output(out, fp, force, TokenizeManifest)) is not None:
        return done
    root = fs.join(out, WORK, fp)
    model = prepare_tokenizer(inp, root, m_in, cfg)
    fs.atomic_write(fs.join(root, TOKENIZER), model)
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    parts = mapper("tokenize-shard", encode_shard, [(root, k, p, cfg) for k, p in enumerate(shards)])
    failpoint("tokenize:parts-written")
    merged = indexed.merge([p["prefix"] for p in parts], fs.join(out, cfg.prefix))
    fs.atomic_write(fs.join(out, TOKENIZER), model)
    failpoint("tokenize:merged")
    manifest = finalize(out, inp, m_in, parts, merged, model, cfg, fp)
    fs.rm(fs.join(out, WORK), recursive=True)
    return TokenizeResult(out, skipped=False, manifest=manifest)


def finalize(
    out: str, inp: str, m_in: DocumentManifest, parts: Sequence[dict[str, Any]], merged: dict[str, Any],
    model: bytes, cfg: TokenizeConfig, fp: str,
) -> TokenizeManifest:
    docs: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    for p in parts:
        docs.update(p["documents"])
        tokens.update(p["tokens"])
    n_in = sum(s.rows for s in m_in.shards)
    if sum(docs.values()) != n_in:
        raise InputError(f"internal accounting error: {sum(docs.values())} documents encoded, {n_in} in the input")
    sp = spm.load(fs.join(out, TOKENIZER), cfg.eod_piece)
    files = []
    for ext in (".bin", ".idx"):
        path = fs.join(out, cfg.prefix + ext)
        files.append(FileEntry(name=cfg.prefix + ext, bytes=fs.size(path), sha256=fs.sha256_file(path)))
    manifest = TokenizeManifest(
        selene_version=__version__,
        fingerprint=fp,
        config=cfg.model_dump(mode="json"),
        inputs=DatasetInputs(dataset=inp, fingerprint=m_in.fingerprint),
        shards=files,
        prefix=cfg.prefix,
        tokenizer=TokenizerInfo(
            file=TOKENIZER,
            sha256=hashlib.sha256(model).hexdigest(),
            vocab_size=int(sp.vocab_size()),
            eod_id=spm.eod_piece_id(sp, cfg.eod_piece),
            eod_piece=cfg.eod_piece,
            trained=cfg.tokenizer is None,
        ),
        dtype=str(indexed.choose_dtype(sp.vocab_size())),
        stats=TokenizeStats(
            documents_in=n_in,
            documents_out=n_in,
            documents_removed=0,
            sequences=int(merged.get("sequences", n_in)),
            tokens=int(sum(tokens.values())),
            per_source={
                s: SourceStats(documents_in=docs[s], kept=docs[s], removed={}, tokens=tokens[s]) for s in sorted(docs)
            },
        ),
    )
    dataset.write_manifest(out, manifest)
    return manifest
