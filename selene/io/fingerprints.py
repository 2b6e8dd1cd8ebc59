"""What decides whether a stage's output can be reused (`selene.io.dataset.open_output`): the
fingerprint of its inputs and of the settings that change it. Work directories are named by it too,
so a changed setting never picks up stale work files."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def settings(cfg: Any, *exclude: str) -> dict[str, Any]:
    """A stage config's settings that change its output (how it runs lives in `ExecutorConfig`)."""
    return dict(cfg.model_dump(mode="json", exclude=set(exclude)))


def of(*parts: Any) -> str:
    """A short, stable identity of JSON-serialisable inputs and settings (work dirs, skip checks)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]
