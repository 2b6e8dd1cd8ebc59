"""The layout search of `selene plan serve`: every legal (TP, PP) layout at every batch that fits,
priced by the cost model (`selene.plan.serve_cost`), then the rows that meet the targets, or the
Pareto front of latency against throughput."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from selene.errors import ConfigError
from selene.plan.serve_cost import (
    KERNELS_PER_FORWARD,
    KERNELS_PER_LAYER,
    MAX_BATCH,
    ServeRequest,
    _Layout,
    fixed_costs,
)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _batches(max_batch: int) -> list[int]:
    out = [b for b in (2**i for i in range(13)) if b < max_batch]
    return [*out, max_batch]


BINDING = {
    "hbm": "HBM bandwidth",
    "compute": "compute",
    "communication": "communication",
    "overhead": "fixed costs",
}


def _row(req: ServeRequest, lay: _Layout, batch: int, max_batch: int) -> dict[str, Any]:
    dev = req.device
    replicas = req.gpus // (lay.tp * lay.pp)
    ttft, ttft_parts, pf_eff = lay.prefill(batch)
    ttft_one, _, _ = lay.prefill(1)
    itl, itl_parts, mode = lay.decode(batch)
    total = replicas * batch / itl
    tails: dict[str, float] = {}
    if req.prompt_lengths or req.output_lengths:  # the 99th percentile of the lengths, the same layout
        tail = _Layout(req.at(99), lay.tp, lay.pp)
        tails = {"ttft_p99_ms": tail.prefill(batch)[0] * 1e3, "itl_p99_ms": tail.decode(batch)[0] * 1e3}
    comm = itl_parts["tp communication"] + itl_parts["pp hand-offs"]
    terms = {
        "hbm": itl_parts["hbm"],
        "compute": itl_parts["compute"],
        "communication": comm,
        "overhead": itl_parts.get("fixed per layer", 0.0) + itl_parts.get("fixed per forward", 0.0),
    }
    decode_bound = BINDING[max(terms, key=lambda k: terms[k])]
    # at the largest batch that fits, memory (KV capacity) is what stops the throughput growing
    binding = "memory" if req.batch is None and batch == max_batch < MAX_BATCH else decode_bound
    per_layer, per_forward = fixed_costs(req)
    if dev.sms and req.efficiency.prefill is None:
        prefill_src = f"GEMM tiles over {dev.sms} SMs at {dev.matmul_efficiency} of peak (matmul_efficiency, selene/plan/devices.py)"
    else:
        prefill_src = req.efficiency.prefill_source or f"device curve ({dev.calibrated_from})"
    return {
        "layout": {
            "tp": lay.tp,
            "pp": lay.pp,
            "replicas": replicas,
            "batch": batch,
            "gpus_per_replica": lay.tp * lay.pp,
        },
        "ttft_ms": ttft * 1e3,
        "ttft_one_ms": ttft_one * 1e3,
        "itl_ms": itl * 1e3,
        **tails,
        "tokens_per_s_per_gpu": total / req.gpus,
        "tokens_per_s_total": total,
        "max_batch_per_replica": max_batch,
        "max_concurrent_sequences": replicas * max_batch,
        "memory_gb": lay.memory(batch),
        "binding": binding,
        "decode_bound": decode_bound,
        "pp_mode": mode,
        "ttft_parts_ms": {k: v * 1e3 for k, v in ttft_parts.items()},
        "itl_parts_ms": {k: v * 1e3 for k, v in itl_parts.items()},
        "efficiency": {
            "prefill": {"fraction_of_peak": pf_eff, "source": prefill_src},
            "decode_hbm": {
                "fraction_of_hbm_bandwidth": req.efficiency.decode_hbm,
                "source": req.efficiency.decode_source,
            },
            "decode_compute": {
                "fraction_of_peak": req.efficiency.decode_compute
                or (dev.matmul_efficiency if dev.sms else dev.max_efficiency),
                "source": req.efficiency.decode_source
                if req.efficiency.decode_compute
                else (
                    f"GEMM tiles of the batch's rows, as prefill ({prefill_src})"
                    if dev.sms
                    else f"device max efficiency ({dev.calibrated_from})"
                ),
            },
            "fixed_costs": {
                "per_layer_s": per_layer,
                "per_forward_s": per_forward,
                "source": req.efficiency.overhead_source
                or (
                    f"kernel launches: {KERNELS_PER_LAYER} per layer, {KERNELS_PER_FORWARD} per forward, "
                    f"{dev.kernel_launch_s * 1e6:g} µs each (selene/plan/devices.py)"
                ),
            },
            "communication": {
                "bus_gbps": min(dev.intra_node_gbps, dev.nvlink_gbps)
                if dev.nvlink_gbps
                else dev.intra_node_gbps,
                "hop_latency_s": dev.nvlink_latency_s or dev.collective_latency_s,
                "source": "selene/plan/devices.py (NCCL bus bandwidth; NVLink data sheet)",
            },
        },
    }


def _tp_ok(req: ServeRequest, tp: int) -> bool:
    s, kv = req.model.shape, req.model.kv_heads
    if req.tp is not None:
        return tp == req.tp
    return (
        tp <= req.device.gpus_per_node
        and not s.heads % tp
        and not s.ffn % tp
        and (not kv % tp or not tp % kv)
    )


def _latency(req: ServeRequest, r: dict[str, Any], key: str) -> float:
    """The row's TTFT or ITL at the percentile the targets apply to (p99 only with distributions)."""
    return float(r.get(f"{key}_p99_ms", r[f"{key}_ms"]) if req.target_percentile == 99 else r[f"{key}_ms"])


