"""A seeded Pile-style corpus of any size, with exact and near duplicates planted at known rates.

    python benchmarks/scale_corpus.py --gb 1 --out DIR [--seed 0] [--exact 0.05] [--near 0.10]

Material: the bundled sample's Pile documents (data/sample/pile: real text from the Python reference,
docstrings, stdlib code, licenses, PyPI descriptions, Debian copyright files, gettext translations).
Each is cut into paragraphs (blank-line separated; paragraphs over ~1.5 KB cut further at line ends,
so that no piece dominates a document), unique per source. A new document takes one source (drawn by
the source's share of the sample's bytes), a paragraph count drawn from that source's documents
(at least 3) and that many paragraphs of the source, drawn uniformly: a new order and mix, so exact
dedup keeps it and two documents rarely share more than a paragraph (word 5-gram Jaccard far below 0.8).

Planted, among the documents written:
- `--exact`: a byte-identical text of an earlier original document (exact dedup in ingest removes it);
- `--near`: an earlier original with word replacements spread >= 5 words apart, so each replacement
  changes exactly 5 of the word 5-grams: k replacements in a text of n 5-grams give Jaccard
  (n - 5k) / (n + 5k). k is chosen for a target Jaccard, drawn evenly from `NEAR_LEVELS`; those >= 0.8
  are duplicates for `selene dedup` at its default threshold, the others are not. The realised
  Jaccard (repeated 5-grams inside a text make it differ a little) is measured on a sample with
  Python sets and reported.
Each planted document says what it is in `meta.planted` (`exact` or `near:0.90`), which travels
with it through the stages, so survivors can be counted after each one.

Files: `corpus-NNNN.jsonl.zst` (zstd level 1, one frame per file, written by a compression thread
while the next documents are made), each ~1/max(4, GB/0.5) of the total, then `summary.json` (the
completion marker: parameters, counts per kind, level and source, text bytes and characters,
measured Jaccard, generation time). Memory stays constant: documents are made in batches and only
the (source, paragraph indices) of a reservoir of earlier originals are kept as duplicate bases.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
import zstandard

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "pile"
VERSION = 1  # bump when the output for a given (gb, seed, rates) changes
NEAR_LEVELS = (0.95, 0.9, 0.85, 0.7)
MAX_PIECE = 1500  # chars: longer paragraphs are cut at line ends
MIN_PARAS = 3
RESERVOIR = 4096
BATCH = 512
_WORDS = re.compile(r"[\W_]+")  # selene's normalisation splits words on runs of non-alphanumerics
_ALNUM = re.compile(r"[^\W_]+")


class Pool:
    """The paragraphs of one source: raw text, JSON-escaped text, UTF-8 bytes and characters each."""

    def __init__(self, name: str, texts: list[str]) -> None:
        seen: dict[str, None] = {}
        counts = []
        for text in texts:
            pieces = [p for para in text.split("\n\n") if para.strip() for p in _cut(para)]
            counts.append(max(MIN_PARAS, len(pieces)))
            seen.update(dict.fromkeys(pieces))
        self.name = name
        self.raw = list(seen)
        self.esc = [json.dumps(p, ensure_ascii=False)[1:-1] for p in self.raw]
        self.nbytes = np.array([len(p.encode()) for p in self.raw], dtype=np.int64)
        self.nchars = np.array([len(p) for p in self.raw], dtype=np.int64)
        self.counts = np.array(counts, dtype=np.int64)
        self.sample_bytes = sum(len(t.encode()) for t in texts)
        self.meta = json.dumps({"pile_set_name": name})


def _cut(para: str) -> list[str]:
    if len(para) <= MAX_PIECE:
        return [para]
    out, cur, size = [], [], 0
    for line in para.split("\n"):
        if cur and size + len(line) > MAX_PIECE:
            out.append("\n".join(cur))
            cur, size = [], 0
        cur.append(line)
        size += len(line) + 1
    if cur:
        out.append("\n".join(cur))
    return [p for p in out if p.strip()]


def load_pools(sample: Path = SAMPLE) -> list[Pool]:
    texts: dict[str, list[str]] = {}
    for f in sorted(sample.glob("*.jsonl.zst")):
        with zstandard.ZstdDecompressor().stream_reader(f.open("rb")) as r:
            for line in io.TextIOWrapper(r, encoding="utf-8"):
                d = json.loads(line)
                texts.setdefault(d["meta"]["pile_set_name"], []).append(d["text"])
    return [Pool(name, texts[name]) for name in sorted(texts)]


def shingles(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = _WORDS.sub(" ", text.lower()).split()
    return {tuple(words[i : i + n]) for i in range(max(1, len(words) - n + 1))}


def jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


def near_copy(m: Material, idx: list[int], target: float, rng: np.random.Generator) -> str:
    """The text of paragraphs `idx` with words replaced >= 5 apart: each replacement changes exactly
    5 of the word 5-grams, so k of them in a text of n 5-grams give Jaccard (n - 5k) / (n + 5k)."""
    texts = [m.raw[i] for i in idx]
    starts = np.cumsum([0] + [len(t) + 2 for t in texts[:-1]])  # paragraphs are joined by "\n\n"
    spans = np.concatenate([m.spans[i] + o for i, o in zip(idx, starts.tolist(), strict=True)])
    text = "\n\n".join(texts)
    words = len(spans)
    n = words - 4  # 5-grams
    slots = (words - 8) // 5  # words 4 + 5j + off: inside the text, each in 5 whole 5-grams
    if n <= 0 or slots <= 0:
        return text
    k = min(slots, max(1, round(n * (1 - target) / (5 * (1 + target)))))
    off = int(rng.integers(0, min(5, words - 4 - (4 + 5 * (slots - 1)))))
    picks = np.sort(rng.choice(slots, size=k, replace=False)) * 5 + 4 + off
    new = rng.integers(0, len(m.vocab), size=k)
    out, pos = [], 0
    for w, v in zip(picks.tolist(), new.tolist(), strict=True):
        a, b = int(spans[w, 0]), int(spans[w, 1])
        word = m.vocab[v] if m.vocab[v] != text[a:b].lower() else m.vocab[v] + "s"
        out += [text[pos:a], word]
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _spans(text: str) -> np.ndarray:
    return np.array([mt.span() for mt in _ALNUM.finditer(text)], dtype=np.int64).reshape(-1, 2)


class Material:
    """Every source's paragraphs in flat arrays (global index = offset of the source + local index)."""

    def __init__(self, pools: list[Pool]) -> None:
        self.pools = pools
        self.size = np.array([len(p.raw) for p in pools], dtype=np.int64)
        self.offset = np.concatenate([[0], np.cumsum(self.size)[:-1]]).astype(np.int64)
        self.raw = [t for p in pools for t in p.raw]
        self.esc = [t.encode() for p in pools for t in p.esc]  # bytes: joined without re-encoding
        self.nbytes = np.concatenate([p.nbytes for p in pools])
        self.nchars = np.concatenate([p.nchars for p in pools])
        self.meta = [p.meta.encode() for p in pools]
        self.counts = np.concatenate([p.counts for p in pools])  # paragraphs per sample document
        self.count_size = np.array([len(p.counts) for p in pools], dtype=np.int64)
        self.count_offset = np.concatenate([[0], np.cumsum(self.count_size)[:-1]]).astype(np.int64)
        w = np.array([p.sample_bytes for p in pools], dtype=np.float64)
        self.weights = w / w.sum()
        # replacement words for near copies: real words of the prose sources
        words = {
            w
            for p in pools
            if p.name in ("PythonReference", "Docstrings")
            for t in p.raw
            for w in t.lower().split()
        }
        self.spans = [_spans(t) for t in self.raw]  # (start, end) of each normalised word
        self.vocab = sorted(w for w in words if w.isalpha() and w.isascii() and 3 <= len(w) <= 12)


