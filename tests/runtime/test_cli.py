"""The `selene` command: exit codes, messages without tracebacks, the ingest flow, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from selene.blend.manifest import BlendManifest
from selene.cli import main
from selene.dedup.manifest import DedupManifest
from selene.io import dataset
from tests.ingest.test_ingest import build_corpus

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-corpus")
    build_corpus(root)
    return root


def sources(root: Path) -> list[str]:
    return ["--source", f"pile={root}/pile/*.jsonl.zst", "--source", f"cc={root}/web/*.warc.gz", "--source", f"wet={root}/web/*.wet.gz"]


@pytest.mark.parametrize("cmd", [[], ["ingest"], ["config"], ["config", "validate"], ["run"]])
def test_help_everywhere(cmd: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*cmd, "--help"]) == 0
    assert "Usage:" in capsys.readouterr().out


def test_config_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "validate", str(ROOT / "configs" / "demo.yaml")]) == 0
    out = capsys.readouterr().out
    assert "run_dir: runs/demo" in out and "- name: gopher_repetition" in out  # resolved, defaults filled in
    bad = tmp_path / "bad.yaml"
    bad.write_text("run_dir: r\ningest: {shard_docs: -1}\n")
    assert main(["config", "validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "ingest.shard_docs" in err and "greater than or equal to 1" in err and "Traceback" not in err


def test_bad_usage_exits_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "-o", str(tmp_path / "o"), "--source", "nonsense"]) == 2
    assert "expected NAME=GLOB" in capsys.readouterr().err
    assert main(["ingest", "-o", str(tmp_path / "o"), "--workers", "0", "--source", "a=b"]) == 2
    assert main(["frobnicate"]) == 2


def test_glob_matching_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "-o", str(tmp_path / "o"), "--source", f"x={tmp_path}/none-*.jsonl"]) == 2
    captured = capsys.readouterr()
    assert "matches no file" in captured.err and "Traceback" not in captured.err + captured.out


def test_unwritable_output_exits_1(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    assert main(["ingest", "-o", str(tmp_path / "f" / "o"), *sources(corpus)]) == 1
    captured = capsys.readouterr()
    assert "not writable" in captured.err and "Traceback" not in captured.err + captured.out


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_ingest_byte_identical_with_or_without_prefect_and_workers(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """Without a server the command runs the stage directly and says once how to get the dashboard;
    reporting to Prefect, or on two workers, it writes the same bytes."""
    outs = []
    for name, args in (("direct-1", ["--workers", "1"]), ("direct-2", ["--workers", "2"]), ("prefect-2", ["-w", "2"])):
        if name.startswith("prefect"):
            request.getfixturevalue("prefect_api")
        out = tmp_path / name
        assert main(["ingest", "-o", str(out), *sources(corpus), *args]) == 0
        err = capsys.readouterr().err
        assert err.count("no Prefect server") == (0 if name.startswith("prefect") else 1), err
        outs.append(dataset.read_manifest(str(out)))
    first = outs[0]
    assert first is not None and first.removed is not None
    for m in outs[1:]:
        assert m is not None and m.removed is not None
        assert [s.sha256 for s in m.shards] == [s.sha256 for s in first.shards]
        assert m.removed.sha256 == first.removed.sha256 and m.stats == first.stats


def test_failure_inside_the_flow_prints_no_traceback(tmp_path: Path, corpus: Path) -> None:
    """Prefect logs to its own console handler; run the real command to see what a user sees."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "import selene.ingest.stage as stage\n"
        "def boom(*a):\n"
        "    raise RuntimeError('disk on fire')\n"
        "stage.process_file = boom\n"
        "from selene.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = ["ingest", "-o", str(tmp_path / "o"), "--workers", "1", "--source", f"pile={corpus}/pile/*.jsonl.zst"]
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_LOGGING_LEVEL": "INFO"}
    env.pop("PREFECT_API_URL", None)
    quiet = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=120)
    assert quiet.returncode == 1
    assert "RuntimeError: disk on fire" in quiet.stderr and "--debug" in quiet.stderr
    assert "Traceback" not in quiet.stderr + quiet.stdout
    loud = subprocess.run([sys.executable, "-c", script, *args, "--debug"], capture_output=True, text=True, env=env, timeout=120)
    assert loud.returncode == 1 and "Traceback" in loud.stderr


def test_dedup_and_decontaminate_commands(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ing = tmp_path / "ingest"
    assert main(["ingest", "-o", str(ing), *sources(corpus)]) == 0
    assert main(["dedup", "-i", str(ing), "-o", str(tmp_path / "dedup"), "--threshold", "0.7", "--shingle", "char", "--ngram", "6"]) == 0
    dedup = dataset.read_manifest(str(tmp_path / "dedup"), DedupManifest)
    assert dedup is not None and dedup.config["shingle"] == "char"
    tasks = ROOT / "data" / "tasks"
    assert main(["decontaminate", "-i", str(tmp_path / "dedup"), "-o", str(tmp_path / "dc"), "--tasks", str(tasks / "mini_piqa.jsonl"), "--tasks", str(tasks / "mini_lambada")]) == 0
    out = capsys.readouterr().out
    assert "dedup →" in out and "decontaminate →" in out
    # bad usage: exit 2 with the field named; an input path that is no dataset (missing, a file): exit 2 naming it
    assert main(["dedup", "-i", str(ing), "-o", str(tmp_path / "x"), "--bands", "4"]) == 2
    assert "set both `bands` and `rows`" in capsys.readouterr().err
    assert main(["dedup", "-i", str(tmp_path / "nothing"), "-o", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["dedup", "-i", str(ing / "part-00000.parquet"), "-o", str(tmp_path / "x")]) == 2
    assert "is a file, not a dataset: give the folder that holds it" in capsys.readouterr().err
    assert main(["decontaminate", "-i", str(ing), "-o", str(tmp_path / "y")]) == 2
    assert "--tasks" in capsys.readouterr().err


def test_blend_and_tokenize_commands(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ing = tmp_path / "ingest"
    assert main(["ingest", "-o", str(ing), *sources(corpus)]) == 0
    assert main(["blend", "-i", str(ing), "-o", str(tmp_path / "blend"), "--weights", "Books3=0.5,ArXiv=0.3", "--epochs", "cc=2"]) == 0
    blend = dataset.read_manifest(str(tmp_path / "blend"), BlendManifest)
    assert blend is not None and blend.blend.sources["cc"].epochs == 2.0
    assert main(["tokenize", "-i", str(tmp_path / "blend"), "-o", str(tmp_path / "tok"), "--vocab-size", "600"]) == 0
    out = capsys.readouterr().out
    assert "requested vs realised" in out and "data_text_document.bin/.idx" in out
    assert main(["blend", "-i", str(ing), "-o", str(tmp_path / "b2"), "--weights", "Books3=abc"]) == 2
    assert "is not SOURCE=NUMBER" in capsys.readouterr().err
    assert main(["blend", "-i", str(ing), "-o", str(tmp_path / "b2"), "--weights", "Nope=1"]) == 2
    assert "Nope" in capsys.readouterr().err
    model = str(tmp_path / "tok" / "tokenizer.model")
    assert main(["tokenize", "-i", str(ing), "-o", str(tmp_path / "t2"), "--tokenizer", model, "--vocab-size", "9"]) == 2


def test_output_reads_in_order_when_piped() -> None:
    """A command's own lines and those of the processes it starts (torchrun's ranks, workers) come out
    of a pipe in the order they were written: without `in_order` the parent's lines, block-buffered,
    came after everything its children printed."""
    import os
    import subprocess
    import sys

    code = (
        "import subprocess, sys\n"
        "from selene.cli import in_order\n"
        "in_order()\n"
        "print('parent: stage one done')\n"
        "subprocess.run([sys.executable, '-c', 'print(\"child: step 1\"); print(\"child: step 2\")'], check=True)\n"
        "print('parent: stage two done')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["parent: stage one done", "child: step 1", "child: step 2", "parent: stage two done"]
