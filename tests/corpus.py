"""Builders of small input files for the tests: Pile jsonl(.zst), WARC and WET, intact or damaged."""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

# Real prose (the Python language reference, via pydoc_data), so the Gopher rules see real text.
from pydoc_data.topics import topics
from typing import TYPE_CHECKING

import zstandard
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

if TYPE_CHECKING:
    from selene.ingest.manifest import IngestManifest
    from selene.io.dataset import WrittenFile

PROSE = [t for t in (topics[k] for k in sorted(topics)) if len(t.split()) > 120]


def pile_line(text: str, source: str, **extra: object) -> bytes:
    return json.dumps({"text": text, "meta": {"pile_set_name": source, **extra}}).encode() + b"\n"


def write_zst(path: Path, data: bytes) -> Path:
    path.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    return path


def write_gz(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0))
    return path


def html_page(title: str, body: str) -> str:
    nav = "".join(f'<li><a href="/p{i}.html">Section {i}</a></li>' for i in range(12))
    paras = "".join(f"<p>{p}</p>" for p in body.split("\n\n") if p.strip())
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f'<header><nav><ul>{nav}</ul></nav></header><div class="sidebar"><ul>{nav}</ul></div>'
        f"<main><article><h1>{title}</h1>{paras}</article></main>"
        "<footer>Copyright 2024 Example Docs. All rights reserved. Privacy | Terms | Contact</footer>"
        "</body></html>"
    )


def warc_bytes(pages: list[tuple[str, str, bytes]], *, gz: bool = True) -> tuple[bytes, list[int]]:
    """A WARC with a warcinfo record and, per page (url, content type, body), a request and a
    response record. Returns the bytes and the offset of every response record."""
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=gz)
    w.write_record(w.create_warcinfo_record("test.warc.gz", {"software": "selene-tests"}))
    offsets = []
    for url, ctype, body in pages:
        req = StatusAndHeaders("GET / HTTP/1.1", [("Host", "example.org")], is_http_request=True)
        w.write_record(w.create_warc_record(url, "request", http_headers=req))
        offsets.append(buf.tell())
        hh = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=hh))
    return buf.getvalue(), offsets


def wet_bytes(docs: list[tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=True)
    w.write_record(w.create_warcinfo_record("test.warc.wet.gz", {"software": "selene-tests"}))
    for url, text in docs:
        rec = w.create_warc_record(
            url, "conversion", payload=io.BytesIO(text.encode()), warc_content_type="text/plain"
        )
        w.write_record(rec)
    return buf.getvalue()


def write_dataset(
    directory: str, docs: Sequence[tuple[str, ...]], shard_docs: int = 100, source: str = "s"
) -> str:
    """A finished document dataset (shards + empty removed.parquet + manifest) of (id, text) pairs, or
    of (id, text, source, meta JSON) tuples."""
    import pyarrow as pa

    from selene.io import dataset

    rows = [(d[0], d[1], source, "{}") if len(d) == 2 else d for d in docs]
    shards = []
    for k in range(0, max(len(rows), 1), shard_docs):
        part = rows[k : k + shard_docs]
        table = pa.table(
            {name: [d[i] for d in part] for i, name in enumerate(["id", "text", "source", "meta"])},
            schema=dataset.DOC_SCHEMA,
        )
        shards.append(dataset.write_table(f"{directory}/{dataset.shard_name(len(shards))}", table))
    removed = dataset.write_table(f"{directory}/{dataset.REMOVED}", dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(directory, document_manifest(shards, removed, Counter(d[2] for d in rows)))
    return directory


def document_manifest(
    shards: list[WrittenFile], removed: WrittenFile, sources: Mapping[str, int]
) -> IngestManifest:
    """A valid manifest for a document dataset written by hand: an ingest manifest without inputs,
    every document kept (`sources`: documents per source)."""
    from selene import __version__
    from selene.ingest.manifest import IngestManifest, IngestStats
    from selene.manifest import SourceStats

    n = sum(s.rows for s in shards)
    return IngestManifest(
        selene_version=__version__,
        fingerprint="test",
        config={},
        inputs=[],
        shards=[s.entry() for s in shards],
        removed=removed.entry(),
        stats=IngestStats(
            documents_in=n,
            documents_out=n,
            documents_removed=removed.rows,
            per_source={
                s: SourceStats(documents_in=k, kept=k, removed={}) for s, k in sorted(sources.items())
            },
            files=[],
        ),
    )
