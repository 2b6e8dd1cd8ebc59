"""The tokenize stage: trained tokenizer, Megatron byte layout read independently, exact round trip."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm

from selene.config import TokenizeConfig
from selene.errors import ConfigError, InputError
from selene.tokenize.stage import run_tokenize
from tests.corpus import PROSE, write_dataset

DTYPES = {4: np.int32, 8: np.uint16}


def read_megatron(prefix: str) -> tuple[np.dtype, list[np.ndarray], np.ndarray]:
    """Megatron-LM's MMIDIDX layout, read with struct straight from its definition (no selene code)."""
    with open(prefix + ".idx", "rb") as f:
        assert f.read(9) == b"MMIDIDX\x00\x00"
        (version,) = struct.unpack("<Q", f.read(8))
        (code,) = struct.unpack("<B", f.read(1))
        (n_seq,) = struct.unpack("<Q", f.read(8))
        (n_doc,) = struct.unpack("<Q", f.read(8))
        lengths = np.frombuffer(f.read(4 * n_seq), dtype="<i4")
        pointers = np.frombuffer(f.read(8 * n_seq), dtype="<i8")
        doc_idx = np.frombuffer(f.read(8 * n_doc), dtype="<i8")
        assert f.read() == b""
    assert version == 1 and n_doc == n_seq + 1
    dtype = np.dtype(DTYPES[code])
    data = Path(prefix + ".bin").read_bytes()
    seqs = [np.frombuffer(data, dtype=dtype, count=int(n), offset=int(p)) for n, p in zip(lengths, pointers, strict=True)]
    assert int(pointers[-1]) + int(lengths[-1]) * dtype.itemsize == len(data)
    return dtype, seqs, doc_idx


@pytest.fixture(scope="module")
def texts() -> list[str]:
    extra = ["Unicode: café, naïve, 東京, emoji 🙂, tabs\tand\nnewlines\n\n  indented", "", "x"]
    return [*PROSE[:60], *extra]


@pytest.fixture(scope="module")
def tokenized(texts, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("tok")
    inp = write_dataset(str(root / "in"), [(f"d{i}", t) for i, t in enumerate(texts)], shard_docs=25)
    cfg = TokenizeConfig(vocab_size=800, sample_docs=200)
    return run_tokenize(inp, str(root / "out"), cfg), cfg


def test_megatron_layout_and_round_trip(texts, tokenized) -> None:  # type: ignore[no-untyped-def]
    res, cfg = tokenized
    m = res.manifest
    dtype, seqs, doc_idx = read_megatron(f"{res.out}/{cfg.prefix}")
    assert dtype == np.uint16 and m.dtype == "uint16"
    assert list(doc_idx) == list(range(len(texts) + 1))  # one document per sequence
    sp = spm.SentencePieceProcessor(model_file=f"{res.out}/tokenizer.model")
    eod = m.tokenizer.eod_id
    assert sp.id_to_piece(eod) == "</s>"
    for text, seq in zip(texts, seqs, strict=True):
        assert seq[-1] == eod and eod not in seq[:-1]
        assert sp.decode(seq[:-1].tolist()) == text
    assert m.stats.tokens == sum(len(s) for s in seqs) == m.stats.per_source["s"].tokens


def test_same_input_same_bytes_and_skip(texts, tokenized, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res, cfg = tokenized
    assert run_tokenize(res.manifest.inputs.dataset, res.out, cfg).skipped
    again = run_tokenize(res.manifest.inputs.dataset, str(tmp_path / "again"), cfg)
    assert again.manifest.shards == res.manifest.shards
    assert again.manifest.tokenizer.sha256 == res.manifest.tokenizer.sha256


def test_given_tokenizer_gives_the_same_tokens(tokenized, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res, _ = tokenized
    inp = res.manifest.inputs.dataset
    given = run_tokenize(inp, str(tmp_path / "given"), TokenizeConfig(tokenizer=f"{res.out}/tokenizer.model"))
    assert given.manifest.shards == res.manifest.shards and not given.manifest.tokenizer.trained


def test_bad_tokenizer_inputs(tokenized, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res, _ = tokenized
    inp = res.manifest.inputs.dataset
    junk = tmp_path / "junk.model"
    junk.write_bytes(b"not a model")
    with pytest.raises(InputError, match="not a sentencepiece model"):
        run_tokenize(inp, str(tmp_path / "o"), TokenizeConfig(tokenizer=str(junk)))
    with pytest.raises(ConfigError, match="no piece '<eod>'"):
        run_tokenize(inp, str(tmp_path / "o"), TokenizeConfig(tokenizer=f"{res.out}/tokenizer.model", eod_piece="<eod>"))
    with pytest.raises(InputError, match="empty dataset"):
        run_tokenize(write_dataset(str(tmp_path / "e"), []), str(tmp_path / "o"), TokenizeConfig())
