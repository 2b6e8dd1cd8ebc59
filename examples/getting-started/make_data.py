"""Build the getting-started example's own-data files from the bundled sample corpus.

    python examples/getting-started/make_data.py [--out DIR]   # default: next to this file

The documents are real text: the first documents of a few sources of `data/sample/pile/`, read with
selene's own reader, each between MIN_CHARS and MAX_CHARS characters long so that the files stay small.
They are written in the three forms users bring their data in:

- `mydata/reference.jsonl.gz`: jsonl with the text under `text` (the default key);
- `mydata/packages.jsonl`: jsonl with the text under `content` and an id of its own under `doc_id`;
- `mydata/docstrings.parquet`: a Parquet file with a `text` column;
- `mydata/licenses/`: a Hugging Face `datasets` folder (`Dataset.save_to_disk`: Arrow file, `state.json`,
  `dataset_info.json`).

and `tokenizer.json`: a tokenizer of one's own, as Hugging Face `tokenizers` saves it (byte-level BPE of
TOKENIZER_VOCAB ids with `<|endoftext|>`, trained on the sample's Python sources, not on the documents above).

The same sample gives the same files: documents are taken in file and line order, gzip's mtime is 0 and
the dataset's fingerprint is a hash of its rows.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from functools import cache
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from selene.ingest.readers import read_records
from selene.ingest.records import ReadStats

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MIN_CHARS, MAX_CHARS = 600, 2500
PER_FILE = 30
TOKENIZER_VOCAB = 1024
TOKENIZER_DOCS = 100


def sample_texts(source: str, n: int = PER_FILE) -> list[str]:
    """The first `n` documents of one Pile source of the sample, MIN_CHARS..MAX_CHARS long."""
    out: list[str] = []
    for doc in _pile_docs():
        if doc[0] == source and MIN_CHARS <= len(doc[1]) <= MAX_CHARS:
            out.append(doc[1])
            if len(out) == n:
                return out
    raise SystemExit(
        f"data/sample/pile has {len(out)} {source} documents of {MIN_CHARS}-{MAX_CHARS} characters; {n} needed"
    )


@cache
def _pile_docs() -> tuple[tuple[str, str], ...]:
    """(source, text) of every document of the sample's Pile shards, in file and line order."""
    docs = []
    for path in sorted((ROOT / "data" / "sample" / "pile").glob("*.jsonl.zst")):
        for rec in read_records(str(path), 1 << 24, ReadStats()):
            if rec.text is not None and rec.source is not None:
                docs.append((rec.source, rec.text))
    return tuple(docs)


def write_jsonl_gz(path: Path, rows: list[dict[str, str]]) -> None:
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(body)


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_dataset(path: Path, texts: list[str]) -> None:
    table = pa.table({"text": texts})
    fingerprint = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    datasets.disable_progress_bars()
    ds = datasets.Dataset(table, fingerprint=fingerprint)
    ds.save_to_disk(str(path))


def write_tokenizer(path: Path) -> None:
    """A byte-level BPE tokenizer (GPT-2's kind) with `<|endoftext|>`, trained on Python source files."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TOKENIZER_VOCAB,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    code = [text for source, text in _pile_docs() if source == "Github"][:TOKENIZER_DOCS]
    tok.train_from_iterator(code, trainer)
    tok.save(str(path), pretty=False)


def build(out: Path) -> None:
    """`out/mydata/` and `out/tokenizer.json`."""
    data = out / "mydata"
    data.mkdir(parents=True, exist_ok=True)
    write_jsonl_gz(data / "reference.jsonl.gz", [{"text": t} for t in sample_texts("PythonReference")])
    write_jsonl(
        data / "packages.jsonl",
        [{"doc_id": f"pkg-{i:03d}", "content": t} for i, t in enumerate(sample_texts("PyPI"))],
    )
    pq.write_table(
        pa.table({"text": sample_texts("Docstrings")}), data / "docstrings.parquet", compression="zstd"
    )
    write_dataset(data / "licenses", sample_texts("Licenses"))
    write_tokenizer(out / "tokenizer.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder of mydata/ and tokenizer.json")
    out = parser.parse_args().out
    build(out)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.suffix != ".py")
    print(f"wrote {out / 'mydata'} and {out / 'tokenizer.json'}: {total:,} bytes")


if __name__ == "__main__":
    main()
