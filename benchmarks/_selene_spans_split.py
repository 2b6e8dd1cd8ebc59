"""selene's sentences and span keys of every document, for `benchmarks/spans.py`'s comparison.

    PYTHONPATH=CHECKOUT python benchmarks/_selene_spans_split.py IN OUT.parquet [--normaliser MODULE:FUNCTION --config YAML]

Run with the selene checkout under test on PYTHONPATH (the branch that holds `selene spans`). IN is a
document dataset; OUT gets, per document in corpus order, `id`, `ends` (selene's sentence ends,
`selene.spans.sentences.sentence_ends`) and `keys`: each non-blank sentence's text as selene
normalises it before hashing (`--normaliser`, a function of that checkout taking the text and, when
it takes two arguments, the stage's config read from `--config`; without it, `keys` is empty and the
comparison skips the normalisation step).
"""

from __future__ import annotations

import argparse
import functools
import glob
import importlib
import inspect
import os

import pyarrow as pa
import pyarrow.parquet as pq
import yaml


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--normaliser", default="", help="MODULE:FUNCTION: (text[, config]) -> normalised text")
    ap.add_argument("--config", help="YAML of the spans stage's settings, for a normaliser that takes them")
    args = ap.parse_args()
    # the checkout under test, from PYTHONPATH (it may not be the one this file sits in)
    sentence_ends = importlib.import_module("selene.spans.sentences").sentence_ends
    norm = None
    if args.normaliser:
        module, _, name = args.normaliser.partition(":")
        fn = getattr(importlib.import_module(module), name)
        if len(inspect.signature(fn).parameters) > 1:
            # the stage's config model, from the same checkout
            config = importlib.import_module("selene.spans.config").SpansConfig
            with open(args.config) as f:
                cfg = config.model_validate(yaml.safe_load(f))
            norm = functools.partial(lambda text, fn, cfg: fn(text, cfg), fn=fn, cfg=cfg)
        else:
            norm = fn
    ids, ends, keys = [], [], []
    for path in sorted(glob.glob(os.path.join(args.input, "part-*.parquet"))):
        for batch in pq.ParquetFile(path).iter_batches(columns=["id", "text"], batch_size=1024):
            for doc_id, text in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
                e = sentence_ends(text)
                ids.append(doc_id)
                ends.append(e)
                sents = [text[a:b].strip() for a, b in zip([0, *e[:-1]], e, strict=True)]
                keys.append([norm(s) for s in sents if s] if norm else [])
    pq.write_table(pa.table({"id": ids, "ends": ends, "keys": keys}), args.output)


if __name__ == "__main__":
    main()
