"""The documentation site's reference pages, generated from the code while the site builds
(``docs/hooks/reference.py``; ``make docs``), so a new command, option, config field, filter rule or
removal reason is documented the day it lands:

* `selene.docs.cli`: every command and option, from the command tree ``selene --help`` shows;
* `selene.docs.config`: every section and field of a pipeline file, from the pydantic models (a
  field without a description is an error, `MissingDescription`);
* `selene.docs.filters`: every ingest filter, its settings and its rules;
* `selene.docs.reasons`: every removal reason a stage writes to ``removed.parquet``.

`pages()` is all of them, page path → markdown.
"""

from __future__ import annotations


def pages() -> dict[str, str]:
    """The generated reference pages: their path under docs/ → their markdown."""
    from selene.docs import (  # the CLI and every config model: only when building
        cli,
        config,
        filters,
        reasons,
    )

    return {
        "reference/cli.md": cli.page(),
        "reference/config.md": config.page(),
        "reference/filters.md": filters.page(),
        "reference/removal-reasons.md": reasons.page(),
    }
