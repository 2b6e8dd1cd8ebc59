"""Helpers shared by the tests that run selene in subprocesses (crash, scale-out, training)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUTPUT_PATTERNS = ("part-*.parquet", "removed.parquet", "*.bin", "*.idx", "tokenizer.model")
VOCAB = 96


def subprocess_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment for a `selene` subprocess: its own Prefect home, quiet, the checkout importable."""
    home = tmp / "prefect-home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])),
        **extra,
    }


def output_hashes(run_dir: Path, stages: Iterable[str]) -> dict[str, str]:
    """sha256 of every output file of `stages` (temporary files left out), by path relative to run_dir."""
    got: dict[str, str] = {}
    for stage in stages:
        for pattern in OUTPUT_PATTERNS:
            for p in (run_dir / stage).glob(pattern):
                if ".tmp-" not in p.name:
                    got[str(p.relative_to(run_dir))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return got


def write_token_dataset(root: Path) -> str:
    """A small token dataset with learnable structure (repeated phrases) and its tokenize manifest."""
    from selene.tokenize.indexed import IndexedWriter

    rng = np.random.default_rng(0)
    phrases = [rng.integers(2, VOCAB, size=rng.integers(5, 12)) for _ in range(20)]
    prefix = str(root / "data_text_document")
    with IndexedWriter(prefix, np.uint16) as w:
        for _ in range(300):
            doc = np.concatenate([phrases[i] for i in rng.integers(0, 20, size=rng.integers(3, 12))])
            w.add_document(np.append(doc, 1))
    write_token_manifest(prefix, VOCAB, eod_id=1)
    return prefix


def write_token_manifest(prefix: str, vocab_size: int, eod_id: int, eod_piece: str = "</s>") -> None:
    """The tokenize manifest of token data written by hand at `prefix` (what training and evaluation
    read: vocabulary size and EOD id), valid as the tokenize stage's: its files, counts and tokenizer
    (``tokenizer.model`` next to the data when there is one)."""
    from selene import __version__
    from selene.io import dataset, fs
    from selene.manifest import DatasetInputs, FileEntry, SourceStats
    from selene.tokenize.indexed import IndexedDataset
    from selene.tokenize.manifest import TokenizeManifest, TokenizerInfo, TokenizeStats

    out, name = os.path.split(prefix)
    data = IndexedDataset(prefix)
    n, tokens = len(data), data.num_tokens
    model = Path(out, "tokenizer.model")
    manifest = TokenizeManifest(
        selene_version=__version__,
        fingerprint="test",
        config={},
        inputs=DatasetInputs(dataset="(token data written by a test)", fingerprint=None),
        shards=[
            FileEntry(name=name + ext, bytes=fs.size(prefix + ext), sha256=fs.sha256_file(prefix + ext))
            for ext in (".bin", ".idx")
        ],
        prefix=name,
        tokenizer=TokenizerInfo(
            file=model.name,
            sha256=hashlib.sha256(model.read_bytes()).hexdigest() if model.exists() else "",
            vocab_size=vocab_size,
            eod_id=eod_id,
            eod_piece=eod_piece,
            trained=True,
        ),
        dtype=data.dtype.name,
        stats=TokenizeStats(
            documents_in=n,
            documents_out=n,
            documents_removed=0,
            sequences=n,
            tokens=tokens,
            per_source={"test": SourceStats(documents_in=n, kept=n, removed={}, tokens=tokens)},
        ),
    )
    dataset.write_manifest(out, manifest)
