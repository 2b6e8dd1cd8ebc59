"""sentencepiece: train a tokenizer on a seeded sample of a document dataset, or load a given one.

Training settings keep every byte of the text recoverable: identity normalisation (no NFKC, the
cleaning stage already normalised), no whitespace collapsing, byte fallback for unseen characters,
newline and tab as pieces of their own, digits split. ``decode(encode(text)) == text`` then holds for
any text without sentencepiece's own meta symbol U+2581 ("▁"), which decodes as a space.
The end-of-document token is sentencepiece's ``eos`` control symbol (`eod_piece`); there is no BOS.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import sys
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm

from selene.errors import ConfigError, InputError
from selene.io import dataset, fs
from selene.tokenize.config import TokenizeConfig

_EXTRA_PIECES = ["\n", "\t"]
_NUMPY_OUT = hasattr(spm.SentencePieceProcessor, "EncodeAsNumpy")  # out_type="numpy" (0.2.1+)


def load(path: str, eod_piece: str) -> spm.SentencePieceProcessor:
    """A sentencepiece model from `path`, checked to have the end-of-document piece."""
    sp = load_processor(path)
    if eod_piece_id(sp, eod_piece) < 0:
        raise ConfigError(
            f"{path}: the tokenizer has no piece {eod_piece!r} to end documents with (tokenize.eod_piece)"
        )
    return sp


def load_processor(path: str) -> spm.SentencePieceProcessor:
    """A sentencepiece model from `path` (`InputError` naming it when it is missing or not one)."""
    if not fs.exists(path):
        raise InputError(f"tokenizer {path!r} does not exist")
    sp = spm.SentencePieceProcessor()
    try:
        sp.load_from_serialized_proto(fs.read_bytes(path))
    except (RuntimeError, OSError) as e:
        raise InputError(f"{path}: not a sentencepiece model ({e})") from None
    return sp


def encode(sp: spm.SentencePieceProcessor, texts: list[str], threads: int) -> list[np.ndarray]:
    """Token ids of each text as int32 arrays, batched in sentencepiece's C++ (`threads` threads).

    sentencepiece >= 0.2.1 hands over raw int32 buffers (4 bytes a token); older versions give Python
    lists of ints (about 36 bytes a token) that are converted one text at a time.
    """
    if _NUMPY_OUT:
        return list(sp.encode(texts, out_type="numpy", num_threads=threads))
    return [np.array(ids, dtype=np.int32) for ids in sp.encode(texts, out_type=int, num_threads=threads)]


def eod_piece_id(sp: spm.SentencePieceProcessor, piece: str) -> int:
    """Id of the end-of-document piece; -1 when the model does not have it."""
    pid = sp.piece_to_id(piece)
    return -1 if pid == sp.unk_id() and piece != sp.id_to_piece(sp.unk_id()) else int(pid)


def sample_lines(shards: list[str], rows: list[int], cfg: TokenizeConfig) -> Iterator[str]:
    """Lines of a seeded random sample of documents, for training (sentencepiece learns on lines).

    `sample_docs` documents are drawn with the seed. When their text is more than `sample_bytes`
    (UTF-8), a seeded random subset of them that fits is kept instead: sentencepiece holds its whole
    sample in memory (measured: up to ~9.5 bytes per byte of text), so this cap, not the corpus, sets
    training memory. Stopping at the first `sample_bytes` in corpus order would see only the first
    sources of a blend. Lines come in corpus order and stop after `sample_chars` characters.
    ``sample_bytes: null`` gives the sample of selene <= 0.2.3 (the first `sample_chars` characters of
    the drawn documents, in corpus order). Memory here: the drawn indices and one shard's text.
    """
    total = sum(rows)
    rng = np.random.default_rng(cfg.seed)
    take = np.sort(rng.choice(total, size=min(cfg.sample_docs, total), replace=False))
    offsets = np.concatenate([[0], np.cumsum(rows)])
    if cfg.sample_bytes is not None:
        take = _fit_bytes(shards, take, offsets, cfg.sample_bytes, rng)
    bounds = np.searchsorted(take, offsets)  # shard k holds take[bounds[k]:bounds[k + 1]]
    chars = cfg.sample_chars
    nbytes = cfg.sample_bytes
    for k, path in enumerate(shards):
        mine = take[bounds[k] : bounds[k + 1]] - offsets[k]
        if not mine.size:
            continue
        for text in _texts(path, mine).to_pylist():
            for line in text.split("\n"):
                if line.strip():
                    line = line[: cfg.max_sentence_length]
                    chars -= len(line)
                    if nbytes is not None:
                        nbytes -= len(line.encode())
                    yield line
                if chars <= 0 or (nbytes is not None and nbytes <= 0):
                    return


def _texts(path: str, rows: np.ndarray) -> pa.Array:
    """The text of `rows` (sorted) of one shard; only that shard's text column is read."""
    return dataset.open_parquet(path).read(columns=["text"]).column("text").take(pa.array(rows))


