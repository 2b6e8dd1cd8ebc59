"""A Hugging Face tokenizer.json end to end: tokenize, train, evaluate, export; and its bad inputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selene.errors import ConfigError, PathError
from selene.executor import mappers
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.indexed import IndexedDataset
from selene.tokenize.stage import run_tokenize, token_dtype
from selene.tokenize.tokenizer import load
from tests.corpus import write_dataset
from tests.tiny_checkpoint import corpus_docs, corpus_lines, train_checkpoint

EOS = "<|endoftext|>"
TEXTS = ["Hello world", "tabs\tand\nnewlines\n\n", "émoji 🎉 and 12345, Ünïcödé 中文", "", " ", "a <|endoftext|> inside"]


def train_bpe(lines: list[str], vocab_size: int = 400) -> Any:
    """A byte-level BPE (GPT-2's kind) with `EOS` as its only special token, trained offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[EOS], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(lines, trainer)
    return tok


@pytest.fixture(scope="module")
def bpe(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    tok = train_bpe(corpus_lines(800))
    path = str(tmp_path_factory.mktemp("bpe") / "tokenizer.json")
    tok.save(path)
    return tok, path


@pytest.fixture(scope="module")
def tokenized(bpe: tuple[Any, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    root = tmp_path_factory.mktemp("hf_tok")
    docs = TEXTS + corpus_docs(40)
    inp = write_dataset(str(root / "in"), [(f"d{i}", t) for i, t in enumerate(docs)], shard_docs=10)
    res = run_tokenize(inp, str(root / "out"), TokenizeConfig(tokenizer=bpe[1]))
    assert res.manifest is not None
    return f"{res.out}/{res.manifest.prefix}", docs


def test_ids_are_the_libraries_own_plus_eos(bpe: tuple[Any, str], tokenized: tuple[str, list[str]]) -> None:
    tok, path = bpe
    prefix, docs = tokenized
    out = Path(prefix).parent
    m = json.loads((out / "manifest.json").read_text())["tokenizer"]
    eod = tok.token_to_id(EOS)
    assert (m["kind"], m["file"], m["eod_piece"], m["eod_id"]) == ("huggingface", "tokenizer.json", EOS, eod)
    assert (out / "tokenizer.json").read_bytes() == Path(path).read_bytes()
    assert not (out / "tokenizer.model").exists()
    data = IndexedDataset(prefix)
    assert data.dtype == np.uint16
    for i, text in enumerate(docs):
        assert data[i].tolist() == [*tok.encode(text, add_special_tokens=False).ids, eod], text


def test_any_worker_count_gives_the_same_bytes(
    bpe: tuple[Any, str], tokenized: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, _ = tokenized
    monkeypatch.setattr(mappers, "INLINE_SECONDS", 0.0)
    cfg = TokenizeConfig(tokenizer=bpe[1], encode_batch_bytes=300, threads=2)
    inp = str(Path(prefix).parent.parent / "in")
    again = run_tokenize(inp, str(tmp_path / "out"), cfg, mapper=mappers.LocalMapper("threads", 3))
    for ext in (".bin", ".idx"):
        assert Path(f"{again.out}/{cfg.prefix}{ext}").read_bytes() == Path(prefix + ext).read_bytes()


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_train_evaluate_and_export(bpe: tuple[Any, str], tokenized: tuple[str, list[str]], tmp_path: Path) -> None:
    from transformers import AutoTokenizer, LlamaForCausalLM

    from selene.eval.checkpoint_io import tokenizer
    from selene.eval.export import export_hf
    from selene.eval.lm import SeleneLM

    tok, _ = bpe
    prefix, _ = tokenized
    ckpt = train_checkpoint(tmp_path / "train", prefix, 2)
    assert (tmp_path / "train" / "tokenizer.json").exists()
    ours = tokenizer(ckpt)
    assert ours.kind == "huggingface" and ours.eod_id == tok.token_to_id(EOS)
    lm = SeleneLM(ckpt, device="cpu")
    assert lm.eot_token_id == tok.token_to_id(EOS)
    assert lm.tok_encode("Hello world") == tok.encode("Hello world", add_special_tokens=False).ids

    out = str(tmp_path / "hf")
    summary = export_hf(ckpt, out)
    assert summary["eos_token_id"] == tok.token_to_id(EOS) and "tokenizer.json" in summary["files"]
    hf = AutoTokenizer.from_pretrained(out)
    assert hf.eos_token == EOS
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert hf.encode(text) == ids, text
        assert hf.decode(ids) == tok.decode(ids, skip_special_tokens=False), text
    assert LlamaForCausalLM.from_pretrained(out).config.eos_token_id == tok.token_to_id(EOS)


def test_bad_tokenizers_are_refused_naming_the_file(bpe: tuple[Any, str], tmp_path: Path) -> None:
    broken = tmp_path / "broken" / "tokenizer.json"
    broken.parent.mkdir()
    broken.write_text('{"model": {"type": "nothing"}}')
    with pytest.raises(PathError, match=re.escape(f"{broken}: not a Hugging Face tokenizer.json")):
        load(str(broken))
    with pytest.raises(ConfigError, match=re.escape(f"{bpe[1]}: the tokenizer has no token '<eod>'")):
        load(bpe[1], "<eod>")
    bare = tmp_path / "bare.json"
    bare.write_text(train_bpe(["no special tokens here"], 300).to_str().replace(EOS, "<|x|>"))
    with pytest.raises(ConfigError, match=re.escape(f"{bare}: no end-of-document token found") + ".*tokenize.eod_token"):
        load(str(bare))
    # a directory's tokenizer_config.json names the EOS
    (tmp_path / "tokenizer.json").write_bytes(Path(bpe[1]).read_bytes())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": {"content": "<|x|>"}}))
    with pytest.raises(ConfigError, match=re.escape("eos_token '<|x|>'")):
        load(str(tmp_path))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": EOS}))
    assert load(str(tmp_path)).eod_id == bpe[0].token_to_id(EOS)


def test_large_vocabularies_get_int32_and_past_int32_is_refused(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {EOS: 0, **{f"w{i}": i + 1 for i in range(70_000)}}
    big = Tokenizer(models.WordLevel(vocab, unk_token=EOS))
    big.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    big.save(str(tmp_path / "tokenizer.json"))
    inp = write_dataset(str(tmp_path / "in"), [("a", "w69999 w7"), ("b", "w65535")])
    res = run_tokenize(inp, str(tmp_path / "out"), TokenizeConfig(tokenizer=str(tmp_path / "tokenizer.json")))
    assert res.manifest is not None and res.manifest.dtype == "int32"
    data = IndexedDataset(f"{res.out}/{res.manifest.prefix}")
    assert data.dtype == np.int32 and [data[0].tolist(), data[1].tolist()] == [[70_000, 8, 0], [65_536, 0]]
    tok = load(str(tmp_path / "tokenizer.json"))
    tok.vocab_size = 2**31
    with pytest.raises(ConfigError, match="2,147,483,648 ids does not fit int32"):
        token_dtype(tok, "x")
