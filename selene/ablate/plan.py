"""From an ablation file to the work: each variant's pipeline, its stage jobs, its proxy runs.

Every variant's data stages write into ``<out>/stages/<stage>-<key>``, where the key is a hash of
the stage's settings and of the key of the stage before it. Two variants whose chains agree up to a
stage share that stage's directory, so it runs once (and a rerun finds it finished: each stage skips
work its manifest already records). The proxy runs go to ``<out>/proxies/<key>/seed-<seed>``, keyed
by the token data's key and the training settings. ``<out>/variants/<name>/`` links to the
directories a variant uses, under their stage names.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from selene import registry
from selene.ablate.config import AblationConfig
from selene.config.base import format_validation_error
from selene.config.files import load_yaml
from selene.config.pipeline import PipelineConfig, pipeline_model
from selene.errors import ConfigError
from selene.pipeline import active_stages

OFF = ("off", False)  # YAML reads a bare `off` as false


def load_ablation(path: str | Path) -> AblationConfig:
    data, lines = load_yaml(path, "ablation file")
    try:
        return AblationConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(
            format_validation_error(e, where=str(path), lines=lines, root=AblationConfig)
        ) from None


def data_stages() -> list[str]:
    """The registry's stages that make the training data: up to the one that writes tokens."""
    names = [s.name for s in registry.STAGES]
    tokens = next(i for i, s in enumerate(registry.STAGES) if s.writes == "tokens")
    return names[: tokens + 1]


def nested(overrides: dict[str, Any], where: str) -> dict[str, Any]:
    """Dotted keys (``quality.fraction: 0.1``) as nested mappings, merged with nested ones."""
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"{where}: setting names are words, got {key!r}")
        parts = key.split(".")
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(
                    f"{where}: {key!r} sets a part of {part!r}, which another key sets to {child!r}"
                )
            node = child
        new = nested(value, f"{where}.{key}") if isinstance(value, dict) else value
        if parts[-1] in node:
            new = _joined(node[parts[-1]], new, f"{where}: {key!r}", ".".join(parts))
        node[parts[-1]] = new
    return out


def _joined(old: Any, new: Any, what: str, path: str) -> Any:
    """Two spellings of one part of a variant (``quality.fraction: 0.1`` and ``quality: {rule: ...}``)
    combined; a setting both give is an error, not the last one silently winning."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        raise ConfigError(
            f"{what} sets {path} to {new!r}, which another key of the variant sets to {old!r}; give each setting once"
        )
    out = dict(old)
    for k, v in new.items():
        out[k] = _joined(out[k], v, what, f"{path}.{k}") if k in out else v
    return out


def merged(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in overrides.items():
        out[k] = (
            merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
        )
    return out


def variant_configs(cfg: AblationConfig, where: str) -> dict[str, PipelineConfig]:
    """Each variant's pipeline: the pipeline file with the ablation's `proxy` and `eval` overrides,
    then the variant's own; an override of a setting that does not exist, of a stage that is not a
    data stage, or `off` for a stage that always runs, is a `ConfigError` naming the variant and key.

    Each file is blamed for its own settings, at the line of the bad value: the pipeline file for
    its own (as `selene config validate` would), the ablation file (`where`) for `proxy:` and
    `eval:`, then for each variant's overrides."""
    base, base_lines = load_yaml(cfg.pipeline, "pipeline file")
    lines = load_yaml(where, "ablation file")[1] if os.path.isfile(where) else {}
    _validate(base, cfg.pipeline, base_lines)
    common = merged(
        base, {"train": nested(cfg.proxy, f"{where}: proxy"), "eval": nested(cfg.eval, f"{where}: eval")}
    )
    shared = {**_lines_under(lines, ("eval",), ("eval",)), **_lines_under(lines, ("proxy",), ("train",))}
    _validate(common, f"{where}: proxy and eval", shared, proxy=True)
    data = data_stages()
    optional = {s.name for s in registry.STAGES if s.active is not None and s.name in data}
    out: dict[str, PipelineConfig] = {}
    for name, overrides in cfg.variants.items():
        at = f"{where}: variant {name!r}"
        changes = nested(overrides, at)
        raw = copy.deepcopy(common)
        off = []
        for stage, value in changes.items():
            if stage not in data:
                also = (
                    " (the proxy is set by `proxy:` and `eval:`, the same for every variant)"
                    if stage in ("train", "eval")
                    else ""
                )
                raise ConfigError(
                    f"{at}: {stage!r} is not a data stage{also}; a variant changes {', '.join(data)}"
                )
            if value in OFF:
                if stage not in optional:
                    raise ConfigError(f"{at}: {stage}: off: {stage} always runs; change its settings instead "
                                      f"(optional stages: {', '.join(sorted(optional))})")  # fmt: skip
                raw.pop(stage, None)
                off.append(stage)
            elif not isinstance(value, dict):
                raise ConfigError(
                    f"{at}: {stage}: expected a mapping of its settings or `off`, got {value!r}"
                )
            else:
                raw[stage] = merged(raw.get(stage) or {}, value)
        pcfg = _validate(raw, at, _lines_under(lines, ("variants", name), ()))
        still = [s for s in off if s in active_stages(pcfg)]
        if still:
            raise ConfigError(f"{at}: {still[0]}: off, yet its default settings make it run")
        out[name] = pcfg
    return out


