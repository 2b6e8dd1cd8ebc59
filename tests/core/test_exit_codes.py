"""One exit-code rule for every command (`selene.errors`): 2 when a command is refused before any
work because of what the user gave (an option, a config value, a wrong path, an output that exists),
1 for a failure while working and for selene's own bugs (said so, with the --debug hint).

Every command runs here in this process (`selene.cli.main`) with a missing input path, a bad option
value and, where it has one, an existing output: each exits 2 with one paragraph that names the path
or the field, no traceback, and leaves nothing behind (no output folder, no work folder, nothing
changed where it reads).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from selene.cli import main
from tests.corpus import write_dataset
from tests.pipeline_runs import ROOT, subprocess_env

DOCS = [(f"d{i}", f"document {i}: " + "a few plain words that make up some text. " * 8) for i in range(6)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the commands read: two finished document datasets, a folder that is no dataset, a
    checkpoint folder (its meta.json: enough to be taken for one), a pipeline and an ablation file,
    a training config over token data that is not there, an ingest config naming block lists that
    are not there, and local task files that lack a split."""
    root = tmp_path_factory.mktemp("exit-codes")
    write_dataset(str(root / "docs"), DOCS)
    write_dataset(str(root / "docs2"), DOCS[:3])
    (root / "plain").mkdir()
    (root / "plain" / "notes.txt").write_text("not a dataset, not a tokenizer\n")
    (root / "ckpt" / "step-000001").mkdir(parents=True)
    (root / "ckpt" / "step-000001" / "meta.json").write_text("{}")
    (root / "piqa-train").mkdir()
    (root / "piqa-train" / "train.jsonl").write_text('{"goal": "a", "sol1": "b", "sol2": "c", "label": 0}\n')
    (root / "p.yaml").write_text(
        f"name: t\nrun_dir: {root / 'run'}\n"
        f"ingest:\n  sources: [{{name: s, glob: '{root / 'none' / '*.jsonl'}'}}]\n"
        "train: {steps: 2, nproc_per_node: 1}\n"
    )
    (root / "a.yaml").write_text(
        f"name: t\npipeline: {root / 'p.yaml'}\nout: {root / 'ablation'}\nvariants:\n  a: {{}}\n"
        f"reference: ['{root / 'none-*.jsonl'}']\n"
    )
    (root / "dedup.yaml").write_text("dedup:\n  threshold: 3\n")  # a stage's section alone
    (root / "executor.yaml").write_text("threshold: 0.5\nexecutor:\n  workers: 0\n")
    (root / "url.yaml").write_text(f"filters:\n  - {{name: url, lists: ['{root / 'no-lists'}']}}\n")
    (root / "train.yaml").write_text(
        f"out: {root / 'train-out'}\nmodel: {{preset: debug}}\n"
        f"data: {{prefixes: ['{root / 'no-tokens' / 'data_text_document'}']}}\nsteps: 2\n"
    )
    return root


@dataclass(frozen=True)
class Case:
    """A refused command: its arguments (``{w}``: the shared files, ``{t}``: the test's own folder,
    where OUT goes), what its message must name, and what the test's folder holds before it runs."""

    args: tuple[str, ...]
    names: str
    setup: Callable[[Path], None] | None = field(default=None, compare=False)


def _export_there(t: Path) -> None:
    (t / "out").mkdir()
    (t / "out" / "mine.txt").write_text("keep me")


def _out_there(t: Path) -> None:
    (t / "out").mkdir()


