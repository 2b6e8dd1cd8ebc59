"""A real (tiny) training checkpoint for evaluation and export tests.

`make_checkpoint(tmp_path)` builds what `selene tokenize` + `selene train` would: a sentencepiece
tokenizer trained on real English text (the stdlib's pydoc topics, so no download), a Megatron token
dataset encoded with it plus its tokenize manifest and `tokenizer.model`, then a few optimizer steps
of the `debug` preset (seq_len 64) in one process. The result is an ordinary
``<out>/checkpoints/step-NNNNNN`` with ``meta.json`` and ``../../tokenizer.model``, so decode/encode
through the checkpoint's tokenizer match the ids the model was trained on.

Use it from a module-scoped fixture (it takes ~10 s)::

    @pytest.fixture(scope="module")
    def ckpt(tmp_path_factory):
        return make_checkpoint(tmp_path_factory.mktemp("ckpt"))
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

VOCAB = 512  # 256 byte-fallback pieces + ~90 characters + a few merges
STEPS = 4
SEQ_LEN = 64


def corpus_lines(limit: int = 4000) -> list[str]:
    """Non-empty lines of Python's help topics: real prose and code, deterministic, always installed."""
    from pydoc_data.topics import topics

    lines = []
    for key in sorted(topics):
        lines.extend(line for line in topics[key].split("\n") if line.strip())
    return lines[:limit]


def corpus_docs(n: int = 60) -> list[str]:
    """Documents (one help topic each) for the token dataset."""
    from pydoc_data.topics import topics

    return [topics[k] for k in sorted(topics)[:n]]


def make_checkpoint(tmp_path: Path | str, **model: Any) -> str:
    """Train a tiny tokenizer + model under `tmp_path`; returns the step directory of the checkpoint.

    `model` overrides fields of the `debug` preset (e.g. ``tie_embeddings=True``, ``mlp="gelu"``).
    """
    root = Path(tmp_path)
    return train_checkpoint(root / "train", make_token_data(root / "tokens"), STEPS, **model)


def train_checkpoint(out: Path, prefix: str, steps: int, **model: Any) -> str:
    """Train the `debug` preset for `steps` steps on the token data `prefix` into `out`; returns the
    step directory of its checkpoint."""
    from selene.train.config import TrainConfig
    from selene.train.launch import launch

    cfg = TrainConfig.model_validate(
        {
            "model": {"preset": "debug", **model},
            "parallel": {"dp_shard": 1},
            "steps": steps,
            "batch": {"seq_len": SEQ_LEN, "global_batch": 4, "micro_batch": 4},
            "optim": {"lr": 3e-3, "warmup_steps": 1},
            "data": {"prefixes": [prefix]},
            "eval_every": 1000,
            "eval_batches": 1,
            "checkpoint": {"every": steps, "keep": 1},
            "tensorboard": False,
            "device": "cpu",
            "out": str(out),
        }
    )
    launch(cfg, str(out), 1)
    step = out / "checkpoints" / f"step-{steps:06d}"
    if not (step / "meta.json").exists():
        raise RuntimeError(f"training did not leave a checkpoint at {step}: {os.listdir(out)}")
    return str(step)


def make_token_data(data: Path) -> str:
    """What `selene tokenize` writes, into `data`: a sentencepiece tokenizer trained on real English
    text, the Megatron token dataset encoded with it and its manifest; returns the data's prefix."""
    import sentencepiece as sp_lib

    from selene.tokenize import spm
    from selene.tokenize.config import TokenizeConfig
    from selene.tokenize.indexed import IndexedWriter, choose_dtype
    from tests.pipeline_runs import write_token_manifest

    data.mkdir(parents=True, exist_ok=True)
    tcfg = TokenizeConfig(vocab_size=VOCAB, model_type="bpe", threads=1)
    blob = spm.train(iter(corpus_lines()), tcfg)
    (data / "tokenizer.model").write_bytes(blob)
    sp = sp_lib.SentencePieceProcessor()
    sp.load_from_serialized_proto(blob)
    eod = spm.eod_piece_id(sp, tcfg.eod_piece)
    prefix = str(data / tcfg.prefix)
    with IndexedWriter(prefix, choose_dtype(sp.vocab_size())) as w:
        for doc in corpus_docs():
            w.add_document(np.array([*sp.encode(doc), eod], dtype=np.int64))
    write_token_manifest(prefix, int(sp.vocab_size()), eod, tcfg.eod_piece)
    return prefix
