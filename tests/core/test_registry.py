"""The stage declarations: every import path resolves, and each data stage's declared manifest is
the model its run writes (a typo in the registry fails here, not when a user runs the stage)."""

from __future__ import annotations

import inspect
import sys
import typing

from selene import registry


def test_every_declared_part_loads() -> None:
    for stage in registry.STAGES:
        parts = (stage.config, stage.run, stage.manifest, stage.preflight, stage.view,
                 stage.command, stage.renew, *(o.parse for o in stage.options if isinstance(o.parse, str)))
        for path in parts:
            if path is not None:
                assert registry.load(path) is not None, (stage.name, path)
        params = inspect.signature(stage.run_fn()).parameters
        assert {"mapper", "force"} <= set(params), stage.name
        assert ("inp" in params) == (stage.reads != "sources"), stage.name


def test_declared_manifest_is_the_stage_s_own() -> None:
    for stage in registry.STAGES:
        if stage.manifest is None:
            assert stage.writes in ("checkpoint", "evaluation"), stage.name
            continue
        model = registry.load(stage.manifest)
        assert model.model_fields["stage"].default == stage.name, stage.name
        run = stage.run_fn()
        result = typing.get_type_hints(run, vars(sys.modules[run.__module__]))["return"]
        assert typing.get_args(result) == (model,), (stage.name, result)


def test_options_set_fields_of_the_stage_config() -> None:
    for stage in registry.STAGES:
        fields = stage.config_model().model_fields
        for opt in stage.options:
            assert opt.field in fields, (stage.name, opt.flags)
