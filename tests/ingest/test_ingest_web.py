"""Web ingest per extractor: a WARC of generated pages through the ingest stage, in process."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from selene.ingest import stage
from selene.ingest.config import IngestConfig, SourceSpec
from selene.io import dataset
from tests.corpus import warc_bytes
from tests.web_pages import COMMENT_SENTENCES, Page, pages


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Page], list[str], Path]:
    """One page of each kind (index 0: news-000 has a comment section longer than its article),
    as a gzip WARC with request and response records; the pages, their record ids and the file."""
    docs = pages(1, 0)
    data, _ = warc_bytes([(p.url, f"text/html; charset={p.charset}", p.body()) for p in docs])
    path = tmp_path_factory.mktemp("web") / "crawl.warc.gz"
    path.write_bytes(data)
    ids = [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(io.BytesIO(data)) if r.rec_type == "response"]
    assert len(ids) == len(docs)
    return docs, ids, path


def ingest(path: Path, out: Path, extractor: str, **kw: object) -> list[dict]:
    """Kept documents of the ingest of `path` with `extractor` (default filters, no language id),
    after checking that every page is either kept or removed with a reason."""
    cfg = IngestConfig(sources=[SourceSpec(name="web", glob=str(path))], extractor=extractor, **kw)  # type: ignore[arg-type]
    cfg.langid.enabled = False  # the model's load is the slow part, and the pages are English
    res = stage.run_ingest(str(out), cfg)
    kept = list(dataset.iter_documents(res.out))
    removed = dataset.read_removed(res.out).to_pylist()
    m = res.manifest.stats
    assert m.documents_in == len(kept) + len(removed) == 8  # every page is accounted for
    assert m.documents_out == len(kept)
    assert {d["id"] for d in kept} | {r["id"] for r in removed} == {f"web/crawl.warc.gz#{i}" for i in range(1, 9)}
    return kept


@pytest.mark.parametrize("extractor", ["selene", "resiliparse"])
def test_pages_are_accounted_for_and_carry_url_and_record_id(
    web: tuple[list[Page], list[str], Path], tmp_path: Path, extractor: str
) -> None:
    docs, ids, path = web
    kept = ingest(path, tmp_path / extractor, extractor)
    assert kept
    for d in kept:
        i = int(d["id"].rsplit("#", 1)[1]) - 1  # the i-th response record is the i-th page
        meta = json.loads(d["meta"])
        assert meta["url"] == docs[i].url
        assert meta["warc_record_id"] == ids[i]
        assert meta["charset"] == docs[i].charset


def test_selene_drops_the_comment_section_that_resiliparse_keeps(web: tuple[list[Page], list[str], Path], tmp_path: Path) -> None:
    docs, _, path = web
    news = next(i for i, p in enumerate(docs) if p.name == "news-000")
    assert "Reply</a>" in docs[news].html  # the page has its comment section
    text = {}
    # only empty pages dropped: resiliparse's text of news-000, comments and all, fails gopher_repetition
    only_empty = {"filters": [{"name": "length", "min_words": 1, "min_chars": 1}]}
    for extractor in ("selene", "resiliparse"):
        kept = {d["id"]: d["text"] for d in ingest(path, tmp_path / extractor, extractor, **only_empty)}
        text[extractor] = kept[f"web/crawl.warc.gz#{news + 1}"]
    comments = [s for s in COMMENT_SENTENCES if s in docs[news].html]
    assert comments
    assert not [s for s in comments if s in text["selene"]]
    assert len([s for s in comments if s in text["resiliparse"]]) >= len(comments) // 2
    truth = docs[news].truth.split("\n\n")[0][:60]  # both keep the article itself
    assert truth in text["selene"] and truth in text["resiliparse"]
