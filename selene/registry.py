"""The stages, declared once: the commands, the Prefect flows, the deployments, the pipeline file's
sections, ``selene config defaults``, the stages' views and the run report are all made from these
declarations.

A declaration names its parts by import path, each a typed reference
(``Ref[DatasetRun]("selene.dedup.stage:run_dedup")``, `selene.entry_points`), so that reading the
registry imports nothing heavy: ``selene --help`` lists every stage without loading pydantic,
pyarrow, Prefect or torch, while mypy sees each part's type. Adding a stage is one package and one
`Stage(...)` line below (and its line in `selene.entry_points_check`).

A stage's ``run`` is ``run(inp, out, cfg, *, mapper, force) -> StageResult`` (``run(out, cfg, ...)``
for a stage that reads the configured sources): a plain function over paths and its own config,
which runs its parallel steps through `mapper` and writes its typed manifest last.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from selene.entry_points import Command, DatasetRun, Preflight, Ref, Renew, SourcesRef, StageView, load
from selene.errors import ConfigError

if TYPE_CHECKING:
    from selene.config import StageConfig
    from selene.manifest import StageManifest

Reads = Literal["sources", "documents", "tokens", "checkpoint"]
Writes = Literal["documents", "tokens", "checkpoint", "evaluation"]


# ------------------------------------------------------------------------------ option values


def mapping(flag: str, value: str) -> dict[str, float]:
    """``SRC=W,SRC=W`` → {SRC: W}; the error names the item that is not of that form."""
    out: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in value.split(","))):
        name, sep, num = item.rpartition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(num)
        except ValueError:
            raise ConfigError(f"{flag}: {item!r} is not SOURCE=NUMBER (e.g. {flag} Books3=1.5,Pile-CC=0.5)") from None
    return out


@dataclass(frozen=True)
class Option:
    """A command-line option that sets one field of the stage's config (None: not given, the
    config file's or the default value stands)."""

    flags: tuple[str, ...]
    field: str
    help: str
    type: type = str
    multiple: bool = False
    parse: Callable[[str, Any], Any] | str | None = None
    """Turns the raw value into the field's (given the flag, for messages), or the import path of
    such a function in the stage's package; repeated options that share a field are concatenated."""

    def parser(self) -> Callable[[str, Any], Any] | None:
        return load(self.parse) if isinstance(self.parse, str) else self.parse


# ----------------------------------------------------------------------------------- stages


