"""What a checkpoint costs the training step: a synchronous save against a background one (`train.checkpoint.async`).

    python benchmarks/checkpoint_async.py                       # CUDA: 1.3b; CPU: 125m
    python benchmarks/checkpoint_async.py --preset debug --seq 64 --saves 2 --steps-between 1   # a quick look

One process trains the preset with selene's own step (`benchmarks/_train_step.py`: the trainer's
model builder, AdamW, forward/backward) and saves it every --steps-between steps, --saves times,
first with `selene.train.checkpoint.save` (what `checkpoint.async: false` runs), then with
`selene.train.checkpoint_async.AsyncCheckpointer.save` (what `checkpoint.async: true` runs), into
--dir (keep 1: the disk holds at most two checkpoints). Each save writes the whole checkpoint the
trainer writes: DCP files of the weights and AdamW's two moments, RNG state, every file's sha256,
meta.json.

Per save it times what the training thread spends in the call (the stall: a synchronous save's
whole write; a background save's wait for the save before it plus the copy off the device), the
background part (from the call's return until meta.json is written), and the steps between saves:
with background saves those steps run while the writer works, so a slower step there is the
writer's cost that the stall does not show. Printed and written to --out as JSON: medians per mode
and the ratio sync save / async stall, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._train_step import SeleneStep, batch, device_here, sync, train_config  # noqa: E402
from selene.model.init import num_params  # noqa: E402
from selene.train import checkpoint  # noqa: E402
from selene.train.checkpoint_async import AsyncCheckpointer  # noqa: E402


def run_mode(step: SeleneStep, mode: str, root: str, saves: int, between: int, xy: Any) -> dict[str, Any]:
    """`saves` saves of `step`'s state every `between` steps; seconds per save and per step."""
    device = step.device
    saver = AsyncCheckpointer(device) if mode == "async" else None
    stalls: list[float] = []
    waits: list[float] = []
    background: list[float] = []
    steps: list[float] = []  # steps without a background write in flight
    overlapped: list[float] = []  # steps with one
    n = 0
    for _ in range(saves):
        for _ in range(between):
            writing = saver is not None and saver.pending is not None and not saver.pending.done()
            t0 = time.perf_counter()
            step(*xy)
            sync(device)
            (overlapped if writing else steps).append(time.perf_counter() - t0)
            n += 1
        t0 = time.perf_counter()
        if saver is None:
            checkpoint.save(root, n, step.pm.parts, step.optims, {"benchmark": mode}, keep=1)
        else:
            saver.save(root, n, step.pm.parts, step.optims, {"benchmark": mode}, keep=1)
            waits.append(saver.waited_s)
            returned = time.perf_counter()
            pending: Future[None] | None = saver.pending
            assert pending is not None
            pending.add_done_callback(lambda _, r=returned: background.append(time.perf_counter() - r))
        stalls.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    if saver is not None:
        saver.close()
    final_wait = time.perf_counter() - t0
    assert checkpoint.complete_steps(root) == [n], checkpoint.complete_steps(root)
    size = sum(f.stat().st_size for f in Path(checkpoint.step_dir(root, n)).rglob("*") if f.is_file())
    return {
        "mode": mode, "stall_s": stalls, "waited_s": waits, "background_s": background, "step_s": steps,
        "step_while_writing_s": overlapped, "final_wait_s": final_wait, "checkpoint_bytes": size,
        "median_stall_s": statistics.median(stalls), "median_step_s": statistics.median(steps),
        "median_step_while_writing_s": statistics.median(overlapped) if overlapped else None,
        "median_background_s": statistics.median(background) if background else None,
        # a background save's stall past its first (which allocates the host buffers every later
        # save copies into): the copy itself, and the wait for the write before it
        "median_copy_s": statistics.median(s - w for s, w in zip(stalls[1:], waits[1:], strict=True)) if waits[1:] else None,
        "median_waited_s": statistics.median(waits[1:]) if waits[1:] else None,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default=None, help="model preset; default: 1.3b on CUDA, 125m on CPU")
    ap.add_argument("--seq", type=int, default=None, help="tokens per sequence; default: 2048 on CUDA, 256 on CPU")
    ap.add_argument("--micro-batch", type=int, default=None, help="sequences per step; default: 4 on CUDA, 2 on CPU")
    ap.add_argument("--saves", type=int, default=4, help="saves per mode (at least 2)")
    ap.add_argument("--steps-between", type=int, default=2)
    ap.add_argument("--dir", default=None, help="where the checkpoints are written (default: a temporary folder)")
    ap.add_argument("--out", default=None, help="JSON of every number printed")
    a = ap.parse_args(argv)
    if a.saves < 2 or a.steps_between < 1:
        ap.error("--saves must be at least 2 and --steps-between at least 1")
    device = device_here()
    cuda = device.type == "cuda"
    preset = a.preset or ("1.3b" if cuda else "125m")
    seq = a.seq or (2048 if cuda else 256)
    micro = a.micro_batch or (4 if cuda else 2)
    cfg = train_config(preset, seq, 50304 if preset != "debug" else 512, "bf16" if cuda else "fp32", compile=False)
    step = SeleneStep(cfg, device)
    xy = batch(cfg.model.vocab_size or 0, micro, seq, device)
    step(*xy)  # warm-up: the optimizer's state exists from here on, as in any checkpoint after step 1
    sync(device)
    params = num_params(step.model)
    root_dir = a.dir or tempfile.mkdtemp(prefix="selene-ckpt-bench-")
    results: dict[str, Any] = {"device": str(torch.cuda.get_device_name(device) if cuda else "cpu"),
                               "preset": preset, "parameters": params, "seq": seq, "micro_batch": micro,
                               "threads": torch.get_num_threads(), "dir": root_dir, "modes": {}}  # fmt: skip
    try:
        for mode in ("sync", "async"):
            root = os.path.join(root_dir, mode)
            r = run_mode(step, mode, root, a.saves, a.steps_between, xy)
            results["modes"][mode] = r
            shutil.rmtree(root, ignore_errors=True)
            if mode == "sync":
                print(f"sync : training stalled {r['median_stall_s']:.3f} s per checkpoint (median of {a.saves}), "
                      f"step {r['median_step_s']:.3f} s, checkpoint {r['checkpoint_bytes'] / 2**30:.2f} GiB", flush=True)  # fmt: skip
            else:
                print(f"async: first save stalled {r['stall_s'][0]:.3f} s (allocating the host copy); later saves "
                      f"{r['median_copy_s']:.3f} s copying + {r['median_waited_s']:.3f} s waiting for the write before "
                      f"(medians); background write {r['median_background_s']:.2f} s", flush=True)  # fmt: skip
    finally:
        if a.dir is None:
            shutil.rmtree(root_dir, ignore_errors=True)
    s, b = results["modes"]["sync"], results["modes"]["async"]
    results["stall_ratio"] = s["median_stall_s"] / b["median_copy_s"]
    writing = b["median_step_while_writing_s"]
    quiet = statistics.median(s["step_s"] + b["step_s"])  # every step of the run without a write beside it
    results["median_step_without_write_s"] = quiet
    results["step_slowdown_while_writing"] = writing / quiet if writing else None
    print(f"{preset} ({params / 1e6:.0f}M parameters) on {results['device']}: a checkpoint stalls training "
          f"{s['median_stall_s']:.2f} s synchronously, {b['median_copy_s']:.2f} s in the background "
          f"({results['stall_ratio']:.1f}x less)", flush=True)  # fmt: skip
    if writing:
        print(f"steps while a background write runs: {writing:.3f} s, "
              f"{results['step_slowdown_while_writing']:.2f}x a step without one ({quiet:.3f} s; medians)")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
