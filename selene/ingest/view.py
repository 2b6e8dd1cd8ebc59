"""What the ingest stage shows (`selene.view`): the documents table; on the dashboard, documents per
source and every reason a document left."""

from __future__ import annotations

from selene.ingest.manifest import IngestManifest
from selene.io.results import StageResult
from selene.view import PREFECT, Column, Markdown, Table, View, columns, documents, markdown_table


def view(result: StageResult[IngestManifest]) -> View:
    m = result.manifest
    if m is None:
        return View()
    per_source = [(src, st.documents_in, st.kept, sum(st.removed.values())) for src, st in m.stats.per_source.items()]
    reasons = [
        row
        for src, st in m.stats.per_source.items()
        for row in [(src, "kept", st.kept), *((src, r, n) for r, n in st.removed.items())]
    ]
    reason_table = Table((Column("source", right=False), Column("reason", right=False), Column("documents")), reasons)
    return View(blocks=(
        *documents(result),
        Table(columns("source", "in", "kept", "removed"), per_source, key="ingest-stats", to=PREFECT,
              description=f"Documents per source in `{result.out}`" + (" (reused)" if result.skipped else "")),
        Markdown("### Ingest: every input document, kept or removed with its reason\n\n"
                 + "\n".join(markdown_table(reason_table)), key="ingest-reasons", to=PREFECT),
    ))  # fmt: skip
