"""A trained classifier's held-out AUC as the summaries say it: the figure, or why there is none."""

from __future__ import annotations

from selene.quality.manifest import TrainedClassifier


def trained(auc: float | None, heldout: dict[str, int]) -> TrainedClassifier:
    return TrainedClassifier(
        report="r/report.json", fingerprint="f", positive=["docs"], negative=["web"],
        documents={"hq": 50, "lq": 24}, heldout=heldout, auc=auc, precision=1.0, recall=1.0, threshold=0.5,
    )  # fmt: skip


def test_the_auc_when_both_classes_were_held_out() -> None:
    assert trained(0.91234, {"hq": 4, "lq": 2}).auc_said(3) == "0.912"


def test_no_auc_names_the_class_nothing_was_held_out_of() -> None:
    assert trained(None, {"hq": 4, "lq": 0}).auc_said(4) == "n/a (no lq document held out)"
    assert trained(None, {"hq": 0, "lq": 0}).auc_said(4) == "n/a (no hq or lq document held out)"
