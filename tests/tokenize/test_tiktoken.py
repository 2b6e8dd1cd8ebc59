"""A tiktoken encoding end to end: ids equal tiktoken's own, through the tokenize stage on any number
of workers, the EOD and dtype, tiktoken's published definitions read without a download, the cache
and its refusals, bad files named, and the Hugging Face export giving the same ids."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tiktoken

from selene.errors import ConfigError, PathError
from selene.executor import mappers
from selene.tokenize import tiktoken_encodings as tk
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.indexed import IndexedDataset, choose_dtype
from selene.tokenize.stage import run_tokenize, token_dtype
from selene.tokenize.tokenizer import TiktokenTokenizer, load, load_file
from tests.corpus import write_dataset
from tests.tiny_checkpoint import corpus_docs, corpus_lines
from tests.tokenize.tiktoken_files import EOS, PATTERN, learn_ranks, tiktoken_bytes, write_encoding

TEXTS = [
    "Hello world 1234567, don't DON'T",
    "tabs\tand\nnewlines\n\n\r\n  trailing   ",
    "émoji 🎉 and 12345, Ünïcödé 中文 a\u00a0b\u3000c",
    "",
    " ",
    "a <|endoftext|> inside stays text",
]


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    return learn_ranks(corpus_lines(300), 300)


@pytest.fixture(scope="module")
def encoding(ranks: dict[bytes, int], tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_encoding(tmp_path_factory.mktemp("tiny") / "tiny.tiktoken", ranks)


@pytest.fixture(scope="module")
def reference(ranks: dict[bytes, int]) -> Any:
    """tiktoken's own Encoding of the same ranks, pattern and special token."""
    return tiktoken.Encoding("tiny", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={EOS: len(ranks)})


