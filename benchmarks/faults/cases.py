"""The cases: each injects one fault into one command and judges the outcome; `cases()` is the
catalogue the campaign runs."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .context import TIMEOUT, TRACEBACK, Ctx, Run, tagged_processes
from .fixtures import (
    CKPT,
    REF_DIR,
    STAGES,
    compare_stage,
    copy,
    generate_args,
    src_args,
    stage_args,
    stage_input,
    write_pipeline_yaml,
    write_train_yaml,
)
from .injectors import DAMAGE, garbage, random_bytes
from .judges import (
    ERR,
    REFUSED,
    RERUN,
    compare_files,
    compare_train,
    data_hashes,
    judge_error,
    judge_ok,
    named,
    names_of,
    refusal,
    snapshot,
)


@dataclass
class Case:
    stage: str
    case: str
    fault: str
    expect: Sequence[str]
    fn: Callable[[Ctx, Path], tuple[str, str, Run | None]] = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.stage}/{self.case}"


def cases() -> list[Case]:
    out: list[Case] = []
    data = ["dedup", "decontaminate", "blend", "tokenize"]
    # output = input / nested / around; the input of another running command
    for st in ["ingest", *data]:
        for where in ("same", "inside") if st != "ingest" else ("same",):
            out.append(overlap_case(st, where))
    out.append(overlap_case("dedup", "around"))
    out += [train_into_data(), eval_into_checkpoint(), export_overwrite_case(), run_into_sources()]
    out += [overlap_running_case("tokenize", "blend"), overlap_running_case("blend", "decontaminate")]
    # corrupt inputs: shards, manifests, removed.parquet
    for st in data:
        for how in ("bitflip", "truncate", "random", "removed"):
            out.append(input_fault_case(st, "part-00000.parquet", how))
    for st in ("dedup", "tokenize"):
        for how in ("bitflip", "truncate", "garbage", "removed"):
            out.append(input_fault_case(st, "manifest.json", how))
    for st in ("dedup", "blend"):
        for how in ("truncate", "random"):
            out.append(input_fault_case(st, "removed.parquet", how))
    for target, how in (("pile/00.jsonl.zst", "bitflip+checksum"), ("pile/00.jsonl.zst", "truncate"), ("pile/01.jsonl.zst", "random"),
                        ("web/a.warc.gz", "truncate"), ("web/a.warc.gz", "random"), ("web/b.warc.wet.gz", "garbage")):  # fmt: skip
        out.append(ingest_source_case(target, how))
    out += [rerun_over_corrupt_output("dedup", "part-00001.parquet", "bitflip"),
            rerun_over_corrupt_output("dedup", "removed.parquet", "truncate"),
            rerun_over_corrupt_output("blend", "part-00000.parquet", "removed")]  # fmt: skip
    # bad or missing inputs
    for st in ("dedup", "tokenize"):
        out += [missing_case(st, "no such input"), missing_case(st, "empty input dir")]
    out += [missing_case("dedup", "token data as input"), missing_case("ingest", "no such input"),
            missing_case("train", "no such input"), missing_case("eval", "no such input"),
            missing_case("export", "no such input"), missing_case("generate", "no such input")]  # fmt: skip
    out += [misc_case("tokenize", "--tokenizer corrupt", "corrupt input", _bad_tokenizer("tokenize")),
            misc_case("blend", "--tokenizer corrupt", "corrupt input", _bad_tokenizer("blend"))]  # fmt: skip
    # token data for training
    for target in ("data_text_document.idx", "data_text_document.bin"):
        for how in ("bitflip", "truncate", "random", "removed"):
            out.append(train_data_case(target, how))
    out += [train_data_case("manifest.json", "garbage"), train_data_case("tokenizer.model", "random")]
    # checkpoints: damaged files, another model's shapes, another tokenizer
    ck = [(f"{CKPT}/__0_0.distcp", h) for h in ("bitflip", "truncate", "random", "removed")]
    ck += [(f"{CKPT}/.metadata", h) for h in ("truncate", "random", "removed")]
    ck += [(f"{CKPT}/meta.json", h) for h in ("garbage", "truncate", "removed")]
    ck += [("tokenizer.model", "truncate"), ("tokenizer.model", "random")]
    out += [model_case("export", t, h) for t, h in ck]
    out += [model_case("generate", t, h) for t, h in (ck[0], ck[3], ck[4], ck[7], ck[9], ck[11])]
    out += [model_case("eval", t, h) for t, h in (ck[1], ck[4], ck[7], ck[11])]
    out += [model_case("train", t, h) for t, h in (ck[1], ck[7])]
    for cmd in ("eval", "export", "generate"):
        out.append(model_case(cmd, f"{CKPT}/meta.json", "swap:train2"))
        out.append(model_case(cmd, "tokenizer.model", "swap:tok2"))
    out += [wrong_shape_train("size"), wrong_shape_train("tokenizer")]
    # config files
    for st in ["ingest", *data, "run", "train", "eval", "plan", "scaling-study", "config validate"]:
        for kind in ("garbage", "empty", "list"):
            if st == "eval" and kind == "empty":
                continue  # a full evaluation with defaults: slow, and nothing to compare it with
            out.append(config_case(st, kind))
    out.append(config_case("plan --calibration", "garbage"))
    for st in BAD_VALUES:
        out.append(config_case(st, "badvalue"))
    # full disk, then space freed and the command rerun
    for st in ["ingest", *data, "train", "export"]:
        out.append(full_disk_case(st, "tmpfs"))
    for st in ("dedup", "tokenize"):
        out.append(full_disk_case(st, "fsize"))
    # two at once; kill -9 and rerun
    for st in ["ingest", "dedup", "blend", "tokenize", "export", "train"]:
        out.append(concurrent_case(st))
    for st in ["ingest", *data, "train"]:
        out.append(concurrent_paused_case(st))
    for st in ["ingest", *data]:
        out += [kill_case(st, 0.6), kill_case(st, 0.85)]
    out += [kill_case("train", 0.7, 1), kill_case("export", 0.7, 1), kill_case("run", 0.6, 1)]
    return out


def input_fault_case(stage: str, target: str, how: str, expect: Sequence[str] = ERR) -> Case:
    """Damage one file of the stage's (copied) input, run the stage."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        inp = stage_input(ctx, stage, d, private=True)
        path = inp / target
        DAMAGE[how](path, random.Random(f"{stage}{target}{how}"))
        snap = {inp: snapshot(inp)}
        out = d / "out"
        run = ctx.cli(stage_args(ctx, stage, inp, out))
        verdict = judge_error(run, names_of(path, missing=how == "removed"), snap)
        if verdict is None:
            if stage == "ingest":
                verdict = quarantine(ctx, out, path)
            else:
                verdict = judge_ok(compare_stage(ctx, stage, out))
        return (*verdict, run)

    return Case(stage, f"{Path(target).name}:{how}", "corrupt input", (*expect, "ran clean"), fn)