@dataclass(frozen=True)
class Stage:
    name: str
    help: str
    config: Ref[type[StageConfig]]
    """The stage's pydantic config model; `name` is its section in a pipeline file."""
    run: Ref[DatasetRun[Any, Any, Any]] | SourcesRef
    """``run(inp, out, cfg, *, mapper, force) -> StageResult``, or a `SourcesRef` to
    ``run(out, cfg, ...)`` for a stage that reads the configured sources (``reads="sources"``)."""
    reads: Reads
    writes: Writes
    manifest: Ref[type[StageManifest]] | None
    """The typed manifest the stage writes (None: it writes none, e.g. training)."""
    preflight: Ref[Preflight[Any, Any]] | None = None
    """``check(inp, out, cfg)``: what needs no reading (inputs finished, outputs writable, settings
    that only make sense together) fails here, before any work or any Prefect start."""
    view: Ref[StageView[Any]] | None = None
    """``view(result) -> View`` (`selene.view`): what the stage shows, built once from its result and
    rendered three ways: printed after the command, published as Prefect artifacts and written as its
    section of the run report (``<run_dir>/report.md``). For the report it gets only its directory in
    the run: ``StageResult(out, skipped=False, manifest=<the manifest there, or None>)``, no info."""
    options: tuple[Option, ...] = ()
    command: Ref[Command] | None = None
    """The stage's own typer command function, where the generated one (made from
    `options`) does not fit: training launches torchrun, evaluation takes a checkpoint. The module is
    the stage's command-line layer: it may use the runner, and nothing in the stage imports it."""
    subcommands: tuple[Ref[Command], ...] = ()
    """Further typer command functions of the stage: ``selene <stage> <name>``, the name being the
    function's (``selene.quality.command:train`` is ``selene quality train``)."""
    output_inside_input: bool = False
    """The output may sit inside the input (never be it nor contain it), and the input stays out of
    the running-commands list: evaluation writes into a finished checkpoint while training goes on."""
    active: Callable[[Any], bool] | None = None
    """Whether a pipeline runs the stage, given its config section (None: always)."""
    renew: Ref[Renew[Any, Any]] | None = None
    """``renew(inp, out, cfg, say)``: in a pipeline, before the stage runs unforced, what its output
    holds that was made from other inputs than those there now is moved aside (`say` tells where).
    A stage with a manifest needs none: its fingerprint decides (training has no manifest)."""
    input_help: str = "Document dataset to read."
    output_help: str = "Output dataset directory or fsspec URL."
    doc: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.run, SourcesRef) != (self.reads == "sources"):
            raise TypeError(f"stage {self.name}: a stage reads the sources (reads='sources') exactly when its run is a SourcesRef")

    def config_model(self) -> type[StageConfig]:
        return self.config.load()

    def subcommand_names(self) -> dict[str, Ref[Command]]:
        """``<stage>-<name>`` (the command that ``selene <stage> <name>`` runs) → its function."""
        return {f"{self.name}-{r.path.rpartition(':')[2].rstrip('_').replace('_', '-')}": r for r in self.subcommands}


