"""A checkpoint's DCP index (``.metadata``) against what is to be loaded, before a byte of weights is
read: every tensor of the model present with its shape, no tensor the model lacks, every file the
index names present and long enough."""

from __future__ import annotations

import os
import re
import typing

from torch.distributed.checkpoint import FileSystemReader
from torch.distributed.checkpoint.metadata import Metadata, TensorStorageMetadata

from selene.errors import InputError, SeleneError
from selene.train.checkpoint_files import DAMAGED, DCP_METADATA, short_error


def read_dcp_metadata(path: str) -> Metadata:
    """DCP's index of the checkpoint at `path`; `InputError` naming ``.metadata`` when it cannot be read."""
    md_path = os.path.join(path, DCP_METADATA)
    if not os.path.exists(md_path):
        raise InputError(f"{md_path}: not found (the index of the checkpoint's tensors); {DAMAGED}")
    try:
        md = FileSystemReader(path).read_metadata()
    except Exception as e:  # a pickle of garbage raises anything: UnpicklingError, EOFError, ValueError ...
        raise InputError(f"{md_path}: unreadable ({short_error(e)}); {DAMAGED}") from None
    if not isinstance(md, Metadata) or not isinstance(getattr(md, "state_dict_metadata", None), dict):
        raise InputError(f"{md_path}: not a torch.distributed.checkpoint index; {DAMAGED}")
    return md


def check_files(path: str, md: Metadata) -> None:
    """Every data file the index names exists and holds the byte ranges the index gives it."""
    need: dict[str, int] = {}
    for info in (md.storage_data or {}).values():
        rel = getattr(info, "relative_path", None)
        if rel is None:
            continue
        need[rel] = max(need.get(rel, 0), int(info.offset) + int(info.length))
    for rel, n in sorted(need.items()):
        f = os.path.join(path, rel)
        try:
            size = os.path.getsize(f)
        except OSError:
            raise InputError(f"{f}: not found, but {os.path.join(path, DCP_METADATA)} lists it; {DAMAGED}") from None
        if size < n:
            raise InputError(f"{f}: truncated: {size} bytes, but the checkpoint's index needs {n}; {DAMAGED}")


def check_tensors(
    path: str, md: Metadata, expected: dict[str, tuple[int, ...]], what: str, error: type[SeleneError] = InputError,
    hint: str = "",
) -> None:
    """The checkpoint's model tensors are exactly `expected` (names and shapes), or `error` naming the
    differences, the checkpoint's side first."""
    have = {k: tuple(v.size) for k, v in md.state_dict_metadata.items()
            if k.startswith("model.") and isinstance(v, TensorStorageMetadata)}  # fmt: skip
    problems: list[str] = []
    layers_have, layers_want = _layers(have), _layers(expected)
    if layers_have != layers_want:
        problems.append(f"n_layers: checkpoint {layers_have}, {what} {layers_want}")
    # tensors of the layers only one side has are covered by the n_layers line
    beyond = {k for k in set(have) ^ set(expected) if (i := _layer_of(k)) is not None and i >= min(layers_have, layers_want)}
    missing = sorted(set(expected) - set(have) - beyond)
    extra = sorted(set(have) - set(expected) - beyond)
    for k in sorted(set(have) & set(expected)):
        if have[k] != expected[k]:
            problems.append(f"{k[6:]}: checkpoint {list(have[k])}, {what} {list(expected[k])}")
    if missing:
        problems.append(f"missing from the checkpoint: {_names(missing)}")
    if extra:
        problems.append(f"only in the checkpoint: {_names(extra)}")
    if problems:
        shown = problems[:6] + ([f"... {len(problems) - 6} more"] if len(problems) > 6 else [])
        tail = f". {hint}" if hint else ""
        raise error(f"checkpoint {path} holds another model than {what}: " + "; ".join(shown) + tail)


_LAYER = re.compile(r"^model\.layers\.(\d+)\.")


def _layer_of(key: str) -> int | None:
    m = _LAYER.match(key)
    return int(m.group(1)) if m else None


def _layers(keys: typing.Iterable[str]) -> int:
    found = [i for k in keys if (i := _layer_of(k)) is not None]
    return max(found) + 1 if found else 0


def _names(keys: list[str]) -> str:
    short = [k[6:] for k in keys]
    return ", ".join(short[:4]) + (f" and {len(short) - 4} more" if len(short) > 4 else "")
