"""Readers: every record becomes a document or a quarantine record naming file and line/offset."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from selene.errors import UsageError
from selene.ingest.readers import ReadStats, detect_format, read_records
from tests.corpus import PROSE, html_page, pile_line, warc_bytes, wet_bytes, write_gz, write_zst

MAX = 1 << 20


def read(path: Path, max_bytes: int = MAX) -> tuple[list, ReadStats]:
    st = ReadStats()
    return list(read_records(str(path), max_bytes, st)), st


def test_detect_format() -> None:
    assert detect_format("a/b.jsonl.zst") == ("jsonl", "zst")
    assert detect_format("00.json.zst") == ("jsonl", "zst")
    assert detect_format("x.warc.gz") == ("warc", "gz")
    assert detect_format("CC.warc.wet.gz") == ("wet", "gz")
    assert detect_format("train-00000-of-00042.parquet") == ("parquet", None)
    assert detect_format("data-00000-of-00001.arrow") == ("arrow", None)
    with pytest.raises(UsageError, match=r"unknown input format.*\.jsonl\.zst"):
        detect_format("x.csv")
    with pytest.raises(UsageError, match=r"save_to_disk: name the directory"):
        detect_format("ds/state.json")


def test_pile_zst_source_and_meta(tmp_path: Path) -> None:
    data = pile_line("hello world", "ArXiv") + b"\n" + json.dumps({"text": "x", "id": 7}).encode() + b"\n"
    recs, st = read(write_zst(tmp_path / "a.jsonl.zst", data))
    assert [(r.index, r.source, r.reason) for r in recs] == [(1, "ArXiv", None), (3, None, None)]
    assert recs[1].meta == {"id": 7}
    assert st.blank_lines == 1


def test_truncated_zst_keeps_complete_lines_and_quarantines_the_rest(tmp_path: Path) -> None:
    lines = b"".join(pile_line(f"{PROSE[i % len(PROSE)]} {i}", "S") for i in range(400))
    full = write_zst(tmp_path / "full.jsonl.zst", lines).read_bytes()
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(full[: len(full) // 2])
    recs, _ = read(cut)
    good = [r for r in recs if r.reason is None]
    bad = [r for r in recs if r.reason]
    assert 0 < len(good) < 400
    assert len(bad) == 1 and bad[0].reason == "malformed:truncated"
    assert str(cut) in bad[0].detail and f"line {len(good) + 1}" in bad[0].detail
    assert bad[0].index == len(good) + 1


def test_invalid_json_no_text_and_wrong_types(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(
        b'{"text": "fine"}\n{"text": "unterminated\n{"meta": {}}\n[1, 2]\n{"text": 42}\n{"text": "also fine"}\n'
    )
    recs, _ = read(p)
    got = [(r.index, r.reason) for r in recs]
    assert got == [
        (1, None),
        (2, "malformed:json"),
        (3, "malformed:no_text"),
        (4, "malformed:json"),
        (5, "malformed:text_type"),
        (6, None),
    ]
    assert all(f"{p}: line {r.index}" in r.detail for r in recs if r.reason)


def test_non_utf8_bytes_are_quarantined_with_position(tmp_path: Path) -> None:
    p = tmp_path / "latin.jsonl.gz"
    write_gz(p, b'{"text": "caf\xe9 cr\xe8me"}\n{"text": "ok"}\n')
    recs, _ = read(p)
    assert recs[0].reason == "malformed:utf8" and "invalid UTF-8 at byte 13" in recs[0].detail
    assert recs[1].text == "ok"


def test_binary_garbage(tmp_path: Path) -> None:
    rnd = os.urandom(20000)
    p = tmp_path / "garbage.jsonl"
    p.write_bytes(rnd)
    recs, _ = read(p)
    assert recs and all(r.reason in ("malformed:utf8", "malformed:json") for r in recs)
    z = tmp_path / "garbage.jsonl.zst"
    z.write_bytes(rnd)
    recs, _ = read(z)
    assert [r.reason for r in recs] == ["malformed:corrupt"]
    assert "near byte 0" in recs[0].detail and str(z) in recs[0].detail


@pytest.mark.parametrize("name", ["e.jsonl", "e.jsonl.zst", "e.jsonl.gz", "e.warc.gz", "e.warc.wet.gz"])
def test_empty_files_yield_nothing(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    p.write_bytes(b"")
    assert read(p)[0] == []


def test_record_over_the_size_limit_is_quarantined_not_loaded(tmp_path: Path) -> None:
    big = "word " * 300_000  # 1.5 MB
    p = write_zst(tmp_path / "big.jsonl.zst", pile_line(big, "S") + pile_line("small one", "S"))
    recs, _ = read(p, max_bytes=1 << 20)
    assert recs[0].reason == "malformed:too_large" and "max_record_bytes" in recs[0].detail
    assert recs[1].text == "small one"


def test_fifty_megabyte_document_streams(tmp_path: Path) -> None:
    text = ("All work and no play makes Jack a dull boy. " * 1_200_000)[: 50 * 2**20]
    p = write_zst(tmp_path / "huge.jsonl.zst", pile_line(text, "S"))
    recs, _ = read(p, max_bytes=256 * 2**20)
    assert len(recs) == 1 and recs[0].text is not None and len(recs[0].text) == len(text)


def _pages(n: int) -> list[tuple[str, str, bytes]]:
    return [
        (f"https://docs.example.org/p{i}.html", "text/html; charset=utf-8", html_page(f"P{i}", PROSE[i]).encode())
        for i in range(n)
    ]


def test_warc_html_extraction_and_skips(tmp_path: Path) -> None:
    pages = _pages(3)
    pages.insert(1, ("https://docs.example.org/logo.png", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64))
    latin = html_page("Caf\xe9", "Une cr\xe8me br\xfbl\xe9e, s'il vous pla\xeet. " * 20)
    latin = latin.replace("<head>", '<head><meta charset="iso-8859-1">')
    pages.append(("https://docs.example.org/fr.html", "text/html", latin.encode("latin-1")))
    data, _ = warc_bytes(pages)
    p = tmp_path / "x.warc.gz"
    p.write_bytes(data)
    recs, st = read(p)
    assert [r.reason for r in recs] == [None, "skip:content_type", None, None, None]
    assert "image/png" in recs[1].detail and "logo.png" in recs[1].detail
    first = recs[0]
    assert first.meta["url"] == "https://docs.example.org/p0.html"
    assert PROSE[0].split("\n")[0][:40] in first.text
    assert "Section 7" not in first.text and "All rights reserved" not in first.text  # boilerplate gone
    assert "crème brûlée" in recs[4].text
    assert st.other_records == {"request": 5, "warcinfo": 1}


def test_warc_broken_record_is_quarantined_and_reading_resumes(tmp_path: Path) -> None:
    data, offsets = warc_bytes(_pages(5))
    b = bytearray(data)
    mid = (offsets[2] + offsets[3]) // 2  # inside the third response record's gzip member
    for j in range(mid - 10, mid + 10):
        b[j] ^= 0xFF
    p = tmp_path / "broken.warc.gz"
    p.write_bytes(bytes(b))
    recs, _ = read(p)
    docs = [r for r in recs if r.reason is None]
    bad = [r for r in recs if r.reason]
    assert [d.meta["url"][-7:] for d in docs] == ["p0.html", "p1.html", "p3.html", "p4.html"]
    assert len(bad) == 1 and bad[0].reason == "malformed:warc" and str(p) in bad[0].detail


def test_warc_truncated_last_record(tmp_path: Path) -> None:
    data, offsets = warc_bytes(_pages(4))
    p = tmp_path / "cut.warc.gz"
    p.write_bytes(data[: offsets[3] + 100])
    recs, _ = read(p)
    assert [r.reason for r in recs] == [None, None, None, "malformed:truncated"]
    assert f"byte {offsets[3]}" in recs[-1].detail


def test_uncompressed_warc_truncated(tmp_path: Path) -> None:
    data, offsets = warc_bytes(_pages(3), gz=False)
    p = tmp_path / "cut.warc"
    p.write_bytes(data[: offsets[2] + 300])
    recs, _ = read(p)
    assert [r.reason for r in recs] == [None, None, "malformed:truncated"]


def test_wet_conversion_records(tmp_path: Path) -> None:
    p = tmp_path / "x.warc.wet.gz"
    p.write_bytes(wet_bytes([("https://a.example/1", PROSE[0]), ("https://a.example/2", PROSE[1])]))
    recs, st = read(p)
    assert [r.text for r in recs] == [PROSE[0], PROSE[1]]
    assert recs[1].meta["url"] == "https://a.example/2"
    assert st.other_records == {"warcinfo": 1}


def test_broken_web_pages_get_a_reason_not_a_crash(tmp_path: Path) -> None:
    """Binary bodies served as HTML, empty bodies, pages that are all boilerplate, wrong charsets."""
    good = html_page("Fine", PROSE[0]).encode()
    nav_only = b"<html><body><nav><a href='/a'>Home</a> <a href='/b'>About</a></nav></body></html>"
    latin_as_utf8 = html_page("Caf\xe9", "Une cr\xe8me br\xfbl\xe9e, s'il vous pla\xeet. " * 20).encode("latin-1")
    pages = [
        ("https://e.org/pdf", "text/html", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\x00<<>>\x00stream\x00" * 20),
        ("https://e.org/empty", "text/html; charset=utf-8", b"  \n "),
        ("https://e.org/nav", "text/html", nav_only),
        ("https://e.org/latin", "text/html; charset=utf-8", latin_as_utf8),  # declared wrong
        ("https://e.org/ok", "text/html", good),
        ("https://e.org/utf16", "text/html", "\ufeff".encode("utf-16-le") + html_page("W", PROSE[1]).encode("utf-16-le")),
        ("https://e.org/label", "text/html; charset=utf8mb4", html_page("Caf\xe9", PROSE[2]).encode()),  # no such codec
    ]
    data, _ = warc_bytes(pages)
    p = tmp_path / "broken.warc.gz"
    p.write_bytes(data)
    recs, _ = read(p)
    reasons = [r.reason for r in recs]
    assert reasons == ["skip:binary", "skip:empty_body", "skip:no_main_text", None, None, None, None]
    assert "e.org/pdf" in recs[0].detail and "binary" in recs[0].detail
    assert "selene extractor" in recs[2].detail and recs[2].meta["url"] == "https://e.org/nav"
    assert "crème brûlée" in recs[3].text  # bytes that are not UTF-8 fall back to Windows-1252
    assert PROSE[0].split("\n")[0][:40] in recs[4].text
    assert PROSE[1].split("\n")[0][:30] in recs[5].text  # UTF-16 with a BOM is text, not binary
    # an unknown label is passed over: the page's own declaration or the detector decides
    assert PROSE[2].split("\n")[0][:30] in recs[6].text and recs[6].meta["charset"] != "utf8mb4"
