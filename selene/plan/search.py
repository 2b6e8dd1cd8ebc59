"""Layout search: every TP × PP × DP × micro-batch × virtual stages × recomputation × sharding that is
legal for the model and the batch, estimated (`cost.estimate`), the ones that fit ranked by time per
iteration (then memory).

Legal: TP divides the heads (query and key/value) and the FFN width and stays inside a node;
PP ≤ layers; DP = GPUs/(TP·PP) and divides the global batch with the micro-batch; interleaving (v > 1)
needs layers divisible by PP·v and micro-batches divisible by PP (Megatron's and PyTorch's interleaved
1F1B). Pins (a given TP, recomputation, ...) restrict the search to them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from selene.errors import ConfigError
from selene.plan.cost import Estimate, Layout, Shape, estimate
from selene.plan.devices import DeviceSpec

RECOMPUTE = ("none", "selective", "full")
SHARDING = ("replicate", "zero2", "zero3")
MICRO_BATCHES = (1, 2, 4, 8)
MAX_VIRTUAL = 8


def default_global_batch(seq: int) -> int:
    """About 4M tokens per batch (GPT-3 175B used 3.2M, Llama 2 4M), a power of two in sequences."""
    return 2 ** max(0, round(math.log2(4 * 2**20 / seq)))


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


@dataclass(frozen=True)
class Pins:
    """Fixed values for some dimensions (None: search it)."""

    tp: int | None = None
    pp: int | None = None
    micro_batch: int | None = None
    virtual: int | None = None
    recompute: str | None = None
    sharding: str | None = None
    sequence_parallel: bool = True
    float8: str | None = None  # every layout with float8 linears of this recipe (not searched)

    def allow(self, name: str, value: Any) -> bool:
        pinned = getattr(self, name)
        return pinned is None or pinned == value


def layouts(shape: Shape, gpus: int, global_batch: int, dev: DeviceSpec, pins: Pins = Pins()) -> Iterator[Layout]:
    for tp in _divisors(gpus):
        if not pins.allow("tp", tp):
            continue
        split = shape.heads % tp or shape.kv_heads % tp or shape.ffn % tp
        if pins.tp is None and (tp > dev.gpus_per_node or split):
            continue
        for pp in _divisors(gpus // tp):
            if pp > shape.layers or not pins.allow("pp", pp):
                continue
            dp = gpus // (tp * pp)
            for mb in (pins.micro_batch,) if pins.micro_batch else MICRO_BATCHES:
                if global_batch % (dp * mb):
                    continue
                m = global_batch // (dp * mb)
                for v in _virtual(shape.layers, pp, m, pins):
                    for rc in RECOMPUTE:
                        if not pins.allow("recompute", rc):
                            continue
                        for sh in SHARDING if dp > 1 else ("replicate",):
                            if pins.allow("sharding", sh):
                                yield Layout(tp, pp, dp, mb, rc, sh, v, pins.sequence_parallel and tp > 1, float8=pins.float8)  # type: ignore[arg-type]


def _virtual(layers: int, pp: int, m: int, pins: Pins) -> list[int]:
    if pins.virtual is not None:
        return [pins.virtual]
    if pp == 1 or m % pp:
        return [1]
    return [1] + [v for v in range(2, MAX_VIRTUAL + 1) if layers % (pp * v) == 0]


@dataclass
class SearchResult:
    ranked: list[Estimate]  # layouts that fit, fastest first
    considered: int
    smallest: Estimate | None  # the layout needing least memory, when none fits
    notes: list[str] = field(default_factory=list)


def search(
    shape: Shape,
    gpus: int,
    global_batch: int,
    dev: DeviceSpec,
    pins: Pins = Pins(),
    tflops: float | None = None,
) -> SearchResult:
    fits: list[Estimate] = []
    smallest: Estimate | None = None
    considered = 0
    for lay in layouts(shape, gpus, global_batch, dev, pins):
        considered += 1
        est = estimate(shape, lay, global_batch, dev, tflops)
        if est.fits:
            fits.append(est)
        elif smallest is None or est.memory["total"] < smallest.memory["total"]:
            smallest = est
    if considered == 0:
        raise ConfigError(
            f"no legal layout for {gpus} GPUs and global batch {global_batch}: the batch must divide by "
            f"DP × micro-batch for some TP × PP × DP = {gpus} (TP ≤ {dev.gpus_per_node}, dividing "
            f"{_heads(shape)} and FFN {shape.ffn}; PP ≤ {shape.layers} layers){_pins_text(pins)}"
        )
    fits.sort(key=lambda e: (e.iteration_s, e.memory["total"]))
    return SearchResult(fits, considered, None if fits else smallest)


def _heads(shape: Shape) -> str:
    kv = f" and {shape.kv_heads} key/value heads" if shape.kv_heads != shape.heads else ""
    return f"{shape.heads} heads{kv}"


def _pins_text(pins: Pins) -> str:
    given = [f"{k}={v}" for k, v in vars(pins).items() if v is not None and k not in ("sequence_parallel", "float8")]
    return f"; pinned: {', '.join(given)}" if given else ""


def rank_of(result: SearchResult, match: dict[str, Any]) -> int | None:
    """1-based rank of the first ranked layout whose fields equal `match` (e.g. {"tp": 8, "pp": 35})."""
    for i, est in enumerate(result.ranked, 1):
        if all(getattr(est.layout, k) == v for k, v in match.items()):
            return i
    return None

