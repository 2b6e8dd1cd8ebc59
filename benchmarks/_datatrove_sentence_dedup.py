"""datatrove's sentence dedup as its users run it, and what the comparison needs to read its decisions.

    /work/venvs/datatrove/bin/python benchmarks/_datatrove_sentence_dedup.py run IN WORK [--n-sentences 3] [--lines]
    /work/venvs/datatrove/bin/python benchmarks/_datatrove_sentence_dedup.py split IN OUT.parquet
    /work/venvs/datatrove/bin/python benchmarks/_datatrove_sentence_dedup.py measure TEXTS.parquet OUT.parquet

Run by `benchmarks/spans.py` with datatrove's own Python (it is not importable from selene's venv).
IN is a directory of Parquet files with `id` and `text` columns (selene's document shards, read as
they are).

`run`: the three steps of datatrove's `examples/sentence_deduplication.py`, each under
LocalPipelineExecutor, one task and one worker (one task, because datatrove numbers documents per
task and keeps the occurrence with the lowest (document number, task): with one task that is the
first in corpus order, as selene keeps it). `SentDedupConfig` at its defaults (3-sentence spans,
sentences by the English word tokenizer: spaCy `blank("en")` + `sentencizer`; drop a document left
with < 50 words or < 3 sentences; TextNormConfig's lower-casing, punctuation removal, number and
diacritics folding; 64-bit xxhash). WORK receives:

- `sigs/0000/00000.c4_sig`   step 1: the sorted hashes of every 3-sentence span
- `dups/0000/00000.c4_dup`   step 2: (document, sentence) of every span seen before
- `output/`                  step 3: the documents kept, cut (ParquetWriter); a dropped document is
                             one whose id is missing here
- `logs/<step>/`             datatrove's logs and stats

`split` and `measure` are for the comparison, untimed. `split` writes, per document in corpus
order, what datatrove's steps see: the sentence ends of `span_tokenize` (the filter cuts these
sentences), and `simplify_text` of each sentence of `sent_tokenize` (the signature step hashes these,
three joined by a space); with `--ends`, the keys of the sentences those ends give instead (another
splitter's sentences under datatrove's normalisation). `measure` counts, for each (key, text) row, the words and the sentences
datatrove's filter counts to decide whether a cut document stays.
"""

from __future__ import annotations

import argparse
import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import SentenceDedupFilter, SentenceDedupSignature, SentenceFindDedups
from datatrove.pipeline.dedup.sentence_dedup import SentDedupConfig
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.writers import ParquetWriter
from datatrove.utils.text import simplify_text, split_into_sentences
from datatrove.utils.typeshelper import Languages
from datatrove.utils.word_tokenizers import load_word_tokenizer


def run(args: argparse.Namespace) -> None:
    config = SentDedupConfig(n_sentences=args.n_sentences, split_sentences=not args.lines)
    work = args.work.rstrip("/")

    def reader() -> ParquetReader:
        return ParquetReader(args.input, glob_pattern="part-*.parquet", text_key="text", id_key="id")

    steps = [
        ("signatures", [reader(), SentenceDedupSignature(f"{work}/sigs", config=config, finder_workers=1)]),
        ("find", [SentenceFindDedups(f"{work}/sigs", f"{work}/dups", config=config)]),
        (
            "filter",
            [reader(), SentenceDedupFilter(f"{work}/dups", config=config), ParquetWriter(f"{work}/output")],
        ),
    ]
    for name, pipeline in steps:
        LocalPipelineExecutor(pipeline=pipeline, tasks=1, workers=1, logging_dir=f"{work}/logs/{name}").run()


def _documents(input_dir: str):
    for path in sorted(glob.glob(os.path.join(input_dir, "part-*.parquet"))):
        for batch in pq.ParquetFile(path).iter_batches(columns=["id", "text"], batch_size=1024):
            yield from zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)


def split(args: argparse.Namespace) -> None:
    tok = load_word_tokenizer(Languages.english)
    given = pq.read_table(args.ends).column("ends").to_pylist() if args.ends else None
    ids, ends, keys = [], [], []
    for k, (doc_id, text) in enumerate(_documents(args.input)):
        ids.append(doc_id)
        if given is None:
            ends.append([b for _, b in tok.span_tokenize(text)])
            sentences = tok.sent_tokenize(text)
        else:  # another splitter's sentences, stripped and without blank ones as sent_tokenize gives them
            ends.append(given[k])
            pieces = (text[a:b].strip() for a, b in zip([0, *given[k][:-1]], given[k], strict=True))
            sentences = [s for s in pieces if s]
        keys.append([simplify_text(s) for s in sentences])
    pq.write_table(pa.table({"id": ids, "ends": ends, "keys": keys}), args.output)


def measure(args: argparse.Namespace) -> None:
    tok = load_word_tokenizer(Languages.english)
    table = pq.read_table(args.input)
    words, sentences = [], []
    for text in table.column("text").to_pylist():
        words.append(len(tok.word_tokenize(text)))
        sentences.append(len(split_into_sentences(text, Languages.english)))
    out = pa.table({"key": table.column("key"), "words": words, "sentences": sentences})
    pq.write_table(out, args.output)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("input")
    r.add_argument("work")
    r.add_argument("--n-sentences", type=int, default=3)
    r.add_argument("--lines", action="store_true", help="split_sentences=False: lines (str.splitlines)")
    s = sub.add_parser("split")
    s.add_argument("input")
    s.add_argument("output")
    s.add_argument("--ends", help="Parquet with an `ends` column per document: hash these sentences instead")
    m = sub.add_parser("measure")
    m.add_argument("input")
    m.add_argument("output")
    args = ap.parse_args()
    {"run": run, "split": split, "measure": measure}[args.command](args)


if __name__ == "__main__":
    main()
