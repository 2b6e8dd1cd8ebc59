"""The stage declarations: every import path resolves, and each data stage's declared manifest is
the model its run writes (a typo in the registry fails here, not when a user runs the stage)."""

from __future__ import annotations

import inspect
import sys
import typing

import pytest

from selene import registry
from selene.entry_points import DatasetRun, SourcesRef
from selene.registry import Ref, Stage


def test_every_declared_part_loads() -> None:
    for stage in registry.STAGES:
        refs = (stage.config, stage.run, stage.manifest, stage.preflight, stage.view, stage.renew, stage.command,
                *stage.subcommands)
        paths = tuple(o.parse for o in stage.options if isinstance(o.parse, str))
        for ref in refs:
            if ref is not None:
                assert ref.load() is not None, (stage.name, ref.path)
        for path in paths:
            if path is not None:
                assert registry.load(path) is not None, (stage.name, path)
        params = inspect.signature(stage.run.load()).parameters
        assert {"mapper", "force"} <= set(params), stage.name
        assert ("inp" in params) == (stage.reads != "sources"), stage.name


def test_mypy_checks_every_declared_part() -> None:
    """`selene.entry_points_check` (what mypy reads) holds each stage's parts as the protocols the
    registry declares: the same objects, the same kind of run, for every stage."""
    from selene.entry_points_check import PARTS, SourcesParts

    assert set(PARTS) == set(registry.NAMES)
    for stage in registry.STAGES:
        parts = PARTS[stage.name]
        assert isinstance(stage.run, SourcesRef) == isinstance(parts, SourcesParts), stage.name
        assert stage.run.load() is parts.run and stage.config.load() is parts.config, stage.name
        for ref, checked in [(stage.manifest, parts.manifest), (stage.preflight, parts.preflight),
                             (stage.renew, parts.renew), (stage.command, parts.command), (stage.view, parts.view)]:
            assert (ref.load() if ref is not None else None) is checked, (stage.name, ref)
        assert tuple(r.load() for r in stage.subcommands) == parts.subcommands, stage.name


def test_a_sources_run_is_declared_with_reads_sources() -> None:
    with pytest.raises(TypeError, match="SourcesRef"):
        Stage("x", "x", config=Ref("a:b"), run=Ref[DatasetRun]("a:c"), reads="sources", writes="documents", manifest=None)


def test_declared_manifest_is_the_stage_s_own() -> None:
    for stage in registry.STAGES:
        if stage.manifest is None:
            assert stage.writes in ("checkpoint", "evaluation"), stage.name
            continue
        model = stage.manifest.load()
        assert model.model_fields["stage"].default == stage.name, stage.name
        run = stage.run.load()
        result = typing.get_type_hints(run, vars(sys.modules[run.__module__]))["return"]
        assert typing.get_args(result) == (model,), (stage.name, result)


def test_options_set_fields_of_the_stage_config() -> None:
    for stage in registry.STAGES:
        fields = stage.config_model().model_fields
        for opt in stage.options:
            assert opt.field in fields, (stage.name, opt.flags)
