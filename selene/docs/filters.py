"""The filters reference page: every built-in ingest filter (`selene.ingest.filters`' registry),
its settings with their defaults (from its config model), the rules it rejects by, read from the
filter itself (a `RuleFilter`'s rules at its defaults, and every ``self.reject("<rule>", ...)`` in
its class), and the reasons they write.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from selene.docs.config import row
from selene.docs.markdown import GENERATED, anchor, cell, code, table
from selene.docs.reasons import builtins, meaning, rules

INTRO = """\
The `filters` section of `ingest` chooses the filters, their order and their settings. A list
sets the chain: `[{name: length, min_words: 5}, gopher_quality, c4]`; a mapping adjusts the default
chain ({default}), e.g. `{gopher_quality: {enabled: false}}`, and any other filter it names runs
after those. The first filter that rejects a document names the reason
(`filter:<filter>.<rule>`, with the measurement and the bound as detail); `c4` and `pii` may keep a
document rewritten instead, and the filters after them see the new text. Your own filter is a
`selene.ingest.filters.Filter` subclass named as `module:Class`. Every filter also takes the
settings `enabled` and `exclude_sources`."""


def page() -> str:
    from selene.ingest.filters.spec import DEFAULT_FILTERS

    default = " → ".join(DEFAULT_FILTERS)
    out = [
        "# Ingest filters",
        "",
        GENERATED.format(module="selene.docs.filters"),
        "",
        INTRO.replace("{default}", default),
    ]
    names = builtins()
    out += [
        "",
        table(
            ["Filter", "What it does"],
            ([f"[{code(n)}](#{anchor(n)})", cell(_first(c.__doc__))] for n, c in names.items()),
        ),
    ]
    all_rules = rules()
    for name, cls in names.items():
        out += ["", f"## {name} {{ #{anchor(name)} }}", "", _paragraphs(cls.__doc__)]
        if name in DEFAULT_FILTERS:
            out += ["", "In the default chain."]
        out += ["", "### Settings", "", cell(_first(cls.Config.__doc__)), ""]
        seen: dict[Any, str] = {}
        rows = [row(cls.Config, f, info, f, None, seen, False) for f, info in cls.Config.model_fields.items()]
        out.append(table(["Key", "Type", "Default", "Description"], rows))
        if all_rules[name]:
            out += ["", "### Rules", ""]
            rule_rows = ([code(f"filter:{name}.{r}"), cell(meaning(name, r))] for r in all_rules[name])
            out.append(table(["Reason", "Rejects a document when"], rule_rows))
    return "\n".join(out) + "\n"


def _first(doc: str | None) -> str:
    return inspect.cleandoc(doc or "").split("\n\n")[0]


def _paragraphs(doc: str | None) -> str:
    paras = inspect.cleandoc(doc or "").split("\n\n")
    return "\n\n".join(cell(re.sub(r"``([^`]+)``", r"`\1`", p)) for p in paras)
