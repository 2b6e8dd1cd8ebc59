"""A pipeline file: the run's name, directory, seed and executor, and one section per stage of the
registry (`selene.registry.STAGES`), each validated by that stage's own config model.

The model is composed from the registry, so a stage added there is a section here with no other
edit; `pipeline_model()` is the model of the registry as it stands (a test may extend it).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

from selene import registry
from selene.config.base import StageConfig, Strict, format_validation_error
from selene.config.executor import ExecutorConfig
from selene.config.files import load_yaml
from selene.errors import ConfigError

# Keys a stage section may not hold because they belong to the run's one `executor` section.
EXECUTOR_KEYS = ("workers", "executor", "dask_address")


def _seeded(model: type[BaseModel], path: str) -> Iterator[str]:
    """Dotted paths, below `path`, of the sections of `model` with a `seed` of their own."""
    if "seed" in model.model_fields:
        yield path
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, Strict):
            yield from _seeded(ann, f"{path}.{name}")


def seeded_sections(stages: tuple[registry.Stage, ...] | None = None) -> tuple[str, ...]:
    """The sections of a pipeline file with a `seed` of their own (dotted: a part of a section)."""
    return tuple(p for s in (registry.STAGES if stages is None else stages) for p in _seeded(s.config_model(), s.name))


class PipelineBase(Strict):
    """What every pipeline file has besides its stage sections."""

    name: str = Field(default="selene", description="Run name, shown in Prefect.")
    run_dir: str = Field(description="Directory (or fsspec URL) every stage writes under.")
    seed: int = Field(default=1234, description="When set, the seed of every stage's `seed` the file leaves unset.")
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)

    def stage_dir(self, stage: str) -> str:
        return f"{self.run_dir.rstrip('/')}/{stage}"

    def section(self, stage: str) -> Any:
        """The settings of `stage` (its config model)."""
        return getattr(self, stage)

    @classmethod
    def stage_names(cls) -> list[str]:
        return [n for n in cls.model_fields if n not in PipelineBase.model_fields]

    @model_validator(mode="after")
    def _seed_stages(self) -> PipelineBase:
        """The file's top-level `seed` goes to each seeded section that does not set its own (a
        section's default is not its own choice: `model_fields_set` tells them apart), so the stages
        use it and their manifests record it. Without a top-level `seed`, each section keeps its own
        default (dedup's MinHash seed is 1, datasketch's)."""
        if "seed" in self.model_fields_set:
            for path in _seeded_of(type(self)):
                section: Any = self
                for name in path.split("."):
                    section = getattr(section, name)
                if "seed" not in section.model_fields_set:
                    section.seed = self.seed
        return self

    @model_validator(mode="before")
    @classmethod
    def _executor_keys(cls, data: Any) -> Any:
        """A stage section that sets workers or an executor gets the section where they belong."""
        if isinstance(data, dict):
            for stage in cls.stage_names():
                sec = data.get(stage)
                keys = sorted(k for k in EXECUTOR_KEYS if isinstance(sec, dict) and k in sec)
                if keys:
                    raise ValueError(
                        f"{stage}.{keys[0]} moved to the top-level `executor` section (one executor for every "
                        "stage): executor: {kind: processes, workers: 4}; dask_address is executor.address"
                    )
        return data


def _seeded_of(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(p for n in model.model_fields if n not in PipelineBase.model_fields for p in _seeded(model.model_fields[n].annotation, n))  # type: ignore[arg-type]


@cache
def _compose(stages: tuple[registry.Stage, ...]) -> type[PipelineBase]:
    seeded = seeded_sections(stages)
    fields: dict[str, Any] = {
        "seed": (
            int,
            Field(
                default=1234,
                description="When set, the seed of every stage's `seed` the file leaves unset: "
                + ", ".join(f"{s}.seed" for s in seeded) + ".",
            ),
        ),
    }
    for s in stages:
        model = s.config_model()
        if not issubclass(model, StageConfig):
            raise TypeError(f"stage {s.name}: its config {s.config} is not a selene.config.StageConfig")
        fields[s.name] = (model, Field(default_factory=model))
    return create_model(
        "PipelineConfig",
        __base__=PipelineBase,
        __doc__="The whole pipeline: `selene run FILE` writes each stage into ``<run_dir>/<stage>/``.",
        __module__=__name__,
        **fields,
    )


def pipeline_model() -> type[PipelineBase]:
    """The pipeline file's model for the registry's stages."""
    return _compose(registry.STAGES)


if TYPE_CHECKING:

    class PipelineConfig(PipelineBase):
        def __getattr__(self, name: str) -> Any: ...

else:
    PipelineConfig = pipeline_model()


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """Load and validate a pipeline YAML file; relative `run_dir` and source globs stay as written."""
    data, lines = load_yaml(path)
    try:
        return cast("PipelineConfig", pipeline_model().model_validate(data))
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where=str(path), lines=lines, root=pipeline_model())) from None


def load_stage_config(path: str | Path | None, model: type[Strict], section: str) -> Any:
    """A stage config from FILE: either a pipeline file (its `section`) or a file of that stage alone."""
    return load_stage_files(path, model, section)[0]


def load_stage_files(path: str | Path | None, model: type[Strict], section: str) -> tuple[Any, ExecutorConfig]:
    """(stage config, executor) from FILE: a pipeline file (its `section` and `executor`), or a file of
    that stage's settings alone, optionally with an `executor` section of its own."""
    if path is None:
        return model(), ExecutorConfig()
    data, lines = load_yaml(path)
    if "run_dir" in data:
        try:
            cfg = pipeline_model().model_validate(data)
        except ValidationError as e:
            raise ConfigError(format_validation_error(e, where=str(path), lines=lines, root=pipeline_model())) from None
        return cfg.section(section), cfg.executor
    body_lines = lines
    if set(data) <= {section, "executor"} and section in data:  # {dedup: {...}, executor: {...}}
        data = {**(data[section] or {}), **({"executor": data["executor"]} if "executor" in data else {})}
        body_lines = _under(lines, section)
    body = {k: v for k, v in data.items() if k != "executor"}
    try:
        ex = ExecutorConfig.model_validate(data.get("executor") or {})
    except ValidationError as e:
        raise ConfigError(
            format_validation_error(e, where=f"{path} (executor)", lines=_under(lines, "executor"), root=ExecutorConfig)
        ) from None
    try:
        return model.model_validate(body), ex
    except ValidationError as e:
        raise ConfigError(
            format_validation_error(e, where=f"{path} ({section} settings)", lines=body_lines, root=model)
        ) from None


def _under(lines: dict[tuple, int], key: str) -> dict[tuple, int]:
    """The lines of the settings under top-level `key`, by their path within it (as a section is
    validated on its own: an error's location starts inside it)."""
    return {p[1:]: n for p, n in lines.items() if p[:1] == (key,) and len(p) > 1}


