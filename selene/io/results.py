"""What a stage run returns. Its own module, below the dataset code, so that what only names the
type (the registry's entry-point protocols, the views) does not import the dataset's I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from selene.manifest import StageManifest

M = TypeVar("M", bound=StageManifest)


@dataclass
class StageResult(Generic[M]):
    """What a stage run returns: its output, whether it was complete already, its manifest."""

    out: str
    skipped: bool
    manifest: M | None = None
    info: dict[str, Any] = field(default_factory=dict)
    """What a stage without a manifest reports (training: last metrics and checkpoint; eval: scores)."""

    def summary(self) -> dict[str, Any]:
        """What a stage flow returns (plain data for Prefect): the manifest as its JSON."""
        manifest = self.manifest.to_json() if self.manifest is not None else None
        return {"out": self.out, "skipped": self.skipped, "manifest": manifest, **self.info}
