"""Streaming readers: jsonl(.zst/.gz), Pile .json.zst, WARC responses, WET conversions, and (in
`selene.ingest.columnar`) Parquet and Arrow files.

A reader yields one `RawRecord` per input record, in file order: either a document (`text` set) or a
quarantine entry (`reason` set, e.g. ``malformed:json``) whose `detail` names the file and the line,
byte offset or row. Memory is bounded by one record (Parquet: one row group) whatever the file size;
damage (a truncated .zst, a corrupt gzip member, a broken WARC record, an unreadable row group)
becomes a quarantine record and, where the format allows, reading resumes after it.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

import zstandard
from fastwarc.warc import ArchiveIterator, WarcRecordType

from selene.errors import UsageError
from selene.ingest import columnar
from selene.ingest.html import Extractor, charset_of, html_to_text, is_html, looks_binary
from selene.ingest.records import Fields, RawRecord, ReadStats, meta_and_source
from selene.io import fs

CHUNK = 1 << 20

# extension → (format, compression); longest suffix wins
_FORMATS: dict[str, tuple[str, str | None]] = {
    ".jsonl": ("jsonl", None),
    ".jsonl.zst": ("jsonl", "zst"),
    ".jsonl.gz": ("jsonl", "gz"),
    ".json.zst": ("jsonl", "zst"),  # the Pile's own naming
    ".json.gz": ("jsonl", "gz"),
    ".warc": ("warc", None),
    ".warc.gz": ("warc", "gz"),
    ".wet": ("wet", None),
    ".wet.gz": ("wet", "gz"),
    ".warc.wet.gz": ("wet", "gz"),
    ".parquet": ("parquet", None),
    ".arrow": ("arrow", None),  # Arrow IPC, as `datasets` writes it (directories: `columnar.expand_source`)
}


def detect_format(path: str) -> tuple[str, str | None]:
    name = path.rsplit("/", 1)[-1].lower()
    for ext in sorted(_FORMATS, key=len, reverse=True):
        if name.endswith(ext):
            return _FORMATS[ext]
    if name in columnar.DATASET_FILES:
        raise UsageError(
            f"{path}: part of a `datasets` directory saved with save_to_disk: name the directory "
            "itself as the source (a DatasetDict: the directory of one split)"
        )
    raise UsageError(
        f"{path}: unknown input format. Accepted extensions: {', '.join(sorted(_FORMATS))}, "
        "or a `datasets` directory saved with save_to_disk"
    )


def read_records(
    path: str,
    max_record_bytes: int,
    stats: ReadStats,
    extractor: Extractor = "selene",
    fields: Fields = Fields(),
) -> Iterator[RawRecord]:
    kind, comp = detect_format(path)
    if kind == "jsonl":
        return read_jsonl(path, comp, max_record_bytes, stats, fields)
    if kind == "parquet":
        return columnar.read_parquet(path, max_record_bytes, fields)
    if kind == "arrow":
        return columnar.read_arrow(path, max_record_bytes, fields)
    return read_warc(path, kind, max_record_bytes, stats, extractor)


# ------------------------------------------------------------------------------ decompression


class StreamDamage(Exception):
    """The compressed stream is cut off or corrupt at `offset` (a byte offset in the file)."""

    def __init__(self, what: str, offset: int, message: str) -> None:
        super().__init__(message)
        self.what, self.offset = what, offset


def decompressed_chunks(f: IO[bytes], comp: str | None) -> Iterator[bytes]:
    """Decompress `f` chunk by chunk; raise StreamDamage on a truncated or corrupt stream.

    zstandard's and gzip's streaming readers end silently at a cut-off frame; feeding a
    decompression object ourselves lets us see that the last frame never finished.
    """
    if comp is None:
        while chunk := f.read(CHUNK):
            yield chunk
        return
    offset = 0  # compressed offset of the start of `data`
    new: Callable[[], Any] = (
        (lambda: zstandard.ZstdDecompressor().decompressobj())
        if comp == "zst"
        else (lambda: zlib.decompressobj(wbits=zlib.MAX_WBITS | 16))
    )
    d = new()
    in_frame = False  # inside a frame/member that has not finished yet
    while raw := f.read(CHUNK):
        data = raw
        while data:
            try:
                out = d.decompress(data)
            except (zstandard.ZstdError, zlib.error) as e:
                raise StreamDamage("corrupt", offset, f"corrupt {comp} data near byte {offset}: {e}") from None
            in_frame = True
            if out:
                yield out
            if d.eof:  # frame/member complete: what is left of `data` starts the next one
                rest = d.unused_data
                offset += len(data) - len(rest)
                data = rest
                d, in_frame = new(), False
            else:
                offset += len(data)
                data = b""
    if in_frame:
        raise StreamDamage("truncated", offset, f"{comp} stream cut off at byte {offset} (last frame incomplete)")


# ------------------------------------------------------------------------------------- jsonl


def _lines(chunks: Iterator[bytes], max_bytes: int) -> Iterator[tuple[int, int, bytes | None, StreamDamage | None]]:
    """(line number, byte offset, line or None when longer than max_bytes, damage) of each line.

    Long lines are assembled from a list of pieces (no quadratic re-concatenation); past max_bytes
    the pieces are dropped and only the length is counted, so memory stays bounded.
    """
    pieces: list[bytes] = []
    pending = 0  # bytes of the current, unfinished line
    lineno, offset = 0, 0
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            break
        except StreamDamage as damage:
            if pending:
                lineno += 1
                yield lineno, offset, None, damage
            else:
                yield lineno + 1, offset, None, damage
            return
        start = 0
        while (nl := chunk.find(b"\n", start)) != -1:
            seg = chunk[start:nl]
            lineno += 1
            total = pending + len(seg)
            if total > max_bytes:
                yield lineno, offset, None, None
            else:
                yield lineno, offset, (b"".join([*pieces, seg]) if pieces else seg), None
            offset += total + 1
            pieces, pending = [], 0
            start = nl + 1
        tail = chunk[start:]
        if tail:
            pending += len(tail)
            if pending <= max_bytes:
                pieces.append(tail)
            else:
                pieces = []
    if pending:
        lineno += 1
        yield lineno, offset, (b"".join(pieces) if pending <= max_bytes else None), None


def read_jsonl(
    path: str, comp: str | None, max_record_bytes: int, stats: ReadStats, fields: Fields = Fields()
) -> Iterator[RawRecord]:
    f, p = fs.get_fs(path)
    with f.open(p, "rb") as fh:
        for lineno, off, line, damage in _lines(decompressed_chunks(fh, comp), max_record_bytes):
            where = f"{path}: line {lineno} (byte {off} of the decompressed stream)"
            if damage is not None:
                yield RawRecord(lineno, reason=f"malformed:{damage.what}", detail=f"{where}: {damage}")
                return
            if line is None:
                yield RawRecord(
                    lineno, reason="malformed:too_large", detail=f"{where}: longer than max_record_bytes={max_record_bytes}"
                )
                continue
            if not line.strip():
                stats.blank_lines += 1
                continue
            yield _parse_json_line(line, lineno, where, fields)


def _parse_json_line(line: bytes, lineno: int, where: str, fields: Fields) -> RawRecord:
    try:
        s = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return RawRecord(lineno, reason="malformed:utf8", detail=f"{where}: invalid UTF-8 at byte {e.start} of the line")
    try:
        obj = json.loads(s)
    except ValueError as e:
        return RawRecord(lineno, reason="malformed:json", detail=f"{where}: {e}")
    if not isinstance(obj, dict):
        return RawRecord(lineno, reason="malformed:json", detail=f"{where}: a JSON {type(obj).__name__}, not an object")
    text = obj.get(fields.text)
    if text is None:
        return RawRecord(
            lineno,
            reason="malformed:no_text",
            detail=f"{where}: no {fields.text!r} field (keys: {', '.join(list(obj)[:8])})",
        )
    if not isinstance(text, str):
        return RawRecord(
            lineno,
            reason="malformed:text_type",
            detail=f"{where}: {fields.text!r} is a {type(text).__name__}, not a string",
        )
    doc_id = None
    if fields.id is not None:
        raw_id = obj.get(fields.id)
        if raw_id is None:
            return RawRecord(
                lineno,
                reason="malformed:no_id",
                detail=f"{where}: no {fields.id!r} field (the source's id_key)",
            )
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            return RawRecord(
                lineno, reason="malformed:id_type",
                detail=f"{where}: {fields.id!r} is a {type(raw_id).__name__}, not a string or an integer",
            )  # fmt: skip
        doc_id = str(raw_id)
    if fields.meta is None:
        selected = {k: v for k, v in obj.items() if k != fields.text and k != fields.id}
    else:
        selected = {k: obj[k] for k in fields.meta if k in obj}
    meta, source = meta_and_source(selected)
    return RawRecord(lineno, text=text, meta=meta, source=source, id=doc_id)


# -------------------------------------------------------------------------------------- WARC


_DOC_TYPE = {"warc": WarcRecordType.response, "wet": WarcRecordType.conversion}


def read_warc(
    path: str, kind: str, max_record_bytes: int, stats: ReadStats, extractor: Extractor = "selene"
) -> Iterator[RawRecord]:
    """Documents of a WARC (HTML `response` records) or a WET (`conversion` records).

    fastwarc stops silently at a cut-off record (sometimes after yielding its partial headers) and
    raises on a corrupt gzip member; both become quarantine records. The last record is held back
    until the end of the file is checked, so a cut-off record is never passed on as a document;
    after corruption, reading resumes at the next intact member.
    """
    held: tuple[int, RawRecord] | None = None
    for pos, rec in _warc_records(path, kind, max_record_bytes, stats, extractor):
        if pos < 0:  # end of the file reached: `rec` is the check of the data after `last_start`
            if rec.reason and held is not None and held[0] == rec.meta.get("damaged_at"):
                rec.index = held[1].index
                held = None
            if held is not None:
                yield held[1]
                held = None
            if rec.reason:
                yield rec
            continue
        if held is not None:
            yield held[1]
        held = (pos, rec)
    if held is not None:
        yield held[1]


def _warc_records(
    path: str, kind: str, max_record_bytes: int, stats: ReadStats, extractor: Extractor
) -> Iterator[tuple[int, RawRecord]]:
    _, comp = detect_format(path)
    doc_type = _DOC_TYPE[kind]
    index = 0
    start = 0  # byte offset to (re)start the iterator at
    failed: set[int] = set()
    f, p = fs.get_fs(path)
    total = int(f.size(p))
    while start < total:
        last_pos = None
        with f.open(p, "rb") as fh:
            fh.seek(start)
            try:
                for rec in ArchiveIterator(fh, parse_http=False):
                    last_pos = start + rec.stream_pos
                    rtype = rec.record_type
                    if rtype != doc_type:
                        name = rtype.name if hasattr(rtype, "name") else str(rtype)
                        stats.other_records[name] = stats.other_records.get(name, 0) + 1
                        continue
                    index += 1
                    yield last_pos, _warc_doc(rec, kind, index, path, last_pos, max_record_bytes, extractor)
            except OSError as e:
                bad = last_pos if last_pos is not None else start
                failed.add(bad)
                resume = _next_member(f, p, comp, max(bad, start), total, failed)
                index += 1
                end = f"byte {resume}" if resume is not None else "the end of the file"
                yield bad, RawRecord(
                    index,
                    reason="malformed:warc",
                    detail=f"{path}: unreadable WARC data after byte {bad} up to {end} ({e}); reading resumed after it",
                )
                if resume is None:
                    return
                start = resume
                continue
        last = last_pos if last_pos is not None else start
        damage = _tail_damage(f, p, comp, last, total)
        if damage is None:
            yield -1, RawRecord(index + 1)
        else:
            at, msg = damage
            yield -1, RawRecord(index + 1, meta={"damaged_at": at}, reason="malformed:truncated", detail=f"{path}: {msg}")
        return


def _warc_doc(
    rec: Any, kind: str, index: int, path: str, pos: int, max_bytes: int, extractor: Extractor
) -> RawRecord:
    url = rec.headers.get("WARC-Target-URI") or ""
    meta: dict[str, Any] = {
        "url": url,
        "warc_record_id": rec.headers.get("WARC-Record-ID") or "",
        "warc_date": rec.headers.get("WARC-Date") or "",
    }
    where = f"{path}: record at byte {pos} ({url or 'no URL'})"
    if rec.content_length > max_bytes:
        return RawRecord(index, meta=meta, reason="malformed:too_large", detail=f"{where}: {rec.content_length} bytes")
    if kind == "wet":
        body = rec.reader.read()
        text = body.decode("utf-8", errors="replace")
        return RawRecord(index, text=text, meta=meta)
    rec.parse_http()
    status = rec.http_headers.status_code if rec.http_headers is not None else 0
    ctype = rec.http_headers.get("Content-Type") if rec.http_headers is not None else None
    if status and not 200 <= status < 300:
        return RawRecord(index, meta=meta, reason="skip:http_status", detail=f"{where}: HTTP {status}")
    body = rec.reader.read()
    if not is_html(ctype, body):
        return RawRecord(index, meta=meta, reason="skip:content_type", detail=f"{where}: {ctype or 'no Content-Type'}")
    if not body.strip():
        return RawRecord(index, meta=meta, reason="skip:empty_body", detail=f"{where}: HTTP {status or '?'} with no body")
    if looks_binary(body):
        return RawRecord(
            index, meta=meta, reason="skip:binary",
            detail=f"{where}: declared {ctype or 'HTML'} but the body is binary (NUL or control bytes)",
        )  # fmt: skip
    try:
        text, charset = html_to_text(body, charset_of(ctype), extractor)
    except Exception as e:  # resiliparse raises its own parser exceptions on hopeless markup
        return RawRecord(index, meta=meta, reason="malformed:html", detail=f"{where}: {e}")
    meta["charset"] = charset
    if not text.strip():
        return RawRecord(
            index, meta=meta, reason="skip:no_main_text",
            detail=f"{where}: the {extractor} extractor found no main text ({len(body)} bytes of HTML)",
        )  # fmt: skip
    return RawRecord(index, text=text, meta=meta)


def _next_member(f: Any, p: str, comp: str | None, after: int, total: int, failed: set[int]) -> int | None:
    """Offset of the next intact record after `after`: a gzip member that decompresses to a WARC
    header, or (uncompressed) a line starting with ``WARC/1.``. None when there is none."""
    magic = b"\x1f\x8b\x08" if comp == "gz" else b"WARC/1."
    pos = after + 1
    with f.open(p, "rb") as fh:
        while pos < total:
            fh.seek(pos)
            window = fh.read(CHUNK + len(magic))
            if not window:
                return None
            hit = window.find(magic)
            if hit == -1:
                pos += CHUNK
                continue
            cand = pos + hit
            if cand not in failed and (comp != "gz" or _member_ok(fh, cand)):
                return cand
            pos = cand + 1
    return None


def _member_ok(fh: IO[bytes], at: int) -> bool:
    fh.seek(at)
    d = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
    head = b""
    try:
        while not d.eof:
            raw = fh.read(CHUNK)
            if not raw:
                return False
            out = d.decompress(raw)
            if len(head) < 8:
                head += out[:8]
    except zlib.error:
        return False
    return head.startswith(b"WARC/")


def _tail_damage(f: Any, p: str, comp: str | None, last: int, total: int) -> tuple[int, str] | None:
    """fastwarc ends quietly at a cut-off record: check that what follows the start of the last
    record read is exactly one complete record."""
    with f.open(p, "rb") as fh:
        if comp == "gz":
            return _gz_tail_damage(fh, last, total)
        fh.seek(last)
        data = fh.read(min(total - last, 1 << 16))
        head, sep, _ = data.partition(b"\r\n\r\n")
        if not sep:
            return (last, f"record at byte {last} has no complete header block") if data.strip() else None
        length = 0
        for line in head.split(b"\r\n"):
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length" and v.strip().isdigit():
                length = int(v.strip())
        if last + len(head) + 4 + length > total:
            return last, f"record at byte {last} is cut off at the end of the file (byte {total})"
    return None


def _gz_tail_damage(fh: IO[bytes], last: int, total: int) -> tuple[int, str] | None:
    pos, members = last, 0
    while pos < total:
        fh.seek(pos)
        d = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        consumed = 0
        try:
            while not d.eof:
                raw = fh.read(CHUNK)
                if not raw:
                    return pos, f"record at byte {pos} is cut off at the end of the file (byte {total})"
                d.decompress(raw)
                consumed += len(raw)
        except zlib.error as e:
            return pos, f"corrupt gzip member at byte {pos}: {e}"
        members += 1
        pos += consumed - len(d.unused_data)
    if members > 1:
        return last + 1, f"{members - 1} gzip member(s) after byte {last} were not readable as WARC records"
    return None
