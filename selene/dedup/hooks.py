"""The dedup stage's checks before it runs and its dashboard artifacts (see `selene.registry`)."""

from __future__ import annotations

from selene.artifacts import Artifact, Markdown, Table, svg_image
from selene.dedup.config import DedupConfig
from selene.dedup.keep import check_priority, check_score_key
from selene.dedup.manifest import DedupManifest
from selene.dedup.stage import input_dataset
from selene.io import fs
from selene.io.dataset import StageResult


def check(inp: str, out: str, cfg: DedupConfig) -> None:
    """Before the command claims its output: the refusals that need only the input (the writability
    probe creates the output directory, which a refusal after it would leave behind)."""
    m_in = input_dataset(inp)
    if cfg.strict:  # only the error: the warning comes once, from the stage
        check_priority(m_in, cfg)
    check_score_key(inp, m_in, cfg)
    fs.check_writable(out)


def artifacts(result: StageResult[DedupManifest], cfg: DedupConfig) -> list[Artifact]:
    m = result.manifest
    if not m:
        return []
    rows = [
        {"source": s, "in": v.documents_in, "kept": v.kept, "duplicates": v.removed.get("near_dup", 0)}
        for s, v in m.stats.per_source.items()
    ]
    plot = fs.join(result.out, "s_curve.svg")
    curve = svg_image(fs.read_bytes(plot), "S-curve") if fs.exists(plot) else ""
    shape = m.lsh
    sets = f" × {shape.band_sets} band sets" if shape.band_sets > 1 else ""
    formula = (
        f"P(candidate | J) = 1 − (1 − J^{shape.rows})^{shape.bands}"
        if shape.band_sets == 1
        else f"P(candidate | J = {cfg.threshold}) = {shape.p_at_threshold:.4f} (simulated: the sets share values)"
    )
    out: list[Artifact] = [
        Table("dedup-stats", rows, f"Near-duplicates removed in `{result.out}` (threshold {cfg.threshold})"),
        Markdown(
            "dedup-s-curve",
            f"### LSH: {shape.bands} bands × {shape.rows} rows{sets}, threshold {cfg.threshold}\n\n"
            f"{formula}\n\n{curve}\n",
        ),
    ]
    clusters = fs.join(result.out, "clusters.md")
    if fs.exists(clusters):
        out.append(Markdown("dedup-clusters", fs.read_text(clusters)))
    return out