def _validate(
    raw: dict[str, Any], where: str, lines: dict[tuple, int], proxy: bool = False
) -> PipelineConfig:
    """`raw` as a pipeline config; its errors name `where` and the `lines` of the bad values
    (`proxy`: the `train` section is the ablation's `proxy:`, and is named so)."""
    try:
        pcfg: PipelineConfig = pipeline_model().model_validate(raw)  # type: ignore[assignment]
    except ValidationError as e:
        message = format_validation_error(e, where=where, lines=lines, root=pipeline_model())
        if proxy:
            message = "\n".join(
                "  proxy." + ln.removeprefix("  train.") if ln.startswith("  train.") else ln
                for ln in message.splitlines()
            )
        raise ConfigError(message) from None
    return pcfg


def _lines_under(lines: dict[tuple, int], section: tuple, target: tuple) -> dict[tuple, int]:
    """The lines of the overrides under `section` of the ablation file, by the pipeline key each sets
    (under `target`): dotted keys (``quality.fraction``) are split as `nested` splits them."""
    out: dict[tuple, int] = {}
    for path, line in lines.items():
        if path[: len(section)] == section and len(path) > len(section):
            parts = [q for p in path[len(section) :] for q in (p.split(".") if isinstance(p, str) else [p])]
            out[target + tuple(parts)] = line
    return out


def key_of(*parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass
class StageStep:
    stage: str
    key: str
    inp: str | None
    out: str
    section: Any


@dataclass
class Variant:
    name: str
    cfg: PipelineConfig
    steps: list[StageStep] = field(default_factory=list)

    @property
    def tokens_dir(self) -> str:
        return self.steps[-1].out

    @property
    def tokens_key(self) -> str:
        return self.steps[-1].key


def chain(name: str, cfg: PipelineConfig, out: str) -> Variant:
    """`cfg`'s data stages as steps with content-keyed directories under ``<out>/stages``."""
    variant = Variant(name, cfg)
    prev_key, prev_out = "", None
    for stage in active_stages(cfg):
        if stage not in data_stages():
            continue
        section = cfg.section(stage)
        key = key_of(prev_key, stage, section.model_dump(mode="json"))
        step_out = os.path.join(out, "stages", f"{stage}-{key}")
        variant.steps.append(StageStep(stage, key, prev_out, step_out, section))
        prev_key, prev_out = key, step_out
    return variant


def with_tokenizer(variant: Variant, tokenizer: str, out: str) -> Variant:
    """`variant` tokenizing with the given sentencepiece model (a shared tokenizer), its training
    settings back to their defaults: a given tokenizer takes none (`TokenizeConfig` refuses them)."""
    tok = variant.cfg.section(variant.steps[-1].stage)
    unused = {
        k: type(tok).model_fields[k].get_default(call_default_factory=True)
        for k in getattr(tok, "TRAINING", ())
    }
    cfg = variant.cfg.model_copy(
        update={variant.steps[-1].stage: tok.model_copy(update={"tokenizer": tokenizer, **unused})}
    )
    return chain(variant.name, cfg, out)


def proxy_config(variant: Variant, seed: int) -> Any:
    """The proxy's training settings for `seed`: the variant's `train` section (the same in every
    variant), its data the variant's tokens (read from the tokenize output)."""
    train = variant.cfg.section("train")
    return train.model_copy(
        update={"seed": seed, "out": None, "data": train.data.model_copy(update={"prefixes": []})}
    )


def proxy_dir(variant: Variant, seed: int, out: str) -> str:
    settings = proxy_config(variant, 0).model_dump(mode="json")
    return os.path.join(out, "proxies", key_of(variant.tokens_key, settings), f"seed-{seed}")


def link(out: str, variant: str, name: str, target: str) -> None:
    """``<out>/variants/<variant>/<name>`` → `target` (relative), replacing an older link."""
    folder = os.path.join(out, "variants", variant)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    rel = os.path.relpath(target, folder)
    if os.path.islink(path):
        if os.readlink(path) == rel:
            return
        os.unlink(path)
    os.symlink(rel, path)
