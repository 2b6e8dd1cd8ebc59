"""A training run whose token data changed under it: moved aside by `selene run`, refused by `selene train`.

The data stages of a pipeline are redone when their inputs or settings change (their fingerprints
say so); the checkpoints in the training directory were trained on what tokenize wrote before.
Resuming them would go on with another dataset under the old data cursor (with a new tokenizer,
token ids that mean other pieces), and a finished run would be reported as the model of data it
never saw. A checkpoint records what its data was (``data_fingerprints``: the tokenize fingerprint
of each prefix, `selene.train.data.data_fingerprints`; and ``tokenizer_sha256``), so:

- `selene run` (`renew`, the train stage's hook in `selene.pipeline.run_pipeline`) renames the whole
  training directory — checkpoints, metrics, evaluations — to the sibling
  ``<out>.previous-<UTC time>``, says in one line what changed and where it went, and trains again
  from step 0. Nothing is deleted; ``--force train`` retrains in place instead.
- `selene train` resuming its own checkpoints stops before any rank starts, saying what changed and
  the command that retrains (`check_data_unchanged`): it never moves what the user pointed it at.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from selene.errors import ConfigError, OutputError, SeleneError
from selene.io import dataset
from selene.tokenize.manifest import TokenizeManifest
from selene.train import checkpoint
from selene.train.config import TrainConfig
from selene.train.data import data_fingerprints, tokenizer_sha256


def data_change(meta: dict[str, Any], prefixes: list[str]) -> str | None:
    """What differs between the token data a checkpoint (its `meta`) was trained on and `prefixes`
    now: the tokenize fingerprint of a prefix, or the tokenizer; None when nothing known differs
    (a checkpoint or token data without the record is taken as unchanged)."""
    changes = []
    saved = meta.get("data_fingerprints")
    if isinstance(saved, list) and saved:
        now = data_fingerprints(prefixes)
        if len(saved) != len(now):
            changes.append(f"{len(saved)} data prefixes, now {len(now)}")
        else:
            for prefix, old, new in zip(prefixes, saved, now, strict=True):
                if isinstance(old, str) and new is not None and old != new:
                    of = f" of {prefix}" if len(prefixes) > 1 else ""
                    changes.append(f"tokenize fingerprint{of} {old[:16]}..., now {new[:16]}...")
    old_tok, new_tok = meta.get("tokenizer_sha256"), tokenizer_sha256(prefixes)
    if isinstance(old_tok, str) and new_tok and old_tok != new_tok:
        changes.append(f"tokenizer sha256 {old_tok[:16]}..., now {new_tok[:16]}...")
    return "; ".join(changes) or None


def check_data_unchanged(source: str, meta: dict[str, Any], cfg: TrainConfig, out: str) -> None:
    """`selene train` about to resume the checkpoint `source` of its own directory `out`: a
    `ConfigError` saying what changed in its data, and how to retrain, when something did."""
    if os.path.dirname(os.path.normpath(source)) != os.path.normpath(os.path.join(out, "checkpoints")):
        return  # train.checkpoint.load: another run's checkpoint, continued on this data on purpose
    change = data_change(meta, cfg.data.prefixes)
    if change is not None:
        raise ConfigError(f"checkpoint {source} was trained on other token data ({change}). {checkpoint.RETRAIN_HINT}")


def renew(inp: str | None, out: str, cfg: TrainConfig, say: Callable[[str], None]) -> str | None:
    """Before a pipeline trains into `out` on the tokenize output `inp`: when the latest finished
    checkpoint there was trained on other token data, `out` is renamed to ``<out>.previous-<time>``
    and `say` tells what changed and where it went; returns that new name (None: nothing moved)."""
    steps = checkpoint.complete_steps(os.path.join(out, "checkpoints"))
    if not steps:
        return None
    latest = checkpoint.step_dir(os.path.join(out, "checkpoints"), steps[-1])
    try:
        meta = checkpoint.read_meta(latest)
    except SeleneError:  # a damaged meta.json: the train stage's own checks name it
        return None
    change = data_change(meta, _prefixes(inp, cfg))
    if change is None:
        return None
    base = out.rstrip("/" + os.sep)
    aside = f"{base}.previous-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    n = 1
    while os.path.lexists(aside):
        n += 1
        aside = f"{base}.previous-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{n}"
    try:
        os.rename(base, aside)
    except OSError as e:
        raise OutputError(
            f"{base}: its checkpoints were trained on other token data ({change}), but it cannot be moved "
            f"aside to {aside} ({e.strerror or e}); move or delete it, or rerun with --force train"
        ) from None
    say(f"train: the token data changed since step {steps[-1]} ({change}); moved {base} to {aside}, training from step 0")
    return aside


def _prefixes(inp: str | None, cfg: TrainConfig) -> list[str]:
    """The data prefixes the train stage will read: the configured ones, else the tokenize output's."""
    if cfg.data.prefixes:
        return list(cfg.data.prefixes)
    m = dataset.read_manifest(inp, TokenizeManifest) if inp else None
    return [os.path.join(inp, m.prefix)] if inp and m is not None else []
