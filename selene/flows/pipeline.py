"""`pipeline_flow`: the whole pipeline as one Prefect flow, each stage a sub-flow.

Stages write into ``<run_dir>/<stage>/`` and read the previous stage's directory; a stage whose
manifest matches its inputs and config is skipped. Decontamination runs when tasks are configured,
blending when weights or epochs are; tokenization, training and evaluation always.
"""

from __future__ import annotations

from typing import Any

from prefect import flow

from selene.config import PipelineConfig
from selene.flows.blend import blend_flow
from selene.flows.decontam import decontam_flow
from selene.flows.dedup import dedup_flow
from selene.flows.eval import eval_flow
from selene.flows.ingest import ingest_flow
from selene.flows.runtime import runner_for
from selene.flows.tokenize import tokenize_flow
from selene.flows.train import train_flow


@flow(name="selene-pipeline", log_prints=True, validate_parameters=False)
def pipeline_flow(cfg: PipelineConfig, force: bool = False) -> dict[str, Any]:
    results: dict[str, Any] = {}
    ingest = ingest_flow.with_options(task_runner=runner_for(cfg.ingest))
    results["ingest"] = ingest(cfg.stage_dir("ingest"), cfg.ingest, force=force)
    dedup = dedup_flow.with_options(task_runner=runner_for(cfg.dedup))
    results["dedup"] = dedup(cfg.stage_dir("ingest"), cfg.stage_dir("dedup"), cfg.dedup, force=force)
    last = "dedup"
    if cfg.decontaminate.tasks:
        decontam = decontam_flow.with_options(task_runner=runner_for(cfg.decontaminate))
        results["decontaminate"] = decontam(
            cfg.stage_dir(last), cfg.stage_dir("decontaminate"), cfg.decontaminate, force=force
        )
        last = "decontaminate"
    if cfg.blend.weights or cfg.blend.epochs:
        blend = blend_flow.with_options(task_runner=runner_for(cfg.blend))
        results["blend"] = blend(cfg.stage_dir(last), cfg.stage_dir("blend"), cfg.blend, force=force)
        last = "blend"
    tokenize = tokenize_flow.with_options(task_runner=runner_for(cfg.tokenize))
    results["tokenize"] = tokenize(cfg.stage_dir(last), cfg.stage_dir("tokenize"), cfg.tokenize, force=force)
    train_cfg = cfg.train.model_copy(deep=True)
    if not train_cfg.data.prefixes:
        train_cfg.data.prefixes = [f"{cfg.stage_dir('tokenize')}/{cfg.tokenize.prefix}"]
    results["train"] = train_flow(train_cfg, train_cfg.out or cfg.stage_dir("train"), train_cfg.nproc_per_node)
    checkpoint = cfg.eval.checkpoint or results["train"]["checkpoint"]
    results["eval"] = eval_flow(cfg.eval, checkpoint, cfg.stage_dir("eval"), force=force)
    return results
