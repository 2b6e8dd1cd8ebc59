"""`selene ablate`: variants of a pipeline's data, the same proxy model trained on each, compared."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from selene.cli.app import app, progress_bars
from selene.terminal import console, note


@app.command()
def ablate(
    config: Annotated[
        str,
        typer.Argument(
            help="Ablation YAML: pipeline, variants, seeds, proxy, reference (see configs/ablation-demo.yaml)."
        ),
    ],
    seeds: Annotated[
        str | None, typer.Option("--seeds", help="Training seeds, comma-separated (overrides the file's).")
    ] = None,
    out: Annotated[
        str | None, typer.Option("--out", "-o", help="Output directory (overrides the file's).")
    ] = None,
) -> None:
    """Which data makes the better model: each variant's data stages (shared where their settings
    agree), the same proxy model trained on each with every seed, evaluated on the same tasks and
    reference texts; a table of the differences against the seeds' spread. A rerun resumes."""
    from selene.ablate.plan import load_ablation
    from selene.config import with_overrides
    from selene.errors import UsageError

    cfg = load_ablation(config)  # a file that is missing or wrong is refused before torch loads
    from selene.ablate import compare
    from selene.ablate.run import check, run_ablation
    from selene.job import checked, run_direct
    from selene.runner import runtime

    given: dict[str, Any] = {"out": out}
    if seeds is not None:
        try:
            given["seeds"] = [int(s) for s in seeds.split(",") if s.strip()]
        except ValueError:
            raise UsageError(
                f"--seeds {seeds!r}: expected integers separated by commas, e.g. --seeds 1,2,3"
            ) from None
    cfg = with_overrides(cfg, **{k: v for k, v in given.items() if v is not None})
    check(cfg, config)  # a bad file, variant or reference is refused before a server is looked for
    rt = runtime(say=note)
    rt.note()
    with progress_bars():
        if rt.api is None:
            result = run_ablation(cfg, config, checked(run_direct), say=note)
        else:
            from selene.flows.ablate import ablation_flow

            result = rt.on_prefect(
                lambda: ablation_flow(cfg, config),
                lambda run: run_ablation(cfg, config, checked(run), say=note),
                "the ablation",
            )
    console.print(compare.markdown(result), markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"results: [b]{cfg.out}/ablation.md[/b] (ablation.json, ablation.svg); each variant's directories under {cfg.out}/variants/"
    )
