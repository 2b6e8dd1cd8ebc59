"""What every checkpoint module names: the files of a step directory beside the DCP ones, and what
an error about a damaged or unwritten step tells the user to do."""

from __future__ import annotations

META = "meta.json"
DCP_METADATA = ".metadata"  # torch.distributed.checkpoint's index of the tensors and their files
DAMAGED = (
    "this checkpoint is damaged: use an earlier step-NNNNNN directory (or delete this one to resume from the one before)"
)
UNWRITTEN = (
    "this step is left unfinished (no meta.json), so nothing takes it for a checkpoint: free space or fix "
    "permissions, then rerun `selene train` to resume from the last finished step"
)


def short_error(e: BaseException) -> str:
    """`e` in one line: its type and the first line of its message."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")
