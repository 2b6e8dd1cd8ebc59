"""`selene deploy`: the pipeline and each stage served as Prefect deployments."""

from __future__ import annotations

from typing import Annotated

import typer

from selene.cli.app import app
from selene.errors import ConfigError, UsageError


@app.command()
def deploy(
    config: Annotated[str, typer.Argument(help="Pipeline YAML; paths in it resolve from the current folder.")],
    limit: Annotated[int | None, typer.Option(min=1, help="Flow runs at a time.")] = None,
    only: Annotated[str | None, typer.Option(help="Comma-separated: pipeline and/or stage names.")] = None,
) -> None:
    """Serve the pipeline and each stage as Prefect deployments (flow.serve) until Ctrl-C.

    Trigger runs from the dashboard or `prefect deployment run 'selene-pipeline/<name>'`; for work-pool
    deployments use the repository's prefect.yaml (`prefect deploy --all`).
    """
    from selene import registry
    from selene.config.pipeline import load_pipeline_config
    from selene.runner import runtime

    load_pipeline_config(config)  # the file, then the names, are checked before a server is looked for
    parts = [p.strip() for p in only.split(",") if p.strip()] if only else None
    unknown = sorted(set(parts or ()) - {"pipeline", *registry.NAMES})
    if unknown:
        raise ConfigError(
            f"--only: unknown deployment(s) {', '.join(unknown)}; choose from pipeline, {', '.join(registry.NAMES)}"
        )
    if runtime().api is None:
        raise UsageError("deployments live on a Prefect server: run `selene server start` first (or set PREFECT_API_URL)")
    from selene.flows.deploy import serve_pipeline

    serve_pipeline(config, limit=limit, only=parts)
