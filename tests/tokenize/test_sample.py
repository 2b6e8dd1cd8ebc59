"""The bundled sample corpus (data/sample/): formats, contents and rebuild determinism."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

import pytest
import zstandard
from fastwarc.warc import ArchiveIterator, WarcRecord, WarcRecordType

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample"
SCRIPT = REPO / "scripts" / "build_sample.py"
WARC = SAMPLE / "cc" / "CC-SAMPLE-00000.warc.gz"
WET = SAMPLE / "cc" / "CC-SAMPLE-00000.warc.wet.gz"
MAX_SAMPLE_BYTES = 10 * 1024 * 1024
MAX_BUILD_SECONDS = 20.0


def pile_shards(root: Path = SAMPLE) -> list[Path]:
    return sorted((root / "pile").glob("*.jsonl.zst"))


def pile_lines(path: Path) -> list[str]:
    with path.open("rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as reader:
        return io.TextIOWrapper(reader, encoding="utf-8").read().splitlines()


def records(path: Path) -> list[tuple[WarcRecord, bytes]]:
    """Every record with its block (fastwarc's reader is only valid while iterating)."""
    with path.open("rb") as fh:
        return [(rec, rec.reader.read()) for rec in ArchiveIterator(fh, parse_http=False)]


def responses(path: Path = WARC) -> list[tuple[WarcRecord, bytes]]:
    """Response records with their HTTP payload (the body after the HTTP headers)."""
    with path.open("rb") as fh:
        return [
            (rec, rec.reader.read())
            for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True)
        ]


def block_digest_ok(rec: WarcRecord, block: bytes) -> bool:
    expected = "sha1:" + base64.b32encode(hashlib.sha1(block).digest()).decode("ascii")
    return rec.headers["WARC-Block-Digest"] == expected


def gzip_members(data: bytes) -> int:
    count = 0
    while data:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        decomp.decompress(data)
        assert decomp.eof, "truncated gzip member"
        data = decomp.unused_data
        count += 1
    return count


def test_committed_files_exist() -> None:
    assert 2 <= len(pile_shards()) <= 3
    for path in (WARC, WET, SAMPLE / "README.md"):
        assert path.is_file(), path


def test_sample_is_small() -> None:
    total = sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file())
    assert total < MAX_SAMPLE_BYTES


def test_pile_lines_parse_with_text_and_source() -> None:
    sources: Counter[str] = Counter()
    texts: Counter[str] = Counter()
    for shard in pile_shards():
        lines = pile_lines(shard)
        assert lines, f"{shard} is empty"
        for number, line in enumerate(lines, start=1):
            doc = json.loads(line)
            assert isinstance(doc["text"], str) and doc["text"].strip(), f"{shard}:{number}"
            assert isinstance(doc["meta"]["pile_set_name"], str), f"{shard}:{number}"
            sources[doc["meta"]["pile_set_name"]] += 1
            texts[doc["text"]] += 1
    assert len(sources) >= 5, sources
    # The dedup stage is tested on this sample: it must contain natural exact duplicates.
    assert any(n > 1 for n in texts.values())


def test_warc_starts_with_warcinfo_and_every_record_is_a_gzip_member() -> None:
    recs = records(WARC)
    assert recs[0][0].record_type == WarcRecordType.warcinfo
    assert gzip_members(WARC.read_bytes()) == len(recs)
    assert all(block_digest_ok(rec, block) for rec, block in recs)


def test_warc_has_html_and_non_html_responses() -> None:
    types = Counter((rec.http_content_type or "").split(";")[0] for rec, _ in responses())
    assert types["text/html"] >= 150
    non_html = {t for t in types if t != "text/html"}
    assert {"image/png", "application/pdf"} <= non_html, types


def test_warc_fetches_have_request_response_and_metadata() -> None:
    by_url: dict[str, list[str]] = {}
    for rec, _ in records(WARC)[1:]:
        by_url.setdefault(rec.headers["WARC-Target-URI"], []).append(rec.headers["WARC-Type"])
    assert by_url and all(kinds == ["request", "response", "metadata"] for kinds in by_url.values())


def test_warc_has_charset_test_pages() -> None:
    meta_only = no_charset = 0
    for rec, body in responses():
        if rec.http_content_type != "text/html" or rec.http_charset or body.isascii():
            continue
        if b'<meta charset="windows-1252">' in body:
            body.decode("windows-1252")
            with pytest.raises(UnicodeDecodeError):
                body.decode("utf-8")
            meta_only += 1
        elif b"charset" not in body.lower():
            body.decode("utf-8")
            no_charset += 1
    assert meta_only == 1 and no_charset == 1


def test_wet_has_conversion_records_referring_to_responses() -> None:
    response_ids = {rec.record_id for rec, _ in responses()}
    recs = records(WET)
    assert recs[0][0].record_type == WarcRecordType.warcinfo
    conversions = recs[1:]
    assert len(conversions) >= 50
    for rec, block in conversions:
        assert rec.record_type == WarcRecordType.conversion
        assert rec.headers["Content-Type"] == "text/plain"
        assert rec.headers["WARC-Refers-To"] in response_ids
        assert block.decode("utf-8").strip()
        assert block_digest_ok(rec, block)


def build_into(out: Path, **env: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)],
        check=True,
        capture_output=True,
        env={**os.environ, **env},
    )
    return time.perf_counter() - started


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_rebuild_is_byte_identical(tmp_path: Path) -> None:
    # Two builds are compared with each other, not with the committed files: those came from
    # another machine's Python and packages. Different hash seeds and an extra environment
    # variable must not change a byte (set order, os.environ in pydoc pages).
    first = build_into(tmp_path / "a", PYTHONHASHSEED="1", SELENE_SAMPLE_PROBE="probe-value-6d1f")
    if first > MAX_BUILD_SECONDS:
        pytest.skip(f"build took {first:.0f}s; determinism check skipped on this machine")
    build_into(tmp_path / "b", PYTHONHASHSEED="2")
    a, b = tree(tmp_path / "a"), tree(tmp_path / "b")
    assert sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []
    assert len(pile_shards(tmp_path / "a")) >= 2
