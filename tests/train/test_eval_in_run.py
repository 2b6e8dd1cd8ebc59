"""Evaluation inside the training run (`train.eval_tasks`): the scores it logs are `selene eval`'s on
the checkpoint of that step — exactly in one process, to float32 rounding under FSDP 2 and TP 2 —
they reach metrics.jsonl and TensorBoard, and a task that does not exist is refused before training."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from selene.errors import ConfigError
from selene.train.config import TrainConfig
from selene.train.metrics import read_metrics
from tests.distributed import run_world
from tests.tiny_checkpoint import SEQ_LEN, make_token_data

TASKS = ["selene_cloze", "selene_piqa", "selene_firstword"]  # loglikelihood and generate_until
LIMIT = 6
STEPS = 4
REFERENCE = [
    "Bits per byte divide a text's total log-loss by its UTF-8 bytes, so tokenizers compare.",
    "A checkpoint holds the model, the optimizer, the data cursor and the random state.",
]


def settings(prefix: str, out: Path, reference: Path, **more: Any) -> dict[str, Any]:
    return {
        "model": {"preset": "debug"},
        "parallel": {"dp_shard": 1},
        "steps": STEPS,
        "batch": {"seq_len": SEQ_LEN, "global_batch": 4, "micro_batch": 4},
        "optim": {"lr": 3e-3, "warmup_steps": 1},
        "data": {"prefixes": [prefix]},
        "eval_every": 1000,
        "eval_batches": 1,
        "checkpoint": {"every": 2, "keep": 2},
        "device": "cpu",
        "eval_tasks": TASKS,
        "eval_tasks_every": 2,
        "eval_limit": LIMIT,
        "eval_reference": [str(reference)],
        "out": str(out),
        **more,
    }


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """(training output, token prefix, reference file) of a 4-step run that evaluates at steps 2 and 4."""
    from selene.train.launch import launch

    root = tmp_path_factory.mktemp("eval-in-run")
    prefix = make_token_data(root / "tokens")
    reference = root / "reference.jsonl"
    reference.write_text("".join(json.dumps({"text": t}) + "\n" for t in REFERENCE))
    out = root / "train"
    cfg = TrainConfig.model_validate(settings(prefix, out, reference))
    launch(cfg, str(out), 1)
    return out, prefix, reference


def checkpoint_scores(step_dir: str) -> dict[str, float]:
    """What `selene eval` gives on a checkpoint, named as the run logs it."""
    from selene.eval.harness import evaluate
    from selene.eval.perplexity import text_bits_per_byte
    from selene.train.evaluate import metrics_of

    with_tmp = Path(step_dir) / "eval-test"
    results = evaluate(step_dir, TASKS, out_dir=str(with_tmp), limit=LIMIT, batch_size=8, log_samples=False)
    bpb = text_bits_per_byte(step_dir, REFERENCE, batch_size=8, device="cpu")
    return {
        **metrics_of(results),
        "eval/reference/bits_per_byte": bpb["bits_per_byte"],
        "eval/reference/loss": bpb["loss"],
    }


def logged(out: Path, step: int) -> dict[str, float]:
    row = next(
        r for r in read_metrics(str(out / "metrics.jsonl")) if r["step"] == step and "eval_time_s" in r
    )
    return {k: v for k, v in row.items() if k.startswith("eval/")}


def test_in_run_scores_equal_selene_eval_on_the_step_checkpoint(trained: tuple[Path, str, Path]) -> None:
    out, _, _ = trained
    for step in (2, 4):
        got = logged(out, step)
        want = checkpoint_scores(str(out / "checkpoints" / f"step-{step:06d}"))
        names = {
            "eval/selene_cloze/perplexity",
            "eval/selene_piqa/acc_norm",
            "eval/selene_firstword/exact_match",
        }
        assert names <= set(got)
        assert got == want  # bit for bit: the same float32 forwards, batches and sums
    rows = read_metrics(str(out / "metrics.jsonl"))
    assert [r["step"] for r in rows if "eval_time_s" in r] == [2, 4]


def test_scores_reach_tensorboard(trained: tuple[Path, str, Path]) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(trained[0] / "tensorboard"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert "eval/selene_piqa/acc" in tags and "eval/reference/bits_per_byte" in tags and "loss" in tags
    assert [e.step for e in acc.Scalars("eval/selene_cloze/perplexity")] == [2, 4]


def _sharded_scores(
    rank: int, world: int, step_dir: str, prefix: str, reference: str
) -> list[dict[str, float]]:
    """In-run scores of the checkpoint loaded into FSDP 2, then TP 2, on this gloo world."""
    import torch

    from selene.train.args import model_args
    from selene.train.checkpoint import ModelState, dcp_load
    from selene.train.config import ParallelConfig
    from selene.train.dims import ParallelDims
    from selene.train.evaluate import InRunEval
    from selene.train.loop import vocab_size_of
    from selene.train.parallelize import build_parallel_model

    cfg = TrainConfig.model_validate(settings(prefix, Path(step_dir), Path(reference)))
    margs = model_args(cfg.model, vocab_size_of(cfg))
    device = torch.device("cpu")
    found = []
    for layout in ({"dp_shard": 2}, {"dp_shard": 1, "tp": 2}):
        pcfg = ParallelConfig(**layout)
        dims = ParallelDims(pcfg.dp_replicate, pcfg.dp_shard, pcfg.tp, pcfg.pp, world)
        pm = build_parallel_model(margs, pcfg, dims, dims.build_mesh("cpu"), device, cfg.seed)
        dcp_load({"model": ModelState(pm.parts)}, step_dir)
        evals = InRunEval(cfg, pm.parts[0], margs, device, dims.tp, rank, world)
        try:
            found.append(evals(STEPS))
        finally:
            evals.close()
    return found


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_fsdp_and_tp_score_as_selene_eval(trained: tuple[Path, str, Path]) -> None:
    out, prefix, reference = trained
    step_dir = str(out / "checkpoints" / f"step-{STEPS:06d}")
    want = logged(out, STEPS)
    ranks = run_world(2, _sharded_scores, step_dir, prefix, str(reference))
    assert ranks[1] == [{}, {}]  # rank 0 drives the harness; the others only run the forwards
    for got in ranks[0]:
        assert got.pop("eval_setup_cpu_s") >= 0  # logged once, with the first scores of a run
        assert set(got) == set(want)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-6), key


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_unknown_task_is_refused_before_training(
    tmp_path: Path, trained: tuple[Path, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from selene.cli import main

    _, prefix, reference = trained
    out = tmp_path / "run" / "train"
    config = tmp_path / "train.yaml"
    config.write_text(yaml.safe_dump(settings(prefix, out, reference, eval_tasks=["selene_clozee"])))
    assert main(["train", str(config)]) == 2
    err = capsys.readouterr().err
    assert "train.eval_tasks: unknown evaluation task 'selene_clozee'; did you mean selene_cloze" in err
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing written: not the output, not the folder above it


def test_pipeline_parallel_is_refused_at_config_time(trained: tuple[Path, str, Path], tmp_path: Path) -> None:
    from selene.train.evaluate import check

    _, prefix, reference = trained
    cfg = TrainConfig.model_validate(
        settings(prefix, tmp_path / "x", reference, parallel={"pp": 2, "dp_shard": 1})
    )
    with pytest.raises(ConfigError, match=r"train.eval_tasks: .*pipeline parallelism \(parallel.pp 2\)"):
        check(cfg)


def test_report_dashboard_and_live_view_show_the_curves(
    trained: tuple[Path, str, Path], tmp_path: Path
) -> None:
    from selene.executor import events
    from selene.io.results import StageResult
    from selene.train.stage import _Watch
    from selene.train.view import view
    from selene.view import PREFECT, REPORT

    out = trained[0]
    shown = view(
        StageResult(str(out), skipped=False, info={"last": {"step": STEPS, "loss": 1.0}, "checkpoint": "c"})
    )
    report = "\n".join(
        getattr(b, "text", "") or getattr(b, "markdown", "") for b in shown.blocks if b.to >= REPORT
    )
    assert (
        "Evaluation during training" in report
        and "| selene_piqa acc |" in report
        and "train/evals.svg" in report
    )
    board = [b for b in shown.blocks if getattr(b, "key", None) == "train-evals"]
    assert len(board) == 1 and board[0].to >= PREFECT and "data:image/svg" in board[0].markdown
    received: list[tuple[str, dict[str, Any]]] = []
    events.set_live_listener(lambda kind, p: received.append((kind, p)))
    try:
        watch = _Watch(str(out), steps=STEPS)
        watch.done.set()
        watch.poll()
    finally:
        events.set_live_listener(None)
        watch.finish()
    live = [p for kind, p in received if kind == "train-evals"]
    assert live and live[-1]["step"] == STEPS and "selene_cloze perplexity" in live[-1]["svg"]


def test_ablate_reads_each_variant_s_curve(trained: tuple[Path, str, Path], tmp_path: Path) -> None:
    from selene.ablate import compare
    from selene.ablate.config import AblationConfig
    from selene.train import eval_curves

    curves = eval_curves.curves(read_metrics(str(trained[0] / "metrics.jsonl")))
    assert [s for s, _ in curves["selene_piqa acc"]] == [2, 4]
    shifted = {k: [(s, v + 0.5) for s, v in pts] for k, pts in curves.items()}
    runs = [{"seed": 1, "metrics": {"m": 1.0}, "stderr": {}, "curves": curves},
            {"seed": 2, "metrics": {"m": 1.1}, "stderr": {}, "curves": shifted}]  # fmt: skip
    records = [{"name": "a", "overrides": {}, "documents": 1, "tokens": 2, "runs": runs},
               {"name": "b", "overrides": {"x": 1}, "documents": 1, "tokens": 2, "runs": runs[:1]}]  # fmt: skip
    cfg = AblationConfig(
        pipeline="p.yaml", out=str(tmp_path), variants={"a": {}, "b": {"x": 1}}, seeds=[1, 2]
    )
    result = compare.summarize(cfg, records)
    mean = result["variants"][0]["curves"]["selene_piqa acc"]
    assert [s for s, _ in mean] == [2, 4] and mean[0][1] == pytest.approx(
        curves["selene_piqa acc"][0][1] + 0.25
    )
    compare.write(str(tmp_path), result)
    md = (tmp_path / "ablation.md").read_text()
    assert "| step 2 | step 4 |" in md and "| b | selene_cloze acc |" in md and "ablation-curves.svg" in md
    assert (tmp_path / "ablation-curves.svg").read_text().startswith("<svg")
