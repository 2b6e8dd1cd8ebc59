"""What watching `selene train` on the dashboard costs a step, and how fast Cancel stops it.

    python benchmarks/train_live.py [--preset debug] [--seq 256] [--batch 8] [--steps 80] [--rounds 2]

Starts a dashboard (`selene server start`, its own SELENE_HOME and PREFECT_HOME in a temporary
folder, a free port) and runs the whole `selene train` command on random tokens, one rank, in
alternating rounds:

  off        SELENE_PREFECT=off: no flow run, no live updates (the baseline);
  dashboard  reporting to the server: a flow run with a log line and a progress update for every
             logged step (log_every 1: the most traffic there can be), the metrics table, the loss
             curve at each validation and checkpoint.

Printed: the median step time of the steps after the first five (from each run's metrics.jsonl),
and the ratio dashboard / off. Then one more dashboard run is cancelled through the API (what the
dashboard's Cancel button sends) and the seconds from the request to the command's exit, and the step
and checkpoint of its last line, are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.train_command import token_dataset  # noqa: E402

SELENE = [sys.executable, "-c", "from selene.cli import entrypoint; entrypoint()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config(prefix: str, out: Path, args: argparse.Namespace, steps: int) -> Path:
    cfg = {
        "model": {"preset": args.preset, "max_seq_len": args.seq},
        "parallel": {"dp_shard": 1},
        "batch": {"seq_len": args.seq, "global_batch": args.batch, "micro_batch": args.batch},
        "optim": {"lr": 1e-3, "warmup_steps": 2},
        "data": {"prefixes": [prefix]},
        "steps": steps, "eval_every": 20, "eval_batches": 1, "log_every": 1,
        "checkpoint": {"every": 20, "keep": 2}, "tensorboard": False, "nproc_per_node": 1, "out": str(out),
    }  # fmt: skip
    path = out.parent / f"{out.name}.json"
    path.write_text(json.dumps(cfg))
    return path


def step_times(out: Path) -> list[float]:
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return [r["step_time_s"] for r in rows if "step_time_s" in r and r["step"] > 5]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="debug")
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--screenshot", type=Path, default=None,
                    help="before the cancel, the live run's dashboard page through headless chromium (PNG; "
                         "FILE, and FILE-train-metrics.png and FILE-train-loss.png: two of its artifacts)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="selene-train-live-"))
    prefix = token_dataset(root, 400_000)
    port = free_port()
    env = {**os.environ, "SELENE_HOME": str(root / "home"), "PREFECT_HOME": str(root / "prefect"),
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PYTHONPATH": str(ROOT)}  # fmt: skip
    env.pop("PREFECT_API_URL", None)
    subprocess.run([*SELENE, "server", "start", "--port", str(port), "--timeout", "600"], env=env, check=True)
    api = f"http://127.0.0.1:{port}/api"
    modes = {"off": {**env, "SELENE_PREFECT": "off"}, "dashboard": {**env, "SELENE_PREFECT": "on"}}
    try:
        times: dict[str, list[float]] = {m: [] for m in modes}
        for r in range(args.rounds):
            for mode, menv in modes.items():
                out = root / f"{mode}-{r}"
                t0 = time.perf_counter()
                subprocess.run([*SELENE, "train", str(config(prefix, out, args, args.steps))], env=menv, check=True,
                               stdout=subprocess.DEVNULL)  # fmt: skip
                wall = time.perf_counter() - t0
                got = step_times(out)
                times[mode] += got
                print(f"round {r} {mode:<9}: median step {statistics.median(got) * 1e3:7.2f} ms, command {wall:6.1f} s",
                      flush=True)  # fmt: skip
        off, dash = statistics.median(times["off"]), statistics.median(times["dashboard"])
        print(f"median step: off {off * 1e3:.2f} ms, dashboard {dash * 1e3:.2f} ms: dashboard / off = {dash / off:.3f}")
        cancel(prefix, root, args, modes["dashboard"], api)
    finally:
        subprocess.run([*SELENE, "server", "stop"], env=env, check=False, stdout=subprocess.DEVNULL)


def cancel(prefix: str, root: Path, args: argparse.Namespace, env: dict[str, str], api: str) -> None:
    """A long run cancelled through the API once it has logged 30 steps."""
    os.environ["PREFECT_API_URL"] = api
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
    from prefect.states import Cancelling

    out = root / "cancel"
    proc = subprocess.Popen([*SELENE, "train", str(config(prefix, out, args, 1_000_000))], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    while not ((out / "metrics.jsonl").exists() and len(step_times(out)) >= 25):
        if proc.poll() is not None:
            raise SystemExit(f"the run ended first: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.2)
    with get_client(sync_client=True) as client:
        run = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(like_=str(out))))[0]
        if args.screenshot is not None:
            page = api.removesuffix("/api") + f"/runs/flow-run/{run.id}"
            screenshot(page, args.screenshot)
            from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

            arts = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id])))
            newest = {a.key: a for a in sorted(arts, key=lambda a: a.created or 0)}
            base = api.removesuffix("/api")
            for key in ("train-metrics", "train-loss"):
                if key in newest:
                    screenshot(f"{base}/artifacts/artifact/{newest[key].id}",
                               args.screenshot.with_name(f"{args.screenshot.stem}-{key}.png"))  # fmt: skip
        client.set_flow_run_state(run.id, Cancelling(), force=True)
        asked = time.perf_counter()
    _, err = proc.communicate(timeout=600)
    took = time.perf_counter() - asked
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(run.id).state
    print(f"cancel: exit {proc.returncode} {took:.1f} s after the request; run state {state.type.value if state else None}; "
          f"last line: {err.strip().splitlines()[-1] if err.strip() else ''}")  # fmt: skip


def screenshot(url: str, path: Path) -> None:
    """The page as headless chromium renders it, after its scripts have had time to load the run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1500,1300", "--virtual-time-budget=20000", f"--screenshot={path}", url],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)  # fmt: skip
    print(f"screenshot of {url}: {path}")


if __name__ == "__main__":
    main()
