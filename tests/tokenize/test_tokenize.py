"""The tokenize stage: trained tokenizer, Megatron byte layout read independently, exact round trip."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import sentencepiece as spm

from selene.errors import ConfigError, PathError
from selene.tokenize import spm as spm_mod
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.spm import sample_lines
from selene.tokenize.stage import run_tokenize, text_batches
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
    seqs = [
        np.frombuffer(data, dtype=dtype, count=int(n), offset=int(p))
        for n, p in zip(lengths, pointers, strict=True)
    ]
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
    with pytest.raises(PathError, match="not a sentencepiece model"):
        run_tokenize(inp, str(tmp_path / "o"), TokenizeConfig(tokenizer=str(junk)))
    with pytest.raises(ConfigError, match="no piece '<eod>'"):
        run_tokenize(
            inp,
            str(tmp_path / "o"),
            TokenizeConfig(tokenizer=f"{res.out}/tokenizer.model", eod_piece="<eod>"),
        )
    with pytest.raises(PathError, match="empty dataset"):
        run_tokenize(write_dataset(str(tmp_path / "e"), []), str(tmp_path / "o"), TokenizeConfig())


def test_byte_sized_batches_give_the_bytes_of_one_big_batch(tokenized, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    res, _ = tokenized
    inp, model = res.manifest.inputs.dataset, f"{res.out}/tokenizer.model"
    one = run_tokenize(
        inp, str(tmp_path / "one"), TokenizeConfig(tokenizer=model, encode_batch_bytes=1 << 30)
    )
    assert one.manifest.shards == res.manifest.shards
    for i, kw in enumerate([{"encode_batch_bytes": 1}, {"encode_batch_bytes": 3000}, {"encode_batch": 2}]):
        small = run_tokenize(inp, str(tmp_path / f"small{i}"), TokenizeConfig(tokenizer=model, **kw))
        assert small.manifest.shards == one.manifest.shards, kw
    # batch sizes do not change the output, so they do not change the fingerprint: the output is reused
    assert run_tokenize(
        inp, str(tmp_path / "one"), TokenizeConfig(tokenizer=model, encode_batch_bytes=7)
    ).skipped
    # sentencepiece without numpy output (< 0.2.1): Python lists of ids, the same bytes
    monkeypatch.setattr(spm_mod, "_NUMPY_OUT", False)
    lists = run_tokenize(
        inp, str(tmp_path / "lists"), TokenizeConfig(tokenizer=model, encode_batch_bytes=5000)
    )
    assert lists.manifest.shards == one.manifest.shards


def test_batches_are_sized_in_bytes_and_a_long_document_goes_alone(tmp_path: Path) -> None:
    texts = ["a" * 700, "é" * 400, "b" * 100, "c" * 5000, "", "d" * 300, "e" * 299, "f"] + ["g" * 10] * 150
    shard = f"{write_dataset(str(tmp_path / 'in'), [(f'd{i}', t) for i, t in enumerate(texts)], shard_docs=1000)}/part-00000.parquet"
    batches = list(text_batches(shard, 1000))
    assert [t for b, _ in batches for t in b] == texts  # all documents, in order
    sizes = [[len(t.encode()) for t in b] for b, _ in batches]
    assert sizes[:4] == [[700], [800, 100], [5000], [0, 300, 299, 1, *[10] * 40]]  # "é" is 2 bytes
    assert all(sum(s) <= 1000 or len(s) == 1 for s in sizes)
    assert all(src == ["s"] * len(b) for b, src in batches)
    capped = list(text_batches(shard, 1 << 20, max_docs=7))
    assert [len(b) for b, _ in capped] == [7] * 22 + [4]
    assert [t for b, _ in capped for t in b] == texts


def old_sample_lines(shards: list[str], rows: list[int], cfg: TokenizeConfig) -> list[str]:
    """The sample of selene 0.2.3: the first `sample_chars` of the drawn documents in corpus order."""
    rng = np.random.default_rng(cfg.seed)
    take = np.sort(rng.choice(sum(rows), size=min(cfg.sample_docs, sum(rows)), replace=False))
    offsets, budget, out = np.concatenate([[0], np.cumsum(rows)]), cfg.sample_chars, []
    for k, path in enumerate(shards):
        mine = take[(take >= offsets[k]) & (take < offsets[k + 1])] - offsets[k]
        texts = pq.read_table(path, columns=["text"]).column("text").to_pylist() if mine.size else []
        for text in [texts[i] for i in mine]:
            for line in text.split("\n"):
                if line.strip():
                    out.append(line[: cfg.max_sentence_length])
                    budget -= len(out[-1])
                if budget <= 0:
                    return out
    return out


def test_training_sample_is_capped_in_bytes_and_spread_over_the_corpus(tmp_path: Path) -> None:
    docs = [(f"d{i}", f"@{i}@ {PROSE[i % len(PROSE)]}\n\n{'ü' * (i % 7)} end") for i in range(300)]
    inp = write_dataset(str(tmp_path / "in"), docs, shard_docs=30)
    shards, rows = [f"{inp}/part-{k:05d}.parquet" for k in range(10)], [30] * 10
    total = sum(len(t.encode()) for _, t in docs)
    for cfg in [TokenizeConfig(sample_docs=120, sample_bytes=None, sample_chars=50_000),
                TokenizeConfig(sample_docs=120, sample_bytes=None), TokenizeConfig(sample_docs=120)]:  # fmt: skip
        # no byte cap, or one the drawn documents fit in: the lines of selene 0.2.3
        assert list(sample_lines(shards, rows, cfg)) == old_sample_lines(shards, rows, cfg)
    cfg = TokenizeConfig(sample_docs=250, sample_bytes=total // 5)
    lines = list(sample_lines(shards, rows, cfg))
    assert lines == list(sample_lines(shards, rows, cfg))  # seeded
    assert 0.8 * total // 5 < sum(len(ln.encode()) for ln in lines) <= total // 5
    numbers = {
        int(ln.split("@")[1]) for ln in lines if ln.startswith("@")
    }  # the first line names its document
    assert min(numbers) < 30 and max(numbers) >= 270  # from the whole corpus, not its first shards
    assert lines != old_sample_lines(shards, rows, cfg.model_copy(update={"sample_chars": total // 5}))
