"""selene's fastText classifiers: fastText's own trainer, learning and repeating itself byte for
byte; features exactly as fastText 0.9.2 computes them (its predictions are the forward pass over
the rows selene's `line_ids` picks); files fastText loads, quantized ones too."""

from __future__ import annotations

import random
import re
import struct
from pathlib import Path

import fasttext
import numpy as np
import pytest

from selene.errors import ConfigError, InputError
from selene.io import fs
from selene.quality.fasttext import (
    EOS,
    FILE_MAGIC,
    PROBABILITY_OFFSET,
    Classifier,
    Settings,
    TrainedModel,
    fasttext_hash,
    line_ids,
    normalize,
    read_info,
    tokens,
    top_ngrams,
    train,
)
from selene.quality.fasttext import trainer as fasttext_trainer

TINY = Settings(dim=8, epoch=5, lr=0.2, word_ngrams=2, bucket=4001)
SHARED = [f"w{i}" for i in range(200)] + ["für", "naïve", "日本語", "données", "über", "ÆØÅ", "🙂"]
CLASS_WORDS = {
    "hq": ["theorem", "analysis", "équation", "研究", "hypothesis", "proof", "citation", "résumé"],
    "lq": ["click", "casino", "winner", "€€€", "bonus", "subscribe", "viagra", "¡¡gratis!!"],
    "mid": ["recipe", "garden", "holiday", "weather", "football", "kitchen", "travel", "hotel"],
}
SPACES = [" ", " ", " ", "  ", "\t", "\r", "\x0b", "\x0c", "\n", " \n "]


def document(label: str, rng: random.Random, n: int = 40) -> str:
    """A document of mostly shared words, a few of its class's words, and every separator fastText knows."""
    words = [rng.choice(SHARED) for _ in range(n)]
    for _ in range(5):
        words[rng.randrange(n)] = rng.choice(CLASS_WORDS[label])
    return "".join(w + rng.choice(SPACES) for w in words)


def examples(n: int, seed: int, labels: tuple[str, ...] = ("hq", "lq")) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(lab, document(lab, rng)) for lab in (rng.choice(labels) for _ in range(n))]


# Texts fastText must read as selene does: unknown words (non-ASCII too), label-like tokens, the
# end-of-line token written out, Unicode spaces that are not separators, empty and blank lines.
ODD_TEXTS = [
    "",
    "   \t ",
    "theorem",
    "ünknöwn wörds ölné 未知の単語 🙂🙃 casino",
    "__label__hq theorem proof __label__nonsense click",
    "a </s> literal end-of-line token analysis",
    "no\xa0break\u3000ideographic\u2028separator theorem click",
    "line one\nline two\r\nline three\x00nul",
    "x" * 5000 + " theorem " + "ü" * 3000,
]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> TrainedModel:
    path = tmp_path_factory.mktemp("ft") / "model.bin"
    return train(examples(1500, seed=1), TINY, str(path), seed=7)


# --- features ---------------------------------------------------------------------------------


def reference_hash(word: str) -> int:
    """fastText's hash written out literally: FNV-1a over uint32_t(int8_t(byte))."""
    h = 2166136261
    for byte in word.encode("utf-8"):
        as_int8 = byte - 256 if byte > 127 else byte
        h ^= as_int8 % 2**32
        h = h * 16777619 % 2**32
    return h


def test_hash_is_fnv1a_with_sign_extended_bytes() -> None:
    # textbook FNV-1a 32 test vectors (ASCII: sign extension changes nothing)
    assert fasttext_hash("") == 0x811C9DC5
    assert fasttext_hash("a") == 0xE40C292C
    assert fasttext_hash("foobar") == 0xBF9CF968
    # non-ASCII bytes enter as 0xFFFFFFxx: "é" is C3 A9; textbook FNV-1a would give 513665217
    assert fasttext_hash("é") == 0x3CFA68C1 == reference_hash("é")
    assert fasttext_hash("naïve") == 0xCD16EE2B
    assert fasttext_hash("日本") == 0xF8378251
    for w in [*SHARED, EOS, "x" * 3000, "ü" * 200]:
        assert fasttext_hash(w) == reference_hash(w)


def test_tokens_split_on_fasttext_separators_only() -> None:
    assert tokens("a\tb  c\x0bd\x0ce\rf\x00g") == ["a", "b", "c", "d", "e", "f", "g", EOS]
    assert tokens("no\xa0break\u3000space") == ["no\xa0break\u3000space", EOS]  # not fastText separators
    assert tokens("") == [EOS]
    assert tokens("   ") == [EOS]
    assert tokens("read </s> never read") == ["read", EOS]  # getLine stops at the first "</s>" token
    assert tokens("a</s> b") == ["a</s>", "b", EOS]
    with pytest.raises(ValueError, match="one line"):
        tokens("two\nlines")
    assert normalize("two\nlines\n") == "two lines "