def quarantine(ctx: Ctx, out: Path, path: Path) -> tuple[str, str]:
    """ingest exited 0 on a damaged source file: is there a removed.parquet record for it, with a reason?"""
    import pyarrow.parquet as pq

    def rows(d: Path) -> set[tuple[str, str]]:
        t = pq.read_table(d / "removed.parquet").to_pylist()
        return {(r["id"], r["reason"]) for r in t}

    new = rows(out) - rows(ctx.work / "ing")
    mine = [r for r in new if path.name in r[0] and r[1]]
    if mine:
        return "quarantine", f"{len(mine)} record(s), e.g. {sorted(mine)[0]}"
    diff = compare_stage(ctx, "ingest", out)()
    return (
        "silent loss/corruption",
        f"exit 0, no removed record for {path.name}; {diff or 'output identical'}",
    )


def ingest_source_case(target: str, how: str) -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        corpus = copy(ctx.work / "corpus", d / "corpus")
        path = corpus / target
        DAMAGE[how](path, random.Random(f"ingest{target}{how}"))
        snap = {corpus: snapshot(corpus)}
        out = d / "out"
        run = ctx.cli(stage_args(ctx, "ingest", corpus, out))
        verdict = judge_error(run, names_of(path), snap) or quarantine(ctx, out, path)
        return (*verdict, run)

    return Case("ingest", f"{Path(target).name}:{how}", "corrupt input", ("quarantine", "clear error"), fn)


