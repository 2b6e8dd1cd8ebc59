"""Where `selene export` may write: what it checks before anything loads (torch, the checkpoint), so
that an output it must not touch is refused at once, and again in `selene.eval.export.export_hf`."""

from __future__ import annotations

import json
import os

from selene.errors import PathError

# Written last into every export: what `--overwrite` recognises as a previous export (and nothing else).
EXPORT_MARKER = "selene_export.json"


def is_export(path: str) -> bool:
    """`path` is a directory that `export_hf` wrote: its marker is there and names a checkpoint."""
    try:
        with open(os.path.join(path, EXPORT_MARKER)) as f:
            marker = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and "checkpoint" in marker


def check_output(out_dir: str, overwrite: bool, checkpoint: str) -> None:
    """`out_dir` may be written: absent, empty, or (with `overwrite`) a previous export. Anything
    else is refused before anything is deleted or loaded (`PathError`, exit 2), naming what is there:
    `--overwrite` on a training directory must not take its checkpoints and metrics with it."""
    if not os.path.lexists(out_dir):
        return
    if not os.path.isdir(out_dir):
        raise PathError(f"{out_dir} exists and is not a directory; choose another --output")
    names = sorted(os.listdir(out_dir))
    if not names:
        return
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    if not overwrite:
        raise PathError(
            f"{out_dir} exists and is not empty ({shown}); give --overwrite to replace a previous export, or choose another --output"
        )
    if not is_export(out_dir):
        raise PathError(
            f"{out_dir} is not a selene export (no {EXPORT_MARKER}; it holds {shown}): --overwrite replaces a "
            "previous export and nothing else, so nothing was deleted; choose another --output"
        )
    here, ckpt = os.path.realpath(out_dir), os.path.realpath(checkpoint)
    if os.path.commonpath([here, ckpt]) == here:
        raise PathError(
            f"{out_dir} contains the checkpoint being exported ({checkpoint}); choose another --output"
        )
