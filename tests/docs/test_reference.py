"""The reference pages generated from the code (`selene.docs`): every command, option, config
field, filter rule and removal reason is on its page, a new one appears there with no other edit,
and a config field without a description stops the build."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import Field

from selene import registry
from selene.cli.help import PlainGroup
from selene.cli.stages import register
from selene.config.base import StageConfig
from selene.docs import cli, config, filters, pages, reasons
from selene.ingest.filters import FilterConfig, RuleFilter
from selene.ingest.filters.registry import _REGISTRY, register_filter
from tests.toy_stage import CENSUS

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_builds() -> None:
    built = pages()
    assert set(built) == {
        "reference/cli.md",
        "reference/config.md",
        "reference/filters.md",
        "reference/removal-reasons.md",
    }
    assert all(text.startswith("# ") and "Generated from the code" in text for text in built.values())


# ------------------------------------------------------------------------------------------ cli


def test_cli_page_has_every_command_and_option() -> None:
    root = typer.main.get_command(__import__("selene.cli", fromlist=["app"]).app)
    text = cli.page(root)
    for path, cmd in cli.commands(root):
        heading = f"## {path} {{ #{'-'.join(path.split())} }}"
        assert heading in text, path
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        for p in cmd.params:
            if p.param_type_name == "option" and not p.hidden:
                assert f"`{p.opts[0]}`" in section, f"{path} {p.opts[0]}"
    assert "## selene quality train { #selene-quality-train }" in text  # a stage's further command
    assert (
        "`--min-span-chars` | `N` |" in text and "`--force` |  |  |" in text
    )  # a value's metavar; a flag's none


def test_a_new_stage_and_its_options_are_on_the_cli_page() -> None:
    with registry.extended(CENSUS):
        group = typer.Typer(cls=PlainGroup)
        register(group)
        text = cli.page(typer.main.get_command(group))
    assert "## selene census { #selene-census }" in text
    assert "| `--min-chars` | `N` |  | Count only documents of at least this many characters. |" in text


# --------------------------------------------------------------------------------------- config


def test_config_page_has_every_field() -> None:
    text = config.page()
    for path in ("`ingest.langid.min_score`", "`dedup.threshold`", "`train.model.n_kv_heads`", "`train.data.prefixes`",
                 "`executor.memory_gb`", "`quality.classifiers[].name`", "`runs[].micro_batch`"):  # fmt: skip
        assert path in text, path
    assert (
        "| `dedup.threshold` | number > 0, < 1 | `0.8` | Jaccard similarity that makes a duplicate. |" in text
    )
    assert "| `dedup.shingle` | one of: `word`, `char` | `word` |" in text
    assert "| `run_dir` | text | **required** |" in text


def test_a_new_stage_section_is_on_the_config_page() -> None:
    with registry.extended(CENSUS):
        text = config.page()
    assert "### census { #census }" in text
    assert (
        "| `census.min_chars` | integer ≥ 0 | `0` | Count only documents of at least this many characters. |"
        in text
    )


def test_a_field_without_a_description_stops_the_build() -> None:
    class Toy(StageConfig):
        """A toy section."""

        described: list[str] = Field(default_factory=lambda: ["a"], description="Said.")
        knob: int = 3

    with pytest.raises(config.MissingDescription, match=r"Toy\.knob \(toy\.knob\): no description"):
        list(config.sections(Toy, "toy", {}))


def test_types_in_words() -> None:
    from typing import Literal

    from annotated_types import Ge, Lt

    assert config.words(int, [Ge(1)]) == "integer ≥ 1"
    assert config.words(int | None, [Ge(1)]) == "integer ≥ 1 or null"
    assert config.words(list[str]) == "list of text"
    assert config.words(dict[str, float]) == "mapping of text to number"
    assert config.words(Literal["a", "b"]) == "one of: `a`, `b`"
    assert config.words(float, [Ge(0), Lt(1)]) == "number ≥ 0, < 1"


# -------------------------------------------------------------------------------------- filters


def test_filters_page_has_every_filter_setting_and_rule() -> None:
    text = filters.page()
    for name, cls in reasons.builtins().items():
        assert f"## {name} {{ #{name.replace('_', '-')} }}" in text, name
        for field in cls.Config.model_fields:
            assert f"| `{field}` |" in text, f"{name}.{field}"
        for rule in reasons.rules()[name]:
            assert f"`filter:{name}.{rule}`" in text, f"{name}.{rule}"
    assert (
        "`filter:gopher_repetition.top_2gram_char_frac`" in text and "`filter:c4.too_few_sentences`" in text
    )


def test_a_new_filter_rule_needs_its_meaning() -> None:
    @register_filter
    class Toy(RuleFilter):
        """A toy filter."""

        name = "toy_rules"

        class Config(FilterConfig):
            """Its settings."""

            most: int = Field(default=9, description="The most it allows.")

        def __init__(self, cfg: Any) -> None:
            super().__init__(cfg)
            self.rules = [("too_many", lambda d: None)]

    try:
        assert reasons.rules()["toy_rules"] == ["too_many"]
        with pytest.raises(KeyError, match=r"toy_rules\.too_many"):
            filters.page()
        reasons.FILTER_RULES["toy_rules.too_many"] = "More than `most`."
        try:
            text = filters.page()
        finally:
            del reasons.FILTER_RULES["toy_rules.too_many"]
        assert "| `most` | integer | `9` | The most it allows. |" in text
        assert "| `filter:toy_rules.too_many` | More than `most`. |" in text
    finally:
        del _REGISTRY["toy_rules"]


# ------------------------------------------------------------------------------ removal reasons

# String literals of a reason's shape that are not removal reasons: step names, URL schemes, CSS.
NOT_REASONS = {
    "config:", "config:{}", "https:", "tiktoken:", "display:none", "visibility:hidden", "og:type",
    "dedup:band", "ingest:file", "spans:find", "substrings:match", "quality:scored", "tokenize:merged",
}  # fmt: skip
SHAPE = re.compile(r"^[a-z][a-z0-9_]*:[a-z0-9_]*$")


def reason_literals() -> dict[str, set[str]]:
    """Every string literal in selene/ shaped like a reason (``prefix:word``, ``f"prefix:{x}"``) →
    the files it is in."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "selene").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            value = None
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                head = node.values[0].value
                value = f"{head}{{}}" if isinstance(head, str) and SHAPE.match(head) else None
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SHAPE.match(node.value):
                value = node.value
            if value is not None:
                found.setdefault(value, set()).add(str(path.relative_to(ROOT)))
    return found


