"""The campaign's inputs, built once (corpus → ingest → dedup → decontaminate → blend → tokenize →
two trained models → an export), and the command line of each stage on them."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .context import ROOT, Ctx
from .judges import data_hashes, snapshot

BLEND = ["--weights", "Books3=1,ArXiv=1,cc=1,wet=1"]
TOKENIZE = ["--vocab-size", "600"]
CKPT = "checkpoints/step-000002"

# The data stages: (input fixture, arguments after -i/-o); ingest reads the corpus through -s.
STAGES: dict[str, tuple[str, list[str]]] = {
    "dedup": ("ing", []),
    "decontaminate": ("dd", ["-t", str(ROOT / "data" / "tasks" / "mini_piqa.jsonl")]),
    "blend": ("dc", BLEND),
    "tokenize": ("bl", TOKENIZE),
}
REF_DIR = {"ingest": "ing", "dedup": "dd", "decontaminate": "dc", "blend": "bl", "tokenize": "tok"}


def prepare(work: Path, models: bool = True) -> Ctx:
    ctx = Ctx(work)
    t0 = time.time()
    build(ctx, models)
    ctx.refs["snap:tok"] = snapshot(work / "tok")
    ctx.refs["snap:ckpts"] = snapshot(work / "train" / "checkpoints")
    ctx.refs["snap:corpus"] = snapshot(work / "corpus")
    ctx.refs["build_seconds"] = time.time() - t0
    return ctx


def build(ctx: Ctx, models: bool = True) -> None:
    """The campaign's inputs: corpus → ing → dd → dc → bl → tok (+ tok2) → train (4 layers) and
    train2 (2 layers); with `models` False, the data stages' only (fast)."""
    sys.path.insert(0, str(ROOT))
    from tests.ingest.test_ingest import build_corpus

    w = ctx.work
    specs, _ = build_corpus(w / "corpus")
    ctx.refs["specs"] = [f"{s.name}={s.glob}" for s in specs]
    (w / "ingest.yaml").write_text("shard_docs: 5\nrow_group_docs: 3\n")
    tasks = str(ROOT / "data" / "tasks" / "mini_piqa.jsonl")
    ctx.refs["tasks"] = tasks
    steps = [
        ("ingest", ["ingest", "-c", str(w / "ingest.yaml"), "-o", str(w / "ing"), *src_args(ctx)]),
        ("dedup", ["dedup", "-i", str(w / "ing"), "-o", str(w / "dd")]),
        ("decontaminate", ["decontaminate", "-i", str(w / "dd"), "-o", str(w / "dc"), "-t", tasks]),
        ("blend", ["blend", "-i", str(w / "dc"), "-o", str(w / "bl"), *BLEND]),
        ("tokenize", ["tokenize", "-i", str(w / "bl"), "-o", str(w / "tok"), *TOKENIZE]),
        ("tokenize2", ["tokenize", "-i", str(w / "bl"), "-o", str(w / "tok2"), "--vocab-size", "700"]),
    ]
    if not models:
        steps.pop()
    for name, args in steps:
        run = ctx.cli(args)
        if run.rc != 0:
            raise SystemExit(f"building the campaign's inputs: {name} failed:\n{run.text[-3000:]}")
        ctx.refs[f"seconds:{name}"] = run.seconds
    if not models:
        return
    write_train_yaml(w / "train.yaml", w / "train", w / "tok")
    for name, extra in (("train", []), ("train2", ["--set", "model.n_layers=2"])):
        if name == "train2":
            write_train_yaml(w / "train2.yaml", w / "train2", w / "tok")
        run = ctx.cli(["train", str(w / f"{name}.yaml"), *extra])
        if run.rc != 0:
            raise SystemExit(f"building the campaign's inputs: {name} failed:\n{run.text[-3000:]}")
        ctx.refs[f"seconds:{name}"] = run.seconds
    gen = ctx.cli(generate_args(w / "train"))
    ctx.refs["generate"] = gen.text
    ex = ctx.cli(["export", "--checkpoint", str(w / "train"), "-o", str(w / "hf")])
    if ex.rc != 0:
        raise SystemExit(f"building the campaign's inputs: export failed:\n{ex.text[-3000:]}")
    ctx.refs["seconds:export"] = ex.seconds


