"""`selene quality train`: the quality stage's further command (the stage's own is generated)."""

from __future__ import annotations

from typing import Annotated, Any

import typer


def train(
    positive: Annotated[
        list[str],
        typer.Option(
            "--positive",
            "-p",
            help="NAME=GLOB of good text: a selene dataset, .jsonl(.gz/.zst) or .parquet (repeatable).",
        ),
    ],
    negative: Annotated[
        list[str],
        typer.Option("--negative", "-n", help="NAME=GLOB of other text, e.g. raw crawl (repeatable)."),
    ],
    output: Annotated[str, typer.Option("--output", "-o", help="Directory for model.bin and report.json.")],
    positive_label: Annotated[
        str, typer.Option("--positive-label", help="Label of the good class (classifiers read it).")
    ] = "hq",
    negative_label: Annotated[str, typer.Option("--negative-label", help="Label of the other class.")] = "lq",
    max_bytes: Annotated[
        int,
        typer.Option(
            "--max-bytes", min=1, help="Bytes of text per class, at most (both are balanced to the smaller)."
        ),
    ] = 200_000_000,
    heldout: Annotated[
        float,
        typer.Option(
            "--heldout", help="Share of each class held out for the report (by a seeded hash of the id)."
        ),
    ] = 0.1,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Cut-off of the report's precision and recall.")
    ] = 0.5,
    seed: Annotated[
        int,
        typer.Option("--seed", help="Sampling, split and training seed: the same seed gives the same model."),
    ] = 1234,
    dim: Annotated[
        int | None, typer.Option("--dim", min=1, help="Embedding size (default: the trainer's).")
    ] = None,
    epoch: Annotated[
        int | None,
        typer.Option(
            "--epoch",
            min=1,
            help="Passes over the examples (default: 5, more for a small set: 100k updates, at most 50).",
        ),
    ] = None,
    lr: Annotated[float | None, typer.Option("--lr", min=1e-6, help="Learning rate.")] = None,
    word_ngrams: Annotated[
        int | None, typer.Option("--word-ngrams", min=1, help="Longest word n-gram (2: bigrams).")
    ] = None,
    bucket: Annotated[
        int | None, typer.Option("--bucket", min=1, help="Hash buckets of the word n-grams.")
    ] = None,
) -> None:
    """Train a fastText quality classifier from examples of good and other text: a standard .bin
    (fastText, datatrove and selene's quality stage load it) and its held-out report."""
    import dataclasses

    from selene.cli.app import (
        console,  # here, not at the top: this module loads while selene.cli registers its commands
    )
    from selene.quality import fasttext
    from selene.quality.train import parse_groups, train_classifier

    given: dict[str, Any] = {"dim": dim, "lr": lr, "word_ngrams": word_ngrams, "bucket": bucket}
    settings = dataclasses.replace(fasttext.Settings(), **{k: v for k, v in given.items() if v is not None})
    report = train_classifier(
        parse_groups("--positive", positive), parse_groups("--negative", negative), output,
        positive_label=positive_label, negative_label=negative_label, max_bytes=max_bytes,
        heldout_fraction=heldout, threshold=threshold, seed=seed, settings=settings, epochs=epoch,
    )  # fmt: skip
    h, ex = report["heldout"], report["examples"]
    console.print(
        f"trained on {ex['positive']['documents'] - ex['positive']['heldout']} {positive_label} and "
        f"{ex['negative']['documents'] - ex['negative']['heldout']} {negative_label} documents; held out "
        f"{ex['positive']['heldout']} + {ex['negative']['heldout']}: AUC {h['auc']:.4f}, precision {h['precision']:.3f}, "
        f"recall {h['recall']:.3f} at {threshold}"
    )
    for label, grams in report["top_ngrams"].items():
        console.print(
            f"toward {label}: " + ", ".join(g for g, _ in grams[:10]), markup=False, highlight=False
        )
    console.print(f"model: [b]{report['model']}[/b]; report: {output}/report.json")
