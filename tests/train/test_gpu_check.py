"""benchmarks/gpu_check.py, the prepared GPU run, end to end on the CPU (`--cpu-smoke`).

On a GPU machine the same script trains 125m at seq 2048 with a kill and a resume, evaluates,
generates, measures MFU, runs the Hugging Face peer and the serving points; here every part runs
with tiny settings, so that the one short device run does not spend its minutes on a broken script.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.pipeline_runs import subprocess_env
from tests.train.conftest import GpuCheckRun

ROOT = Path(__file__).resolve().parents[2]


def test_gpu_check_runs_every_part_on_cpu(gpu_check_smoke: GpuCheckRun) -> None:
    proc, out = gpu_check_smoke.proc, gpu_check_smoke.out  # run once a session: tests/train/conftest.py
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "== summary ==" in proc.stdout
    parts = json.loads((out / "results.json").read_text())["parts"]
    for name in ("train", "mfu", "peer", "serve"):
        assert parts[name]["status"] == "ok", (name, parts[name])

    train = parts["train"]
    # killed with its process group past the checkpoint, nothing left running, resumed from it
    assert train["killed_at_step"] >= train["shape"]["kill_after"]
    assert train["left_running_after_kill"] == []
    assert train["resumed_from"].endswith(f"step-{train['shape']['every']:06d}")
    # the steps both runs logged after the checkpoint: the same losses, exactly, on a CPU
    assert train["compared_steps"] and train["max_abs_diff"] == 0.0
    assert len(train["losses"]) == train["shape"]["steps"]
    assert train["eval"]["rc"] == 0 and "selene_piqa" in train["eval"]["results"]["results"]
    assert train["generate"]["rc"] == 0 and train["generate"]["timing"]["prompts"] == 8

    (mfu,) = parts["mfu"]["runs"]
    assert mfu["name"] == "debug" and 0 < mfu["mfu"] < 1
    assert (out / "mfu" / "calibration.json").exists()
    assert any("debug" in line for line in parts["peer"]["table"])
    assert [p["batch"] for p in parts["serve"]["points"]] == [8]
    assert all(p["timing"]["generated_tokens"] > 0 for p in parts["serve"]["points"])


def test_gpu_check_refuses_an_unknown_part(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "benchmarks/gpu_check.py"), "--cpu-smoke", "--out", str(tmp_path / "o"),
           "--parts", "train,mfuu"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=subprocess_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "unknown part 'mfuu'" in proc.stderr
