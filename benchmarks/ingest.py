"""Ingest throughput per core, next to the I/O limit measured in the same run.

    python benchmarks/ingest.py [--repeat N] [--keep-dir DIR]

Pile: a jsonl.zst made of the sample corpus's Pile documents, repeated `--repeat` times with a
counter appended so that exact dedup does not remove the copies. Baseline: read + zstd decompress +
`json.loads` of every line (the raw rate). Then, in one process (= per core):
- `parse`: selene's reader (streaming decompression, line splitting, JSON, field checks);
- `full`: `process_file`: reader + ftfy/NFC/whitespace cleaning + language id + Gopher filters +
  dedup hash + Parquet write — the whole per-document path;
- `stage`: `run_ingest` serially, i.e. `full` plus the global exact dedup and the output shards.
WARC: the sample `warc.gz` repeated; pages/s for selene's reader (charset + resiliparse
main-content extraction) and for `process_file`, next to fastwarc iterating the same records.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

import zstandard
from fastwarc.warc import ArchiveIterator

from selene.ingest import exact_dedup, stage
from selene.ingest.clean import clean_text
from selene.ingest.config import IngestConfig, SourceSpec
from selene.ingest.filters import FilterChain
from selene.ingest.langid import LanguageIdentifier
from selene.ingest.readers import ReadStats, read_records

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def build_pile(dst: Path, repeat: int) -> tuple[Path, int, int]:
    lines = []
    for f in sorted((SAMPLE / "pile").glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            lines += io.TextIOWrapper(r, encoding="utf-8").read().splitlines()
    docs = [json.loads(line) for line in lines]
    out = []
    for k in range(repeat):
        for d in docs:
            out.append(json.dumps({"text": f"{d['text']}\n\n[{k}]", "meta": d["meta"]}))
    raw = ("\n".join(out) + "\n").encode()
    dst.write_bytes(zstandard.ZstdCompressor(level=3).compress(raw))
    return dst, len(out), len(raw)


def build_warc(dst: Path, repeat: int) -> Path:
    data = (SAMPLE / "cc" / "CC-SAMPLE-00000.warc.gz").read_bytes()
    dst.write_bytes(data * repeat)  # concatenated gzip members are a valid WARC
    return dst


def raw_pile_rate(path: Path) -> tuple[float, int]:
    t = time.perf_counter()
    n = 0
    with zstandard.ZstdDecompressor().stream_reader(path.open("rb"), read_across_frames=True) as r:
        for line in io.BufferedReader(r, 1 << 20):
            if line.strip():
                json.loads(line)
                n += 1
    return time.perf_counter() - t, n


def timed(fn, *a):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*a)
    return time.perf_counter() - t, out


def cfg_for(path: Path, name: str) -> IngestConfig:
    # The demo's settings: code (Github) is exempt from the prose rules and language id.
    cfg = IngestConfig(sources=[SourceSpec(name=name, glob=str(path))], shard_docs=20_000)
    for f in (cfg.filters["gopher_quality"], cfg.filters["gopher_repetition"], cfg.langid):
        f.exclude_sources = ["Github"]
    return cfg


def breakdown(pile: Path, cfg: IngestConfig) -> None:
    """Where the per-document time goes: each step alone over the same documents."""
    recs = [r for r in read_records(str(pile), 1 << 28, ReadStats()) if r.text is not None]
    texts = [r.text or "" for r in recs]
    sources = [r.source or "" for r in recs]
    total_mb = sum(len(t.encode()) for t in texts) / 1e6
    t_json, _ = timed(lambda: [json.loads(json.dumps(t)) for t in texts])
    t_clean, cleaned = timed(lambda: [clean_text(t, cfg.clean) for t in texts])
    lid = LanguageIdentifier(cfg.langid)
    prose = [t for t, s in zip(cleaned, sources, strict=True) if s not in cfg.langid.exclude_sources]
    lid.predict("warm up the model")
    t_lid, _ = timed(lambda: [lid.predict(t) for t in prose])
    chain = FilterChain(cfg.filters)
    t_filt, _ = timed(lambda: [chain.check(t, s) for t, s in zip(cleaned, sources, strict=True)])
    t_hash, _ = timed(lambda: [exact_dedup.text_hash(t) for t in cleaned])
    print(f"\n{'per-document steps, 1 core':<30}{'us/doc':>10}{'MB/s':>9}")
    for name, t in (
        ("json round trip (reference)", t_json),
        ("clean (ftfy, NFC, whitespace)", t_clean),
        ("language id (prose sources)", t_lid),
        ("filters (length, Gopher)", t_filt),
        ("dedup hash (normalise+xxh3)", t_hash),
    ):
        print(f"{name:<30}{t / len(texts) * 1e6:>10.0f}{total_mb / t:>9.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=4, help="copies of the sample corpus (default 4)")
    ap.add_argument("--keep-dir", default=None)
    args = ap.parse_args()
    tmp = Path(args.keep_dir or tempfile.mkdtemp(prefix="selene-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        run(tmp, args.repeat)
    finally:
        if not args.keep_dir:
            shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path, repeat: int) -> None:
    pile, n_docs, n_bytes = build_pile(tmp / "bench.jsonl.zst", repeat)
    mb = n_bytes / 1e6
    print(f"Pile corpus: {n_docs} documents, {mb:.1f} MB uncompressed, {pile.stat().st_size / 1e6:.1f} MB zstd")

    t_raw, n = raw_pile_rate(pile)
    assert n == n_docs
    t_parse, n_parsed = timed(lambda: sum(1 for _ in read_records(str(pile), 1 << 28, ReadStats())))
    assert n_parsed == n_docs
    cfg = cfg_for(pile, "pile")
    inputs = stage.plan_inputs(cfg.sources)
    work = stage.Work(str(tmp / "out-full"), "bench")
    t_full, _ = timed(stage.process_file, inputs[0], cfg, work.root)
    t_stage, res = timed(stage.run_ingest, str(tmp / "out-stage"), cfg)
    kept = res.manifest.stats.documents_out

    rows = [("raw: read+zstd+json.loads", t_raw), ("selene reader", t_parse), ("full per-doc path", t_full), ("whole stage (serial)", t_stage)]
    print(f"\n{'Pile jsonl.zst, 1 core':<30}{'docs/s':>10}{'MB/s':>9}{'vs raw':>9}")
    for name, t in rows:
        print(f"{name:<30}{n_docs / t:>10.0f}{mb / t:>9.2f}{t_raw / t:>9.1%}")
    print(f"(kept {kept} of {n_docs} documents; goal: full path >= 30% of raw)")
    breakdown(pile, cfg)

    warc = build_warc(tmp / "bench.warc.gz", repeat * 4)
    t_fw, pages = timed(lambda: sum(1 for r in ArchiveIterator(warc.open("rb"), parse_http=False) if r.reader.read() is not None))
    t_read, n_pages = timed(lambda: sum(1 for r in read_records(str(warc), 1 << 28, ReadStats())))
    wcfg = cfg_for(warc, "cc")
    winputs = stage.plan_inputs(wcfg.sources)
    t_wfull, _ = timed(stage.process_file, winputs[0], wcfg, stage.Work(str(tmp / "out-warc"), "bench").root)
    wmb = warc.stat().st_size / 1e6
    print(f"\n{'WARC (gz), 1 core':<30}{'pages/s':>10}{'MB/s gz':>9}{'vs raw':>9}")
    print(f"{'raw: fastwarc, all records':<30}{n_pages / t_fw:>10.0f}{wmb / t_fw:>9.2f}{1:>9.1%}")
    print(f"{'reader + extraction':<30}{n_pages / t_read:>10.0f}{wmb / t_read:>9.2f}{t_fw / t_read:>9.1%}")
    print(f"{'full per-page path':<30}{n_pages / t_wfull:>10.0f}{wmb / t_wfull:>9.2f}{t_fw / t_wfull:>9.1%}")
    print(f"({n_pages} response records of {pages} WARC records; goal: >= 200 pages/s/core)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:.0f} MiB (the corpora are {mb:.0f} MB and {wmb:.0f} MB gz)")


if __name__ == "__main__":
    main()
