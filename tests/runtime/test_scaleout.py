"""Scale-out: the data stages on Dask give the bytes of the thread executor; training over two
"nodes" (two torchrun agents on 127.0.0.1) gives the losses of one node with the same world size."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selene.train.metrics import read_metrics
from tests.ingest.test_ingest import build_corpus
from tests.pipeline_runs import ROOT, output_hashes, subprocess_env, write_token_dataset

DATA_STAGES = ("ingest", "dedup", "decontaminate", "blend", "tokenize")


def pipeline_config(path: Path, run_dir: Path, specs: list, executor: str) -> Path:
    sources = "\n".join(f"    - {{name: {s.name}, glob: '{s.glob}'}}" for s in specs)
    tasks = ROOT / "data" / "tasks" / "mini_piqa.jsonl"
    path.write_text(
        f"name: scale\nrun_dir: {run_dir}\nexecutor: {{kind: {executor}, workers: 2}}\n"
        f"ingest:\n  shard_docs: 4\n  sources:\n{sources}\n"
        f"decontaminate:\n  tasks: ['{tasks}']\n"
        "blend: {shard_docs: 5, shuffle_buckets: 3, weights: {Books3: 1.0, ArXiv: 1.0, cc: 1.0, wet: 1.0}}\n"
        "tokenize: {vocab_size: 600}\n"
        "train: {steps: 1, batch: {global_batch: 2, micro_batch: 2}, eval_every: 1, eval_batches: 1,"
        " tensorboard: false}\n"
        "eval: {limit: 1, tasks: [selene_piqa]}\n"
    )
    return path


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_dask_executor_gives_the_bytes_of_threads(tmp_path: Path) -> None:
    specs, _ = build_corpus(tmp_path / "corpus")
    got: dict[str, dict[str, str]] = {}
    for executor in ("threads", "dask"):
        run_dir = tmp_path / executor
        cfg = pipeline_config(tmp_path / f"{executor}.yaml", run_dir, specs, executor)
        t0 = time.time()
        # the data stages, where the executor is used (training runs under torchrun either way)
        proc = subprocess.run(
            [sys.executable, "-m", "selene.cli", "run", str(cfg), "--until", "tokenize"],
            env=subprocess_env(tmp_path, OMP_NUM_THREADS="1"),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert proc.returncode == 0, (
            f"{executor}: rc {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        )
        print(f"{executor}: {time.time() - t0:.1f}s")
        got[executor] = output_hashes(run_dir, DATA_STAGES)
    for stage in DATA_STAGES:
        assert any(k.startswith(f"{stage}/") for k in got["threads"]), (
            f"no {stage} outputs: {sorted(got['threads'])}"
        )
    assert (
        len([k for k in got["threads"] if k.startswith("ingest/part-")]) > 1
    )  # several shards: real fan-out
    assert got["dask"] == got["threads"]


# ------------------------------------------------------------------------------------ two nodes


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_token_dataset(tmp_path_factory.mktemp("scale-tokens"))


def train_yaml(path: Path, prefix: str, out: Path) -> Path:
    path.write_text(
        "model: {preset: debug}\nparallel: {dp_shard: 2}\nsteps: 4\n"
        "batch: {seq_len: 32, global_batch: 8, micro_batch: 2}\noptim: {lr: 3.0e-3, warmup_steps: 2}\n"
        f"data: {{prefixes: ['{prefix}']}}\neval_every: 4\neval_batches: 1\n"
        f"checkpoint: {{every: 2, keep: 5}}\ntensorboard: false\nout: '{out}'\n"
    )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def losses(out: Path) -> dict[int, float]:
    return {r["step"]: r["loss"] for r in read_metrics(str(out / "metrics.jsonl")) if "loss" in r}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_nodes_train_like_one(tokens: str, tmp_path: Path) -> None:
    env = subprocess_env(tmp_path, OMP_NUM_THREADS="1")
    one = tmp_path / "one"
    cfg1 = train_yaml(tmp_path / "one.yaml", tokens, one)
    proc = subprocess.run(
        [sys.executable, "-m", "selene.cli", "train", str(cfg1), "--nproc-per-node", "2"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (
        f"single node: rc {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    )

    two = tmp_path / "two"
    cfg2 = train_yaml(tmp_path / "two.yaml", tokens, two)
    endpoint = f"127.0.0.1:{free_port()}"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "selene.cli",
                "train",
                str(cfg2),
                "--nnodes",
                "2",
                "--node-rank",
                str(rank),
                "--nproc-per-node",
                "1",
                "--rdzv-endpoint",
                endpoint,
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in (0, 1)
    ]
    results = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=300)
            results.append((p.returncode, out))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for rank, (rc, out) in enumerate(results):
        assert rc == 0, f"node {rank}: rc {rc}\n{out[-6000:]}"
    ref, got = losses(one), losses(two)
    assert sorted(ref) == [1, 2, 3, 4]
    assert sorted(got) == sorted(ref)
    for step in ref:
        assert got[step] == pytest.approx(ref[step], abs=1e-6), (step, got, ref)
    assert (two / "checkpoints" / "step-000004" / "meta.json").exists()
