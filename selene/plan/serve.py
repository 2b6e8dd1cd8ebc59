"""`selene plan serve`: analytic planner of inference serving layouts (TP × PP × replicas × batch).

The entry point: the length options (`read_lengths`) and the plan (`make_serve_plan`). The model of
memory and time is `selene.plan.serve_cost`, calibration files `selene.plan.serve_calibration`, the
layout search and ranking `selene.plan.serve_search`, the console table `selene.plan.serve_render`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict
from pathlib import Path
from typing import Any

from selene.errors import ConfigError
from selene.plan.serve_cost import (
    DTYPE_BYTES,
    MAX_BATCH,
    PREFILL_CHUNK_TOKENS,
    RESERVE_FRACTION,
    ServeRequest,
    percentile,
)
from selene.plan.serve_search import search, select


def read_lengths(value: str, option: str) -> tuple[int, tuple[int, ...] | None]:
    """`--prompt` / `--output`: a number of tokens, or a file of lengths (a JSON list, or one number per
    line: lengths of real requests, e.g. from a log) -> (its median, the lengths); a ConfigError names
    the file and line otherwise."""
    if value.strip().isdigit():
        return int(value), None
    path = Path(value)
    if not path.is_file():
        raise ConfigError(f"{option} {value!r}: not a number of tokens and no such file")
    text = path.read_text(encoding="utf-8", errors="replace")
    lengths: list[int] = []
    if text.lstrip().startswith("["):
        import json

        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(
                f"{option} {path}: not a JSON list of lengths ({e.msg}, line {e.lineno})"
            ) from None
        for i, x in enumerate(raw):
            if not isinstance(x, int) or isinstance(x, bool) or x < 1:
                raise ConfigError(f"{option} {path}: item {i} is {x!r}, not a length of at least 1 token")
            lengths.append(x)
    else:
        for n, line in enumerate(text.splitlines(), 1):
            field = line.split("#")[0].strip()
            if not field:
                continue
            if not field.isdigit() or int(field) < 1:
                raise ConfigError(
                    f"{option} {path}, line {n}: {line.strip()!r} is not a length of at least 1 token"
                )
            lengths.append(int(field))
    if not lengths:
        raise ConfigError(f"{option} {path}: no lengths in the file")
    values = tuple(lengths)
    return percentile(values, 50), values


def _summary(values: tuple[int, ...] | None) -> dict[str, float] | None:
    if not values:
        return None
    return {"n": len(values), "mean": statistics.fmean(values), "p50": percentile(values, 50), "p99": percentile(values, 99),
            "max": max(values)}  # fmt: skip


def make_serve_plan(req: ServeRequest) -> dict[str, Any]:
    """The plan of `selene plan serve --json`: the model, the device, the request, and the layouts
    (`selene.plan.serve_search`), each with its latency, throughput and memory."""
    s, dev = req.model.shape, req.device
    found = search(req)
    rows = found.rows
    chosen = select(req, rows)
    m = req.model
    return {
        "model": {
            **asdict(s),
            "kv_heads": m.kv_heads,
            "head_dim": m.head_dim,
            "params": m.params,
            "kv_bytes_per_token": m.kv_bytes_per_token(DTYPE_BYTES[req.kv_dtype]),
        },
        "device": asdict(dev),
        "gpus": req.gpus,
        "prompt": req.prompt,
        "output": req.output,
        "lengths": None
        if not (req.prompt_lengths or req.output_lengths)
        else {
            "prompt": _summary(req.prompt_lengths),
            "output": _summary(req.output_lengths),
            "kv_tokens_per_sequence": req.kv_tokens,
            "target_percentile": req.target_percentile,
        },
        "weights_dtype": req.weights_dtype,
        "kv_dtype": req.kv_dtype,
        "targets": {"ttft_ms": req.ttft_ms, "itl_ms": req.itl_ms, "min_tokens_per_s": req.min_tokens_per_s},
        "ranking": chosen.ranking,
        "considered_layouts": found.considered,
        "fitting_rows": len(rows),
        "meets_target": chosen.meets_target,
        "layouts": chosen.layouts,
        "closest": chosen.closest,
        "smallest_if_none_fits": found.smallest if not rows else None,
        "constants": {
            "reserve_fraction": RESERVE_FRACTION,
            "decode_hbm_efficiency": req.efficiency.decode_hbm,
            "prefill_chunk_tokens": PREFILL_CHUNK_TOKENS,
            "max_batch": MAX_BATCH,
        },
    }
