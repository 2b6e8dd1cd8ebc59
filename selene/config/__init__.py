"""Configuration: the strict base model, YAML loading with errors that name the line, and the
executor section. Each stage's settings live in its own package (`selene.dedup.config` ...); the
pipeline file, composed from the registry's stages, is `selene.config.pipeline`."""

from selene.config.base import (
    StageConfig,
    Strict,
    dump_config,
    format_validation_error,
    model_at,
    with_overrides,
)
from selene.config.executor import ExecutorConfig
from selene.config.files import load_yaml, parse_yaml, read_config_text

__all__ = [
    "ExecutorConfig",
    "StageConfig",
    "Strict",
    "dump_config",
    "format_validation_error",
    "load_yaml",
    "model_at",
    "parse_yaml",
    "read_config_text",
    "with_overrides",
]
