"""datatrove's MinHash dedup as its users run it: four LocalPipelineExecutor stages, one worker each.

    /work/venvs/datatrove/bin/python benchmarks/_datatrove_minhash.py IN WORK [--ngram 5 --buckets 16 --rows 8]

Run by `benchmarks/dedup.py` with datatrove's own Python (it is not importable from selene's venv).
IN is a directory of Parquet files with `id` and `text` columns (selene's document shards, read as
they are); WORK receives what the stages write, the layout of datatrove's
`examples/minhash_deduplication.py`:

- `signatures/bucket_NNN/00000.minhash.sig`  stage 1: one task over every input file
- `buckets/NNNNN_00.dups`                    stage 2: one task per bucket (datatrove requires
                                             tasks % num_buckets == 0), run one after another
- `remove_ids/000000.remove`                 stage 3: union-find, one task
- `output/` and `removed/`                   stage 4: the input again, without the duplicates (Parquet),
                                             the duplicates through the exclusion writer
- `logs/<stage>/`                            datatrove's logs and stats
"""

from __future__ import annotations

import argparse

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import (
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
    MinhashDedupSignature,
)
from datatrove.pipeline.dedup.minhash import MinhashConfig
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.writers import ParquetWriter
from datatrove.utils.hashing import HashConfig
from datatrove.utils.typeshelper import Languages


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("work")
    ap.add_argument("--ngram", type=int, default=5)
    ap.add_argument("--buckets", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8, help="hashes per bucket")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    cfg = MinhashConfig(
        n_grams=args.ngram,
        num_buckets=args.buckets,
        hashes_per_bucket=args.rows,
        seed=args.seed,
        hash_config=HashConfig(precision=64),  # datatrove's default, named so the benchmark shows it
    )
    work = args.work.rstrip("/")

    def reader() -> ParquetReader:
        return ParquetReader(args.input, glob_pattern="part-*.parquet", text_key="text", id_key="id")

    stages = [
        (
            "signatures",
            [reader(), MinhashDedupSignature(f"{work}/signatures", config=cfg, language=Languages.english)],
            1,
        ),
        (
            "buckets",
            [MinhashDedupBuckets(f"{work}/signatures", f"{work}/buckets", config=cfg)],
            cfg.num_buckets,
        ),
        ("clusters", [MinhashDedupCluster(f"{work}/buckets", f"{work}/remove_ids", config=cfg)], 1),
        (
            "filter",
            [
                reader(),
                MinhashDedupFilter(f"{work}/remove_ids", exclusion_writer=ParquetWriter(f"{work}/removed")),
                ParquetWriter(f"{work}/output"),
            ],
            1,
        ),
    ]
    for name, pipeline, tasks in stages:
        LocalPipelineExecutor(
            pipeline=pipeline, tasks=tasks, workers=1, logging_dir=f"{work}/logs/{name}"
        ).run()


if __name__ == "__main__":
    main()
