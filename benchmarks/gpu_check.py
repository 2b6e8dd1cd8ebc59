"""The training half of selene as users run it, on one GPU, in one prepared run of a few minutes.

    bash benchmarks/gpu_check.sh [--budget 480]          # on a CUDA machine (installs carried wheels first)
    python benchmarks/gpu_check.py --cpu-smoke --out DIR  # the same parts here, tiny, on the CPU (CI runs it)

Parts, in order of value, each under its own time cap (and all under --budget), each writing its
results to <out>/results.json as soon as it ends, so a run cut short still returns what finished:

1. `train`: `selene train` as a user runs it (the CLI, torchrun, one rank): the 125m preset on the
   carried token data, bf16, compiled blocks, seq 2048, a checkpoint every `every` steps. Once a
   checkpoint is complete and some steps past it are logged, the whole process group is killed
   (SIGKILL), then the same command resumes from that checkpoint; the losses of the steps logged by
   both runs are compared (tolerance below: flash attention's backward is not deterministic on a
   GPU). Then `selene eval` (held-out perplexity and one bundled harness task) and `selene generate
   --batch 8 --json` from the last checkpoint, on the GPU.
2. `mfu`: `benchmarks/mfu.py` for 1.3b, 350m and 125m at seq 2048, bf16, compiled blocks, one
   process per preset; MFU against the data sheet and the measured matmul rate, peak memory against
   the planner, `calibration.json`, and the top kernels of a preset below 50% MFU.
3. `peer`: `benchmarks/train.py --vs-hf --compiled-only` at 1.3b and 125m, seq 2048: selene's compiled step against
   Hugging Face `LlamaForCausalLM` (SDPA, fused AdamW, bf16 autocast) under torch.compile (the CPU
   smoke compares the eager steps).
4. `serve`: `selene generate --batch 1/8/32` (125m, the trained checkpoint) and the same
   generation path at 1.3b (random weights), TTFT and ITL against `selene plan serve` for the
   same shapes.

The last lines printed are a summary table; everything the parts print is in <out>/gpu_check.log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# flash attention's backward accumulates in a non-deterministic order, so after the first step past
# the checkpoint (whose loss is the forward of the same weights on the same data: equal) a resumed
# bf16 run drifts from the first one; this much over a few steps (a CPU run is exact: tolerance 0)
RESUME_TOLERANCE_GPU = 5e-3


class Budget:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def cap(self, seconds: float) -> float:
        return max(0.0, min(seconds, self.left()))


class Check:
    """The run's state: where it writes, its log, its results, and how it runs a command."""

    def __init__(self, out: Path, work: Path, smoke: bool, budget: Budget, quick: bool = False,
                 train_once: bool = False) -> None:
        self.out, self.smoke, self.budget, self.quick = out, smoke, budget, quick
        self.train_once = quick or train_once
        self.float8: str | None = None  # train with parallel.float8 (--float8): the float8 leg
        self.work = work  # checkpoints and logs: gigabytes on a GPU, so not under `out`
        self.work.mkdir(parents=True, exist_ok=True)
        self.log_path = out / "gpu_check.log"
        self.results: dict[str, Any] = {"smoke": smoke, "parts": {}}
        self.env = {**os.environ, "SELENE_PREFECT": "off", "PYTHONUNBUFFERED": "1",
                    "SELENE_HOME": str(self.work / "selene-home"), "HF_HOME": str(self.work / "hf"),
                    "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                    "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}

    def say(self, text: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {text}"
        print(line, flush=True)
        with open(self.log_path, "a") as f:
            f.write(line + "\n")

    def record(self, part: str, value: dict[str, Any]) -> None:
        self.results["parts"][part] = value
        tmp = self.out / "results.json.tmp"
        tmp.write_text(json.dumps(self.results, indent=1, default=str))
        os.replace(tmp, self.out / "results.json")

    def start(self, cmd: list[str], log: Path) -> subprocess.Popen[bytes]:
        """A command in a process group of its own (so the group can be killed), output to `log`."""
        self.say("$ " + " ".join(cmd))
        f = open(log, "ab")  # noqa: SIM115 -- closed with the process by finish()
        return subprocess.Popen(cmd, cwd=self.work, env=self.env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def finish(self, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> tuple[int | None, str]:
        """Wait up to `timeout`; a command past it is killed with its whole group (rc None)."""
        try:
            rc: int | None = proc.wait(timeout=max(timeout, 1.0))
        except subprocess.TimeoutExpired:
            kill_group(proc)
            rc = None
        text = log.read_text(errors="replace")
        with open(self.log_path, "a") as f:
            f.write(text + ("" if text.endswith("\n") else "\n") + f"(exit {rc})\n")
        return rc, text

    def run(self, cmd: list[str], name: str, timeout: float) -> tuple[int | None, str]:
        log = self.work / f"{name}.log"
        return self.finish(self.start(cmd, log), log, timeout)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def selene(*args: str) -> list[str]:
    return [sys.executable, "-c", "from selene.cli import entrypoint; entrypoint()", *args]


def tail(text: str, n: int = 1500) -> str:
    return text[-n:]


def read_metrics(path: Path) -> dict[int, float]:
    losses: dict[int, float] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut by the kill
            if "loss" in row:
                losses[int(row["step"])] = float(row["loss"])
    return losses


# -- 1. the whole command ------------------------------------------------------------------------

def part_train(c: Check, data: Path, cap: float) -> None:
    budget = Budget(cap)
    tok_dir = c.work / "tokens"
    if not tok_dir.exists():
        shutil.copytree(data, tok_dir)
    prefix = next(tok_dir.glob("*.idx")).with_suffix("")
    run_dir = c.work / "train"
    shutil.rmtree(run_dir, ignore_errors=True)
    if c.smoke:
        shape = {"preset": "debug", "seq": 64, "batch": 4, "steps": 8, "every": 4, "kill_after": 6,
                 "precision": "fp32", "compile": False, "tolerance": 0.0}
    else:
        shape = {"preset": "125m", "seq": 2048, "batch": 8, "steps": 40, "every": 20, "kill_after": 28,
                 "precision": "bf16", "compile": True, "tolerance": RESUME_TOLERANCE_GPU}
    if c.train_once:  # one short run; validation off (its no-grad forward is one more compilation)
        shape |= {"steps": 16 if not c.smoke else 6, "every": 1000, "kill_after": 0}
    cfg = {
        "out": str(run_dir),
        "model": {"preset": shape["preset"], "max_seq_len": shape["seq"]},
        "parallel": {"dp_shard": 1, "mixed_precision": shape["precision"], "compile": shape["compile"],
                     **({"float8": c.float8} if c.float8 else {})},
        "batch": {"seq_len": shape["seq"], "global_batch": shape["batch"], "micro_batch": shape["batch"]},
        "optim": {"lr": 6e-4, "warmup_steps": 5},
        "data": {"prefixes": [str(prefix)]},
        "steps": shape["steps"], "eval_every": shape["every"], "eval_batches": 1, "log_every": 1,
        "checkpoint": {"every": min(shape["every"], shape["steps"]), "keep": 3},
        "nproc_per_node": 1,
    }
    cfg_path = c.work / "train.yaml"
    cfg_path.write_text(json.dumps(cfg))  # JSON is YAML
    result: dict[str, Any] = {"shape": shape, "float8": c.float8, "status": "running"}
    c.record("train", result)

    if c.train_once:  # one run, as a user starts it: no kill, no resume (a lease of a few minutes)
        t0 = time.monotonic()
        rc, text = c.run(selene("train", str(cfg_path)), "train-1", budget.left())
        losses = read_metrics(run_dir / "metrics.jsonl")
        result.update(run_s=time.monotonic() - t0, rc=rc, last=_last_row(run_dir / "metrics.jsonl"),
                      losses=[losses[s] for s in sorted(losses)], run_json=_json(run_dir / "run.json"),
                      status="ok" if rc == 0 and max(losses, default=0) == shape["steps"] else "failed")
        if rc != 0:
            result["error"] = tail(text, 4000)
        c.record("train", result)
        return

    # first run, killed with its whole process group past the checkpoint
    log1 = c.work / "train-1.log"
    proc = c.start(selene("train", str(cfg_path)), log1)
    metrics = run_dir / "metrics.jsonl"
    ckpt = run_dir / "checkpoints" / f"step-{shape['every']:06d}" / "meta.json"
    killed_at = None
    t0 = time.monotonic()
    while proc.poll() is None and budget.left() > 0:
        steps = read_metrics(metrics)
        if ckpt.exists() and steps and max(steps) >= shape["kill_after"]:
            killed_at = max(steps)
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    rc1, text1 = c.finish(proc, log1, budget.cap(30))
    first = read_metrics(metrics)
    result.update(first_run_s=time.monotonic() - t0, killed_at_step=killed_at, first_rc=rc1)
    left = [p for p in _processes_with(str(cfg_path))]
    result["left_running_after_kill"] = left
    if killed_at is None:
        result.update(status="failed", error="the first run ended before the kill", log=tail(text1))
        c.record("train", result)
        return
    shutil.copy(metrics, c.work / "metrics-first.jsonl")

    # resume: the same command
    t1 = time.monotonic()
    rc2, text2 = c.run(selene("train", str(cfg_path)), "train-2", budget.cap(budget.left()))
    second = read_metrics(metrics)
    both = sorted(set(first) & set(second) - {s for s in first if s <= shape["every"]})
    diffs = {s: abs(first[s] - second[s]) for s in both}
    worst = max(diffs.values()) if diffs else None
    run_json = _json(run_dir / "run.json")
    last = _last_row(metrics)
    result.update(resume_s=time.monotonic() - t1, resume_rc=rc2, resumed_from=run_json.get("resumed_from"),
                  compared_steps=both, loss_first={s: first[s] for s in both}, loss_resumed={s: second[s] for s in both},
                  max_abs_diff=worst, tolerance=shape["tolerance"], last=last,
                  first_step_diff=diffs.get(shape["every"] + 1),
                  losses=[second[s] for s in sorted(second)])
    ok = rc2 == 0 and worst is not None and worst <= shape["tolerance"] and max(second, default=0) == shape["steps"]
    result["status"] = "ok" if ok else "failed"
    if rc2 != 0:
        result["error"] = tail(text2)
    c.record("train", result)

    # evaluation and generation from the last checkpoint, on the device
    if rc2 != 0:
        return
    eval_dir = c.work / "eval"
    rc3, text3 = c.run(selene("eval", "--checkpoint", str(run_dir), "--tasks", "selene_piqa", "--limit",
                              "20" if c.smoke else "100", "--batch-size", "16", "-o", str(eval_dir)),
                       "eval", budget.cap(120))
    result["eval"] = {"rc": rc3, "results": _json(eval_dir / "results.json") or tail(text3)}
    c.record("train", result)
    prompts = c.work / "prompts.txt"
    prompts.write_text("\n".join(PROMPTS[:8]) + "\n")
    rc4, text4 = c.run(selene("generate", "--checkpoint", str(run_dir), "--prompts", str(prompts), "--batch", "8",
                              "--temperature", "0", "--max-tokens", "32", "--json"), "generate", budget.cap(90))
    gen: dict[str, Any] = {"rc": rc4}
    try:
        out = json.loads(text4.strip().splitlines()[-1])
        gen |= {"timing": out["timing"], "first_output": out["outputs"][0]["output"][:200]}
    except (ValueError, IndexError, KeyError):
        gen["error"] = tail(text4)
    result["generate"] = gen
    if rc3 != 0 or rc4 != 0:
        result["status"] = "failed"
    c.record("train", result)


PROMPTS = [
    "The import statement", "def main():", "Copyright (c) The", "In this section we describe",
    "The function returns", "import numpy as np", "Licensed under the Apache License", "The first step is",
    "class Parser:", "This package provides", "Usage: python", "When the server starts",
    "# Configuration", "The results show that", "for i in range(", "A list of the",
    "The data are", "If you want to", "To install the package", "Returns the value of",
    "See the documentation", "The following example", "An error occurs when", "By default the",
    "This module implements", "The user can", "Note that the", "At the end of",
    "The test suite", "Each line of the", "The main loop", "Read the file",
]


def _processes_with(needle: str) -> list[str]:
    """Command lines of live processes that name `needle` (what a kill left behind)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd:
            found.append(f"{pid}: {cmd[:200]}")
    return found


def _json(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def _last_row(path: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    train_rows = [r for r in rows if "tokens_per_s" in r]
    return train_rows[-1] if train_rows else {}


# -- 2. MFU --------------------------------------------------------------------------------------

def part_mfu(c: Check, cap: float) -> None:
    out = c.out / "mfu"
    if c.smoke:
        args = ["--presets", "debug", "--seq", "64", "--steps", "2", "--warmup", "1", "--max-micro-batch", "4"]
    elif c.quick:  # the goal's preset alone
        args = ["--presets", "1.3b", "--seq", "2048", "--steps", "5", "--warmup", "2", "--max-micro-batch", "8",
                "--timeout", str(int(cap))]
    else:
        # micro-batches of 8 × 2048 tokens at most: the 125m blocks then have the shapes part 1 compiled
        # (inductor's cache on disk serves them), and 16k tokens a step fill the GPU at every preset
        args = ["--presets", "1.3b,350m,125m", "--seq", "2048", "--steps", "8", "--warmup", "2",
                "--max-micro-batch", "8", "--profile-below", "0.5", "--timeout", str(int(max(60, cap / 2.5)))]
    rc, text = c.run([sys.executable, str(ROOT / "benchmarks/mfu.py"), *args, "--out", str(out)], "mfu", cap)
    result = _json(out / "mfu.json")
    c.record("mfu", {"rc": rc, "status": "ok" if rc == 0 else "failed", "table": _table(text, "model "),
                     **({"runs": result.get("runs"), "failed": result.get("failed"), "device": result.get("device"),
                         "peak_tflops": result.get("peak_tflops"), "matmul_tflops": result.get("matmul_tflops"),
                         "calibration": result.get("calibration")} if result else {"error": tail(text)})})


def _table(text: str, head: str) -> list[str]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(head):
            return [ln for ln in lines[i:] if ln.strip() and not ln.startswith("USDT")][:40]
    return []


# -- 3. against Hugging Face --------------------------------------------------------------------

def part_peer(c: Check, cap: float) -> None:
    if c.smoke:
        # eager on the CPU: the compiled pair's cold inductor build of HF's whole model costs ~40 s of
        # two cores (a clean CI machine has no cache) and says nothing of the GPU's kernels
        args = ["--shapes", "debug:64x2", "--precision", "fp32", "--steps", "2", "--warmup", "1"]
    else:
        # both models and their optimizer state live in one process: 1.3b at 8 × 2048 needs ~110 GB
        import torch

        mb = 8 if torch.cuda.get_device_properties(0).total_memory > 120e9 else 4
        args = ["--compiled-only", "--shapes", f"1.3b:2048x{mb},125m:2048x8", "--precision", "bf16",
                "--steps", "5", "--warmup", "1"]
    rc, text = c.run([sys.executable, str(ROOT / "benchmarks/train.py"), "--vs-hf", *args], "peer", cap)
    c.record("peer", {"rc": rc, "status": "ok" if rc == 0 else "failed", "table": _table(text, "model "),
                      **({} if rc == 0 else {"error": tail(text)})})


# -- 4. serving ----------------------------------------------------------------------------------

def part_serve(c: Check, cap: float) -> None:
    budget = Budget(cap)
    run_dir = c.work / "train"
    result: dict[str, Any] = {"points": [], "status": "running"}
    batches = [8] if c.quick or c.smoke else [1, 8, 32]  # the CPU smoke: the path once, not its batch sizes
    new = 8 if c.smoke else 32
    prompts = c.work / "serve-prompts.txt"
    prompts.write_text("\n".join(PROMPTS) + "\n")
    gpu = _gpu_name()
    if (run_dir / "checkpoints").exists():  # the trained 125m (or debug) through the command itself
        for b in batches:
            rc, text = c.run(selene("generate", "--checkpoint", str(run_dir), "--prompts", str(prompts), "--batch",
                                    str(b), "--temperature", "0", "--max-tokens", str(new), "--json"),
                             f"serve-{b}", budget.cap(60))
            try:
                timing = json.loads(text.strip().splitlines()[-1])["timing"]
            except (ValueError, IndexError, KeyError):
                result["points"].append({"model": "trained", "batch": b, "rc": rc, "error": tail(text, 800)})
                continue
            result["points"].append({"model": "trained", "batch": b, "new": new, "timing": timing,
                                     "plan": _plan_serve(c, run_dir, b, timing, new, gpu)})
            c.record("serve", result)
    if not c.smoke and not c.quick and budget.left() > 20:  # 1.3b: the same generation path, random weights
        # the same shapes with eager decode steps and through Hugging Face's generate, in the same process
        rc, text = c.run([sys.executable, str(ROOT / "benchmarks/generate_batch.py"), "--preset", "1.3b",
                          "--batches", ",".join(map(str, batches)), "--prompts", "128", "--new", str(new),
                          "--repeats", "2", "--vs-eager", "--vs-hf", "--json", str(c.work / "gen13b.json")],
                         "serve-1.3b", budget.cap(150))
        result["table_1.3b"] = [ln for ln in text.splitlines() if ln.startswith(("preset", "prompt"))]
        rows = _json(c.work / "gen13b.json").get("rows", [])
        for row in rows:
            row["plan"] = _plan_model(c, "1.3b", row["batch"], row["prompt"], new, gpu, row)
        result["points_1.3b"] = rows or {"rc": rc, "error": tail(text, 800)}
    result["status"] = "ok" if result["points"] and all("error" not in p for p in result["points"]) else "failed"
    c.record("serve", result)


def _gpu_name() -> str:
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    name = torch.cuda.get_device_name(0).lower()
    return "h200" if "h200" in name else "h100" if "h100" in name else "a100-80g"


def _plan_serve(c: Check, run_dir: Path, batch: int, timing: dict[str, Any], new: int, gpu: str) -> dict[str, Any]:
    """`selene plan serve --checkpoint` for the shape just measured: predicted / measured TTFT and ITL."""
    if gpu == "cpu":
        return {}
    prompt_tokens = _prompt_tokens(run_dir)
    rc, text = c.run(selene("plan", "serve", "--checkpoint", str(run_dir), "--gpu", gpu, "--gpus", "1", "--batch",
                            str(batch), "--prompt", str(prompt_tokens), "--output", str(new), "--weights-dtype",
                            "bf16", "--kv-dtype", "bf16", "--json"), f"plan-serve-{batch}", 60)
    return _compare(text, rc, timing.get("ttft_ms_p50"), timing.get("itl_ms_p50"))


def _prompt_tokens(run_dir: Path) -> int:
    """Mean tokens of the serving prompts under the run's tokenizer (what the planner is asked for)."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(run_dir / "tokenizer.model"))
    return max(1, round(sum(len(sp.encode(p)) for p in PROMPTS) / len(PROMPTS)))


def _plan_model(c: Check, model: str, batch: int, prompt: int, new: int, gpu: str, row: dict[str, Any]) -> dict[str, Any]:
    if gpu == "cpu":
        return {}
    rc, text = c.run(selene("plan", "serve", "--model", model, "--vocab", "32000", "--gpu", gpu, "--gpus", "1",
                            "--batch", str(batch), "--prompt", str(prompt), "--output", str(new), "--weights-dtype",
                            "bf16", "--kv-dtype", "bf16", "--json"), f"plan-serve-{model}-{batch}", 60)
    return _compare(text, rc, row.get("ttft_ms_p50"), row.get("itl_ms_p50"))


def _compare(text: str, rc: int | None, ttft: float | None, itl: float | None) -> dict[str, Any]:
    try:
        plan = json.loads(text[text.index("{"):])
        best = plan["layouts"][0]
    except (ValueError, KeyError, IndexError):
        return {"rc": rc, "error": tail(text, 600)}
    out = {"ttft_ms": best.get("ttft_ms"), "itl_ms": best.get("itl_ms")}
    if ttft and out["ttft_ms"]:
        out["ttft_ratio"] = out["ttft_ms"] / ttft
    if itl and out["itl_ms"]:
        out["itl_ratio"] = out["itl_ms"] / itl
    return out


# -- the run -------------------------------------------------------------------------------------

PARTS = ("train", "mfu", "peer", "serve")
# seconds each part may take at most on a GPU (all together under --budget)
CAPS = {"train": 240.0, "mfu": 200.0, "peer": 150.0, "serve": 220.0}
QUICK_CAPS = {"train": 75.0, "mfu": 80.0, "peer": 60.0, "serve": 25.0}


def environment(c: Check) -> None:
    import torch

    info: dict[str, Any] = {"python": sys.version.split()[0], "torch": torch.__version__,
                            "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    try:
        info["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.sm",
                                             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        info["nvidia_smi"] = str(e)
    c.say(f"environment: {info}")
    c.record("environment", info)


def summary(c: Check) -> None:
    parts = c.results["parts"]
    print("\n== summary ==")
    for name in PARTS:
        p = parts.get(name)
        if p is None:
            print(f"{name:<7} not run")
            continue
        print(f"{name:<7} {p.get('status')}" + (f"  error: {str(p['error'])[-300:]}" if p.get("error") else ""))
        if name == "train" and "max_abs_diff" in p:
            print(f"        killed at step {p.get('killed_at_step')}, resumed from {p.get('resumed_from')}; "
                  f"steps compared {p.get('compared_steps')}: max |Δloss| {p.get('max_abs_diff')}, first step's "
                  f"{p.get('first_step_diff')} (tolerance "
                  f"{p.get('tolerance')}); last {json.dumps({k: p['last'].get(k) for k in ('step', 'loss', 'tokens_per_s', 'mfu', 'peak_memory_gib')})}")
            if "eval" in p:
                print(f"        eval rc {p['eval']['rc']}: {json.dumps(p['eval']['results'])[:400]}")
            if "generate" in p:
                print(f"        generate: {json.dumps(p['generate'])[:400]}")
        if name == "train" and "max_abs_diff" not in p and p.get("last"):
            print(f"        last step: {json.dumps(p['last'])[:500]}; losses {[round(x, 3) for x in p.get('losses', [])]}")
        for line in p.get("table", []):
            print("        " + line)
        for point in p.get("points", []):
            print(f"        {json.dumps(point)[:300]}")
        for point in p.get("points_1.3b", []) if isinstance(p.get("points_1.3b"), list) else []:
            print(f"        1.3b {json.dumps(point)[:300]}")
        for line in p.get("table_1.3b", []):
            print("        " + line)
    print(f"results: {c.out / 'results.json'}; log: {c.log_path}; checkpoints and commands' logs: {c.work}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "runs/gpu-check"))
    ap.add_argument("--data", type=Path, default=ROOT / ".gpu" / "tokens",
                    help="a tokenize output directory (its .bin/.idx, tokenizer.model, manifest.json)")
    ap.add_argument("--work", type=Path, default=None,
                    help="checkpoints, configs and each command's log (default: a new folder under the system's temp)")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for all parts together")
    ap.add_argument("--cpu-smoke", action="store_true", help="every part, tiny, on the CPU")
    ap.add_argument("--quick", action="store_true",
                    help="for a lease of a few minutes: train once (no kill/resume, no eval), MFU of 1.3b alone, "
                         "serving at batch 8 alone; parts in the order --parts gives")
    ap.add_argument("--train-once", action="store_true",
                    help="train once (no kill/resume, no eval): a checkpoint for the other parts")
    ap.add_argument("--float8", choices=("tensorwise", "rowwise"), default=None,
                    help="the train part with train.parallel.float8 (the CPU smoke: refused in one line)")
    args = ap.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    budget = Budget(args.budget)
    import tempfile

    work = (args.work or Path(tempfile.mkdtemp(prefix="selene-gpu-check-"))).resolve()
    c = Check(out, work, args.cpu_smoke, budget, args.quick, args.train_once)
    c.float8 = args.float8
    if args.cpu_smoke:
        c.env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("no CUDA device here: run with --cpu-smoke on a CPU")
    environment(c)
    wanted = [p.strip() for p in args.parts.split(",") if p.strip()]
    for name in wanted:
        if name not in PARTS:
            raise SystemExit(f"--parts: unknown part {name!r}; parts are {', '.join(PARTS)}")
    for name in wanted if args.quick else PARTS:
        if name not in wanted:
            continue
        cap = budget.cap(600.0 if args.cpu_smoke else (QUICK_CAPS if args.quick else CAPS)[name])
        if cap < 15:
            c.say(f"{name}: skipped, {budget.left():.0f} s left")
            c.record(name, {"status": "skipped: no time left"})
            continue
        c.say(f"== {name} (cap {cap:.0f} s) ==")
        t = time.monotonic()
        try:
            if name == "train":
                part_train(c, args.data, cap)
            elif name == "mfu":
                part_mfu(c, cap)
            elif name == "peer":
                part_peer(c, cap)
            else:
                part_serve(c, cap)
        except Exception as e:  # one part's failure is a finding; the next part still runs
            import traceback

            c.say(f"{name} raised: {traceback.format_exc()}")
            c.record(name, {**c.results["parts"].get(name, {}), "status": "failed", "error": repr(e)})
        c.say(f"{name}: {c.results['parts'].get(name, {}).get('status')} in {time.monotonic() - t:.0f} s")
    summary(c)


if __name__ == "__main__":
    main()
