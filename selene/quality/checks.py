"""The quality stage's checks before it runs (`Stage.preflight`)."""

from __future__ import annotations

from selene.errors import UsageError
from selene.io import dataset, fs
from selene.quality.config import QualityConfig


def check(inp: str, out: str, cfg: QualityConfig) -> None:
    if not cfg.classifiers:
        raise UsageError("give at least one classifier: quality.classifiers: [{name: NAME, model: FILE.bin, label: LABEL}]")
    from selene.quality import recipe  # lazy: the trainer loads numpy, scipy and fastText's bindings
    from selene.quality.stage import check_given  # lazy: the fastText bindings load with the model

    for c in cfg.classifiers:
        check_given(c)  # a recipe's model does not exist before the stage trains it
    recipe.check(inp, dataset.require_documents(inp, "quality"), cfg)
    fs.check_writable(out)