def generate(
    out: Path,
    gb: float,
    seed: int = 0,
    exact: float = 0.05,
    near: float = 0.10,
    level: int = 1,
    measure_every: int = 50,
) -> dict:
    """Write ~gb × 1e9 bytes of UTF-8 text as jsonl.zst files under `out`; return the summary."""
    t0 = time.perf_counter()
    m = Material(load_pools())
    rng = np.random.default_rng(seed)
    target = int(gb * 1e9)
    n_files = max(4, math.ceil(gb / 0.5))
    per_file = target / n_files
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("corpus-*.jsonl.zst*"):
        old.unlink()
    (out / "summary.json").unlink(missing_ok=True)

    res_src = np.zeros(RESERVOIR, dtype=np.int64)
    res_idx: list[list[int]] = [[] for _ in range(RESERVOIR)]
    seen_originals = 0
    kinds: Counter[str] = Counter()
    per_source: Counter[str] = Counter()
    measured: dict[str, list[float]] = {f"{lv:.2f}": [] for lv in NEAR_LEVELS}
    text_bytes = text_chars = jsonl_bytes = 0
    files = []
    near_seen = 0
    cctx = zstandard.ZstdCompressor(level=level, threads=1)  # one thread compresses while we generate
    for fi in range(n_files):
        path = out / f"corpus-{fi:04d}.jsonl.zst"
        tmp = path.with_suffix(".zst.tmp")
        file_text = 0
        with tmp.open("wb") as fh, cctx.stream_writer(fh, closefd=False) as zw:
            while file_text < per_file and text_bytes < target:
                # the batch's originals, vectorised: source, paragraph count, paragraphs, sizes
                src = rng.choice(len(m.pools), size=BATCH, p=m.weights)
                u = rng.random(BATCH)
                k = m.counts[m.count_offset[src] + (rng.random(BATCH) * m.count_size[src]).astype(np.int64)]
                starts = np.concatenate([[0], np.cumsum(k)[:-1]])
                gidx = np.repeat(m.offset[src], k) + (
                    rng.random(int(k.sum())) * np.repeat(m.size[src], k)
                ).astype(np.int64)
                nb = np.add.reduceat(m.nbytes[gidx], starts) + 2 * (k - 1)
                nc = np.add.reduceat(m.nchars[gidx], starts) + 2 * (k - 1)
                flat = gidx.tolist()
                lines: list[bytes] = []
                for b in range(BATCH):
                    s = int(src[b])
                    if seen_originals and u[b] < exact + near:
                        r = int(rng.integers(0, min(seen_originals, RESERVOIR)))
                        s, idx = int(res_src[r]), res_idx[r]
                        if u[b] < exact:
                            kind = "exact"
                            body = b"\\n\\n".join([m.esc[i] for i in idx])
                            dnb = int(m.nbytes[idx].sum()) + 2 * (len(idx) - 1)
                            dnc = int(m.nchars[idx].sum()) + 2 * (len(idx) - 1)
                        else:
                            lv = NEAR_LEVELS[near_seen % len(NEAR_LEVELS)]
                            kind = f"near:{lv:.2f}"
                            text = near_copy(m, idx, lv, rng)
                            if (
                                near_seen % measure_every < len(NEAR_LEVELS)
                                and len(measured[f"{lv:.2f}"]) < 500
                            ):
                                measured[f"{lv:.2f}"].append(
                                    jaccard("\n\n".join([m.raw[i] for i in idx]), text)
                                )
                            near_seen += 1
                            body = json.dumps(text, ensure_ascii=False)[1:-1].encode()
                            dnb, dnc = len(text.encode()), len(text)
                        meta = m.meta[s][:-1] + b', "planted": "' + kind.encode() + b'"}'
                    else:
                        kind = "original"
                        idx = flat[starts[b] : starts[b] + k[b]]
                        body = b"\\n\\n".join([m.esc[i] for i in idx])
                        dnb, dnc, meta = int(nb[b]), int(nc[b]), m.meta[s]
                        # reservoir sampling: every original so far is equally likely to be a base
                        slot = (
                            seen_originals
                            if seen_originals < RESERVOIR
                            else int(rng.integers(0, seen_originals + 1))
                        )
                        if slot < RESERVOIR:
                            res_src[slot], res_idx[slot] = s, idx
                        seen_originals += 1
                    lines.append(b'{"text": "' + body + b'", "meta": ' + meta + b"}\n")
                    kinds[kind] += 1
                    per_source[m.pools[s].name] += 1
                    text_bytes += dnb
                    text_chars += dnc
                    file_text += dnb
                    if file_text >= per_file or text_bytes >= target:
                        break
                data = b"".join(lines)
                jsonl_bytes += len(data)
                zw.write(data)
        os.replace(tmp, path)
        files.append({"file": path.name, "bytes": path.stat().st_size})
    seconds = time.perf_counter() - t0
    summary = {
        "version": VERSION,
        "gb": gb,
        "seed": seed,
        "exact_rate": exact,
        "near_rate": near,
        "near_levels": list(NEAR_LEVELS),
        "zstd_level": level,
        "documents": sum(kinds.values()),
        "kinds": dict(sorted(kinds.items())),
        "per_source": dict(sorted(per_source.items())),
        "text_bytes": text_bytes,
        "text_chars": text_chars,
        "jsonl_bytes": jsonl_bytes,
        "compressed_bytes": sum(f["bytes"] for f in files),
        "files": files,
        "near_jaccard_measured": {
            lv: {
                "n": len(v),
                "mean": round(float(np.mean(v)), 4),
                "min": round(float(np.min(v)), 4),
                "max": round(float(np.max(v)), 4),
            }
            for lv, v in measured.items()
            if v
        },
        "generate_seconds": round(seconds, 2),
        "generate_mb_per_s": round(text_bytes / 1e6 / seconds, 1),
    }
    (out / "summary.tmp").write_text(json.dumps(summary, indent=1))
    os.replace(out / "summary.tmp", out / "summary.json")
    return summary


def ensure(out: Path, gb: float, seed: int, exact: float, near: float) -> tuple[dict, bool]:
    """The corpus in `out` if complete for these parameters (reused), else a freshly generated one."""
    try:
        s = json.loads((out / "summary.json").read_text())
        same = (s["version"], s["gb"], s["seed"], s["exact_rate"], s["near_rate"]) == (
            VERSION,
            gb,
            seed,
            exact,
            near,
        )
        if same and all((out / f["file"]).stat().st_size == f["bytes"] for f in s["files"]):
            return s, True
    except (OSError, ValueError, KeyError):
        pass
    return generate(out, gb, seed, exact, near), False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, required=True, help="GB (1e9 bytes) of UTF-8 document text")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact", type=float, default=0.05, help="share of planted exact duplicates")
    ap.add_argument("--near", type=float, default=0.10, help="share of planted near duplicates")
    args = ap.parse_args()
    s, reused = ensure(args.out, args.gb, args.seed, args.exact, args.near)
    print(json.dumps({k: v for k, v in s.items() if k != "files"}, indent=1))
    print("reused" if reused else f"generated at {s['generate_mb_per_s']} MB/s of text")


if __name__ == "__main__":
    main()
