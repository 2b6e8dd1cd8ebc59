"""sentencepiece: train a tokenizer on a seeded sample of a document dataset, or load a given one.

Training settings keep every byte of the text recoverable: identity normalisation (no NFKC, the
cleaning stage already normalised), no whitespace collapsing, byte fallback for unseen characters,
newline and tab as pieces of their own, digits split. ``decode(encode(text)) == text`` then holds for
any text without sentencepiece's own meta symbol U+2581 ("▁"), which decodes as a space.
The end-of-document token is sentencepiece's ``eos`` control symbol (`eod_piece`); there is no BOS.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import sentencepiece as spm

from selene.config import TokenizeConfig
from selene.errors import ConfigError, InputError
from selene.io import dataset, fs

_EXTRA_PIECES = ["\n", "\t"]


def load(path: str, eod_piece: str) -> spm.SentencePieceProcessor:
    """A sentencepiece model from `path`, checked to have the end-of-document piece."""
    if not fs.exists(path):
        raise InputError(f"tokenizer {path!r} does not exist")
    sp = spm.SentencePieceProcessor()
    try:
        sp.load_from_serialized_proto(fs.read_bytes(path))
    except (RuntimeError, OSError) as e:
        raise InputError(f"{path}: not a sentencepiece model ({e})") from None
    if eod_piece_id(sp, eod_piece) < 0:
        raise ConfigError(f"{path}: the tokenizer has no piece {eod_piece!r} to end documents with (tokenize.eod_piece)")
    return sp


def eod_piece_id(sp: spm.SentencePieceProcessor, piece: str) -> int:
    """Id of the end-of-document piece; -1 when the model does not have it."""
    pid = sp.piece_to_id(piece)
    return -1 if pid == sp.unk_id() and piece != sp.id_to_piece(sp.unk_id()) else int(pid)


def sample_lines(shards: list[str], rows: list[int], cfg: TokenizeConfig) -> Iterator[str]:
    """Lines of a seeded random sample of documents, for training (sentencepiece learns on lines)."""
    total = sum(rows)
    rng = np.random.default_rng(cfg.seed)
    take = np.sort(rng.choice(total, size=min(cfg.sample_docs, total), replace=False))
    offsets = np.concatenate([[0], np.cumsum(rows)])
    budget = cfg.sample_chars
    for k, path in enumerate(shards):
        mine = take[(take >= offsets[k]) & (take < offsets[k + 1])] - offsets[k]
        if not mine.size:
            continue
        texts = dataset.open_parquet(path).read(columns=["text"]).column("text").take(pa.array(mine))
        for text in texts.to_pylist():
            for line in text.split("\n"):
                if line.strip():
                    line = line[: cfg.max_sentence_length]
                    budget -= len(line)
                    yield line
                if budget <= 0:
                    return


def train(lines: Iterator[str], cfg: TokenizeConfig) -> bytes:
    """Train on `lines`; returns the serialized model (the same bytes for the same lines and config)."""
    model = io.BytesIO()
    spm.set_random_generator_seed(cfg.seed)
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=lines,
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
            hard_vocab_limit=False,  # a small sample may not support vocab_size pieces: take what it does
            num_threads=cfg.threads,
            minloglevel=2,
        )
    except RuntimeError as e:
        raise ConfigError(f"sentencepiece training failed: {e} (check tokenize.vocab_size and the sample size)") from None
    return model.getvalue()
