"""`selene quality train`: the quality stage's further command (the stage's own is generated)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from selene.terminal import console

_ITEM = (
    "NAME=PATH: a source of a selene dataset (NAME its source, '*' every source: '*=runs/x/ingest'), "
    "or a glob of .jsonl(.gz/.zst) / .parquet files (NAME a name; NAME\\[text_key=FIELD,id_key=FIELD]=GLOB "
    "when the text is not in `text`). Repeatable."
)


def train(
    positive: Annotated[list[str], typer.Option("--positive", "-p", help=f"Good text. {_ITEM}")],
    negative: Annotated[
        list[str], typer.Option("--negative", "-n", help=f"Other text, e.g. raw crawl. {_ITEM}")
    ],
    output: Annotated[
        str,
        typer.Option(
            "--output", "-o", help="Directory for model.bin (model.ftz with --quantize) and report.json."
        ),
    ],
    positive_label: Annotated[
        str, typer.Option("--positive-label", help="Label of the good class (classifiers read it).")
    ] = "hq",
    negative_label: Annotated[str, typer.Option("--negative-label", help="Label of the other class.")] = "lq",
    max_bytes: Annotated[
        int,
        typer.Option(
            "--max-bytes",
            min=1,
            help="Bytes of text per class, at most (the smaller class is repeated to balance, none is dropped).",
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
        typer.Option(
            "--seed", help="Sampling, split, search and training seed: the same seed gives the same model."
        ),
    ] = 1234,
    dim: Annotated[
        int | None,
        typer.Option(
            "--dim",
            min=1,
            help="Embedding size (default 64; the model is bucket x dim x 4 bytes).",
        ),
    ] = None,
    epoch: Annotated[
        int | None,
        typer.Option("--epoch", min=1, help="Passes over the examples (default: searched, 5 to 50)."),
    ] = None,
    lr: Annotated[
        float | None, typer.Option("--lr", min=1e-6, help="Learning rate (default: searched, 0.1 to 1.0).")
    ] = None,
    word_ngrams: Annotated[
        int | None,
        typer.Option("--word-ngrams", min=1, help="Longest word n-gram (default: searched, 1 or 2)."),
    ] = None,
    bucket: Annotated[
        int | None,
        typer.Option(
            "--bucket",
            min=1,
            help="Hash buckets of the word n-grams (default 1,000,000: the model is bucket x dim x 4 bytes, 244 MiB).",
        ),
    ] = None,
    quantize: Annotated[
        int | None,
        typer.Option(
            "--quantize",
            min=0,
            help="Write a quantized model.ftz (fastText's quantize -qnorm, keeping the N most useful words and n-grams and retraining; 0 keeps all): a few MiB instead of hundreds.",
        ),
    ] = None,
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="Replace the classifier an earlier run wrote to --output."),
    ] = False,
) -> None:
    """Train a fastText quality classifier from examples of good and other text: fastText's own
    trainer (one thread, seeded: the same inputs give the same bytes), the settings not given chosen
    by validation AUC on the training part, a standard .bin (fastText, datatrove and selene's quality
    stage load it) and its held-out report. A small model: --quantize 100000 (a .ftz of a few MiB),
    or --bucket 100000 --dim 16."""
    import dataclasses

    from selene.quality import fasttext
    from selene.quality.train import train_classifier

    previous = check_output(output, overwrite)

    given: dict[str, Any] = {
        "dim": dim,
        "epoch": epoch,
        "lr": lr,
        "word_ngrams": word_ngrams,
        "bucket": bucket,
    }
    fixed = {k: v for k, v in given.items() if v is not None}
    settings = dataclasses.replace(fasttext.Settings(), **fixed)
    trained = train_classifier(
        positive, negative, output, positive_label=positive_label, negative_label=negative_label,
        max_bytes=max_bytes, heldout_fraction=heldout, threshold=threshold, seed=seed, settings=settings,
        fixed=set(fixed), quantize=quantize,
    )  # fmt: skip
    from selene.io import fs

    for name in previous - {"model.ftz" if quantize is not None else "model.bin", "report.json"}:
        fs.rm(fs.join(output, name))  # the replaced classifier's other model file, stale now
    report = trained.report
    h, ex, s, found = report.heldout, report.examples, report.settings, report.search
    console.print(
        f"trained on {ex.positive.documents - ex.positive.heldout} {positive_label} and "
        f"{ex.negative.documents - ex.negative.heldout} {negative_label} documents; held out "
        f"{ex.positive.heldout} + {ex.negative.heldout}: AUC {h.auc:.4f}, precision {h.precision:.3f}, "
        f"recall {h.recall:.3f} at {threshold}"
    )
    if ex.shared_dropped:
        console.print(f"{ex.shared_dropped} texts were in both classes: left out of both")
    how = (
        f"chosen by validation AUC over {len(found.trials)} settings ({found.folds} fold(s), {trained.search_seconds:.1f} s)"
        if found.trials else "as given"
    )  # fmt: skip
    console.print(
        f"settings {how}: epoch {s.epoch}, lr {s.lr}, wordNgrams {s.word_ngrams}, dim {s.dim}, "
        f"bucket {s.bucket}; fit {trained.fit_seconds:.1f} s",
        markup=False, highlight=False,
    )  # fmt: skip
    for label, grams in report.top_ngrams.items():
        console.print(
            f"toward {label}: " + ", ".join(g for g, _ in grams[:10]), markup=False, highlight=False
        )
    console.print(f"model: [b]{report.model}[/b]; report: {output}/report.json")


CLASSIFIER_FILES = frozenset({"model.bin", "model.ftz", "report.json"})


def check_output(out: str, overwrite: bool) -> set[str]:
    """`out` may take a classifier: absent, empty, or (with `overwrite`) a folder an earlier run of
    this command wrote. Refused before anything is read (exit 2) otherwise, naming what is there, so
    a mistyped -o never replaces a model in use or mixes a model into other data. Returns the earlier
    classifier's files."""
    from selene.errors import PathError
    from selene.io import fs

    filesystem, path = fs.get_fs(out)
    if not filesystem.exists(path):
        return set()
    if not filesystem.isdir(path):
        raise PathError(f"--output {out} exists and is not a folder; choose another --output")
    names = {n.rstrip("/").rsplit("/", 1)[-1] for n in filesystem.ls(path, detail=False)}
    names = {n for n in names if not n.startswith(".model-")}  # a killed run's temporary file
    shown = ", ".join(sorted(names)[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    if names - CLASSIFIER_FILES:
        raise PathError(
            f"--output {out} holds other files than a classifier's ({shown}); choose another --output"
        )
    if names and not overwrite:
        raise PathError(
            f"--output {out} holds a trained classifier ({shown}); give --overwrite to replace it, "
            "or choose another --output"
        )
    return names
