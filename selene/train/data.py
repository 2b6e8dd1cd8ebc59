"""Training data: Megatron-style samples from token datasets, split into train and validation.

Documents of each prefix are split once, with a seeded permutation, into a held-out validation part
(`valid_fraction`) and the training part; each becomes a `GPTDataset`, whose sample index is cached
in the training run's directory (`index_cache`), never beside the token data: inputs are not
modified, and may be read-only or shared by several runs. Several prefixes are blended with
Megatron's `--data-path w1 p1 w2 p2` rule. A global batch is the next
`batch` samples from the cursor; data-parallel rank r takes its contiguous share of it, so the
samples seen do not depend on the layout, which is what makes layouts comparable and resume exact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from selene.errors import ConfigError, InputError
from selene.model.masks import DocumentMasking, document_ids, executed_attention_fraction, uses_flex
from selene.tokenize.gpt_dataset import BlendedDataset, GPTDataset, SampleDataset
from selene.tokenize.indexed import IndexedDataset
from selene.tokenize.manifest import token_manifest
from selene.tokenize.tokenizer import FILES
from selene.train.checkpoint_digests import sha256_of
from selene.train.config import TrainDataConfig


@dataclass
class TrainData:
    train: SampleDataset
    valid: SampleDataset | None


def split_documents(n: int, valid_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, valid) document ids: a seeded permutation, the first `valid_fraction` held out."""
    perm = np.random.RandomState(seed).permutation(n)
    n_valid = round(n * valid_fraction) if n > 1 else 0
    return np.sort(perm[n_valid:]), np.sort(perm[:n_valid])


def index_cache(out: str) -> str:
    """Where a training run in `out` caches its sample indices: every rank of the run names the same
    folder, and a rerun into `out` finds the indices it built (their names are keyed by the data and
    every parameter, as `GPTDataset` says)."""
    return os.path.join(out, "index-cache")


def build_data(cfg: TrainDataConfig, seq_len: int, train_samples: int, valid_samples: int, *, cache_dir: str) -> TrainData:
    if not cfg.prefixes:
        raise ConfigError("train.data.prefixes is empty: give the token dataset prefix (e.g. runs/x/tokenize/data_text_document)")
    if cfg.weights is not None and len(cfg.weights) != len(cfg.prefixes):
        raise ConfigError(
            f"train.data.weights has {len(cfg.weights)} values for {len(cfg.prefixes)} prefixes: give one per prefix"
        )
    weights = cfg.weights or [1.0] * len(cfg.prefixes)
    total_w = sum(weights)
    trains: list[SampleDataset] = []
    valids: list[SampleDataset] = []
    for prefix, w in zip(cfg.prefixes, weights, strict=True):
        ds = IndexedDataset(prefix)
        tr, va = split_documents(len(ds), cfg.valid_fraction, cfg.seed)
        # each part's index covers its share of the blend, with room for the greedy rule's rounding
        share = w / total_w
        trains.append(GPTDataset(ds, seq_len, int(train_samples * share) + 2, cfg.seed, cache_dir, documents=tr))
        if va.size and valid_samples and int(ds.sequence_lengths[va].sum()) > seq_len:
            valids.append(GPTDataset(ds, seq_len, int(valid_samples * share) + 2, cfg.seed + 1, cache_dir, documents=va))
    train = trains[0] if len(trains) == 1 else BlendedDataset(trains, weights, train_samples)
    valid: SampleDataset | None = None
    if len(valids) == len(trains) and valids:
        valid = valids[0] if len(valids) == 1 else BlendedDataset(valids, weights, valid_samples)
    return TrainData(train, valid)


def rank_share(batch: np.ndarray, dp_rank: int, dp_size: int) -> np.ndarray:
    """Data-parallel rank `dp_rank`'s contiguous share of a global batch."""
    if len(batch) % dp_size:
        raise ConfigError(f"global batch {len(batch)} is not divisible by the data-parallel size {dp_size}")
    per = len(batch) // dp_size
    return batch[dp_rank * per : (dp_rank + 1) * per]


