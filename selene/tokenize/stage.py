"""The tokenize stage: documents → token ids → Megatron-LM indexed dataset (.bin + .idx).

1. Tokenizer: the given one (a sentencepiece model, a Hugging Face tokenizer.json or a tiktoken
   encoding, `tokenizer.load`),
   or a sentencepiece model trained on a seeded sample of the input (`spm.train`).
2. `encode_shard` per input shard (parallel): batched encoding in batches sized in bytes
   (`encode_batch_bytes`), ids as numpy arrays, the end-of-document id appended to every document, one
   document per sequence, streamed into an indexed part. Memory is one batch, whatever the corpus.
3. The parts are merged, in shard order, into ``OUT/<prefix>.bin`` / ``.idx``; the tokenizer's file
   (``tokenizer.model``, ``tokenizer.json`` or ``tokenizer.tiktoken`` with its ``.json``) is copied
   next to them; the manifest (written last) has
   the tokenizer's kind, vocabulary, EOD id, dtype and tokens per source.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc

from selene.errors import ConfigError
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DatasetInputs, DocumentManifest, FileEntry, SourceStats
from selene.tokenize import indexed, plan_check, spm
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.manifest import TiktokenInfo, TokenizeManifest, TokenizerInfo, TokenizeStats
from selene.tokenize.tokenizer import (
    EXTRA_FILES,
    FILES,
    SentencePieceTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    load,
    load_file,
)

WORK = dataset.WORK
TOKENIZER = FILES["sentencepiece"]
_CACHE: dict[tuple[str, str], Tokenizer] = {}
_READ_ROWS = 64  # rows per Parquet read while filling a batch: small, documents can be megabytes each


TokenizeResult = StageResult[TokenizeManifest]


def _tokenizer(root: str, eod_piece: str) -> Tokenizer:
    """The tokenizer of the work directory `root`, loaded once per worker process."""
    path = next(
        (p for name in FILES.values() if fs.exists(p := fs.join(root, name))), fs.join(root, TOKENIZER)
    )
    if (path, eod_piece) not in _CACHE:
        _CACHE.clear()
        _CACHE[path, eod_piece] = load_file(path, eod_piece)
    return _CACHE[path, eod_piece]


def token_dtype(tok: Tokenizer, where: str) -> np.dtype[Any]:
    """The token dtype of the .bin for `tok` (`indexed.choose_dtype`); a vocabulary past int32, the
    widest type Megatron's format has, is a `ConfigError`."""
    if tok.vocab_size > np.iinfo(np.int32).max:
        raise ConfigError(
            f"{where}: a vocabulary of {tok.vocab_size:,} ids does not fit int32, the widest token type of "
            "Megatron's indexed format"
        )
    return indexed.choose_dtype(tok.vocab_size)


class EncodedPart(steps.StepResult):
    """What one shard's step stores: its indexed part's prefix, documents and tokens per source."""

    prefix: str
    documents: dict[str, int]
    tokens: dict[str, int]


def encode_shard(root: str, k: int, shard: str, cfg: TokenizeConfig, eod_piece: str) -> EncodedPart:
    """Encode input shard `k` into the indexed part ``<root>/parts/NNNNN``; returns its counts.

    Memory is one batch of about `encode_batch_bytes` of text (a longer document alone) and its ids,
    4 bytes a token in numpy arrays (never Python lists of ints): flat in the shard and corpus size.
    """
    prefix = fs.join(root, "parts", f"{k:05d}")
    return steps.resumable(
        steps.marker(root, "parts", k),
        EncodedPart,
        lambda: _encode(root, prefix, shard, cfg, eod_piece),
        outputs=[indexed.bin_path(prefix), indexed.idx_path(prefix)],
    )


