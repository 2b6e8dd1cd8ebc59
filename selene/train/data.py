"""Training data: Megatron-style samples from token datasets, split into train and validation.

Documents of each prefix are split once, with a seeded permutation, into a held-out validation part
(`valid_fraction`) and the training part; each becomes a `GPTDataset` (cached sample index). Several
prefixes are blended with Megatron's `--data-path w1 p1 w2 p2` rule. A global batch is the next
`batch` samples from the cursor; data-parallel rank r takes its contiguous share of it, so the
samples seen do not depend on the layout, which is what makes layouts comparable and resume exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from selene.config import TrainDataConfig
from selene.errors import ConfigError
from selene.tokenize.gpt_dataset import BlendedDataset, GPTDataset, SampleDataset
from selene.tokenize.indexed import IndexedDataset


@dataclass
class TrainData:
    train: SampleDataset
    valid: SampleDataset | None


def split_documents(n: int, valid_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, valid) document ids: a seeded permutation, the first `valid_fraction` held out."""
    perm = np.random.RandomState(seed).permutation(n)
    n_valid = round(n * valid_fraction) if n > 1 else 0
    return np.sort(perm[n_valid:]), np.sort(perm[:n_valid])


def build_data(cfg: TrainDataConfig, seq_len: int, train_samples: int, valid_samples: int) -> TrainData:
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
        trains.append(GPTDataset(ds, seq_len, int(train_samples * share) + 2, cfg.seed, documents=tr))
        if va.size and valid_samples and int(ds.sequence_lengths[va].sum()) > seq_len:
            valids.append(GPTDataset(ds, seq_len, int(valid_samples * share) + 2, cfg.seed + 1, documents=va))
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
    """Samples of seq_len + 1 tokens → (inputs, labels) shifted by one."""
    t = torch.from_numpy(rows.astype(np.int64))
    return t[:, :-1].contiguous().to(device), t[:, 1:].contiguous().to(device)


def describe(data: TrainData) -> dict[str, Any]:
    return {
        "train_samples": len(data.train),
        "valid_samples": len(data.valid) if data.valid is not None else 0,
        "fingerprint": data.train.fingerprint,
    }