def reference_line_ids(text: str, vocab: dict[str, int], nwords: int, bucket: int, n: int) -> list[int]:
    """fastText's getLine + addWordNgrams, written out with Python integers."""
    words = [t for t in re.split(r"[ \r\t\x0b\x0c\x00]+", text) if t] + [EOS]
    words = words[: words.index(EOS) + 1]
    words = [w for w in words if not w.startswith("__label__")]
    ids = [vocab[w] for w in words if w in vocab]
    signed = [(h - 2**32 if h >= 2**31 else h) % 2**64 for h in map(reference_hash, words)]  # int32 -> uint64
    for i in range(len(signed)):
        h = signed[i]
        for j in range(i + 1, min(len(signed), i + n)):
            h = (h * 116049371 + signed[j]) % 2**64
            ids.append(nwords + h % bucket)
    return ids


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_line_ids_match_fasttexts_getline(n: int) -> None:
    vocab = {w: i for i, w in enumerate(["theorem", "für", EOS, "日本語", "w3"])}
    for text in [
        "theorem für w3 unknown 日本語 ünknöwn",
        "__label__hq w3\tw3  w3",
        "",
        "solo",
        "w3 für </s> theorem w3",
        ODD_TEXTS[-1],
    ]:
        line = normalize(text)
        got = line_ids(line, vocab, len(vocab), 1009, n).tolist()
        assert got == reference_line_ids(line, vocab, len(vocab), 1009, n)


# --- training ---------------------------------------------------------------------------------


def forward(trained: TrainedModel, texts: list[str]) -> np.ndarray:
    """The softmax over the labels from the model's matrices and this package's `line_ids`: what
    fastText's C++ must compute, if selene's features are fastText's."""
    ft = trained.model
    words = ft.get_words(on_unicode_error="replace")
    vocab = {w: i for i, w in enumerate(words)}
    wi, wo = ft.get_input_matrix().astype(np.float64), ft.get_output_matrix().astype(np.float64)
    out = np.zeros((len(texts), len(trained.labels)))
    for i, text in enumerate(texts):
        ids = line_ids(
            normalize(text), vocab, len(words), trained.settings.bucket, trained.settings.word_ngrams
        )
        if ids.size:
            z = wo @ wi[ids].mean(axis=0)
            z = np.exp(z - z.max())
            out[i] = z / z.sum()
    return out


def test_training_learns_the_classes(model: TrainedModel) -> None:
    held_out = examples(400, seed=2)
    assert model.path is not None
    clf = Classifier.load(model.path, "hq")
    scores = clf.score([t for _, t in held_out])
    accuracy = np.mean([(s >= 0.5) == (lab == "hq") for s, (lab, _) in zip(scores, held_out, strict=True)])
    assert accuracy > 0.97
    assert sorted(model.labels) == ["__label__hq", "__label__lq"]


def test_training_is_deterministic(tmp_path: Path) -> None:
    """fastText on one thread with a seed, in one process after other fits (whose freed memory
    fastText's uninitialised rows would otherwise reuse): the same bytes."""
    data = examples(300, seed=3)
    paths = [tmp_path / f"{k}.bin" for k in range(4)]
    for k, path in enumerate(paths):
        train(data, TINY, str(path), seed=12 if k == 3 else 11)
    assert paths[0].read_bytes() == paths[1].read_bytes() == paths[2].read_bytes()
    assert paths[0].read_bytes() != paths[3].read_bytes()


def test_top_ngrams_are_the_class_words(model: TrainedModel) -> None:
    texts = [t for _, t in examples(1500, seed=1)]
    top = top_ngrams(model, texts, k=8)
    for label, own, other in [("hq", "hq", "lq"), ("lq", "lq", "hq")]:
        names = [name for name, _ in top[f"__label__{label}"]]
        assert sum(any(w in CLASS_WORDS[own] for w in name.split()) for name in names) >= 5
        assert not any(w in CLASS_WORDS[other] for name in names for w in name.split())
        assert all(push > 0 for _, push in top[f"__label__{label}"])
    bigrams = [name for name, _ in top_ngrams(model, texts, k=200)["__label__hq"] if " " in name]
    assert bigrams, "n-gram buckets are named by an n-gram of the texts in them"


# --- the .bin and fastText's C++ --------------------------------------------------------------


def test_header_is_what_was_trained(model: TrainedModel) -> None:
    assert model.path is not None
    raw = Path(model.path).read_bytes()
    assert struct.unpack("<ii", raw[:8]) == (FILE_MAGIC, 12)
    info = read_info(model.path)
    assert (info.model, info.loss, info.dim, info.bucket, info.word_ngrams, info.maxn, info.epoch) == (
        "supervised",
        "softmax",
        8,
        4001,
        2,
        0,
        5,
    )
    assert info.labels == tuple(model.labels) and not info.quantized


