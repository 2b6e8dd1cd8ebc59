"""Console rendering of a `selene plan serve` plan (the dict `make_serve_plan` returns)."""

from __future__ import annotations

from typing import Any


def render(plan: dict[str, Any], console: Any) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    m, dev = plan["model"], plan["device"]
    console.print(
        f"[b]model[/b] {m['params'] / 1e9:,.2f}B parameters ({plan['weights_dtype']}), {m['layers']} layers, hidden "
        f"{m['hidden']}, {m['heads']} heads ({m['kv_heads']} kv); KV cache {m['kv_bytes_per_token'] / 2**20:,.3f} MiB "
        f"per token ({plan['kv_dtype']})"
    )
    console.print(
        f"[b]serving[/b] {plan['gpus']} × {dev['name']} ({dev['memory_gb']:g} GB, {dev['hbm_gbps']:g} GB/s HBM, "
        f"{dev['peak_tflops']:g} TFLOP/s); prompt {plan['prompt']:,} + output {plan['output']:,} tokens; "
        f"{plan['considered_layouts']} TP × PP layouts, reserve {plan['constants']['reserve_fraction']:.0%} of memory"
    )
    if plan["smallest_if_none_fits"] is not None:
        s = plan["smallest_if_none_fits"]
        mem = s["memory_gb"]
        console.print(
            f"[red]no layout fits[/red]: the smallest, TP{s['layout']['tp']}·PP{s['layout']['pp']} batch {s['layout']['batch']}, "
            f"is {-mem['free']:,.1f} GB short per GPU of {dev['memory_gb']:g} GB (weights {mem['weights']:,.1f}, KV "
            f"{mem['kv']:,.2f}, activations {mem['activations']:,.2f}, reserve {mem['reserve']:,.1f}); use more GPUs, "
            "--weights-dtype fp8/int8, --kv-dtype fp8, or shorter prompts"
        )
        return
    rows = plan["layouts"]
    if plan["meets_target"] is False:
        t = {k: v for k, v in plan["targets"].items() if v is not None}
        console.print(
            "[red]no layout meets the target[/red] ("
            + ", ".join(f"{k} {v:g}" for k, v in t.items())
            + "); the closest:"
        )
        rows = plan["closest"]
        title = "closest layouts"
    else:
        title = plan["ranking"]
    lengths = plan.get("lengths")
    if lengths:

        def say(name: str) -> str:
            d = lengths[name]
            return (
                f"{name} {plan[name]:,} tokens"
                if d is None
                else f"{name} p50 {d['p50']:,} / mean {d['mean']:,.0f} / p99 {d['p99']:,} ({d['n']:,} lengths)"
            )

        console.print(
            f"[b]lengths[/b] {say('prompt')}; {say('output')}; KV planned for {lengths['kv_tokens_per_sequence']:,.0f} tokens a "
            f"sequence (the mean); TTFT and ITL at p50 and p99; targets apply to p{lengths['target_percentile']}"
        )
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    cols = [
        "#",
        "TP",
        "PP",
        "rep",
        "batch",
        "max seq",
        "TTFT ms",
        "ITL ms",
        "tok/s/GPU",
        "tok/s",
        "GB w",
        "kv",
        "act",
        "free",
        "bound",
    ]
    if lengths:
        cols[7:7] = ["TTFT p99"]
        cols[9:9] = ["ITL p99"]
    for col in cols:
        table.add_column(col, justify="left" if col == "bound" else "right", no_wrap=True)
    for i, r in enumerate(rows, 1):
        row = cells(i, r)
        if lengths:
            row[7:7] = [f"{r['ttft_p99_ms']:,.1f}"]
            row[9:9] = [f"{r['itl_p99_ms']:,.2f}"]
        table.add_row(*row)
    wide = Console(
        file=console.file,
        width=max(console.width, 150 if lengths else 130),
        force_terminal=console.is_terminal,
    )
    wide.print(table)
    if rows:
        e = rows[0]["efficiency"]
        console.print(
            f"efficiency: prefill {e['prefill']['fraction_of_peak']:.3f} of peak ({e['prefill']['source']}); decode "
            f"{e['decode_hbm']['fraction_of_hbm_bandwidth']:.2f} of HBM bandwidth ({e['decode_hbm']['source']}); "
            f"decode compute {e['decode_compute']['fraction_of_peak']:.3f} of peak"
        )


def cells(i: int, r: dict[str, Any]) -> list[str]:
    lay, mem = r["layout"], r["memory_gb"]
    return [
        str(i), str(lay["tp"]), str(lay["pp"]), str(lay["replicas"]), str(lay["batch"]), f"{r['max_concurrent_sequences']:,}",
        f"{r['ttft_ms']:,.1f}", f"{r['itl_ms']:,.2f}", f"{r['tokens_per_s_per_gpu']:,.1f}", f"{r['tokens_per_s_total']:,.0f}",
        f"{mem['weights']:,.1f}", f"{mem['kv']:,.1f}", f"{mem['activations']:,.2f}", f"{mem['free']:,.1f}", r["binding"],
    ]  # fmt: skip