def covered(literal: str) -> bool:
    """A literal names a catalogued reason: the same one, or (a prefix such as ``"dup_of:"``, an
    f-string's head such as ``f"lang:{code}"``) the start of catalogued ones."""
    codes = [r.code for r in reasons.REASONS]
    if literal.endswith(("{}", ":")):
        return any(c.startswith(literal.removesuffix("{}")) for c in codes)
    return literal in codes


def test_every_reason_in_the_code_is_in_the_catalogue() -> None:
    literals = reason_literals()
    assert "malformed:json" in literals and "lang:{}" in literals  # the scan finds them
    missing = {
        lit: sorted(where) for lit, where in literals.items() if lit not in NOT_REASONS and not covered(lit)
    }
    assert not missing, (
        f"removal reasons missing from selene.docs.reasons.REASONS (or add to NOT_REASONS): {missing}"
    )


def test_every_catalogued_reason_is_in_the_code() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "selene").rglob("*.py") if p.name != "reasons.py")
    for r in reasons.REASONS:
        fixed = r.code.split("<")[0]
        if r.code == "malformed:corrupt":  # StreamDamage("corrupt", ...) becomes f"malformed:{damage.what}"
            assert 'StreamDamage("corrupt"' in source
            continue
        assert f'"{fixed}' in source or f"'{fixed}" in source, r.code


def test_reasons_page() -> None:
    text = reasons.page()
    for r in reasons.REASONS:
        assert f"| `{r.code}` | {r.stage} |" in text, r.code
    for name, rules in reasons.rules().items():
        for rule in rules:
            assert f"`filter:{name}.{rule}`" in text
