"""selene's import graph against its layers: cycles, upward imports, function-level imports.

    python scripts/import_graph.py            # the report
    python scripts/import_graph.py --check    # exit 1 on a cycle, an upward or a forbidden import (make test runs
                                              # tests/core/test_layers.py, which asserts the same)

Read from the source with `ast`, so nothing is imported. An import inside ``if TYPE_CHECKING:`` is
for annotations only and never runs: it is not an edge. A function-level import is an edge like any
other (it runs the first time the function does), so a lazy import cannot hide a cycle.

The layers, top first. A module may import its own layer and any layer below it, never one above;
within a layer, no cycles between modules. The stage packages share one layer (a stage may use
another's library code, e.g. training reads the tokenizer's indexed datasets), so a cycle between
two of them is caught as a cycle. A stage's `command` module (its own command, where the generated
one does not fit) belongs to the command-line layer: it may use the runner, nothing in the stage
imports it, and it imports nothing of `selene.cli` (`FORBIDDEN`). The model (`selene.model`: the
transformer and its one forward pass) sits below the stages that train, evaluate and plan with it,
and imports none of them. The pipeline file's model (`selene.config.pipeline`) is composed from the
registry and sits beside it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "selene"

def _stage_packages() -> tuple[str, ...]:
    """The packages of the registered stages (each declares its run function by import path) and
    the planner's, which shares their layer. Reading the registry imports nothing heavy."""
    sys.path.insert(0, str(ROOT))
    from selene import registry

    packages = [s.run.path.partition(":")[0].rpartition(".")[0] for s in registry.STAGES]
    return tuple(dict.fromkeys([*packages, "selene.plan"]))


STAGE_PACKAGES = _stage_packages()

LAYERS: tuple[tuple[str, ...], ...] = (
    ("selene.docs", "selene.cli", "selene.entry_points_check", *(f"{p}.command" for p in STAGE_PACKAGES)),
    ("selene.runner",),
    ("selene.flows",),
    ("selene.ablate", "selene.pipeline", "selene.report"),
    ("selene.job",),
    (*STAGE_PACKAGES, "selene.summary", "selene.stages"),
    ("selene.model",),
    ("selene.registry", "selene.entry_points", "selene.config.pipeline", "selene.executor", "selene.guard", "selene.io", "selene.server", "selene.view", "selene.charts"),
    ("selene.config", "selene.manifest", "selene.errors", "selene.procs", "selene.hashing", "selene.faults", "selene"),
)

FORBIDDEN: tuple[tuple[tuple[str, ...], str], ...] = ((STAGE_PACKAGES, "selene.cli"),)
"""Imports refused beyond the layers: (importers, imported). A stage's own command module shares the
command-line layer, but no module of a stage package imports the command-line package: what a
command prints through is `selene.terminal`'s, below the stages."""


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    lazy: bool  # inside a function body
    reason: str  # the comment on the import's line (a lazy import says why it is lazy)


def modules(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The selene module `name` denotes: itself, else its longest known prefix (an attribute)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[Import]:
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def comment(node: ast.stmt) -> str:
        line = lines[node.lineno - 1]
        return line.partition("#")[2].strip()

    def visit(nodes: Iterable[ast.stmt], lazy: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse, lazy)
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                if t.split(".")[0] != PACKAGE:
                    continue
                r = _resolve(t, known)
                if r and r != module:
                    found.append(Import(module, r, node.lineno, lazy, comment(node)))
            for name in ("body", "orelse", "finalbody", "handlers"):
                child = getattr(node, name, None)
                if isinstance(child, list):
                    inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                    visit([c for c in child if isinstance(c, (ast.stmt, ast.ExceptHandler))], inner)  # type: ignore[misc]
            if isinstance(node, ast.ExceptHandler):
                visit(node.body, lazy)
            for case in getattr(node, "cases", []) or []:
                visit(case.body, lazy)

    visit(tree.body, False)
    return found


def layer_of(module: str) -> int:
    best, rank = -1, len(LAYERS) - 1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    return rank


def _within(module: str, prefixes: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    nodes = sorted(set(edges) | {t for ts in edges.values() for t in ts})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


@dataclass
class Graph:
    imports: list[Import]
    sizes: dict[str, int]

    @property
    def edges(self) -> dict[str, set[str]]:
        e: dict[str, set[str]] = defaultdict(set)
        for i in self.imports:
            e[i.source].add(i.target)
        return e

    def cycles(self) -> list[list[str]]:
        return cycles(self.edges)

    def upward(self) -> list[Import]:
        return [i for i in self.imports if layer_of(i.target) < layer_of(i.source)]

    def forbidden(self) -> list[Import]:
        return [
            i for i in self.imports for sources, target in FORBIDDEN
            if _within(i.target, (target,)) and _within(i.source, sources)
        ]  # fmt: skip

    def lazy(self) -> list[Import]:
        return [i for i in self.imports if i.lazy]


def build(root: Path = ROOT) -> Graph:
    known = modules(root)
    imports = list(dict.fromkeys(imp for m, p in known.items() for imp in imports_of(m, p, known)))
    sizes = {m: len(p.read_text().splitlines()) for m, p in known.items()}
    return Graph(imports, sizes)


def report(g: Graph, largest: int = 10) -> str:
    out = [f"modules: {len(g.sizes)}, import edges: {sum(map(len, g.edges.values()))}"]
    cyc = g.cycles()
    out.append(f"cycles: {len(cyc)}")
    out += [f"  {' <-> '.join(c)}" for c in cyc]
    up = g.upward()
    out.append(f"upward imports: {len(up)}")
    out += [f"  {i.source}:{i.line} -> {i.target}" for i in up]
    bad = g.forbidden()
    out.append(f"forbidden imports: {len(bad)}")
    out += [f"  {i.source}:{i.line} -> {i.target}" for i in bad]
    lazy = g.lazy()
    out.append(f"function-level imports of selene modules: {len(lazy)} (with a reason comment: {sum(bool(i.reason) for i in lazy)})")
    big = sorted(g.sizes.items(), key=lambda kv: -kv[1])[:largest]
    out.append("largest modules: " + ", ".join(f"{m} {n}" for m, n in big))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 on a cycle, an upward or a forbidden import")
    ap.add_argument("--lazy", action="store_true", help="list the function-level imports")
    args = ap.parse_args(argv)
    g = build()
    print(report(g))
    if args.lazy:
        for i in g.lazy():
            print(f"  {i.source}:{i.line} -> {i.target}  # {i.reason}")
    return 1 if args.check and (g.cycles() or g.upward() or g.forbidden()) else 0


if __name__ == "__main__":
    sys.exit(main())
