"""The campaign: choose the cases, build the inputs, run each case, print the report (`main`)."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from . import __doc__ as CAMPAIGN_DOC
from .cases import Case, cases
from .context import Ctx, tagged_processes, unmount_all
from .fixtures import prepare
from .judges import Result
from .render import render


def needs_eval_ref(selected: list[Case]) -> bool:
    return any(c.stage == "eval" for c in selected)


def run_case(ctx: Ctx, c: Case) -> Result:
    d = ctx.case_dir(c.key)
    t0 = time.time()
    try:
        outcome, detail, run = c.fn(ctx, d)
    except Exception as e:  # a bug of the campaign itself: say so, never count it as held
        outcome, detail, run = "campaign error", f"{type(e).__name__}: {e}", None
    finally:
        unmount_all(ctx)
    r = Result(c.stage, c.case, c.fault, outcome, list(c.expect), outcome in c.expect,
               run.first_line if run else "", detail, time.time() - t0)  # fmt: skip
    stray = tagged_processes(ctx.tag)
    for q in stray:  # anything of this case still running would disturb the next: stop it
        with contextlib.suppress(Exception):
            q.kill()
    return r


def select(all_cases: list[Case], only: str | None) -> list[Case]:
    """The cases matching any of the comma-separated patterns of `only` (all when it is empty)."""
    if not only:
        return all_cases
    pats = [p for p in only.split(",") if p]
    return [
        c for c in all_cases if any(fnmatch.fnmatch(c.key, p) or p in c.key or p == c.fault for p in pats)
    ]


@contextlib.contextmanager
def workdir(path: str | None, keep: bool) -> Iterator[Path]:
    if path:
        p = Path(path).resolve()
        if p.exists():
            shutil.rmtree(p)
        p.mkdir(parents=True)
        yield p
        return
    p = Path(tempfile.mkdtemp(prefix="selene-faults-"))
    try:
        yield p
    finally:
        if not keep:
            shutil.rmtree(p, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.faults", description=(CAMPAIGN_DOC or "").split("\n")[0]
    )
    ap.add_argument(
        "--only",
        help="run the cases whose stage/case matches (substring, glob, or a fault class; several: comma-separated)",
    )
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--work", help="work directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    a = ap.parse_args(argv)
    chosen = select(cases(), a.only)
    if a.list:
        for c in chosen:
            print(f"{c.key}  [{c.fault}]  expect {' | '.join(c.expect)}")
        return 0
    if not chosen:
        print(f"no case matches {a.only!r}", file=sys.stderr)
        return 2
    t0 = time.time()
    with workdir(a.work, a.keep) as work:
        ctx = prepare(work)
        print(f"inputs built in {ctx.refs['build_seconds']:.0f} s under {work}", file=sys.stderr)
        if needs_eval_ref(chosen):
            ref = ctx.cli(["eval", "--checkpoint", str(work / "train"), "--limit", "2", "--tasks", "selene_piqa",
                           "-o", str(work / "eval-ref")])  # fmt: skip
            if ref.rc != 0:
                raise SystemExit(f"the reference evaluation failed:\n{ref.text[-3000:]}")
        results = []
        for c in chosen:
            r = run_case(ctx, c)
            results.append(r)
            print(f"[{len(results)}/{len(chosen)}] {c.key}: {r.outcome}{'' if r.held else ' (FAILED)'} ({r.seconds:.1f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    total = time.time() - t0
    print(render(results))
    print(f"\ncampaign time: {total:.0f} s")
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        held = sum(r.held for r in results)
        doc = {
            "cases": len(results), "held": held, "failed": len(results) - held, "seconds": round(total, 1),
            "failures_by_outcome": dict(Counter(r.outcome for r in results if not r.held)),
            "results": [asdict(r) for r in results],
        }  # fmt: skip
        Path(a.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0
