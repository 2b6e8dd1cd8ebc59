"""benchmarks/spans.py's parts that run without datatrove: the corpus generator, the replay of
datatrove's span dedup (against a brute-force reference) and the classification of differences."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchmarks import spans_compare as cmp
from benchmarks import spans_corpus


@pytest.fixture(scope="module")
def pool() -> list[str]:
    return spans_corpus.load_pool()


def _corpus(tmp: Path, seed: int, mb: float = 0.3) -> tuple[dict, bytes]:
    summary = spans_corpus.generate(tmp, mb, seed)
    return summary, (tmp / "pages.jsonl").read_bytes()


def test_corpus_is_seeded_sized_and_planted(tmp_path: Path) -> None:
    s1, b1 = _corpus(tmp_path / "a", seed=3)
    s2, b2 = _corpus(tmp_path / "b", seed=3)
    _, b3 = _corpus(tmp_path / "c", seed=4)
    assert b1 == b2 and s1 == s2
    assert b1 != b3
    pages = [json.loads(line) for line in b1.decode().splitlines()]
    assert len(pages) == s1["pages"] and len({p["id"] for p in pages}) == len(pages)
    text = sum(len(p["text"].encode()) for p in pages)
    assert 300_000 <= text < 300_000 + max(len(p["text"].encode()) for p in pages)
    # every kind of boilerplate is planted, at about its rate (110 pages: wide bounds)
    kinds = s1["planted"]
    n = len(pages)
    assert 0.45 * n < kinds["footer"] and 0.15 * n < kinds["cookies"] < 0.55 * n
    assert {"nav", "newsletter", "list", "quote", "licence"} <= set(kinds)
    cookie_pages = [p for p in pages if "cookies" in p["planted"]]
    assert all(any(c in p["text"] for c in spans_corpus.COOKIES) for p in cookie_pages)


def test_copied_passages_come_from_earlier_pages(tmp_path: Path) -> None:
    _, data = _corpus(tmp_path, seed=1, mb=1.5)
    pages = [json.loads(line) for line in data.decode().splitlines()]
    copied = [k for k, p in enumerate(pages) if "copied" in p["planted"]]
    assert copied
    for k in copied[:5]:
        paras = pages[k]["text"].split("\n\n")
        earlier = "\n".join(p["text"] for p in pages[:k])
        # a verbatim copy of >= 4 sentences of an earlier page's body: its first sentence is older
        assert any(len(para) > 200 and para.split(". ")[0] in earlier for para in paras)


def test_pool_keeps_prose_sentences_only(pool: list[str]) -> None:
    assert len(pool) > 5000 and len(set(pool)) == len(pool)
    got = spans_corpus.pool_sentences(
        [
            "The first sentence is plain prose here. The second one is too, isn't it?\n\n"
            ">>> def f(x):\n...     return x\n\n"
            "Call it with f(x) = {1: 2} for the value.\n\n"
            "Too short here. Numbers 12 34 56 78 90 and 11 22 33 44 55 are not prose."
        ]
    )
    assert got == ["The first sentence is plain prose here.", "The second one is too, isn't it?"]


def _brute_force(docs: list[list[str]], n: int) -> list[set[int]]:
    """Sentence i of document d is cut when a span covering it starts at a position whose keys were
    seen at an earlier (document, position)."""
    spans = [[(" ".join(k[i : i + n]), d, i) for i in range(len(k) - n + 1)] for d, k in enumerate(docs)]
    cuts = []
    for d, doc in enumerate(spans):
        cut: set[int] = set()
        for span, _, i in doc:
            if not span.strip():
                continue
            if any(s == span and (e, j) < (d, i) for other in spans for s, e, j in other):
                cut.update(range(i, min(i + n, len(docs[d]))))
        cuts.append(cut)
    return cuts


@pytest.mark.parametrize("seed", range(5))
def test_simulate_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    vocab = ["a", "b", "c", "", "d e"]
    docs = [[rng.choice(vocab) for _ in range(rng.randint(0, 9))] for _ in range(30)]
    splits = [cmp.Split(list(range(1, len(k) + 1)), k) for k in docs]
    got = [r.cut for r in cmp.simulate(splits, 3)]
    assert got == _brute_force(docs, 3)
    assert any(got) and not all(got)


def test_simulate_names_the_first_copy() -> None:
    keys = [["x", "y", "z", "w"], ["q", "x", "y", "z"], ["x", "y", "z", "x", "y", "z"]]
    reps = cmp.simulate([cmp.Split(list(range(1, len(k) + 1)), k) for k in keys], 3)
    assert reps[0].cut == set()
    assert reps[1].cut == {1, 2, 3} and reps[1].sources == {1: (0, 0)}
    # in the third, every span has been seen (the first at document 0, "z x y" at position 2 here)
    assert reps[2].sources[0] == (0, 0) and reps[2].sources[3] == (0, 0)
    assert reps[2].cut == {0, 1, 2, 3, 4, 5}


def test_cut_text_keeps_whitespace_before_kept_sentences() -> None:
    text = "  One. Two.\n\nThree. Four. "
    ends = [6, 11, 19, 25]  # the trailing space is after the last sentence's end
    assert cmp.cut_text(text, ends, {1}) == "One.\n\nThree. Four."
    assert cmp.cut_text(text, ends, {0}) == "Two.\n\nThree. Four."
    assert cmp.cut_text(text, ends, {0, 1, 2, 3}) == ""


def test_decide_applies_the_drop_rules() -> None:
    def measure(t: str) -> tuple[int, int]:
        return len(t.split()), t.count(".")

    long = "word " * 60
    assert cmp.decide("x", "x", measure) == cmp.Outcome(cmp.UNCHANGED, "x")
    assert cmp.decide("x y", "", measure) == cmp.Outcome(cmp.DROPPED)
    assert cmp.decide("orig", long + "a. b. c.", measure) == cmp.Outcome(cmp.EDITED, long + "a. b. c.")
    assert cmp.decide("orig", long + "a. b.", measure).state == cmp.DROPPED  # 2 sentences
    assert cmp.decide("orig", "a. b. c. d.", measure).state == cmp.DROPPED  # 8 words


def test_outcome_and_classify() -> None:
    u, e, e2, dr = (
        cmp.outcome("t", "t"),
        cmp.outcome("t long", "t"),
        cmp.outcome("t long", "long"),
        cmp.outcome("t", None),
    )
    assert (u.state, e.state, dr.state) == (cmp.UNCHANGED, cmp.EDITED, cmp.DROPPED)
    assert cmp.classify(e, e, e, e, e) is None
    assert cmp.classify(e, u, u, u, u) == "replay"
    assert cmp.classify(e, e, u, u, u) == "split"
    assert cmp.classify(e, e, e, e2, e2) == "normalisation"
    assert cmp.classify(e, e, e, e, dr) == "drop rule"
    assert cmp.classify(e, e, e, e, u) == "span matching"
    assert cmp.classify(e, e, e, e, e2) == "cut text"
    assert set(cmp.CLASSES) == {"split", "normalisation", "drop rule", "span matching", "cut text", "replay"}


@pytest.mark.parametrize(
    ("text", "end", "kind"),
    [
        ("Wait... Then he left.", 7, "ellipsis"),
        ("Really?! Yes.", 8, "! or ?"),
        ('He said "Stop." Then', 15, "closing quote or bracket"),
        ("In 2003. Then", 8, "number + ."),
        ("The U.S. team", 8, "dotted abbreviation (U.S.)"),
        ("By J. Smith", 5, "initial (J.)"),
        ("See approx. ten", 11, "word + . before a lower-case word"),
        ("Use io.StringIO now", 7, "inside a token"),
        ("It ended.\nNext", 9, "line break after"),
        ("It ended. Next", 9, "word + ."),
        ('elif startswith("<!--", i)', 23, "after ','"),
    ],
)
def test_boundary_kind(text: str, end: int, kind: str) -> None:
    assert cmp.boundary_kind(text, end) == kind


def test_context_marks_the_offset() -> None:
    assert cmp.context("abc\ndef", 3, 2) == "…bc|⏎d…"
    assert cmp.whitespace_only("a  b\n", "a b") and not cmp.whitespace_only("a b", "ab")


def test_agreement_and_split_differences() -> None:
    from benchmarks import spans  # the driver, with its own import of spans_compare

    c = spans.cmp
    docs = [("a", "One. Two."), ("b", "Three. Four."), ("c", "Five.")]
    dt = [c.outcome("One. Two.", "One. Two."), c.outcome("Three. Four.", "Four."), c.outcome("Five.", None)]
    sel = [
        c.outcome("One. Two.", "One. Two."),
        c.outcome("Three. Four.", " Four."),
        c.outcome("Five.", "Five."),
    ]
    got = spans.agreement(spans.Sides(docs, dt, sel, {}))
    assert got["alike"] == 2 and got["both_kept"] == 2 and got["identical"] == 1
    assert got["both_edited"] == 1 and got["edited_identical"] == 0
    assert got["states"][(c.DROPPED, c.UNCHANGED)] == 1

    splits_dt = [c.Split([4, 9], []), c.Split([12], []), c.Split([5], [])]
    splits_sel = [c.Split([4, 9], []), c.Split([6, 12], []), c.Split([5], [])]
    diff = spans.split_differences(docs, splits_dt, splits_sel)
    assert diff["docs_differ"] == 1
    assert diff["counts"] == {("selene only", "word + ."): 1}
    assert "Three.| Four." in diff["examples"][("selene only", "word + .")][0]
