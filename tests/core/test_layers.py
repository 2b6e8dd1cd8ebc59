"""The import contract of docs/architecture.md: no cycles, no module importing a layer above its
own (a function-level import counts: a lazy import must not hide either), and every function-level
import of a selene module outside the command-line layer says why it is lazy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _graph_module():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_graph", module)
    spec.loader.exec_module(module)
    return module


ig = _graph_module()


def test_no_import_cycles() -> None:
    assert ig.build().cycles() == []


def test_no_upward_imports() -> None:
    assert [f"{i.source}:{i.line} -> {i.target}" for i in ig.build().upward()] == []


def test_no_stage_package_imports_the_cli() -> None:
    assert [f"{i.source}:{i.line} -> {i.target}" for i in ig.build().forbidden()] == []


def test_the_model_imports_no_stage() -> None:
    """`selene.model` sits below the stages (training, evaluation and the planners use it), so it
    imports none of them."""
    model = ig.layer_of("selene.model.transformer")
    assert model is not None and all(ig.layer_of(p) < model for p in ig.STAGE_PACKAGES)
    edges = [f"{i.source} -> {i.target}" for i in ig.build().imports if i.source.startswith("selene.model")]
    assert edges and not [e for e in edges if any(e.split(" -> ")[1].startswith(p) for p in ig.STAGE_PACKAGES)]


def test_the_checker_sees_cycles_and_upward_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "selene"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from selene.cli import x\n")
    (pkg / "registry.py").write_text("import selene.guard\n")
    (pkg / "guard.py").write_text("from selene import registry\n")
    g = ig.build(tmp_path)
    assert g.cycles() == [["selene.guard", "selene.registry"]]
    assert [(i.source, i.target, i.lazy) for i in g.upward()] == [("selene.errors", "selene.cli", True)]


def test_the_checker_sees_a_stage_importing_the_cli(tmp_path: Path) -> None:
    pkg = tmp_path / "selene"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "dedup").mkdir()
    for init in (pkg, pkg / "cli", pkg / "dedup"):
        (init / "__init__.py").write_text("")
    (pkg / "cli" / "app.py").write_text("")
    (pkg / "dedup" / "command.py").write_text("def f():\n    from selene.cli.app import x\n")
    assert [(i.source, i.target) for i in ig.build(tmp_path).forbidden()] == [("selene.dedup.command", "selene.cli.app")]


def test_every_module_is_in_a_layer() -> None:
    for module in ig.modules():
        assert ig.layer_of(module) is not None, module


def test_lazy_imports_say_why() -> None:
    """Outside the command-line layer (whose commands import what they need when they run, so that
    `selene --help` stays fast), a function-level import says on its line why it is lazy."""
    pragma = ("type:", "noqa", "fmt:")
    unexplained = [
        f"{i.source}:{i.line} -> {i.target}"
        for i in ig.build().lazy()
        if ig.layer_of(i.source) > 0 and (not i.reason or i.reason.startswith(pragma))
    ]
    assert unexplained == []
