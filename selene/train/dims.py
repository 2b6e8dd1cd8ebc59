"""The parallel layout: pp × dp_replicate × dp_shard × tp processes, validated, and its DeviceMesh.

Like torchtitan's `ParallelDims`: one dataclass resolves `dp_shard = -1` ("whatever is left") and
checks the product against the world size, saying the whole product when it does not match.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.tensor import DTensor

from selene.errors import ConfigError, InternalError

# Outermost first: pipeline stages talk least often, so they may span nodes; tp talks at every
# matmul, so its ranks are adjacent (same node, fastest links).
MESH_DIMS = ("pp", "dp_replicate", "dp_shard", "tp")


@dataclass
class ParallelDims:
    """Degrees of each parallel dimension; `dp_shard` -1 is resolved to world / (pp·dp_replicate·tp)."""

    dp_replicate: int
    dp_shard: int
    tp: int
    pp: int
    world_size: int
    _meshes: dict[str, DeviceMesh] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("dp_replicate", "tp", "pp", "world_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"parallel.{name} must be >= 1, got {getattr(self, name)}")
        if self.dp_shard == -1:
            rest = self.pp * self.dp_replicate * self.tp
            if self.world_size % rest:
                raise ConfigError(
                    f"parallel.dp_shard -1 takes what is left, but pp {self.pp} × dp_replicate "
                    f"{self.dp_replicate} × tp {self.tp} = {rest} does not divide the world size {self.world_size}"
                )
            self.dp_shard = self.world_size // rest
        if self.dp_shard < 1:
            raise ConfigError(f"parallel.dp_shard must be >= 1 or -1 (whatever is left), got {self.dp_shard}")
        product = self.pp * self.dp_replicate * self.dp_shard * self.tp
        if product != self.world_size:
            raise ConfigError(
                f"pp {self.pp} × dp_replicate {self.dp_replicate} × dp_shard {self.dp_shard} × tp {self.tp} "
                f"= {product}, but the world size is {self.world_size}; change the parallel degrees or the "
                "number of processes (or set parallel.dp_shard: -1)"
            )

    @property
    def dp(self) -> int:
        """Data-parallel size: the number of different batch slices per step."""
        return self.dp_replicate * self.dp_shard

    @property
    def dp_enabled(self) -> bool:
        return self.dp > 1

    @property
    def dp_replicate_enabled(self) -> bool:
        return self.dp_replicate > 1

    @property
    def dp_shard_enabled(self) -> bool:
        return self.dp_shard > 1

    @property
    def fsdp_enabled(self) -> bool:
        """All data parallelism goes through FSDP2: sharded (dp_shard), hybrid (HSDP) or replicated only."""
        return self.dp_enabled

    @property
    def tp_enabled(self) -> bool:
        return self.tp > 1

    @property
    def pp_enabled(self) -> bool:
        return self.pp > 1

    def describe(self) -> str:
        """'pp 2 × dp_replicate 1 × dp_shard 2 × tp 2' — for logs and checkpoint metadata."""
        return " × ".join(f"{name} {getattr(self, name)}" for name in MESH_DIMS)

    def build_mesh(self, device_type: str) -> DeviceMesh:
        """The world mesh with dims ("pp", "dp_replicate", "dp_shard", "tp"), plus flattened meshes.

        Every dim exists even when its size is 1, so callers can always ask for "tp" or "dp".
        Flattened: "dp" (dp_replicate × dp_shard), the ranks that see different data, which average
        the loss; "dp_shard_tp", over which FSDP+TP gradients are sharded, so DTensor reduces a
        gradient norm in one all-reduce instead of two. Get them with `get_mesh` (PyTorch deprecates
        slicing flattened dims out of the root mesh). Needs an initialised default process group.
        """
        shape = (self.pp, self.dp_replicate, self.dp_shard, self.tp)
        mesh = init_device_mesh(device_type, shape, mesh_dim_names=MESH_DIMS)
        self._meshes = {name: mesh[name] for name in MESH_DIMS}
        self._meshes["world"] = mesh
        self._meshes["dp"] = mesh["dp_replicate", "dp_shard"]._flatten("dp")
        self._meshes["dp_shard_tp"] = mesh["dp_shard", "tp"]._flatten("dp_shard_tp")
        return mesh

    def submesh(self, mesh: DeviceMesh, name: str) -> DeviceMesh:
        """`get_mesh(name)` when `mesh` is the one `build_mesh` made, else `mesh[name]` (a mesh built elsewhere)."""
        if self._meshes.get("world") is mesh:
            return self.get_mesh(name)
        return mesh[name]

    def get_mesh(self, name: str) -> DeviceMesh:
        """A named 1-D mesh of the last `build_mesh`: a dim of MESH_DIMS, "dp", "dp_shard_tp" or "world"."""
        if not self._meshes:
            raise InternalError("ParallelDims.get_mesh called before build_mesh")
        if name not in self._meshes:
            raise InternalError(f"no mesh {name!r}; known: {', '.join(self._meshes)}")
        return self._meshes[name]


def check_tp_heads(tp: int, n_heads: int, kv_heads: int) -> None:
    """Tensor parallelism splits attention by whole heads: `tp` must divide the query heads and the
    key/value heads (wk and wv are column-parallel over the key/value heads, each rank keeping those
    its query heads are grouped on)."""
    if n_heads % tp:
        raise ConfigError(f"model.n_heads {n_heads} is not divisible by parallel.tp {tp}")
    if kv_heads % tp:
        raise ConfigError(
            f"model.n_kv_heads {kv_heads} is not divisible by parallel.tp {tp}: each tensor-parallel rank "
            f"needs whole key/value heads; use a parallel.tp that divides {kv_heads}, or more key/value heads"
        )


def whole(t: torch.Tensor) -> torch.Tensor:
    """A DTensor made whole (a sharded parameter, a replicated loss or a partial norm), or the tensor itself."""
    return t.full_tensor() if isinstance(t, DTensor) else t
