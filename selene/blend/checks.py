"""The blend stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.blend.config import BlendConfig
from selene.errors import UsageError
from selene.io import dataset, fs


def check(inp: str, out: str, cfg: BlendConfig) -> None:
    if not cfg.weights and not cfg.epochs:
        raise UsageError("give --weights SRC=W,... or --epochs SRC=E,... (or blend.weights/epochs in the config)")
    dataset.require_documents(inp, "blend")
    fs.check_writable(out)