STAGES: tuple[Stage, ...] = (
    Stage(
        "ingest",
        "Read Pile jsonl.zst, jsonl(.gz), Parquet, Arrow (a `datasets` directory), WARC and WET files; clean, filter, exact-dedup into OUT.",
        config=Ref("selene.ingest.config:IngestConfig"),
        run=SourcesRef("selene.ingest.stage:run_ingest"),
        reads="sources",
        writes="documents",
        manifest=Ref("selene.ingest.manifest:IngestManifest"),
        preflight=Ref("selene.ingest.checks:check"),
        view=Ref("selene.ingest.view:view"),
        options=(
            Option(("--source", "-s"), "sources", "NAME=GLOB, or NAME[text_key=K,id_key=K,meta_keys=A+B]=GLOB; Pile files take their source from meta.pile_set_name.",
                   multiple=True, parse="selene.ingest.config:parse_sources"),
            Option(("--source-override",), "sources", "NAME=GLOB; NAME is the source of every document, Pile too.",
                   multiple=True, parse="selene.ingest.config:parse_sources"),
            Option(
                ("--extractor",), "extractor",
                "Main text of HTML pages: selene | resiliparse | trafilatura (default selene).",
            ),
        ),
        doc="Every input record ends in OUT's shards or in OUT/removed.parquet with a reason.",
    ),
    Stage(
        "quality",
        "Score documents with fastText classifiers and keep the best by a rule (threshold, top tokens, Pareto).",
        config=Ref("selene.quality.config:QualityConfig"),
        run=Ref[DatasetRun]("selene.quality.stage:run_quality"),
        reads="documents",
        writes="documents",
        manifest=Ref("selene.quality.manifest:QualityManifest"),
        preflight=Ref("selene.quality.checks:check"),
        active=lambda cfg: bool(cfg.classifiers),
        view=Ref("selene.quality.view:view"),
        subcommands=(Ref("selene.quality.command:train"),),
        options=(
            Option(("--classifier",), "classifiers", "NAME=MODEL.bin:LABEL (repeatable).", multiple=True,
                   parse="selene.quality.config:parse_classifiers"),
            Option(("--rule",), "rule", "Which documents are kept: threshold | top_fraction | pareto (default threshold)."),
            Option(("--threshold",), "threshold", "rule threshold: the least score kept (default 0.5).", float),
            Option(("--fraction",), "fraction", "rule top_fraction: the share of judged tokens kept (default 0.1).", float),
            Option(("--alpha",), "alpha", "rule pareto: the Pareto shape (default 9, GPT-3's).", float),
            Option(("--combine",), "combine", "Several classifiers: each | max_bucket | mean (default each)."),
            Option(("--judge",), "sources", "Sources to judge (repeatable; default: web documents, those with a url).",
                   multiple=True),
        ),
        doc="`selene quality train` makes a classifier from examples of good and other text.",
    ),
    Stage(
        "dedup",
        "Remove near-duplicate documents (MinHash LSH); duplicates go to OUT/removed.parquet as dup_of:<id>.",
        config=Ref("selene.dedup.config:DedupConfig"),
        run=Ref[DatasetRun]("selene.dedup.stage:run_dedup"),
        reads="documents",
        writes="documents",
        manifest=Ref("selene.dedup.manifest:DedupManifest"),
        preflight=Ref("selene.dedup.checks:check"),
        view=Ref("selene.dedup.view:view"),
        options=(
            Option(("--threshold",), "threshold", "Jaccard similarity of a duplicate (default 0.8).", float),
            Option(("--num-perm",), "num_perm", "MinHash permutations (default 128).", int),
            Option(("--ngram",), "ngram", "Shingle size (default 5).", int),
            Option(("--shingle",), "shingle", "Shingles of words or of characters (default word)."),
            Option(("--bands",), "bands", "LSH bands (with --rows); default: chosen from threshold.", int),
            Option(("--rows",), "rows", "LSH rows per band (with --bands).", int),
            Option(
                ("--band-sets",), "band_sets",
                "Band sets cut from the same signature (default 2; 1 = plain LSH, datatrove's banding).", int,
            ),
            Option(("--verify",), "verify", "How a candidate pair is confirmed: signature | exact | none (default signature)."),
            Option(
                ("--verify-margin",), "verify_margin",
                "Keep pairs whose estimated Jaccard is >= threshold - margin (default 3 standard deviations of the estimate).", float,
            ),
            Option(("--keep",), "keep", "first | longest | priority | score: the copy kept of a cluster (default first)."),
            Option(("--priority",), "priority", "keep priority: a source, most trusted first (repeatable).", multiple=True),
            Option(("--score-key",), "score_key", "keep score: the meta field holding the score (e.g. quality.hq)."),
            Option(("--strict",), "strict", "keep priority: a listed source the data lacks is an error.", bool),
            Option(
                ("--against",), "against",
                "An earlier dedup output (repeatable): remove this input's duplicates of its documents; it is not changed.",
                multiple=True,
            ),
        ),
    ),
    Stage(
        "spans",
        "Cut spans of consecutive sentences, paragraphs or lines repeated in the corpus from every document but the first (C4 / datatrove SentenceDedup).",
        config=Ref("selene.spans.config:SpansConfig"),
        run=Ref[DatasetRun]("selene.spans.stage:run_spans"),
        reads="documents",
        writes="documents",
        manifest=Ref("selene.spans.manifest:SpansManifest"),
        preflight=Ref("selene.spans.checks:check"),
        active=lambda cfg: cfg.unit is not None,
        view=Ref("selene.spans.view:view"),
        options=(
            Option(("--unit",), "unit", "sentence | paragraph | line: what a span is made of (required)."),
            Option(("--span",), "span", "Consecutive units in a span (default 3, datatrove's n_sentences).", int),
            Option(("--min-span-chars",), "min_span_chars", "Shorter spans (normalised characters) are never cut (default 50; datatrove 0).", int),
            Option(("--min-doc-words",), "min_doc_words", "Drop a cut document left with fewer words (default 50; 0: never).", int),
            Option(("--min-sentences",), "min_sentences", "Drop a cut document left with fewer sentences (default 3; 0: never).", int),
            Option(("--min-words-to-remove",), "min_words_to_remove", "Leave runs of cut units with fewer words (default 0).", int),
            Option(
                ("--against",), "against",
                "An earlier spans output (repeatable): cut every span it holds from this input; it is not changed.",
                multiple=True,
            ),
            Option(("--only-against",), "only_against", "With --against: cut only spans the earlier outputs hold.", bool),
        ),
        doc="Every cut is counted per source; documents left too short go to OUT/removed.parquet as spans:too_short; OUT/repeats.md lists the most repeated spans.",
    ),
    Stage(
        "substrings",
        "Cut every repeat of a substring of at least --min-length units (bytes or tokens) out of all but its first occurrence, or all of them with --keep none (suffix arrays, Lee et al. 2022).",
        config=Ref("selene.substrings.config:SubstringsConfig"),
        run=Ref[DatasetRun]("selene.substrings.stage:run_substrings"),
        reads="documents",
        writes="documents",
        manifest=Ref("selene.substrings.manifest:SubstringsManifest"),
        preflight=Ref("selene.substrings.checks:check"),
        active=lambda cfg: cfg.min_length is not None,
        view=Ref("selene.substrings.view:view"),
        options=(
            Option(("--min-length",), "min_length", "Length of a repeated substring that is cut, in units (e.g. 50 tokens, 200 bytes).", int),
            Option(("--unit",), "unit", "A window's unit: bytes, or tokens of --tokenizer (default bytes)."),
            Option(("--tokenizer",), "tokenizer", "unit tokens: a sentencepiece .model, a tokenizer.json (or its directory), a .tiktoken file or tiktoken:NAME."),
            Option(("--min-chars",), "min_chars", "A cut document left with fewer characters goes to removed.parquet (default 1).", int),
            Option(("--min-words",), "min_words", "A cut document left with fewer words goes to removed.parquet (default 0).", int),
            Option(("--keep",), "keep", "Which copy of a repeat stays: first | none (default first; none cuts every copy, as Lee et al.'s tool and datatrove's ExactSubstr do)."),
            Option(
                ("--against",), "against",
                "An earlier substrings output (repeatable): its documents come first and are never cut.",
                multiple=True,
            ),
        ),
        doc="Every cut is counted per source; repeats.md lists the most repeated substrings.",
    ),
    Stage(
        "decontaminate",
        "Remove evaluation-task text (13-gram overlaps ± 200 characters) from a document dataset.",
        config=Ref("selene.decontaminate.config:DecontaminateConfig"),
        run=Ref[DatasetRun]("selene.decontaminate.stage:run_decontaminate"),
        reads="documents",
        writes="documents",
        manifest=Ref("selene.decontaminate.manifest:DecontaminateManifest"),
        preflight=Ref("selene.decontaminate.checks:check"),
        active=lambda cfg: bool(cfg.tasks),
        view=Ref("selene.decontaminate.view:view"),
        options=(
            Option(("--tasks", "-t"), "tasks", "Task jsonl file or lm-eval task directory (repeatable).", multiple=True),
            Option(("--ngram",), "ngram", "Overlap length in words (default 13).", int),
        ),
    ),
    Stage(
        "blend",
        "Sample each source by weight or epochs (MT-NLG style) and shuffle globally into OUT.",
        config=Ref("selene.blend.config:BlendConfig"),
        run=Ref[DatasetRun]("selene.blend.stage:run_blend"),
        reads="documents",
        writes="documents",
        manifest=Ref("selene.blend.manifest:BlendManifest"),
        preflight=Ref("selene.blend.checks:check"),
        active=lambda cfg: bool(cfg.weights or cfg.epochs),
        view=Ref("selene.blend.view:view"),
        options=(
            Option(("--weights",), "weights", "SRC=W,...: shares of the mix (normalised).", parse=mapping),
            Option(("--epochs",), "epochs", "SRC=E,...: passes over a source (e.g. Books3=1.5).", parse=mapping),
            Option(("--target-tokens",), "target_tokens", "Tokens of the mix.", int),
            Option(("--tokenizer",), "tokenizer", "Tokenizer to count tokens with: a sentencepiece .model, a tokenizer.json (or its directory), a .tiktoken file or tiktoken:NAME."),
            Option(("--seed",), "seed", "Sampling and shuffling seed.", int),
            Option(("--max-epochs",), "max_epochs", "Refuse a mix that repeats any source more than this.", float),
        ),
    ),
    Stage(
        "tokenize",
        "Encode documents with the given tokenizer (sentencepiece, Hugging Face or tiktoken), else a sentencepiece model trained on them, into Megatron-LM's indexed format (.bin + .idx), EOD-terminated.",
        config=Ref("selene.tokenize.config:TokenizeConfig"),
        run=Ref[DatasetRun]("selene.tokenize.stage:run_tokenize"),
        reads="documents",
        writes="tokens",
        manifest=Ref("selene.tokenize.manifest:TokenizeManifest"),
        preflight=Ref("selene.tokenize.checks:check"),
        view=Ref("selene.tokenize.view:view"),
        options=(
            Option(("--tokenizer",), "tokenizer", "An existing sentencepiece .model, Hugging Face tokenizer.json or its directory, .tiktoken file or tiktoken:NAME (else one is trained)."),
            Option(("--eod-token",), "eod_token", "End-of-document token of a given tokenizer (default: its EOS)."),
            Option(("--vocab-size",), "vocab_size", "Vocabulary of a trained tokenizer (default 32000).", int),
            Option(("--allow-smaller-vocab",), "allow_smaller_vocab", "Accept a smaller vocabulary when the sample supports no more.", bool),
            Option(("--model-type",), "model_type", "The sentencepiece model trained (default bpe)."),
        ),
        output_help="Output directory: <prefix>.bin/.idx, tokenizer.model (or tokenizer.json, tokenizer.tiktoken).",
    ),
    Stage(
        "train",
        "Pretrain with torchrun: data × tensor × pipeline parallel, DCP checkpoints, exact resume.",
        config=Ref("selene.train.config:TrainConfig"),
        run=Ref[DatasetRun]("selene.train.stage:run_train"),
        reads="tokens",
        writes="checkpoint",
        manifest=None,
        view=Ref("selene.train.view:view"),
        command=Ref("selene.train.command:train"),
        renew=Ref("selene.train.renew:renew"),
    ),
    Stage(
        "eval",
        "Evaluate a checkpoint on lm-evaluation-harness tasks (offline), plus held-out perplexity.",
        config=Ref("selene.eval.config:EvalConfig"),
        run=Ref[DatasetRun]("selene.eval.stage:run_eval_stage"),
        reads="checkpoint",
        writes="evaluation",
        manifest=None,
        view=Ref("selene.eval.view:view"),
        command=Ref("selene.eval.command:eval_"),
        output_inside_input=True,
    ),
)

BY_NAME = {s.name: s for s in STAGES}
NAMES = tuple(BY_NAME)


def get(name: str) -> Stage:
    if name not in BY_NAME:
        raise ConfigError(f"unknown stage {name!r}; the stages are {', '.join(NAMES)}")
    return BY_NAME[name]


@contextlib.contextmanager
def extended(*stages: Stage) -> Iterator[None]:
    """The registry with `stages` appended, while the block runs (a plugin's or a test's stage):
    everything made from the registry (commands, flows, the pipeline file) reads it at use."""
    global STAGES, BY_NAME, NAMES
    saved = STAGES, BY_NAME, NAMES
    STAGES = (*STAGES, *stages)
    BY_NAME = {s.name: s for s in STAGES}
    NAMES = tuple(BY_NAME)
    try:
        yield
    finally:
        STAGES, BY_NAME, NAMES = saved