def overlap_case(stage: str, where: str) -> Case:
    """-o the same as -i, inside it, or around it."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        if stage == "ingest":
            corpus = copy(ctx.work / "corpus", d / "corpus")
            inp = corpus / "pile"
        else:
            inp = stage_input(ctx, stage, d)
            corpus = inp
        out = {"same": inp, "inside": inp / "sub", "around": inp.parent}[where]
        snap = {corpus: snapshot(corpus)}
        run = ctx.cli(stage_args(ctx, stage, corpus if stage == "ingest" else inp, out))
        names = names_of(out) if where == "same" else names_of(inp, out)
        return (*refusal(run, names, snap, "exit 0 writing into its own input"), run)

    return Case(stage, f"output {where} input", "overlap", REFUSED, fn)


def config_case(stage: str, kind: str) -> Case:
    """A config file of garbage bytes, empty, a YAML list, or with a bad value."""
    content = {
        "garbage": None,
        "empty": b"",
        "list": b"- a\n- b\n",
        "badvalue": b"",
    }[kind]

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        cfg = d / ("calibration.json" if stage == "plan --calibration" else "config.yaml")
        if content is None:
            garbage(cfg, random.Random(f"{stage}{kind}"))
        else:
            cfg.write_bytes(content)
        field_name = None
        if kind == "badvalue":
            field_name, text = BAD_VALUES[stage]
            cfg.write_text(text)
        out = d / "out"
        compare: Callable[[], str | None] | None = None
        if stage in STAGES or stage == "ingest":
            if stage == "ingest":
                args = ["ingest", "-c", str(cfg), "-o", str(out), *src_args(ctx)]
            else:
                args = [*stage_args(ctx, stage, ctx.work / STAGES[stage][0], out), "-c", str(cfg)]
            compare = compare_stage(ctx, stage, out)
            if stage == "ingest":
                compare = None  # defaults differ from the campaign's ingest.yaml: no reference
        elif stage == "run":
            args = ["run", str(cfg)]
        elif stage == "train":
            args = ["train", str(cfg)]
        elif stage == "eval":
            args = [
                "eval",
                "--checkpoint",
                str(ctx.work / "train"),
                "--limit",
                "2",
                "-o",
                str(out),
                "-c",
                str(cfg),
            ]
        elif stage == "plan":
            args = ["plan", str(cfg), "--gpus", "8"]
        elif stage == "plan --calibration":
            args = ["plan", "--model", "debug", "--gpus", "8", "--tokens", "1B", "--calibration", str(cfg)]
        elif stage == "scaling-study":
            args = ["scaling-study", str(cfg)]
        elif stage == "config validate":
            args = ["config", "validate", str(cfg)]
        else:
            raise ValueError(stage)
        before = snapshot(cfg)
        run = ctx.cli(args)
        names = names_of(cfg)
        if field_name:
            names.append([field_name])
        verdict = judge_error(run, names, {cfg: before})
        if verdict is None:
            verdict = judge_ok(compare) if compare else ("ran clean", "exit 0 (no reference to compare)")
            if kind != "empty":
                verdict = ("silent loss/corruption", f"exit 0 with a {kind} config file")
        return (*verdict, run)

    expect = (
        (*ERR, "ran clean") if kind == "empty" and (stage in STAGES or stage in ("ingest", "eval")) else ERR
    )
    return Case(stage, f"config:{kind}", "config", expect, fn)


BAD_VALUES = {
    "dedup": ("threshold", "threshold: high\n"),
    "tokenize": ("model_type", "model_type: wordpiece\n"),
    "run": ("run_dir", "name: x\nrun_dir: [1, 2]\n"),
    "train": ("steps", "out: /tmp/never\nsteps: -3\n"),
}


def full_disk_case(stage: str, mode: str) -> Case:
    """The output on a full filesystem (a small tmpfs) or past RLIMIT_FSIZE; then space is freed
    and the same command is rerun: it must finish with the clean run's bytes."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        use_tmpfs = mode == "tmpfs" and ctx.can_tmpfs(d)
        mnt = d / "disk"
        mnt.mkdir(exist_ok=True)
        if stage == "train":
            ref_out = ctx.work / "train"
            ref_bytes = sum(p.stat().st_size for p in (ref_out / CKPT).rglob("*") if p.is_file())
            ref_big = max(p.stat().st_size for p in (ref_out / CKPT).rglob("*") if p.is_file())
        elif stage == "export":
            ref_out = ctx.work / "hf"
            ref_bytes = sum(p.stat().st_size for p in ref_out.iterdir())
            ref_big = max(p.stat().st_size for p in ref_out.iterdir())
        else:
            ref_out = ctx.work / REF_DIR[stage]
            ref_bytes = sum(p.stat().st_size for p in ref_out.iterdir() if p.is_file())
            ref_big = max(p.stat().st_size for p in ref_out.iterdir() if p.is_file())
        out = mnt / "out"
        fsize = None
        if use_tmpfs:
            ctx.mount(mnt, max(8192, ref_bytes // 2))
        else:
            fsize = max(4096, ref_big // 2)
        if stage == "train":
            cfgfile = write_train_yaml(d / "train.yaml", out, ctx.work / "tok")
            args = ["train", str(cfgfile)]
            inputs = {ctx.work / "tok": ctx.refs["snap:tok"]}
            compare = compare_train(ref_out, out)
        elif stage == "export":
            args = ["export", "--checkpoint", str(ctx.work / "train"), "-o", str(out)]
            inputs = {ctx.work / "train" / "checkpoints": ctx.refs["snap:ckpts"]}
            compare = compare_files(ref_out, out, ("model.safetensors", "config.json", "tokenizer.json"))
        else:
            inp = stage_input(ctx, stage, d)
            args = stage_args(ctx, stage, inp, out)
            inputs = {inp: snapshot(inp)}
            compare = compare_stage(ctx, stage, out)
        first = ctx.cli(args, fsize=fsize)
        how = "" if use_tmpfs or mode == "fsize" else "no tmpfs here, RLIMIT_FSIZE instead: "
        verdict = judge_error(first, names_of(out), inputs)
        if verdict is None:
            return (*judge_ok(compare), first)
        if verdict[0] != "clear error":
            return verdict[0], f"{how}first run: {verdict[1]}", first
        if use_tmpfs:
            subprocess.run(["mount", "-o", "remount,size=256m", str(mnt)], check=True)
        again = ctx.cli(args)
        v2 = judge_error(again, names_of(out), inputs)
        if v2 is not None:
            return v2[0], f"rerun after space was freed: {v2[1]} — {again.first_line}", first
        diff = compare()
        if diff:
            return "silent loss/corruption", f"rerun: {diff}", first
        return "identical rerun", f"{how}first: {first.first_line[:120]}", first

    return Case(stage, f"full disk ({mode})", "full disk", RERUN, fn)


def kill_case(stage: str, fraction: float, workers: int = 2) -> Case:
    """kill -9 of the command (its main process, as a user does) at a point of its work; then:
    processes left? does a rerun give the bytes of an uninterrupted run of the same command?

    The uninterrupted run comes first, in the same case: it is the reference, and it times the work
    (from the output's appearing, before which the command only imports, to its exit). The kill
    lands at `fraction` of that span, jittered; when the command beats the kill, the point moves
    earlier (halved), up to 4 tries, and a command never caught is said so, not counted as held."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        out, ref = d / "out", d / "clean"
        w = ["-w", str(workers)] if workers > 1 else []
        inp = None if stage in ("train", "export", "run") else stage_input(ctx, stage, d)

        def command(o: Path) -> list[str]:
            if stage == "train":
                return ["train", str(write_train_yaml(d / f"{o.name}.yaml", o, ctx.work / "tok"))]
            if stage == "export":
                return ["export", "--checkpoint", str(ctx.work / "train"), "-o", str(o)]
            if stage == "run":
                return ["run", str(write_pipeline_yaml(ctx, d / f"{o.name}.yaml", o)), "--until", "tokenize"]
            return stage_args(ctx, stage, inp, o, w)

        def compare() -> str | None:
            if stage == "train":
                return compare_train(ref, out)()
            if stage == "export":
                return compare_files(ref, out, ("model.safetensors", "config.json", "tokenizer.json"))()
            dirs = list(REF_DIR) if stage == "run" else ["."]  # `run`: every stage's directory
            bad = [
                s for s in dirs if data_hashes(ref / s) != data_hashes(out / s) or not data_hashes(out / s)
            ]
            return f"differs from the uninterrupted run: {', '.join(bad)}" if bad else None

        if inp is not None:
            inputs = {inp: snapshot(inp)}
        else:
            inputs = {
                "train": {ctx.work / "tok": ctx.refs["snap:tok"]},
                "export": {ctx.work / "train" / "checkpoints": ctx.refs["snap:ckpts"]},
                "run": {ctx.work / "corpus": ctx.refs["snap:corpus"]},
            }[stage]

        def started(p: subprocess.Popen[bytes], o: Path, t0: float) -> float:
            while stage != "export" and not o.exists() and p.poll() is None and time.time() - t0 < TIMEOUT:
                time.sleep(0.002)
            return time.time() - t0

        t0 = time.time()
        p = ctx.popen(command(ref), d / "clean.log")
        t_out_ref = started(p, ref, t0)
        clean = ctx.finish(p, t0)
        if clean.rc != 0:
            return "campaign error", f"the uninterrupted run failed: {clean.first_line}", clean
        span = max(0.01, clean.seconds - t_out_ref)
        rng = random.Random(f"kill{stage}{fraction}")
        for attempt in range(4):
            shutil.rmtree(out, ignore_errors=True)
            tag = f"{ctx.tag}-{uuid.uuid4().hex[:6]}"
            t0 = time.time()
            p = ctx.popen(command(out), d / f"killed{attempt}.log", tag=tag)
            t_out = started(p, out, t0)
            delay = t_out + span * fraction * rng.uniform(0.8, 1.2) * 0.5**attempt
            while time.time() - t0 < delay and p.poll() is None:
                time.sleep(0.002)
            finished = p.poll() is not None
            if not finished:
                os.kill(p.pid, signal.SIGKILL)
            t_kill = time.time() - t0
            killed = ctx.finish(p, t0)
            if not finished:
                break
        else:
            return (
                "campaign error",
                f"the command finished before every kill point (last {t_kill:.2f} s)",
                killed,
            )
        time.sleep(1.5)
        left = tagged_processes(tag)
        orphan_note = ""
        if left:
            orphan_note = "; ".join(f"pid {q.pid}: {' '.join(q.cmdline())[:80]}" for q in left[:3])
            for q in left:
                with contextlib.suppress(Exception):
                    q.kill()
            time.sleep(0.5)
        when = (f"killed at {t_kill:.2f} s (try {attempt + 1}); output appeared at {t_out:.2f} s; "
                f"uninterrupted run {clean.seconds:.2f} s")  # fmt: skip
        if left:
            return "orphans", f"{len(left)} left after kill -9 ({when}): {orphan_note}", killed
        again = ctx.cli(command(out))
        v = judge_error(again, names_of(out), inputs)
        if v is not None:
            return v[0], f"rerun after kill -9 ({when}): {v[1]} — {again.first_line}", again
        diff = compare()
        if diff:
            return "silent loss/corruption", f"rerun after kill -9 ({when}): {diff}", again
        return "identical rerun", when, again

    return Case(stage, f"kill -9 at {int(fraction * 100)}%", "kill", RERUN, fn)


def concurrent_case(stage: str) -> Case:
    """The same command twice at once, writing the same output."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        out = d / "out"
        if stage == "export":
            args = ["export", "--checkpoint", str(ctx.work / "train"), "-o", str(out)]
            compare = compare_files(
                ctx.work / "hf", out, ("model.safetensors", "config.json", "tokenizer.json")
            )
        elif stage == "train":
            args = ["train", str(write_train_yaml(d / "train.yaml", out, ctx.work / "tok"))]
            compare = compare_train(ctx.work / "train", out)
        else:
            inp = stage_input(ctx, stage, d)
            args = stage_args(ctx, stage, inp, out)
            compare = compare_stage(ctx, stage, out)
        t0 = time.time()
        procs = [ctx.popen(args, d / f"run{i}.log") for i in range(2)]
        runs = [ctx.finish(p, t0) for p in procs]
        for r in runs:
            if r.timed_out:
                return "hang", "", r
            if TRACEBACK in r.text:
                return "traceback", "", r
        ok = [r for r in runs if r.rc == 0]
        other = [r for r in runs if r.rc != 0]
        if len(ok) == 2:
            diff = compare()
            if diff:
                return "silent loss/corruption", f"both exited 0; {diff}", runs[1]
            return "not refused", "both exited 0 (output identical to the clean run)", runs[1]
        if not ok:
            return "unclear error", f"both failed (rc {runs[0].rc}, {runs[1].rc})", runs[1]
        loser = other[0]
        diff = compare()
        if diff:
            return "silent loss/corruption", f"winner's output: {diff}", loser
        if loser.rc == 2 and named(loser.text, names_of(out)):
            return "refused", "", loser
        if named(loser.text, names_of(out)):
            return "clear error", f"rc {loser.rc}", loser
        return "unclear error", f"rc {loser.rc}, does not name {out}", loser

    return Case(stage, "two at once, same output", "concurrent", REFUSED, fn)


def concurrent_paused_case(stage: str) -> Case:
    """The same command started while a first one, writing the same output, is mid-run (paused
    with SIGSTOP as soon as its output, a temporary or a lock beside it appears): deterministic
    where the race above depends on timing. The second must refuse; the first, resumed, must
    finish with the clean run's bytes."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        out = d / "out"
        if stage == "train":
            args = ["train", str(write_train_yaml(d / "train.yaml", out, ctx.work / "tok"))]
            compare = compare_train(ctx.work / "train", out)
        else:
            inp = stage_input(ctx, stage, d)
            args = stage_args(ctx, stage, inp, out)
            compare = compare_stage(ctx, stage, out)
        for attempt in range(3):
            shutil.rmtree(out, ignore_errors=True)
            t0 = time.time()
            first = ctx.popen(args, d / f"first{attempt}.log")
            while first.poll() is None and not any(p.name.startswith(out.name) for p in d.iterdir()):
                time.sleep(0.002)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(first.pid, signal.SIGSTOP)
            if first.poll() is None:
                break
            ctx.finish(first, t0)
        else:
            return "campaign error", "the first command finished before it could be paused, 3 times", None
        try:
            second = ctx.cli(args, d / "second.log")
        finally:
            os.killpg(first.pid, signal.SIGCONT)
        run1 = ctx.finish(first, t0)
        for r, which in ((second, "second"), (run1, "first")):
            if r.timed_out:
                return "hang", f"{which} run", r
            if TRACEBACK in r.text:
                return "traceback", f"{which} run", r
        if second.rc == 0:
            diff = compare()
            how = f"first rc {run1.rc}; " + (diff or "output identical to the clean run")
            return (
                ("silent loss/corruption" if diff or run1.rc else "not refused"),
                f"second exited 0; {how}",
                second,
            )
        if run1.rc != 0:
            return (
                "silent loss/corruption",
                f"the first run failed after the second (rc {run1.rc}): {run1.first_line}",
                second,
            )
        diff = compare()
        if diff:
            return "silent loss/corruption", f"first run's output: {diff}", second
        if not named(second.text, names_of(out)):
            return "unclear error", f"rc {second.rc}, does not name {out}", second
        return ("refused", "", second) if second.rc == 2 else ("clear error", f"rc {second.rc}", second)

    return Case(stage, "second while the first runs", "concurrent", REFUSED, fn)


def overlap_running_case(reader: str, writer: str) -> Case:
    """While `reader` runs on X (paused mid-run), `writer` is asked to write X."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        import psutil

        wi = ctx.work / STAGES[writer][0]
        x = copy(ctx.work / REF_DIR[writer], d / "x")  # the writer's output = the reader's input
        snap = {x: snapshot(x)}
        rout = d / "reader-out"
        t0 = time.time()
        p = ctx.popen(stage_args(ctx, reader, x, rout), d / "reader.log")
        caught = False
        while p.poll() is None and time.time() - t0 < 60:
            try:
                procs = [psutil.Process(p.pid), *psutil.Process(p.pid).children(recursive=True)]
                if any(f.path.startswith(str(x)) for q in procs for f in q.open_files()) or rout.exists():
                    os.killpg(p.pid, signal.SIGSTOP)
                    caught = True
                    break
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
            time.sleep(0.002)
        if not caught:
            ctx.finish(p, t0)
            return "campaign error", "could not catch the reader mid-run (it finished first)", None
        try:
            run = ctx.cli(stage_args(ctx, writer, wi, x, ["--force"]))
        finally:
            os.killpg(p.pid, signal.SIGCONT)
        reader_run = ctx.finish(p, t0)
        return (
            *refusal(
                run,
                names_of(x),
                snap,
                f"exit 0 overwriting the input of a running {reader} (reader rc {reader_run.rc})",
            ),
            run,
        )

    return Case(writer, f"output = input of a running {reader}", "overlap", REFUSED, fn)


def model_case(cmd: str, target: str, how: str, expect: Sequence[str] = ERR) -> Case:
    """eval / export / generate / train-resume on a damaged copy of the trained model's directory."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        tdir = copy(ctx.work / "train", d / "train")
        if how.startswith("swap:"):
            src = how.split(":", 1)[1]  # e.g. "train2" (a 2-layer model) or "tok2" (another tokenizer)
            shutil.copy2(ctx.work / src / target, tdir / target)
        elif how != "none":
            DAMAGE[how](tdir / target, random.Random(f"{cmd}{target}{how}"))
        path = tdir / target
        snap = {tdir: snapshot(tdir)}
        out = d / "out"
        if cmd == "eval":
            args = [
                "eval",
                "--checkpoint",
                str(tdir),
                "--limit",
                "2",
                "--tasks",
                "selene_piqa",
                "-o",
                str(out),
            ]
        elif cmd == "export":
            args = ["export", "--checkpoint", str(tdir), "-o", str(out)]
        elif cmd == "generate":
            args = generate_args(tdir)
        elif cmd == "train":
            cfgfile = write_train_yaml(d / "train.yaml", tdir, ctx.work / "tok")
            args = ["train", str(cfgfile), "--set", "steps=3"]
            snap = {tdir / CKPT: snapshot(tdir / CKPT)}
        else:
            raise ValueError(cmd)
        run = ctx.cli(args)

        def compare() -> str | None:
            if cmd == "eval":
                ref, got = ctx.work / "eval-ref" / "perplexity.json", out / "perplexity.json"
                same = (
                    got.exists()
                    and json.loads(got.read_text())["loss"] == json.loads(ref.read_text())["loss"]
                )
                return None if same else "held-out loss differs from the clean run"
            if cmd == "export":
                return compare_files(ctx.work / "hf", out, ("model.safetensors", "tokenizer.json"))()
            if cmd == "generate":
                return (
                    None if run.text == ctx.refs["generate"] else "generated text differs from the clean run"
                )
            return "resumed from the damaged checkpoint"  # train: no clean run resumes from one

        names = names_of(path, missing=how == "removed")
        if how.startswith("swap:"):  # another model's file: naming the checkpoint counts too
            names = [names_of(path)[0] + names_of(tdir / CKPT)[0]]
        verdict = judge_error(run, names, snap)
        if verdict is None:
            verdict = judge_ok(compare)
            if verdict[0] == "ran clean" and how.startswith("swap:"):
                verdict = ("silent loss/corruption", f"exit 0 with {target} of {how[5:]}")
        return (*verdict, run)

    if how.startswith("swap:"):
        return Case(cmd, f"{target}:{how}", "wrong shape", expect, fn)
    return Case(cmd, f"{target}:{how}", "checkpoint", (*expect, "ran clean"), fn)


def train_data_case(target: str, how: str) -> Case:
    """Training on a damaged copy of the token dataset."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        tok = copy(ctx.work / "tok", d / "tok")
        path = tok / target
        DAMAGE[how](path, random.Random(f"train{target}{how}"))
        snap = {tok: snapshot(tok)}
        out = d / "out"
        run = ctx.cli(["train", str(write_train_yaml(d / "train.yaml", out, tok))])
        verdict = judge_error(run, names_of(path, missing=how == "removed"), snap)
        verdict = verdict or judge_ok(compare_train(ctx.work / "train", out))
        return (*verdict, run)

    return Case("train", f"data {target}:{how}", "corrupt input", (*ERR, "ran clean"), fn)


def wrong_shape_train(kind: str) -> Case:
    """Resume a 4-layer checkpoint as a 2-layer model, or on data of another tokenizer."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        tdir = copy(ctx.work / "train", d / "train")
        snap = {tdir / CKPT: snapshot(tdir / CKPT)}
        tok = ctx.work / ("tok2" if kind == "tokenizer" else "tok")
        args = ["train", str(write_train_yaml(d / "train.yaml", tdir, tok)), "--set", "steps=3"]
        if kind == "size":
            args += ["--set", "model.n_layers=2"]
        run = ctx.cli(args)
        verdict = judge_error(run, names_of(tdir / CKPT), snap)
        if verdict is None:
            verdict = ("silent loss/corruption", f"exit 0: resumed a checkpoint of another {kind}")
        return (*verdict, run)

    return Case("train", f"resume, another model {kind}", "wrong shape", ERR, fn)


def missing_case(stage: str, what: str) -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        out = d / "out"
        if what == "no such input":
            inp = d / "nowhere"
        elif what == "empty input dir":
            inp = d / "empty"
            inp.mkdir()
        elif what == "token data as input":
            inp = copy(ctx.work / "tok", d / "tok")
        else:
            raise ValueError(what)
        if stage == "train":
            args = ["train", str(write_train_yaml(d / "train.yaml", out, inp))]
            path = inp / "data_text_document" if what != "no such input" else inp
        elif stage in ("eval", "export", "generate"):
            args = {"eval": ["eval", "--checkpoint", str(inp), "-o", str(out)],
                    "export": ["export", "--checkpoint", str(inp), "-o", str(out)],
                    "generate": generate_args(inp)}[stage]  # fmt: skip
            path = inp
        elif stage == "ingest":
            args = ["ingest", "-o", str(out), "-s", f"pile={inp}/*.jsonl.zst"]
            path = inp
        else:
            args = stage_args(ctx, stage, inp, out)
            path = inp
        snap = {inp: snapshot(inp)} if inp.exists() else {}
        run = ctx.cli(args)
        verdict = judge_error(run, names_of(path) if stage != "train" else [[str(inp)]], snap)
        if verdict is None:
            verdict = ("silent loss/corruption", f"exit 0 with {what}")
        return (*verdict, run)

    return Case(stage, what, "bad input", ERR, fn)


def rerun_over_corrupt_output(stage: str, target: str, how: str) -> Case:
    """A finished output whose file is then damaged; the same command again (no --force)."""

    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        inp = ctx.work / STAGES[stage][0]
        out = copy(ctx.work / REF_DIR[stage], d / "out")
        # the reference manifest names its own input path: rerun on that input so it matches
        args = stage_args(ctx, stage, inp, out)
        DAMAGE[how](out / target, random.Random(f"out{stage}{target}{how}"))
        snap = {inp: snapshot(inp)}
        run = ctx.cli(args)
        verdict = judge_error(run, names_of(out / target), snap)
        if verdict is None:
            diff = compare_stage(ctx, stage, out)()
            verdict = ("silent loss/corruption", f"exit 0; {diff}") if diff else ("identical rerun", "redone")
        return (*verdict, run)

    return Case(stage, f"rerun over damaged output {target}:{how}", "corrupt output", (*RERUN, *ERR), fn)


def misc_case(
    stage: str, case: str, fault: str, args_fn: Callable[[Ctx, Path], tuple[list[str], list[list[str]]]]
) -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        args, names = args_fn(ctx, d)
        run = ctx.cli(args)
        verdict = judge_error(run, names, {ctx.work / "tok": ctx.refs["snap:tok"]})
        if verdict is None:
            verdict = ("silent loss/corruption", "exit 0")
        return (*verdict, run)

    return Case(stage, case, fault, ERR, fn)


def _bad_tokenizer(stage: str) -> Callable[[Ctx, Path], tuple[list[str], list[list[str]]]]:
    def f(ctx: Ctx, d: Path) -> tuple[list[str], list[list[str]]]:
        model = d / "tokenizer.model"
        shutil.copy2(ctx.work / "tok" / "tokenizer.model", model)
        random_bytes(model, random.Random(stage))
        inp = ctx.work / STAGES[stage][0]
        return stage_args(ctx, stage, inp, d / "out", ["--tokenizer", str(model)]), names_of(model)

    return f


def _export_overwrite_train(ctx: Ctx, d: Path) -> tuple[list[str], list[list[str]]]:
    tdir = copy(ctx.work / "train", d / "train")
    ctx.refs["_overwrite"] = tdir
    return ["export", "--checkpoint", str(tdir), "-o", str(tdir), "--overwrite"], names_of(tdir)


def export_overwrite_case() -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        args, names = _export_overwrite_train(ctx, d)
        tdir = ctx.refs["_overwrite"]
        snap = {
            tdir / "checkpoints": snapshot(tdir / "checkpoints"),
            tdir / "metrics.jsonl": snapshot(tdir / "metrics.jsonl"),
        }
        run = ctx.cli(args)
        return (*refusal(run, names, snap, "exit 0"), run)

    return Case("export", "-o TRAIN_DIR --overwrite", "overlap", (*REFUSED, *ERR), fn)


def eval_into_checkpoint() -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        tdir = copy(ctx.work / "train", d / "train")
        ck = tdir / CKPT
        snap = {ck: snapshot(ck)}
        run = ctx.cli(
            ["eval", "--checkpoint", str(ck), "--limit", "2", "--tasks", "selene_piqa", "-o", str(ck)]
        )
        return (*refusal(run, names_of(ck), snap, "exit 0 writing into the checkpoint"), run)

    return Case("eval", "output = checkpoint dir", "overlap", REFUSED, fn)


def train_into_data() -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        tok = copy(ctx.work / "tok", d / "tok")
        snap = {tok: snapshot(tok)}
        run = ctx.cli(["train", str(write_train_yaml(d / "t.yaml", tok, tok))])
        return (*refusal(run, names_of(tok), snap, "exit 0 writing checkpoints into its data directory"), run)

    return Case("train", "out = data dir", "overlap", REFUSED, fn)


def run_into_sources() -> Case:
    def fn(ctx: Ctx, d: Path) -> tuple[str, str, Run | None]:
        corpus = copy(ctx.work / "corpus", d / "corpus")
        # run_dir/ingest is the folder of the pile sources
        (corpus / "ingest").mkdir()
        for f in (corpus / "pile").iterdir():
            shutil.copy2(f, corpus / "ingest" / f.name)
        snap = {corpus: snapshot(corpus)}
        cfg = write_pipeline_yaml(ctx, d / "p.yaml", corpus, corpus)
        cfg.write_text(cfg.read_text().replace(f"{corpus}/pile/", f"{corpus}/ingest/"))
        run = ctx.cli(["run", str(cfg), "--until", "ingest"])
        return (
            *refusal(
                run,
                names_of(corpus / "ingest"),
                snap,
                "exit 0 writing ingest's output into its source folder",
            ),
            run,
        )

    return Case("run", "stage output = source folder", "overlap", REFUSED, fn)
