"""Tokenization throughput per core, next to the raw library's batch encoding of the same texts
(sentencepiece, Hugging Face tokenizers with a tokenizer.json, and tiktoken with a .tiktoken file).

    python benchmarks/tokenization.py [--repeat N]

(Not `tokenize.py`: a script runs with its folder first on sys.path, and that name would shadow
Python's own `tokenize` module for every benchmark.)

Corpus: the sample's Pile documents ×`--repeat` (a counter appended so copies differ), as a document
dataset. A sentencepiece model and a byte-level BPE tokenizer.json (vocab 8192 each) are trained on it,
then, for each, in one process (= one core):
- limit: the library's batched encode (sentencepiece: numpy ids, one thread; tokenizers:
  `encode_batch_fast`, parallelism off) over the same texts, in memory, in batches of the stage's size in
  bytes (best of two passes);
- selene: `run_tokenize` end to end with that tokenizer (read Parquet, batched encode, EOD,
  write .bin/.idx parts, merge, manifest). Goal: >= 0.85 of the limit.
tiktoken needs an encoding, and none can be downloaded: the byte-level BPE above is trained again with
a real-sized vocabulary (`--tiktoken-vocab`, default 32768) and its tokens, in merge order, become the
ranks of a .tiktoken file, split by cl100k_base's pattern. Its limit is tiktoken's own
`encode_ordinary_batch` (num_threads=1, then 2 on a machine with 2 cores or more, per core), selene
runs with `threads` 1, then 2.
Then the GPT sample index for 1B tokens and the random sample read rate (benchmarks/sample_index.py).

    python benchmarks/tokenization.py --scale 100,400 [--data DIR] [--workers N]

Scale mode: document datasets of about 100 and 400 MB of text (the Pile sample repeated; in each copy a
seeded tenth of the lines gets its letters permuted, so the vocabulary keeps growing like a real
corpus's long tail; shards of 600 documents; kept under `--data` for reuse), each run as the command
``selene tokenize -i IN -o OUT`` (Prefect off) in a child process with default settings. Per phase:
sample reading, sentencepiece training, encode, merge, finalize (wall time, and the peak RSS of the
whole process tree during the phase, sampled every 20 ms with psutil); time per MB shows whether a phase
grows faster than the corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sentencepiece as spm
import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.tokenize import spm as selene_spm  # noqa: E402
from selene.tokenize.config import TokenizeConfig  # noqa: E402
from selene.tokenize.stage import run_tokenize  # noqa: E402
from tests.corpus import write_dataset  # noqa: E402


def corpus(repeat: int) -> list[tuple[str, str]]:
    texts = []
    for f in sorted((ROOT / "data" / "sample" / "pile").glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            texts += [json.loads(line)["text"] for line in io.TextIOWrapper(r, encoding="utf-8")]
    return [(f"d{k}-{i}", f"{t}\n[{k}]") for k in range(repeat) for i, t in enumerate(texts)]


def scale_dataset(directory: Path, mb: int) -> Path:
    """A document dataset of about `mb` MB of text, built once (see the module docstring)."""
    import random

    import pyarrow as pa

    from selene.io import dataset
    from tests.corpus import document_manifest

    if (directory / "manifest.json").exists():
        return directory
    base = [t for _, t in corpus(1)]
    letters = "abcdefghijklmnopqrstuvwxyz"
    shards, shard, size, k, n = [], [], 0, 0, 0
    while size < mb * 1e6:
        rng = random.Random(k)
        perm = list(letters)
        rng.shuffle(perm)
        table = str.maketrans(letters, "".join(perm))
        for text in base:
            lines = text.split("\n")
            lines = [ln.translate(table) if rng.random() < 0.1 else ln for ln in lines]
            shard.append(f"{chr(10).join(lines)}\n[{k}]")
            size += len(shard[-1].encode())
            if len(shard) == 600 or size >= mb * 1e6:
                t = pa.table({"id": [f"d{n + i}" for i in range(len(shard))], "text": shard, "source": ["s"] * len(shard),
                              "meta": ["{}"] * len(shard)}, schema=dataset.DOC_SCHEMA)  # fmt: skip
                shards.append(dataset.write_table(f"{directory}/{dataset.shard_name(len(shards))}", t))
                n, shard = n + len(shard), []
                if size >= mb * 1e6:
                    break
        k += 1
    removed = dataset.write_table(f"{directory}/{dataset.REMOVED}", dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(str(directory), document_manifest(shards, removed, {"s": n}))
    return directory


# Run in the child: time the stage's phases (by wrapping its module functions), then the command.
_CHILD = """
import json, sys, time
from selene.tokenize import indexed, spm, stage
marks = []
def wrap(mod, name, phase):
    fn = getattr(mod, name)
    def timed(*a, **k):
        t = time.time()
        try:
            return fn(*a, **k)
        finally:
            marks.append((phase, t, time.time()))
    setattr(mod, name, timed)
