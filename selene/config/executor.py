"""Where the data stages' parallel steps run: one section for every stage."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from selene.config.base import Strict


class ExecutorConfig(Strict):
    """Where the data stages' parallel steps run: one setting for every stage, not a copy per stage.

    How a stage runs never changes what it writes: outputs are byte-identical for any kind and any
    number of workers, so these settings are left out of the stages' fingerprints.
    """

    kind: Literal["processes", "threads", "dask"] = Field(
        default="processes",
        description="processes or threads on this machine, or dask: a LocalCluster of `workers` "
        "processes, or the scheduler at `address`.",
    )
    workers: int = Field(default=1, ge=1, description="Parallel workers over files and shards.")
    address: str | None = Field(default=None, description="tcp://host:8786 of a running Dask scheduler.")
    memory_gb: float = Field(
        default=4.0,
        gt=0,
        description="Memory the data stages may use, all workers together (GiB). Steps that hold "
        "corpus-wide state size their buckets, runs and buffers to it; outputs do not depend on it.",
    )

    @model_validator(mode="after")
    def _address_needs_dask(self) -> ExecutorConfig:
        if self.address and self.kind != "dask":
            raise ValueError(f"`address` is a Dask scheduler's; it needs kind: dask (kind is {self.kind!r})")
        return self