@pytest.mark.parametrize(
    ("word_ngrams", "labels"), [(1, ("hq", "lq")), (2, ("hq", "lq", "mid")), (3, ("hq", "lq"))]
)
def test_selene_features_are_fasttexts(tmp_path: Path, word_ngrams: int, labels: tuple[str, ...]) -> None:
    """fastText's own predictions equal the forward pass over the rows selene's `line_ids` picks,
    on texts never seen in training (unknown and non-ASCII words, whose hashes pick the n-gram
    rows): selene names n-gram buckets (`top_ngrams`) as fastText fills them."""
    settings = Settings(dim=8, epoch=3, lr=0.2, word_ngrams=word_ngrams, bucket=2003, min_count=2)
    path = tmp_path / "m.bin"
    trained = train(examples(600, seed=4, labels=labels), settings, str(path), seed=5)
    texts = [t for _, t in examples(200, seed=6, labels=labels)] + ODD_TEXTS
    mine = forward(trained, texts)
    ft = fasttext.load_model(str(path))
    worst = 0.0
    for text, row in zip(texts, mine, strict=True):
        got, probs = ft.predict(normalize(text), k=-1)
        theirs = dict(zip(got, probs, strict=True))
        assert set(theirs) == set(trained.labels)
        for c, label in enumerate(trained.labels):
            worst = max(worst, abs(theirs[label] - (row[c] + PROBABILITY_OFFSET)))
    assert worst < 1e-5
    for c, label in enumerate(trained.labels):
        clf = Classifier.load(str(path), label.removeprefix("__label__"))
        np.testing.assert_allclose(clf.score(texts), mine[:, c] + PROBABILITY_OFFSET, rtol=0, atol=1e-5)


def test_quantized_model_is_a_small_ftz_that_scores_alike(tmp_path: Path) -> None:
    data = examples(600, seed=13)
    settings = Settings(dim=16, epoch=5, lr=0.5, bucket=20011)
    with fasttext_trainer.training_file(data, 1) as (path, n):
        full = fasttext_trainer.fit(path, n, settings, 1)
        full.save(str(tmp_path / "model.bin"))
        full.quantize(path, cutoff=1000)
        full.save(str(tmp_path / "model.ftz"))
    assert read_info(str(tmp_path / "model.ftz")).quantized
    assert (tmp_path / "model.ftz").stat().st_size * 10 < (tmp_path / "model.bin").stat().st_size
    texts = [t for _, t in examples(200, seed=14)]
    a = Classifier.load(str(tmp_path / "model.bin"), "hq").score(texts)
    b = Classifier.load(str(tmp_path / "model.ftz"), "hq").score(texts)
    assert np.mean((a >= 0.5) == (b >= 0.5)) > 0.95


def test_classifier_accepts_both_label_forms(model: TrainedModel) -> None:
    assert model.path is not None
    short, full = Classifier.load(model.path, "hq"), Classifier.load(model.path, "__label__hq")
    assert short.label == full.label == "__label__hq"
    assert sorted(short.labels) == ["__label__hq", "__label__lq"]
    texts = [t for _, t in examples(20, seed=8)]
    assert np.array_equal(short.score(texts), full.score(texts))
    assert short.score([]).shape == (0,)


def test_models_on_other_filesystems() -> None:
    """A model written to an fsspec URL (atomically) and scored from there (fastText's C++ reads a
    local copy)."""
    url = "memory://selene-test-fasttext/model.bin"
    try:
        trained = train(examples(300, seed=9), TINY, url, seed=1)
        clf = Classifier.load(url, "lq")
        texts = [t for _, t in examples(30, seed=10)]
        expected = forward(trained, texts)[:, trained.labels.index("__label__lq")] + PROBABILITY_OFFSET
        np.testing.assert_allclose(clf.score(texts), expected, rtol=0, atol=1e-5)
    finally:
        fs.rm("memory://selene-test-fasttext", recursive=True)


def test_errors_name_the_file(tmp_path: Path, model: TrainedModel) -> None:
    assert model.path is not None
    missing = tmp_path / "nope.bin"
    with pytest.raises(InputError, match=re.escape(str(missing))):
        Classifier.load(str(missing), "hq")
    noise = tmp_path / "noise.bin"
    noise.write_bytes(random.Random(0).randbytes(4096))
    with pytest.raises(InputError, match="not a fastText model"):
        Classifier.load(str(noise), "hq")
    with pytest.raises(ConfigError, match=r"no label 'great'; its labels are: ") as e:
        Classifier.load(model.path, "great")
    assert {"hq", "lq"} <= set(str(e.value).split(": ")[-1].split(" (")[0].split(", "))
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(Path(model.path).read_bytes()[:-100])
    with pytest.raises(InputError, match="truncated"):
        Classifier.load(str(truncated), "hq")
    with pytest.raises(InputError, match="directory"):
        Classifier.load(str(tmp_path), "hq")


def test_bad_settings_and_examples_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="dim"):
        Settings(dim=0)
    with pytest.raises(ConfigError, match="two labels"):
        train([("hq", "a b c"), ("hq", "d e")], TINY)
    with pytest.raises(ConfigError, match="no examples"):
        train([], TINY)
    with pytest.raises(ConfigError, match="label"):
        train([("h q", "a b c"), ("lq", "d e")], TINY)


def test_a_saved_model_has_the_mode_of_any_file_written_here(tmp_path: Path, model: TrainedModel) -> None:
    """The atomic write's temporary file is 0600; the model must not stay so (a team reading it)."""
    import os
    import stat

    model.save(str(tmp_path / "model.bin"))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "model.bin").stat().st_mode) == 0o666 & ~umask
