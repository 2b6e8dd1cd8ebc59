"""The scaling study over token budgets: the grid as steps and branch points, its refusals, and (slow)
both ways of running it giving the same losses, the branches for fewer steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from selene.errors import ConfigError
from selene.plan.config import ScalingStudyConfig, StudyRun
from selene.plan.study import run_study
from selene.plan.study_budgets import Budget, budget_plan, checkpoint_every


def _study(out: str = "x", **extra: object) -> ScalingStudyConfig:
    runs = [
        {"name": f"d{d}", "micro_batch": 4, "model": {"preset": "debug", "n_layers": 1, "dim": d, "n_heads": 2, "ffn_dim": 2 * d, "max_seq_len": 16}}
        for d in (16, 32)
    ]  # fmt: skip
    return ScalingStudyConfig.model_validate({"out": out, "device": "cpu", "vocab_size": 64, "runs": runs, **extra})


def test_budgets_become_steps_with_a_fifth_decay_and_branch_points_on_checkpoints() -> None:
    cfg = _study(budgets=[6400, 640, 1280, 3000])  # unsorted on purpose; 64 tokens a step
    run = cfg.runs[0]
    plan = budget_plan(run, cfg, 64)
    assert plan == [Budget(640, 10, 2), Budget(1280, 20, 4), Budget(3000, 47, 9), Budget(6400, 100, 20)]
    assert [b.decay_start for b in plan] == [8, 16, 38, 80]
    assert checkpoint_every(plan) == 2  # gcd(8, 16, 38): every smaller budget's decay start is saved
    assert checkpoint_every(plan[1:2] + plan[3:]) == 16 and checkpoint_every(plan[:1]) == 10
    cheaper = sum(b.decay_steps for b in plan[:-1]) + plan[-1].steps
    assert cheaper == 115 < sum(b.steps for b in plan) == 177


def test_budget_grids_that_cannot_be_run_are_refused_naming_the_budget() -> None:
    with pytest.raises(ConfigError, match="budgets 650 and 700 both take 11 steps"):
        budget_plan(StudyRun(name="a"), _study(budgets=[650, 700]), 64)
    with pytest.raises(ConfigError, match="budget 64 is 1 steps, too few for a decay of 1"):
        budget_plan(StudyRun(name="a"), _study(budgets=[64, 640]), 64)
    with pytest.raises(ConfigError, match="after 9 warmup steps"):
        budget_plan(StudyRun(name="a"), _study(budgets=[640], lr_warmup_steps=9), 64)
    with pytest.raises(ValueError, match="budgets must be distinct positive token counts"):
        _study(budgets=[640, 640])
    with pytest.raises(ValueError, match="budgets must be distinct positive token counts"):
        _study(budgets=[])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_branches_give_the_separate_runs_losses_for_fewer_steps(tmp_path: Path) -> None:
    budgets = [8 * 64, 16 * 64]  # 8 and 16 steps of 4 × 16 tokens
    branches = run_study(_study(str(tmp_path / "b"), budgets=budgets, lr=3e-3))
    separate = run_study(_study(str(tmp_path / "s"), budgets=budgets, lr=3e-3, budget_mode="separate"))

    def losses(result: dict[str, object]) -> dict[tuple[str, int], float]:
        return {(r["name"], p["steps"]): p["loss"] for r in result["runs"] for p in r["points"]}  # type: ignore[attr-defined,index]

    assert losses(branches) == losses(separate) and len(losses(branches)) == 4
    assert branches["steps_trained"] == 2 * (16 + 2) and separate["steps_trained"] == 2 * (8 + 16)
    assert (tmp_path / "b" / "budgets" / "d16" / "wsd.anneals" / "step-6-decay-2" / "run.json").exists()
    assert "| d32 | 1024 | 16 | 3 |" in (tmp_path / "b" / "budgets.md").read_text()