MISSING = {
    "ingest": Case(("ingest", "-o", "{t}/out", "--source", "x={t}/none/*.jsonl"), "{t}/none/*.jsonl"),
    "ingest-url-lists": Case(("ingest", "-o", "{t}/out", "-c", "{w}/url.yaml", "--source", "x={w}/docs/part-*.parquet"), "filters.url.lists: UT1 list directory {w}/no-lists does not exist"),
    "quality": Case(("quality", "-i", "{t}/none", "-o", "{t}/out", "--rule", "threshold", "--classifier", "hq={t}/none.bin:hq"), "{t}/none.bin"),
    "quality-not-a-model": Case(("quality", "-i", "{w}/docs", "-o", "{t}/out", "--classifier", "hq={w}/plain/notes.txt:hq"), "quality.classifiers[hq].model: {w}/plain/notes.txt is not a fastText model"),
    "quality-train": Case(("quality", "train", "-p", "a={t}/none*.jsonl", "-n", "b={w}/docs", "-o", "{t}/out"), "--positive a={t}/none*.jsonl"),
    "dedup": Case(("dedup", "-i", "{t}/none", "-o", "{t}/out"), "'{t}/none' does not exist"),
    "dedup-against-missing": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "--against", "{t}/none"), "--against {t}/none: no such directory"),
    "dedup-against-ingest": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "--against", "{w}/docs2"), "the output of `ingest`, not of `dedup`"),
    "dedup-against-plain": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "--against", "{w}/plain"), "--against {w}/plain: no manifest.json"),
    "dedup-against-itself": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "--against", "{w}/docs"), "must not be this run's input or output"),
    "dedup-priority": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "--keep", "priority", "--priority", "nosuch", "--strict"), "nosuch"),
    "spans": Case(("spans", "-i", "{t}/none", "-o", "{t}/out", "--unit", "sentence"), "'{t}/none' does not exist"),
    "spans-against-missing": Case(("spans", "-i", "{w}/docs", "-o", "{t}/out", "--unit", "line", "--against", "{t}/none"), "--against {t}/none: no such directory"),
    "spans-against-ingest": Case(("spans", "-i", "{w}/docs", "-o", "{t}/out", "--unit", "line", "--against", "{w}/docs2"), "the output of `ingest`, not of `spans`"),
    "decontaminate": Case(("decontaminate", "-i", "{w}/docs", "-o", "{t}/out", "--tasks", "{t}/none.jsonl"), "{t}/none.jsonl: no such file"),
    "substrings": Case(("substrings", "-i", "{w}/docs", "-o", "{t}/out", "--min-length", "50", "--against", "{t}/none"), "{t}/none: no such directory"),
    "blend": Case(("blend", "-i", "{t}/none", "-o", "{t}/out", "--weights", "s=1"), "'{t}/none' does not exist"),
    "blend-source": Case(("blend", "-i", "{w}/docs", "-o", "{t}/out", "--weights", "nosuch=1"), "blend.weights: source 'nosuch'"),
    "blend-source-into-existing": Case(("blend", "-i", "{w}/docs", "-o", "{t}/out", "--weights", "nosuch=1"), "source 'nosuch'", _out_there),
    "blend-tokenizer-folder": Case(("blend", "-i", "{w}/docs", "-o", "{t}/out", "--weights", "s=1", "--tokenizer", "{w}/plain"), "tokenizer '{w}/plain' is a folder without a tokenizer.json"),
    "tokenize": Case(("tokenize", "-i", "{t}/none", "-o", "{t}/out"), "'{t}/none' does not exist"),
    "tokenize-tokenizer": Case(("tokenize", "-i", "{w}/docs", "-o", "{t}/out", "--tokenizer", "{t}/none.model"), "tokenizer '{t}/none.model' does not exist"),
    "tokenize-tokenizer-folder": Case(("tokenize", "-i", "{w}/docs", "-o", "{t}/out", "--tokenizer", "{w}/plain"), "tokenizer '{w}/plain' is a folder without a tokenizer.json"),
    "tokenize-not-a-tokenizer": Case(("tokenize", "-i", "{w}/docs", "-o", "{t}/out", "--tokenizer", "{w}/plain/notes.txt"), "{w}/plain/notes.txt: not a sentencepiece model"),
    "train": Case(("train", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
    "train-data": Case(("train", "{w}/train.yaml"), "train.data.prefixes[0]: no token dataset at {w}/no-tokens/data_text_document"),
    "eval": Case(("eval", "--checkpoint", "{t}/none", "-o", "{t}/out"), "checkpoint '{t}/none' is not a directory"),
    "eval-task-data": Case(("eval", "--checkpoint", "{w}/ckpt", "--tasks", "piqa", "--task-data", "piqa={t}/none", "-o", "{t}/out"), "--task-data piqa={t}/none: not a directory"),
    "eval-split": Case(("eval", "--checkpoint", "{w}/ckpt", "--tasks", "piqa", "--task-data", "piqa={w}/piqa-train", "-o", "{t}/out"), "piqa scores the split 'validation'"),
    "eval-task-data-name": Case(("eval", "--checkpoint", "{w}/ckpt", "--tasks", "piqa", "--task-data", "pqia={w}/piqa-train", "-o", "{t}/out"), "--task-data names 'pqia'"),
    "export": Case(("export", "--checkpoint", "{t}/none", "-o", "{t}/out"), "checkpoint '{t}/none' is not a directory"),
    "generate": Case(("generate", "--checkpoint", "{t}/none", "--prompt", "hi"), "checkpoint '{t}/none' is not a directory"),
    "generate-prompts": Case(("generate", "--checkpoint", "{w}/ckpt", "--prompts", "{t}/none.txt"), "--prompts {t}/none.txt: cannot read it"),
    "run": Case(("run", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
    "run-source": Case(("run", "{w}/p.yaml"), "--source s={w}/none/*.jsonl: the pattern matches no file"),
    "ablate": Case(("ablate", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
    "ablate-reference": Case(("ablate", "{w}/a.yaml"), "reference: {w}/none-*.jsonl: matches no file"),
    "deploy": Case(("deploy", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
    "plan": Case(("plan", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
    "plan-calibration": Case(("plan", "--model", "debug", "--gpus", "8", "--tokens", "1B", "--calibration", "{t}/none.json"), "'{t}/none.json' does not exist"),
    "plan-serve": Case(("plan", "serve", "--checkpoint", "{t}/none"), "checkpoint '{t}/none' is not a directory"),
    "scaling-study": Case(("scaling-study", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
    "config-validate": Case(("config", "validate", "{t}/none.yaml"), "'{t}/none.yaml' does not exist"),
}  # fmt: skip

BAD_VALUE = {
    "ingest": Case(("ingest", "-o", "{t}/out", "--source", "x={w}/docs", "--extractor", "nonsense"), "nonsense"),
    "ingest-url-lists": Case(("ingest", "-o", "{t}/out", "-c", "{w}/url.yaml", "--source", "x={w}/docs/part-*.parquet"), "filters.url.lists: UT1 list directory {w}/no-lists does not exist"),
    "quality": Case(("quality", "-i", "{w}/docs", "-o", "{t}/out", "--rule", "nonsense"), "rule"),
    "quality-train": Case(("quality", "train", "-p", "a={w}/docs", "-n", "b={w}/docs2", "-o", "{t}/out", "--heldout", "2"), "--heldout"),
    "dedup": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "--shingle", "nonsense"), "shingle"),
    "dedup-config-line": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "-c", "{w}/dedup.yaml"), "dedup.yaml (dedup settings): 1 invalid setting(s)\n  threshold (line 2): got 3"),
    "dedup-executor-line": Case(("dedup", "-i", "{w}/docs", "-o", "{t}/out", "-c", "{w}/executor.yaml"), "executor.yaml (executor): 1 invalid setting(s)\n  workers (line 3): got 0"),
    "spans": Case(("spans", "-i", "{w}/docs", "-o", "{t}/out", "--unit", "word"), "unit: got 'word': Input should be 'sentence', 'paragraph' or 'line'"),
    "spans-span": Case(("spans", "-i", "{w}/docs", "-o", "{t}/out", "--unit", "line", "--span", "0"), "span: got 0"),
    "spans-no-unit": Case(("spans", "-i", "{w}/docs", "-o", "{t}/out"), "no unit: give --unit sentence, paragraph or line"),
    "decontaminate": Case(("decontaminate", "-i", "{w}/docs", "-o", "{t}/out", "--ngram", "0"), "ngram"),
    "substrings": Case(("substrings", "-i", "{w}/docs", "-o", "{t}/out", "--min-length", "50", "--unit", "chars"), "unit"),
    "blend": Case(("blend", "-i", "{w}/docs", "-o", "{t}/out", "--weights", "s"), "--weights: 's' is not SOURCE=NUMBER"),
    "tokenize": Case(("tokenize", "-i", "{w}/docs", "-o", "{t}/out", "--model-type", "nonsense"), "model_type"),
    "train": Case(("train", "{w}/train.yaml", "--set", "model.preset=debgu"), "model.preset"),
    "eval": Case(("eval", "--checkpoint", "{w}/ckpt", "--device", "nonsense", "-o", "{t}/out"), "device"),
    "export": Case(("export", "--checkpoint", "{w}/ckpt", "-o", "{t}/out"), "give --overwrite to replace a previous export", _export_there),
    "eval-output-file": Case(("eval", "--checkpoint", "{w}/ckpt", "--tasks", "selene_piqa", "-o", "{w}/plain/notes.txt"), "the eval output {w}/plain/notes.txt is a file"),
    "generate": Case(("generate", "--checkpoint", "{w}/ckpt", "--prompt", "hi", "--device", "nonsense"), "--device 'nonsense'"),
    "run": Case(("run", "{w}/p.yaml", "--from", "nonsense"), "nonsense"),
    "ablate": Case(("ablate", "{w}/a.yaml", "--seeds", "x"), "--seeds 'x'"),
    "deploy": Case(("deploy", "{w}/p.yaml", "--only", "nonsense"), "--only: unknown deployment(s) nonsense"),
    "plan": Case(("plan", "--model", "debug", "--gpus", "8", "--tokens", "1B", "--gpu", "nonsense"), "unknown device 'nonsense'"),
    "plan-serve": Case(("plan", "serve", "--model", "debug", "--gpus", "1", "--kv-dtype", "nonsense"), "--kv-dtype 'nonsense'"),
    "config-defaults": Case(("config", "defaults", "nonsense"), "unknown stage 'nonsense'"),
}  # fmt: skip


def tree(*roots: Path) -> dict[str, float | None]:
    """Every path under `roots` with its file's modification time (None: a folder)."""
    out: dict[str, float | None] = {}
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            out[dirpath] = None
            for f in files:
                p = os.path.join(dirpath, f)
                out[p] = os.stat(p).st_mtime_ns
    return out


def refused(case: Case, world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Run `case`; assert the rule: exit 2, one paragraph naming what is wrong, no traceback, nothing
    made or changed in its own folder or in the files it reads. Returns the message."""
    if case.setup is not None:
        case.setup(tmp_path)
    args = [a.format(w=world, t=tmp_path) for a in case.args]
    before = tree(world, tmp_path)
    code = main(args)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert code == 2, captured.err
    assert "error: " in captured.err, captured.err
    message = captured.err[captured.err.index("error: ") :].strip()
    assert "\n\n" not in message and "rerun with --debug" not in message, message
    assert case.names.format(w=world, t=tmp_path) in message, message
    assert tree(world, tmp_path) == before  # nothing left behind, nothing touched
    return message


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SELENE_PREFECT", "off")  # no server looked for: the rule, not the dashboard
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path.parent / f"{tmp_path.name}-no-datasets"))


@pytest.mark.parametrize("name", sorted(MISSING))
def test_a_missing_or_wrong_path_exits_2(
    name: str, world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(MISSING[name], world, tmp_path, capsys)


@pytest.mark.parametrize("name", sorted(BAD_VALUE))
def test_a_bad_option_value_exits_2(
    name: str, world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(BAD_VALUE[name], world, tmp_path, capsys)


def test_every_command_is_covered() -> None:
    """Each command `selene --help` lists is run here with a wrong path and with a bad value (a new
    command fails this test until it is added)."""
    from selene.cli.app import app

    listed = [
        c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands if not c.hidden
    ]
    commands = {n.replace("_", "-") for n in listed} - {"version"}
    commands |= {g.name for g in app.registered_groups} - {"server"}  # server: start/stop, no input
    for cases in (MISSING, BAD_VALUE):
        run = {c.args[0] for c in cases.values()}
        assert commands - run - {"scaling-study"} == set(), commands - run  # scaling-study: a file only
    assert {c.args[:2] for c in MISSING.values()} >= {
        ("quality", "train"),
        ("plan", "serve"),
        ("config", "validate"),
    }


def test_an_internal_error_says_it_is_selenes_bug(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken invariant (the stages' accounting) is selene's fault: exit 1, said so, with the hint."""
    from collections import Counter

    from selene.errors import InternalError
    from selene.ingest.finish import balance
    from selene.io.steps import check_accounting

    with pytest.raises(InternalError) as e:
        check_accounting("ingest", balance(Counter(s=2), Counter(s=1), {"s": Counter()}, 1, 0))
    assert e.value.exit_code == 1 and "a bug in selene, not in your input" in str(e.value)

    def broken(*args: object, **kwargs: object) -> None:
        raise InternalError("accounting: kept + removed differs from the input")

    monkeypatch.setattr("selene.dedup.stage.run_dedup", broken)
    args = ["dedup", "-i", str(world / "docs"), "-o", str(tmp_path / "out")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "internal error (a bug in selene, not in your input): accounting" in err
    assert "rerun with --debug for the traceback" in err and "Traceback" not in err
    assert main([*args, "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_check_writable_leaves_no_folder(tmp_path: Path) -> None:
    from selene.io import fs

    fs.check_writable(str(tmp_path / "a" / "b" / "out"))
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "there").mkdir()
    fs.check_writable(str(tmp_path / "there"))
    assert [p.name for p in tmp_path.iterdir()] == ["there"] and list((tmp_path / "there").iterdir()) == []


def test_ingest_help_shows_the_source_forms(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Help is rich markup: `NAME[text_key=K,...]=GLOB` read as a tag and vanished ("NAME=GLOB, or NAME=GLOB")."""
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["ingest", "--help"]) == 0
    assert "NAME=GLOB, or NAME[text_key=K,id_key=K,meta_keys=A+B]=GLOB" in capsys.readouterr().out


def test_eval_refuses_task_data_before_lm_eval_loads(world: Path, tmp_path: Path) -> None:
    """A missing split and a mistyped --task-data name are refused with lm-eval unimportable: before
    its import and its registry's index (13-25 s on a busy machine before the refusals moved)."""
    poisoned = (
        "import sys; sys.modules['lm_eval'] = None\nfrom selene.cli import main\nsys.exit(main(sys.argv[1:]))"
    )
    base = [
        "eval",
        "--checkpoint",
        str(world / "ckpt"),
        "--tasks",
        "piqa,selene_piqa",
        "-o",
        str(tmp_path / "out"),
    ]
    env = subprocess_env(tmp_path, SELENE_PREFECT="off", HF_DATASETS_CACHE=str(tmp_path / "no-datasets"))
    for data, message in (
        (f"piqa={world / 'piqa-train'}", "piqa scores the split 'validation'"),
        (f"pqia={world / 'piqa-train'}", "--task-data names 'pqia'"),
    ):
        got = subprocess.run(
            [sys.executable, "-c", poisoned, *base, "--task-data", data],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
        )  # fmt: skip
        assert got.returncode == 2 and message in got.stderr and "Traceback" not in got.stderr, got.stderr
    got = subprocess.run(
        [sys.executable, "-c", poisoned, "eval", "--checkpoint", str(world / "ckpt"), "--tasks", "boolq"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert got.returncode == 2 and "needs the Hugging Face dataset aps/super_glue" in got.stderr, got.stderr
    assert (
        not (tmp_path / "out").exists()
        and json.loads((world / "ckpt" / "step-000001" / "meta.json").read_text()) == {}
    )