def wrap_gen(mod, name, phase):  # one mark for all the time spent inside the generator
    fn = getattr(mod, name)
    def timed(*a, **k):
        it, mark = fn(*a, **k), [phase, time.time(), 0.0]
        marks.append(mark)
        while True:
            t = time.time()
            try:
                x = next(it)
            except StopIteration:
                return
            finally:
                mark[2] += time.time() - t
            yield x
    setattr(mod, name, timed)
wrap_gen(spm, "sample_lines", "sample")
wrap(spm, "train", "train")
wrap(stage, "encode_shard", "encode")
wrap(indexed, "merge", "merge")
wrap(stage, "finalize", "finalize")
from selene.cli import main
rc = main(sys.argv[1:])
print("PHASES " + json.dumps(marks))
sys.exit(rc)
"""


def watch_tree(pid: int, stop: threading.Event, samples: list[tuple[float, int]]) -> None:
    """Append (time, RSS of process `pid` and all its descendants) every 20 ms until `stop`."""
    import psutil

    root = psutil.Process(pid)
    while not stop.is_set():
        total = 0
        try:
            for p in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
        except psutil.Error:
            break
        samples.append((time.time(), total))
        time.sleep(0.02)


def run_scale(sizes: list[int], data: Path, workers: int, code: list[str]) -> None:
    for mb, src in ((mb, src) for mb in sizes for src in code):
        inp = scale_dataset(data / f"docs-{mb}MB", mb)
        out = Path(tempfile.mkdtemp(prefix="selene-bench-tokscale-"))
        env = {**os.environ, "SELENE_PREFECT": "off", "PYTHONPATH": src}
        cmd = [
            sys.executable,
            "-c",
            _CHILD,
            "tokenize",
            "-i",
            str(inp),
            "-o",
            str(out / "out"),
            "-w",
            str(workers),
        ]
        samples: list[tuple[float, int]] = []
        stop = threading.Event()
        t0 = time.time()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
        th = threading.Thread(target=watch_tree, args=(proc.pid, stop, samples), daemon=True)
        th.start()
        stdout, _ = proc.communicate()
        wall = time.time() - t0
        stop.set()
        th.join()
        shutil.rmtree(out, ignore_errors=True)
        if proc.returncode:
            raise SystemExit(f"selene tokenize failed ({proc.returncode}): {stdout[-2000:]}")
        marks = json.loads(next(ln for ln in stdout.splitlines() if ln.startswith("PHASES "))[7:])
        in_mb = sum(f.stat().st_size for f in inp.glob("part-*.parquet")) / 1e6
        text_mb = mb
        print(
            f"\n{text_mb} MB of text ({in_mb:.0f} MB Parquet): selene tokenize -i {inp} -o OUT -w {workers}"
        )
        print(f"selene from {src}")
        print(f"{'phase':<10}{'wall s':>9}{'s per 100 MB':>14}{'peak RSS tree MiB':>19}")
        for phase in ("sample", "train", "encode", "merge", "finalize"):
            ms = [m for m in marks if m[0] == phase]
            if not ms:
                continue
            if phase == "sample":  # (phase, first start, total seconds inside the generator)
                secs, lo, hi = ms[0][2], ms[0][1], max(m[2] for m in marks if m[0] == "train")
            else:
                lo, hi = min(m[1] for m in ms), max(m[2] for m in ms)
                secs = hi - lo
            peak = max((r for t, r in samples if lo <= t <= hi), default=0)
            print(f"{phase:<10}{secs:>9.1f}{secs / text_mb * 100:>14.1f}{peak / 2**20:>19.0f}")
        peak = max(r for _, r in samples)
        print(f"{'command':<10}{wall:>9.1f}{wall / text_mb * 100:>14.1f}{peak / 2**20:>19.0f}")
        sys.stdout.flush()


def train_hf_bpe(texts: list[str], path: str) -> Any:
    """A byte-level BPE tokenizer.json (GPT-2's kind, vocab 8192, EOS <|endoftext|>) trained on `texts`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=8192, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts[:3000], trainer)
    tok.save(path)
    return tok


def compare(
    name: str,
    limit: Callable[[list[str]], int],
    batches: list[list[str]],
    mb: float,
    inp: str,
    out: Path,
    model: str,
    threads: int = 1,
) -> int:
    """Print the library's batched encode in memory (the limit: best of two passes, so it is not
    flattered by a slow first one) and `run_tokenize` with the same tokenizer; returns the tokens.
    With `threads` > 1 both use that many threads and the rates are per core (divided by `threads`)."""
    t_limit, n_tokens = float("inf"), 0
    for _ in range(2):
        t = time.perf_counter()
        n_tokens = sum(limit(b) for b in batches)
        t_limit = min(t_limit, time.perf_counter() - t)
    t = time.perf_counter()
    res = run_tokenize(inp, str(out), TokenizeConfig(tokenizer=model, threads=threads))
    t_sel = time.perf_counter() - t
    shutil.rmtree(out, ignore_errors=True)
    assert res.manifest.stats.tokens == n_tokens
    if threads > 1:
        print(f"{f'{threads} threads, per core':<46}{'tokens/s':>12}{'MB/s':>8}{'vs limit':>10}")
    print(f"{'limit: ' + name + ' batch encode, in memory':<46}{n_tokens / t_limit / threads:>12,.0f}"
          f"{mb / t_limit / threads:>8.2f}{1:>10.1%}")  # fmt: skip
    print(f"{'selene run_tokenize (Parquet → .bin/.idx)':<46}{n_tokens / t_sel / threads:>12,.0f}"
          f"{mb / t_sel / threads:>8.2f}{t_limit / t_sel:>10.1%}")  # fmt: skip
    return n_tokens


def tiktoken_encoding(texts: list[str], vocab: int, path: Path) -> Any:
    """A real-sized tiktoken encoding built here (nothing can be downloaded): a byte-level BPE of
    `vocab` tokens trained on `texts`, its tokens in id order (the 256 bytes, then each merge in the
    order it was learned: tiktoken's rank order) as the ranks of `path` (a .tiktoken file), split by
    cl100k_base's pattern, with <|endoftext|> after the ranks (in `path`.json). Returns tiktoken's
    own Encoding of it."""
    import tiktoken
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from selene.tokenize.tiktoken_encodings import dump_ranks, published
    from selene.tokenize.tiktoken_hf import byte_chars

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=alphabet, show_progress=False)
    tok.train_from_iterator(texts, trainer)
    byte_of = {c: b for b, c in enumerate(byte_chars())}
    order = sorted((i, t) for t, i in tok.get_vocab().items())
    ranks = {bytes(byte_of[c] for c in t): r for r, (_, t) in enumerate(order)}
    special = {"<|endoftext|>": len(ranks)}
    pattern = published()["cl100k_base"].spec.pat_str
    path.write_bytes(dump_ranks(ranks))
    spec = {"name": "bench", "pat_str": pattern, "special_tokens": special}
    Path(f"{path}.json").write_text(json.dumps(spec))
    return tiktoken.Encoding("bench", pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tiktoken-vocab", type=int, default=32768, help="tokens of the tiktoken encoding built")
    ap.add_argument(
        "--scale", help="comma-separated MB of text: time `selene tokenize` per phase at those sizes"
    )
    ap.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "selene-bench-tokscale"))
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--code", default=str(ROOT), help="comma-separated selene source trees to run in turn "
                    "at each size (e.g. an older commit's `git archive` export), for before/after numbers")  # fmt: skip
    args = ap.parse_args()
    if args.scale:
        run_scale(
            [int(x) for x in args.scale.split(",")], Path(args.data), args.workers, args.code.split(",")
        )
        return
    docs = corpus(args.repeat)
    texts = [t for _, t in docs]
    mb = sum(len(t.encode()) for t in texts) / 1e6
    batches, size = [[]], 0  # the stage's batches: encode_batch_bytes of text (a longer text alone)
    for text in texts:
        n = len(text.encode())
        if batches[-1] and size + n > TokenizeConfig().encode_batch_bytes:
            batches.append([])
            size = 0
        batches[-1].append(text)
        size += n
    tmp = Path(tempfile.mkdtemp(prefix="selene-bench-tok-"))
    try:
        inp = write_dataset(str(tmp / "in"), docs, shard_docs=1000)
        t = time.perf_counter()
        first = run_tokenize(inp, str(tmp / "train"), TokenizeConfig(vocab_size=8192, sample_docs=3000))
        t_train = time.perf_counter() - t
        model = str(tmp / "train" / "tokenizer.model")
        sp = spm.SentencePieceProcessor(model_file=model)
        print(f"corpus: {len(docs)} documents, {mb:.1f} MB (sentencepiece vocab 8192: training took {t_train:.1f} s)")
        print(f"\n{'1 core':<46}{'tokens/s':>12}{'MB/s':>8}{'vs limit':>10}")
        spm_tokens = compare(
            "sentencepiece", lambda b: sum(len(x) + 1 for x in selene_spm.encode(sp, b, threads=1)),
            batches, mb, inp, tmp / "out", model,
        )
        assert spm_tokens == first.manifest.stats.tokens
        hf_model = str(tmp / "tokenizer.json")
        hf = train_hf_bpe(texts, hf_model)
        os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core, as sentencepiece's threads=1
        compare(
            "HF tokenizers", lambda b: sum(len(e.ids) + 1 for e in hf.encode_batch_fast(b, add_special_tokens=False)),
            batches, mb, inp, tmp / "out-hf", hf_model,
        )
        t = time.perf_counter()
        tik_model = tmp / "bench.tiktoken"
        enc = tiktoken_encoding(texts, args.tiktoken_vocab, tik_model)
        print(f"\ntiktoken: a {enc.n_vocab:,}-token byte-level BPE built on the corpus in {time.perf_counter() - t:.1f} s, "
              "cl100k_base's pattern")  # fmt: skip
        print(f"{'1 core':<46}{'tokens/s':>12}{'MB/s':>8}{'vs limit':>10}")
        for threads in (1, 2) if (os.cpu_count() or 1) >= 2 else (1,):

            def limit(b: list[str], n: int = threads) -> int:
                return sum(len(x) + 1 for x in enc.encode_ordinary_batch(b, num_threads=n))

            compare("tiktoken", limit, batches, mb, inp, tmp / "out-tik", str(tik_model), threads)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("(goal: >= 85% of the limit)\n")
    sys.stdout.flush()
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sample_index.py")], check=True)


if __name__ == "__main__":
    main()
