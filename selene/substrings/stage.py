"""The substrings stage: every repeat of a substring of at least `min_length` units cut from all but
its first occurrence in the corpus (Lee et al. 2022), as external-memory steps over files.

1. encode, per shard (earlier outputs' first): each document's units, SEP after each (`layout`).
2. part, per part (consecutive documents sized by the task memory budget): suffix array, LCP and
   longest previous factor: the windows repeating an earlier window of the part, and the sorted
   fingerprints of the others (`suffix`).
3. match, per fingerprint bucket: the first occurrences of a part that repeat an earlier part's
   window, verified on the bytes (`matches`).
4. cut, per part: the union of the repeated windows as unit ranges per document, and the spans'
   fingerprints; repeats, per bucket of those: the most repeated spans (`cuts`).
5. edit, per input shard: the ranges mapped to characters and cut out (`selene.io.edits`).

Corpus order is shards in order, rows in order; a window is a duplicate when the same units occur at
an earlier position. The result does not depend on the parts or buckets, hence on neither the budget
nor the workers: step 2 finds every repeat inside a part, step 3 every first occurrence of a part
that an earlier part holds, and a fingerprint only proposes what the bytes confirm. Work files live
under ``OUT/_work/<fingerprint>/``, the budget-dependent ones in a ``layout-<digest>`` folder below it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from selene.errors import ConfigError, InternalError
from selene.executor.mappers import Mapper, serial_map
from selene.faults import failpoint
from selene.io import dataset, edits, fingerprints, fs, steps
from selene.io.results import StageResult
from selene.manifest import DatasetInputs, DocumentManifest, Repeat
from selene.substrings import cuts, matches, suffix
from selene.substrings.against import Prior, load_priors
from selene.substrings.config import SubstringsConfig
from selene.substrings.layout import Layout, enc_path, part_capacity, plan_parts
from selene.substrings.manifest import SubstringsInputs, SubstringsManifest, SuffixWork
from selene.substrings.units import SEP, Units

ALGORITHM = 1  # in the fingerprint: outputs and work files of another rule are never taken as done
BUCKET_BYTES = 96  # a match task's bytes per entry at its peak: keys, positions, parts, the sort's order and sorted keys, the groups' bounds
MAX_BUCKET_BITS = 12
TOO_SHORT = "substrings:too_short"

SubstringsResult = StageResult[SubstringsManifest]


class Encoded(steps.StepResult):
    rows: int
    bytes: int


class PartDone(steps.StepResult):
    entries: int
    windows: int


class Counted(steps.StepResult):
    n: int


class PartCut(steps.StepResult):
    windows: int
    ranges: int


class Top(steps.StepResult):
    repeats: list[cuts.Ranked]


def input_dataset(inp: str) -> DocumentManifest:
    return dataset.require_documents(inp, "deduplicate substrings of")


def require_length(cfg: SubstringsConfig) -> int:
    if cfg.min_length is None:
        raise ConfigError("substrings.min_length: not set; give --min-length N (e.g. 50 tokens, 200 bytes)")
    return cfg.min_length


# ------------------------------------------------------------------------------------ the steps


def encode_shard(root: str, k: int, shard: str, cfg: SubstringsConfig) -> Encoded:
    return steps.resumable(
        steps.marker(root, "encode", k),
        Encoded,
        lambda: _encode(root, k, shard, cfg),
        outputs=[enc_path(root, k), enc_path(root, k, "off")],
    )


def _encode(root: str, k: int, shard: str, cfg: SubstringsConfig) -> Encoded:
    units = Units(cfg)
    sep = bytes([SEP])
    starts = [0]
    with fs.atomic_open(enc_path(root, k), "wb") as f:
        for batch in dataset.iter_row_groups(shard, ["text"]):
            for codes in units.encode(batch.column("text").to_pylist()):
                f.write(codes.tobytes())
                f.write(sep)
                starts.append(starts[-1] + len(codes) + 1)
    fs.save_npy(enc_path(root, k, "off"), np.array(starts, dtype=np.int64))
    return Encoded(rows=len(starts) - 1, bytes=starts[-1])


def part_step(layout: Layout, j: int, pos_bits: int) -> PartDone:
    def run() -> PartDone:
        lo, hi = layout.part_range(j)
        rep, entries, windows = suffix.analyse(
            layout.read(lo, hi), layout.window, layout.width, pos_bits, layout.keep_first
        )
        fs.save_npy(matches.part_file(layout.root, j, "rep"), rep)
        fs.save_npy(matches.part_file(layout.root, j, "idx"), entries)
        return PartDone(entries=len(entries), windows=windows)

    outs = [matches.part_file(layout.root, j, kind) for kind in ("rep", "idx")]
    return steps.resumable(steps.marker(layout.root, "part", j), PartDone, run, outputs=outs)


def match_step(layout: Layout, b: int, bits: int, pos_bits: int) -> Counted:
    return steps.resumable(
        steps.marker(layout.root, "match", b),
        Counted,
        lambda: Counted(n=matches.cross_bucket(layout, b, bits, pos_bits)),
        outputs=[matches.cross_file(layout.root, b)],
    )


def cut_step(layout: Layout, j: int, buckets: int) -> PartCut:
    def run() -> PartCut:
        windows, ranges = cuts.cut_part(layout, j, buckets)
        return PartCut(windows=windows, ranges=ranges)

    outs = [cuts.cut_file(layout.root, j), cuts.cut_file(layout.root, j, "spans")]
    return steps.resumable(steps.marker(layout.root, "cut", j), PartCut, run, outputs=outs)


def top_step(layout: Layout, b: int, bits: int, cfg: SubstringsConfig) -> Top:
    units = Units(cfg)
    return steps.resumable(
        steps.marker(layout.root, "top", b),
        Top,
        lambda: Top(repeats=cuts.top_spans(layout, b, bits, units.decode)),
    )


def edit_step(
    root: str, layout: Layout, k: int, out_k: int, shard: str, out: str, cfg: SubstringsConfig
) -> edits.EditedShard:
    """Input shard `out_k` (shard `k` of the corpus) → OUT/part-`out_k`, its ranges cut."""
    units = Units(cfg)
    ranges = cuts.cuts_of_shard(layout, k)

    def edit(docs: list[dict], first_row: int) -> list[edits.Cut | None]:
        return [_cut(units, d["text"], ranges.get(first_row + i), cfg) for i, d in enumerate(docs)]

    return edits.edit_shard(root, out_k, shard, out, edit)


def _cut(
    units: Units, text: str, ranges: list[tuple[int, int]] | None, cfg: SubstringsConfig
) -> edits.Cut | None:
    if not ranges:
        return None
    bounds = units.boundaries(text)
    if ranges[-1][1] >= len(bounds):
        raise InternalError(
            f"substrings: a cut ends at unit {ranges[-1][1]} of a document of {len(bounds) - 1} units"
        )
    pieces, last, removed = [], 0, 0
    for a, b in ranges:
        ca, cb = int(bounds[a]), int(bounds[b])
        pieces.append(text[last:ca])
        removed += cb - ca
        last = cb
    pieces.append(text[last:])
    left = "".join(pieces)
    chars, words = len(left.strip()), len(left.split())
    if chars < cfg.min_chars or words < cfg.min_words:
        detail = (f"{removed} of {len(text)} chars cut ({len(ranges)} substrings); {chars} chars, {words} words left "
                  f"(min_chars {cfg.min_chars}, min_words {cfg.min_words})")  # fmt: skip
        return edits.Cut(text="", chars=len(text), spans=len(ranges), drop=TOO_SHORT, detail=detail)
    return edits.Cut(text=left, chars=removed, spans=len(ranges))


# ------------------------------------------------------------------------------------ the stage


def preflight(inp: str, out: str, cfg: SubstringsConfig) -> tuple[DocumentManifest, Units, list[Prior]]:
    """Everything that needs no work: the input, min_length, the tokenizer, the earlier outputs."""
    m_in = input_dataset(inp)
    require_length(cfg)
    units = Units(cfg)
    priors = load_priors(cfg, inp, out, units.identity)
    fs.check_writable(out)
    return m_in, units, priors


def bucket_bits(entries: int, task_memory: int) -> int:
    need = max(1, -(-entries * BUCKET_BYTES // max(task_memory, 1)))
    return min(MAX_BUCKET_BITS, (need - 1).bit_length())


def run_substrings(
    inp: str, out: str, cfg: SubstringsConfig, *, mapper: Mapper | None = None, force: bool = False
) -> SubstringsResult:
    mapper = mapper or serial_map
    m_in, units, priors = preflight(inp, out, cfg)
    window = require_length(cfg) * units.width
    cap = part_capacity(mapper.budget.task_memory, window)  # refused before anything is written
    fp = fingerprints.of(
        [s.sha256 for s in m_in.shards],
        fingerprints.settings(cfg, "against"),
        units.identity,
        ALGORITHM,
        [(p.out, p.fingerprint) for p in priors],
    )
    existed = fs.exists(out)
    if (done := dataset.open_output(out, fp, force, SubstringsManifest)) is not None:
        return done
    root = fs.join(out, dataset.WORK, fp)
    prior = [s for p in priors for s in p.shards]
    shards = [*prior, *(fs.join(inp, s.name) for s in m_in.shards)]
    enc = mapper("substrings-encode", encode_shard, [(root, k, p, cfg) for k, p in enumerate(shards)])
    starts = [0, *np.cumsum([e.bytes for e in enc]).tolist()]
    try:
        bounds = plan_parts(root, starts, cap)
    except ConfigError:
        fs.rm(out if not existed else root, recursive=True)  # a refusal leaves nothing behind
        raise
    pos_bits = max(1, max(b - a for a, b in itertools.pairwise(bounds)).bit_length())
    digest = fingerprints.of(bounds, pos_bits)
    layout = Layout(
        root, fs.join(root, f"layout-{digest}"), tuple(starts), tuple(bounds), window, units.width, len(prior),
        keep_first=cfg.keep == "first",
    )  # fmt: skip
    parts = mapper("substrings-part", part_step, [(layout, j, pos_bits) for j in range(layout.parts)])
    bits = bucket_bits(sum(p.entries for p in parts), mapper.budget.task_memory)
    crossed = mapper("substrings-match", match_step, [(layout, b, bits, pos_bits) for b in range(1 << bits)])
    cut = mapper("substrings-cut", cut_step, [(layout, j, 1 << bits) for j in range(layout.parts)])
    tops = mapper("substrings-repeats", top_step, [(layout, b, bits, cfg) for b in range(1 << bits)])
    edited = mapper(
        "substrings-edit",
        edit_step,
        [
            (root, layout, len(prior) + k, k, fs.join(inp, s.name), out, cfg)
            for k, s in enumerate(m_in.shards)
        ],
    )
    failpoint("substrings:shards-written")
    repeats = cuts.most_repeated(t.repeats for t in tops)
    fs.atomic_write(
        fs.join(out, "repeats.md"), edits.repeats_markdown(repeats, "Most repeated substrings cut")
    )
    work = SuffixWork(
        corpus_bytes=starts[-1],
        windows=sum(p.windows for p in parts),
        repeated_windows=sum(c.windows for c in cut),
    )
    result = finalize(out, inp, m_in, root, edited, repeats, work, priors, units, cfg, fp)
    # how the budget cut the work: told, not recorded (the manifest is the same whatever the budget)
    result.info.update(parts=layout.parts, buckets=1 << bits, cross_part=sum(c.n for c in crossed))
    return result


def finalize(
    out: str, inp: str, m_in: DocumentManifest, root: str, edited: Sequence[edits.EditedShard],
    repeats: list[Repeat], work: SuffixWork, priors: Sequence[Prior], units: Units, cfg: SubstringsConfig, fp: str,
) -> SubstringsResult:  # fmt: skip
    def manifest(summary: edits.EditSummary, removed: dataset.WrittenFile) -> SubstringsManifest:
        return SubstringsManifest(
            **steps.header(fp, cfg, summary.shards, removed.entry()),
            inputs=SubstringsInputs(
                dataset=inp,
                fingerprint=m_in.fingerprint,
                against=[DatasetInputs(dataset=p.out, fingerprint=p.fingerprint) for p in priors] or None,
                tokenizer=units.identity,
            ),
            work=work,
            repeats=repeats,
            stats=summary.stats,
        )

    return edits.finish_edits(out, "substrings", m_in, root, edited, manifest)