def _meets(req: ServeRequest, r: dict[str, Any]) -> bool:
    return (
        (req.ttft_ms is None or _latency(req, r, "ttft") <= req.ttft_ms)
        and (req.itl_ms is None or _latency(req, r, "itl") <= req.itl_ms)
        and (req.min_tokens_per_s is None or r["tokens_per_s_total"] >= req.min_tokens_per_s)
    )


def _shortfall(req: ServeRequest, r: dict[str, Any]) -> float:
    """How far a row misses the targets: the largest ratio by which it misses one (1: meets them)."""
    miss = [1.0]
    if req.ttft_ms is not None:
        miss.append(_latency(req, r, "ttft") / req.ttft_ms)
    if req.itl_ms is not None:
        miss.append(_latency(req, r, "itl") / req.itl_ms)
    if req.min_tokens_per_s is not None:
        miss.append(req.min_tokens_per_s / r["tokens_per_s_total"])
    return max(miss)


def pareto(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows no other row beats on TTFT, ITL and tokens/s per GPU at once, fastest ITL first."""

    def key(r: dict[str, Any]) -> tuple[float, float, float]:
        return (r["ttft_ms"], r["itl_ms"], -r["tokens_per_s_per_gpu"])

    def dominated(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(y <= x for x, y in zip(a, b, strict=True)) and b != a

    keys = [key(r) for r in rows]
    front = [r for r, k in zip(rows, keys, strict=True) if not any(dominated(k, o) for o in keys)]
    return sorted(front, key=lambda r: (r["itl_ms"], -r["tokens_per_s_per_gpu"]))


def _spread(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """`n` rows evenly spaced along `rows`, both ends kept."""
    if len(rows) <= n:
        return rows
    if n == 1:
        return rows[:1]
    idx = sorted({round(i * (len(rows) - 1) / (n - 1)) for i in range(n)})
    return [rows[i] for i in idx]


@dataclass
class Search:
    """What `search` found: the rows of the layouts that fit, how many layouts were legal, and the
    layout closest to fitting when none does."""

    rows: list[dict[str, Any]]
    considered: int
    smallest: dict[str, Any] | None


def search(req: ServeRequest) -> Search:
    """Every legal (TP, PP) layout of the request, each at the batches that fit (or the pinned one)."""
    s, dev = req.model.shape, req.device
    rows: list[dict[str, Any]] = []
    smallest: dict[str, Any] | None = None
    considered = 0
    for tp in _divisors(req.gpus):
        if not _tp_ok(req, tp):
            continue
        for pp in _divisors(req.gpus // tp):
            if pp > s.layers or (req.pp is not None and pp != req.pp):
                continue
            considered += 1
            lay = _Layout(req, tp, pp)
            mb = lay.max_batch()
            batches = [req.batch] if req.batch else _batches(mb)
            if mb == 0 or (req.batch and req.batch > mb):
                mem = lay.memory(req.batch or 1)
                if smallest is None or mem["free"] > smallest["memory_gb"]["free"]:
                    smallest = {"layout": {"tp": tp, "pp": pp, "batch": req.batch or 1}, "memory_gb": mem}
                continue
            rows.extend(_row(req, lay, b, mb) for b in batches)
    if considered == 0:
        raise ConfigError(
            f"no legal layout for {req.gpus} GPUs: TP must divide the {s.heads} heads, the FFN {s.ffn} and "
            f"{req.gpus}, and stay within a node ({dev.gpus_per_node} GPUs); PP ≤ {s.layers} layers"
        )
    return Search(rows, considered, smallest)


@dataclass
class Selection:
    """The rows to show (`layouts`, ranked as `ranking` says); with targets, whether any row meets
    them (`meets_target`, None without targets) and, when none does, the `closest` three."""

    layouts: list[dict[str, Any]]
    ranking: str
    meets_target: bool | None
    closest: list[dict[str, Any]]


def select(req: ServeRequest, rows: list[dict[str, Any]]) -> Selection:
    """With targets: the rows meeting them, best first; without: the Pareto front, spread to `req.top` rows."""
    targeted = any(x is not None for x in (req.ttft_ms, req.itl_ms, req.min_tokens_per_s))
    meeting = [r for r in rows if _meets(req, r)]
    if targeted:
        if req.min_tokens_per_s is not None and req.ttft_ms is None and req.itl_ms is None:
            meeting.sort(key=lambda r: (r["itl_ms"], -r["tokens_per_s_per_gpu"]))
        else:
            meeting.sort(key=lambda r: (-r["tokens_per_s_per_gpu"], r["itl_ms"]))
        layouts, ranking = meeting[: req.top], "meeting the target, best first"
    else:
        front = pareto(rows)
        layouts, ranking = (
            _spread(front, req.top),
            f"Pareto front of TTFT / ITL vs tokens/s per GPU ({len(front)} points)",
        )
    closest = (
        sorted(rows, key=lambda r: (_shortfall(req, r), r["itl_ms"]))[:3] if targeted and not meeting else []
    )
    return Selection(layouts, ranking, bool(meeting) if targeted else None, closest)