def to_inputs(rows: np.ndarray, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Samples of seq_len + 1 tokens → (inputs, labels) shifted by one.

    To a GPU the samples go in one copy from pinned memory that does not wait for the device (a
    pageable copy blocks the host until the queued step has run); the shift is made there."""
    t = torch.from_numpy(rows.astype(np.int64))
    if device.type == "cuda":
        t = t.pin_memory().to(device, non_blocking=True)
    return t[:, :-1].contiguous(), t[:, 1:].contiguous()


def document_masking(cfg: TrainDataConfig) -> DocumentMasking | None:
    """What `train.data.document_mask` masks by: the data's EOD id (`eod_id`, else the tokenize
    manifest's next to every prefix, which must agree); None without a document mask.

    A `ConfigError` naming the field and the prefix when there is no EOD id to split on: the check
    runs in the preflight, before anything is written."""
    if not cfg.document_mask:
        if cfg.reset_positions:
            raise ConfigError(
                "train.data.reset_positions restarts positions per document and needs train.data.document_mask: true"
            )
        return None
    if cfg.eod_id is not None:
        return DocumentMasking(cfg.eod_id, cfg.reset_positions)
    eods: dict[str, int] = {}
    for i, prefix in enumerate(cfg.prefixes):
        m = token_manifest(prefix)
        if m is None:
            folder = os.path.dirname(prefix) or "."
            raise ConfigError(
                f"train.data.document_mask needs the data's end-of-document id, but train.data.prefixes[{i}] "
                f"{prefix} has no tokenize manifest ({os.path.join(folder, 'manifest.json')}) to read it from: "
                "set train.data.eod_id, or train.data.document_mask: false"
            )
        eods[prefix] = m.tokenizer.eod_id
    if len(set(eods.values())) > 1:
        listed = ", ".join(f"{p}: {e}" for p, e in eods.items())
        raise ConfigError(f"train.data.prefixes end their documents with different EOD ids ({listed}): set train.data.eod_id")
    if not eods:
        raise ConfigError("train.data.prefixes is empty: give the token dataset prefix (e.g. runs/x/tokenize/data_text_document)")
    return DocumentMasking(next(iter(eods.values())), cfg.reset_positions)


def attention_share(
    masking: DocumentMasking | None, data: SampleDataset, device: torch.device, dropout: float, samples: int = 256
) -> float:
    """The attention work of a step as a fraction of causal attention's, for the FLOPs a step counts.

    1.0 without a mask, and with the dense reference mask (SDPA computes every score and discards
    the masked ones, so nothing is saved). Under FlexAttention the blocks a document mask empties are
    skipped: the fraction is measured on the first `samples` samples of the run's sample index
    (`executed_attention_fraction`), which the shuffled index makes representative of the run."""
    if masking is None or not uses_flex(device, dropout) or len(data) == 0:
        return 1.0
    rows = np.stack([data[i] for i in range(min(samples, len(data)))])
    return executed_attention_fraction(document_ids(torch.from_numpy(rows[:, :-1].astype(np.int64)), masking.eod))


def describe(data: TrainData) -> dict[str, Any]:
    return {
        "train_samples": len(data.train),
        "valid_samples": len(data.valid) if data.valid is not None else 0,
        "fingerprint": data.train.fingerprint,
    }


def prefix_tokenizer(prefix: str) -> str | None:
    """The tokenizer file next to the token data `prefix`: the one its tokenize manifest names, else a
    ``tokenizer.model`` or ``tokenizer.json`` there; None when there is none."""
    folder = os.path.dirname(prefix) or "."
    m = token_manifest(prefix)
    for name in [m.tokenizer.file] if m is not None else list(FILES.values()):
        if os.path.exists(src := os.path.join(folder, name)):
            return src
    return None


def tokenizer_file(prefixes: list[str]) -> str | None:
    """The tokenizer file next to the first data prefix that has one (what the data was made with)."""
    for prefix in prefixes:
        if (src := prefix_tokenizer(prefix)) is not None:
            return src
    return None


def tokenizer_sha256(prefixes: list[str]) -> str | None:
    """The fingerprint of the data's tokenizer: sha256 of its file, else the one its tokenize manifest
    records; None for token data that has neither."""
    if (tok := tokenizer_file(prefixes)) is not None:
        return sha256_of(tok)
    for prefix in prefixes:
        if (m := token_manifest(prefix)) is not None:
            return m.tokenizer.sha256
    return None


def data_fingerprints(prefixes: list[str]) -> list[str | None]:
    """What each data prefix is, as its tokenize manifest fingerprints it (the tokenize inputs, hence
    every data stage before it, and its settings); None for token data without a manifest. A
    checkpoint records them, so a run can tell that the data changed under it
    (`selene.train.renew`)."""
    return [m.fingerprint if (m := token_manifest(p)) is not None else None for p in prefixes]


def check_token_ids(rows: np.ndarray, vocab_size: int, prefixes: list[str]) -> None:
    """Every id of a batch fits the model's vocabulary (an embedding lookup past it fails with no file
    named, or with a device-side assert on a GPU)."""
    if rows.size and (top := int(rows.max())) >= vocab_size:
        raise InputError(
            f"the training data holds token id {top}, but the model's vocabulary has {vocab_size} ids: "
            f"{', '.join(p + '.bin' for p in prefixes)} was tokenized with another tokenizer or is damaged; "
            "re-run `selene tokenize` (or set train.model.vocab_size to the tokenizer's)"
        )