@pytest.fixture(scope="module")
def tokenized(encoding: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    root = tmp_path_factory.mktemp("tik_tok")
    docs = TEXTS + corpus_docs(40)
    inp = write_dataset(str(root / "in"), [(f"d{i}", t) for i, t in enumerate(docs)], shard_docs=10)
    res = run_tokenize(inp, str(root / "out"), TokenizeConfig(tokenizer=encoding))
    assert res.manifest is not None
    return f"{res.out}/{res.manifest.prefix}", docs


def test_ids_are_tiktokens_own(encoding: str, reference: Any) -> None:
    tok = load(encoding)
    assert isinstance(tok, TiktokenTokenizer) and tok.kind == "tiktoken"
    assert (tok.eod_piece, tok.eod_id, tok.vocab_size) == (EOS, reference.eot_token, reference.n_vocab)
    texts = TEXTS + corpus_docs(60)
    want = [reference.encode_ordinary(t) for t in texts]
    assert [tok.encode(t) for t in texts] == want
    for threads in (1, 3):
        got = tok.encode_batch(texts, threads)
        assert all(a.dtype == np.int32 for a in got)
        assert [a.tolist() for a in got] == want
    assert tok.decode(want[2]) == TEXTS[2]


def test_tokenize_stage_writes_the_encoding_and_its_ids(
    encoding: str, reference: Any, tokenized: tuple[str, list[str]]
) -> None:
    prefix, docs = tokenized
    out = Path(prefix).parent
    m = json.loads((out / "manifest.json").read_text())["tokenizer"]
    assert (m["kind"], m["file"], m["eod_piece"], m["eod_id"]) == (
        "tiktoken",
        "tokenizer.tiktoken",
        EOS,
        len(reference._mergeable_ranks),
    )
    assert m["tiktoken"] == {"name": "tiny", "pat_str": PATTERN, "special_tokens": {EOS: reference.eot_token}}
    # the ranks unchanged (sha256 in the manifest), the pattern beside them; no other kind's file
    assert (out / "tokenizer.tiktoken").read_bytes() == Path(encoding).read_bytes()
    assert m["sha256"] == hashlib.sha256(Path(encoding).read_bytes()).hexdigest()
    assert json.loads((out / "tokenizer.tiktoken.json").read_text())["pat_str"] == PATTERN
    assert not (out / "tokenizer.model").exists() and not (out / "tokenizer.json").exists()
    data = IndexedDataset(prefix)
    assert data.dtype == np.uint16
    for i, text in enumerate(docs):
        assert data[i].tolist() == [*reference.encode_ordinary(text), reference.eot_token], text
    # what training, eval and export load: the copied file with the manifest's pattern, or its .json alone
    spec = tk.Spec.from_json(m["tiktoken"], "manifest")
    for again in (
        load_file(str(out / "tokenizer.tiktoken"), EOS, spec),
        load_file(str(out / "tokenizer.tiktoken"), None),
    ):
        assert again.identity == load(encoding).identity and again.encode(
            docs[0]
        ) == reference.encode_ordinary(docs[0])


def test_one_or_two_workers_give_the_same_bytes(
    encoding: str, tokenized: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, _ = tokenized
    monkeypatch.setattr(mappers, "INLINE_SECONDS", 0.0)
    inp = str(Path(prefix).parent.parent / "in")
    cfg = TokenizeConfig(tokenizer=encoding, encode_batch_bytes=300, threads=2)
    again = run_tokenize(inp, str(tmp_path / "out"), cfg, mapper=mappers.LocalMapper("processes", 2))
    for ext in (".bin", ".idx"):
        assert Path(f"{again.out}/{cfg.prefix}{ext}").read_bytes() == Path(prefix + ext).read_bytes()


def test_a_large_special_id_gives_int32(ranks: dict[bytes, int], tmp_path: Path) -> None:
    path = write_encoding(tmp_path / "big.tiktoken", ranks, {EOS: 70_000, "<|pad|>": 69_000})
    tok = load(path)
    assert (tok.vocab_size, tok.eod_id) == (70_001, 70_000)
    assert token_dtype(tok, path) == np.int32 and choose_dtype(65_499) == np.uint16
    inp = write_dataset(str(tmp_path / "in"), [("a", "hello"), ("b", "")])
    res = run_tokenize(inp, str(tmp_path / "out"), TokenizeConfig(tokenizer=path))
    assert res.manifest is not None and res.manifest.dtype == "int32"
    data = IndexedDataset(f"{res.out}/{res.manifest.prefix}")
    assert data.dtype == np.int32 and data[1].tolist() == [70_000] and data[0].tolist()[-1] == 70_000
    # another special token named as the EOD
    assert load(path, "<|pad|>").eod_id == 69_000


def test_published_definitions_come_from_tiktoken_without_a_download() -> None:
    import tiktoken.load

    reader = tiktoken.load.read_file
    known = tk.published()
    assert tiktoken.load.read_file is reader  # the loaders swapped for the definitions are put back
    assert {"gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"} <= set(known)
    cl100k = known["cl100k_base"]
    assert cl100k.spec.special_tokens[EOS] == 100_257 and cl100k.spec.pat_str == PATTERN
    assert cl100k.tiktoken_sha256 == "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    assert known["o200k_base"].spec.special_tokens[EOS] == 199_999
    assert known["gpt2"].spec.pat_str == known["r50k_base"].spec.pat_str


def _as_published(monkeypatch: pytest.MonkeyPatch, data: bytes) -> str:
    """Make the tiny encoding look like one of tiktoken's published ones (name "tiny", its url and sha256)."""
    url = "https://example.invalid/encodings/tiny.tiktoken"
    spec = tk.Spec("tiny", PATTERN, {EOS: 9_999})
    fake = {"tiny": tk.Published(spec, ((url, hashlib.sha256(data).hexdigest()),))}
    monkeypatch.setattr(tk, "published", lambda: fake)
    return url


def test_cache_and_published_names(
    ranks: dict[bytes, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tiktoken_bytes(ranks)
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    with pytest.raises(
        ConfigError, match=r"tiktoken:cl100k_base: the encoding is not in tiktoken's cache .*never downloads"
    ):
        load("tiktoken:cl100k_base")
    with pytest.raises(ConfigError, match=r"tiktoken:nope: not a tiktoken encoding; known: .*cl100k_base"):
        load("tiktoken:nope")
    url = _as_published(monkeypatch, data)
    with pytest.raises(ConfigError, match=re.escape(str(cache / hashlib.sha1(url.encode()).hexdigest()))):
        load("tiktoken:tiny")
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    tok = load("tiktoken:tiny")
    assert (tok.eod_id, tok.data, tok.vocab_size) == (9_999, data, 10_000)
    # a damaged cache entry is not used
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data[:-10])
    with pytest.raises(ConfigError, match="not in tiktoken's cache"):
        load("tiktoken:tiny")
    # a published encoding's file: by its name, or by its content under any name (no .json needed)
    (tmp_path / "tiny.tiktoken").write_bytes(data)
    (tmp_path / "copy.tiktoken").write_bytes(data)
    assert (
        load(str(tmp_path / "tiny.tiktoken")).eod_id == load(str(tmp_path / "copy.tiktoken")).eod_id == 9_999
    )
    (tmp_path / "tiny.tiktoken").write_bytes(data + b"\n" + data.splitlines()[-1])
    with pytest.raises(PathError, match=r"tiny.tiktoken: named like tiktoken's tiny but its sha256 is"):
        load(str(tmp_path / "tiny.tiktoken"))


def test_bad_files_are_refused_naming_the_file(
    encoding: str, ranks: dict[bytes, int], tmp_path: Path
) -> None:
    missing = tmp_path / "missing.tiktoken"
    with pytest.raises(PathError, match=re.escape(f"tokenizer {str(missing)!r} does not exist")):
        load(str(missing))
    corrupt = tmp_path / "corrupt.tiktoken"
    corrupt.write_bytes(tiktoken_bytes(ranks) + b"not-base64!! 5000\n")
    Path(f"{corrupt}.json").write_text(Path(f"{encoding}.json").read_text())
    with pytest.raises(PathError, match=re.escape(f"{corrupt}: line {len(ranks) + 1} ('not-base64!! 5000')")):
        load(str(corrupt))
    corrupt.write_bytes(tiktoken_bytes({t: r for t, r in ranks.items() if t != b"A"}))
    with pytest.raises(
        PathError, match=re.escape(f"{corrupt}: 1 of the 256 single-byte tokens are missing (first: 0x41)")
    ):
        load(str(corrupt))
    Path(f"{corrupt}.json").write_text('{"pat_str": 3}')
    with pytest.raises(PathError, match=re.escape(f"{corrupt}.json: 'pat_str' must be")):
        load(str(corrupt))
    bare = tmp_path / "bare.tiktoken"
    bare.write_bytes(tiktoken_bytes(ranks))
    with pytest.raises(
        ConfigError,
        match=re.escape(f"{bare}: not one of tiktoken's published encodings")
        + ".*"
        + re.escape(f"{bare}.json"),
    ):
        load(str(bare))
    with pytest.raises(
        ConfigError, match=re.escape(f"{encoding}: the encoding has no special token '<eod>'")
    ):
        load(encoding, "<eod>")


def test_hf_export_gives_tiktokens_ids(encoding: str, reference: Any, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from selene.eval.export import hf_tokenizer_of

    tok = load(encoding)
    hf_tokenizer_of(tok, encoding, tok.eod_piece).save_pretrained(str(tmp_path / "hf"))
    hf = AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    assert (hf.eos_token, hf.eos_token_id) == (EOS, reference.eot_token)
    for text in TEXTS + corpus_docs(60):
        ids = reference.encode_ordinary(text)
        assert hf.encode(text) == ids, text
        assert hf.decode(ids) == reference.decode(ids), text