def generate_args(ckpt: Path) -> list[str]:
    return [
        "generate",
        "--checkpoint",
        str(ckpt),
        "--prompt",
        "The",
        "--max-tokens",
        "8",
        "--temperature",
        "0",
    ]


def src_args(ctx: Ctx, root: Path | None = None) -> list[str]:
    out = []
    for s in ctx.refs["specs"]:
        if root is not None:
            s = s.replace(str(ctx.work / "corpus"), str(root))
        out += ["-s", s]
    return out


def write_train_yaml(path: Path, out: Path, tok: Path, steps: int = 2) -> Path:
    path.write_text(
        f"out: {out}\nmodel: {{preset: debug}}\nnproc_per_node: 1\nparallel: {{dp_shard: 1}}\nsteps: {steps}\n"
        "batch: {seq_len: 32, global_batch: 4, micro_batch: 4}\noptim: {lr: 0.003, warmup_steps: 1}\n"
        f"data: {{prefixes: [{tok}/data_text_document]}}\neval_every: 1000\neval_batches: 1\n"
        "checkpoint: {every: 2, keep: 3}\ntensorboard: false\ndevice: cpu\n"
    )
    return path


def write_pipeline_yaml(ctx: Ctx, path: Path, run_dir: Path, corpus: Path | None = None) -> Path:
    corpus = corpus or ctx.work / "corpus"
    path.write_text(
        f"name: faults\nrun_dir: {run_dir}\nexecutor: {{kind: processes, workers: 1}}\n"
        "ingest:\n  shard_docs: 5\n  row_group_docs: 3\n  sources:\n"
        f"    - {{name: pile, glob: '{corpus}/pile/*.jsonl.zst'}}\n"
        f"    - {{name: cc, glob: '{corpus}/web/*.warc.gz'}}\n"
        f"    - {{name: wet, glob: '{corpus}/web/*.wet.gz'}}\n"
        f"decontaminate: {{tasks: ['{ctx.refs['tasks']}']}}\n"
        "blend: {weights: {Books3: 1, ArXiv: 1, cc: 1, wet: 1}}\n"
        "tokenize: {vocab_size: 600}\n"
    )
    return path


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst) if src.is_dir() else shutil.copy2(src, dst)
    return dst


def stage_args(ctx: Ctx, stage: str, inp: Path | None, out: Path, extra: Sequence[str] = ()) -> list[str]:
    if stage == "ingest":
        return ["ingest", "-c", str(ctx.work / "ingest.yaml"), "-o", str(out), *src_args(ctx, inp), *extra]
    return [stage, "-i", str(inp), "-o", str(out), *STAGES[stage][1], *extra]


def stage_input(ctx: Ctx, stage: str, d: Path, private: bool = False) -> Path:
    """A private copy of the stage's input; for ingest the campaign's corpus itself unless `private`
    (removed.parquet's details name the source files by absolute path, so only the same corpus path
    gives the reference's bytes)."""
    if stage == "ingest" and not private:
        return ctx.work / "corpus"
    src = ctx.work / ("corpus" if stage == "ingest" else STAGES[stage][0])
    return copy(src, d / ("corpus" if stage == "ingest" else "in"))


def compare_stage(ctx: Ctx, stage: str, out: Path) -> Callable[[], str | None]:
    def cmp() -> str | None:
        ref, got = data_hashes(ctx.work / REF_DIR[stage]), data_hashes(out)
        if ref == got:
            return None
        diff = sorted(k for k in ref.keys() | got.keys() if ref.get(k) != got.get(k))
        return f"output differs from the clean run: {', '.join(diff)}"

    return cmp