def _encode(root: str, prefix: str, shard: str, cfg: TokenizeConfig, eod_piece: str) -> EncodedPart:
    tok = _tokenizer(root, eod_piece)
    eod = np.array([tok.eod_id], dtype=np.int32)
    docs: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    with indexed.IndexedWriter(prefix, indexed.choose_dtype(tok.vocab_size)) as writer:
        for texts, sources in text_batches(shard, cfg.encode_batch_bytes, cfg.encode_batch):
            ids = tok.encode_batch(texts, cfg.threads)
            lengths = np.fromiter((len(a) + 1 for a in ids), dtype=np.int64, count=len(ids))
            writer.add_documents(np.concatenate([x for a in ids for x in (a, eod)]), lengths)
            for src, n in zip(sources, lengths.tolist(), strict=True):
                docs[src] += 1
                tokens[src] += n
    return EncodedPart(prefix=prefix, documents=dict(docs), tokens=dict(tokens))


def text_batches(
    shard: str, max_bytes: int, max_docs: int | None = None
) -> Iterator[tuple[list[str], list[str]]]:
    """(texts, sources) of a shard, in order, in batches of at most `max_bytes` of UTF-8 text and
    `max_docs` documents; a document longer than `max_bytes` is a batch of its own.

    Sizes come from Arrow (no Python strings); Parquet is read a few rows at a time, so a batch of
    huge documents is not preceded by a read of thousands of them.
    """
    texts: list[str] = []
    sources: list[str] = []
    size = 0
    for rb in dataset.open_parquet(shard).iter_batches(batch_size=_READ_ROWS, columns=["text", "source"]):
        text, source = rb.column(0), rb.column(1)
        sizes = pc.binary_length(text).to_numpy(zero_copy_only=False).tolist()
        start = 0
        for i, n in enumerate(sizes):
            if (size + n > max_bytes or len(texts) + i - start == max_docs) and (texts or i > start):
                texts += text.slice(start, i - start).to_pylist()
                sources += source.slice(start, i - start).to_pylist()
                yield texts, sources
                texts, sources, size, start = [], [], 0, i
            size += n
        texts += text.slice(start).to_pylist()
        sources += source.slice(start).to_pylist()
    if texts:
        yield texts, sources


def given_tokenizer(cfg: TokenizeConfig) -> Tokenizer | None:
    """The tokenizer `cfg.tokenizer` names, with its end-of-document token; None: one is trained."""
    return load(cfg.tokenizer, cfg.eod_token, cfg.eod_piece) if cfg.tokenizer else None


def prepare_tokenizer(
    inp: str, root: str, m_in: DocumentManifest, cfg: TokenizeConfig, given: Tokenizer | None
) -> Tokenizer:
    """The `given` tokenizer, or a sentencepiece model trained on a seeded sample of `inp`."""
    if given is not None:
        return given
    cached = fs.join(root, TOKENIZER)
    if fs.exists(cached):
        model = fs.read_bytes(cached)
        spm.check_vocab_size(model, cfg)  # trained by a run that allowed a smaller vocabulary
    else:
        shards = [fs.join(inp, s.name) for s in m_in.shards]
        model = spm.train(spm.sample_lines(shards, [s.rows for s in m_in.shards], cfg), cfg)
    return SentencePieceTokenizer.from_bytes(model, cfg.eod_piece)


