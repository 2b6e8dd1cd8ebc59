"""A training config's model section → the model's shape (`selene.model.args.ModelArgs`).

Free of torch, like the presets it starts from.
"""

from __future__ import annotations

import dataclasses

from selene.model.args import PRESETS, ModelArgs
from selene.train.config import ModelConfig

# Every ModelConfig field but `preset` overrides the preset field of the same name; `bias`,
# `norm_eps` and `rope_theta` have no config field and come from the preset. `n_kv_heads` unset keeps
# the preset's (one per query head for all but the GQA presets).
_OVERRIDABLE = tuple(name for name in ModelConfig.model_fields if name != "preset")


def model_args(cfg: ModelConfig, vocab_size: int) -> ModelArgs:
    """The preset of `cfg` with the fields the config sets explicitly; `vocab_size` unless the config sets one.

    `dropout` and `init_std` have non-None defaults in ModelConfig, so they override the preset only when
    the config names them (pydantic's `model_fields_set`), never by their default.
    """
    base = PRESETS[cfg.preset]
    changes: dict[str, object] = {"vocab_size": vocab_size}
    for name in _OVERRIDABLE:
        value = getattr(cfg, name)
        if value is not None and (name in cfg.model_fields_set or name == "vocab_size"):
            changes[name] = value
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
