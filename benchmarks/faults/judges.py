"""The mechanical judgement of a run: snapshots of the inputs, whether the message names the offending
path, and comparisons of an output with a clean run's."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .context import TIMEOUT, TRACEBACK, Run

DATA_PATTERNS = ("part-*.parquet", "removed.parquet", "*.bin", "*.idx", "tokenizer.model")
ERR = ("clear error",)
REFUSED = ("refused",)
RERUN = ("identical rerun",)


@dataclass
class Result:
    stage: str
    case: str
    fault: str
    outcome: str
    expect: list[str]
    held: bool = False
    message: str = ""
    detail: str = ""
    seconds: float = 0.0


def snapshot(path: Path) -> dict[str, str]:
    """sha256 of every file under `path` (or of `path`), by relative name. Training's sample-index
    caches (``<prefix>.gpt-<hash>.*``, written next to the token data as Megatron-LM does) are left
    out: derived files added beside the data, not a change to it."""
    if path.is_file():
        return {".": hashlib.sha256(path.read_bytes()).hexdigest()}
    if not path.exists():
        return {}
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file() and ".gpt-" not in p.name
    }


def data_hashes(directory: Path) -> dict[str, str]:
    """sha256 of a stage's data outputs (temporary files left out)."""
    got = {}
    for pattern in DATA_PATTERNS:
        for p in directory.glob(pattern):
            if ".tmp" not in p.name:
                got[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return got


def names_of(*paths: Path | str, missing: bool = False) -> list[list[str]]:
    """For each path, the strings that count as naming it: absolute, or its last two components
    (and, for a file that is `missing`, its folder's)."""
    out = []
    for p in paths:
        p = Path(p)
        alts = [str(p), os.path.join(p.parent.name, p.name)]
        if missing:
            alts.append(str(p.parent))
        out.append(alts)
    return out


def named(text: str, names: list[list[str]]) -> bool:
    return all(any(n in text for n in alts) for alts in names)


def changes(before: dict[str, str], after: dict[str, str]) -> str:
    """What differs between two snapshots, in words ("" if nothing)."""
    parts = []
    for word, names in (
        ("deleted", sorted(before.keys() - after.keys())),
        ("changed", sorted(k for k in before.keys() & after.keys() if before[k] != after[k])),
        ("added", sorted(after.keys() - before.keys())),
    ):
        if names:
            parts.append(f"{word} {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}")
    return "; ".join(parts)


def judge_error(
    run: Run, names: list[list[str]], inputs: dict[Path, dict[str, str]]
) -> tuple[str, str] | None:
    """The outcome of a run that should have failed, or None when it exited 0 (the caller decides)."""
    if run.timed_out:
        return "hang", f"no exit in {TIMEOUT} s"
    if TRACEBACK in run.text:
        return "traceback", ""
    changed = [f"{p} ({what})" for p, snap in inputs.items() if (what := changes(snap, snapshot(p)))]
    if changed:
        return "silent loss/corruption", f"input modified: {'; '.join(changed)} (rc {run.rc})"
    if run.rc == 0:
        return None
    if run.rc is not None and run.rc < 0:
        return "unclear error", f"killed by signal {-run.rc}"
    if not named(run.text, names):
        return "unclear error", f"rc {run.rc}; does not name {' and '.join(a[0] for a in names)}"
    return "clear error", f"rc {run.rc}"


def refusal(
    run: Run, names: list[list[str]], inputs: dict[Path, dict[str, str]], silent: str
) -> tuple[str, str]:
    """The verdict of a case that must be refused: exit 2 naming the paths is `refused`, exit 0 is
    `silent loss/corruption` (`silent` says what it did), anything else as `judge_error` says."""
    verdict = judge_error(run, names, inputs)
    if verdict is None:
        return ("silent loss/corruption", silent)
    if verdict[0] == "clear error" and run.rc == 2:
        return ("refused", "")
    return verdict


def judge_ok(compare: Callable[[], str | None]) -> tuple[str, str]:
    """An exit 0 on a faulted input: identical to the clean run (unnoticed) or not (loss)."""
    diff = compare()
    if diff is None:
        return "ran clean", "exit 0, output identical to the unfaulted run"
    return "silent loss/corruption", f"exit 0; {diff}"


def losses(out: Path) -> dict[int, float]:
    got = {}
    path = out / "metrics.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                r = json.loads(line)
                if "loss" in r:
                    got[r["step"]] = r["loss"]
    return got


def compare_train(ref: Path, out: Path) -> Callable[[], str | None]:
    """Training's output against a clean run's: the losses, and the tokenizer it copies (what
    eval, export and generate will use)."""

    def cmp() -> str | None:
        a, b = losses(ref), losses(out)
        if a != b:
            return f"losses differ from the clean run: {a} vs {b}"
        if snapshot(ref / "tokenizer.model") != snapshot(out / "tokenizer.model"):
            return "tokenizer.model differs from the clean run's"
        return None

    return cmp


def compare_files(ref: Path, out: Path, names: Sequence[str]) -> Callable[[], str | None]:
    def cmp() -> str | None:
        bad = [n for n in names if snapshot(ref / n) != snapshot(out / n) or not (out / n).exists()]
        return f"differs from the clean run: {', '.join(bad)}" if bad else None

    return cmp
