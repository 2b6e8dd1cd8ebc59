"""How the code is laid out, counted: the figures the architecture work is judged by.

    python benchmarks/architecture.py                  # the working tree
    python benchmarks/architecture.py --rev 3d0dbf4    # a commit (read with `git show`, nothing checked out)
    python benchmarks/architecture.py --rev A --rev B  # side by side

Counts, per tree: modules under selene/ and the largest; functions whose return annotation is
`dict[str, Any]`; places that reload a step's stored result by hand (`json.loads(fs.read_text(...))`);
hand-written `.abort()` calls on writers outside the writer's own module; forward passes (functions that
loop over a model's `layers`); `# type: ignore` comments; lines per stage package.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("ingest", "quality", "dedup", "decontaminate", "blend", "tokenize", "train", "eval", "model")


def _files(rev: str | None) -> dict[str, str]:
    """selene/**.py → text, from the working tree or from commit `rev`."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "selene").rglob("*.py"))}
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "selene"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    out = {}
    for name in names:
        if name.endswith(".py"):
            out[name] = subprocess.run(
                ["git", "show", f"{rev}:{name}"], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout
    return out


def _is_forward(fn: ast.AST) -> bool:
    """A forward pass: a loop over a model's blocks (`model.layers.values()`, `self.layers`) that threads
    a hidden state through them (`h = layer(h, ...)`, `h = h + block.feed_forward(...)`)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and re.search(r"\.layers\b", ast.unparse(node.iter)):
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    name = stmt.targets[0].id
                    if any(isinstance(c, ast.Call) and name in {n.id for a in c.args for n in ast.walk(a)
                                                                  if isinstance(n, ast.Name)}
                           for c in ast.walk(stmt.value)):
                        return True
    return False


def measure(files: dict[str, str]) -> dict[str, object]:
    dict_any = 0
    forwards: list[str] = []
    for name, text in files.items():
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.returns is not None and ast.unparse(node.returns).replace("'", "") == "dict[str, Any]":
                    dict_any += 1
                if _is_forward(node):
                    forwards.append(f"{name}:{node.name}")
    lines = {name: text.count("\n") for name, text in files.items()}
    largest = sorted(lines.items(), key=lambda kv: -kv[1])[:6]
    per_stage = {
        s: sum(n for name, n in lines.items() if name.startswith(f"selene/{s}/")) for s in STAGES
    }
    return {
        "modules": len(files),
        "largest": largest,
        "over_400_lines": sum(1 for n in lines.values() if n > 400),
        "dict_any_returns": dict_any,
        "marker_reloads": sum(t.count("json.loads(fs.read_text(") for t in files.values()),
        "abort_calls": sum(t.count(".abort()") for n, t in files.items() if not n.endswith("io/dataset.py")),
        "forward_passes": forwards,
        "type_ignores": sum(t.count("# type: ignore") for t in files.values()),
        "lines": sum(lines.values()),
        "stage_lines": per_stage,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", action="append", help="a commit to measure (repeat for side by side); default: the tree")
    args = ap.parse_args()
    revs = args.rev or [None]
    results = [(rev or "working tree", measure(_files(rev))) for rev in revs]
    keys = [k for k in results[0][1] if k not in ("largest", "forward_passes", "stage_lines")]
    width = max(len(k) for k in keys + list(STAGES)) + 2
    print("".ljust(width) + "".join(name[:14].rjust(16) for name, _ in results))
    for k in keys:
        print(k.ljust(width) + "".join(str(r[k]).rjust(16) for _, r in results))
    print("forward passes".ljust(width) + "".join(str(len(r["forward_passes"])).rjust(16) for _, r in results))  # type: ignore[arg-type]
    for s in STAGES:
        print(f"lines {s}".ljust(width) + "".join(str(r["stage_lines"][s]).rjust(16) for _, r in results))  # type: ignore[index]
    for name, r in results:
        print(f"\n{name}: largest modules " + ", ".join(f"{p} {n}" for p, n in r["largest"]))  # type: ignore[attr-defined]
        print(f"{name}: forward passes " + ", ".join(r["forward_passes"]))  # type: ignore[arg-type]
    sys.stdout.flush()


if __name__ == "__main__":
    main()
