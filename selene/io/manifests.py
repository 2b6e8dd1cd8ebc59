"""Reading a stage's ``manifest.json`` back: the stage's own model, chosen by the file's `stage`.

Each stage names its manifest model in the registry (`Stage.manifest`); a manifest this selene
cannot read is an `InputError` that names the file, the versions or the dotted fields at fault.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from selene import __version__, registry
from selene.errors import InputError
from selene.manifest import MANIFEST_VERSION, UNVERSIONED, StageManifest

_RERUN = "rerun the stage with --force to rewrite it"


def manifest_models() -> dict[str, type[StageManifest]]:
    """Stage name → the model of its manifest, for the stages that write one."""
    return {s.name: s.manifest.load() for s in registry.STAGES if s.manifest}


def parse_manifest(data: Any, where: str) -> StageManifest:
    """The typed manifest in `data` (the parsed JSON of the file `where`); `InputError` when this
    selene cannot read it, naming the file, the versions or the dotted fields at fault."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: not a selene manifest (a JSON object was expected); {_RERUN}")
    wrote = data.get("selene_version")
    by = f"selene {wrote}" if isinstance(wrote, str) else "an unknown selene"
    version = data.get("manifest_version", UNVERSIONED)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(
            f"{where}: manifest_version: got {version!r}, expected a whole number >= 1; {_RERUN}"
        )
    if version > MANIFEST_VERSION:
        raise InputError(
            f"{where}: written by {by} with manifest version {version}; this selene ({__version__}) reads "
            f"manifest versions <= {MANIFEST_VERSION}. Upgrade selene, or {_RERUN}."
        )
    models = manifest_models()
    stage = data.get("stage")
    if stage is None or stage not in models:
        problem = "missing;" if stage is None else f"got {stage!r},"
        raise InputError(
            f"{where}: this selene ({__version__}) cannot read this manifest (written by {by}, "
            f"perhaps edited since); {_RERUN}.\n  stage: {problem} expected one of {', '.join(models)}"
        )
    try:
        return models[stage].model_validate(data)
    except ValidationError as e:
        problems = "\n".join(_problem(err) for err in e.errors())
        raise InputError(
            f"{where}: this selene ({__version__}) cannot read this manifest (written by {by}, "
            f"perhaps edited since); {_RERUN}.\n{problems}"
        ) from None


def _problem(err: Any) -> str:
    field = ".".join(str(p) for p in err["loc"]) or "<top level>"
    shown = "" if err["type"] == "missing" else f" got {_short(err.get('input'))}:"
    return f"  {field}:{shown} {err['msg']}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
