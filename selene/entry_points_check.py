"""For mypy: each registered stage's parts, held as the protocols its registry entry declares, with the
stage's own input, config and manifest types, so that a run, check, renewal or command whose
signature does not fit fails ``mypy``.

The registry names these parts by import path and so imports none of them; this module imports them
all, which is why nothing in selene imports it. tests/core/test_registry.py holds it to the registry:
every stage has its `Parts` here, each part is the object its path names, and a stage's run is a
`SourcesRun` here exactly when the registry's is a `SourcesRef`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from selene.blend import checks as blend_checks
from selene.blend import view as blend_view
from selene.blend.config import BlendConfig
from selene.blend.manifest import BlendManifest
from selene.blend.stage import run_blend
from selene.decontaminate import checks as decontaminate_checks
from selene.decontaminate import view as decontaminate_view
from selene.decontaminate.config import DecontaminateConfig
from selene.decontaminate.manifest import DecontaminateManifest
from selene.decontaminate.stage import run_decontaminate
from selene.dedup import checks as dedup_checks
from selene.dedup import view as dedup_view
from selene.dedup.config import DedupConfig
from selene.dedup.manifest import DedupManifest
from selene.dedup.stage import run_dedup
from selene.entry_points import Command, DatasetRun, Preflight, Renew, SourcesRun, StageView
from selene.eval import command as eval_command
from selene.eval import view as eval_view
from selene.eval.config import EvalConfig
from selene.eval.stage import run_eval_stage
from selene.ingest import checks as ingest_checks
from selene.ingest import view as ingest_view
from selene.ingest.config import IngestConfig
from selene.ingest.manifest import IngestManifest
from selene.ingest.stage import run_ingest
from selene.manifest import StageManifest
from selene.quality import checks as quality_checks
from selene.quality import command as quality_command
from selene.quality import view as quality_view
from selene.quality.config import QualityConfig
from selene.quality.manifest import QualityManifest
from selene.quality.stage import run_quality
from selene.spans import checks as spans_checks
from selene.spans import view as spans_view
from selene.spans.config import SpansConfig
from selene.spans.manifest import SpansManifest
from selene.spans.stage import run_spans
from selene.substrings import checks as substrings_checks
from selene.substrings import view as substrings_view
from selene.substrings.config import SubstringsConfig
from selene.substrings.manifest import SubstringsManifest
from selene.substrings.stage import run_substrings
from selene.tokenize import checks as tokenize_checks
from selene.tokenize import view as tokenize_view
from selene.tokenize.config import TokenizeConfig
from selene.tokenize.manifest import TokenizeManifest
from selene.tokenize.stage import run_tokenize
from selene.train import command as train_command
from selene.train import renew as train_renew
from selene.train import view as train_view
from selene.train.config import TrainConfig
from selene.train.stage import run_train

I = TypeVar("I")  # noqa: E741
C = TypeVar("C")
M = TypeVar("M", bound=StageManifest)


@dataclass(frozen=True)
class Parts(Generic[I, C, M]):
    """A stage's parts as their protocols: `I` what it takes as input (None: it reads the sources;
    ``str | None``: it may go without, as training does with ``train.data.prefixes``), `C` its config
    model, `M` its manifest model (Any: it writes none)."""

    config: type[C]
    run: DatasetRun[I, C, M] | SourcesRun[C, M]
    manifest: type[M] | None
    preflight: Preflight[I, C] | None = None
    renew: Renew[I, C] | None = None
    view: StageView[M] | None = None
    command: Command | None = None
    subcommands: tuple[Command, ...] = ()


@dataclass(frozen=True)
class SourcesParts(Parts[None, C, M]):
    """A stage that reads the configured sources: its run takes no input."""

    run: SourcesRun[C, M]


PARTS: dict[str, Parts[Any, Any, Any]] = {
    "ingest": SourcesParts[IngestConfig, IngestManifest](
        IngestConfig,
        run_ingest,
        IngestManifest,
        preflight=ingest_checks.check,
        view=ingest_view.view,
    ),
    "quality": Parts[str, QualityConfig, QualityManifest](
        QualityConfig,
        run_quality,
        QualityManifest,
        preflight=quality_checks.check,
        subcommands=(quality_command.train,),
        view=quality_view.view,
    ),
    "dedup": Parts[str, DedupConfig, DedupManifest](
        DedupConfig, run_dedup, DedupManifest, preflight=dedup_checks.check, view=dedup_view.view
    ),
    "spans": Parts[str, SpansConfig, SpansManifest](
        SpansConfig, run_spans, SpansManifest, preflight=spans_checks.check, view=spans_view.view
    ),
    "substrings": Parts[str, SubstringsConfig, SubstringsManifest](
        SubstringsConfig,
        run_substrings,
        SubstringsManifest,
        preflight=substrings_checks.check,
        view=substrings_view.view,
    ),
    "decontaminate": Parts[str, DecontaminateConfig, DecontaminateManifest](
        DecontaminateConfig,
        run_decontaminate,
        DecontaminateManifest,
        preflight=decontaminate_checks.check,
        view=decontaminate_view.view,
    ),
    "blend": Parts[str, BlendConfig, BlendManifest](
        BlendConfig, run_blend, BlendManifest, preflight=blend_checks.check, view=blend_view.view
    ),
    "tokenize": Parts[str, TokenizeConfig, TokenizeManifest](
        TokenizeConfig,
        run_tokenize,
        TokenizeManifest,
        preflight=tokenize_checks.check,
        view=tokenize_view.view,
    ),
    "train": Parts[str | None, TrainConfig, Any](
        TrainConfig,
        run_train,
        None,
        renew=train_renew.renew,
        command=train_command.train,
        view=train_view.view,
    ),
    "eval": Parts[str, EvalConfig, Any](
        EvalConfig, run_eval_stage, None, command=eval_command.eval_, view=eval_view.view
    ),
}