def run_tokenize(
    inp: str, out: str, cfg: TokenizeConfig, *, mapper: Mapper | None = None, force: bool = False
) -> TokenizeResult:
    mapper = mapper or serial_map
    m_in = dataset.require_documents(inp, "tokenize")
    given = given_tokenizer(cfg)
    # a sentencepiece model's identity is its bytes (fingerprints of earlier versions); a Hugging Face
    # tokenizer's EOD may come from the tokenizer_config.json beside it; a tiktoken encoding's pattern
    # and special tokens are not in its file (`Tokenizer.identity`)
    identity: str | list[str] | None = None
    if given is not None:
        identity = given.sha256 if given.kind == "sentencepiece" else [given.identity, given.eod_piece]
    # batch sizes change speed and memory, never the output (tests check): a new size reuses the output
    # allow_smaller_vocab decides whether a short vocabulary is an error, never what is written
    excluded = ["tokenizer", "encode_batch", "encode_batch_bytes", "allow_smaller_vocab"]
    if cfg.eod_token is None:  # unset changes nothing: outputs written before the option stay reusable
        excluded.append("eod_token")
    settings = fingerprints.settings(cfg, *excluded)
    fp = fingerprints.of([s.sha256 for s in m_in.shards], settings, identity)
    if (done := dataset.open_output(out, fp, force, TokenizeManifest)) is not None:
        return done
    root = fs.join(out, WORK, fp)
    tok = prepare_tokenizer(inp, root, m_in, cfg, given)
    token_dtype(tok, cfg.tokenizer or fs.join(root, TOKENIZER))
    for name, data in tok.files().items():  # the workers load it from here
        fs.atomic_write(fs.join(root, name), data)
    shards = [fs.join(inp, s.name) for s in m_in.shards]
    jobs = [(root, k, p, cfg, tok.eod_piece) for k, p in enumerate(shards)]
    parts = mapper("tokenize-shard", encode_shard, jobs)
    failpoint("tokenize:parts-written")
    merged = indexed.merge([p.prefix for p in parts], fs.join(out, cfg.prefix))
    files = tok.files()
    # a rerun with another kind of tokenizer must not leave the old file
    for name in (*FILES.values(), *EXTRA_FILES):
        if name not in files:
            fs.rm(fs.join(out, name))
    for name, data in files.items():
        fs.atomic_write(fs.join(out, name), data)
    failpoint("tokenize:merged")
    manifest = finalize(out, inp, m_in, parts, merged, tok, cfg, fp)
    result = steps.finish(out, manifest)
    name = plan_check.tokenizer_name(cfg.tokenizer, out, tok.file_name)
    realised = manifest.stats.tokens - manifest.stats.sequences  # a blend counts no EOD
    if warning := plan_check.blend_mismatch(m_in, inp, tok.identity, name, realised):
        print(f"warning: tokenize: {warning}", file=sys.stderr)
    return result


def finalize(
    out: str,
    inp: str,
    m_in: DocumentManifest,
    parts: Sequence[EncodedPart],
    merged: indexed.IndexedStats,
    tok: Tokenizer,
    cfg: TokenizeConfig,
    fp: str,
) -> TokenizeManifest:
    """The manifest of the merged dataset, once every input document is counted in its parts."""
    docs: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    for p in parts:
        docs.update(p.documents)
        tokens.update(p.tokens)
    n_in = sum(s.rows for s in m_in.shards)
    steps.check_accounting("tokenize", {"documents encoded vs input": (sum(docs.values()), n_in)})
    files = []
    for ext in (".bin", ".idx"):
        path = fs.join(out, cfg.prefix + ext)
        digest = (merged.sha256 or {}).get(ext[1:]) or fs.sha256_file(path)  # merge hashes as it writes
        files.append(FileEntry(name=cfg.prefix + ext, bytes=fs.size(path), sha256=digest))
    return TokenizeManifest(
        **steps.header(fp, cfg, files, None),
        inputs=DatasetInputs(dataset=inp, fingerprint=m_in.fingerprint),
        prefix=cfg.prefix,
        tokenizer=TokenizerInfo(
            kind=tok.kind,
            file=tok.file_name,
            sha256=tok.sha256,
            vocab_size=tok.vocab_size,
            vocab_size_requested=None if cfg.tokenizer else cfg.vocab_size,
            eod_id=tok.eod_id,
            eod_piece=tok.eod_piece,
            trained=cfg.tokenizer is None,
            tiktoken=TiktokenInfo(**tok.spec.to_json()) if isinstance(tok, TiktokenTokenizer) else None,
        ),
        dtype=str(indexed.choose_dtype(tok.vocab_size)),
        stats=TokenizeStats(
            documents_in=n_in,
            documents_out=n_in,
            documents_removed=0,
            sequences=merged.sequences,
            tokens=int(sum(tokens.values())),
            per_source={
                s: SourceStats(documents_in=docs[s], kept=docs[s], removed={}, tokens=tokens[s])
                for s in sorted(docs)
            },
        ),
    )
