"""What the dedup stage shows (`selene.view`): the documents table; on the dashboard, the duplicates
per source, the LSH S-curve and example clusters."""

from __future__ import annotations

from selene.dedup.config import DedupConfig
from selene.dedup.manifest import DedupManifest
from selene.io import fs
from selene.io.results import StageResult
from selene.view import PREFECT, Block, Markdown, Table, View, columns, documents, svg_image


def view(result: StageResult[DedupManifest]) -> View:
    m = result.manifest
    if m is None:
        return View()
    threshold = DedupConfig.model_validate(m.config).threshold
    rows = [(s, v.documents_in, v.kept, v.removed.get("near_dup", 0)) for s, v in m.stats.per_source.items()]
    plot = fs.join(result.out, "s_curve.svg")
    curve = svg_image(fs.read_bytes(plot), "S-curve") if fs.exists(plot) else ""
    shape = m.lsh
    sets = f" × {shape.band_sets} band sets" if shape.band_sets > 1 else ""
    formula = (
        f"P(candidate | J) = 1 − (1 − J^{shape.rows})^{shape.bands}"
        if shape.band_sets == 1
        else f"P(candidate | J = {threshold}) = {shape.p_at_threshold:.4f} (simulated: the sets share values)"
    )
    blocks: list[Block] = [
        *documents(result),
        Table(columns("source", "in", "kept", "duplicates"), rows, key="dedup-stats", to=PREFECT,
              description=f"Near-duplicates removed in `{result.out}` (threshold {threshold})"),
        Markdown(f"### LSH: {shape.bands} bands × {shape.rows} rows{sets}, threshold {threshold}\n\n{formula}\n\n{curve}\n",
                 key="dedup-s-curve", to=PREFECT),
    ]  # fmt: skip
    clusters = fs.join(result.out, "clusters.md")
    if fs.exists(clusters):
        blocks.append(Markdown(fs.read_text(clusters), key="dedup-clusters", to=PREFECT))
    return View(blocks=blocks)
