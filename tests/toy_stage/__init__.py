"""A stage that lives outside selene, to show what adding one takes: this package and its
`Stage(...)` declaration (`CENSUS`), nothing else. `census` counts the documents and characters of
a document dataset per source into ``census.json``, one mapper item per shard."""

from selene.entry_points import DatasetRun
from selene.registry import Option, Ref, Stage

CENSUS = Stage(
    "census",
    "Count documents and characters per source of a document dataset into OUT/census.json.",
    config=Ref("tests.toy_stage.stage:CensusConfig"),
    run=Ref[DatasetRun]("tests.toy_stage.stage:run_census"),
    reads="documents",
    writes="evaluation",
    manifest=None,
    view=Ref("tests.toy_stage.stage:view"),
    options=(Option(("--min-chars",), "min_chars", "Count only documents of at least this many characters.", int),),
)