def _fit_bytes(
    shards: list[str], take: np.ndarray, offsets: np.ndarray, cap: int, rng: np.random.Generator
) -> np.ndarray:
    """The drawn documents `take` (global, sorted), or a seeded random subset of at most `cap` bytes.

    One pass over the shards holding drawn documents reads their UTF-8 lengths (Arrow computes them;
    no Python strings), then documents are taken in a seeded random order, each one that still fits.
    """
    bounds = np.searchsorted(take, offsets)
    sizes = np.zeros(len(take), dtype=np.int64)
    for k, path in enumerate(shards):
        if bounds[k + 1] > bounds[k]:
            texts = _texts(path, take[bounds[k] : bounds[k + 1]] - offsets[k])
            sizes[bounds[k] : bounds[k + 1]] = pc.binary_length(texts).to_numpy(zero_copy_only=False)
    if int(sizes.sum()) <= cap:
        return take
    chosen, used = [], 0
    for i in rng.permutation(len(take)).tolist():
        if used + int(sizes[i]) <= cap:
            chosen.append(i)
            used += int(sizes[i])
    if not chosen:  # every drawn document alone is over the cap: the line budget cuts the first one
        chosen = [int(np.argmin(sizes))]
    return np.sort(take[chosen])


class _Lines:
    """The training lines, keeping the error that stopped them: sentencepiece turns an exception
    raised by its sentence iterator into a RuntimeError of its own ("INTERNAL: ..."), which would
    read as a training failure (a corrupt shard is not a vocabulary problem)."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[str]:
        try:
            yield from self._lines
        except BaseException as e:
            self.error = e
            raise


def train(lines: Iterator[str], cfg: TokenizeConfig) -> bytes:
    """Train on `lines`; returns the serialized model (the same bytes for the same lines and config).

    sentencepiece stops short of `vocab_size` when the sample supports no more pieces; that is a
    `ConfigError` naming both sizes unless `allow_smaller_vocab` accepts it (the manifest records the
    size the model has)."""
    model = io.BytesIO()
    source = _Lines(lines)
    spm.set_random_generator_seed(cfg.seed)
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(source),
            model_writer=model,
            vocab_size=cfg.vocab_size,
            model_type=cfg.model_type,
            character_coverage=cfg.character_coverage,
            byte_fallback=cfg.byte_fallback,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            split_digits=True,
            allow_whitespace_only_pieces=True,
            user_defined_symbols=_EXTRA_PIECES,
            unk_id=0,
            eos_id=1,
            bos_id=-1,
            pad_id=-1,
            eos_piece=cfg.eod_piece,
            max_sentence_length=cfg.max_sentence_length,
            # a sample may support fewer pieces: train what it does, then say so below (the most it supports)
            hard_vocab_limit=False,
            num_threads=cfg.threads,
            minloglevel=2,
        )
    except RuntimeError as e:
        if source.error is not None:
            raise source.error from None
        raise ConfigError(
            f"sentencepiece training failed: {e} (check tokenize.vocab_size and the sample size)"
        ) from None
    finally:
        _trim_heap()
    if source.error is not None:  # sentencepiece ignored it: never train on a silently shortened sample
        raise source.error
    data = model.getvalue()
    check_vocab_size(data, cfg)
    return data


def check_vocab_size(model: bytes, cfg: TokenizeConfig) -> int:
    """Pieces in the trained `model`; a `ConfigError` when fewer than `cfg.vocab_size` were asked
    for and `cfg.allow_smaller_vocab` is off."""
    sp = spm.SentencePieceProcessor()
    sp.load_from_serialized_proto(model)
    have = int(sp.vocab_size())
    if have < cfg.vocab_size and not cfg.allow_smaller_vocab:
        raise ConfigError(
            f"tokenize.vocab_size: {cfg.vocab_size:,} pieces requested, but the training sample supports at "
            f"most {have:,}. Set --vocab-size {have} or less, train on more text (tokenize.sample_docs, "
            "sample_bytes, sample_chars), or accept the smaller vocabulary with --allow-smaller-vocab "
            "(tokenize.allow_smaller_vocab: true)"
        )
    return have


def _trim_heap() -> None:
    """Hand the C heap's free pages back to the OS (glibc; elsewhere a no-op).

    sentencepiece frees its sample after training, but glibc keeps most of the pages (measured: 513 of
    a 682 MiB peak with a 100 MB sample of repetitive text), and the encoder that runs next in this process would sit on
    them for the whole stage: with the trim it starts from about 170 MiB.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
